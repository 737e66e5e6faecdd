/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_wr.c - the ibv_wr_* post API of struct ibv_qp_ex on droce's
 * droce_post_send: each wr_<opcode> call starts a work request in the QP's
 * batch, the wr_set_* calls complete it, wr_complete posts the batch.
 * Inline data is copied into the batch when it is set (ibverbs lets the
 * caller reuse its buffer at once).  Errors found while building (too many
 * scatter entries, inline data too long) are returned by wr_complete, and
 * nothing of that batch is posted after them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"

#define DROPIN_WR_OPS (IBV_QP_EX_WITH_RDMA_WRITE | \
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
		       IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW | \
		       IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV | \
		       IBV_QP_EX_WITH_ATOMIC_WRITE)

static struct dropin_qp *
wr_qp(struct ibv_qp_ex *qpx)
{
	return DROPIN_CONTAINER_OF(qpx, struct dropin_qp, qpx);
}

static void
wr_error(struct dropin_wr_batch *b, int err)
{
	if (b->err == 0)
		b->err = err;
}

/* Post what the batch holds, unless building it failed. */
static void
wr_flush(struct dropin_qp *qp)
{
	struct dropin_wr_batch *b = qp->batch;
	struct droce_send_wr *bad;

	if (b->n > 0 && b->err == 0) {
		for (unsigned int i = 0; i + 1 < b->n; i++)
			b->wr[i].next = &b->wr[i + 1];
		b->wr[b->n - 1].next = NULL;
		wr_error(b, droce_post_send(qp->d, b->wr, &bad));
	}
	b->n = 0;
}

static struct droce_send_wr *
wr_new(struct ibv_qp_ex *qpx, enum droce_wr_opcode opcode)
{
	struct dropin_qp *qp = wr_qp(qpx);
	struct dropin_wr_batch *b = qp->batch;
	struct droce_send_wr *w;

	if (b->n == DROPIN_WR_BATCH_MAX)
		wr_flush(qp);
	w = &b->wr[b->n];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags;
	w->opcode = opcode;
	w->sg_list = b->sge[b->n];
	b->n++;
	return w;
}

/* The work request the wr_set_* calls complete (NULL before any). */
static struct droce_send_wr *
wr_cur(struct ibv_qp_ex *qpx)
{
	struct dropin_wr_batch *b = wr_qp(qpx)->batch;

	if (b->n == 0) {
		wr_error(b, EINVAL);
		return NULL;
	}
	return &b->wr[b->n - 1];
}

static void
wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_RDMA_WRITE);

	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = remote_addr;
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		  __be32 imm_data)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_RDMA_WRITE_WITH_IMM);

	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = remote_addr;
	w->imm_data = imm_data;
}

static void
wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_RDMA_READ);

	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = remote_addr;
}

static void
wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, DROCE_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	wr_new(qpx, DROCE_WR_SEND_WITH_IMM)->imm_data = imm_data;
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		  uint64_t compare, uint64_t swap)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_ATOMIC_CMP_AND_SWP);

	w->wr.atomic.rkey = rkey;
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.compare_add = compare;
	w->wr.atomic.swap = swap;
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		    uint64_t add)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_ATOMIC_FETCH_AND_ADD);

	w->wr.atomic.rkey = rkey;
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.compare_add = add;
}

/* IBTA 1.5 ATOMIC WRITE: the 8 bytes at atomic_wr, carried inline. */
static void
wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		const void *atomic_wr)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_ATOMIC_WRITE);
	struct dropin_wr_batch *b = wr_qp(qpx)->batch;
	uint8_t *dst = b->inline_data[w - b->wr];

	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = remote_addr;
	memcpy(dst, atomic_wr, 8);
	w->sg_list[0] = (struct droce_sge){ .addr = (uintptr_t)dst, .length = 8 };
	w->num_sge = 1;
	w->send_flags |= DROCE_SEND_INLINE;
}

/* rkey: the window's new key (a type-2 bind; ibv_inc_rkey of the last) */
static void
wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *bind_info)
{
	struct droce_send_wr *w = wr_new(qpx, DROCE_WR_BIND_MW);

	if (mw == NULL) {
		wr_error(wr_qp(qpx)->batch, EINVAL);
		return;
	}
	w->bind_mw.mw = DROPIN_OBJ_OF(dropin_mw, mw)->d;
	w->bind_mw.rkey = rkey;
	w->bind_mw.bind_info.mr = droce_mr_of(bind_info->mr);
	w->bind_mw.bind_info.addr = bind_info->addr;
	w->bind_mw.bind_info.length = bind_info->length;
	w->bind_mw.bind_info.mw_access_flags = bind_info->mw_access_flags;
}

static void
wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	wr_new(qpx, DROCE_WR_LOCAL_INV)->invalidate_rkey = invalidate_rkey;
}

static void
wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	wr_new(qpx, DROCE_WR_SEND_WITH_INV)->invalidate_rkey = invalidate_rkey;
}

static void
wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
	       uint32_t remote_qkey)
{
	struct droce_send_wr *w = wr_cur(qpx);

	if (w == NULL)
		return;
	w->wr.ud.ah = ah != NULL ? DROPIN_OBJ_OF(dropin_ah, ah)->d : NULL;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

static void
wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct droce_send_wr *w = wr_cur(qpx);

	if (w == NULL)
		return;
	if (num_sge > DROCE_MAX_SGE) {
		wr_error(wr_qp(qpx)->batch, EINVAL);
		return;
	}
	memcpy(w->sg_list, sg_list, num_sge * sizeof(*sg_list));
	w->num_sge = (int)num_sge;
}

static void
wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void
wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
			const struct ibv_data_buf *buf_list)
{
	struct dropin_wr_batch *b = wr_qp(qpx)->batch;
	struct droce_send_wr *w = wr_cur(qpx);
	uint8_t *dst;
	size_t len = 0;

	if (w == NULL)
		return;
	dst = b->inline_data[w - b->wr];
	for (size_t i = 0; i < num_buf; i++) {
		if (buf_list[i].length > DROCE_MAX_INLINE_DATA - len) {
			wr_error(b, EINVAL);
			return;
		}
		memcpy(dst + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	w->sg_list[0] = (struct droce_sge){ .addr = (uintptr_t)dst, .length = (uint32_t)len };
	w->num_sge = 1;
	w->send_flags |= DROCE_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void
wr_start(struct ibv_qp_ex *qpx)
{
	struct dropin_wr_batch *b = wr_qp(qpx)->batch;

	b->n = 0;
	b->err = 0;
}

static int
wr_complete(struct ibv_qp_ex *qpx)
{
	struct dropin_qp *qp = wr_qp(qpx);

	wr_flush(qp);
	return qp->batch->err;
}

static void
wr_abort(struct ibv_qp_ex *qpx)
{
	wr_qp(qpx)->batch->n = 0;
}

int
dropin_wr_init(struct dropin_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *x = &qp->qpx;

	if (send_ops_flags & ~(uint64_t)DROPIN_WR_OPS)
		return EOPNOTSUPP;
	qp->batch = calloc(1, sizeof(*qp->batch));
	if (qp->batch == NULL)
		return ENOMEM;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_atomic_write = wr_atomic_write;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_send_inv = wr_send_inv;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	return 0;
}
