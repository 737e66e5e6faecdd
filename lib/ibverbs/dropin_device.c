/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_device.c - droce's start-up, the device list, contexts, device
 * and port attributes and GIDs behind libibverbs' entry points.
 *
 * droce starts (droce_init: EAL and the devices) at the first
 * ibv_get_device_list, from the environment, since the program does not
 * know droce: DROCE_ARGS holds "EAL options [-- droce options]" split at
 * white space, DROCE_CONFIG=FILE adds --droce-config=FILE.  Without either,
 * the device is droced's: the one at DROCE_DAEMON, else the one listening
 * on DROCE_DAEMON_SOCKET (droce.h); with none of these nothing starts and
 * the list is empty (a machine without RDMA devices).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dropin_private.h"

#define DROPIN_MAX_ARGS 128

/* Declared in rdma-core's driver.h (not installed); same ABI. */
enum dropin_gid_type_sysfs {
	DROPIN_GID_TYPE_SYSFS_IB_ROCE_V1,
	DROPIN_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum dropin_gid_type_sysfs *type);

static struct {
	pthread_once_t once;
	int ndev;
	struct dropin_device *dev;
	int nopen;			/* contexts open */
	struct dropin_context *open;	/* them, under lock */
	bool forked;			/* a child of fork(), no device yet */
	pthread_mutex_t lock;		/* the devices' shared contexts */
	char *args;			/* DROCE_ARGS, cut into argv */
	char *argv[DROPIN_MAX_ARGS + 1];
} dropin = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The drop-in's default run mode, first among droce's options so that the
 * program's --droce-progress=inline or --droce-transport-lcores wins: an
 * unmodified program may wait outside the verbs (perftest's passive side,
 * poll() on a completion channel), and its peer must be served meanwhile.
 */
static char dropin_progress[] = "--droce-progress=adaptive";

static bool
dropin_env_set(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0';
}

/* Whether a droced accepts a connection on the default socket. */
static bool
dropin_droced_listens(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = DROCE_DAEMON_SOCKET };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * EAL's options of an application of droced when DROCE_ARGS gives none:
 * one lcore whose thread keeps the process's own CPU set (the program's
 * affinity unchanged), no PCI scan, EAL's start quiet.  The device is
 * droced's (DROCE_DAEMON, else the default socket, which the caller
 * found listening).
 */
static int
dropin_droced_args(void)
{
	static char lcores[1024], daemon_opt[sizeof(struct sockaddr_un) + 32];
	const char *path = getenv("DROCE_DAEMON");
	size_t at = snprintf(lcores, sizeof(lcores), "--lcores=0@(");
	cpu_set_t set;
	int argc = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	for (int cpu = 0; cpu < CPU_SETSIZE && at < sizeof(lcores) - 8; cpu++)
		if (CPU_ISSET(cpu, &set))
			at += snprintf(lcores + at, sizeof(lcores) - at, "%d,", cpu);
	if (lcores[at - 1] != ',')
		return -EINVAL;
	lcores[at - 1] = ')';
	snprintf(daemon_opt, sizeof(daemon_opt), "--droce-daemon=%s",
		 path != NULL && path[0] != '\0' ? path : DROCE_DAEMON_SOCKET);
	dropin.argv[argc++] = (char *)"droce";
	dropin.argv[argc++] = lcores;
	dropin.argv[argc++] = (char *)"--no-pci";
	dropin.argv[argc++] = (char *)"--log-level=lib.eal:error";
	dropin.argv[argc++] = (char *)"--";
	dropin.argv[argc++] = daemon_opt;
	dropin.argv[argc] = NULL;
	return argc;
}

/*
 * argv for droce_init from DROCE_ARGS and DROCE_CONFIG; without either,
 * droced's device (DROCE_DAEMON, or a droced listening on the default
 * socket); 0 when there is none of these.
 */
static int
dropin_build_argv(void)
{
	const char *args = getenv("DROCE_ARGS");
	const char *config = getenv("DROCE_CONFIG");
	static char config_opt[4096];
	bool dashdash = false;
	int argc = 0;

	if (!dropin_env_set("DROCE_ARGS") && !dropin_env_set("DROCE_CONFIG")) {
		if (dropin_env_set("DROCE_DAEMON") || dropin_droced_listens())
			return dropin_droced_args();
		return 0;
	}
	dropin.argv[argc++] = (char *)"droce";
	dropin.args = strdup(args != NULL ? args : "");
	if (dropin.args == NULL)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(dropin.args, " \t\n", &save);
	     t != NULL; t = strtok_r(NULL, " \t\n", &save)) {
		if (argc >= DROPIN_MAX_ARGS - 4)
			return -E2BIG;
		dropin.argv[argc++] = t;
		if (!dashdash && strcmp(t, "--") == 0) {
			dashdash = true;
			dropin.argv[argc++] = dropin_progress;
		}
	}
	if (!dashdash) {
		dropin.argv[argc++] = (char *)"--";
		dropin.argv[argc++] = dropin_progress;
	}
	if (config != NULL && config[0] != '\0') {
		if (snprintf(config_opt, sizeof(config_opt), "--droce-config=%s",
			     config) >= (int)sizeof(config_opt))
			return -ENAMETOOLONG;
		dropin.argv[argc++] = config_opt;
	}
	dropin.argv[argc] = NULL;
	return argc;
}

static void
dropin_fill_device(struct dropin_device *dd, struct droce_device *d, int i)
{
	dd->d = d;
	dd->ibv.node_type = IBV_NODE_CA;
	dd->ibv.transport_type = IBV_TRANSPORT_IB;
	snprintf(dd->ibv.name, sizeof(dd->ibv.name), "%s", droce_get_device_name(d));
	snprintf(dd->ibv.dev_name, sizeof(dd->ibv.dev_name), "droce_verbs%d", i);
	/* paths that exist nowhere, so sysfs reads fail cleanly, unless
	 * DROCE_SYSFS gets the device a tree (dropin_sysfs.c) */
	snprintf(dd->ibv.dev_path, sizeof(dd->ibv.dev_path),
		 "/nonexistent/droce/%s", dd->ibv.dev_name);
	snprintf(dd->ibv.ibdev_path, sizeof(dd->ibv.ibdev_path),
		 "/nonexistent/droce/%s", dd->ibv.name);
}

/*
 * fork (ibv_fork_init(3)): the contexts a child inherited are the
 * parent's (stale): they refuse the data path and the parent's events
 * (EPERM), their control verbs reach nothing of the parent's (lib/device
 * forgot the parent's connection to droced: a query is answered on the
 * child's own, a handle of the parent's is not the child's, droced's
 * ENOENT; in process ENODEV), and their close frees only the child's
 * copies.  The child's own device: on droced's, the child's
 * first ibv_get_device_list or ibv_open_device connects it to droced
 * anew as a plain process (lib/device, "fork"), and its contexts are
 * then its own, as any process's; a child of a process that runs the
 * engine itself (DROCE_ARGS, DROCE_CONFIG) has none: ENODEV (EAL's
 * memory and the port are the parent's).  So a child that does no RDMA
 * runs normally, one that does works on droced or gets a clear error,
 * never the parent's queues.  The lock is held across fork() so the
 * child's lists are whole.
 */
static void
dropin_fork_prepare(void)
{
	pthread_mutex_lock(&dropin.lock);
	for (int i = 0; i < dropin.ndev; i++)
		dropin_async_fork(&dropin.dev[i], DROPIN_FORK_PREPARE);
}

static void
dropin_fork_parent(void)
{
	for (int i = 0; i < dropin.ndev; i++)
		dropin_async_fork(&dropin.dev[i], DROPIN_FORK_PARENT);
	pthread_mutex_unlock(&dropin.lock);
}

static void
dropin_fork_child(void)
{
	dropin.forked = true;
	for (struct dropin_context *c = dropin.open; c != NULL; c = c->next_open) {
		dropin_set_forked_ops(c);
		c->stale = true;
	}
	dropin.open = NULL;
	for (int i = 0; i < dropin.ndev; i++) {
		dropin_async_fork(&dropin.dev[i], DROPIN_FORK_CHILD);
		dropin.dev[i].ctx = NULL;
		dropin.dev[i].nctx = 0;
	}
	pthread_mutex_unlock(&dropin.lock);
}

/*
 * Under dropin.lock, in a child of fork(): whether it has devices of its
 * own now (droced's, connected anew by lib/device; the same devices, so
 * dropin.dev stands).
 */
static bool
dropin_renew(void)
{
	struct droce_device **list;
	int n = 0;

	if (!dropin.forked)
		return true;
	list = droce_get_device_list(&n);
	if (list == NULL)
		return false;
	droce_free_device_list(list);
	if (n != dropin.ndev) {
		errno = ENODEV;
		return false;
	}
	dropin.forked = false;
	return true;
}

static void dropin_sysfs_start(void);

static void
dropin_start(void)
{
	struct droce_device **list;
	int argc = dropin_build_argv(), n = 0;
	cpu_set_t cpus;
	bool restore;
	int rc, err;

	if (argc <= 0)
		return;
	/*
	 * rte_eal_init pins the calling thread to the main lcore's CPU.  The
	 * caller is the program's thread (fio's job thread, a UCX worker),
	 * which libibverbs never pins: give it back the CPUs it had, so that
	 * it is not left waiting for one CPU while the others are free (and
	 * the threads it creates later do not inherit that one CPU).
	 */
	restore = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
	rc = droce_init(argc, dropin.argv);
	err = errno;
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	if (rc < 0) {
		fprintf(stderr, "libibverbs (droce): droce_init failed: %s "
			"(DROCE_ARGS / DROCE_CONFIG)\n", strerror(err));
		return;
	}
	/* after droce's own (droce_init): a child runs them after droce's
	 * copied its memory (lib/verbs droced_mem.c, "fork") */
	if (pthread_atfork(dropin_fork_prepare, dropin_fork_parent, dropin_fork_child) != 0)
		return;
	list = droce_get_device_list(&n);
	if (list == NULL)
		return;
	dropin.dev = calloc((size_t)n + 1, sizeof(*dropin.dev));
	if (dropin.dev != NULL) {
		for (int i = 0; i < n; i++)
			dropin_fill_device(&dropin.dev[i], list[i], i);
		dropin.ndev = n;
	}
	droce_free_device_list(list);
	dropin_sysfs_start();
}

/* Each device's sysfs tree under DROCE_SYSFS (dropin_sysfs.c), if set. */
static void
dropin_sysfs_start(void)
{
	const char *root = getenv("DROCE_SYSFS");

	if (root == NULL || root[0] == '\0')
		return;
	for (int i = 0; i < dropin.ndev; i++) {
		int rc = dropin_sysfs_write(&dropin.dev[i], root);

		if (rc != 0)
			fprintf(stderr, "libibverbs (droce): %s's tree in DROCE_SYSFS=%s: %s\n",
				dropin.dev[i].ibv.name, root, strerror(-rc));
	}
}

/*
 * EAL's ports (memif peers, hugepage files) are released at exit, unless a
 * program exits with a context open (ibv_*_pingpong on an error path):
 * EAL cannot stop a port droce still drives, the kernel frees it all.
 */
__attribute__((destructor)) static void
dropin_stop(void)
{
	if (dropin.ndev > 0 && __atomic_load_n(&dropin.nopen, __ATOMIC_ACQUIRE) == 0)
		droce_cleanup();
}

/* Takes ctx off the open list (dropin.lock held). */
static void
dropin_forget_open(struct dropin_context *ctx)
{
	struct dropin_context **pp = &dropin.open;

	while (*pp != NULL && *pp != ctx)
		pp = &(*pp)->next_open;
	if (*pp != NULL)
		*pp = ctx->next_open;
}

/* Under dropin.lock: droce's context of the device for ctx (opened by the
 * first), with ctx's events; NULL with errno. */
static struct droce_context *
dropin_share_context(struct dropin_device *dd, struct dropin_context *ctx)
{
	int rc;

	if (dd->nctx == 0)
		dd->ctx = droce_open_device(dd->d);
	if (dd->ctx == NULL)
		return NULL;
	rc = dropin_async_open(dd, ctx);
	if (rc != 0) {
		if (dd->nctx == 0) {
			(void)droce_close_device(dd->ctx);
			dd->ctx = NULL;
		}
		errno = -rc;
		return NULL;
	}
	dd->nctx++;
	ctx->next_open = dropin.open;
	dropin.open = ctx;
	return dd->ctx;
}

#undef ibv_get_device_list
struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	bool ours;

	pthread_once(&dropin.once, dropin_start);
	pthread_mutex_lock(&dropin.lock);
	ours = dropin_renew();
	pthread_mutex_unlock(&dropin.lock);
	if (!ours) {
		errno = ENODEV;		/* the parent's devices */
		return NULL;
	}
	list = calloc((size_t)dropin.ndev + 1, sizeof(*list));
	if (list == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	for (int i = 0; i < dropin.ndev; i++)
		list[i] = &dropin.dev[i].ibv;
	if (num_devices != NULL)
		*num_devices = dropin.ndev;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

/* droce has no node GUID (no MAC in its public API): 0. */
__be64
ibv_get_device_guid(struct ibv_device *device)
{
	struct dropin_device *dd = DROPIN_CONTAINER_OF(device, struct dropin_device, ibv);
	struct droce_context *c = droce_open_device(dd->d);
	struct droce_device_attr a;
	__be64 guid = 0;

	/* (the node GUID is the port's: droce_query_device on a context) */
	if (c == NULL)
		return 0;
	if (droce_query_device(c, &a) == 0)
		guid = a.node_guid;
	(void)droce_close_device(c);
	return guid;
}

int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)(DROPIN_CONTAINER_OF(device, struct dropin_device, ibv) - dropin.dev);
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dropin_device *dd = DROPIN_CONTAINER_OF(device, struct dropin_device, ibv);
	struct dropin_context *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	pthread_mutex_lock(&dropin.lock);
	if (!dropin_renew()) {
		pthread_mutex_unlock(&dropin.lock);
		errno = ENODEV;
		return dropin_undo_alloc(ctx);
	}
	ctx->d = dropin_share_context(dd, ctx);
	pthread_mutex_unlock(&dropin.lock);
	if (ctx->d == NULL)
		return dropin_undo_alloc(ctx);
	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.context.device = device;
	/* A file as rdma-core's command fd: programs dup it to import the
	 * context (ibv_import_device, EOPNOTSUPP here); nothing is written. */
	ctx->vctx.context.cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ctx->vctx.context.async_fd = ctx->events.fd;	/* its own (dropin_async.c) */
	ctx->vctx.context.num_comp_vectors = 1;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	dropin_set_device_ops(ctx);
	dropin_set_ops(ctx);
	dropin_set_dm_ops(ctx);
	__atomic_fetch_add(&dropin.nopen, 1, __ATOMIC_RELEASE);
	return &ctx->vctx.context;
}

/* Close of a stale context (a parent's, in a child of fork()): the
 * child's copies only. */
static int
dropin_close_stale(struct dropin_context *ctx)
{
	dropin_async_free(ctx);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	if (ctx->vctx.context.cmd_fd >= 0)
		close(ctx->vctx.context.cmd_fd);
	free(ctx);
	__atomic_fetch_sub(&dropin.nopen, 1, __ATOMIC_RELEASE);
	return 0;
}

int
ibv_close_device(struct ibv_context *context)
{
	struct dropin_context *ctx = dropin_context_of(context);
	struct dropin_device *dd = DROPIN_CONTAINER_OF(context->device, struct dropin_device, ibv);
	int rc = 0;

	pthread_mutex_lock(&dropin.lock);
	/* (the router, stopped with the last context, before droce's goes) */
	dropin_async_detach(dd, ctx);
	if (ctx->stale) {
		pthread_mutex_unlock(&dropin.lock);
		return dropin_close_stale(ctx);	/* the parent's droce context */
	}
	if (dd->nctx == 1)
		rc = droce_close_device(ctx->d);
	if (rc != 0 && dropin_async_attach(dd, ctx) != 0)
		rc = ENOMEM;	/* still open, its events lost */
	if (rc == 0 && --dd->nctx == 0)
		dd->ctx = NULL;
	if (rc == 0)
		dropin_forget_open(ctx);
	pthread_mutex_unlock(&dropin.lock);
	if (rc != 0)
		return rc;
	dropin_async_free(ctx);
	pthread_mutex_destroy(&context->mutex);
	if (context->cmd_fd >= 0)
		close(context->cmd_fd);
	free(ctx);
	__atomic_fetch_sub(&dropin.nopen, 1, __ATOMIC_RELEASE);
	return 0;
}

/* ---- attributes ----------------------------------------------------------------- */

/*
 * droce's attributes (droce_query_device: the limits where they are
 * enforced), field by field into rdma-core's struct: memory windows of
 * type 1 and 2B (a type-2 window is tied to the QP that bound it).
 */
int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	struct droce_device_attr d;
	int rc = droce_query_device(dropin_dctx(context), &d);

	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	memcpy(a->fw_ver, d.fw_ver, sizeof(a->fw_ver));
	a->node_guid = d.node_guid;
	a->sys_image_guid = d.sys_image_guid;
	a->max_mr_size = d.max_mr_size;
	a->page_size_cap = d.page_size_cap;
	a->vendor_id = d.vendor_id;
	a->vendor_part_id = d.vendor_part_id;
	a->hw_ver = d.hw_ver;
	a->max_qp = d.max_qp;
	a->max_qp_wr = d.max_qp_wr;
	a->device_cap_flags = d.device_cap_flags;
	a->max_sge = d.max_sge;
	a->max_sge_rd = d.max_sge_rd;
	a->max_cq = d.max_cq;
	a->max_cqe = d.max_cqe;
	a->max_mr = d.max_mr;
	a->max_mw = d.max_mw;
	a->max_pd = d.max_pd;
	a->max_qp_rd_atom = d.max_qp_rd_atom;
	a->max_res_rd_atom = d.max_res_rd_atom;
	a->max_qp_init_rd_atom = d.max_qp_init_rd_atom;
	a->atomic_cap = (enum ibv_atomic_cap)d.atomic_cap;
	a->max_ah = d.max_ah;
	a->max_mcast_grp = d.max_mcast_grp;
	a->max_mcast_qp_attach = d.max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = d.max_total_mcast_qp_attach;
	a->max_srq = d.max_srq;
	a->max_srq_wr = d.max_srq_wr;
	a->max_srq_sge = d.max_srq_sge;
	a->max_pkeys = d.max_pkeys;
	a->local_ca_ack_delay = d.local_ca_ack_delay;
	a->phys_port_cnt = d.phys_port_cnt;
	return 0;
}

static int
dropin_query_device_ex(struct ibv_context *context,
		       const struct ibv_query_device_ex_input *input,
		       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	int rc;

	if ((input != NULL && input->comp_mask != 0) ||
	    attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(attr, 0, attr_size < sizeof(*attr) ? attr_size : sizeof(*attr));
	rc = ibv_query_device(context, &attr->orig_attr);
	/* the port count again, for devices with more than 255 ports */
	if (rc == 0 && attr_size >= offsetof(struct ibv_device_attr_ex, phys_port_cnt_ex) +
				    sizeof(attr->phys_port_cnt_ex))
		attr->phys_port_cnt_ex = attr->orig_attr.phys_port_cnt;
	if (rc == 0 && attr_size >= offsetof(struct ibv_device_attr_ex, max_dm_size) +
				    sizeof(attr->max_dm_size))
		attr->max_dm_size = dropin_dm_max_size();
	return rc;
}

static int
dropin_fill_port(struct ibv_context *context, uint8_t port_num,
		 struct ibv_port_attr *p)
{
	struct droce_port_attr dp;
	int rc = droce_query_port(dropin_dctx(context), port_num, &dp);

	if (rc != 0)
		return rc;
	memset(p, 0, sizeof(*p));
	p->state = (enum ibv_port_state)dp.state;
	p->max_mtu = (enum ibv_mtu)dp.max_mtu;
	p->active_mtu = (enum ibv_mtu)dp.active_mtu;
	p->gid_tbl_len = dp.gid_tbl_len;
	p->port_cap_flags = dp.port_cap_flags;
	p->max_msg_sz = dp.max_msg_sz;
	p->pkey_tbl_len = 16;
	p->max_vl_num = 1;		/* VL0 only */
	p->lid = dp.lid;
	p->link_layer = dp.link_layer;
	p->phys_state = dp.state == DROCE_PORT_ACTIVE ? 5 : 3;	/* LinkUp : Disabled */
	p->active_width = 1;		/* 1X */
	p->active_speed = 1;		/* SDR: droce does not know the link's */
	return 0;
}

static int
dropin_query_port(struct ibv_context *context, uint8_t port_num,
		  struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr p;
	int rc = dropin_fill_port(context, port_num, &p);

	if (rc == 0)
		memcpy(attr, &p, attr_len < sizeof(p) ? attr_len : sizeof(p));
	return rc;
}

/* The ABI entry for callers that predate the extended query_port. */
#undef ibv_query_port
int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	return dropin_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
				 offsetof(struct ibv_port_attr, link_layer) + 1);
}

int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
	      union ibv_gid *gid)
{
	int rc = droce_query_gid(dropin_dctx(context), port_num, index,
				 (union droce_gid *)gid);

	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* Every droce GID is a RoCEv2 one (IPv4-mapped or IPv6). */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		   unsigned int index, enum dropin_gid_type_sysfs *type)
{
	union ibv_gid gid;

	if (index > INT32_MAX || ibv_query_gid(context, port_num, (int)index, &gid) != 0)
		return -1;
	*type = DROPIN_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		  uint32_t gid_index, struct ibv_gid_entry *entry,
		  uint32_t flags, size_t entry_size)
{
	if (flags != 0 || entry_size < sizeof(*entry) || port_num > UINT8_MAX ||
	    gid_index > INT32_MAX)
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	if (ibv_query_gid(context, (uint8_t)port_num, (int)gid_index, &entry->gid) != 0)
		return ENODATA;
	entry->gid_index = gid_index;
	entry->port_num = port_num;
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	return 0;
}

/*
 * ibv_query_gid_table(3): the valid GIDs of every port, in port then index
 * order, entries entry_size apart; the number of them, or -EINVAL when
 * they do not fit in max_entries (or flags are not 0, as the kernel's
 * QUERY_GID_TABLE method answers).
 */
ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_device_attr dev;
	ssize_t n = 0;
	int rc;

	if (flags != 0 || entry_size < sizeof(*entries))
		return -EINVAL;
	rc = ibv_query_device(context, &dev);
	if (rc != 0)
		return -rc;
	for (uint8_t port = 1; port <= dev.phys_port_cnt; port++) {
		struct ibv_port_attr pa;

		rc = dropin_fill_port(context, port, &pa);
		if (rc != 0)
			return -rc;
		for (int i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			if (_ibv_query_gid_ex(context, port, (uint32_t)i, &e, 0,
					      sizeof(e)) != 0)
				continue;	/* ENODATA: an empty slot */
			if ((size_t)n == max_entries)
				return -EINVAL;
			memset((char *)entries + (size_t)n * entry_size, 0, entry_size);
			memcpy((char *)entries + (size_t)n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return n;
}

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
	       __be16 *pkey)
{
	int rc = droce_query_pkey(dropin_dctx(context), port_num, index, pkey);

	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* Reads a file as rdma-core does (droce's devices have no sysfs files). */
int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[4096];
	ssize_t len;
	int fd;

	if (size == 0 || snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return -1;
	if ((size_t)len == size)
		len--;
	if (buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return (int)len;
}

/* droce registers memory without pinning pages for a kernel: nothing to
 * prepare, and fork() leaves the parent's regions intact. */
int
ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

void
dropin_set_device_ops(struct dropin_context *ctx)
{
	ctx->vctx.query_port = dropin_query_port;
	ctx->vctx.query_device_ex = dropin_query_device_ex;
}

int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	for (int i = 0;; i++) {
		__be16 p;

		if (droce_query_pkey(dropin_dctx(context), port_num, i, &p) != 0)
			return -1;
		if (p == pkey)
			return i;
	}
}

/* Where sysfs is mounted, as rdma-core answers; droce's devices are not in it. */
const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}
