/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast path: rx_burst and tx_burst on queue 0, counting, and making
 * multi-segment frames single (the transport reads frames as one buffer).
 */
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ethdev_private.h"

/*
 * One segment for m, or NULL (m freed, counted).  In place when the first
 * segment has the tailroom; otherwise a copy in one mbuf of the link's
 * pool when the frame fits its data room.
 */
static struct rte_mbuf *
ethdev_rx_single(struct ethdev_priv *p, struct ethdev_queue *eq, struct rte_mbuf *m)
{
	struct rte_mbuf *copy;

	if (rte_pktmbuf_linearize(m) == 0) {
		ethdev_count(&eq->cnt.rx_linearized, 1);
		return m;
	}
	copy = rte_pktmbuf_alloc(p->link.pool);
	if (copy != NULL && rte_pktmbuf_tailroom(copy) >= m->pkt_len) {
		char *dst = rte_pktmbuf_append(copy, (uint16_t)m->pkt_len);
		const void *src = rte_pktmbuf_read(m, 0, m->pkt_len, dst);

		/* the frame is multi-segment: read copied it into dst */
		if (dst != NULL && src == dst) {
			rte_pktmbuf_free(m);
			ethdev_count(&eq->cnt.rx_linearized, 1);
			return copy;
		}
	}
	rte_pktmbuf_free(copy);
	rte_pktmbuf_free(m);
	ethdev_count(&eq->cnt.rx_multiseg_drops, 1);
	return NULL;
}

/* Queue q (< nb_queues: droce_link_rx_q checks nothing, the caller does). */
uint16_t
ethdev_rx_burst_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		  uint16_t n)
{
	struct ethdev_priv *p = ethdev_priv(link);
	struct ethdev_queue *eq = &p->q[q];
	uint16_t got = rte_eth_rx_burst(p->port_id, q, pkts, n);
	uint64_t bytes = 0;
	uint16_t k = 0;

	for (uint16_t i = 0; i < got; i++) {
		struct rte_mbuf *m = pkts[i];

		if (unlikely(m->nb_segs > 1)) {
			m = ethdev_rx_single(p, eq, m);
			if (m == NULL)
				continue;
		}
		bytes += m->pkt_len;
		pkts[k++] = m;
	}
	if (k != 0) {
		ethdev_count(&eq->cnt.rx_pkts, k);
		ethdev_count(&eq->cnt.rx_bytes, bytes);
	}
	return k;
}

uint16_t
ethdev_rx_burst(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return ethdev_rx_burst_q(link, ethdev_priv(link)->rxq, pkts, n);
}

uint16_t
ethdev_tx_burst_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		  uint16_t n)
{
	struct ethdev_priv *p = ethdev_priv(link);
	struct ethdev_queue *eq = &p->q[q];
	uint64_t bytes = 0;
	uint16_t sent;

	/* lengths first: the PMD may free what it takes at once */
	for (uint16_t i = 0; i < n; i++)
		bytes += pkts[i]->pkt_len;
	sent = rte_eth_tx_burst(p->port_id, q, pkts, n);
	for (uint16_t i = sent; i < n; i++)
		bytes -= pkts[i]->pkt_len;	/* still ours */
	if (sent != 0) {
		ethdev_count(&eq->cnt.tx_pkts, sent);
		ethdev_count(&eq->cnt.tx_bytes, bytes);
	}
	if (sent < n)
		ethdev_count(&eq->cnt.tx_full, (uint64_t)(n - sent));
	return sent;
}

uint16_t
ethdev_tx_burst(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return ethdev_tx_burst_q(link, ethdev_priv(link)->txq, pkts, n);
}
