/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_device.c - droce_query_device / droce_query_device_ex: the limits
 * the create and modify calls enforce, read from where they are enforced
 * (lib/protection's tables, the transport's configuration, droce.h's
 * DROCE_MAX_* constants), and what the transport implements.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "droce.h"
#include "droce_link.h"
#include "prot.h"
#include "transport.h"
#include "verbs_daemon.h"
#include "verbs_private.h"

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

int
droce_query_device(struct droce_context *context, struct droce_device_attr *a)
{
	struct prot_config prot;

	if (context == NULL || a == NULL)
		return EINVAL;
	if (context->daemon != NULL)
		return verbs_dmn_query_device(context, a);
	memset(a, 0, sizeof(*a));
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
	prot_tables_limits(context->prot, &prot);
	a->max_mr = clamp_int(prot.max_mr);
	a->max_pd = clamp_int(prot.max_pd);
	a->max_mw = clamp_int(prot.max_mw);
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = DROCE_MAX_INIT_RD_ATOMIC;
	/* the responder's atomics are CPU atomics on host memory: atomic
	 * against the CPUs' own atomic accesses too */
	a->atomic_cap = DROCE_ATOMIC_GLOB;
	/* address handles are allocated one by one, no table limits them */
	a->max_ah = INT_MAX;
	/* SRQs too (tp_srq.c); their sizes are a QP's receive queue's */
	a->max_srq = INT_MAX;
	a->max_srq_wr = DROCE_MAX_QP_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	/* as rxe: a software responder's ACK delay has no hardware bound */
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	transport_limits(context, a);
	return 0;
}

int
droce_query_device_ex(struct droce_context *context,
		      const struct droce_query_device_ex_input *input,
		      struct droce_device_attr_ex *attr)
{
	int rc;

	if (attr == NULL || (input != NULL && input->comp_mask != 0))
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	rc = droce_query_device(context, &attr->orig_attr);
	if (rc != 0)
		return rc;
	attr->device_cap_flags_ex = DEVICE_CAP_FLAGS_EX;
	return 0;
}
