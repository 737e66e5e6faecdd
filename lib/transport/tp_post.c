/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting work requests: validate each WR against the QP (what ibverbs
 * rejects at post time with an errno), copy it into a WQE, ring the
 * "doorbell" (the requester sees it on the next progress call).  Checks
 * that an RNIC does when it executes a WQE (lkeys, rkeys) happen later and
 * end in an error completion, as they do on hardware.
 */
#include <errno.h>
#include <string.h>

#include "tp_private.h"

#define RC_ONLY(m)	{ (m), 0, 0 }
#define RC_UC(m)	{ (m), (m), 0 }
#define ALL_QPTS(m)	{ (m), (m), (m) }

/* TSO is not supported: all zero */
const struct tp_wr_opcode_info tp_wr_opcode_info[TP_WR_OPCODES] = {
	[DROCE_WR_RDMA_WRITE] = {
		RC_UC(TP_WR_WRITE | TP_WR_REMOTE | TP_WR_INLINE), DROCE_WC_RDMA_WRITE },
	[DROCE_WR_RDMA_WRITE_WITH_IMM] = {
		RC_UC(TP_WR_WRITE | TP_WR_IMM | TP_WR_REMOTE | TP_WR_INLINE),
		DROCE_WC_RDMA_WRITE },
	[DROCE_WR_SEND] = { ALL_QPTS(TP_WR_SEND | TP_WR_INLINE), DROCE_WC_SEND },
	[DROCE_WR_SEND_WITH_IMM] = {
		ALL_QPTS(TP_WR_SEND | TP_WR_IMM | TP_WR_INLINE), DROCE_WC_SEND },
	[DROCE_WR_RDMA_READ] = { RC_ONLY(TP_WR_READ | TP_WR_REMOTE), DROCE_WC_RDMA_READ },
	[DROCE_WR_ATOMIC_CMP_AND_SWP] = { RC_ONLY(TP_WR_ATOMIC), DROCE_WC_COMP_SWAP },
	[DROCE_WR_ATOMIC_FETCH_AND_ADD] = { RC_ONLY(TP_WR_ATOMIC), DROCE_WC_FETCH_ADD },
	[DROCE_WR_LOCAL_INV] = { RC_UC(TP_WR_LOCAL), DROCE_WC_LOCAL_INV },
	[DROCE_WR_BIND_MW] = { RC_UC(TP_WR_LOCAL), DROCE_WC_BIND_MW },
	[DROCE_WR_SEND_WITH_INV] = {
		RC_ONLY(TP_WR_SEND | TP_WR_INV | TP_WR_INLINE), DROCE_WC_SEND },
	[DROCE_WR_FLUSH] = { RC_ONLY(TP_WR_FLUSH), DROCE_WC_FLUSH },
	[DROCE_WR_ATOMIC_WRITE] = {
		RC_ONLY(TP_WR_ATOMIC_WRITE | TP_WR_REMOTE | TP_WR_INLINE),
		DROCE_WC_ATOMIC_WRITE },
};

#define FLUSH_TYPES (DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT)

/* FLUSH: no data; a placement type asked for, a defined level. */
static int
fill_flush_wqe(const struct droce_send_wr *wr, struct tp_send_wqe *w)
{
	uint8_t type = wr->wr.flush.type, level = wr->wr.flush.level;

	if (wr->num_sge != 0 || type == 0 || (type & ~FLUSH_TYPES) != 0 ||
	    (level != DROCE_FLUSH_RANGE && level != DROCE_FLUSH_MR))
		return -EINVAL;
	w->length = 0;
	w->num_sge = 0;
	w->is_inline = 0;
	w->remote_addr = wr->wr.flush.remote_addr;
	w->rkey = wr->wr.flush.rkey;
	w->flush_len = wr->wr.flush.length;
	w->flush_type = type;
	w->flush_level = level;
	return 0;
}

/* Inline data is copied now: the buffer is free on return.  ATOMIC WRITE's
 * 8 bytes are its operand, not inline data the QP was sized for: taken
 * whatever max_inline_data (as rxe, which keeps them in the WQE). */
static int
copy_inline(const struct tp_qp *qp, const struct droce_send_wr *wr, uint32_t mask,
	    struct tp_send_wqe *w)
{
	uint32_t max = (mask & TP_WR_ATOMIC_WRITE) ? 8 : qp->cap.max_inline_data;
	uint32_t off = 0;

	if (w->length > max)
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		memcpy(w->inline_data + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
	w->is_inline = 1;
	w->num_sge = 0;
	return 0;
}

static inline int
copy_sges(const struct tp_qp *qp, const struct droce_send_wr *wr, uint32_t mask,
	  struct tp_send_wqe *w)
{
	/* (a negative num_sge is, as unsigned, above every max_send_sge) */
	uint32_t n = (uint32_t)wr->num_sge;
	uint64_t total = 0;

	if (n > qp->cap.max_send_sge || (n > 0 && wr->sg_list == NULL))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		total += wr->sg_list[i].length;
	if (total > TP_MAX_MSG_SZ)
		return -EINVAL;
	w->length = (uint32_t)total;
	if (unlikely(wr->send_flags & DROCE_SEND_INLINE) && (mask & TP_WR_INLINE))
		return copy_inline(qp, wr, mask, w);
	w->is_inline = 0;
	w->num_sge = (uint8_t)n;
	/* the common single SGE as one assignment, not a call to memcpy */
	if (likely(n == 1))
		w->sge[0] = wr->sg_list[0];
	else if (n > 0)
		memcpy(w->sge, wr->sg_list, (size_t)n * sizeof(w->sge[0]));
	return 0;
}

/* LOCAL_INV and BIND_MW: no data, no remote address. */
static int
fill_local_wqe(const struct droce_send_wr *wr, struct tp_send_wqe *w)
{
	w->length = 0;
	w->num_sge = 0;
	if (wr->opcode == DROCE_WR_LOCAL_INV) {
		w->imm = wr->invalidate_rkey;
		return 0;
	}
	/* BIND_MW type 1: what droce_bind_mw posts (as rxe's ibv_bind_mw) */
	if (wr->bind_mw.mw == NULL || (wr->bind_mw.mw->type != DROCE_MW_TYPE_1 &&
				       wr->bind_mw.mw->type != DROCE_MW_TYPE_2))
		return -EINVAL;
	w->mw_type = (uint8_t)wr->bind_mw.mw->type;
	w->mw_index = wr->bind_mw.mw->handle;
	w->bind_rkey = wr->bind_mw.rkey;
	w->bind_mr_key = wr->bind_mw.bind_info.mr != NULL ? wr->bind_mw.bind_info.mr->lkey : 0;
	w->bind_addr = wr->bind_mw.bind_info.addr;
	w->bind_length = wr->bind_mw.bind_info.length;
	w->bind_access = wr->bind_mw.bind_info.mw_access_flags;
	return 0;
}

/* UD: the address handle, remote QPN and Q_Key; one MTU at most. */
static int
fill_ud_wqe(const struct tp_qp *qp, const struct droce_send_wr *wr,
	    struct tp_send_wqe *w)
{
	if (wr->wr.ud.ah == NULL || w->length > qp->mtu)
		return -EINVAL;
	w->ah = wr->wr.ud.ah->handle;	/* resolved by the engine: tp_ah_get */
	w->remote_qpn = wr->wr.ud.remote_qpn & ROCE_PSN_MASK;
	/* o10-15.2.x: a Q_Key with the high bit set means "use the QP's" */
	w->remote_qkey = (wr->wr.ud.remote_qkey & 0x80000000u) ?
		qp->attr.qkey : wr->wr.ud.remote_qkey;
	return 0;
}

/*
 * One WR into a WQE: 0, or -EINVAL (what ibverbs rejects).  Inlined into
 * both posting paths; the rare parts (inline data, local operations, UD)
 * are calls, so the common one-SGE WRITE or SEND is one straight line.
 */
static __rte_always_inline int
fill_send_wqe(struct tp_qp *qp, const struct droce_send_wr *wr,
	      struct tp_send_wqe *w)
{
	uint32_t mask = tp_wr_mask(qp->pub.qp_type, wr->opcode);
	int rc;

	if (mask == 0)
		return -EINVAL;
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->wr_mask = (uint16_t)mask;
	w->send_flags = wr->send_flags;
	w->state = TP_WQE_POSTED;
	w->rd_counted = 0;
	w->started = 0;
	w->status = DROCE_WC_SUCCESS;
	w->imm = wr->imm_data;
	if (unlikely(mask & TP_WR_LOCAL))
		return fill_local_wqe(wr, w);
	if (unlikely(mask & TP_WR_FLUSH))
		return fill_flush_wqe(wr, w);

	rc = copy_sges(qp, wr, mask, w);
	if (rc != 0)
		return rc;
	if (mask & TP_WR_REMOTE) {
		/* ATOMIC WRITE: exactly the 8 bytes of one store */
		if (unlikely(mask & TP_WR_ATOMIC_WRITE) && w->length != 8)
			return -EINVAL;
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	} else if (mask & TP_WR_ATOMIC) {
		/* the original value lands in one 8-byte local buffer */
		if (w->num_sge != 1 || w->length != 8)
			return -EINVAL;
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else if (mask & TP_WR_INV) {
		w->imm = wr->invalidate_rkey;
	}
	if (unlikely(qp->pub.qp_type == DROCE_QPT_UD))
		return fill_ud_wqe(qp, wr, w);
	return 0;
}

/* One receive WR into a WQE: 0, or -EINVAL (what ibverbs rejects). */
static inline int
fill_recv_wqe(uint32_t max_sge, const struct droce_recv_wr *wr, struct tp_recv_wqe *w)
{
	uint64_t total = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > TP_MAX_MSG_SZ)
		return -EINVAL;
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	w->length = (uint32_t)total;
	if (wr->num_sge > 0)
		memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(w->sge[0]));
	return 0;
}

/* ---- the posting loop -------------------------------------------------------- */

/*
 * Where a post meets the engine, for one work queue: its slots, the head
 * the poster advances, and the tail up to which the engine retired WQEs.
 * Run-to-completion: the work queue's own head and tail (the runner token
 * held); a transport lcore: the published copies (struct tp_lc_qp); an
 * SRQ: its own, published in every mode.  The engine's run mode
 * (struct tp_run_mode) chooses which, once per call, never per WR.
 */
struct post_q {
	void *wqe;			/* the slots */
	uint32_t mask;
	uint32_t max_wr;
	uint32_t head;			/* in: the first free slot; out: the new head */
	const uint32_t *tail;		/* the retired tail (acquire loads) */
	void *fill_arg;			/* what fill takes besides the WR: QP or SRQ */
};

typedef int post_fill_fn(void *arg, const void *wr, void *wqe);
typedef const void *post_next_fn(const void *wr);

/*
 * The one posting loop: each WR into the slot at the head while fewer than
 * max_wr are outstanding (the tail is read again before a post is refused,
 * so a slot retired since the last look counts); ENOMEM as ibverbs returns
 * for a full queue, nothing blocks, nothing is lost.  *stop: the WR not
 * taken (NULL: all were).  Inlined with its fill and next functions into
 * each caller, so a WR costs what it cost with a loop of its own.
 */
static __rte_always_inline int
post_loop(struct post_q *q, const void *wr, const void **stop, size_t wqe_size,
	  post_fill_fn *fill, post_next_fn *next)
{
	uint32_t head = q->head;
	uint32_t tail = __atomic_load_n(q->tail, __ATOMIC_ACQUIRE);
	int rc = 0;

	for (; wr != NULL; wr = next(wr)) {
		if (head - tail >= q->max_wr) {
			tail = __atomic_load_n(q->tail, __ATOMIC_ACQUIRE);
			if (head - tail >= q->max_wr) {
				rc = -ENOMEM;
				break;
			}
		}
		rc = fill(q->fill_arg, wr, (uint8_t *)q->wqe + (size_t)(head & q->mask) * wqe_size);
		if (rc != 0)
			break;
		head++;
	}
	q->head = head;
	*stop = wr;
	return rc;
}

static __rte_always_inline int
send_fill(void *qp, const void *wr, void *w)
{
	return fill_send_wqe(qp, wr, w);
}

static __rte_always_inline const void *
send_next(const void *wr)
{
	return ((const struct droce_send_wr *)wr)->next;
}

static __rte_always_inline int
recv_fill_qp(void *qp, const void *wr, void *w)
{
	return fill_recv_wqe(((struct tp_qp *)qp)->cap.max_recv_sge, wr, w);
}

static __rte_always_inline int
recv_fill_srq(void *srq, const void *wr, void *w)
{
	return fill_recv_wqe(((struct tp_srq *)srq)->max_sge, wr, w);
}

static __rte_always_inline const void *
recv_next(const void *wr)
{
	return ((const struct droce_recv_wr *)wr)->next;
}

/* The send queue's WRs from head on; 0 or -errno, *bad_wr at the first not taken. */
static __rte_always_inline int
post_sends(struct tp_qp *qp, enum droce_qp_state s, uint32_t *head, const uint32_t *tail,
	   struct droce_send_wr *wr, struct droce_send_wr **bad_wr)
{
	struct post_q q = { qp->sq.wqe, qp->sq.mask, qp->sq.max_wr, *head, tail, qp };
	const void *stop;
	int rc;

	if (s == DROCE_QPS_RESET || s == DROCE_QPS_INIT || s == DROCE_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	rc = post_loop(&q, wr, &stop, sizeof(struct tp_send_wqe), send_fill, send_next);
	*head = q.head;
	if (rc != 0)
		*bad_wr = (struct droce_send_wr *)(uintptr_t)stop;
	return rc;
}

/* The receive queue's, the same way (a QP on an SRQ has none: EINVAL). */
static __rte_always_inline int
post_recvs(struct tp_qp *qp, enum droce_qp_state s, uint32_t *head, const uint32_t *tail,
	   struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr)
{
	struct post_q q = { qp->rq.wqe, qp->rq.mask, qp->rq.max_wr, *head, tail, qp };
	const void *stop;
	int rc;

	if (s == DROCE_QPS_RESET || unlikely(qp->srq != NULL)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	rc = post_loop(&q, wr, &stop, sizeof(struct tp_recv_wqe), recv_fill_qp, recv_next);
	*head = q.head;
	if (rc != 0)
		*bad_wr = (struct droce_recv_wr *)(uintptr_t)stop;
	return rc;
}

/* ---- run-to-completion: straight into the work queue, the runner token held ---- */

static int
rtc_post_send(struct tp_qp *qp, struct droce_send_wr *wr,
	      struct droce_send_wr **bad_wr)
{
	enum droce_qp_state s;
	uint32_t head;
	int rc;

	tp_run_take(&qp->dev->run);
	s = qp->pub.state;
	head = qp->sq.head;
	rc = post_sends(qp, s, &head, &qp->sq.tail, wr, bad_wr);
	/* In the error state, what was posted completes at once with a flush. */
	if (head != qp->sq.head) {
		qp->sq.head = head;
		if (s == DROCE_QPS_ERR)
			tp_qp_flush(qp);
		else
			tp_qp_ready(qp);
	}
	tp_run_give(&qp->dev->run);
	return rc;
}

static int
rtc_post_recv(struct tp_qp *qp, struct droce_recv_wr *wr,
	      struct droce_recv_wr **bad_wr)
{
	int rc;

	tp_run_take(&qp->dev->run);
	rc = post_recvs(qp, qp->pub.state, &qp->rq.head, &qp->rq.tail, wr, bad_wr);
	if (qp->pub.state == DROCE_QPS_ERR)
		tp_qp_flush(qp);
	tp_run_give(&qp->dev->run);
	return rc;
}

/* ---- a transport lcore (tp_lcore.c): the work queues as SP/SC rings ---- */

/*
 * The WQEs are built in place in the work queue's free slots, the new
 * head published with one release store per call (struct tp_lc_qp) and
 * then the QP's doorbell rung, so that its engine takes the head.  The
 * WR, its SGE list and inline data are copied before post returns, so the
 * caller may reuse them.  The state checked is the last modify_qp's; the
 * fields fill_*_wqe read (cap, type, mtu, qkey) change only in modify_qp,
 * which returns after the transport lcore ran it.
 */
static int
lc_post_send(struct tp_qp *qp, struct droce_send_wr *wr,
	     struct droce_send_wr **bad_wr)
{
	struct tp_lc_qp *lc = qp->lc;
	uint32_t head = lc->s_head;
	int rc = post_sends(qp, lc->state, &head, &lc->s_tail, wr, bad_wr);

	if (head != lc->s_head) {
		__atomic_store_n(&lc->s_head, head, __ATOMIC_RELEASE);
		tp_lc_ring_doorbell(qp);	/* after the head (tp_lcore_rings.c) */
	}
	return rc;
}

static int
lc_post_recv(struct tp_qp *qp, struct droce_recv_wr *wr,
	     struct droce_recv_wr **bad_wr)
{
	struct tp_lc_qp *lc = qp->lc;
	uint32_t head = lc->r_head;
	int rc = post_recvs(qp, lc->state, &head, &lc->r_tail, wr, bad_wr);

	if (head != lc->r_head) {
		__atomic_store_n(&lc->r_head, head, __ATOMIC_RELEASE);
		tp_lc_ring_doorbell(qp);	/* after the head (tp_lcore_rings.c) */
	}
	return rc;
}

/* By enum tp_run_kind (tp_engine.h): run-to-completion, a transport lcore. */
static const struct tp_run_mode tp_run_modes[TP_RUN_KINDS] = {
	[TP_RUN_RTC] = {
		.post_send = rtc_post_send,
		.post_recv = rtc_post_recv,
	},
	[TP_RUN_LCORE] = {
		.post_send = lc_post_send,
		.post_recv = lc_post_recv,
	},
};

/* Whatever runs the QP's engine: its run mode's posting. */
int
tp_post_send(struct tp_qp *qp, struct droce_send_wr *wr,
	     struct droce_send_wr **bad_wr)
{
	return tp_run_modes[qp->run & TP_RUN_MASK].post_send(qp, wr, bad_wr);
}

int
tp_post_recv(struct tp_qp *qp, struct droce_recv_wr *wr,
	     struct droce_recv_wr **bad_wr)
{
	return tp_run_modes[qp->run & TP_RUN_MASK].post_recv(qp, wr, bad_wr);
}

/*
 * An SRQ (struct tp_srq): WQEs built in place at its head, the head
 * published once per call; the engine's tail read again before a post is
 * refused (ENOMEM at max_wr held).  In every mode, as the engine that
 * takes the WQEs may run on another lcore.
 */
int
tp_post_srq_recv(struct tp_srq *srq, struct droce_recv_wr *wr,
		 struct droce_recv_wr **bad_wr)
{
	struct post_q q = { srq->wqe, srq->mask, srq->max_wr, srq->head, &srq->tail, srq };
	const void *stop;
	int rc = post_loop(&q, wr, &stop, sizeof(struct tp_recv_wqe), recv_fill_srq,
			   recv_next);

	if (q.head != srq->head)
		__atomic_store_n(&srq->head, q.head, __ATOMIC_RELEASE);
	if (rc != 0)
		*bad_wr = (struct droce_recv_wr *)(uintptr_t)stop;
	return rc;
}
