/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive: every frame is parsed (lib/wire checks every length against the
 * buffer), its ICRC verified, its destination checked, and handed to the
 * responder (requests) or the completer (responses) of its QP.  Anything
 * else is counted and dropped here; nothing malformed reaches a role.
 */
#include <string.h>

#include "tp_private.h"

static bool
is_local_gid(const struct tp_dev *dev, const uint8_t gid[16])
{
	for (uint32_t i = 0; i < dev->ngids; i++)
		if (memcmp(dev->gids[i], gid, 16) == 0)
			return true;
	return false;
}

/* The QP type an opcode's transport field belongs to. */
static bool
transport_matches(const struct tp_qp *qp, uint8_t opcode)
{
	switch (roce_opcode_transport(opcode)) {
	case ROCE_TRANSPORT_RC:
		return qp->pub.qp_type == DROCE_QPT_RC;
	case ROCE_TRANSPORT_UC:
		return qp->pub.qp_type == DROCE_QPT_UC;
	case ROCE_TRANSPORT_UD:
		return qp->pub.qp_type == DROCE_QPT_UD;
	default:
		return false;
	}
}

/*
 * The ICRC in one CRC pass (masking in place, restored before it returns)
 * when this mbuf is ours alone; a shared one (refcount > 1: a duplicated
 * frame, or one a capture still holds) is only read.
 */
static bool
icrc_ok(struct rte_mbuf *m, const struct roce_pkt *pkt)
{
	if (likely(RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1))
		return roce_icrc_verify_writable(rte_pktmbuf_mtod(m, uint8_t *), pkt);
	return roce_icrc_verify(rte_pktmbuf_mtod(m, const uint8_t *), pkt);
}

static void
recv_one(struct tp_dev *dev, struct rte_mbuf *m)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	struct roce_pkt pkt;
	struct tp_qp *qp;

	if (m->nb_segs != 1 || roce_parse_eth(frame, m->data_len, &pkt) != ROCE_PARSE_OK) {
		tp_count(dev, TP_CNT_MALFORMED);
		return;
	}
	if (!icrc_ok(m, &pkt)) {
		tp_count(dev, TP_CNT_ICRC_ERR);
		return;
	}
	tp_count(dev, TP_CNT_RCVD_PKTS);
	if (pkt.op->mask & ROCE_OPM_CNP)
		return;			/* congestion control: a later issue */
	qp = tp_qp_lookup(dev, pkt.dest_qpn);
	if (qp == NULL || !is_local_gid(dev, pkt.dst_gid)) {
		tp_count(dev, TP_CNT_NOT_FOR_US);
		return;
	}
	if (!transport_matches(qp, pkt.opcode)) {
		tp_count(dev, TP_CNT_TRANSPORT_MISMATCH);
		return;
	}
	/* A QP in RESET, INIT or ERR ignores packets (IBTA 10.3.1). */
	if (!tp_qp_can_receive(qp))
		return;
	if (pkt.op->mask & ROCE_OPM_REQ)
		tp_resp_rx(qp, &pkt, frame);
	else
		tp_comp_rx(qp, &pkt, frame);
}

void
tp_recv_burst(struct tp_dev *dev, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		recv_one(dev, pkts[i]);
	}
	/* nothing keeps a received frame (payloads are copied out): the
	 * burst goes back to the pool in one call, not one per frame */
	rte_pktmbuf_free_bulk(pkts, n);
}
