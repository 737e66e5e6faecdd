/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: executes request packets against protected memory and
 * answers them (IBTA 9.7.4, 9.7.5; rxe_resp.c for how Linux does it).
 *
 * Every request goes through the states, each a small static inline
 * function that returns the next state, dispatched by one switch
 * (resp_step); there is no second copy of the checks for the common case:
 *
 *   CHECK_PSN -> CHECK_OP_SEQ -> CHECK_OP_VALID -> CHECK_RESOURCE
 *     -> CHECK_LENGTH -> CHECK_RKEY -> EXECUTE -> COMPLETE -> ACKNOWLEDGE
 *
 * with side exits DUPLICATE, OUT_OF_SEQ, RNR, DROP and the error states.
 * All errors are mapped in one place (resp_errors[]) to the NAK on the wire,
 * the receive completion status and the counter.  DROP discards the packet;
 * on UC it also abandons the message in progress (9.7.7).
 *
 * Every AETH carries the MSN after counting the message it answers
 * (C9-148): ACKs and NAKs the MSN of the last completed message, READ
 * responses and atomic ACKs the one their request made, also when a
 * duplicate is answered; a NAK never counts the message it fails.
 *
 * READs, atomics, ATOMIC WRITEs and FLUSHes take responder resources
 * (max_dest_rd_atomic), and every answer leaves through the QP's output
 * queue: both in tp_resp_out.c.
 */
#include <string.h>

#include <rte_byteorder.h>

#include "tp_place.h"
#include "tp_resp.h"

enum resp_state {
	RESP_CHECK_PSN,
	RESP_CHECK_OP_SEQ,
	RESP_CHECK_OP_VALID,
	RESP_CHECK_RESOURCE,
	RESP_CHECK_LENGTH,
	RESP_CHECK_RKEY,
	RESP_EXECUTE,
	RESP_COMPLETE,
	RESP_ACKNOWLEDGE,
	RESP_DUPLICATE,
	RESP_OUT_OF_SEQ,
	RESP_RNR,
	RESP_DROP,
	/* errors: see resp_errors[] */
	RESP_ERR_INV_REQ,	/* bad opcode sequence, unsupported op, lengths */
	RESP_ERR_LENGTH,	/* SEND longer than the receive buffer */
	RESP_ERR_ACCESS,	/* R_Key checks failed */
	RESP_ERR_LOCAL_PROT,	/* receive buffer L_Key checks failed */
	RESP_ERR_INVALIDATE,	/* SEND_WITH_INV of a key we cannot invalidate */
	RESP_DONE,
};

static const char *const resp_state_names[] = {
	[RESP_CHECK_PSN] = "CHECK_PSN", [RESP_CHECK_OP_SEQ] = "CHECK_OP_SEQ",
	[RESP_CHECK_OP_VALID] = "CHECK_OP_VALID",
	[RESP_CHECK_RESOURCE] = "CHECK_RESOURCE",
	[RESP_CHECK_LENGTH] = "CHECK_LENGTH", [RESP_CHECK_RKEY] = "CHECK_RKEY",
	[RESP_EXECUTE] = "EXECUTE", [RESP_COMPLETE] = "COMPLETE",
	[RESP_ACKNOWLEDGE] = "ACKNOWLEDGE", [RESP_DUPLICATE] = "DUPLICATE",
	[RESP_OUT_OF_SEQ] = "OUT_OF_SEQ", [RESP_RNR] = "RNR",
	[RESP_ERR_INV_REQ] = "ERR_INV_REQ", [RESP_ERR_LENGTH] = "ERR_LENGTH",
	[RESP_ERR_ACCESS] = "ERR_ACCESS", [RESP_ERR_LOCAL_PROT] = "ERR_LOCAL_PROT",
	[RESP_ERR_INVALIDATE] = "ERR_INVALIDATE", [RESP_DROP] = "DROP",
	[RESP_DONE] = "DONE",
};

/*
 * Error states -> NAK code (RC), receive completion status (when a receive
 * WQE is in use) and counter.  RC responders move to the error state after
 * these NAKs (IBTA 9.9.3.1.x, classes B/C/D), as rxe and mlx5 do.
 */
struct resp_error {
	uint8_t nak;
	enum droce_wc_status recv_status;
	enum tp_counter counter;
};

static const struct resp_error resp_errors[] = {
	[RESP_ERR_INV_REQ] = { ROCE_NAK_INVALID_REQ, DROCE_WC_REM_INV_REQ_ERR,
			       TP_CNT_SENT_INV_REQ_NAK },
	[RESP_ERR_LENGTH] = { ROCE_NAK_INVALID_REQ, DROCE_WC_LOC_LEN_ERR,
			      TP_CNT_SENT_INV_REQ_NAK },
	[RESP_ERR_ACCESS] = { ROCE_NAK_REM_ACCESS_ERR, DROCE_WC_REM_ACCESS_ERR,
			      TP_CNT_SENT_REM_ACCESS_NAK },
	[RESP_ERR_LOCAL_PROT] = { ROCE_NAK_REM_OP_ERR, DROCE_WC_LOC_PROT_ERR,
				  TP_CNT_SENT_REM_OP_NAK },
	[RESP_ERR_INVALIDATE] = { ROCE_NAK_INVALID_REQ, DROCE_WC_REM_INV_REQ_ERR,
				  TP_CNT_SENT_INV_REQ_NAK },
};

struct resp_ctx {
	struct tp_qp *qp;
	struct tp_resp_batch *batch;	/* the packets of this burst it belongs to */
	const struct roce_pkt *pkt;
	const uint8_t *payload;
	uint32_t mask;			/* pkt->op->mask */
	bool uses_rwqe;			/* this packet consumes / fills a receive WQE */
	void *host;			/* validated target address */
	const struct tp_resp_res *dup;	/* the record a duplicate matched */
};

/* The requests that take a responder resource (TP_WR_RD_ATOMIC's peers). */
#define RES_OPS (ROCE_OPM_READ | ROCE_OPM_ATOMIC | ROCE_OPM_ATMWRITE | ROCE_OPM_FLUSH)

/* FLUSH placement types (FETH, IBTA 1.5 annex A19: bit 0 global, bit 1 persistent). */
#define FETH_PLT_GLOBAL DROCE_FLUSH_GLOBAL
#define FETH_PLT_PERSISTENT DROCE_FLUSH_PERSISTENT

/* ---- receive buffers ---------------------------------------------------------------- */

static struct tp_recv_wqe *
current_rwqe(struct tp_qp *qp)
{
	return qp->rq.tail == qp->rq.head ? NULL :
	       &qp->rq.wqe[qp->rq.tail & qp->rq.mask];
}

/* The receive WQE a message starting now fills: the QP's, else its SRQ's. */
static inline bool
have_rwqe(struct tp_qp *qp)
{
	return current_rwqe(qp) != NULL || (qp->srq != NULL && tp_srq_take(qp));
}

/*
 * Copy into the receive WQE's buffers at off (each chunk L_Key-checked,
 * against the SRQ's PD for a WQE from an SRQ).
 */
static bool
scatter_recv(struct tp_qp *qp, const struct tp_recv_wqe *w, uint32_t off,
	     const uint8_t *src, uint32_t len)
{
	return tp_sge_copy_pd(qp, qp->srq != NULL ? qp->srq->pd : qp->pd, w->sge,
			      w->num_sge, off, (void *)(uintptr_t)src, len, true);
}

/* UD: the 40-byte GRH in front of the data (IPv4: header in the last 20). */
#define UD_GRH_LEN 40

static bool
write_grh(struct tp_qp *qp, const struct tp_recv_wqe *w, const struct roce_pkt *pkt,
	  const uint8_t *frame)
{
	uint8_t grh[UD_GRH_LEN] = { 0 };

	if (pkt->ip_version == 4)
		memcpy(grh + 20, frame + pkt->l3_off, ROCE_IPV4_HDR_LEN);
	else
		memcpy(grh, frame + pkt->l3_off, ROCE_IPV6_HDR_LEN);
	return scatter_recv(qp, w, 0, grh, UD_GRH_LEN);
}

/* ---- selective repeat: out-of-order placement (lib/transport README) ----------------- */

/* Something arrived beyond the expected PSN (resp.psn, the window's base). */
static inline bool
sr_holes(const struct tp_qp *qp)
{
	return roce_psn_after(qp->sr.rhi, qp->resp.psn);
}

/* The window's base follows resp.psn (a READ moves it by its responses). */
static void
sr_rwin_follow(struct tp_qp *qp)
{
	struct tp_sr *sr = &qp->sr;

	if (!tp_sr_win_ack_to(&sr->rwin, qp->resp.psn)) {
		tp_sr_win_init(&sr->rwin, qp->resp.psn);
		sr->rhi = qp->resp.psn;
	}
}

static uint32_t
sr_npkts(const struct tp_qp *qp, uint32_t len)
{
	return len == 0 ? 1 : (uint32_t)(((uint64_t)len + qp->mtu - 1) / qp->mtu);
}

/* A multi-packet WRITE whose FIRST arrived: its later packets can be placed. */
static void
sr_msg_add(struct tp_qp *qp, const struct roce_pkt *pkt)
{
	struct tp_sr_msg *m = NULL;

	/* a FIRST sent again replaces its own entry, not an older one */
	for (unsigned int i = 0; i < TP_SR_MSGS && m == NULL; i++)
		if (qp->sr.msgs[i].npkts != 0 && qp->sr.msgs[i].first_psn == pkt->psn)
			m = &qp->sr.msgs[i];
	if (m == NULL)
		m = &qp->sr.msgs[qp->sr.msg_next++ % TP_SR_MSGS];

	m->first_psn = pkt->psn;
	m->npkts = sr_npkts(qp, pkt->reth.len);
	m->va = pkt->reth.va;
	m->rkey = pkt->reth.rkey;
	m->len = pkt->reth.len;
}

/* The known message psn is a later packet of, or NULL. */
static const struct tp_sr_msg *
sr_msg_find(const struct tp_qp *qp, uint32_t psn)
{
	for (unsigned int i = 0; i < TP_SR_MSGS; i++) {
		const struct tp_sr_msg *m = &qp->sr.msgs[i];
		int32_t d = roce_psn_diff(psn, m->first_psn);

		if (m->npkts != 0 && d > 0 && (uint32_t)d < m->npkts)
			return m;
	}
	return NULL;
}

/*
 * Where an out-of-order WRITE packet's bytes go, checked as the in-order
 * path would check them (lengths by its place in the message, the R_Key
 * over the whole RETH range at FIRST/ONLY, and for every packet over its
 * own bytes, so a key revoked meanwhile stops it).  Anything else is not
 * placed (NULL in *ok false): it is sent again and judged in order, where
 * an error gets its NAK.  The last packet of a WRITE with immediate keeps
 * its immediate data for the completion, which (as the receive WQE it
 * takes) waits for the base.
 */
static bool
sr_dest(struct resp_ctx *c, void **dst)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	const struct tp_sr_msg *m;
	uint64_t va = pkt->reth.va;
	uint32_t rkey = pkt->reth.rkey, len = pkt->payload_len, mtu = qp->mtu;

	*dst = NULL;
	if (!(c->mask & ROCE_OPM_WRITE) ||
	    !(qp->attr.qp_access_flags & DROCE_ACCESS_REMOTE_WRITE))
		return false;
	switch (c->mask & (ROCE_OPM_FIRST | ROCE_OPM_LAST)) {
	case ROCE_OPM_ONLY:
		if (len != pkt->reth.len)
			return false;
		break;
	case ROCE_OPM_FIRST:
		if (len != mtu || pkt->reth.len <= mtu ||
		    tp_prot_remote(qp->eng, qp->dev->prot, rkey, qp->pd, qp->pub.qp_num,
				   PROT_OP_WRITE, va, pkt->reth.len, dst) != PROT_OK)
			return false;
		sr_msg_add(qp, pkt);
		return true;
	default:
		m = sr_msg_find(qp, pkt->psn);
		if (m == NULL)
			return false;	/* its FIRST is not known: sent again */
		{
			uint32_t idx = (uint32_t)roce_psn_diff(pkt->psn, m->first_psn);
			bool last = idx == m->npkts - 1;
			uint64_t off = (uint64_t)idx * mtu;

			if (!!(c->mask & ROCE_OPM_LAST) != last ||
			    len != (last ? m->len - off : mtu))
				return false;
			va = m->va + off;
			rkey = m->rkey;
		}
		break;
	}
	if (len == 0)
		return true;			/* no valid R_Key needed (C9-88) */
	return tp_prot_remote(qp->eng, qp->dev->prot, rkey, qp->pd, qp->pub.qp_num,
			      PROT_OP_WRITE, va, len, dst) == PROT_OK;
}

/*
 * A request ahead of the expected PSN, both ends running selective repeat:
 * a WRITE packet of a known message inside the window is placed (once:
 * one already had is a duplicate), anything else dropped; either way the
 * requester hears of the window by a selective ACK instead of the
 * sequence NAK.  SEND, READ and atomics stay in order (IBTA ordering).
 */
static enum resp_state
sr_out_of_seq(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct tp_sr *sr = &qp->sr;
	int32_t d;
	void *dst;

	sr_rwin_follow(qp);
	d = roce_psn_diff(pkt->psn, sr->rwin.base);
	if (tp_sr_win_has(&sr->rwin, pkt->psn)) {
		tp_count(qp->eng, TP_CNT_DUPLICATE_REQUEST);
	} else if (d > 0 && (uint32_t)d < TP_SR_WINDOW && sr_dest(c, &dst)) {
		uint32_t slot = pkt->psn & (TP_SR_WINDOW - 1);

		if (pkt->payload_len > 0)
			tp_place(dst, c->payload, pkt->payload_len);
		(void)tp_sr_win_mark(&sr->rwin, pkt->psn);
		if (c->mask & ROCE_OPM_IMM) {
			uint32_t k = sr->imm_next++ % TP_SR_MSGS;

			sr->imm[k].psn = pkt->psn;
			sr->imm[k].imm = pkt->imm;
			sr->imm[k].se = pkt->se != 0;
		}
		sr->rop[slot] = pkt->opcode;
		sr->rlen[slot] = (uint16_t)pkt->payload_len;
		tp_count(qp->eng, TP_CNT_SR_OOO_PLACED);
	} else {
		tp_count(qp->eng, TP_CNT_SR_OOO_DROPPED);
	}
	/* what arrived beyond the base, kept or not, tells of the holes */
	if (d > 0 && (uint32_t)d < TP_SR_WINDOW) {
		if (!roce_psn_before(pkt->psn, sr->rhi))
			sr->rhi = roce_psn_add(pkt->psn, 1);
		sr->rlast = pkt->psn;
	}
	tp_resp_queue_sack(qp);
	return RESP_DONE;
}

/*
 * The base reaches the last packet of a WRITE with immediate placed out of
 * order: its receive completion, as complete_recv makes it in order (no
 * receive WQE now, or its immediate data forgotten: false, sent again).
 */
static unsigned int
sr_imm_ready(struct tp_qp *qp)
{
	unsigned int k;

	for (k = 0; k < TP_SR_MSGS; k++)
		if (qp->sr.imm[k].psn == qp->resp.psn)
			break;
	return k < TP_SR_MSGS && have_rwqe(qp) ? k : TP_SR_MSGS;
}

static void
sr_complete_imm(struct tp_qp *qp, unsigned int k)
{
	struct droce_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = current_rwqe(qp)->wr_id;
	wc.status = DROCE_WC_SUCCESS;
	wc.qp_num = qp->pub.qp_num;
	wc.opcode = DROCE_WC_RECV_RDMA_WITH_IMM;
	wc.byte_len = qp->resp.offset;
	wc.imm_data = rte_cpu_to_be_32(qp->sr.imm[k].imm);
	wc.wc_flags = DROCE_WC_WITH_IMM;
	qp->sr.imm[k].psn = roce_psn_add(qp->resp.psn, ROCE_PSN_HALF);	/* used */
	tp_cq_push_recv(qp->eng, qp->rcq, &wc, qp->sr.imm[k].se);
	qp->rq.tail++;
}

/*
 * The base reaches a PSN placed out of order: what the in-order path
 * would have done with it but the copy (the message's position, the
 * MSN at its end).  False when that packet does not continue the
 * message in order there: it is forgotten, sent again, judged in order.
 */
static bool
sr_replay(struct tp_qp *qp, uint32_t mask, uint32_t len)
{
	unsigned int k = (mask & ROCE_OPM_RWR) ? sr_imm_ready(qp) : 0;
	const struct tp_sr_msg *m;

	if (k == TP_SR_MSGS)
		return false;
	if (mask & ROCE_OPM_FIRST) {
		if (qp->resp.in_msg)
			return false;
		if (!(mask & ROCE_OPM_LAST)) {
			m = NULL;
			for (unsigned int i = 0; i < TP_SR_MSGS; i++)
				if (qp->sr.msgs[i].npkts != 0 &&
				    qp->sr.msgs[i].first_psn == qp->resp.psn)
					m = &qp->sr.msgs[i];
			if (m == NULL)
				return false;
			qp->resp.in_msg = ROCE_OPM_WRITE;
			qp->resp.write_va = m->va + len;
			qp->resp.write_rkey = m->rkey;
			qp->resp.write_left = m->len - len;
			qp->resp.offset = len;
			tp_count(qp->eng, TP_CNT_RDMA_RECVS);
			return true;
		}
		qp->resp.offset = len;
	} else {
		if (qp->resp.in_msg != ROCE_OPM_WRITE || len > qp->resp.write_left ||
		    ((mask & ROCE_OPM_LAST) && len != qp->resp.write_left))
			return false;
		qp->resp.write_va += len;
		qp->resp.write_left -= len;
		qp->resp.offset += len;
	}
	if (mask & ROCE_OPM_RWR)
		sr_complete_imm(qp, k);
	tp_count(qp->eng, TP_CNT_RDMA_RECVS);
	if (mask & ROCE_OPM_LAST) {
		qp->resp.in_msg = 0;
		qp->resp.offset = 0;
		qp->resp.msn++;
	}
	return true;
}

/*
 * After a request: the base moves over the PSNs placed out of order that
 * now follow in order, each completed as if it had just arrived; then the
 * requester hears where the base is (an ACK, or a SACK while PSNs beyond
 * it are still missing).
 */
static void
sr_pass(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	struct tp_sr *sr = &qp->sr;
	bool moved = false;

	sr_rwin_follow(qp);
	while (roce_psn_before(qp->resp.psn, sr->rhi) && tp_sr_win_has(&sr->rwin, qp->resp.psn)) {
		uint32_t slot = qp->resp.psn & (TP_SR_WINDOW - 1);

		if (!sr_replay(qp, roce_opcode_get(sr->rop[slot])->mask, sr->rlen[slot])) {
			tp_sr_win_init(&sr->rwin, qp->resp.psn);	/* all sent again */
			sr->rhi = qp->resp.psn;
			break;
		}
		qp->resp.psn = roce_psn_add(qp->resp.psn, 1);
		(void)tp_sr_win_ack_to(&sr->rwin, qp->resp.psn);
		moved = true;
	}
	if (!moved)
		return;
	c->batch->write_host = NULL;	/* write_va moved: check again */
	if (sr_holes(qp))
		tp_resp_queue_sack(qp);
	else
		tp_resp_queue_ack(qp, ROCE_AETH_ACK_NO_CREDIT,
				  roce_psn_add(qp->resp.psn, ROCE_PSN_MASK));
}

/* ---- states ---------------------------------------------------------------------------- */

/*
 * UC, a packet of a message lost or dropped (IBTA 9.7.7, rxe's class D1):
 * the rest of the message is dropped up to the next FIRST/ONLY, and the
 * receive WQE it was filling is reused from its start, not completed.
 */
static void
uc_abandon_msg(struct tp_qp *qp)
{
	if (qp->resp.in_msg)
		tp_count(qp->eng, TP_CNT_UC_MSG_DROP);
	qp->resp.in_msg = 0;
	qp->resp.offset = 0;
	qp->resp.drop_msg = true;
}

static inline enum resp_state
st_check_psn(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	int32_t d;

	switch (qp->pub.qp_type) {
	case DROCE_QPT_UD:
		return RESP_CHECK_OP_SEQ;	/* UD has no sequence */
	case DROCE_QPT_UC:
		if (c->pkt->psn != qp->resp.psn)
			uc_abandon_msg(qp);	/* a lost packet */
		qp->resp.psn = roce_psn_add(c->pkt->psn, 1);
		if (qp->resp.drop_msg && !(c->mask & ROCE_OPM_FIRST))
			return RESP_DROP;
		qp->resp.drop_msg = false;
		return RESP_CHECK_OP_SEQ;
	default:
		break;
	}
	d = roce_psn_diff(c->pkt->psn, qp->resp.psn);
	if (d > 0)
		return RESP_OUT_OF_SEQ;
	if (d < 0)
		return RESP_DUPLICATE;
	qp->resp.nak_sent = false;
	return RESP_CHECK_OP_SEQ;
}

/* FIRST/ONLY start a message; MIDDLE/LAST must continue one of the same kind. */
static inline enum resp_state
st_check_op_seq(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	uint32_t kind = c->mask & (ROCE_OPM_SEND | ROCE_OPM_WRITE);

	if (qp->resp.in_msg) {
		if ((c->mask & ROCE_OPM_FIRST) || kind != qp->resp.in_msg)
			return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
	} else if (!(c->mask & ROCE_OPM_FIRST)) {
		return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
	}
	return RESP_CHECK_OP_VALID;
}

/* The QP must allow the operation (qp_access_flags, 10.2.4.x). */
static inline enum resp_state
st_check_op_valid(struct resp_ctx *c)
{
	unsigned int need;

	switch (c->mask & (ROCE_OPM_SEND | ROCE_OPM_WRITE | ROCE_OPM_READ |
			   ROCE_OPM_ATOMIC | ROCE_OPM_FLUSH | ROCE_OPM_ATMWRITE)) {
	case ROCE_OPM_SEND:
		return RESP_CHECK_RESOURCE;
	case ROCE_OPM_WRITE:
		need = DROCE_ACCESS_REMOTE_WRITE;
		break;
	case ROCE_OPM_READ:
		need = DROCE_ACCESS_REMOTE_READ;
		break;
	case ROCE_OPM_ATOMIC:
		need = DROCE_ACCESS_REMOTE_ATOMIC;
		break;
	case ROCE_OPM_ATMWRITE:
		need = DROCE_ACCESS_REMOTE_WRITE;	/* as RDMA WRITE, as rxe */
		break;
	case ROCE_OPM_FLUSH:
		/* a right for each placement type asked for (bits beyond
		 * them are refused in CHECK_LENGTH) */
		need = ((c->pkt->feth.plt & FETH_PLT_GLOBAL) ? DROCE_ACCESS_FLUSH_GLOBAL : 0) |
		       ((c->pkt->feth.plt & FETH_PLT_PERSISTENT) ?
			DROCE_ACCESS_FLUSH_PERSISTENT : 0);
		break;
	default:
		need = ~0u;	/* no operation class: never allowed */
		break;
	}
	if ((c->qp->attr.qp_access_flags & need) != need)
		return c->qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
	return RESP_CHECK_RESOURCE;
}

static inline enum resp_state
st_check_resource(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	c->uses_rwqe = (c->mask & ROCE_OPM_SEND) ||
		       (c->mask & (ROCE_OPM_RWR | ROCE_OPM_LAST)) == (ROCE_OPM_RWR | ROCE_OPM_LAST);
	if (c->uses_rwqe && !have_rwqe(qp)) {
		if (qp->pub.qp_type == DROCE_QPT_RC)
			return RESP_RNR;
		tp_count(qp->eng, TP_CNT_RX_NO_BUF_DROP);
		return RESP_DROP;
	}
	/* one responder resource per READ/atomic/placement, else Invalid Request */
	if ((c->mask & RES_OPS) && tp_resp_res_free_slot(qp) == NULL)
		return RESP_ERR_INV_REQ;
	return RESP_CHECK_LENGTH;
}

static inline enum resp_state
st_check_length(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	uint32_t mtu = qp->mtu;
	bool bad;

	if (c->mask & (ROCE_OPM_SEND | ROCE_OPM_WRITE)) {
		/* FIRST and MIDDLE carry exactly one MTU, LAST 1..MTU, ONLY 0..MTU */
		switch (c->mask & (ROCE_OPM_FIRST | ROCE_OPM_LAST)) {
		case ROCE_OPM_ONLY:
			bad = pkt->payload_len > mtu;
			break;
		case ROCE_OPM_LAST:
			bad = pkt->payload_len - 1 >= mtu;	/* 0 wraps */
			break;
		default:
			bad = pkt->payload_len != mtu;
			break;
		}
		if (bad)
			return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
		/* a WRITE FIRST must not hold it all */
		if ((c->mask & (ROCE_OPM_WRITE | ROCE_OPM_ONLY)) ==
		    (ROCE_OPM_WRITE | ROCE_OPM_FIRST) && pkt->reth.len <= mtu)
			return RESP_ERR_INV_REQ;
		if (c->mask & ROCE_OPM_SEND) {
			const struct tp_recv_wqe *w = current_rwqe(qp);
			uint32_t need = qp->resp.offset + pkt->payload_len +
					(qp->pub.qp_type == DROCE_QPT_UD ? UD_GRH_LEN : 0);

			if (need > w->length)
				return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_LENGTH :
									 RESP_DROP;
		}
		return RESP_CHECK_RKEY;
	}
	if ((c->mask & ROCE_OPM_READ) && pkt->reth.len > TP_MAX_MSG_SZ)
		return RESP_ERR_INV_REQ;
	/* ATOMIC WRITE: its RETH names the 8 bytes it carries (the parser
	 * keeps only 8-byte payloads); FLUSH: a defined FETH (annex A19) */
	if ((c->mask & ROCE_OPM_ATMWRITE) && pkt->reth.len != 8)
		return RESP_ERR_INV_REQ;
	if ((c->mask & ROCE_OPM_FLUSH) &&
	    (pkt->feth.plt == 0 || (pkt->feth.plt & ~(FETH_PLT_GLOBAL | FETH_PLT_PERSISTENT)) ||
	     pkt->feth.sel > DROCE_FLUSH_MR))
		return RESP_ERR_INV_REQ;
	return RESP_CHECK_RKEY;
}

/*
 * FLUSH: the R_Key must grant each placement type asked for over
 * [va, va + len).  The whole-region level is checked the same way (rxe
 * checks only the key there): the fence it orders covers all memory.
 */
static enum prot_status
check_flush_rkey(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	enum prot_status st = PROT_OK;

	if (pkt->feth.plt & FETH_PLT_GLOBAL)
		st = tp_prot_remote(qp->eng, qp->dev->prot, pkt->reth.rkey, qp->pd,
				    qp->pub.qp_num, PROT_OP_FLUSH_GLOBAL, pkt->reth.va,
				    pkt->reth.len, &c->host);
	if (st == PROT_OK && (pkt->feth.plt & FETH_PLT_PERSISTENT))
		st = tp_prot_remote(qp->eng, qp->dev->prot, pkt->reth.rkey, qp->pd,
				    qp->pub.qp_num, PROT_OP_FLUSH_PERSISTENT, pkt->reth.va,
				    pkt->reth.len, &c->host);
	return st;
}

/* The next state after an R_Key check that returned st. */
static inline enum resp_state
rkey_verdict(struct resp_ctx *c, enum prot_status st)
{
	bool rc = c->qp->pub.qp_type == DROCE_QPT_RC;

	switch (st) {
	case PROT_OK:
		if (c->mask & ROCE_OPM_WRITE)
			c->batch->write_host = c->host;
		return RESP_EXECUTE;
	case PROT_ALIGN:
		/* a misaligned atomic or ATOMIC WRITE is an Invalid Request
		 * (class C), as rxe */
		return rc ? RESP_ERR_INV_REQ : RESP_DROP;
	default:
		return rc ? RESP_ERR_ACCESS : RESP_DROP;
	}
}

/*
 * R_Key checks (lib/protection, in the order IBTA gives).  WRITE checks the
 * whole RETH range on its first packet, and the rest of it again at the
 * first packet of every later batch (EXECUTE), so a key revoked
 * mid-message stops it at the next burst.  Zero-length READ/WRITE need no
 * valid R_Key (C9-88).
 */
static inline enum resp_state
st_check_rkey(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	enum prot_remote_op op;
	uint64_t va, len;
	uint32_t rkey;

	if (c->mask & ROCE_OPM_FLUSH)
		return rkey_verdict(c, check_flush_rkey(c));
	if (c->mask & ROCE_OPM_ATMWRITE) {
		va = pkt->reth.va;
		len = 8;
		rkey = pkt->reth.rkey;
		op = PROT_OP_ATOMIC_WRITE;
	} else if (c->mask & ROCE_OPM_RETH) {
		va = pkt->reth.va;
		len = pkt->reth.len;
		rkey = pkt->reth.rkey;
		op = (c->mask & ROCE_OPM_READ) ? PROT_OP_READ : PROT_OP_WRITE;
		if (c->mask & ROCE_OPM_WRITE) {
			qp->resp.write_va = va;
			qp->resp.write_rkey = rkey;
			qp->resp.write_left = pkt->reth.len;
			c->batch->write_host = NULL;
			if (unlikely(tp_sr_agreed(qp)) && !(c->mask & ROCE_OPM_LAST))
				sr_msg_add(qp, pkt);
		}
		if (len == 0)
			return RESP_EXECUTE;
	} else if (c->mask & ROCE_OPM_ATMETH) {
		va = pkt->atmeth.va;
		len = 8;
		rkey = pkt->atmeth.rkey;
		op = PROT_OP_ATOMIC;
	} else {
		return RESP_EXECUTE;
	}
	return rkey_verdict(c, tp_prot_remote(qp->eng, qp->dev->prot, rkey, qp->pd,
					      qp->pub.qp_num, op, va, len, &c->host));
}

static inline enum resp_state
execute_send(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	const struct tp_recv_wqe *w = current_rwqe(qp);
	uint32_t off = qp->resp.offset;

	if (qp->pub.qp_type == DROCE_QPT_UD) {
		if (!write_grh(qp, w, c->pkt, c->payload - c->pkt->payload_off))
			return RESP_DROP;
		off = UD_GRH_LEN;
	}
	if (!scatter_recv(qp, w, off, c->payload, c->pkt->payload_len))
		return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_LOCAL_PROT : RESP_DROP;
	qp->resp.offset += c->pkt->payload_len;
	return RESP_COMPLETE;
}

/*
 * Where the WRITE's next bytes go: the batch's translation (st_check_rkey
 * made it for a packet with a RETH), or a check of the rest of the RETH
 * range at a batch's first MIDDLE/LAST, kept for the batch's later ones.
 */
static inline bool
write_dest(struct resp_ctx *c, void **dst)
{
	struct tp_qp *qp = c->qp;
	void *host;

	if (c->batch->write_host == NULL) {
		if (tp_prot_remote(qp->eng, qp->dev->prot, qp->resp.write_rkey, qp->pd,
				      qp->pub.qp_num, PROT_OP_WRITE, qp->resp.write_va,
				      qp->resp.write_left, &host) != PROT_OK)
			return false;
		c->batch->write_host = host;
	}
	*dst = c->batch->write_host;
	return true;
}

static inline enum resp_state
execute_write(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	uint32_t len = c->pkt->payload_len;
	void *dst;

	if (len > qp->resp.write_left)
		return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
	if ((c->mask & ROCE_OPM_LAST) && len != qp->resp.write_left)
		return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_INV_REQ : RESP_DROP;
	if (len > 0) {
		if (!write_dest(c, &dst))
			return qp->pub.qp_type == DROCE_QPT_RC ? RESP_ERR_ACCESS : RESP_DROP;
		tp_place(dst, c->payload, len);
		c->batch->write_host += len;
	}
	qp->resp.write_va += len;
	qp->resp.write_left -= len;
	qp->resp.offset += len;
	tp_count(qp->eng, TP_CNT_RDMA_RECVS);
	return RESP_COMPLETE;
}

static inline enum resp_state
execute_read(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct tp_resp_item *it = tp_resp_queue_add(qp);
	uint32_t n = tp_resp_read_npkts(qp, pkt->reth.len);
	struct tp_resp_res *r;

	if (it == NULL)
		return RESP_DROP;		/* no room: the requester retries */
	r = tp_resp_res_take(qp, TP_RES_READ, pkt->psn, n, pkt->reth.rkey,
			     pkt->reth.va, pkt->reth.len);
	tp_resp_queue_read(qp, it, r, pkt->psn, pkt->reth.va, pkt->reth.len);
	qp->resp.psn = roce_psn_add(pkt->psn, n);
	tp_count(qp->eng, TP_CNT_RDMA_RECVS);
	return RESP_DONE;
}

/* CMP_SWAP and FETCH_ADD as real CPU atomics on the target (9.4.5). */
static inline enum resp_state
execute_atomic(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct tp_resp_item *it = tp_resp_queue_add(qp);
	uint64_t *target = c->host;
	struct tp_resp_res *r;
	uint64_t orig;

	if (it == NULL)
		return RESP_DROP;		/* not executed: the requester retries */
	if (pkt->opcode == ROCE_OP_COMPARE_SWAP) {
		orig = pkt->atmeth.comp;
		__atomic_compare_exchange_n(target, &orig, pkt->atmeth.swap, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(target, pkt->atmeth.swap, __ATOMIC_SEQ_CST);
	}
	r = tp_resp_res_take(qp, TP_RES_ATOMIC, pkt->psn, 1, pkt->atmeth.rkey, pkt->atmeth.va, 8);
	r->orig = orig;
	tp_resp_queue_atomic_ack(qp, it, r);
	qp->resp.psn = roce_psn_add(pkt->psn, 1);
	tp_count(qp->eng, TP_CNT_RDMA_RECVS);
	return RESP_DONE;
}

/*
 * ATOMIC WRITE: the 8 bytes as one aligned 64-bit store, so no reader
 * sees half of them (annex A19).  FLUSH: everything before it was placed
 * by this engine's own earlier stores (the responder executes in PSN
 * order); a fence makes them globally visible before the answer leaves.
 * droce registers DRAM, where persistence is no more than that.  Both are
 * answered by a zero-length READ response from a responder resource.
 */
static inline enum resp_state
execute_placement(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct tp_resp_item *it;
	struct tp_resp_res *r;
	uint64_t v;

	/* the store needs an aligned host address too (a zero-based
	 * region's VA may be aligned where its memory is not) */
	if ((c->mask & ROCE_OPM_ATMWRITE) && ((uintptr_t)c->host & 7) != 0)
		return RESP_ERR_INV_REQ;
	it = tp_resp_queue_add(qp);
	if (it == NULL)
		return RESP_DROP;		/* not executed: the requester retries */
	if (c->mask & ROCE_OPM_ATMWRITE) {
		memcpy(&v, c->payload, sizeof(v));
		__atomic_store_n((uint64_t *)c->host, v, __ATOMIC_RELEASE);
	} else {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	tp_count(qp->eng, TP_CNT_RDMA_RECVS);
	r = tp_resp_res_take(qp, TP_RES_PLACEMENT, pkt->psn, 1, pkt->reth.rkey, pkt->reth.va, 0);
	tp_resp_queue_read(qp, it, r, pkt->psn, 0, 0);
	qp->resp.psn = roce_psn_add(pkt->psn, 1);
	return RESP_DONE;
}

static inline enum resp_state
st_execute(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	if (c->mask & ROCE_OPM_FIRST)
		qp->resp.in_msg = c->mask & (ROCE_OPM_SEND | ROCE_OPM_WRITE);
	if (c->mask & ROCE_OPM_SEND)
		return execute_send(c);
	if (c->mask & ROCE_OPM_WRITE)
		return execute_write(c);
	if (c->mask & ROCE_OPM_READ)
		return execute_read(c);
	if (c->mask & ROCE_OPM_ATOMIC)
		return execute_atomic(c);
	if (c->mask & (ROCE_OPM_ATMWRITE | ROCE_OPM_FLUSH))
		return execute_placement(c);
	return RESP_DROP;
}

/* End of a SEND or WRITE_WITH_IMM message: the receive completion. */
static inline enum resp_state
complete_recv(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct droce_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = current_rwqe(qp)->wr_id;
	wc.status = DROCE_WC_SUCCESS;
	wc.qp_num = qp->pub.qp_num;
	wc.opcode = (c->mask & ROCE_OPM_WRITE) ? DROCE_WC_RECV_RDMA_WITH_IMM :
						 DROCE_WC_RECV;
	wc.byte_len = qp->resp.offset;
	if (c->mask & ROCE_OPM_IMM) {
		wc.imm_data = rte_cpu_to_be_32(pkt->imm);
		wc.wc_flags |= DROCE_WC_WITH_IMM;
	}
	if (c->mask & ROCE_OPM_IETH) {
		if (prot_remote_invalidate(qp->dev->prot, pkt->ieth_rkey, qp->pd,
					   qp->pub.qp_num) != 0)
			return RESP_ERR_INVALIDATE;
		wc.invalidated_rkey = pkt->ieth_rkey;
		wc.wc_flags |= DROCE_WC_WITH_INV;
	}
	if (qp->pub.qp_type == DROCE_QPT_UD) {
		wc.byte_len += UD_GRH_LEN;
		wc.src_qp = pkt->deth.src_qpn;
		wc.wc_flags |= DROCE_WC_GRH;
		wc.sl = pkt->ip_version == 4 ? DROCE_WC_SL_ROCE_IPV4 : DROCE_WC_SL_ROCE_IPV6;
	}
	tp_cq_push_recv(qp->eng, qp->rcq, &wc, pkt->se != 0);
	qp->rq.tail++;
	return RESP_ACKNOWLEDGE;
}

static inline enum resp_state
st_complete(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;
	enum resp_state next = RESP_ACKNOWLEDGE;

	if (c->mask & ROCE_OPM_LAST) {
		if (c->uses_rwqe)
			next = complete_recv(c);
		if (next != RESP_ACKNOWLEDGE)
			return next;	/* failed: not a completed message (C9-148) */
		qp->resp.in_msg = 0;
		qp->resp.offset = 0;
		qp->resp.msn++;
	}
	return next;
}

static inline enum resp_state
st_acknowledge(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	if (qp->pub.qp_type != DROCE_QPT_RC)
		return RESP_DONE;
	qp->resp.psn = roce_psn_add(c->pkt->psn, 1);
	if (c->pkt->ackreq)
		tp_resp_queue_ack(qp, ROCE_AETH_ACK_NO_CREDIT, c->pkt->psn);
	return RESP_DONE;
}

/* A duplicate READ matching record r: read again, R_Key checked now. */
static enum resp_state
duplicate_read(struct resp_ctx *c, struct tp_resp_res *r)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	struct tp_resp_item *it;
	void *host;

	tp_resp_purge_from(qp, pkt->psn);
	if (pkt->reth.len > 0 &&
	    tp_prot_remote(qp->eng, qp->dev->prot, pkt->reth.rkey, qp->pd, qp->pub.qp_num,
			      PROT_OP_READ, pkt->reth.va, pkt->reth.len, &host) != PROT_OK)
		return RESP_ERR_ACCESS;
	it = tp_resp_queue_add(qp);
	if (it == NULL)
		return RESP_DROP;
	tp_resp_queue_read(qp, it, r, pkt->psn, pkt->reth.va, pkt->reth.len);
	return RESP_DONE;
}

/*
 * A request we already executed (9.7.5.1.x): SEND/WRITE are acknowledged
 * again, never re-executed; a READ is served again if it matches its
 * record, an atomic answered from its record, never executed twice.  A
 * READ or atomic that matches no record (another key or range, a PSN of
 * another operation, a record reused since) is dropped.
 */
static inline enum resp_state
st_duplicate(struct resp_ctx *c)
{
	const struct roce_pkt *pkt = c->pkt;
	struct tp_qp *qp = c->qp;
	uint32_t prev = roce_psn_add(qp->resp.psn, ROCE_PSN_MASK);	/* ePSN - 1 */
	struct tp_resp_res *r;
	struct tp_resp_item *it;

	tp_count(qp->eng, TP_CNT_DUPLICATE_REQUEST);
	if (c->mask & (ROCE_OPM_SEND | ROCE_OPM_WRITE)) {
		if (unlikely(tp_sr_agreed(qp)) && sr_holes(qp))
			tp_resp_queue_sack(qp);
		else
			tp_resp_queue_ack(qp, ROCE_AETH_ACK_NO_CREDIT, prev);
		return RESP_DONE;
	}
	r = tp_resp_res_find(qp, pkt->psn);
	if (r == NULL)
		return RESP_DROP;
	c->dup = r;
	if (c->mask & ROCE_OPM_READ)
		return tp_resp_read_within(qp, r, pkt) ? duplicate_read(c, r) : RESP_DROP;
	if (c->mask & ROCE_OPM_ATOMIC) {
		if (r->kind != TP_RES_ATOMIC)
			return RESP_DROP;
		tp_resp_purge_from(qp, pkt->psn);
		it = tp_resp_queue_add(qp);
		if (it != NULL)
			tp_resp_queue_atomic_ack(qp, it, r);
		return RESP_DONE;
	}
	/* ATOMIC WRITE and FLUSH: answered again, not executed again (a
	 * store repeated later could undo a newer one) */
	if (r->kind != TP_RES_PLACEMENT)
		return RESP_DROP;
	tp_resp_purge_from(qp, pkt->psn);
	it = tp_resp_queue_add(qp);
	if (it != NULL)
		tp_resp_queue_read(qp, it, r, pkt->psn, 0, 0);
	return RESP_DONE;
}

/*
 * A gap: one PSN-sequence NAK naming the expected PSN, then silence for the
 * rest of that wave of packets.  A packet below the last out-of-sequence
 * one means the requester started a new wave (it went back), whose first
 * packet was lost too, or our NAK was: NAK again rather than leave the
 * requester to its retransmit timer.
 */
static inline enum resp_state
st_out_of_seq(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	tp_count(qp->eng, TP_CNT_OUT_OF_SEQ_REQUEST);
	if (unlikely(tp_sr_agreed(qp)))
		return sr_out_of_seq(c);
	if (qp->resp.nak_sent && roce_psn_before(c->pkt->psn, qp->resp.oos_psn))
		qp->resp.nak_sent = false;
	qp->resp.oos_psn = c->pkt->psn;
	if (!qp->resp.nak_sent) {
		qp->resp.nak_sent = true;
		tp_resp_queue_nak(qp, ROCE_NAK_PSN_SEQ_ERR, qp->resp.psn, qp->resp.msn);
		tp_count(qp->eng, TP_CNT_SENT_SEQ_NAK);
	}
	return RESP_DROP;
}

static inline enum resp_state
st_rnr(struct resp_ctx *c)
{
	struct tp_qp *qp = c->qp;

	tp_count(qp->eng, TP_CNT_SEND_RNR_ERR);
	tp_resp_queue_ack(qp, ROCE_AETH_SYNDROME(ROCE_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			  c->pkt->psn);
	return RESP_DROP;
}

/* The packet is discarded (RC: answered already, if at all). */
static inline enum resp_state
st_drop(struct resp_ctx *c)
{
	if (c->qp->pub.qp_type == DROCE_QPT_UC)
		uc_abandon_msg(c->qp);
	return RESP_DONE;
}

/*
 * NAK, complete the receive WQE in use with the error, go to ERR.  The
 * NAK claims no message it fails (C9-148): a new one was not counted yet,
 * a duplicate READ takes back the count of its record.
 */
static enum resp_state
st_error(struct resp_ctx *c, enum resp_state s)
{
	const struct resp_error *e = &resp_errors[s];
	struct tp_qp *qp = c->qp;

	tp_count(qp->eng, e->counter);
	tp_resp_queue_nak(qp, e->nak, c->pkt->psn, c->dup != NULL ? c->dup->msn - 1 : qp->resp.msn);
	if ((c->uses_rwqe || qp->resp.in_msg == ROCE_OPM_SEND) && current_rwqe(qp) != NULL) {
		struct droce_wc wc;

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = current_rwqe(qp)->wr_id;
		wc.status = e->recv_status;
		wc.opcode = DROCE_WC_RECV;
		wc.qp_num = qp->pub.qp_num;
		tp_cq_push(qp->eng, qp->rcq, &wc);
		qp->rq.tail++;
	} else {
		tp_event_resp_error(qp, e->nak);	/* no CQE reports it */
	}
	/* what is queued (the NAK last) leaves before the QP stops answering */
	while (qp->resp.q_tail != qp->resp.q_head && tp_resp_run(qp) > 0)
		;
	tp_net_flush(qp->eng);
	if (qp->pub.state != DROCE_QPS_ERR)
		tp_qp_to_error(qp);
	return RESP_DONE;
}

/*
 * One step: the state's function, chosen by a switch the compiler sees
 * through (every state is static inline and returns a constant for the
 * common case), so that a packet passing every check runs as one straight
 * line of code.  The error states share st_error.
 */
static inline enum resp_state
resp_step(struct resp_ctx *c, enum resp_state s)
{
	switch (s) {
	case RESP_CHECK_PSN:
		return st_check_psn(c);
	case RESP_CHECK_OP_SEQ:
		return st_check_op_seq(c);
	case RESP_CHECK_OP_VALID:
		return st_check_op_valid(c);
	case RESP_CHECK_RESOURCE:
		return st_check_resource(c);
	case RESP_CHECK_LENGTH:
		return st_check_length(c);
	case RESP_CHECK_RKEY:
		return st_check_rkey(c);
	case RESP_EXECUTE:
		return st_execute(c);
	case RESP_COMPLETE:
		return st_complete(c);
	case RESP_ACKNOWLEDGE:
		return st_acknowledge(c);
	case RESP_DUPLICATE:
		return st_duplicate(c);
	case RESP_OUT_OF_SEQ:
		return st_out_of_seq(c);
	case RESP_RNR:
		return st_rnr(c);
	case RESP_DROP:
		return st_drop(c);
	case RESP_ERR_INV_REQ:
	case RESP_ERR_LENGTH:
	case RESP_ERR_ACCESS:
	case RESP_ERR_LOCAL_PROT:
	case RESP_ERR_INVALIDATE:
		return st_error(c, s);
	case RESP_DONE:
		break;
	}
	return RESP_DONE;
}

void
tp_resp_rx(struct tp_resp_batch *batch, const struct roce_pkt *pkt, const uint8_t *frame)
{
	struct tp_qp *qp = batch->qp;
	struct resp_ctx c = {
		.qp = qp, .batch = batch, .pkt = pkt, .payload = frame + pkt->payload_off,
		.mask = pkt->op->mask,
	};
	/* read once: the states' stores do not make the compiler load it again */
	const bool trace = qp->dev->trace;
	enum resp_state s = RESP_CHECK_PSN;

	if (qp->pub.qp_type == DROCE_QPT_UD && pkt->deth.qkey != qp->attr.qkey) {
		tp_count(qp->eng, TP_CNT_UD_QKEY_DROP);	/* C9-... Q_Key mismatch */
		return;
	}
	/*
	 * Every state returns a later one (the enum is in that order), so
	 * the set of states visited is the path: traced once per packet.
	 * On the common path it is a constant the compiler folds.
	 */
	uint32_t path = 0;

	while (s != RESP_DONE) {
		path |= 1u << s;
		s = resp_step(&c, s);
	}
	if (unlikely(tp_sr_agreed(qp)) && sr_holes(qp) && qp->pub.state != DROCE_QPS_ERR)
		sr_pass(&c);
	if (unlikely(trace))
		tp_trace_path(qp, "resp", pkt->psn, path, resp_state_names,
			      RTE_DIM(resp_state_names));
}
