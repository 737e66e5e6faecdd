/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link-driver interface: what the transport needs from "a wire".
 *
 * A link moves whole Ethernet frames in rte_mbufs and knows nothing about
 * RoCE: protocol logic never lives in drivers/.  Drivers implement
 * struct droce_link_ops (drivers/vwire: an in-process virtual wire with
 * fault injection; drivers/ethdev: any DPDK port) and the transport calls
 * them only through the inline wrappers below, the way rte_eth_rx_burst()
 * calls into a PMD.
 *
 * Threading: a link is polled by exactly one lcore (the one owning the
 * QPs that use it); rx_burst and tx_burst are not thread-safe.
 *
 * Queues: a link may offer nb_queues > 1 rx/tx queue pairs (drivers/ethdev
 * with RSS or af_packet fanout), each polled by one lcore of its own
 * through rx_burst_q / tx_burst_q.  Queue 0 of a link without the _q ops
 * is rx_burst / tx_burst, so single-queue drivers (drivers/vwire) need
 * nothing new.
 */
#ifndef DROCE_LINK_H
#define DROCE_LINK_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

struct droce_link;

struct droce_link_ops {
	/* Receive up to n frames; the caller owns (and frees) what it gets. */
	uint16_t (*rx_burst)(struct droce_link *link, struct rte_mbuf **pkts,
			     uint16_t n);
	/*
	 * Send up to n frames; returns how many were taken.  The link owns the
	 * taken mbufs (and frees them); the caller keeps the rest.
	 */
	uint16_t (*tx_burst)(struct droce_link *link, struct rte_mbuf **pkts,
			     uint16_t n);
	/* Release the link and everything it holds. */
	void (*close)(struct droce_link *link);
	/* Optional: the same on queue q < nb_queues (q 0 may differ from the
	 * above only in which hardware queue it uses). */
	uint16_t (*rx_burst_q)(struct droce_link *link, uint16_t q,
			       struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx_burst_q)(struct droce_link *link, uint16_t q,
			       struct rte_mbuf **pkts, uint16_t n);
	/* Optional: the carrier, 1 up, 0 down, < 0 unknown.  Asked every few
	 * ms by the lcore that polls queue 0 (port events). */
	int (*link_status)(struct droce_link *link);
};

struct droce_link {
	const struct droce_link_ops *ops;
	char name[32];
	struct rte_ether_addr mac;	/* this end's MAC address */
	uint32_t mtu;			/* IP MTU of the link (1500, 4200, 9000...) */
	struct rte_mempool *pool;	/* mbufs for frames this end sends */
	void *priv;			/* driver state */
	uint16_t nb_queues;		/* rx/tx queue pairs; 0 means 1 */
};

static inline uint16_t
droce_link_queues(const struct droce_link *link)
{
	return link->ops->rx_burst_q == NULL || link->nb_queues == 0 ? 1 :
	       link->nb_queues;
}

static inline uint16_t
droce_link_rx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return link->ops->rx_burst(link, pkts, n);
}

static inline uint16_t
droce_link_tx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return link->ops->tx_burst(link, pkts, n);
}

/* Queue q of the link (q < droce_link_queues(link)). */
static inline uint16_t
droce_link_rx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		uint16_t n)
{
	if (link->ops->rx_burst_q == NULL)
		return link->ops->rx_burst(link, pkts, n);
	return link->ops->rx_burst_q(link, q, pkts, n);
}

static inline uint16_t
droce_link_tx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts,
		uint16_t n)
{
	if (link->ops->tx_burst_q == NULL)
		return link->ops->tx_burst(link, pkts, n);
	return link->ops->tx_burst_q(link, q, pkts, n);
}

/* The carrier: 1 up, 0 down, < 0 unknown (no link_status op). */
static inline int
droce_link_status(struct droce_link *link)
{
	return link->ops->link_status != NULL ? link->ops->link_status(link) : -1;
}

static inline void
droce_link_close(struct droce_link *link)
{
	if (link != NULL)
		link->ops->close(link);
}

#endif /* DROCE_LINK_H */
