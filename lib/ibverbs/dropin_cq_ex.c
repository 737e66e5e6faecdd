/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_cq_ex.c - the extended CQ (ibv_create_cq_ex, ibv_start_poll,
 * ibv_next_poll, ibv_end_poll, ibv_wc_read_*): a droce CQ polled one
 * completion at a time into the CQ's struct ibv_wc, which the read
 * functions answer from.  The standard work completion fields only.
 */
#include <errno.h>
#include <stdint.h>

#include "dropin_private.h"

/* What an ibv_wc holds; timestamps, VLAN, flow tag, TM info: EOPNOTSUPP. */
#define DROPIN_CQ_EX_WC_FLAGS IBV_WC_STANDARD_FLAGS
/* single-threaded is a hint droce needs not */
#define DROPIN_CQ_EX_FLAGS IBV_CREATE_CQ_ATTR_SINGLE_THREADED

#define DROPIN_CQ_OF_EX(cq) DROPIN_CONTAINER_OF(cq, struct dropin_cq, ex)

/* 0 with the next completion in cq->wc, ENOENT when there is none. */
static int
cq_ex_take(struct ibv_cq_ex *ex)
{
	struct dropin_cq *cq = DROPIN_CQ_OF_EX(ex);
	int n = cq->ibv.context->ops.poll_cq(&cq->ibv, 1, &cq->wc);

	if (n < 0)
		return EINVAL;		/* a CQ overrun (droce: -EOVERFLOW) */
	if (n == 0)
		return ENOENT;
	ex->wr_id = cq->wc.wr_id;
	ex->status = cq->wc.status;
	return 0;
}

static int
cq_ex_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	return cq_ex_take(ex);
}

static int
cq_ex_next_poll(struct ibv_cq_ex *ex)
{
	return cq_ex_take(ex);
}

static void
cq_ex_end_poll(struct ibv_cq_ex *ex)
{
	(void)ex;
}

static enum ibv_wc_opcode
cq_ex_read_opcode(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.opcode;
}

static uint32_t
cq_ex_read_vendor_err(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.vendor_err;
}

static uint32_t
cq_ex_read_byte_len(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.byte_len;
}

static __be32
cq_ex_read_imm_data(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.imm_data;
}

static uint32_t
cq_ex_read_qp_num(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.qp_num;
}

static uint32_t
cq_ex_read_src_qp(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.src_qp;
}

static unsigned int
cq_ex_read_wc_flags(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.wc_flags;
}

static uint32_t
cq_ex_read_slid(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.slid;
}

static uint8_t
cq_ex_read_sl(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.sl;
}

static uint8_t
cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ex)
{
	return DROPIN_CQ_OF_EX(ex)->wc.dlid_path_bits;
}

/* verbs.h's inline checked comp_mask's reserved bits (EINVAL). */
static int
check_cq_ex_attr(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~(uint64_t)DROPIN_CQ_EX_WC_FLAGS)
		return EOPNOTSUPP;
	/* a parent domain: its allocators are not used (dropin_verbs.c) */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (attr->parent_domain == NULL ||
	     DROPIN_OBJ_OF(dropin_pd, attr->parent_domain)->protection == NULL))
		return EINVAL;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)DROPIN_CQ_EX_FLAGS))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_cq_ex *
dropin_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	struct dropin_cq *cq;
	int rc = check_cq_ex_attr(attr);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	cq = dropin_cq_new(context, (int)attr->cqe, attr->cq_context, attr->channel,
			   (int)attr->comp_vector);
	if (cq == NULL)
		return NULL;
	cq->ex.start_poll = cq_ex_start_poll;
	cq->ex.next_poll = cq_ex_next_poll;
	cq->ex.end_poll = cq_ex_end_poll;
	cq->ex.read_opcode = cq_ex_read_opcode;
	cq->ex.read_vendor_err = cq_ex_read_vendor_err;
	cq->ex.read_byte_len = cq_ex_read_byte_len;
	cq->ex.read_imm_data = cq_ex_read_imm_data;
	cq->ex.read_qp_num = cq_ex_read_qp_num;
	cq->ex.read_src_qp = cq_ex_read_src_qp;
	cq->ex.read_wc_flags = cq_ex_read_wc_flags;
	cq->ex.read_slid = cq_ex_read_slid;
	cq->ex.read_sl = cq_ex_read_sl;
	cq->ex.read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	return &cq->ex;
}
