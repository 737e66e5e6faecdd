/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqv_data.c - the queue-region provider's data path (dqv.h): work
 * requests written into the region's send and receive rings, completions
 * read out of its completion rings, completion events armed in its notify
 * lines, asynchronous events out of its event ring.  No system call, no
 * lock, no allocation per work request: one producer index published per
 * post call (release), then one look at droced's doorbell flag, which
 * costs a one-byte write only while droced sleeps.  As droce.h says, one
 * thread at a time posts to a QP and one polls a CQ: each ring has one
 * producer and one consumer.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "dqv.h"

/* lib/dq's values are droce.h's (ibverbs'): copied through. */
#define SAME(x, y) ((int)(x) == (int)(y))
_Static_assert(SAME(DQ_WR_RDMA_WRITE, DROCE_WR_RDMA_WRITE) &&
	       SAME(DQ_WR_SEND_WITH_INV, DROCE_WR_SEND_WITH_INV) &&
	       SAME(DQ_WR_LOCAL_INV, DROCE_WR_LOCAL_INV) &&
	       SAME(DQ_WR_ATOMIC_FETCH_AND_ADD, DROCE_WR_ATOMIC_FETCH_AND_ADD) &&
	       SAME(DQ_SEND_FENCE, DROCE_SEND_FENCE) && SAME(DQ_SEND_SIGNALED, DROCE_SEND_SIGNALED) &&
	       SAME(DQ_SEND_SOLICITED, DROCE_SEND_SOLICITED) &&
	       SAME(DQ_SEND_INLINE, DROCE_SEND_INLINE) &&
	       SAME(DQ_MAX_INLINE, DROCE_MAX_INLINE_DATA) &&
	       SAME(DQ_WR_BIND_MW, DROCE_WR_BIND_MW) && SAME(DQ_MAX_SGE, DROCE_MAX_SGE) &&
	       SAME(DQ_WR_ATOMIC_WRITE, DROCE_WR_ATOMIC_WRITE) &&
	       SAME(DQ_MW_ACCESS, DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
				      DROCE_ACCESS_REMOTE_ATOMIC), "lib/dq's opcodes and flags");

/*
 * After a producer index was published: if droced said it sleeps, ring.
 * The full fence orders our index's store before the flag's load, as
 * droced's orders its flag's store before its look at our index (dq.h,
 * struct dq_bell): one of the two sees the other.  A full doorbell (droced
 * has not drained it yet) is a ring already pending, and a dead droced
 * one nobody hears: neither waits nor raises SIGPIPE.
 */
static inline void
doorbell(const struct dqv_region *r)
{
	static const char one = 1;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&r->bell->sleeping, __ATOMIC_RELAXED) != 0, 0))
		(void)send(r->bell_fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Inline data: the bytes its SGEs add up to (their lkeys are not looked
 * at, as in ibverbs), or -EINVAL above the QP's max_inline_data (an
 * ATOMIC WRITE's 8 bytes are its operand, taken whatever that is, as in
 * process).
 */
static inline int
inline_len(const struct dqv_qp *qp, const struct droce_send_wr *wr)
{
	uint32_t max = (dq_wr_ops[wr->opcode] & DQ_OP_ATOMIC_WRITE) ? 8 : qp->max_inline;
	uint64_t len = 0;

	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len <= max ? (int)len : -EINVAL;
}

/*
 * wr's n SGEs into the descriptor w at index i of ring r (beyond
 * DQ_WQE_SGE, into the entries after it): 0, or -EINVAL when the list is
 * one droced would refuse (dq_sges_check; the descriptor's own SGEs are
 * dq_send_check's).
 */
static inline int
send_sges(struct dq_ring *r, uint32_t depth, uint32_t i, struct dq_send_wqe *w,
	  const struct droce_sge *sg, int n)
{
	struct dq_sge all[DQ_MAX_SGE];

	w->num_sge = (uint8_t)n;
	for (int k = 0; k < n && k < DQ_WQE_SGE; k++)
		w->sge[k] = (struct dq_sge){ sg[k].addr, sg[k].length, sg[k].lkey };
	if (__builtin_expect(n <= DQ_WQE_SGE, 1))
		return 0;
	for (int k = DQ_WQE_SGE; k < n; k++)
		dq_send_sge_write(r, depth, i, (uint32_t)k,
				  &(struct dq_sge){ sg[k].addr, sg[k].length, sg[k].lkey });
	dq_send_sges_read(r, depth, i, w, all);
	return dq_sges_check(all, (uint32_t)n) == 0 ? 0 : -EINVAL;
}

/*
 * One WR as a send descriptor at index i of the send ring (and, inline
 * or of more than DQ_WQE_SGE SGEs, the entries after it, room for which
 * the caller checked): 0, or -EINVAL (what the region does not carry: a
 * bind without a window, inline data above the QP's max_inline_data; a UD
 * WR without an address handle).  A UD WR names droced's AH by its index.
 * IBV_SEND_INLINE on an opcode that sends no data (READ, atomics) is
 * ignored, as in process.
 */
static inline int
send_wqe(const struct dqv_qp *qp, const struct droce_send_wr *wr, uint32_t i, int len)
{
	struct dq_send_wqe *w = &((struct dq_send_wqe *)dq_ring_entries(qp->sq))[i &
										  (qp->sq_depth - 1)];
	uint16_t ops = dq_wr_ops[wr->opcode];
	uint16_t flags = (uint16_t)(wr->send_flags | qp->sig_all);

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->imm = wr->imm_data;		/* or invalidate_rkey: one union */
	if (ops & DQ_OP_ATOMIC) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else if (ops & DQ_OP_REMOTE) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (ops & DQ_OP_BIND) {
		/* droced looks the window and the MR up among ours */
		if (wr->bind_mw.mw == NULL)
			return -EINVAL;
		w->imm = wr->bind_mw.mw->handle;
		w->rkey = wr->bind_mw.rkey;
		w->remote_addr = wr->bind_mw.bind_info.addr;
		w->bind.length = wr->bind_mw.bind_info.length;
		w->bind.mr_lkey = wr->bind_mw.bind_info.mr != NULL ?
					  wr->bind_mw.bind_info.mr->lkey : 0;
		/* LOCAL_WRITE accepted and ignored, as in process (a window
		 * grants remote rights only; lib/protection check_mw_access) */
		w->bind.access = wr->bind_mw.bind_info.mw_access_flags &
				 ~(unsigned int)DROCE_ACCESS_LOCAL_WRITE;
	}
	if (qp->d.pub.qp_type == DROCE_QPT_UD) {
		if (wr->wr.ud.ah == NULL)
			return -EINVAL;
		w->ah = wr->wr.ud.ah->handle;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	if (len >= 0) {
		uint32_t off = 0;

		w->inline_len = (uint32_t)len;
		for (int k = 0; k < wr->num_sge; k++) {
			dq_inline_write(qp->sq, qp->sq_depth, i, off,
					(const void *)(uintptr_t)wr->sg_list[k].addr,
					wr->sg_list[k].length);
			off += wr->sg_list[k].length;
		}
	} else {
		flags &= (uint16_t)~DQ_SEND_INLINE;
		if (send_sges(qp->sq, qp->sq_depth, i, w, wr->sg_list, wr->num_sge) != 0)
			return -EINVAL;
	}
	w->flags = flags;
	/* droced's check, here first: a malformed WR fails its post
	 * (EINVAL) instead of ending the QP in droced (which knows the AH
	 * table's size; any index passes here) */
	return dq_send_check(w, qp->d.pub.qp_type == DROCE_QPT_UD, UINT32_MAX) == 0 ? 0 : -EINVAL;
}

/*
 * The ring entries wr takes (dq_send_slots, dq_send_sge_slots), *len its
 * inline bytes (-1: not inline), or -EINVAL for what is refused before
 * any entry is written (more SGEs than the QP was granted, as ibverbs).
 */
static inline int
send_slots(const struct dqv_qp *qp, const struct droce_send_wr *wr, int *len)
{
	*len = -1;
	if ((unsigned int)wr->opcode >= DQ_WR_NOPS || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->max_send_sge ||
	    (wr->send_flags & ~(unsigned int)DQ_SEND_FLAGS) != 0 ||
	    !(dq_wr_ops[wr->opcode] & DQ_OP_VALID))
		return -EINVAL;
	if (__builtin_expect((wr->send_flags & DQ_SEND_INLINE) != 0, 0) &&
	    (dq_wr_ops[wr->opcode] & DQ_OP_INLINE)) {
		*len = inline_len(qp, wr);
		if (*len < 0)
			return -EINVAL;
		return (int)dq_send_slots((uint32_t)*len);
	}
	return (int)dq_send_sge_slots((uint32_t)wr->num_sge);
}

int
dqv_post_send(struct droce_qp *pub, struct droce_send_wr *wr, struct droce_send_wr **bad)
{
	struct dqv_qp *qp = (struct dqv_qp *)pub;
	int room = dq_ring_room(qp->sq, qp->sq_prod, qp->sq_depth), rc = 0;
	uint32_t prod = qp->sq_prod;

	if (room < 0)
		rc = -EIO;	/* droced's index is garbage */
	/* as in process: nothing to send from RESET, INIT or RTR (only the
	 * application's modify_qp leaves those, so pub->state is current) */
	if (pub->state == DROCE_QPS_RESET || pub->state == DROCE_QPS_INIT ||
	    pub->state == DROCE_QPS_RTR)
		rc = -EINVAL;
	/* on a failure wr stays the WR that failed: *bad names it */
	for (; wr != NULL && rc == 0; wr = wr->next) {
		int len, n = send_slots(qp, wr, &len);

		if (n < 0) {
			rc = n;
			break;
		}
		if (n > room) {
			rc = -ENOMEM;
			break;
		}
		rc = send_wqe(qp, wr, prod, len);
		if (rc != 0)
			break;
		prod += (uint32_t)n;
		room -= n;
	}
	if (rc != 0)
		*bad = wr;
	if (prod != qp->sq_prod) {
		qp->sq_prod = prod;
		dq_ring_produced(qp->sq, prod);
		doorbell(qp->r);
	}
	return rc;
}

/*
 * One receive WR as the descriptor at index prod of ring r and, of more
 * than DQ_WQE_SGE SGEs, the entries after it (dq_recv_slots, room for
 * which the caller checked): 0, or -EINVAL as droced would refuse it.
 */
static inline int
recv_wqe(struct dq_ring *r, uint32_t depth, uint32_t prod, const struct droce_recv_wr *wr)
{
	struct dq_recv_wqe *w = &((struct dq_recv_wqe *)dq_ring_entries(r))[prod & (depth - 1)];
	struct dq_sge all[DQ_MAX_SGE];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->num_sge = (uint8_t)wr->num_sge;
	for (int i = 0; i < wr->num_sge && i < DQ_WQE_SGE; i++)
		w->sge[i] = (struct dq_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
					     wr->sg_list[i].lkey };
	if (dq_recv_check(w) != 0)
		return -EINVAL;
	if (__builtin_expect(wr->num_sge <= DQ_WQE_SGE, 1))
		return 0;
	for (int i = DQ_WQE_SGE; i < wr->num_sge; i++)
		dq_recv_sge_write(r, depth, prod, (uint32_t)i,
				  &(struct dq_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
						    wr->sg_list[i].lkey });
	dq_recv_sges_read(r, depth, prod, w, all);
	return dq_sges_check(all, w->num_sge) == 0 ? 0 : -EINVAL;
}

/* Receive WRs of at most max_sge SGEs (the QP's or SRQ's, as granted;
 * more: EINVAL) into a ring whose own index is *prod: as droced checks
 * them.  At most *wr_room of them (a QP's receive queue: ENOMEM beyond),
 * less those posted on return. */
static int
recv_post(struct dqv_region *reg, struct dq_ring *r, uint32_t depth, uint32_t *prod_p,
	  uint32_t max_sge, uint32_t *wr_room, struct droce_recv_wr *wr,
	  struct droce_recv_wr **bad)
{
	int room = dq_ring_room(r, *prod_p, depth), rc = 0;
	uint32_t prod = *prod_p;

	if (room < 0)
		rc = -EIO;
	for (; wr != NULL && rc == 0; wr = wr->next) {
		int n;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			rc = -EINVAL;
			break;
		}
		n = (int)dq_recv_slots((uint32_t)wr->num_sge);
		if (n > room || *wr_room == 0) {
			rc = -ENOMEM;
			break;
		}
		rc = recv_wqe(r, depth, prod, wr);
		if (rc != 0)
			break;
		prod += (uint32_t)n;
		room -= n;
		--*wr_room;
	}
	if (rc != 0)
		*bad = wr;
	if (prod != *prod_p) {
		*prod_p = prod;
		dq_ring_produced(r, prod);
		doorbell(reg);
	}
	return rc;
}

/* A QP on an SRQ takes no receive of its own (as in process: EINVAL). */
int
dqv_post_recv(struct droce_qp *pub, struct droce_recv_wr *wr, struct droce_recv_wr **bad)
{
	struct dqv_qp *qp = (struct dqv_qp *)pub;

	uint32_t room, left;
	int rc;

	if (pub->srq != NULL || pub->state == DROCE_QPS_RESET) {
		*bad = wr;
		return -EINVAL;	/* as in process (a RESET QP takes no receive) */
	}
	/* as in process: max_recv_wr posted and not yet completed (the ring
	 * is deeper; the completions this process polled say which are) */
	room = qp->max_recv_wr - (qp->rq_posted - dqv_recv_done(qp->slot));
	left = room <= qp->max_recv_wr ? room : 0;
	room = left;
	rc = recv_post(qp->r, qp->rq, qp->rq_depth, &qp->rq_prod, qp->max_recv_sge, &left, wr,
		       bad);
	qp->rq_posted += room - left;
	return rc;
}

int
dqv_post_srq_recv(struct droce_srq *pub, struct droce_recv_wr *wr, struct droce_recv_wr **bad)
{
	struct dqv_srq *srq = (struct dqv_srq *)pub;

	uint32_t room = UINT32_MAX;

	return recv_post(srq->r, srq->ring, srq->depth, &srq->prod, srq->max_sge, &room, wr, bad);
}

/*
 * A receive completion of QP qpn polled: its slot's count (the slot of
 * the CQ's last one first; an SRQ's QP counts too, unused).  The process's
 * own table, written by create and destroy, read here atomically.
 */
static inline void
recv_polled(struct dqv_cq *cq, uint32_t qpn)
{
	struct dqv_region *r = &dqv_region;
	uint32_t s = cq->last_slot;

	if (__atomic_load_n(&r->slot_qpn[s], __ATOMIC_RELAXED) != qpn) {
		for (s = 0; s < DQV_QPS && __atomic_load_n(&r->slot_qpn[s], __ATOMIC_RELAXED) != qpn;
		     s++)
			;
		if (s == DQV_QPS)
			return;		/* its QP destroyed meanwhile */
		cq->last_slot = s;
	}
	__atomic_store_n(&r->rq_done[s], r->rq_done[s] + 1, __ATOMIC_RELAXED);
}

uint32_t
dqv_recv_done(uint32_t slot)
{
	return __atomic_load_n(&dqv_region.rq_done[slot], __ATOMIC_RELAXED);
}

/*
 * Up to n completions, skipping those dqv_cq_clean marked.  Our index is
 * loaded and stored atomically (relaxed): a modify_qp in another thread
 * reads it.
 */
int
dqv_poll_cq(struct droce_cq *pub, int n, struct droce_wc *wc)
{
	struct dqv_cq *cq = (struct dqv_cq *)pub;
	uint32_t cons = __atomic_load_n(&cq->cons, __ATOMIC_RELAXED);
	int avail = dq_ring_avail(cq->ring, cons, cq->depth);
	const struct dq_cqe *e = dq_ring_entries(cq->ring);
	int got = 0, i;

	if (avail <= 0 || n <= 0)
		return avail < 0 ? -EIO : 0;
	for (i = 0; i < avail && got < n; i++) {
		const struct dq_cqe *c = &e[(cons + (uint32_t)i) & (cq->depth - 1)];
		uint32_t qpn = __atomic_load_n(&c->qp_num, __ATOMIC_RELAXED);

		if (__builtin_expect(qpn == DQ_CQE_CLEANED, 0))
			continue;
		wc[got++] = (struct droce_wc){
			.wr_id = c->wr_id, .status = (enum droce_wc_status)c->status,
			.opcode = (enum droce_wc_opcode)c->opcode, .vendor_err = c->vendor_err,
			.byte_len = c->byte_len, .imm_data = c->imm, .qp_num = qpn,
			.src_qp = c->src_qp, .wc_flags = c->wc_flags, .sl = c->sl };
		if (c->opcode & DROCE_WC_RECV)	/* a receive's, flushed ones too */
			recv_polled(cq, qpn);
	}
	cons += (uint32_t)i;
	__atomic_store_n(&cq->cons, cons, __ATOMIC_RELAXED);
	dq_ring_consumed(cq->ring, cons);
	return got;
}

/*
 * A QP reset to RESET leaves no completion behind (as in process,
 * lib/transport tp_cq_clean; rdma-core's tests restate a QP from ERR and
 * expect its next completion, not the flushes of before): droced removed
 * those its own CQ held before it answered, and those it had published
 * into the ring are marked here, in place (qp_num DQ_CQE_CLEANED, one
 * store each), and skipped by polls.  droced writes no entry between our
 * index and the one it published; a poll in another thread meanwhile took
 * an entry before its mark or skips it: no lock on either side.
 */
void
dqv_cq_clean(struct droce_cq *pub, uint32_t qpn)
{
	struct dqv_cq *cq = (struct dqv_cq *)pub;
	uint32_t cons = __atomic_load_n(&cq->cons, __ATOMIC_RELAXED);
	int avail = dq_ring_avail(cq->ring, cons, cq->depth);
	struct dq_cqe *e = dq_ring_entries(cq->ring);

	for (int i = 0; i < avail; i++) {
		struct dq_cqe *c = &e[(cons + (uint32_t)i) & (cq->depth - 1)];

		if (__atomic_load_n(&c->qp_num, __ATOMIC_RELAXED) == qpn)
			__atomic_store_n(&c->qp_num, DQ_CQE_CLEANED, __ATOMIC_RELAXED);
	}
}

/*
 * A new arm (its sequence number, solicited-only in bit 0), then the full
 * fence: droced reads the arm after publishing completions and a fence,
 * so "arm, poll again, wait" either polls the completion or gets the event.
 */
int
dqv_req_notify_cq(struct droce_cq *pub, int solicited_only)
{
	struct dqv_cq *cq = (struct dqv_cq *)pub;

	cq->arm_sn++;
	__atomic_store_n(&cq->notify->arm, cq->arm_sn << 1 | (solicited_only ? DQ_ARM_SOLICITED : 0),
			 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* One fired event not yet taken (droced adds to fired, then counts the
 * channel's eventfd; the channel's lock is held). */
int
dqv_cq_take_event(struct droce_cq *pub)
{
	struct dqv_cq *cq = (struct dqv_cq *)pub;
	uint32_t fired = __atomic_load_n(&cq->notify->fired, __ATOMIC_ACQUIRE);

	if (fired == cq->taken)
		return 0;
	cq->taken++;
	return 1;
}

/* ctx's next event out of its own ring, as droce_get_async_event gives
 * it: the object is the proxy that named it at its creation (droced names
 * it back). */
int
dqv_event_take(struct droce_context *ctx, struct droce_async_event *ev)
{
	struct dqv_region *r = &dqv_region;
	struct dqv_context *c = dqv_ctx(ctx);
	struct dq_event e;

	if (r->base == NULL || c->gen != r->gen ||	/* a fork's parent's context */
	    dq_event_take(dq_evq(r->base, &r->g, c->ev_ctx), &c->ev_cons, &e) != 1)
		return -EAGAIN;
	memset(ev, 0, sizeof(*ev));
	ev->event_type = (enum droce_event_type)e.type;
	ev->element.qp = (struct droce_qp *)(uintptr_t)e.name;
	if (verbs_event_object(ev) == NULL)	/* a port's: its number */
		ev->element.port_num = (int)(uint32_t)e.name;
	return 0;
}
