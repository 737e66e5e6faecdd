/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/device: droce_init(), the device list and droce_open_device().
 *
 * A device is a DPDK ethdev port plus the addresses droce answers on it.
 * Opening it binds the pieces together on the calling lcore:
 *   link driver ("ethdev", from lib/link's registry)  ->  transport
 *   (lib/transport, with the port's lib/net host: addresses, neighbours,
 *   ARP, ND, ping)  ->  verbs context,
 * and with transport_lcores configured hands the transport (with the link
 * and host stack it drives) to that lcore (lib/transport/tp_lcore.c).
 * The device table is filled once by droce_init() from the INI file and
 * the command line (device_config.c) and read-only afterwards.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_random.h>

#include "droce.h"
#include "droce_link.h"
#include "net_host.h"
#include "tp_counters.h"
#include "transport.h"
#include "verbs_daemon.h"
#include "verbs_dq.h"
#include "verbs_engine.h"
#include "device_private.h"

/* Devices are DPDK ports: drivers/ethdev, by its registered name. */
#define DEVICE_LINK_DRIVER "ethdev"

struct device_table device_table;

static int device_query_port(struct droce_context *context, struct droce_port_attr *attr);

/*
 * fork: the child inherits EAL's state without its threads, and shares its
 * hugepage memory and port sockets with the parent: anything it did with
 * them would change the parent's devices.  So a child of a process that
 * runs droce's engine has no device (droce_get_device_list and
 * droce_open_device: ENODEV, droce_init: EALREADY as before) and its
 * droce_cleanup, at its exit, leaves the parent's alone.  A child of
 * droced's application (a secondary or a plain process) forgets the
 * parent's connection and queue region at once, and at its first
 * droce_get_device_list or droce_open_device connects to droced anew as
 * a plain process (queue regions, lib/verbs provider_dq; no EAL): the
 * device is droced's, which any process may open.  The parent's objects
 * stay the parent's (through the child's copies a query is answered, a
 * handle of the parent's is droced's ENOENT, their queues reach nobody).
 * A child that does no RDMA runs normally, and connects to nothing.
 */
static pthread_mutex_t renew_lock = PTHREAD_MUTEX_INITIALIZER;

static void
device_forked(void)
{
	__atomic_store_n(&device_table.forked, true, __ATOMIC_RELAXED);
	/* the forking thread is the child's only one: nobody holds it */
	renew_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	if (device_table.daemon_path[0] != '\0') {
		verbs_daemon_fork_child();
		verbs_dq_fork_child();
	}
}

/* The devices are this process's (a child renewed droced's); false: ENODEV. */
static bool
device_ours(void)
{
	bool ours;

	if (!__atomic_load_n(&device_table.forked, __ATOMIC_ACQUIRE))
		return true;
	if (device_table.daemon_path[0] == '\0')
		return false;		/* the parent's engine */
	pthread_mutex_lock(&renew_lock);
	if (device_table.forked && device_daemon_renew() == 0)
		__atomic_store_n(&device_table.forked, false, __ATOMIC_RELEASE);
	ours = !device_table.forked;
	pthread_mutex_unlock(&renew_lock);
	return ours;
}

int
droce_init(int argc, char **argv)
{
	const char *daemon;
	int eal, taken, rc, regions = 0;

	if (device_table.initialized || device_table.forked) {
		errno = EALREADY;
		return -1;
	}
	device_sweep_runtime_dirs();
	daemon = device_daemon_path(argc, argv);
	if (daemon == NULL)
		device_runtime_claim(argc, argv);	/* a daemon's is droced's */
	else
		regions = device_daemon_queues(argc, argv);
	if (regions < 0) {
		errno = -regions;
		return -1;
	}
	if (regions)
		eal = device_daemon_connect_plain(daemon, argc, argv);
	else
		eal = daemon != NULL ? device_daemon_eal_init(daemon, argc, argv) :
				       device_eal_init(argc, argv);
	if (eal < 0)
		return -1;			/* rte_errno / errno set by EAL */
	/* droce's own options follow EAL's; they are moved in front of the
	 * program's, and skipped with EAL's */
	taken = device_config_parse(argc - eal, argv + eal);
	if (taken < 0) {
		errno = -taken;
		return -1;
	}
	if (daemon != NULL && snprintf(device_table.daemon_path, sizeof(device_table.daemon_path),
				       "%s", daemon) >= (int)sizeof(device_table.daemon_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	rc = daemon != NULL ? device_daemon_table() : device_table_build();
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	rc = pthread_atfork(NULL, NULL, device_forked);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	device_table.initialized = true;
	device_table.no_eal = regions;
	if (!regions)
		device_telemetry_register();
	return eal + taken;
}

void
droce_cleanup(void)
{
	if (!device_table.initialized ||
	    __atomic_load_n(&device_table.forked, __ATOMIC_ACQUIRE))
		return;			/* a child's: the devices are its parent's */
	device_table.initialized = false;
	if (device_table.no_eal)
		return;			/* a plain process: no link, no EAL */
	device_links_close();
	rte_eal_cleanup();
}

struct droce_device **
droce_get_device_list(int *num_devices)
{
	struct droce_device **list;
	unsigned int n = device_table.ndev;

	if (!device_table.initialized || !device_ours()) {
		errno = ENODEV;
		return NULL;
	}
	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++)
		list[i] = &device_table.dev[i];
	if (num_devices != NULL)
		*num_devices = (int)n;
	return list;
}

void
droce_free_device_list(struct droce_device **list)
{
	free(list);
}

const char *
droce_get_device_name(struct droce_device *device)
{
	return device != NULL ? device->name : NULL;
}

/* ---- open / close ------------------------------------------------------------ */

/* The addresses into lib/net's table (the GID table), then the P_Keys. */
static int
add_gids(struct droce_device *d, struct tp_dev *tp)
{
	for (unsigned int i = 0; i < d->naddr; i++) {
		int rc = net_host_add_addr(tp_dev_host(tp), d->addr[i].gid,
					   d->addr[i].prefix);

		if (rc < 0)
			return rc;
	}
	for (unsigned int i = 0; i < d->npkeys; i++) {
		int rc = tp_dev_add_pkey(tp, d->pkeys[i]);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * The port stays open from the device's first open to droce_cleanup (the
 * link is kept in d->link): a vdev's port (memif, af_packet, ring) given
 * to EAL is gone once closed, and a program opens and closes a device
 * any number of times (rdma-core's tests, a library that probes it).
 */
static void
open_state_free(struct droce_device *d, struct device_open *o)
{
	if (o->ctx != NULL) {
		verbs_detach_link(o->ctx);
		droce_close_context(o->ctx);
	}
	/*
	 * After the transport's last flush (verbs_detach_link): the capture's
	 * statistics block describes the port while it is there.  The port's
	 * link stays open, without the capture.
	 */
	d->link = droce_link_tap_unwrap(o->link);
	free(o);
}

/* At droce_cleanup: every port droce opened, once no context uses it. */
void
device_links_close(void)
{
	for (unsigned int i = 0; i < device_table.ndev; i++) {
		struct droce_device *d = &device_table.dev[i];

		if (d->open != NULL)
			continue;	/* EAL cannot stop a port still driven */
		droce_link_close(d->link);
		d->link = NULL;
	}
}

/* The loss knob's seed: configured, else DROCE_SEED, else fresh. */
static uint64_t
drop_seed(const struct droce_device *d)
{
	const char *env = getenv("DROCE_SEED");
	char *end;

	if (d->drop_seed_given)
		return d->drop_seed;
	if (env != NULL && *env != '\0') {
		uint64_t v = strtoull(env, &end, 0);

		if (*end == '\0')
			return v;
		fprintf(stderr, "droce: DROCE_SEED=%s is not a number: ignored\n", env);
	}
	return rte_rand();
}

/*
 * Zero-copy transmit's threshold (struct droce_link_params tx_zc) from
 * DROCE_TX_ZC: "off", or the payload size in bytes from which it is used
 * (1: every payload); unset or 0: the link driver's default for the port.
 */
static uint32_t
tx_zc_env(void)
{
	const char *env = getenv("DROCE_TX_ZC");
	char *end;
	unsigned long v;

	if (env == NULL || *env == '\0')
		return 0;
	if (strcmp(env, "off") == 0)
		return DROCE_LINK_ZC_OFF;
	v = strtoul(env, &end, 0);
	if (*end == '\0' && v < DROCE_LINK_ZC_OFF)
		return (uint32_t)v;
	fprintf(stderr, "droce: DROCE_TX_ZC=%s is neither off nor a size: ignored\n", env);
	return 0;
}

static int
device_link_open(struct droce_device *d, struct device_open *o)
{
	const struct droce_link_driver *drv = droce_link_driver_find(DEVICE_LINK_DRIVER);
	struct droce_link_params lp = {
		.port_id = d->port_id,
		.name = d->name,
		.mtu = d->mtu,
		.mtu_assume = d->mtu != 0,
		.drop = d->drop,
		.drop_limit = d->drop_limit,
		.tx_zc = tx_zc_env(),
	};

	struct droce_link *inner;
	int rc;

	if (drv == NULL)
		return -ENODEV;		/* the executable did not link it */
	o->driver = drv;
	if (d->link != NULL) {
		o->link = d->link;	/* opened before: kept open */
		return 0;
	}
	if (d->drop > 0) {
		lp.seed = drop_seed(d);
		printf("droce: %s: losing %.4f of the frames each way, seed %" PRIu64
		       " (--droce-drop-seed=%" PRIu64 " or DROCE_SEED=%" PRIu64
		       " replays it), at most %" PRIu32 " (0: no limit)\n", d->name,
		       d->drop, lp.seed, lp.seed, lp.seed, d->drop_limit);
	}
	/* several transport lcores: a queue pair for each */
	if (d->dedicated && d->ntransport_lcores > 1)
		lp.nb_queues = (uint16_t)d->ntransport_lcores;
	rc = drv->open(&lp, &inner);
	if (rc != 0)
		return rc;
	/* two QPs of one port talk to each other, as on an RNIC */
	rc = droce_link_loop_wrap(inner, &o->link);
	if (rc != 0)
		droce_link_close(inner);
	return rc;
}

/*
 * Who runs the engine from here on, decided once: transport lcores (rings
 * only), or run-to-completion, with a progress thread behind it when
 * --droce-progress=adaptive (the drop-in's default) or alone.
 */
static int
device_run_mode(const struct droce_device *d, struct droce_context *ctx)
{
	int rc;

	if (d->dedicated) {
		rc = -verbs_run_on_lcores(ctx, d->transport_lcores, d->ntransport_lcores);
		if (rc != 0)
			fprintf(stderr, "droce: %s: cannot run on transport lcore(s) "
				"%u.. (%s): EAL worker lcores (-l), not the caller's, "
				"distinct; with several, the port needs as many "
				"queues (net_af_packet: qpairs=N)\n", d->name,
				d->transport_lcore, strerror(-rc));
		return rc;
	}
	if (!device_table.adaptive)
		return 0;
	rc = -verbs_run_adaptive(ctx);
	if (rc != 0)
		fprintf(stderr, "droce: %s: cannot start the progress thread (%s)\n",
			d->name, strerror(-rc));
	return rc;
}

struct droce_context *
droce_open_device(struct droce_device *d)
{
	struct tp_dev_config tc = { 0 };
	struct device_open *o;
	int rc;

	if (d == NULL || !device_table.initialized) {
		errno = EINVAL;
		return NULL;
	}
	if (!device_ours()) {
		errno = ENODEV;		/* the parent's device */
		return NULL;
	}
	if (d->open != NULL) {
		errno = EBUSY;		/* one context per device, one owner lcore */
		return NULL;
	}
	if (d->daemon)
		return d->regions ? verbs_dq_open(d) : verbs_daemon_open(d);
	o = calloc(1, sizeof(*o));
	if (o == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = device_link_open(d, o);
	/* every frame of every queue, as the port moves it (lib/link) */
	if (rc == 0 && d->capture[0] != '\0') {
		rc = droce_link_capture_wrap(o->link, d->capture, d->port_id, d->name,
					     &o->link);
		if (rc != 0)
			fprintf(stderr, "droce: %s: cannot capture to %s: %s\n", d->name,
				d->capture, strerror(-rc));
	}
	if (rc == 0) {
		o->ctx = droce_open_context(&d->tables);
		rc = o->ctx == NULL ? -errno : 0;
	}
	if (rc == 0) {
		tc.max_qp = d->max_qp;
		tc.retry_cnt_7_infinite = d->rxe_retry_compat;
		tc.cc = d->cc;
		tc.host_stack = true;	/* droce answers ARP/ND/ping on its port */
		rc = -verbs_attach_link(o->ctx, o->link, &tc);
	}
	if (rc == 0)
		rc = add_gids(d, verbs_tp(o->ctx));
	if (rc == 0)
		rc = device_run_mode(d, o->ctx);
	if (rc == 0)
		verbs_set_port_query(o->ctx, device_query_port);
	if (rc != 0) {
		open_state_free(d, o);
		errno = -rc;
		return NULL;
	}
	o->device = d;
	o->ctx->device = d;
	d->open = o;
	device_telemetry_publish(d);
	return o->ctx;
}

int
droce_close_device(struct droce_context *context)
{
	struct droce_device *d;
	int rc;

	if (context == NULL || context->device == NULL)
		return EINVAL;
	d = context->device;
	if (d->daemon)
		return droce_close_context(context);	/* droced's client: nothing here */
	device_telemetry_withdraw(d);		/* before anything is freed */
	rc = verbs_detach_link(context);	/* EBUSY while QPs exist */
	if (rc == 0)
		rc = droce_close_context(context);	/* EBUSY while PDs exist */
	if (rc != 0) {
		device_telemetry_publish(d);
		return rc;
	}
	d->open->ctx = NULL;
	open_state_free(d, d->open);
	d->open = NULL;
	return 0;
}

/* ---- ports and GIDs ------------------------------------------------------------- */

/* The largest IB MTU that fits the link MTU with RoCEv2 headers (IPv6 40,
 * UDP 8, BTH 12, largest extended header 28, ICRC 4): 1500 -> 1024. */
static enum droce_mtu
ib_mtu_of(uint32_t link_mtu)
{
	enum droce_mtu m = DROCE_MTU_4096;

	while (m > DROCE_MTU_256 && (uint32_t)droce_mtu_to_num(m) + 92 > link_mtu)
		m--;
	return m;
}

/*
 * An Ethernet speed (Mb/s) as the IB width x speed whose data rate is
 * nearest at or above it, the table Linux's ib_get_eth_speed uses for
 * RoCE ports; an unknown speed (0) is reported as the slowest.
 */
static void
ib_rate_of(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct { uint32_t mbps; uint8_t width, speed; } rates[] = {
		{ 1000, DROCE_WIDTH_1X, DROCE_SPEED_SDR },
		{ 10000, DROCE_WIDTH_1X, DROCE_SPEED_FDR10 },
		{ 20000, DROCE_WIDTH_4X, DROCE_SPEED_DDR },
		{ 25000, DROCE_WIDTH_1X, DROCE_SPEED_EDR },
		{ 40000, DROCE_WIDTH_4X, DROCE_SPEED_FDR10 },
		{ 50000, DROCE_WIDTH_1X, DROCE_SPEED_HDR },
		{ 100000, DROCE_WIDTH_4X, DROCE_SPEED_EDR },
		{ 200000, DROCE_WIDTH_4X, DROCE_SPEED_HDR },
	};
	size_t i = 0;

	while (i < RTE_DIM(rates) - 1 && mbps > rates[i].mbps)
		i++;
	if (mbps > rates[i].mbps) {
		*width = DROCE_WIDTH_4X;
		*speed = DROCE_SPEED_NDR;
		return;
	}
	*width = rates[i].width;
	*speed = rates[i].speed;
}

/* droce_query_port of a device this process runs the engine of: 0. */
static int
device_query_port(struct droce_context *context, struct droce_port_attr *attr)
{
	struct rte_eth_link link = { 0 };
	struct device_open *o;
	struct tp_dev *tp;
	int carrier;

	o = context->device->open;
	tp = verbs_tp(context);
	memset(attr, 0, sizeof(*attr));
	carrier = droce_link_status(o->link);	/* < 0: unknown, taken as up */
	attr->state = carrier == 0 ? DROCE_PORT_DOWN : DROCE_PORT_ACTIVE;
	attr->phys_state = carrier == 0 ? DROCE_PORT_PHYS_STATE_DISABLED :
					  DROCE_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = DROCE_MTU_4096;
	attr->active_mtu = ib_mtu_of(o->link->mtu);
	attr->gid_tbl_len = (int)context->device->naddr;
	/* no CM on QP1 yet: only the addresses as GIDs */
	attr->port_cap_flags = DROCE_PORT_IP_BASED_GIDS;
	attr->max_msg_sz = TP_MAX_MSG_SZ;
	attr->bad_pkey_cntr = (uint32_t)tp_dev_counter_read(tp, TP_CNT_PKEY_VIOLATION);
	attr->qkey_viol_cntr = (uint32_t)tp_dev_counter_read(tp, TP_CNT_UD_QKEY_DROP);
	attr->pkey_tbl_len = TP_MAX_PKEYS;
	attr->max_vl_num = 1;			/* VL0 only */
	(void)rte_eth_link_get_nowait(context->device->port_id, &link);
	ib_rate_of(link.link_speed, &attr->active_width, &attr->active_speed);
	attr->link_layer = DROCE_LINK_LAYER_ETHERNET;
	return 0;
}

const char *
droce_counter_name(unsigned int index)
{
	return tp_counter_name(index);
}
