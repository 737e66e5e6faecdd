/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loss knob (ethdev_link_config.drop): DPDK rx/tx callbacks on each
 * queue pair, installed only when the knob is set, so the driver's own
 * fast path (ethdev_rxtx.c) has no test code.
 *
 * Receive: a lost frame is freed before the driver sees it.  Transmit: a
 * tx callback cannot keep a frame from the PMD without breaking what
 * rte_eth_tx_burst() returns (the caller owns the frames after the
 * count), so a lost frame still leaves, with the IEEE 802 local
 * experimental EtherType 0x88B5 that no receiver (Linux, droce) delivers.
 * Frames shared with someone else (refcnt > 1, indirect) are never lost:
 * their bytes are not ours to change.
 */
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "ethdev_private.h"

#define ETHDEV_FAULT_ETHERTYPE 0x88B5	/* IEEE 802 local experimental 1 */

/* splitmix64: the knob's deterministic draws */
static bool
fault_draw(struct ethdev_queue *eq)
{
	uint64_t z = (eq->rng += 0x9e3779b97f4a7c15ull);

	if (eq->drop_limit != 0 &&
	    __atomic_load_n(&eq->fault_drops, __ATOMIC_RELAXED) >= eq->drop_limit)
		return false;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	if ((z ^ (z >> 31)) >= eq->drop_below)
		return false;
	ethdev_count(&eq->fault_drops, 1);
	return true;
}

static uint16_t
fault_rx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	 struct rte_mbuf **pkts, uint16_t n, uint16_t max __rte_unused, void *arg)
{
	struct ethdev_queue *eq = arg;
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (fault_draw(eq))
			rte_pktmbuf_free(pkts[i]);
		else
			pkts[k++] = pkts[i];
	}
	return k;
}

static uint16_t
fault_tx(uint16_t port __rte_unused, uint16_t queue __rte_unused,
	 struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct ethdev_queue *eq = arg;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct rte_ether_hdr *eh;

		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 ||
		    rte_pktmbuf_data_len(m) < sizeof(*eh) || !fault_draw(eq))
			continue;
		eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		eh->ether_type = rte_cpu_to_be_16(ETHDEV_FAULT_ETHERTYPE);
	}
	return n;
}

int
ethdev_fault_install(struct ethdev_priv *p, double drop, uint64_t seed,
		     uint64_t limit)
{
	/* the draw is a 64-bit number below drop * 2^64 */
	uint64_t below = drop >= 1 ? UINT64_MAX :
			 (uint64_t)(drop * 18446744073709551616.0);

	if (below == 0)
		return 0;
	for (uint16_t q = 0; q < p->nb_queues; q++) {
		struct ethdev_queue *eq = &p->q[q];

		eq->drop_below = below;
		eq->drop_limit = limit;
		eq->rng = seed + q;
		eq->rx_cb = rte_eth_add_rx_callback(p->port_id, q, fault_rx, eq);
		eq->tx_cb = rte_eth_add_tx_callback(p->port_id, q, fault_tx, eq);
		if (eq->rx_cb == NULL || eq->tx_cb == NULL)
			return -rte_errno;
	}
	ETHDEV_LOG(WARNING, "fault injection: losing %.4f of the frames each way, "
		   "seed %" PRIu64 ", at most %" PRIu64 " per queue (0: no limit)",
		   drop, seed, limit);
	return 0;
}

void
ethdev_fault_remove(struct ethdev_priv *p)
{
	for (uint16_t q = 0; q < ETHDEV_LINK_MAX_QUEUES; q++) {
		struct ethdev_queue *eq = &p->q[q];

		if (eq->rx_cb != NULL)
			(void)rte_eth_remove_rx_callback(p->port_id, q, eq->rx_cb);
		if (eq->tx_cb != NULL)
			(void)rte_eth_remove_tx_callback(p->port_id, q, eq->tx_cb);
	}
}

/* After the port stopped: no lcore runs a callback any more. */
void
ethdev_fault_free(struct ethdev_priv *p)
{
	for (uint16_t q = 0; q < ETHDEV_LINK_MAX_QUEUES; q++) {
		rte_free((void *)(uintptr_t)p->q[q].rx_cb);
		rte_free((void *)(uintptr_t)p->q[q].tx_cb);
		p->q[q].rx_cb = p->q[q].tx_cb = NULL;
	}
}
