/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet construction and the transmit queue: the only file that touches
 * the link.  Headers are written by lib/wire's builder, so lengths, pad
 * counts, the IPv4 checksum and the ICRC are derived, never hand-set.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "net_host.h"
#include "tp_private.h"

/*
 * The peer's MAC from lib/net's neighbour table: through the handle av
 * caches while its generation holds (no search), else a resolution that
 * renews the handle.  Zero while unresolved: tp_net_finish then hands the
 * frame to the host stack to hold until the MAC is known.
 */
static void
av_dmac(struct net_host *host, struct tp_av *av, uint8_t mac[6])
{
	struct rte_ether_addr *ea = (struct rte_ether_addr *)mac;

	if (likely(net_host_neigh_mac(host, &av->neigh, ea)))
		return;
	if (net_host_resolve_ref(host, av->dgid, ea, &av->neigh) != 0)
		memset(mac, 0, 6);
}

/* The addressing fields common to every packet a QP sends to av. */
static void
fill_addresses(const struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p)
{
	const struct tp_dev *dev = qp->dev;

	if (tp_host(qp->eng) == NULL || av->mcast)
		memcpy(p->dst_mac, av->dmac, 6);
	else
		av_dmac(dev->host, av, p->dst_mac);
	memcpy(p->src_mac, dev->link->mac.addr_bytes, 6);
	p->ip_version = av->ip_version;
	memcpy(p->src_gid, av->sgid, 16);
	memcpy(p->dst_gid, av->dgid, 16);
	p->ip_ttl = av->hop_limit;
	p->ip_dscp_ecn = tp_cc_tos(dev, av->traffic_class);
	p->ip_flow_label = av->flow_label;
	p->ip_df = 1;
	p->udp_sport = qp->udp_sport;
	p->udp_dport = ROCE_UDP_PORT;
	p->migreq = 1;
	p->pkey = qp->pkey;
	p->dest_qpn = qp->attr.dest_qp_num;
}

/*
 * A connected (RC/UC) QP sends every packet to qp->av: its Ethernet, IP,
 * UDP headers and most of the BTH are the same each time, kept as a
 * template (lib/wire roce_tmpl) built at the first packet after a
 * modify_qp (apply_attrs clears tx_tmpl_ok).  Only the destination MAC can
 * change under us, with a host stack (ARP/ND): it is taken per packet from
 * the neighbour handle (av_dmac) and written over the template's.
 */
static bool
use_template(struct tp_qp *qp, struct tp_av *av)
{
	struct roce_pkt p;

	if (av != &qp->av || qp->pub.qp_type == DROCE_QPT_UD)
		return false;
	if (likely(qp->tx_tmpl_ok))
		return true;
	memset(&p, 0, sizeof(p));
	fill_addresses(qp, av, &p);
	qp->tx_tmpl_ok = roce_tmpl_init(&qp->tx_tmpl, &p);
	return qp->tx_tmpl_ok;
}

/* The extended-header fields of struct roce_pkt (reth .. ieth_rkey). */
#define PKT_EXT_OFF offsetof(struct roce_pkt, reth)
#define PKT_EXT_LEN (offsetof(struct roce_pkt, icrc) - PKT_EXT_OFF)

/*
 * Start a packet from qp to av: opcode and PSN set, everything else zero
 * or the addressing fields.  When the QP's template applies, only the
 * fields roce_tmpl_build_headers reads are set (plus what tp_net_finish
 * needs with a host stack), not the whole ~200-byte struct.
 */
void
tp_net_fill_pkt(struct tp_qp *qp, struct tp_av *av,
		struct roce_pkt *p, uint8_t opcode, uint32_t psn)
{
	if (use_template(qp, av)) {
		memset((uint8_t *)p + PKT_EXT_OFF, 0, PKT_EXT_LEN);
		p->payload_len = 0;
		p->se = 0;
		p->ackreq = 0;
		/* the destination GID always (the host stack holds frames
		 * by it, and it names the peer), the MAC per packet only
		 * with a host stack (else the template's is current) */
		memcpy(p->dst_gid, av->dgid, 16);
		if (tp_host(qp->eng) != NULL)
			av_dmac(qp->dev->host, av, p->dst_mac);
	} else {
		memset(p, 0, sizeof(*p));
		fill_addresses(qp, av, p);
	}
	p->opcode = opcode;
	p->psn = psn & ROCE_PSN_MASK;
}

/* Room for one more frame on the engine's way out? */
static bool
tx_room(struct tp_engine *eng)
{
	if (unlikely(eng->idx != 0))
		return tp_shard_tx_room(eng);
	if (eng->txq_len == TP_TXQ_SIZE)
		tp_net_flush(eng);
	return eng->txq_len < TP_TXQ_SIZE;
}

/*
 * A CNP (annex A17.9.3, lib/wire roce_cnp_fill) from qp to the QP it is
 * connected to, with IP DSCP dscp.  Built whole, not from the QP's
 * template: its BTH (MigReq 0, BECN 1) and TOS differ.  Without room or
 * an mbuf it is not sent (-ENOBUFS): the next CE-marked packet asks again.
 */
int
tp_net_send_cnp(struct tp_qp *qp, uint8_t dscp)
{
	struct tp_engine *eng = qp->eng;
	struct rte_mbuf *m;
	struct roce_pkt p;

	if (!tx_room(eng)) {
		tp_count(eng, TP_CNT_TX_BACKPRESSURE);
		return -ENOBUFS;
	}
	m = rte_pktmbuf_alloc(qp->dev->link->pool);
	if (m == NULL) {
		tp_count(eng, TP_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	memset(&p, 0, sizeof(p));
	fill_addresses(qp, &qp->av, &p);
	roce_cnp_fill(&p, qp->attr.dest_qp_num, qp->pkey, dscp);
	if (roce_build_headers(rte_pktmbuf_mtod(m, uint8_t *),
			       rte_pktmbuf_tailroom(m), &p) == 0) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	tp_net_finish(qp, m, &p);
	return 0;
}

/*
 * A UD QP has no peer: its CNP goes back where the CE-marked packet came
 * from (the frame's source MAC, the GIDs swapped) to the QP its DETH names.
 */
int
tp_net_send_cnp_to(struct tp_qp *qp, const struct roce_pkt *pkt, uint8_t dscp)
{
	struct tp_engine *eng = qp->eng;
	struct rte_mbuf *m;
	struct roce_pkt p;

	if (!tx_room(eng)) {
		tp_count(eng, TP_CNT_TX_BACKPRESSURE);
		return -ENOBUFS;
	}
	m = rte_pktmbuf_alloc(qp->dev->link->pool);
	if (m == NULL) {
		tp_count(eng, TP_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac, pkt->src_mac, 6);
	memcpy(p.src_mac, qp->dev->link->mac.addr_bytes, 6);
	p.ip_version = pkt->ip_version;
	memcpy(p.src_gid, pkt->dst_gid, 16);
	memcpy(p.dst_gid, pkt->src_gid, 16);
	p.ip_ttl = 64;
	p.ip_df = 1;
	p.udp_sport = roce_udp_sport_fl(0, qp->pub.qp_num, pkt->deth.src_qpn);
	p.udp_dport = ROCE_UDP_PORT;
	roce_cnp_fill(&p, pkt->deth.src_qpn & 0xffffff, qp->pkey, dscp);
	if (roce_build_headers(rte_pktmbuf_mtod(m, uint8_t *),
			       rte_pktmbuf_tailroom(m), &p) == 0) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	tp_net_finish(qp, m, &p);
	return 0;
}

/*
 * Fill b with want (at most TP_REQ_BURST) mbufs in one pool call; it stays
 * empty when the pool has not that many (tp_net_alloc then takes them one
 * at a time, down to the last).
 */
void
tp_net_mbufs_get(struct tp_dev *dev, struct tp_tx_mbufs *b, unsigned int want)
{
	want = RTE_MIN(want, (unsigned int)TP_REQ_BURST);
	b->next = 0;
	b->n = 0;
	if (want > 1 && rte_pktmbuf_alloc_bulk(dev->link->pool, b->m, want) == 0)
		b->n = (uint16_t)want;
}

void
tp_net_mbufs_put(struct tp_tx_mbufs *b)
{
	if (b->next < b->n)
		rte_pktmbuf_free_bulk(b->m + b->next, b->n - b->next);
	b->next = 0;
	b->n = 0;
}

static struct rte_mbuf *
take_mbuf(struct tp_dev *dev, struct tp_tx_mbufs *b)
{
	if (b != NULL && b->next < b->n)
		return b->m[b->next++];
	return rte_pktmbuf_alloc(dev->link->pool);
}

/*
 * Take an mbuf (from b) and write the headers of p into it; *hdr_len is
 * their length.  beyond: bytes of the frame that lie in other segments
 * (zero copy: payload, pad and ICRC), which the builder counts in the
 * frame but never writes.
 */
static struct rte_mbuf *
alloc_headers(struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p,
	      struct tp_tx_mbufs *b, size_t beyond, size_t *hdr_len)
{
	struct tp_engine *eng = qp->eng;
	struct rte_mbuf *m;
	uint8_t *f;
	size_t hdr, cap;

	if (unlikely(!tx_room(eng))) {
		tp_count(eng, TP_CNT_TX_BACKPRESSURE);
		eng->turn.full = true;
		return NULL;
	}
	m = take_mbuf(qp->dev, b);
	if (m == NULL) {
		tp_count(eng, TP_CNT_TX_NOMBUF);
		return NULL;
	}
	f = rte_pktmbuf_mtod(m, uint8_t *);
	cap = rte_pktmbuf_tailroom(m) + beyond;
	/* (use_template is true here exactly when it was in fill_pkt) */
	if (use_template(qp, av)) {
		hdr = roce_tmpl_write_headers(&qp->tx_tmpl, f, cap, p);
		if (hdr != 0 && tp_host(eng) != NULL)
			memcpy(f, p->dst_mac, 6);
		/* of p's layout and addressing fields only the template
		 * knows: tp_net_finish completes the frame from it */
		p->bth_off = 0;
	} else {
		hdr = roce_build_headers(f, cap, p);
	}
	if (hdr == 0) {
		/* a transport bug: never send what the builder refused */
		TP_LOG(ERR, "cannot build opcode 0x%02x len %u\n", p->opcode,
		       p->payload_len);
		rte_pktmbuf_free(m);
		return NULL;
	}
	*hdr_len = hdr;
	return m;
}

/*
 * Take an mbuf (from b, see tp_net_mbufs_get) and write the headers of p
 * (from tp_net_fill_pkt with the same av; payload_len set by the caller);
 * *payload points where the caller copies the payload.  NULL when the
 * transmit queue is full and the link takes nothing more (backpressure:
 * the caller keeps its state and builds the packet in a later round, so
 * nothing counted as sent is ever dropped here) or no mbuf is left.
 */
struct rte_mbuf *
tp_net_alloc(struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p,
	     struct tp_tx_mbufs *b, uint8_t **payload)
{
	size_t hdr;
	struct rte_mbuf *m = alloc_headers(qp, av, p, b, 0, &hdr);

	if (m != NULL)
		*payload = rte_pktmbuf_mtod(m, uint8_t *) + hdr;
	return m;
}

/* The link freed a zero-copy frame's payload segment: its region's hold goes. */
static void
zc_free(void *addr, void *opaque)
{
	(void)addr;
	prot_tx_release(opaque);
}

/*
 * Zero copy (DROCE_LINK_TX_ZC, tp_net_zc): as tp_net_alloc, but the frame
 * is three segments, the headers, the payload_len bytes at src sent from
 * where they are (an external buffer, rte_pktmbuf_attach_extbuf), and
 * the pad and ICRC that tp_net_finish writes.  src is registered memory
 * of key, checked in this read-side section: the frame holds the region
 * (prot_tx_hold) until the link frees the payload segment, so a dereg
 * waits for it while the key dies at once.  The segment's shared info
 * lives in its own mbuf's data room, unused while the buffer is external
 * and freed only after the callback ran.  Physical addresses are not
 * looked up (a syscall): the IOVA is the address in IOVA-as-VA mode,
 * else unknown, which virtual PMDs never read (zc_default in
 * drivers/ethdev enables no physical port).
 */
struct rte_mbuf *
tp_net_alloc_zc(struct tp_qp *qp, struct tp_av *av, struct roce_pkt *p,
		struct tp_tx_mbufs *b, const void *src, uint32_t key)
{
	uint32_t plen = p->payload_len;
	struct rte_mbuf_ext_shared_info *sh;
	struct rte_mbuf *m, *seg[2];
	rte_iova_t iova;
	size_t hdr;

	m = alloc_headers(qp, av, p, b, (size_t)plen + 3 + ROCE_ICRC_LEN, &hdr);
	if (m == NULL)
		return NULL;
	if (rte_pktmbuf_alloc_bulk(qp->dev->link->pool, seg, 2) != 0) {
		tp_count(qp->eng, TP_CNT_TX_NOMBUF);
		rte_pktmbuf_free(m);
		return NULL;
	}
	sh = rte_pktmbuf_mtod(seg[0], struct rte_mbuf_ext_shared_info *);
	sh->free_cb = zc_free;
	sh->fcb_opaque = prot_tx_hold(qp->dev->prot, key);
	rte_mbuf_ext_refcnt_set(sh, 1);
	iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)src : RTE_BAD_IOVA;
	rte_pktmbuf_attach_extbuf(seg[0], (void *)(uintptr_t)src, iova, (uint16_t)plen, sh);
	seg[0]->data_len = (uint16_t)plen;
	seg[1]->data_len = (uint16_t)(p->padcnt + ROCE_ICRC_LEN);
	seg[0]->next = seg[1];
	m->next = seg[0];
	m->nb_segs = 3;
	return m;
}

/*
 * A port that computes IPv4 header checksums (DROCE_LINK_TX_IPV4_CKSUM)
 * gets the frame with the checksum field 0 and the mbuf's request for it.
 * The ICRC does not cover the checksum (RoCEv2 annex A17.3.3 masks it),
 * so the port may write it after the ICRC was computed.  A packet from
 * the QP's template (bth_off 0, tp_net_alloc) is completed from it.
 */
static void
build_finish(const struct tp_qp *qp, struct rte_mbuf *m, struct roce_pkt *p)
{
	const struct roce_tmpl *t = &qp->tx_tmpl;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	bool from_tmpl = p->bth_off == 0;
	uint8_t ipv = from_tmpl ? t->ip_version : p->ip_version;
	bool offload = ipv == 4 && (qp->dev->link->offloads & DROCE_LINK_TX_IPV4_CKSUM);

	if (unlikely(m->nb_segs > 1)) {
		/* zero copy: tp_net_alloc_zc's payload and trailer segments */
		const void *pl = rte_pktmbuf_mtod(m->next, const void *);
		uint8_t *tr = rte_pktmbuf_mtod(m->next->next, uint8_t *);

		if (from_tmpl)
			roce_tmpl_finish_split(t, f, pl, tr, p, offload);
		else
			roce_build_finish_split(f, pl, tr, p, offload);
	} else if (from_tmpl)
		roce_tmpl_finish(t, f, p, offload);
	else if (offload)
		roce_build_finish_ip_cksum_offload(f, p);
	else
		roce_build_finish(f, p);
	if (!offload)
		return;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	m->l2_len = from_tmpl ? t->l3_off : p->l3_off;
	m->l3_len = ROCE_IPV4_HDR_LEN;
}

/* Pad, ICRC, length; queue for transmission. */
void
tp_net_finish(struct tp_qp *qp, struct rte_mbuf *m, struct roce_pkt *p)
{
	struct tp_engine *eng = qp->eng;

	if (unlikely(qp->sr.on))
		tp_sr_mark_tx(qp, m, p);
	build_finish(qp, m, p);
	m->pkt_len = (uint32_t)roce_frame_len(p);
	if (likely(m->nb_segs == 1)) {
		m->data_len = (uint16_t)m->pkt_len;
	} else {
		m->data_len = p->payload_off;
		tp_count(eng, TP_CNT_TX_ZC_PKTS);
	}
	tp_count(eng, TP_CNT_SENT_PKTS);
	if (unlikely(eng->idx != 0)) {
		/* another transport lcore's engine (tp_shard.c) */
		/* (the frame's MAC: p's is not set on the template path) */
		tp_shard_tx(eng, m, p->dst_gid,
			    tp_mac_is_zero(rte_pktmbuf_mtod(m, const uint8_t *)));
		return;
	}
	if (tp_mac_is_zero(p->dst_mac)) {
		/* held until ARP/ND answers (or behind the held frames the
		 * queue had no room for yet), then back through
		 * tp_net_release (and leaves from there); dropped
		 * when the resolution fails or the budget is spent: the
		 * transport's retransmission covers both */
		tp_net_flush(eng);
		net_host_output(eng->dev->host, p->dst_gid, m);
		return;
	}
	/* tp_net_alloc made the room */
	eng->txq[eng->txq_len++] = m;
}

/*
 * lib/net's output (net_host_set_output): a frame it held for ARP/ND, its
 * MAC now filled in.  It joins the transmit queue behind what is queued,
 * and is retried like every other frame.  When the queue is
 * full and the link takes nothing, -EAGAIN: lib/net keeps the frame (and
 * those behind it, in order) and offers it again next round, so a release
 * larger than the queue loses nothing.  arg: engine 0.
 */
int
tp_net_release(void *arg, struct rte_mbuf *m)
{
	struct tp_engine *eng = arg;

	if (eng->txq_len == TP_TXQ_SIZE)
		tp_net_flush(eng);
	if (eng->txq_len == TP_TXQ_SIZE)
		return -EAGAIN;
	eng->txq[eng->txq_len++] = m;
	return 0;
}

/*
 * lib/net's news that the last frame it held for gid was taken (arg:
 * engine 0).  A QP's packets to that peer left only now: its
 * retransmission timer, armed when they were built, restarts from here,
 * so the time they waited for ARP/ND is never charged to the peer as a
 * timeout (IBTA 9.7.6.1.3 times the wait for an acknowledgement of what
 * was sent; tp_comp_timeout re-arms a timer that expires before).  A
 * resolution is rare: one pass over engine 0's QPs.  QPs of other engines
 * never wait here for a resolution of their own (tp_shard.c).
 */
void
tp_net_released(void *arg, const uint8_t gid[16])
{
	struct tp_engine *eng = arg;

	for (uint32_t i = 0; i < eng->nlive; i++) {
		struct tp_qp *qp = eng->live[i];

		if (tp_timer_retrans_armed(qp) && memcmp(qp->av.dgid, gid, 16) == 0)
			tp_timer_arm_retrans(qp);
	}
}

/*
 * The one transmit flush, whatever runs the engine: its queue onto its
 * own queue of the link (engine k: queue k; an engine without one never
 * queues, tp_shard_tx).  What the link does not take stays, in order.
 */
void
tp_net_flush(struct tp_engine *eng)
{
	uint16_t sent;

	if (eng->txq_len == 0)
		return;
	sent = droce_link_tx_q(eng->dev->link, (uint16_t)eng->idx, eng->txq,
			       (uint16_t)eng->txq_len);
	if (sent < eng->txq_len)
		memmove(eng->txq, eng->txq + sent,
			(eng->txq_len - sent) * sizeof(eng->txq[0]));
	eng->txq_len -= sent;
}

/*
 * Destination MAC of an address vector, from lib/net's neighbour table.
 * A host that resolves starts the resolution now (ARP/ND); packets look
 * the MAC up again when they are built, so -EAGAIN (and a FAILED entry's
 * -EHOSTUNREACH, retried on use) is fine here; only a peer that cannot be
 * on-link fails.  A table-only host knows its static entries alone: any
 * other peer fails.  lib/net is engine 0's: on another engine the MAC
 * stays unknown, and engine 0 resolves it for the first frames
 * (tp_shard_tx, mac_in).
 */
int
tp_net_resolve(struct tp_engine *eng, struct tp_av *av)
{
	struct tp_dev *dev = eng->dev;
	int rc;

	if (tp_host(eng) == NULL)
		return 0;
	rc = net_host_resolve_ref(dev->host, av->dgid,
				  (struct rte_ether_addr *)av->dmac, &av->neigh);

	if (rc == -EAGAIN || (rc == -EHOSTUNREACH && net_host_resolves(dev->host)))
		return 0;
	return rc;
}
