/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several transport lcores per device: the device's QPs are sharded by
 * QPN (tp_qpn_shard: QPN modulo the number of shards) over N transport
 * lcores; shard k polls rx queue k and sends on tx queue k of the link
 * (when the link has that many queues, droce_link_queues()).
 *
 * Correctness never depends on where the NIC (RSS, af_packet fanout) put
 * a frame:
 *   - a RoCE frame whose destination QP belongs to another shard is handed
 *     to the owner through the owner's rx_in ring (MP/SC: any shard may
 *     hand over; no locks) and processed there (tp_recv.c);
 *   - a frame that is not RoCE (ARP, ND, ICMP...) received by shard k >= 1
 *     goes to shard 0, which owns lib/net's host stack;
 *   - a shard without a tx queue of its own (a single-queue link such as
 *     drivers/vwire) sends through shard 0's tx_in ring;
 *   - shards >= 1 never call into lib/net (its neighbour table is not
 *     thread-safe): they use the MAC resolved when the QP went to RTR;
 *     while that is unknown, their frames go to shard 0 with the
 *     destination GID, which resolves and sends them (net_host_output)
 *     and then tells the shard the MAC (mac_in, tp_shard_mac_in).
 *
 * Everything else a shard touches on the data path is its own: its QPs
 * (and their work queues, timers), its transmit queue, its counters
 * (summed for telemetry), its QSBR reader slot, and its ring in each CQ
 * (tp_cq_push; a CQ may be shared by QPs of different shards, and
 * droce_poll_cq polls each shard's ring in turn).  Control commands stop the other shards
 * of the device while they run (tp_lcore.c), so the QP table, the live
 * list and the CQ list change only while no shard reads them.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "net_host.h"
#include "tp_private.h"

RTE_DEFINE_PER_LCORE(unsigned int, tp_shard_id);

int
tp_shard_reader(const struct tp_dev *dev, unsigned int s)
{
	return s == 0 ? dev->prot_reader : dev->sh[s]->prot_reader;
}

/* Frames this shard received on its queue and that other shards handed it. */
uint16_t
tp_shard_rx(struct tp_dev *dev, unsigned int s, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t got = 0;

	if (s < droce_link_queues(dev->link)) {
		got = droce_link_rx_q(dev->link, (uint16_t)s, pkts, n);
		dev->cnt[s][TP_CNT_SHARD_LINK_RX] += got;
	}
	if (dev->nshards > 1 && got < n)
		got += (uint16_t)rte_ring_sc_dequeue_burst(dev->sh[s]->rx_in,
							    (void **)(pkts + got),
							    n - got, NULL);
	return got;
}

/* Hand a received frame to shard owner; false: dropped (the caller frees). */
bool
tp_shard_handoff(struct tp_dev *dev, unsigned int owner, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(dev->sh[owner]->rx_in, m) != 0) {
		tp_count(dev, TP_CNT_HANDOFF_DROP);
		return false;
	}
	tp_count(dev, TP_CNT_HANDOFF_RX);
	return true;
}

static void
to_shard0(struct tp_dev *dev, struct rte_mbuf *m, const uint8_t gid[16])
{
	struct tp_txh h = { .m = m, .shard = tp_cur_shard() };

	if (gid != NULL)
		memcpy(h.gid, gid, 16);
	if (rte_ring_mp_enqueue_elem(dev->sh[0]->tx_in, &h, sizeof(h)) != 0) {
		/* lost: the transport's retransmission recovers it */
		tp_count(dev, TP_CNT_HANDOFF_DROP);
		rte_pktmbuf_free(m);
		return;
	}
	tp_count(dev, TP_CNT_HANDOFF_TX);
}

/* Shard >= 1: queue a finished frame (tp_net_finish). */
void
tp_shard_tx(struct tp_dev *dev, struct rte_mbuf *m, const uint8_t dst_gid[16],
	    bool need_host)
{
	unsigned int s = tp_cur_shard();
	struct tp_shard *sh = dev->sh[s];

	if (need_host) {
		to_shard0(dev, m, dst_gid);
		return;
	}
	if (s >= droce_link_queues(dev->link)) {
		to_shard0(dev, m, NULL);
		return;
	}
	/* tp_shard_tx_room made the room */
	sh->txq[sh->txq_len++] = m;
}

/*
 * Shard >= 1, before it builds a frame (tp_net_alloc): room on its own
 * tx queue, and in shard 0's tx_in, which any frame may need (no MAC yet,
 * or no queue of its own).  tx_in has nshards - 1 producers, each of which
 * checks and then enqueues at most one frame: with nshards free slots at
 * the check, the enqueue that follows cannot find the ring full.
 */
bool
tp_shard_tx_room(struct tp_dev *dev)
{
	unsigned int s = tp_cur_shard();
	struct tp_shard *sh = dev->sh[s];

	if (rte_ring_free_count(dev->sh[0]->tx_in) < dev->nshards)
		return false;
	if (s >= droce_link_queues(dev->link))
		return true;
	if (sh->txq_len == TP_TXQ_SIZE)
		tp_shard_flush(dev);
	return sh->txq_len < TP_TXQ_SIZE;
}

/* Shard >= 1: send its queue on its own tx queue. */
void
tp_shard_flush(struct tp_dev *dev)
{
	unsigned int s = tp_cur_shard();
	struct tp_shard *sh = dev->sh[s];
	uint16_t sent;

	if (sh->txq_len == 0)
		return;
	sent = droce_link_tx_q(dev->link, (uint16_t)s, sh->txq, (uint16_t)sh->txq_len);
	if (sent < sh->txq_len)
		memmove(sh->txq, sh->txq + sent, (sh->txq_len - sent) * sizeof(sh->txq[0]));
	sh->txq_len -= sent;
}

static bool
mac_is_zero(const uint8_t mac[6])
{
	return (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0;
}

static bool
gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return memcmp(gid, zero, 16) == 0;
}

/*
 * Shard 0, after sending a frame of shard k that had no MAC: once the
 * host stack knows the MAC, tell shard k, so its QPs to that peer stop
 * going through shard 0 (tp_shard_mac_in).  A full ring loses the news;
 * the next such frame brings it again.
 */
static void
tell_mac(struct tp_dev *dev, uint32_t shard, const uint8_t gid[16])
{
	struct tp_mac_upd u = { .pad = { 0, 0 } };

	if (shard == 0 || shard >= dev->nshards ||
	    net_host_resolve(dev->host, gid, (struct rte_ether_addr *)u.mac) != 0)
		return;
	memcpy(u.gid, gid, 16);
	(void)rte_ring_mp_enqueue_elem(dev->sh[shard]->mac_in, &u, sizeof(u));
}

/*
 * Shard k >= 1: learn the MACs shard 0 resolved for it.  Its QPs to such
 * a peer that still had no MAC (unresolved when they went to RTR) get it,
 * and their header template is rebuilt at the next packet.  Only MACs
 * that were missing are filled: a peer changing its MAC later is followed
 * at the QP's next modify_qp.  UD address handles are not updated (their
 * frames keep going through shard 0 until resolved at creation).
 */
void
tp_shard_mac_in(struct tp_dev *dev, unsigned int s)
{
	struct tp_mac_upd u[8];
	unsigned int n;

	n = rte_ring_sc_dequeue_burst_elem(dev->sh[s]->mac_in, u, sizeof(u[0]),
					   RTE_DIM(u), NULL);
	for (unsigned int i = 0; i < n; i++) {
		for (uint32_t j = 0; j < dev->nlive; j++) {
			struct tp_qp *qp = dev->live[j];

			if (tp_qpn_shard(dev, qp->pub.qp_num) != s ||
			    memcmp(qp->av.dgid, u[i].gid, 16) != 0 ||
			    !mac_is_zero(qp->av.dmac))
				continue;
			memcpy(qp->av.dmac, u[i].mac, 6);
			qp->tx_tmpl_ok = false;
		}
	}
}

/* Shard 0: send what the other shards handed over (after its own flush). */
void
tp_shard_tx_in(struct tp_dev *dev)
{
	struct tp_txh h[32];
	unsigned int n;

	/* no more than the txq has room for: the rest waits in the ring,
	 * whose lack of room holds the other shards back (tp_shard_tx_room) */
	if (dev->txq_len == TP_TXQ_SIZE)
		tp_net_flush(dev);
	n = rte_ring_sc_dequeue_burst_elem(dev->sh[0]->tx_in, h, sizeof(h[0]),
					   RTE_MIN(RTE_DIM(h),
						   TP_TXQ_SIZE - dev->txq_len), NULL);
	for (unsigned int i = 0; i < n; i++) {
		if (dev->host != NULL && !gid_is_zero(h[i].gid)) {
			tp_net_flush(dev);	/* keep the order of what is queued */
			net_host_output(dev->host, h[i].gid, h[i].m);
			tell_mac(dev, h[i].shard, h[i].gid);
			continue;
		}
		dev->txq[dev->txq_len++] = h[i].m;
	}
	if (n != 0)
		tp_net_flush(dev);
}

static void
shard_free(struct tp_shard *sh)
{
	void *m;

	if (sh == NULL)
		return;
	if (sh->rx_in != NULL)
		while (rte_ring_sc_dequeue(sh->rx_in, &m) == 0)
			rte_pktmbuf_free(m);
	if (sh->tx_in != NULL) {
		struct tp_txh h;

		while (rte_ring_sc_dequeue_elem(sh->tx_in, &h, sizeof(h)) == 0)
			rte_pktmbuf_free(h.m);
	}
	rte_free(sh->mac_in);
	for (uint32_t i = 0; i < sh->txq_len; i++)
		rte_pktmbuf_free(sh->txq[i]);
	rte_free(sh->rx_in);
	rte_free(sh->tx_in);
	rte_free(sh);
}

static struct rte_ring *
mpsc_ring(unsigned int esize)
{
	unsigned int size = TP_SHARD_RING;
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

/* Control path, before the shards start: n shards' state. */
int
tp_shards_alloc(struct tp_dev *dev, unsigned int n)
{
	if (n < 2 || n > TP_MAX_SHARDS)
		return -EINVAL;
	for (unsigned int k = 0; k < n; k++) {
		struct tp_shard *sh = rte_zmalloc("droce_shard", sizeof(*sh),
						  RTE_CACHE_LINE_SIZE);

		dev->sh[k] = sh;
		if (sh == NULL)
			goto nomem;
		sh->prot_reader = -1;
		sh->rx_in = mpsc_ring(sizeof(void *));
		if (sh->rx_in == NULL)
			goto nomem;
		if (k == 0) {
			sh->tx_in = mpsc_ring(sizeof(struct tp_txh));
			if (sh->tx_in == NULL)
				goto nomem;
		} else {
			sh->mac_in = mpsc_ring(sizeof(struct tp_mac_upd));
			if (sh->mac_in == NULL)
				goto nomem;
			dev->cnt[k] = sh->counters;
		}
	}
	dev->nshards = n;
	return 0;
nomem:
	tp_shards_free(dev);
	return -ENOMEM;
}

/* Control path, after every shard left its lcore. */
void
tp_shards_free(struct tp_dev *dev)
{
	/* what the shards counted stays in shard 0's counters */
	for (unsigned int k = 1; k < dev->nshards; k++)
		if (dev->sh[k] != NULL)
			for (unsigned int c = 0; c < TP_CNT_MAX; c++)
				dev->counters[c] += dev->sh[k]->counters[c];
	for (unsigned int k = 0; k < TP_MAX_SHARDS; k++) {
		shard_free(dev->sh[k]);
		dev->sh[k] = NULL;
		dev->cnt[k] = k == 0 ? dev->counters : NULL;
	}
	dev->nshards = 1;
}
