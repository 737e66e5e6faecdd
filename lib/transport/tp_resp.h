/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's two files: tp_resp.c runs the states on request packets,
 * tp_resp_out.c holds what they queue (the output queue, in PSN order) and
 * the responder resources that answer duplicate READs and atomics.
 */
#ifndef TP_RESP_H
#define TP_RESP_H

#include "tp_private.h"

/* A fresh, zeroed item at the queue's head; NULL when it stays full. */
struct tp_resp_item *tp_resp_queue_add(struct tp_qp *qp);

/*
 * Queue an ACK/NAK.  A plain ACK right behind another one not sent yet
 * replaces it (an ACK covers every earlier PSN, IBTA 9.7.5.1): a batch of
 * requests asking for ACKs is answered by one.  Inline: once per request.
 */
static inline void
tp_resp_queue_aeth(struct tp_qp *qp, uint8_t syndrome, uint32_t psn, uint32_t msn)
{
	struct tp_resp_item *it = qp->resp.q_head == qp->resp.q_tail ? NULL :
				  &qp->resp.q[(qp->resp.q_head - 1) % TP_RESP_QUEUE];

	if (it == NULL || it->kind != TP_RESP_ACK ||
	    roce_aeth_type(it->syndrome) != ROCE_AETH_ACK ||
	    roce_aeth_type(syndrome) != ROCE_AETH_ACK)
		it = tp_resp_queue_add(qp);
	if (it == NULL)
		return;
	it->kind = TP_RESP_ACK;
	it->syndrome = syndrome;
	it->psn = psn;
	it->msn = msn;
}

/* An ACK (or RNR NAK) carries the MSN of the last completed message (C9-148). */
static inline void
tp_resp_queue_ack(struct tp_qp *qp, uint8_t syndrome, uint32_t psn)
{
	tp_resp_queue_aeth(qp, syndrome, psn, qp->resp.msn);
}

static inline void
tp_resp_queue_nak(struct tp_qp *qp, uint8_t code, uint32_t psn, uint32_t msn)
{
	tp_resp_queue_aeth(qp, ROCE_AETH_SYNDROME(ROCE_AETH_NAK, code), psn, msn);
}

/*
 * Selective repeat: a SACK, built when it leaves (the window as it is
 * then), so one queued right behind another not sent yet is enough.
 */
static inline void
tp_resp_queue_sack(struct tp_qp *qp)
{
	struct tp_resp_item *it = qp->resp.q_head == qp->resp.q_tail ? NULL :
				  &qp->resp.q[(qp->resp.q_head - 1) % TP_RESP_QUEUE];

	if (it != NULL && it->kind == TP_RESP_SACK)
		return;
	it = tp_resp_queue_add(qp);
	if (it == NULL)
		return;
	it->kind = TP_RESP_SACK;
	it->psn = roce_psn_add(qp->resp.psn, ROCE_PSN_MASK);	/* ordered as an ACK */
}

/* it becomes the READ response stream answering r: [va, va + len) from psn. */
void tp_resp_queue_read(struct tp_qp *qp, struct tp_resp_item *it, struct tp_resp_res *r,
			uint32_t psn, uint64_t va, uint32_t len);
/* it becomes the atomic ACK answering r. */
void tp_resp_queue_atomic_ack(struct tp_qp *qp, struct tp_resp_item *it,
			      struct tp_resp_res *r);
/* Drop the answers queued for psn and later (a duplicate READ or atomic). */
void tp_resp_purge_from(struct tp_qp *qp, uint32_t psn);

/* The slot a new READ/atomic would take, or NULL when none is free. */
struct tp_resp_res *tp_resp_res_free_slot(struct tp_qp *qp);
/* Take that slot for the request at psn (npkts response packets). */
struct tp_resp_res *tp_resp_res_take(struct tp_qp *qp, enum tp_resp_res_kind kind,
				     uint32_t psn, uint32_t npkts, uint32_t rkey,
				     uint64_t va, uint32_t len);
/* The record whose PSN range holds psn, or NULL. */
struct tp_resp_res *tp_resp_res_find(struct tp_qp *qp, uint32_t psn);
/* True when the duplicate READ pkt asks only for what record r allowed. */
bool tp_resp_read_within(const struct tp_qp *qp, const struct tp_resp_res *r,
			 const struct roce_pkt *pkt);
/* READ response packets for len bytes (one for a zero-length READ). */
uint32_t tp_resp_read_npkts(const struct tp_qp *qp, uint32_t len);

#endif /* TP_RESP_H */
