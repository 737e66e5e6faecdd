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
};

struct droce_link {
	const struct droce_link_ops *ops;
	char name[32];
	struct rte_ether_addr mac;	/* this end's MAC address */
	uint32_t mtu;			/* IP MTU of the link (1500, 4200, 9000...) */
	struct rte_mempool *pool;	/* mbufs for frames this end sends */
	void *priv;			/* driver state */
};

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

static inline void
droce_link_close(struct droce_link *link)
{
	if (link != NULL)
		link->ops->close(link);
}

#endif /* DROCE_LINK_H */
