/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat between droce peers (lib/transport README): the
 * negotiation (droce_qp_set_sr on both ends, the offer's mark on the
 * wire), the windows' start, and the selective ACK's receive side.  The
 * responder's out-of-order placement is in tp_resp.c, the SACK's
 * transmission in tp_resp_out.c, the requester's resends in tp_req.c.
 *
 * Nothing here runs unless the application set it on the QP: a QP
 * without it never marks a packet, never sends a SACK, and drops a SACK
 * as any manufacturer-specific opcode (vendor_opcode_drop).  A QP with it
 * marks its RC packets (TP_SR_MARK) and runs selective repeat only after
 * one of the peer's packets carried the mark too: a peer that did not set
 * it (droce) or does not know it (a standard RoCEv2 stack, which sends
 * reserved bits as 0) keeps both directions plain go-back-N.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "tp_private.h"

/* droce_qp_set_sr: RC only, before RTR (the windows start there). */
int
tp_qp_set_sr(struct tp_qp *qp, bool on)
{
	if (qp->pub.qp_type != DROCE_QPT_RC)
		return -EINVAL;
	if (qp->pub.state != DROCE_QPS_RESET && qp->pub.state != DROCE_QPS_INIT)
		return -EBUSY;
	qp->sr.on = on;
	qp->sr.peer = false;
	return 0;
}

/* The responder's window starts at the first PSN expected (RQ PSN). */
void
tp_sr_start_resp(struct tp_qp *qp)
{
	tp_sr_win_init(&qp->sr.rwin, qp->resp.psn);
	qp->sr.rhi = qp->resp.psn;
	qp->sr.rlast = qp->resp.psn;
	memset(qp->sr.msgs, 0, sizeof(qp->sr.msgs));
	qp->sr.msg_next = 0;
	qp->sr.peer = false;
}

/*
 * The requester's window starts at the SQ PSN; the cap on what is in
 * flight is sr_bdp_bytes in packets, never more than the responder's
 * window (every packet in flight has a slot there), at least one.
 */
void
tp_sr_start_req(struct tp_qp *qp)
{
	uint32_t bdp = qp->dev->cfg.cc.params.sr_bdp_bytes;
	uint32_t mtu = qp->mtu != 0 ? qp->mtu : 256;
	uint32_t cap = bdp == 0 ? TP_SR_WINDOW : bdp / mtu;

	tp_sr_win_init(&qp->sr.swin, qp->comp.psn);
	qp->sr.sack_hi = qp->comp.psn;
	qp->sr.tx_seq = 0;
	qp->sr.rack = 0;
	memset(qp->sr.xseq, 0, sizeof(qp->sr.xseq));
	qp->sr.cap_pkts = RTE_MAX(RTE_MIN(cap, TP_SR_WINDOW), 1u);
}

/* The frame's BTH: p's (built whole) or the QP's template's. */
static uint8_t *
frame_bth(const struct tp_qp *qp, struct rte_mbuf *m, const struct roce_pkt *p)
{
	return rte_pktmbuf_mtod(m, uint8_t *) +
	       (p->bth_off != 0 ? p->bth_off : qp->tx_tmpl.bth_off);
}

/* Before the ICRC is computed: the offer on an RC packet of a QP that set it. */
void
tp_sr_mark_tx(const struct tp_qp *qp, struct rte_mbuf *m, const struct roce_pkt *p)
{
	uint8_t *bth = frame_bth(qp, m, p);

	if (bth[0] < 0x20)			/* RC opcodes (and the SACK below) */
		bth[8] |= TP_SR_MARK;
}

/* The SACK: written as a READ RESPONSE ONLY of 12 bytes, then renamed. */
void
tp_sr_sack_opcode(const struct tp_qp *qp, struct rte_mbuf *m, const struct roce_pkt *p)
{
	uint8_t *bth = frame_bth(qp, m, p);

	bth[0] = TP_SR_SACK_OPCODE;
	bth[8] |= TP_SR_MARK;
}

/* A packet the QP accepted from its peer: does the peer offer it too? */
void
tp_sr_rx_mark(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame)
{
	if (frame[pkt->bth_off + 8] & TP_SR_MARK)
		qp->sr.peer = true;
}

/*
 * A frame with the SACK's opcode, its ICRC checked, for qp (the frame's
 * destination QP, addressed to us, P_Key checked).  Only an RC QP that set
 * selective repeat takes it, and only at its exact length (BTH, AETH,
 * base, bitmap, ICRC): true then; false leaves it to be dropped as any
 * manufacturer-specific opcode.
 */
bool
tp_sr_rx_sack(struct tp_qp *qp, const struct roce_pkt *pkt, const uint8_t *frame)
{
	const uint8_t *bth = frame + pkt->bth_off;
	const uint8_t *pl = bth + ROCE_BTH_LEN + ROCE_AETH_LEN;
	uint32_t top, last, hi, lo;

	if (!qp->sr.on || qp->pub.qp_type != DROCE_QPT_RC ||
	    pkt->pkt_len != (uint32_t)pkt->bth_off + ROCE_BTH_LEN + ROCE_AETH_LEN +
			    TP_SR_SACK_LEN + ROCE_ICRC_LEN)
		return false;
	qp->sr.peer = true;
	if (!tp_qp_can_send(qp))
		return true;
	memcpy(&top, pl, 4);
	memcpy(&last, pl + 4, 4);
	memcpy(&hi, pl + 8, 4);
	memcpy(&lo, pl + 12, 4);
	tp_count(qp->eng, TP_CNT_SR_SACK_RCVD);
	tp_req_sr_sack(qp, pkt, frame, rte_be_to_cpu_32(top) & ROCE_PSN_MASK,
		       rte_be_to_cpu_32(last) & ROCE_PSN_MASK,
		       (uint64_t)rte_be_to_cpu_32(hi) << 32 | rte_be_to_cpu_32(lo));
	return true;
}
