/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder output: the per-QP queue its answers (ACKs, NAKs, READ
 * response streams, atomic ACKs) leave through in PSN order, so an ACK
 * never overtakes the READ responses for earlier PSNs; consecutive ACKs
 * merge there (ACK coalescing: an ACK covers every earlier PSN, 9.7.5.1).
 * Also the responder resources (max_dest_rd_atomic): a ring of records
 * (struct tp_resp_res) reused in order, which answers duplicate READs and
 * atomics.  The states that fill the queue are in tp_resp.c.
 */
#include <string.h>

#include <rte_byteorder.h>

#include "tp_resp.h"

/* ---- the output queue ----------------------------------------------------------- */

struct tp_resp_item *
tp_resp_queue_add(struct tp_qp *qp)
{
	struct tp_resp_item *it;

	if (qp->resp.q_head - qp->resp.q_tail >= TP_RESP_QUEUE)
		tp_resp_run(qp);		/* make room: send what is queued */
	if (qp->resp.q_head - qp->resp.q_tail >= TP_RESP_QUEUE)
		return NULL;			/* still full: the peer will retry */
	it = &qp->resp.q[qp->resp.q_head++ % TP_RESP_QUEUE];
	memset(it, 0, sizeof(*it));
	return it;
}

/* ---- responder resources -------------------------------------------------------------- */

static uint32_t
res_slots(const struct tp_qp *qp)
{
	return qp->attr.max_dest_rd_atomic;
}

static uint8_t
res_index(const struct tp_qp *qp, const struct tp_resp_res *r)
{
	return (uint8_t)(r - qp->resp.res);
}

/* The first PSN an output item would send next, and its last one. */
static uint32_t
item_last_psn(const struct tp_resp_item *it)
{
	return it->kind == TP_RESP_READ || it->kind == TP_RESP_SKIPPED ? it->last_psn :
									 it->psn;
}

/*
 * The slot a new READ/atomic takes: the oldest record, reused in order.
 * A requester has at most max_dest_rd_atomic READs/atomics outstanding
 * (its max_rd_atomic), each until its whole response arrived.  So one
 * that finds the oldest record's first response not yet sent exceeds the
 * limit: NULL then (and with max_dest_rd_atomic 0).  A record answered
 * once and being answered again (a duplicate request, sent after a timeout
 * while the first response was still on its way) is free: the requester
 * had that response before it could send the new request.
 */
struct tp_resp_res *
tp_resp_res_free_slot(struct tp_qp *qp)
{
	struct tp_resp_res *r;

	if (res_slots(qp) == 0)
		return NULL;
	r = &qp->resp.res[qp->resp.res_next % res_slots(qp)];
	return r->pending && !r->answered ? NULL : r;
}

/* r's answers still queued (a duplicate's) are skipped, not sent. */
static void
skip_answers(struct tp_qp *qp, struct tp_resp_res *r)
{
	uint8_t idx = res_index(qp, r);

	for (uint32_t i = qp->resp.q_tail; i != qp->resp.q_head; i++) {
		struct tp_resp_item *it = &qp->resp.q[i % TP_RESP_QUEUE];

		if ((it->kind == TP_RESP_READ || it->kind == TP_RESP_ATOMIC) && it->res == idx) {
			it->last_psn = item_last_psn(it);
			it->kind = TP_RESP_SKIPPED;
		}
	}
	r->pending = false;
}

/* Take the free slot for the request at psn, the next message (MSN). */
struct tp_resp_res *
tp_resp_res_take(struct tp_qp *qp, enum tp_resp_res_kind kind, uint32_t psn,
		 uint32_t npkts, uint32_t rkey, uint64_t va, uint32_t len)
{
	struct tp_resp_res *r = &qp->resp.res[qp->resp.res_next++ % res_slots(qp)];

	if (r->pending)
		skip_answers(qp, r);
	qp->resp.msn++;
	r->answered = false;
	r->kind = kind;
	r->first_psn = psn;
	r->last_psn = roce_psn_add(psn, npkts - 1);
	r->msn = qp->resp.msn;
	r->rkey = rkey;
	r->va = va;
	r->len = len;
	r->orig = 0;
	return r;
}

/* The record whose PSN range holds psn, or NULL. */
struct tp_resp_res *
tp_resp_res_find(struct tp_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < res_slots(qp); i++) {
		struct tp_resp_res *r = &qp->resp.res[i];

		if (r->kind != TP_RES_NONE && !roce_psn_before(psn, r->first_psn) &&
		    !roce_psn_after(psn, r->last_psn))
			return r;
	}
	return NULL;
}

uint32_t
tp_resp_read_npkts(const struct tp_qp *qp, uint32_t len)
{
	return len == 0 ? 1 : (len + qp->mtu - 1) / qp->mtu;
}

/*
 * it becomes the READ response stream answering record r from psn on: the
 * bytes [va, va + len), under r's R_Key, with r's MSN.
 */
void
tp_resp_queue_read(struct tp_qp *qp, struct tp_resp_item *it, struct tp_resp_res *r,
		   uint32_t psn, uint64_t va, uint32_t len)
{
	it->kind = TP_RESP_READ;
	it->first_psn = psn;
	it->psn = psn;
	it->last_psn = roce_psn_add(psn, tp_resp_read_npkts(qp, len) - 1);
	it->va = va;
	it->len = len;
	it->rkey = r->rkey;
	it->msn = r->msn;
	it->res = res_index(qp, r);
	r->pending = true;
}

void
tp_resp_queue_atomic_ack(struct tp_qp *qp, struct tp_resp_item *it, struct tp_resp_res *r)
{
	it->kind = TP_RESP_ATOMIC;
	it->psn = r->first_psn;
	it->orig = r->orig;
	it->msn = r->msn;
	it->res = res_index(qp, r);
	r->pending = true;
}

/*
 * A duplicate READ at psn means the requester has everything before psn
 * and goes back to it, sending every later request again.  Answers queued
 * for psn and later are dropped, including the rest of the stream psn
 * falls in (the new request restarts it as a fresh response: FIRST at
 * psn, which is what rxe's completer expects after its retry).  Duplicates
 * thus reuse the original's responder resource (IBTA 9.7.5.1.x) instead of
 * piling up streams that the requester would discard; the records stay.
 */
void
tp_resp_purge_from(struct tp_qp *qp, uint32_t psn)
{
	while (qp->resp.q_head != qp->resp.q_tail) {
		struct tp_resp_item *it = &qp->resp.q[(qp->resp.q_head - 1) % TP_RESP_QUEUE];

		if (roce_psn_before(item_last_psn(it), psn))
			return;
		if (it->kind == TP_RESP_READ || it->kind == TP_RESP_ATOMIC)
			qp->resp.res[it->res].pending = false;
		qp->resp.q_head--;
	}
}

/*
 * A duplicate READ is served again only within what its record asked for
 * (9.7.5.1.x): the same R_Key, bytes inside the original range, response
 * PSNs inside the original ones.
 */
bool
tp_resp_read_within(const struct tp_qp *qp, const struct tp_resp_res *r,
		    const struct roce_pkt *pkt)
{
	uint32_t last = roce_psn_add(pkt->psn, tp_resp_read_npkts(qp, pkt->reth.len) - 1);

	return r->kind == TP_RES_READ && pkt->reth.rkey == r->rkey &&
	       pkt->reth.va >= r->va && pkt->reth.len <= r->len &&
	       pkt->reth.va - r->va <= r->len - pkt->reth.len &&
	       !roce_psn_after(last, r->last_psn);
}

/* ---- sending what the queue holds ----------------------------------------------------- */

static bool
send_ack_item(struct tp_qp *qp, const struct tp_resp_item *it)
{
	struct rte_mbuf *m;
	struct roce_pkt p;
	uint8_t *payload;

	tp_net_fill_pkt(qp, &qp->av, &p, it->kind == TP_RESP_ATOMIC ?
			ROCE_OP_ATOMIC_ACKNOWLEDGE : ROCE_OP_ACKNOWLEDGE, it->psn);
	p.aeth.syndrome = it->kind == TP_RESP_ATOMIC ? ROCE_AETH_ACK_NO_CREDIT :
						       it->syndrome;
	p.aeth.msn = it->msn & ROCE_PSN_MASK;
	p.atmack_orig = it->orig;
	m = tp_net_alloc(qp, &qp->av, &p, NULL, &payload);
	if (m == NULL)
		return false;
	tp_net_finish(qp, m, &p);
	tp_count(qp->eng, TP_CNT_SENT_ACKS);
	return true;
}

/*
 * Selective repeat's SACK (tp_private.h, TP_SR_SACK_OPCODE): base - 1
 * acknowledged with the MSN of now, the highest PSN seen beyond base, the
 * one that arrived last and the bitmap of what was kept.  With nothing beyond the base any more (the
 * holes were filled meanwhile) a plain ACK says the same.
 */
static bool
send_sack(struct tp_qp *qp)
{
	struct tp_sr *sr = &qp->sr;
	uint32_t base = qp->resp.psn, w[4];
	uint64_t sack;
	struct rte_mbuf *m;
	struct roce_pkt p;
	uint8_t *payload;

	bool ahead;

	if (!tp_sr_win_ack_to(&sr->rwin, base)) {
		tp_sr_win_init(&sr->rwin, base);
		sr->rhi = base;
	}
	ahead = roce_psn_after(sr->rhi, base);
	sack = ahead ? tp_sr_win_sack(&sr->rwin) : 0;
	tp_net_fill_pkt(qp, &qp->av, &p, ahead ? ROCE_OP_RDMA_READ_RESPONSE_ONLY :
			ROCE_OP_ACKNOWLEDGE, roce_psn_add(base, ROCE_PSN_MASK));
	p.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
	p.aeth.msn = qp->resp.msn & ROCE_PSN_MASK;
	p.payload_len = ahead ? TP_SR_SACK_LEN : 0;
	m = tp_net_alloc(qp, &qp->av, &p, NULL, &payload);
	if (m == NULL)
		return false;
	if (ahead) {
		w[0] = rte_cpu_to_be_32(roce_psn_add(sr->rhi, ROCE_PSN_MASK));
		w[1] = rte_cpu_to_be_32(sr->rlast);
		w[2] = rte_cpu_to_be_32((uint32_t)(sack >> 32));
		w[3] = rte_cpu_to_be_32((uint32_t)sack);
		memcpy(payload, w, sizeof(w));
		tp_sr_sack_opcode(qp, m, &p);
		tp_count(qp->eng, TP_CNT_SR_SACK_SENT);
	}
	tp_net_finish(qp, m, &p);
	tp_count(qp->eng, TP_CNT_SENT_ACKS);
	return true;
}

/*
 * One READ response packet.  The R_Key is checked again for the bytes of
 * this packet, so a region deregistered mid-stream is never read.
 */
static int
send_read_packet(struct tp_qp *qp, struct tp_resp_item *it)
{
	uint32_t idx = (uint32_t)roce_psn_diff(it->psn, it->first_psn);
	uint32_t n = (uint32_t)roce_psn_diff(it->last_psn, it->first_psn) + 1;
	uint32_t off = idx * qp->mtu;
	uint32_t plen = RTE_MIN(qp->mtu, it->len - off);
	uint8_t opcode;
	struct rte_mbuf *m;
	struct roce_pkt p;
	uint8_t *payload;
	void *src = NULL;

	if (n == 1)
		opcode = ROCE_OP_RDMA_READ_RESPONSE_ONLY;
	else if (idx == 0)
		opcode = ROCE_OP_RDMA_READ_RESPONSE_FIRST;
	else if (idx == n - 1)
		opcode = ROCE_OP_RDMA_READ_RESPONSE_LAST;
	else
		opcode = ROCE_OP_RDMA_READ_RESPONSE_MIDDLE;
	if (plen > 0 && tp_prot_remote(qp->eng, qp->dev->prot, it->rkey, qp->pd,
					  qp->pub.qp_num, PROT_OP_READ, it->va + off,
					  plen, &src) != PROT_OK)
		return -1;
	tp_net_fill_pkt(qp, &qp->av, &p, opcode, it->psn);
	p.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
	p.aeth.msn = it->msn & ROCE_PSN_MASK;
	p.payload_len = plen;
	if (tp_net_zc(qp, plen)) {
		/* sent from the region itself, held until the link frees it */
		m = tp_net_alloc_zc(qp, &qp->av, &p, NULL, src, it->rkey);
		if (m == NULL)
			return 0;
	} else {
		m = tp_net_alloc(qp, &qp->av, &p, NULL, &payload);
		if (m == NULL)
			return 0;
		if (plen > 0)
			memcpy(payload, src, plen);
	}
	tp_net_finish(qp, m, &p);
	it->psn = roce_psn_add(it->psn, 1);
	return 1;
}

static bool
is_error_nak(const struct tp_resp_item *it)
{
	return it->kind == TP_RESP_ACK &&
	       roce_aeth_type(it->syndrome) == ROCE_AETH_NAK &&
	       roce_aeth_value(it->syndrome) != ROCE_NAK_PSN_SEQ_ERR;
}

/* it, the answer of its record, has completely left. */
static void
answered(struct tp_qp *qp, const struct tp_resp_item *it)
{
	qp->resp.res[it->res].pending = false;
	qp->resp.res[it->res].answered = true;
}

/* Send up to a burst of queued answers, in order.  Returns packets sent. */
unsigned int
tp_resp_run(struct tp_qp *qp)
{
	unsigned int sent = 0;

	while (sent < TP_REQ_BURST && qp->resp.q_tail != qp->resp.q_head) {
		struct tp_resp_item *it = &qp->resp.q[qp->resp.q_tail % TP_RESP_QUEUE];

		if (it->kind == TP_RESP_SKIPPED) {
			qp->resp.q_tail++;
			continue;
		}
		if (it->kind == TP_RESP_READ) {
			int rc = send_read_packet(qp, it);

			if (rc == 0)
				break;
			if (rc < 0) {
				/* the key died mid-stream: remote access error, the
				 * READ not counted as completed (C9-148) */
				tp_count(qp->eng, TP_CNT_SENT_REM_ACCESS_NAK);
				qp->resp.res[it->res].pending = false;
				tp_event_qp(qp, DROCE_EVENT_QP_ACCESS_ERR);
				it->kind = TP_RESP_ACK;
				it->syndrome = ROCE_AETH_SYNDROME(ROCE_AETH_NAK,
								  ROCE_NAK_REM_ACCESS_ERR);
				it->msn--;
				continue;
			}
			sent++;
			if (it->psn != roce_psn_add(it->last_psn, 1))
				continue;
			answered(qp, it);
		} else if (it->kind == TP_RESP_SACK) {
			if (!send_sack(qp))
				break;
			sent++;
		} else {
			if (!send_ack_item(qp, it))
				break;
			sent++;
			if (it->kind == TP_RESP_ATOMIC)
				answered(qp, it);
			if (is_error_nak(it)) {
				/* after an error NAK the responder stops (ERR state) */
				qp->resp.q_tail++;
				if (qp->pub.state != DROCE_QPS_ERR)
					tp_qp_to_error(qp);
				return sent;
			}
		}
		qp->resp.q_tail++;
	}
	return sent;
}
