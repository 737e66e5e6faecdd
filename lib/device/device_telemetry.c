/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands of droce, registered by droce_init() (read-only,
 * as lib/ethdev's):
 *
 *   /droce/dev/list               names of the devices ("droce0", ...)
 *   /droce/stats[,DEV]            counters of an open device: every
 *                                 transport counter by its rxe name
 *                                 (tp_counters.h), lib/net's as net_*,
 *                                 the link's as link_*, protection check
 *                                 results as prot_remote_* / prot_local_*
 *   /droce/qp/list[,DEV]          QPNs of the device's QPs
 *   /droce/qp/info,QPN[,DEV]      state, type, PSNs, retries of one QP
 *
 * DEV is a device index, a device name (droce0) or its port name
 * (net_memif0); absent: the first device.
 *
 * Threading: the callbacks run in DPDK's telemetry thread while the data
 * path runs on the application's lcore.  Counters are read with relaxed
 * 64-bit loads: each is exact but the set may be slightly stale (a burst
 * may be half counted).  A device is reached only while published
 * (tel_open, with a reader count that droce_close_device() waits for
 * before freeing anything).  QPs are reached through the transport's
 * stable QP slot table and copied at once (tp_dev_qp_snapshot): a QP
 * destroyed during the copy is a race accepted here; the copy is checked
 * against the slot afterwards and reported missing, or at worst shows
 * stale fields (QP memory comes from rte_malloc and stays mapped).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_pause.h>
#include <rte_telemetry.h>

#include "droce_link.h"
#include "net_host.h"
#include "prot.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "device_private.h"

/* ---- publication --------------------------------------------------------- */

void
device_telemetry_publish(struct droce_device *d)
{
	__atomic_store_n(&d->tel_open, d->open, __ATOMIC_SEQ_CST);
}

void
device_telemetry_withdraw(struct droce_device *d)
{
	__atomic_store_n(&d->tel_open, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&d->tel_readers, __ATOMIC_SEQ_CST) != 0)
		rte_pause();
}

/* The open state of d for a telemetry reader, or NULL; tel_exit() after. */
static const struct device_open *
tel_enter(struct droce_device *d)
{
	const struct device_open *o;

	__atomic_fetch_add(&d->tel_readers, 1, __ATOMIC_SEQ_CST);
	o = __atomic_load_n(&d->tel_open, __ATOMIC_SEQ_CST);
	if (o == NULL)
		__atomic_fetch_sub(&d->tel_readers, 1, __ATOMIC_SEQ_CST);
	return o;
}

static void
tel_exit(struct droce_device *d)
{
	__atomic_fetch_sub(&d->tel_readers, 1, __ATOMIC_SEQ_CST);
}

/* ---- parameters ------------------------------------------------------------ */

/* "", "1", "droce1" or "net_memif1" -> device; NULL if none. */
static struct droce_device *
device_of(const char *p)
{
	char *end;
	unsigned long i;

	if (!device_table.initialized || device_table.ndev == 0)
		return NULL;
	if (p == NULL || *p == '\0')
		return &device_table.dev[0];
	i = strtoul(p, &end, 10);
	if (isdigit((unsigned char)*p) && *end == '\0')
		return i < device_table.ndev ? &device_table.dev[i] : NULL;
	for (unsigned int k = 0; k < device_table.ndev; k++)
		if (strcmp(device_table.dev[k].name, p) == 0 ||
		    strcmp(device_table.dev[k].port_name, p) == 0)
			return &device_table.dev[k];
	return NULL;
}

static const char *
qp_state_name(enum droce_qp_state s)
{
	static const char *const names[] = {
		[DROCE_QPS_RESET] = "RESET", [DROCE_QPS_INIT] = "INIT",
		[DROCE_QPS_RTR] = "RTR", [DROCE_QPS_RTS] = "RTS",
		[DROCE_QPS_SQD] = "SQD", [DROCE_QPS_SQE] = "SQE",
		[DROCE_QPS_ERR] = "ERR", [DROCE_QPS_UNKNOWN] = "UNKNOWN",
	};

	return (unsigned int)s < RTE_DIM(names) ? names[s] : "UNKNOWN";
}

static const char *
qp_type_name(enum droce_qp_type t)
{
	switch (t) {
	case DROCE_QPT_RC: return "RC";
	case DROCE_QPT_UC: return "UC";
	case DROCE_QPT_UD: return "UD";
	}
	return "?";
}

/* ---- commands ---------------------------------------------------------------- */

static int
tel_dev_list(const char *cmd __rte_unused, const char *params __rte_unused,
	     struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (unsigned int i = 0; device_table.initialized && i < device_table.ndev; i++)
		rte_tel_data_add_array_string(d, device_table.dev[i].name);
	return 0;
}

static void
add_prefixed(struct rte_tel_data *d, const char *prefix, const char *name,
	     uint64_t v)
{
	char key[RTE_TEL_MAX_STRING_LEN];

	snprintf(key, sizeof(key), "%s%s", prefix, name);
	for (char *c = key; *c != '\0'; c++)
		*c = (char)tolower((unsigned char)*c);
	rte_tel_data_add_dict_u64(d, key, v);
}

static void
add_link_stat(void *arg, const char *name, uint64_t value)
{
	add_prefixed(arg, "link_", name, value);
}

static void
stats_of(struct rte_tel_data *d, const struct device_open *o)
{
	struct tp_dev *tp = verbs_tp(o->ctx);
	if (tp != NULL)
		for (unsigned int i = 0; i < tp_counter_count(); i++)
			rte_tel_data_add_dict_u64(d, tp_counter_name(i),
						  tp_dev_counter_read(tp, i));
	if (tp != NULL && tp_dev_host(tp) != NULL) {
		const uint64_t *nc = net_host_counters(tp_dev_host(tp));

		for (unsigned int i = 0; i < NET_CNT_MAX; i++)
			add_prefixed(d, "net_", net_counter_name(i),
				     __atomic_load_n(&nc[i], __ATOMIC_RELAXED));
	}
	if (o->driver != NULL && o->driver->stats != NULL)
		(void)o->driver->stats(droce_link_loop_inner(droce_link_tap_inner(o->link)),
				       add_link_stat, d);
	for (unsigned int i = 0; tp != NULL && i < PROT_STATUS_MAX; i++) {
		add_prefixed(d, "prot_remote_", prot_status_name(i),
			     tp_dev_prot_counter(tp, true, i));
		add_prefixed(d, "prot_local_", prot_status_name(i),
			     tp_dev_prot_counter(tp, false, i));
	}
}

static int
tel_stats(const char *cmd __rte_unused, const char *params,
	  struct rte_tel_data *d)
{
	struct droce_device *dev = device_of(params);
	const struct device_open *o;

	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "device", dev->name);
	rte_tel_data_add_dict_string(d, "port", dev->port_name);
	rte_tel_data_add_dict_int(d, "port_id", dev->port_id);
	o = tel_enter(dev);
	rte_tel_data_add_dict_int(d, "open", o != NULL);
	if (o != NULL) {
		stats_of(d, o);
		tel_exit(dev);
	}
	return 0;
}

/*
 * /droce/cc,DEV: the device's congestion control, ECN and UDP source
 * port settings and every rp_* / np_* parameter (the configured ones
 * until it opens, then the running device's).
 */
static int
tel_cc(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct droce_device *dev = device_of(params);
	const struct device_open *o;
	struct tp_cc_config cc;

	if (dev == NULL)
		return -EINVAL;
	cc = dev->cc;
	o = tel_enter(dev);
	if (o != NULL && verbs_tp(o->ctx) != NULL)
		cc = tp_dev_config(verbs_tp(o->ctx))->cc;
	if (o != NULL)
		tel_exit(dev);
	if (!cc.given)
		tp_cc_config_default(&cc);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "device", dev->name);
	rte_tel_data_add_dict_string(d, "cc", tp_cc_algo_name(cc.algo));
	rte_tel_data_add_dict_u64(d, "ecn", cc.ecn);
	rte_tel_data_add_dict_u64(d, "dscp", cc.dscp);
	rte_tel_data_add_dict_string(d, "udp_sport", tp_sport_mode_name(cc.sport_mode));
	rte_tel_data_add_dict_u64(d, "udp_sport_fixed", cc.sport_fixed);
	for (unsigned int i = 0; i < TP_CC_PARAM_MAX; i++)
		rte_tel_data_add_dict_u64(d, tp_cc_param_name(i),
					  tp_cc_param_get(&cc.params, i));
	return 0;
}

static int
tel_qp_list(const char *cmd __rte_unused, const char *params,
	    struct rte_tel_data *d)
{
	struct droce_device *dev = device_of(params);
	const struct device_open *o;
	struct tp_dev *tp;
	unsigned int n = 0;

	if (dev == NULL)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	o = tel_enter(dev);
	if (o == NULL)
		return 0;
	tp = verbs_tp(o->ctx);
	for (uint32_t qpn = tp != NULL ? tp_dev_qp_next(tp, 0) : 0;
	     qpn != 0 && n < RTE_TEL_MAX_ARRAY_ENTRIES;
	     qpn = tp_dev_qp_next(tp, qpn), n++)
		rte_tel_data_add_array_int(d, (int)qpn);
	tel_exit(dev);
	return 0;
}

static int
tel_qp_info(const char *cmd __rte_unused, const char *params,
	    struct rte_tel_data *d)
{
	struct droce_device *dev;
	const struct device_open *o;
	struct tp_qp_snapshot s;
	unsigned long qpn;
	struct tp_dev *tp;
	char *end;
	int rc;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	qpn = strtoul(params, &end, 0);
	if (end == params || (*end != '\0' && *end != ',') || qpn > UINT32_MAX)
		return -EINVAL;
	dev = device_of(*end == ',' ? end + 1 : NULL);
	if (dev == NULL)
		return -EINVAL;
	o = tel_enter(dev);
	if (o == NULL)
		return -ENODEV;
	tp = verbs_tp(o->ctx);
	rc = tp != NULL ? tp_dev_qp_snapshot(tp, (uint32_t)qpn, &s) : -ENOENT;
	tel_exit(dev);
	if (rc != 0)
		return rc;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "device", dev->name);
	rte_tel_data_add_dict_u64(d, "qpn", s.qpn);
	rte_tel_data_add_dict_string(d, "type", qp_type_name(s.type));
	rte_tel_data_add_dict_string(d, "state", qp_state_name(s.state));
	rte_tel_data_add_dict_u64(d, "dest_qpn", s.dest_qpn);
	rte_tel_data_add_dict_u64(d, "mtu", s.mtu);
	rte_tel_data_add_dict_u64(d, "req_psn", s.sq_psn);
	rte_tel_data_add_dict_u64(d, "comp_psn", s.comp_psn);
	rte_tel_data_add_dict_u64(d, "resp_psn", s.resp_psn);
	rte_tel_data_add_dict_u64(d, "sq_outstanding", s.sq_outstanding);
	rte_tel_data_add_dict_u64(d, "rq_posted", s.rq_posted);
	rte_tel_data_add_dict_u64(d, "rd_atomic", s.rd_atomic);
	rte_tel_data_add_dict_u64(d, "retry_cnt", s.retry_cnt);
	rte_tel_data_add_dict_u64(d, "rnr_retry", s.rnr_retry);
	rte_tel_data_add_dict_u64(d, "retry_left", s.retry_left);
	rte_tel_data_add_dict_u64(d, "rnr_retry_left", s.rnr_retry_left);
	rte_tel_data_add_dict_int(d, "wait_rnr", s.wait_rnr);
	rte_tel_data_add_dict_u64(d, "udp_sport", s.udp_sport);
	rte_tel_data_add_dict_string(d, "cc", s.cc_algo);
	rte_tel_data_add_dict_u64(d, "cc_rate_mbps", s.cc_rate_bps / 1000000);
	rte_tel_data_add_dict_u64(d, "cc_target_mbps", s.cc_target_bps / 1000000);
	rte_tel_data_add_dict_u64(d, "cc_alpha", s.cc_alpha);
	rte_tel_data_add_dict_u64(d, "cc_cnps", s.cc_cnps);
	rte_tel_data_add_dict_u64(d, "cc_cuts", s.cc_cuts);
	return 0;
}

void
device_telemetry_register(void)
{
	static bool done;

	if (done)
		return;		/* telemetry has no unregister; once per process */
	done = true;
	rte_telemetry_register_cmd("/droce/dev/list", tel_dev_list,
				   "droce devices. Takes no parameters");
	rte_telemetry_register_cmd("/droce/stats", tel_stats,
				   "Counters of a droce device. Parameters: device index or name (default the first)");
	rte_telemetry_register_cmd("/droce/cc", tel_cc,
				   "Congestion control, ECN, UDP source ports and DCQCN parameters. Parameters: device name or index");
	rte_telemetry_register_cmd("/droce/qp/list", tel_qp_list,
				   "QPNs of a droce device. Parameters: device index or name");
	rte_telemetry_register_cmd("/droce/qp/info", tel_qp_info,
				   "One QP. Parameters: qpn[,device index or name]");
}
