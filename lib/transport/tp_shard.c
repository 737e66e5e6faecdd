/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several transport lcores per device: the device's QPs are spread by
 * QPN (tp_qpn_engine: QPN modulo the number of engines) over N engines,
 * one per transport lcore; engine k polls rx queue k and sends on tx
 * queue k of the link (when the link has that many queues,
 * droce_link_queues()).  Here: the hand-offs between engines.
 *
 * Correctness never depends on where the NIC (RSS, af_packet fanout) put
 * a frame:
 *   - a RoCE frame whose destination QP belongs to another engine is handed
 *     to the owner through the owner's rx_in ring (MP/SC: any engine may
 *     hand over; no locks) and processed there (tp_recv.c);
 *   - a frame that is not RoCE (ARP, ND, ICMP...) received by engine k >= 1
 *     goes to engine 0, which owns lib/net's host stack;
 *   - an engine without a tx queue of its own (a single-queue link such as
 *     drivers/vwire) sends through engine 0's tx_in ring;
 *   - engines >= 1 never call into lib/net (its neighbour table is not
 *     thread-safe): they use the MAC resolved when the QP went to RTR;
 *     while that is unknown, their frames go to engine 0 with the
 *     destination GID, which resolves and sends them (net_host_output)
 *     and then tells the engine the MAC (mac_in, tp_shard_mac_in).
 *
 * Everything else an engine touches on the data path is its own: its QPs
 * (and their work queues, timers), its transmit queue, its counters
 * (summed for telemetry), its QSBR reader slot, and its ring in each CQ
 * (cq->rings[eng->idx], tp_cq_push; a CQ may be shared by QPs of
 * different engines, and droce_poll_cq polls each engine's ring in turn).
 * A QP's control commands run on its own engine (tp_qp_call), so its QP
 * table slot, its engine's live list and CQ list change only where they
 * are read (lib/transport/README.md, "Several transport lcores").
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "net_host.h"
#include "tp_private.h"

/* Frames this engine received on its queue and that other engines handed it. */
uint16_t
tp_shard_rx(struct tp_engine *eng, struct rte_mbuf **pkts, uint16_t n)
{
	struct tp_dev *dev = eng->dev;
	uint16_t got = 0;

	if (eng->idx < droce_link_queues(dev->link)) {
		got = droce_link_rx_q(dev->link, (uint16_t)eng->idx, pkts, n);
		tp_count_n(eng, TP_CNT_SHARD_LINK_RX, got);
	}
	if (got < n)
		got += (uint16_t)rte_ring_sc_dequeue_burst(eng->rx_in,
							    (void **)(pkts + got),
							    n - got, NULL);
	return got;
}

/* Hand a received frame to engine owner; false: dropped (the caller frees). */
bool
tp_shard_handoff(struct tp_engine *eng, unsigned int owner, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(eng->dev->eng[owner]->rx_in, m) != 0) {
		tp_count(eng, TP_CNT_HANDOFF_DROP);
		return false;
	}
	tp_count(eng, TP_CNT_HANDOFF_RX);
	return true;
}

static void
to_engine0(struct tp_engine *eng, struct rte_mbuf *m, const uint8_t gid[16])
{
	struct tp_txh h = { .m = m, .eng = eng->idx };

	if (gid != NULL)
		memcpy(h.gid, gid, 16);
	if (rte_ring_mp_enqueue_elem(eng->dev->eng[0]->tx_in, &h, sizeof(h)) != 0) {
		/* lost: the transport's retransmission recovers it */
		tp_count(eng, TP_CNT_HANDOFF_DROP);
		rte_pktmbuf_free(m);
		return;
	}
	tp_count(eng, TP_CNT_HANDOFF_TX);
}

/* Engine >= 1: queue a finished frame (tp_net_finish). */
void
tp_shard_tx(struct tp_engine *eng, struct rte_mbuf *m, const uint8_t dst_gid[16],
	    bool need_host)
{
	if (need_host) {
		to_engine0(eng, m, dst_gid);
		return;
	}
	if (eng->idx >= droce_link_queues(eng->dev->link)) {
		to_engine0(eng, m, NULL);
		return;
	}
	/* tp_shard_tx_room made the room */
	eng->txq[eng->txq_len++] = m;
}

/*
 * Engine >= 1, before it builds a frame (tp_net_alloc): room on its own
 * tx queue, and in engine 0's tx_in, which any frame may need (no MAC
 * yet, or no queue of its own).  tx_in has neng - 1 producers, each of
 * which checks and then enqueues at most one frame: with neng free slots
 * at the check, the enqueue that follows cannot find the ring full.
 */
bool
tp_shard_tx_room(struct tp_engine *eng)
{
	struct tp_dev *dev = eng->dev;

	if (rte_ring_free_count(dev->eng[0]->tx_in) < dev->neng)
		return false;
	if (eng->idx >= droce_link_queues(dev->link))
		return true;
	if (eng->txq_len == TP_TXQ_SIZE)
		tp_net_flush(eng);
	return eng->txq_len < TP_TXQ_SIZE;
}

static bool
gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, 16) == 0;
}

/*
 * Engine 0, after sending a frame of engine k that had no MAC: once the
 * host stack knows the MAC, tell engine k, so its QPs to that peer stop
 * going through engine 0 (tp_shard_mac_in).  A full ring loses the news;
 * the next such frame brings it again.
 */
static void
tell_mac(struct tp_dev *dev, uint32_t k, const uint8_t gid[16])
{
	struct tp_mac_upd u = { .pad = { 0, 0 } };

	if (k == 0 || k >= dev->neng ||
	    net_host_resolve(dev->host, gid, (struct rte_ether_addr *)u.mac) != 0)
		return;
	memcpy(u.gid, gid, 16);
	(void)rte_ring_mp_enqueue_elem(dev->eng[k]->mac_in, &u, sizeof(u));
}

/*
 * Engine k >= 1: learn the MACs engine 0 resolved for it.  Its QPs to
 * such a peer that still had no MAC (unresolved when they went to RTR)
 * get it, and their header template is rebuilt at the next packet.  Only
 * MACs that were missing are filled: a peer changing its MAC later is
 * followed at the QP's next modify_qp.  UD address handles are not
 * updated (their frames keep going through engine 0 until resolved at
 * creation).
 */
void
tp_shard_mac_in(struct tp_engine *eng)
{
	struct tp_mac_upd u[8];
	unsigned int n;

	n = rte_ring_sc_dequeue_burst_elem(eng->mac_in, u, sizeof(u[0]),
					   RTE_DIM(u), NULL);
	for (unsigned int i = 0; i < n; i++) {
		for (uint32_t j = 0; j < eng->nlive; j++) {
			struct tp_qp *qp = eng->live[j];

			if (memcmp(qp->av.dgid, u[i].gid, 16) != 0 ||
			    !tp_mac_is_zero(qp->av.dmac))
				continue;
			memcpy(qp->av.dmac, u[i].mac, 6);
			qp->tx_tmpl_ok = false;
		}
	}
}

/* Engine 0: send what the other engines handed over (after its own flush). */
void
tp_shard_tx_in(struct tp_engine *eng)
{
	struct tp_dev *dev = eng->dev;
	struct tp_txh h[32];
	unsigned int n;

	/* no more than the txq has room for: the rest waits in the ring,
	 * whose lack of room holds the other engines back (tp_shard_tx_room) */
	if (eng->txq_len == TP_TXQ_SIZE)
		tp_net_flush(eng);
	n = rte_ring_sc_dequeue_burst_elem(eng->tx_in, h, sizeof(h[0]),
					   RTE_MIN(RTE_DIM(h),
						   TP_TXQ_SIZE - eng->txq_len), NULL);
	for (unsigned int i = 0; i < n; i++) {
		if (!gid_is_zero(h[i].gid)) {
			tp_net_flush(eng);	/* keep the order of what is queued */
			net_host_output(dev->host, h[i].gid, h[i].m);
			tell_mac(dev, h[i].eng, h[i].gid);
			continue;
		}
		eng->txq[eng->txq_len++] = h[i].m;
	}
	if (n != 0)
		tp_net_flush(eng);
}

static struct rte_ring *
mpsc_ring(unsigned int esize)
{
	unsigned int size = TP_ENGINE_RING;
	ssize_t bytes = rte_ring_get_memsize_elem(esize, size);
	struct rte_ring *r;

	if (bytes < 0)
		return NULL;
	r = rte_zmalloc("droce_shard_ring", (size_t)bytes, RTE_CACHE_LINE_SIZE);
	if (r != NULL && rte_ring_init(r, "droce_shard", size, RING_F_SC_DEQ) != 0) {
		rte_free(r);
		r = NULL;
	}
	return r;
}

/* Control path, before the engines start: eng's hand-off rings. */
int
tp_shard_rings(struct tp_engine *eng)
{
	eng->rx_in = mpsc_ring(sizeof(void *));
	if (eng->idx == 0)
		eng->tx_in = mpsc_ring(sizeof(struct tp_txh));
	else
		eng->mac_in = mpsc_ring(sizeof(struct tp_mac_upd));
	if (eng->rx_in == NULL || (eng->tx_in == NULL && eng->mac_in == NULL)) {
		tp_shard_rings_free(eng);
		return -ENOMEM;
	}
	return 0;
}

/* Control path, after the engines left their lcores; frees what waits. */
void
tp_shard_rings_free(struct tp_engine *eng)
{
	void *m;

	if (eng->rx_in != NULL)
		while (rte_ring_sc_dequeue(eng->rx_in, &m) == 0)
			rte_pktmbuf_free(m);
	if (eng->tx_in != NULL) {
		struct tp_txh h;

		while (rte_ring_sc_dequeue_elem(eng->tx_in, &h, sizeof(h)) == 0)
			rte_pktmbuf_free(h.m);
	}
	rte_free(eng->rx_in);
	rte_free(eng->tx_in);
	rte_free(eng->mac_in);
	eng->rx_in = NULL;
	eng->tx_in = NULL;
	eng->mac_in = NULL;
}
