/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive: one classifier.  Every frame is parsed once (lib/wire checks
 * every length against the buffer); RoCEv2 stays with the transport and
 * everything else goes to lib/net's host stack (ARP, ND, ICMP).  A RoCEv2
 * frame's cheap checks (its QP exists, it is addressed to us) come before
 * its ICRC pass, then it is handed to the responder (requests) or the
 * completer (responses) of its QP.  Anything else is counted and dropped
 * here; nothing malformed reaches a role.
 */
#include <string.h>

#include "net_host.h"
#include "tp_private.h"

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

/*
 * Several engines: a frame for another engine's QP goes to its owner, and
 * a frame that is not RoCE to engine 0 (lib/net's host stack).  True when
 * m was handed over (the owner frees it).
 */
static bool
hand_over(struct tp_engine *eng, struct rte_mbuf *m, bool roce, uint32_t dest_qpn)
{
	unsigned int owner = roce ? tp_qpn_engine(eng->dev, dest_qpn) : 0;

	if (owner == eng->idx)
		return false;
	if (!tp_shard_handoff(eng, owner, m))
		return false;		/* ring full: freed with the burst */
	return true;
}

/*
 * The frame is addressed to this port: its destination MAC is the link's
 * and its destination GID one of ours (a host stack that is not in
 * promiscuous mode drops the rest before IP, 9.6.1.1 for the GID).
 */
static bool
is_for_us(const struct tp_dev *dev, const struct roce_pkt *pkt)
{
	return memcmp(pkt->dst_mac, dev->link->mac.addr_bytes, 6) == 0 &&
	       net_host_is_local(dev->host, pkt->dst_gid);
}

/*
 * A frame that failed the cheap checks: IBTA drops it silently either
 * way, but a corrupted frame is an ICRC error wherever the flip landed
 * (in the QPN or the destination address too), so not_for_us counts only
 * frames that arrived intact (and test_soak's icrc_err + malformed_pkts
 * stay exactly the detectable flips), and rcvd_pkts counts it as every
 * intact frame.  Frames that pass (the common case) get one ICRC pass,
 * after the checks.
 */
static void
count_not_for_us(struct tp_engine *eng, struct rte_mbuf *m, const struct roce_pkt *pkt)
{
	if (!icrc_ok(m, pkt)) {
		tp_count(eng, TP_CNT_ICRC_ERR);
		return;
	}
	tp_count(eng, TP_CNT_RCVD_PKTS);
	tp_count(eng, TP_CNT_NOT_FOR_US);
}

/*
 * What every receiving QP checks before its role sees the packet: its
 * state, the P_Key, the first packet in RTR.  False: dropped.
 */
static bool
qp_takes(struct tp_engine *eng, struct tp_qp *qp, const struct roce_pkt *pkt)
{
	/* A QP in RESET, INIT or ERR ignores packets (IBTA 10.3.1). */
	if (!tp_qp_can_receive(qp))
		return false;
	/* C9-42/C9-43 (9.6.1.1.1): the BTH P_Key must match the QP's, or
	 * the packet is dropped silently (for UD too: its QP's P_Key) */
	if (unlikely(!tp_pkey_match(qp->pkey, pkt->pkey))) {
		tp_count(eng, TP_CNT_PKEY_VIOLATION);
		return false;
	}
	if (unlikely(qp->pub.state == DROCE_QPS_RTR))
		tp_event_comm_est(qp);
	return true;
}

/* After qp's role took a packet: its work, its retired WQEs published. */
static void
qp_after_rx(struct tp_qp *qp)
{
	if (tp_qp_has_work(qp))
		tp_qp_ready(qp);
	/* the WQEs it retired are free before their CQEs can be polled */
	if (unlikely(qp->lc != NULL))
		tp_lc_publish_qp(qp);
}

/*
 * A frame with the permissive DQPN (IBTA 10.5): for a group of this
 * device, sent to the group's Ethernet address, it goes to every QP
 * attached, each of which takes a receive WQE of its own and checks its
 * own Q_Key (tp_resp_rx); the sender's QP too when it is attached, as a
 * ConnectX port loops multicast back by default.  A group nobody here
 * joined is not for us.  Only engine 0 has groups (tp_mcast.c).
 */
static void
mcast_rx(struct tp_engine *eng, struct tp_resp_batch *batch, struct rte_mbuf *m,
	 const struct roce_pkt *pkt)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct tp_mcg *g = roce_gid_is_mcast(pkt->dst_gid) ?
				 tp_mcast_find(eng->dev, pkt->dst_gid) : NULL;

	if (g == NULL || memcmp(pkt->dst_mac, g->mac, 6) != 0) {
		count_not_for_us(eng, m, pkt);
		return;
	}
	if (!icrc_ok(m, pkt)) {
		tp_count(eng, TP_CNT_ICRC_ERR);
		return;
	}
	tp_count(eng, TP_CNT_RCVD_PKTS);
	tp_count(eng, TP_CNT_RCVD_MCAST);
	if (roce_opcode_transport(pkt->opcode) != ROCE_TRANSPORT_UD ||
	    !(pkt->op->mask & ROCE_OPM_REQ)) {
		tp_count(eng, TP_CNT_TRANSPORT_MISMATCH);
		return;
	}
	for (uint32_t i = 0; i < g->nqp; i++) {
		struct tp_qp *qp = tp_qp_lookup(eng->dev, g->qpn[i]);

		if (qp == NULL || !qp_takes(eng, qp, pkt))
			continue;
		tp_count(eng, TP_CNT_MCAST_DELIVERED);
		tp_resp_batch_start(batch, qp);
		tp_resp_rx(batch, pkt, frame);
		qp_after_rx(qp);
	}
}

/*
 * A selective ACK (tp_sr.c), its ICRC checked: taken only by a connected
 * RC QP of ours that set selective repeat, in a state that receives, of
 * the frame's partition; anything else is a manufacturer-specific opcode.
 */
static bool
sack_in(struct tp_engine *eng, const struct roce_pkt *pkt, const uint8_t *frame)
{
	struct tp_qp *qp = tp_qp_lookup(eng->dev, pkt->dest_qpn);

	if (qp == NULL || !qp->sr.on || !is_for_us(eng->dev, pkt) ||
	    !tp_qp_can_receive(qp) || !tp_pkey_match(qp->pkey, pkt->pkey))
		return false;
	if (!tp_sr_rx_sack(qp, pkt, frame))
		return false;
	qp_after_rx(qp);
	return true;
}

/*
 * Returns true when m is kept (handed to another engine).  A request joins
 * batch when it is for the batch's QP, else starts a new batch.
 */
static bool
recv_one(struct tp_engine *eng, struct tp_resp_batch *batch, struct rte_mbuf *m,
	 const struct roce_pkt *pkt, enum roce_parse_err err)
{
	struct tp_dev *dev = eng->dev;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	struct tp_qp *qp;

	if (err != ROCE_PARSE_OK && err != ROCE_PARSE_UNKNOWN_OPCODE) {
		tp_count(eng, TP_CNT_MALFORMED);
		return false;
	}
	if (unlikely(pkt->dest_qpn == ROCE_MCAST_QPN) && err == ROCE_PARSE_OK) {
		mcast_rx(eng, batch, m, pkt);
		return false;
	}
	/* the owner checks the ICRC: a frame is verified once */
	if (unlikely(dev->neng > 1) && hand_over(eng, m, true, pkt->dest_qpn))
		return true;
	if (unlikely(err == ROCE_PARSE_UNKNOWN_OPCODE)) {
		/* ICRC first, so a bit flipped in an opcode is an ICRC
		 * error, not a reserved opcode */
		if (!icrc_ok(m, pkt)) {
			tp_count(eng, TP_CNT_ICRC_ERR);
			return false;
		}
		tp_count(eng, TP_CNT_RCVD_PKTS);
		if (pkt->opcode == TP_SR_SACK_OPCODE && sack_in(eng, pkt, frame))
			return false;
		/* IBTA 9.6 header validation: a reserved or
		 * manufacturer-specific opcode is not executed; dropped */
		tp_count(eng, roce_opcode_vendor(pkt->opcode) ? TP_CNT_VENDOR_OPCODE_DROP :
			      TP_CNT_RSVD_OPCODE_DROP);
		return false;
	}
	qp = tp_qp_lookup(dev, pkt->dest_qpn);
	if (qp == NULL || !is_for_us(dev, pkt)) {
		count_not_for_us(eng, m, pkt);
		return false;
	}
	if (!icrc_ok(m, pkt)) {
		tp_count(eng, TP_CNT_ICRC_ERR);
		return false;
	}
	tp_count(eng, TP_CNT_RCVD_PKTS);
	/* RoCEv2 annex A17.9: a CNP names the QP whose rate it lowers
	 * (reaction point); it goes no further */
	if (unlikely(pkt->op->mask & ROCE_OPM_CNP)) {
		tp_count(eng, TP_CNT_RCVD_CNP);
		tp_cc_on_cnp(qp);
		return false;
	}
	if (!transport_matches(qp, pkt->opcode)) {
		tp_count(eng, TP_CNT_TRANSPORT_MISMATCH);
		return false;
	}
	if (!qp_takes(eng, qp, pkt))
		return false;
	/* selective repeat: the peer's offer (tp_sr.c) */
	if (unlikely(qp->sr.on) && !qp->sr.peer)
		tp_sr_rx_mark(qp, pkt, frame);
	/* a switch on the way was congested (annex A17.9.1): tell the sender */
	if (unlikely(roce_pkt_ecn(pkt) == ROCE_ECN_CE))
		tp_cc_np_ce(qp, pkt);
	if (pkt->op->mask & ROCE_OPM_REQ) {
		if (batch->qp != qp)
			tp_resp_batch_start(batch, qp);
		tp_resp_rx(batch, pkt, frame);
	} else {
		tp_comp_rx(qp, pkt, frame);
	}
	qp_after_rx(qp);
	return false;
}

/*
 * Frames that are not RoCEv2 (roce_pkt_is_roce).  On engine 0 they are
 * lib/net's input; what it hands back as RoCEv2 (UDP to port 4791 for one
 * of our addresses, so malformed below the BTH: a bad IPv4 checksum, say)
 * is malformed here.  A table-only host (no host stack: nothing but
 * RoCEv2 is expected on the wire) hands every frame back, malformed.
 * Returns how many of other[0, n) are left for the caller to free.
 */
static uint16_t
recv_other(struct tp_engine *eng, struct rte_mbuf **other, uint16_t n)
{
	struct net_host *host = tp_host(eng);
	uint16_t k = n;

	if (host != NULL && n != 0)
		k = net_host_rx(host, other, n);	/* consumes the rest */
	tp_count_n(eng, TP_CNT_MALFORMED, k);
	return k;
}

/*
 * The receive template of a connected QP (lib/wire roce_rx_tmpl): the
 * frame its peer sends it, to this port's MAC and from the peer's GID to
 * ours, with its P_Key and QPN.  A template that no longer describes the
 * QP (a GID or P_Key changed without a modify_qp) only sends frames to the
 * full parse: it never changes a verdict, every check after the parse
 * stays.
 */
static void
rx_tmpl_build(struct tp_qp *qp)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac, qp->dev->link->mac.addr_bytes, 6);
	p.ip_version = qp->av.ip_version;
	memcpy(p.src_gid, qp->av.dgid, 16);
	memcpy(p.dst_gid, qp->av.sgid, 16);
	p.ip_df = 1;
	p.pkey = qp->pkey;
	p.dest_qpn = qp->pub.qp_num;
	/* false: a template that matches nothing */
	roce_rx_tmpl_init(&qp->rx_tmpl, &p);
	qp->rx_tmpl_gen = __atomic_add_fetch(&qp->dev->rx_tmpl_gen, 1, __ATOMIC_RELAXED);
	qp->rx_tmpl_ok = true;
}

/*
 * Parse m into slot i of b by the receive template of the QP it names,
 * when that QP is a connected one of this engine and m's fixed header
 * bytes are the ones its peer sends (lib/wire: then the slot's packet is
 * exactly what the full parse yields, with ROCE_PARSE_OK; only what varies
 * is written when the same template filled the slot last).  False: the
 * full parse decides.
 */
static bool
parse_by_template(struct tp_engine *eng, struct tp_rx_burst *b, unsigned int i,
		  const struct rte_mbuf *m, bool cksum_ok)
{
	struct roce_pkt *pkt = &b->pkt[i];
	struct tp_dev *dev = eng->dev;
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	struct tp_qp *qp;
	uint32_t qpn;

	if (!roce_peek_dest_qpn(f, m->data_len, &qpn) ||
	    tp_qpn_engine(dev, qpn) != eng->idx)
		return false;
	qp = tp_qp_lookup(dev, qpn);
	if (qp == NULL || qp->pub.qp_type == DROCE_QPT_UD)
		return false;
	if (unlikely(!qp->rx_tmpl_ok))
		rx_tmpl_build(qp);
	if (likely(b->tmpl_gen[i] == qp->rx_tmpl_gen)) {
		if (!roce_rx_tmpl_reparse(&qp->rx_tmpl, f, m->data_len, cksum_ok, pkt))
			return false;
	} else {
		if (!roce_rx_tmpl_parse(&qp->rx_tmpl, f, m->data_len, cksum_ok, pkt))
			return false;
		b->tmpl_gen[i] = qp->rx_tmpl_gen;
	}
	tp_count(eng, TP_CNT_RX_TMPL_PARSED);
	return true;
}

/*
 * Parse m once into slot i of b: by its QP's receive template, else field
 * by field.  A port that checks IPv4 header checksums
 * (DROCE_LINK_RX_IPV4_CKSUM) gave its verdict: GOOD is not computed again,
 * UNKNOWN or NONE (not IPv4, or not checked) is checked here.
 */
static enum roce_parse_err
parse_frame(struct tp_engine *eng, struct tp_rx_burst *b, unsigned int i,
	    const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	struct roce_pkt *pkt = &b->pkt[i];
	bool cksum_ok = (eng->dev->link->offloads & DROCE_LINK_RX_IPV4_CKSUM) &&
			(m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
			RTE_MBUF_F_RX_IP_CKSUM_GOOD;

	if (likely(parse_by_template(eng, b, i, m, cksum_ok)))
		return ROCE_PARSE_OK;
	b->tmpl_gen[i] = 0;		/* the full parse writes the slot */
	if (cksum_ok)
		return roce_parse_eth_cksum_ok(f, m->data_len, pkt);
	return roce_parse_eth(f, m->data_len, pkt);
}

/* The port found the IPv4 header checksum wrong: m is dropped here. */
static bool
ip_cksum_bad(const struct tp_dev *dev, const struct rte_mbuf *m)
{
	return (dev->link->offloads & DROCE_LINK_RX_IPV4_CKSUM) &&
	       (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD;
}

uint16_t
tp_recv_classify(struct tp_engine *eng, struct tp_rx_burst *b, uint16_t n)
{
	struct rte_mbuf *other[TP_RX_BURST];
	uint16_t nroce = 0, nother = 0, nfree;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = b->m[i];
		struct roce_pkt *pkt = &b->pkt[nroce];
		enum roce_parse_err err = ROCE_PARSE_TRUNCATED;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(b->m[i + 1], void *));
		if (unlikely(ip_cksum_bad(eng->dev, m))) {
			tp_count(eng, TP_CNT_IP_CKSUM_BAD);
			rte_pktmbuf_free(m);
			continue;
		}
		if (likely(m->nb_segs == 1)) {
			err = parse_frame(eng, b, nroce, m);
		} else {
			b->tmpl_gen[nroce] = 0;
			pkt->bth_off = 0;
		}
		if (likely(roce_pkt_is_roce(pkt))) {
			b->err[nroce] = (uint8_t)err;
			b->m[nroce++] = m;	/* (nroce <= i: not read again) */
		} else if (!(unlikely(eng->dev->neng > 1) &&
			     hand_over(eng, m, false, 0))) {
			other[nother++] = m;
		}
	}
	nfree = recv_other(eng, other, nother);
	rte_pktmbuf_free_bulk(other, nfree);
	return nroce;
}

void
tp_recv_burst(struct tp_engine *eng, struct tp_rx_burst *b, uint16_t n)
{
	struct tp_resp_batch batch = { .qp = NULL };
	uint16_t nfree = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = b->m[i];

		if (!recv_one(eng, &batch, m, &b->pkt[i], (enum roce_parse_err)b->err[i]))
			b->m[nfree++] = m;	/* (nfree <= i: not read again) */
	}
	/* nothing keeps a received frame (payloads are copied out) but a
	 * handover to another engine: the rest goes back to the pool in one
	 * call, not one per frame */
	rte_pktmbuf_free_bulk(b->m, nfree);
}
