/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/ethdev internals.  Counters have one writer (the polling lcore)
 * and are stored with relaxed atomics so stats can be read anywhere.
 */
#ifndef ETHDEV_PRIVATE_H
#define ETHDEV_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_dev.h>
#include <rte_flow.h>
#include <rte_log.h>

#include "droce_link.h"
#include "ethdev_link.h"

extern int ethdev_link_logtype;
#define ETHDEV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, ethdev_link_logtype, "ethdev_link: " fmt "\n", \
		##__VA_ARGS__)

/* Flow rules installed with flow_isolate: UDP/4791 v4+v6, ARP, ICMPv6. */
#define ETHDEV_FLOW_MAX 4

struct ethdev_counters {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t tx_full;
	uint64_t rx_linearized;
	uint64_t rx_multiseg_drops;
};

/* One rx/tx queue pair's own state: each is polled by one lcore. */
struct ethdev_queue {
	struct ethdev_counters cnt;
	/* the loss knob (ethdev_fault.c): per queue, so no lock */
	uint64_t rng;
	uint64_t drop_below;		/* a draw below this loses the frame */
	uint64_t drop_limit;		/* fault_drops stop there; 0: never */
	uint64_t fault_drops;
	const struct rte_eth_rxtx_callback *rx_cb;	/* NULL: knob off */
	const struct rte_eth_rxtx_callback *tx_cb;
} __rte_cache_aligned;

struct ethdev_priv {
	struct droce_link link;
	uint16_t port_id;
	uint16_t rxq;			/* the queue rx_burst polls (0) */
	uint16_t txq;
	uint16_t nb_queues;		/* rx/tx queue pairs configured */
	bool rss;			/* the port spreads frames by RSS */
	bool probed;			/* we probed devargs: remove on close */
	bool configured;		/* close the port on teardown */
	bool started;
	bool memif_guarded;		/* net_memif: see ethdev_memif.c */
	bool memif_closed;		/* stopped and closed by the guard */
	char dev_name[RTE_DEV_NAME_MAX_LEN];
	struct rte_flow *flows[ETHDEV_FLOW_MAX];
	unsigned int nb_flows;
	struct ethdev_queue q[ETHDEV_LINK_MAX_QUEUES];
};

static inline struct ethdev_priv *
ethdev_priv(const struct droce_link *link)
{
	return link->priv;
}

/* Add to a counter only the polling lcore writes. */
static inline void
ethdev_count(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* ethdev_rxtx.c */
uint16_t ethdev_rx_burst(struct droce_link *link, struct rte_mbuf **pkts,
			 uint16_t n);
uint16_t ethdev_tx_burst(struct droce_link *link, struct rte_mbuf **pkts,
			 uint16_t n);
uint16_t ethdev_rx_burst_q(struct droce_link *link, uint16_t q,
			   struct rte_mbuf **pkts, uint16_t n);
uint16_t ethdev_tx_burst_q(struct droce_link *link, uint16_t q,
			   struct rte_mbuf **pkts, uint16_t n);

/* ethdev_fault.c: the loss knob as rx/tx callbacks on each queue pair */
int ethdev_fault_install(struct ethdev_priv *p, double drop, uint64_t seed,
			 uint64_t limit);
void ethdev_fault_remove(struct ethdev_priv *p);
void ethdev_fault_free(struct ethdev_priv *p);

/* ethdev_memif.c: net_memif ports closed away from memif's own thread */
int ethdev_memif_guard_add(struct ethdev_priv *p);
void ethdev_memif_guard_close(struct ethdev_priv *p);

/* ethdev_flow.c */
/* nb_queues > 1: the RoCE rules spread by RSS over queues 0..nb_queues-1 */
int ethdev_flow_validate(uint16_t port_id, uint16_t nb_queues, bool arp_nd);
int ethdev_flow_create(struct ethdev_priv *p, bool arp_nd);
void ethdev_flow_destroy(struct ethdev_priv *p);

#endif /* ETHDEV_PRIVATE_H */
