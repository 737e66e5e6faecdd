/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: the requester's receive side (IBTA 9.7.5.1-2, rxe_comp.c).
 * Consumes ACKs, NAKs, RDMA READ responses and atomic acknowledgements,
 * retires WQEs in order into the send CQ, and decides on retransmission.
 *
 * A response is run through the states, each a small static inline
 * function returning the next one, dispatched by one switch (comp_step),
 * the same code for every response and with traces on or off:
 *
 *   GET_WQE -> CHECK_PSN -> CHECK_ACK -> READ | ATOMIC | PLACED | ACK
 *   ACK covers whole SEND/WRITEs: all finished in one pass (ack_covered),
 *   then GET_WQE for the next one; READ/atomic responses -> COMPLETE ->
 *   GET_WQE (the next one)
 *   sequence NAK / READ gap -> RETRY;  RNR NAK -> RNR;  error NAK -> ERROR
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "net_host.h"
#include "tp_private.h"

enum comp_state {
	COMP_GET_WQE,
	COMP_CHECK_PSN,
	COMP_CHECK_ACK,
	COMP_READ,
	COMP_ATOMIC,
	COMP_PLACED,
	COMP_ACK,
	COMP_COMPLETE,
	COMP_RETRY,
	COMP_RNR,
	COMP_ERROR,
	COMP_DROP,
	COMP_EXIT,
};

static const char *const comp_state_names[] = {
	[COMP_GET_WQE] = "GET_WQE", [COMP_CHECK_PSN] = "CHECK_PSN",
	[COMP_CHECK_ACK] = "CHECK_ACK", [COMP_READ] = "READ",
	[COMP_ATOMIC] = "ATOMIC", [COMP_PLACED] = "PLACED", [COMP_ACK] = "ACK",
	[COMP_COMPLETE] = "COMPLETE", [COMP_RETRY] = "RETRY",
	[COMP_RNR] = "RNR", [COMP_ERROR] = "ERROR", [COMP_DROP] = "DROP",
	[COMP_EXIT] = "EXIT",
};

struct comp_ctx {
	struct tp_qp *qp;
	const struct roce_pkt *pkt;
	const uint8_t *frame;
	struct tp_send_wqe *wqe;
	uint32_t scan;			/* SQ index GET_WQE looks from... */
	uint32_t end;			/* ...up to here (scan_end) */
	uint32_t completed;		/* WQEs this response finished */
	enum droce_wc_status err;	/* for COMP_ERROR */
	bool progressed;		/* comp.psn moved: reset retry counters */
};

static uint32_t
wqe_last_psn(const struct tp_send_wqe *w)
{
	return roce_psn_add(w->first_psn, w->npkts - 1);
}

static bool
is_read(const struct tp_send_wqe *w)
{
	return w->wr_mask & TP_WR_READ;
}

static bool
is_atomic(const struct tp_send_wqe *w)
{
	return w->wr_mask & TP_WR_ATOMIC;
}

static bool
is_placement(const struct tp_send_wqe *w)
{
	return w->wr_mask & TP_WR_PLACEMENT;
}

/* ---- retiring completed WQEs --------------------------------------------------- */

/* Post CQEs for finished WQEs at the tail, in order (C10-...: SQ order). */
void
tp_comp_retire(struct tp_qp *qp)
{
	while (qp->sq.tail != qp->req.next) {
		struct tp_send_wqe *w = &qp->sq.wqe[qp->sq.tail & qp->sq.mask];
		struct droce_wc wc;

		if (w->state != TP_WQE_DONE)
			break;
		if (w->status != DROCE_WC_SUCCESS || qp->sq_sig_all ||
		    (w->send_flags & DROCE_SEND_SIGNALED)) {
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = w->wr_id;
			wc.status = w->status;
			wc.opcode = tp_wr_opcode_info[w->opcode].wc_opcode;
			wc.qp_num = qp->pub.qp_num;
			wc.byte_len = w->length;
			tp_cq_push(qp->eng, qp->scq, &wc);
		}
		qp->sq.tail++;
	}
	if (unlikely(qp->ev.sqd_notify))
		tp_event_sqd_check(qp);
}

/*
 * comp.psn moves forward to psn: forward progress restores the retry
 * budgets (IBTA 9.7.6.1.x: the counters count consecutive failures).
 */
static void
advance(struct comp_ctx *c, uint32_t psn)
{
	struct tp_qp *qp = c->qp;

	if (!roce_psn_after(psn, qp->comp.psn))
		return;
	tp_cc_on_ack(qp, (uint32_t)roce_psn_diff(psn, qp->comp.psn));
	qp->comp.psn = psn;
	qp->comp.retry_pending = false;
	qp->comp.gap_rearmed = false;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_retry_left = qp->attr.rnr_retry;
	c->progressed = true;
}

static void
finish_wqe(struct comp_ctx *c, struct tp_send_wqe *w)
{
	tp_req_uncount(c->qp, w);
	w->state = TP_WQE_DONE;
	w->status = DROCE_WC_SUCCESS;
	advance(c, roce_psn_add(wqe_last_psn(w), 1));
}

/* ---- states ----------------------------------------------------------------------- */

/*
 * Where GET_WQE stops: after the WQE being sent now (req.next), which may
 * be half sent.  No state before EXIT moves req.next.
 */
static inline uint32_t
scan_end(const struct tp_qp *qp)
{
	return tp_ring_count(qp->req.next, qp->sq.tail) <
	       tp_ring_count(qp->sq.head, qp->sq.tail) ? qp->req.next + 1 : qp->sq.head;
}

/*
 * The oldest WQE that still waits for a response, or none.  The WQEs
 * finished on the way are retired once, after the response
 * (after_response); the search goes on after the one found last.
 */
static inline struct tp_send_wqe *
next_outstanding(struct comp_ctx *c, uint32_t *at)
{
	struct tp_qp *qp = c->qp;

	for (uint32_t i = c->scan; i != c->end; i++) {
		struct tp_send_wqe *w = &qp->sq.wqe[i & qp->sq.mask];

		if (w->state == TP_WQE_SENT || w->state == TP_WQE_SENDING) {
			*at = i;
			return w;
		}
	}
	return NULL;
}

static inline enum comp_state
st_get_wqe(struct comp_ctx *c)
{
	uint32_t i;

	c->wqe = next_outstanding(c, &i);
	if (c->wqe == NULL)
		return COMP_DROP;	/* nothing outstanding: a stale response */
	c->scan = i + 1;
	return COMP_CHECK_PSN;
}

static inline enum comp_state
st_check_psn(struct comp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	int32_t d = roce_psn_diff(pkt->psn, qp->comp.psn);

	/* A response for a PSN not yet sent is bogus. */
	if (!roce_psn_before(pkt->psn, qp->req.psn_hi))
		return COMP_DROP;
	if (d < 0) {
		/* older than everything outstanding: a duplicate, except a NAK
		 * or ACK naming comp.psn - 1, which says nothing new either */
		tp_count(qp->eng, TP_CNT_DUP_RESPONSE);
		return COMP_DROP;
	}
	return COMP_CHECK_ACK;
}

/*
 * A response for PSN p implicitly acknowledges every request before p
 * (IBTA 9.7.5.1.3).  SEND/WRITE WQEs ending before p are complete; a READ
 * or atomic WQE before p without its response lost that response: retry.
 */
static inline enum comp_state
implicit_ack(struct comp_ctx *c, uint32_t p)
{
	struct tp_send_wqe *w = c->wqe;

	if (w->wr_mask & TP_WR_RD_ATOMIC) {
		if (roce_psn_after(p, wqe_last_psn(w)))
			return COMP_RETRY;
		return COMP_EXIT;		/* w is the WQE p belongs to */
	}
	/* (a WQE still being sent again after a rewind completes too: the
	 * responder has all of it) */
	if (roce_psn_before(wqe_last_psn(w), p))
		return COMP_COMPLETE;
	return COMP_EXIT;
}

static inline enum comp_state
st_check_ack(struct comp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_send_wqe *w = c->wqe;
	enum comp_state next;

	if (roce_pkt_has(pkt, ROCE_OPM_READ)) {
		next = implicit_ack(c, pkt->psn);
		if (next != COMP_EXIT)
			return next;
		if (is_read(w))
			return COMP_READ;
		return is_placement(w) && w->first_psn == pkt->psn ? COMP_PLACED : COMP_DROP;
	}
	if (pkt->opcode == ROCE_OP_ATOMIC_ACKNOWLEDGE) {
		next = implicit_ack(c, pkt->psn);
		if (next != COMP_EXIT)
			return next;
		return is_atomic(w) && w->first_psn == pkt->psn ? COMP_ATOMIC : COMP_DROP;
	}
	/* ACKNOWLEDGE: ACK, RNR NAK or NAK */
	switch (roce_aeth_type(pkt->aeth.syndrome)) {
	case ROCE_AETH_ACK:
		return COMP_ACK;
	case ROCE_AETH_RNR_NAK:
		next = implicit_ack(c, pkt->psn);
		if (next != COMP_EXIT)
			return next;
		advance(c, pkt->psn);		/* acks everything before it */
		return COMP_RNR;
	case ROCE_AETH_NAK:
		next = implicit_ack(c, pkt->psn);
		if (next != COMP_EXIT)
			return next;
		advance(c, pkt->psn);
		switch (roce_aeth_value(pkt->aeth.syndrome)) {
		case ROCE_NAK_PSN_SEQ_ERR:
			tp_count(c->qp->eng, TP_CNT_RCVD_SEQ_ERR);
			return COMP_RETRY;
		case ROCE_NAK_INVALID_REQ:
			c->err = DROCE_WC_REM_INV_REQ_ERR;
			break;
		case ROCE_NAK_REM_ACCESS_ERR:
			c->err = DROCE_WC_REM_ACCESS_ERR;
			break;
		case ROCE_NAK_INVALID_RD_REQ:
			c->err = DROCE_WC_REM_INV_RD_REQ_ERR;
			break;
		default:
			c->err = DROCE_WC_REM_OP_ERR;
			break;
		}
		tp_count(c->qp->eng, TP_CNT_RCVD_ERR_NAK);
		return COMP_ERROR;
	default:
		return COMP_DROP;		/* reserved syndrome */
	}
}

/*
 * A plain ACK for PSN p covers SEND/WRITE WQE w whole: w and the SEND/WRITE
 * WQEs after it that p covers whole too (a cumulative ACK, IBTA 9.7.5.1.2)
 * are finished in one pass, and comp.psn advanced once, to the end of the
 * last.  That is where COMPLETE -> GET_WQE -> CHECK_PSN -> CHECK_ACK ->
 * ACK -> COMPLETE per WQE ends too: for each later WQE the PSN checks pass
 * (p is after comp.psn), and the window grows by the same sum.  The first
 * WQE it does not cover whole (a READ or atomic one, or one p ends inside)
 * is left to GET_WQE, as the states would see it.
 */
static inline enum comp_state
ack_covered(struct comp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	struct tp_send_wqe *w = c->wqe;
	uint32_t p = c->pkt->psn;
	uint32_t end, i;

	for (;;) {
		tp_req_uncount(qp, w);
		w->state = TP_WQE_DONE;
		w->status = DROCE_WC_SUCCESS;
		c->completed++;
		end = wqe_last_psn(w);
		if (!roce_psn_after(p, end))
			break;			/* the ACK ends with w */
		w = next_outstanding(c, &i);
		if (w == NULL || (w->wr_mask & TP_WR_RD_ATOMIC) ||
		    roce_psn_before(p, wqe_last_psn(w))) {
			advance(c, roce_psn_add(end, 1));
			return COMP_GET_WQE;
		}
		c->wqe = w;
		c->scan = i + 1;
	}
	advance(c, roce_psn_add(end, 1));
	return COMP_EXIT;
}

/* A plain ACK for PSN p: everything up to and including p is done. */
static inline enum comp_state
st_ack(struct comp_ctx *c)
{
	struct tp_send_wqe *w = c->wqe;
	uint32_t p = c->pkt->psn;

	if (w->wr_mask & TP_WR_RD_ATOMIC)
		/* an ACK past a READ/atomic whose response never came */
		return roce_psn_before(p, w->first_psn) ? COMP_EXIT : COMP_RETRY;
	if (!roce_psn_before(p, wqe_last_psn(w)))
		return ack_covered(c);
	/* part of a multi-packet message is acknowledged */
	advance(c, roce_psn_add(p, 1));
	return COMP_EXIT;
}

static inline enum comp_state
st_complete(struct comp_ctx *c)
{
	finish_wqe(c, c->wqe);
	c->completed++;
	/* a response for a later PSN (cumulative ACK, implicit ACK) goes on
	 * to the next WQE; one that ended this WQE is used up */
	if (roce_psn_after(c->pkt->psn, wqe_last_psn(c->wqe)))
		return COMP_GET_WQE;
	return COMP_EXIT;
}

/* READ response data and atomic results land in the WQE's buffers. */
static bool
scatter(struct tp_qp *qp, const struct tp_send_wqe *w, uint32_t off,
	const uint8_t *src, uint32_t len)
{
	return tp_sge_copy(qp, w->sge, w->num_sge, off, (void *)(uintptr_t)src, len,
			   true);
}

static inline enum comp_state
st_read(struct comp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_send_wqe *w = c->wqe;
	struct tp_qp *qp = c->qp;
	int32_t idx = roce_psn_diff(pkt->psn, w->first_psn);
	bool last = (uint32_t)idx == w->npkts - 1;
	uint32_t off, want;

	if (idx < 0 || (uint32_t)idx >= w->npkts)
		return COMP_DROP;
	if (pkt->psn != qp->comp.psn)
		/* responses before this one were lost (go-back-N) */
		return roce_psn_after(pkt->psn, qp->comp.psn) ? COMP_RETRY : COMP_DROP;
	/* The packet's place in the response must match its opcode. */
	if (!!(pkt->op->mask & ROCE_OPM_LAST) != last)
		return COMP_DROP;
	off = (uint32_t)idx * qp->mtu;
	want = last ? w->length - off : qp->mtu;
	if (pkt->payload_len != want) {
		c->err = DROCE_WC_BAD_RESP_ERR;
		return COMP_ERROR;
	}
	if (!scatter(qp, w, off, c->frame + pkt->payload_off, want)) {
		c->err = DROCE_WC_LOC_PROT_ERR;
		return COMP_ERROR;
	}
	if (last)
		return COMP_COMPLETE;
	advance(c, roce_psn_add(pkt->psn, 1));
	return COMP_EXIT;
}

static inline enum comp_state
st_atomic(struct comp_ctx *c)
{
	uint64_t orig = c->pkt->atmack_orig;	/* host order, as rxe and mlx5 */

	if (!scatter(c->qp, c->wqe, 0, (const uint8_t *)&orig, sizeof(orig))) {
		c->err = DROCE_WC_LOC_PROT_ERR;
		return COMP_ERROR;
	}
	return COMP_COMPLETE;
}

/*
 * ATOMIC WRITE and FLUSH are answered by one RDMA READ response ONLY
 * without data (IBTA 1.5 annex A19, as rxe): anything else is a bad
 * response.
 */
static inline enum comp_state
st_placed(struct comp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;

	if ((pkt->op->mask & ROCE_OPM_ONLY) != ROCE_OPM_ONLY || pkt->payload_len != 0) {
		c->err = DROCE_WC_BAD_RESP_ERR;
		return COMP_ERROR;
	}
	return COMP_COMPLETE;
}

/* The retry budget: retry_cnt (7 = infinite only in rxe-compat mode). */
static bool
consume_retry(struct tp_qp *qp)
{
	if (qp->attr.retry_cnt == 7 && qp->dev->cfg.retry_cnt_7_infinite)
		return true;
	if (qp->comp.retry_left == 0)
		return false;
	qp->comp.retry_left--;
	return true;
}

/*
 * Go back N.  Once rewound, responses and NAKs still in flight from before
 * the rewind show the same gap again: they are ignored until comp.psn moves
 * (rxe's started_retry), so one loss costs one retry, not a cascade.
 */
static inline enum comp_state
st_retry(struct comp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	if (qp->comp.retry_pending && c->pkt != NULL)
		return COMP_DROP;
	if (!consume_retry(qp)) {
		tp_count(qp->eng, TP_CNT_RETRY_EXCEEDED_ERR);
		c->err = DROCE_WC_RETRY_EXC_ERR;
		return COMP_ERROR;
	}
	/* selective repeat: a timeout resends the oldest hole, not all */
	if (c->pkt == NULL && unlikely(tp_sr_agreed(qp)) && tp_req_sr_timeout(qp)) {
		qp->comp.gap_rearmed = false;
		tp_timer_arm_retrans(qp);
		return COMP_EXIT;
	}
	tp_count(qp->eng, TP_CNT_COMPLETER_RETRY_ERR);
	qp->comp.retry_pending = true;
	qp->comp.gap_rearmed = false;
	/* c->pkt NULL: a timeout (no response at all), else a gap */
	tp_cc_on_loss(qp, c->pkt == NULL);
	tp_req_rewind(qp);
	tp_timer_arm_retrans(qp);
	return COMP_EXIT;
}

static inline enum comp_state
st_rnr(struct comp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	tp_count(qp->eng, TP_CNT_RCVD_RNR_ERR);
	if (qp->attr.rnr_retry != 7) {		/* 7 = retry forever (IBTA) */
		if (qp->comp.rnr_retry_left == 0) {
			tp_count(qp->eng, TP_CNT_RETRY_RNR_EXCEEDED_ERR);
			c->err = DROCE_WC_RNR_RETRY_EXC_ERR;
			return COMP_ERROR;
		}
		qp->comp.rnr_retry_left--;
	}
	/* stop sending; the RNR timer rewinds to the NAKed PSN */
	qp->req.wait_rnr = true;
	tp_timer_disarm_retrans(qp);
	tp_timer_arm_rnr(qp, roce_aeth_value(c->pkt->aeth.syndrome));
	return COMP_EXIT;
}

static inline enum comp_state
st_error(struct comp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	struct tp_send_wqe *w = c->wqe;

	tp_comp_retire(qp);	/* the WQEs finished before it, as they completed */
	tp_req_uncount(qp, w);
	w->state = TP_WQE_DONE;
	w->status = c->err;
	tp_qp_to_error(qp);
	return COMP_EXIT;
}

/* One step: the state's function (see resp_step in tp_resp.c). */
static inline enum comp_state
comp_step(struct comp_ctx *c, enum comp_state s)
{
	switch (s) {
	case COMP_GET_WQE:
		return st_get_wqe(c);
	case COMP_CHECK_PSN:
		return st_check_psn(c);
	case COMP_CHECK_ACK:
		return st_check_ack(c);
	case COMP_READ:
		return st_read(c);
	case COMP_ATOMIC:
		return st_atomic(c);
	case COMP_PLACED:
		return st_placed(c);
	case COMP_ACK:
		return st_ack(c);
	case COMP_COMPLETE:
		return st_complete(c);
	case COMP_RETRY:
		return st_retry(c);
	case COMP_RNR:
		return st_rnr(c);
	case COMP_ERROR:
		return st_error(c);
	case COMP_DROP:
	case COMP_EXIT:
		break;
	}
	return COMP_EXIT;
}

/* After the response: progress restarts (or stops) the retransmit timer. */
static void
after_response(struct comp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	tp_comp_retire(qp);
	if (!c->progressed || qp->pub.state == DROCE_QPS_ERR || qp->req.wait_rnr)
		return;
	if (qp->comp.psn == qp->req.psn_hi)
		tp_timer_disarm_retrans(qp);
	else
		tp_timer_arm_retrans(qp);
}

void
tp_comp_rx(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame)
{
	struct comp_ctx c = {
		.qp = qp, .pkt = pkt, .frame = frame, .scan = qp->sq.tail, .end = scan_end(qp),
	};
	/* read once: the states' stores do not make the compiler load it again */
	const bool trace = qp->dev->trace;
	enum comp_state s = COMP_GET_WQE;
	uint32_t path = 0;

	if (qp->pub.qp_type != DROCE_QPT_RC || !tp_qp_can_send(qp))
		return;
	if (pkt->op->mask & ROCE_OPM_ACK)
		tp_count(qp->eng, TP_CNT_RCVD_ACKS);
	/*
	 * Every state returns a later one but COMPLETE, which goes back to
	 * GET_WQE for the next WQE a cumulative or implicit ACK covers (each
	 * pass finishes one WQE, so the SQ bounds the loop): the states
	 * visited and the WQEs completed are the path, traced once.
	 */
	while (s != COMP_EXIT && s != COMP_DROP) {
		path |= 1u << s;
		s = comp_step(&c, s);
	}
	if (unlikely(trace)) {
		tp_trace_path(qp, "comp", pkt->psn, path | 1u << s, comp_state_names,
			      RTE_DIM(comp_state_names));
		TP_LOG(DEBUG, "qp %u comp op 0x%02x: %u WQEs completed, comp.psn %u "
		       "psn_hi %u req.psn %u pending %d\n", qp->pub.qp_num, pkt->opcode,
		       c.completed, qp->comp.psn, qp->req.psn_hi, qp->req.psn,
		       qp->comp.retry_pending);
	}
	after_response(&c);
}

/*
 * While the peer's MAC is still being resolved (ARP/ND), our packets wait
 * in the host stack and nothing could have been acknowledged: that time
 * does not count against retry_cnt (the kernel resolves before a QP
 * leaves RTR; droce resolves lazily, so it must not fail a QP whose first
 * ARP request was lost and is retried a second later).
 */
static bool
peer_unresolved(struct tp_qp *qp)
{
	return tp_host(qp->eng) != NULL &&
	       net_host_resolve(qp->dev->host, qp->av.dgid, NULL) == -EAGAIN;
}

/* Retransmit timer expiry (IBTA 9.7.6.1.x local ACK timeout). */
void
tp_comp_timeout(struct tp_qp *qp)
{
	struct comp_ctx c = { .qp = qp, .scan = qp->sq.tail, .end = scan_end(qp) };

	if (peer_unresolved(qp)) {
		tp_timer_arm_retrans(qp);
		return;
	}
	tp_count(qp->eng, TP_CNT_TIMEOUTS);
	if (st_get_wqe(&c) != COMP_CHECK_PSN)
		return;			/* nothing outstanding */
	if (st_retry(&c) == COMP_ERROR)
		st_error(&c);
}
