/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet construction and the transmit queue: the only file that touches
 * the link.  Headers are written by lib/wire's builder, so lengths, pad
 * counts, the IPv4 checksum and the ICRC are derived, never hand-set.
 */
#include <errno.h>
#include <string.h>

#include "tp_private.h"

/* The addressing fields common to every packet a QP sends. */
void
tp_net_fill_pkt(const struct tp_qp *qp, const struct tp_av *av,
		struct roce_pkt *p, uint8_t opcode, uint32_t psn)
{
	const struct tp_dev *dev = qp->dev;

	memset(p, 0, sizeof(*p));
	memcpy(p->dst_mac, av->dmac, 6);
	memcpy(p->src_mac, dev->link->mac.addr_bytes, 6);
	p->ip_version = av->ip_version;
	memcpy(p->src_gid, av->sgid, 16);
	memcpy(p->dst_gid, av->dgid, 16);
	p->ip_ttl = av->hop_limit;
	p->ip_dscp_ecn = av->traffic_class;
	p->ip_flow_label = av->flow_label;
	p->ip_df = 1;
	p->udp_sport = qp->udp_sport;
	p->udp_dport = ROCE_UDP_PORT;
	p->opcode = opcode;
	p->migreq = 1;
	p->pkey = 0xffff;
	p->dest_qpn = qp->attr.dest_qp_num;
	p->psn = psn & ROCE_PSN_MASK;
}

/*
 * Allocate an mbuf and write the headers of p (payload_len set by the
 * caller); *payload points where the caller copies the payload.
 */
struct rte_mbuf *
tp_net_alloc(struct tp_dev *dev, struct roce_pkt *p, uint8_t **payload)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dev->link->pool);
	size_t hdr;

	if (m == NULL) {
		tp_count(dev, TP_CNT_TX_NOMBUF);
		return NULL;
	}
	hdr = roce_build_headers(rte_pktmbuf_mtod(m, uint8_t *),
				 rte_pktmbuf_tailroom(m), p);
	if (hdr == 0) {
		/* a transport bug: never send what the builder refused */
		TP_LOG(ERR, "cannot build opcode 0x%02x len %u\n", p->opcode,
		       p->payload_len);
		rte_pktmbuf_free(m);
		return NULL;
	}
	*payload = rte_pktmbuf_mtod(m, uint8_t *) + hdr;
	return m;
}

static void
txq_put(struct tp_dev *dev, struct rte_mbuf *m)
{
	if (dev->txq_len == TP_TXQ_SIZE)
		tp_net_flush(dev);
	if (dev->txq_len == TP_TXQ_SIZE) {
		/* the link is stuck: losing the packet is recoverable (retransmit) */
		tp_count(dev, TP_CNT_SEND_ERR);
		rte_pktmbuf_free(m);
		return;
	}
	dev->txq[dev->txq_len++] = m;
}

/* Pad, ICRC, length; queue for transmission. */
void
tp_net_finish(struct tp_dev *dev, struct rte_mbuf *m, struct roce_pkt *p)
{
	roce_build_finish(rte_pktmbuf_mtod(m, uint8_t *), p);
	m->data_len = (uint16_t)roce_frame_len(p);
	m->pkt_len = m->data_len;
	tp_count(dev, TP_CNT_SENT_PKTS);
	txq_put(dev, m);
}

void
tp_net_flush(struct tp_dev *dev)
{
	uint16_t sent;

	if (dev->txq_len == 0)
		return;
	sent = droce_link_tx(dev->link, dev->txq, (uint16_t)dev->txq_len);
	if (sent < dev->txq_len)
		memmove(dev->txq, dev->txq + sent,
			(dev->txq_len - sent) * sizeof(dev->txq[0]));
	dev->txq_len -= sent;
}

/* Destination MAC of a GID from the neighbour table (ARP/ND: port issue). */
int
tp_net_resolve(struct tp_dev *dev, struct tp_av *av)
{
	for (unsigned int i = 0; i < TP_MAX_NEIGH; i++) {
		if (dev->neigh[i].valid && memcmp(dev->neigh[i].gid, av->dgid, 16) == 0) {
			memcpy(av->dmac, dev->neigh[i].mac.addr_bytes, 6);
			return 0;
		}
	}
	return -EHOSTUNREACH;
}
