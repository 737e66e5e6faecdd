/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_device.c - the engine provider's context: its transport engine
 * bound to a link and where it runs, the device's limits (the ones the
 * create and modify calls enforce, read from where they are enforced:
 * lib/protection's tables, the transport's configuration, droce.h's
 * DROCE_MAX_* constants) and what the transport implements, ports, GIDs,
 * P_Keys, counters, events.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>

#include "droce_link.h"
#include "transport.h"
#include "engine.h"

/* Device capabilities the transport implements (lib/transport/README.md). */
#define DEVICE_CAP_FLAGS (DROCE_DEVICE_CURR_QP_STATE_MOD | DROCE_DEVICE_PORT_ACTIVE_EVENT | \
	DROCE_DEVICE_SYS_IMAGE_GUID | DROCE_DEVICE_RC_RNR_NAK_GEN |			\
	DROCE_DEVICE_SRQ_RESIZE | DROCE_DEVICE_MEM_WINDOW | DROCE_DEVICE_MEM_WINDOW_TYPE_2B)
/* ... and the IBTA 1.5 memory-placement operations (tp_resp.c). */
#define DEVICE_CAP_FLAGS_EX (DEVICE_CAP_FLAGS | DROCE_DEVICE_ATOMIC_WRITE |		\
	DROCE_DEVICE_FLUSH_GLOBAL | DROCE_DEVICE_FLUSH_PERSISTENT)

/* "No vendor": no IEEE OUI is registered for droce (rxe reports the same). */
#define DEVICE_VENDOR_ID 0xffffff

/* The modified EUI-64 of a MAC (RFC 4291 appendix A), in network order. */
static uint64_t
guid_of_mac(const uint8_t mac[6])
{
	const uint8_t eui[8] = { mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe,
				 mac[3], mac[4], mac[5] };
	uint64_t guid;

	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

static int
clamp_int(uint64_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* What the transport enforces; a context without a link has no QPs or CQs. */
static void
transport_limits(struct droce_context *ctx, struct droce_device_attr *a)
{
	struct tp_dev *tp = verbs_tp(ctx);
	const struct tp_dev_config *cfg;
	const struct droce_link *link;

	if (tp == NULL)
		return;
	cfg = tp_dev_config(tp);
	link = tp_dev_link(tp);
	if (link != NULL)
		a->node_guid = guid_of_mac(link->mac.addr_bytes);
	a->sys_image_guid = a->node_guid;
	a->max_qp = clamp_int(cfg->max_qp);
	a->max_cq = clamp_int(cfg->max_cq);
	/* each QP has DROCE_MAX_RD_ATOMIC responder resources */
	a->max_res_rd_atom = clamp_int((uint64_t)cfg->max_qp * DROCE_MAX_RD_ATOMIC);
	a->max_pkeys = TP_MAX_PKEYS;
}

/* ---- the engine and its link ----------------------------------------------------- */

int
verbs_attach_link(struct droce_context *ctx, struct droce_link *link,
		  const struct tp_dev_config *cfg)
{
	struct engine_context *e;
	int rc;

	if (ctx == NULL || link == NULL || verbs_prot(ctx) == NULL)
		return EINVAL;
	e = engine_ctx(ctx);
	if (e->tp == NULL) {
		rc = tp_dev_create(ctx, e->prot, cfg, &e->tp);
		if (rc != 0)
			return -rc;
		tp_dev_set_event_fd(e->tp, ctx->async_fd);
	}
	return -tp_dev_attach_link(e->tp, link);
}

int
verbs_run_on_lcore(struct droce_context *ctx, unsigned int lcore)
{
	int rc;

	if (verbs_tp(ctx) == NULL)
		return EINVAL;
	rc = tp_dev_run_on_lcore(verbs_tp(ctx), lcore);
	if (rc != 0)
		return -rc;
	engine_ctx(ctx)->dedicated = true;
	return 0;
}

int
verbs_run_on_lcores(struct droce_context *ctx, const unsigned int *lcores,
		    unsigned int n)
{
	int rc;

	if (verbs_tp(ctx) == NULL)
		return EINVAL;
	rc = tp_dev_run_on_lcores(verbs_tp(ctx), lcores, n);
	if (rc != 0)
		return -rc;
	engine_ctx(ctx)->dedicated = true;
	return 0;
}

int
verbs_run_adaptive(struct droce_context *ctx)
{
	if (verbs_tp(ctx) == NULL)
		return EINVAL;
	return -tp_dev_run_adaptive(verbs_tp(ctx));
}

int
verbs_detach_link(struct droce_context *ctx)
{
	struct engine_context *e = engine_ctx(ctx);
	int rc = tp_dev_destroy(e->tp);	/* leaves a transport lcore first */

	if (rc != 0)
		return -rc;
	e->tp = NULL;
	e->dedicated = false;
	verbs_events_reset(ctx);	/* events not taken went with the engine */
	return 0;
}

int
verbs_engine_event_take(struct droce_context *ctx, struct droce_async_event *ev)
{
	struct tp_dev *tp = engine_ctx(ctx)->tp;

	return tp != NULL ? tp_dev_event_take(tp, ev) : -EAGAIN;
}

/*
 * Run-to-completion (with or without a progress thread): one round of
 * the engine.  Dedicated transport lcore: a no-op returning 0 (that lcore
 * progresses the engine; droce_poll_cq copies from the CQ's rings).
 */
int
verbs_engine_progress(struct droce_context *ctx)
{
	struct engine_context *e = engine_ctx(ctx);

	if (e->tp == NULL || e->dedicated)
		return 0;
	return tp_progress(e->tp);
}

int
verbs_engine_self_driven(struct droce_context *ctx)
{
	return tp_dev_self_driven(engine_ctx(ctx)->tp) ? 1 : 0;
}

/* A channel needs the engine that counts its CQs' events. */
int
verbs_engine_create_channel(struct droce_context *ctx, int fd, uint64_t *handle)
{
	(void)fd;
	*handle = 0;
	return engine_ctx(ctx)->tp != NULL ? 0 : -ENODEV;
}

int
verbs_engine_get_counter(struct droce_context *ctx, const char *name, uint64_t *value)
{
	struct tp_dev *tp = engine_ctx(ctx)->tp;

	if (tp == NULL)
		return -ENODEV;
	*value = tp_dev_counter(tp, name);
	return 0;
}

/* ---- ports, GIDs, P_Keys ------------------------------------------------------------ */

int
verbs_engine_query_port(struct droce_context *ctx, uint8_t port_num, struct droce_port_attr *attr)
{
	struct engine_context *e = engine_ctx(ctx);

	(void)port_num;
	return e->query_port != NULL ? e->query_port(ctx, attr) : -EINVAL;
}

int
verbs_engine_query_gid(struct droce_context *ctx, uint8_t port_num, int index, union droce_gid *gid)
{
	struct tp_dev *tp = engine_ctx(ctx)->tp;

	(void)port_num;
	if (tp == NULL)
		return -EINVAL;
	return tp_dev_query_gid(tp, (unsigned int)index, gid->raw);
}

int
verbs_engine_query_pkey(struct droce_context *ctx, uint8_t port_num, int index, uint16_t *pkey)
{
	struct tp_dev *tp = engine_ctx(ctx)->tp;
	uint16_t v;
	int rc;

	(void)port_num;
	if (tp == NULL)
		return -EINVAL;
	rc = tp_dev_query_pkey(tp, (unsigned int)index, &v);
	if (rc != 0)
		return rc;
	*pkey = rte_cpu_to_be_16(v);
	return 0;
}

/* ---- the device's attributes -------------------------------------------------------- */

int
verbs_engine_query_device_ex(struct droce_context *ctx, struct droce_device_attr_ex *attr)
{
	struct droce_device_attr *a = &attr->orig_attr;
	struct prot_config prot;

	snprintf(a->fw_ver, sizeof(a->fw_ver), "%d.%d.0", DROCE_VERSION_MAJOR,
		 DROCE_VERSION_MINOR);
	/* a region is any byte range that does not wrap (prot_mr.c) */
	a->max_mr_size = UINTPTR_MAX;
	/* any page size from 4 KiB: regions need no alignment at all */
	a->page_size_cap = ~UINT64_C(0xfff);
	a->vendor_id = DEVICE_VENDOR_ID;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	a->device_cap_flags = DEVICE_CAP_FLAGS;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE;
	a->max_cqe = DROCE_MAX_CQE;
	prot_tables_limits(engine_ctx(ctx)->prot, &prot);
	a->max_mr = clamp_int(prot.max_mr);
	a->max_pd = clamp_int(prot.max_pd);
	a->max_mw = clamp_int(prot.max_mw);
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = DROCE_MAX_INIT_RD_ATOMIC;
	/* the responder's atomics are CPU atomics on host memory: atomic
	 * against the CPUs' own atomic accesses too */
	a->atomic_cap = DROCE_ATOMIC_GLOB;
	/* address handles: lib/transport's table of them (index 0 names none) */
	a->max_ah = TP_MAX_AH - 1;
	/* multicast groups (lib/transport tp_mcast.c) */
	if (engine_ctx(ctx)->tp != NULL)
		tp_mcast_limits(engine_ctx(ctx)->tp, a);
	/* SRQs too (tp_srq.c); their sizes are a QP's receive queue's */
	a->max_srq = INT_MAX;
	a->max_srq_wr = DROCE_MAX_QP_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	/* as rxe: a software responder's ACK delay has no hardware bound */
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	transport_limits(ctx, a);
	attr->device_cap_flags_ex = DEVICE_CAP_FLAGS_EX;
	return 0;
}
