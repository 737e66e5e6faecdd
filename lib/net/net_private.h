/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net internals: the host, its addresses, the neighbour table, the
 * small transmit buffer for answers and probes, and the helpers the
 * protocol files (net_arp.c, net_ipv4.c, net_ipv6.c) share.
 */
#ifndef NET_PRIVATE_H
#define NET_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "droce_link.h"
#include "net_host.h"

extern int net_logtype;
#define NET_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, net_logtype, "net: " fmt "\n", ##__VA_ARGS__)

/*
 * Answers and probes batched per flush; frames the link refuses stay
 * here, in order, for the next flush (tx_held), so this also bounds what
 * is kept for a link that takes nothing: a frame finding it full of
 * refused frames is freed (tx_fail).
 */
#define NET_TXBUF_SIZE		32
#define NET_ROCE_PORT		4791
#define NET_HOP_LIMIT		64	/* IPv4 TTL / IPv6 hop limit of answers */
#define NET_ND_HOP_LIMIT	255	/* RFC 4861: ND messages */
#define NET_ICMP6_NS		135
#define NET_ICMP6_NA		136
#define NET_ICMP6_ECHO_REQUEST	128
#define NET_ICMP6_ECHO_REPLY	129
#define NET_ND_OPT_SLLA		1	/* source link-layer address */
#define NET_ND_OPT_TLLA		2	/* target link-layer address */
#define NET_NA_FLAG_ROUTER	0x80
#define NET_NA_FLAG_SOLICITED	0x40
#define NET_NA_FLAG_OVERRIDE	0x20

struct net_addr {
	uint8_t gid[16];
	uint8_t prefix_len;	/* of the IPv4 address for IPv4-mapped GIDs */
	bool v4;
};

struct net_neigh {
	uint8_t gid[16];
	enum net_neigh_state state;	/* NET_NEIGH_NONE: free slot */
	struct rte_ether_addr mac;
	uint64_t deadline;	/* next probe / STALE time / forget time */
	uint64_t last_used;	/* resolve/output: eviction order */
	uint32_t gen;		/* changes whenever state or mac does:
				 * struct net_neigh_ref */
	uint32_t tries;		/* probes sent in this round */
	bool probing;		/* STALE being refreshed */
	/* held frames, oldest first, linked through net_pend_next() */
	struct rte_mbuf *pend_head;
	struct rte_mbuf *pend_tail;
	uint32_t pend_count;
	uint32_t pend_bytes;
};

/* ICMPv6 Neighbor Solicitation / Advertisement body (RFC 4861 4.3, 4.4). */
struct net_nd_msg {
	uint8_t type;
	uint8_t code;
	rte_be16_t cksum;
	uint8_t flags;		/* NA: R S O; NS: reserved */
	uint8_t reserved[3];
	uint8_t target[16];
} __rte_packed;

/* A link-layer address option for Ethernet (8 bytes). */
struct net_nd_opt_lla {
	uint8_t type;
	uint8_t len;		/* in units of 8 bytes: 1 */
	uint8_t mac[RTE_ETHER_ADDR_LEN];	/* bytes: may be unaligned */
} __rte_packed;

struct net_host {
	struct droce_link *link;
	struct net_addr addrs[NET_HOST_MAX_ADDRS];
	unsigned int naddrs;

	uint64_t now;		/* the host's clock: last net_host_timer() */
	uint64_t next_deadline;	/* earliest neighbour deadline */
	uint64_t retry_tsc;
	uint64_t reachable_tsc;
	uint64_t failed_tsc;
	uint32_t tries;
	uint32_t pend_bytes_max;	/* per neighbour */
	uint32_t pend_total_max;
	uint32_t pend_total;	/* bytes held for all neighbours */
	int pend_next_off;	/* mbuf dynamic field: the next held frame */
	net_host_output_fn out;	/* where released frames go; NULL: net_tx_try */
	net_host_released_fn released;	/* told when a neighbour's last
					 * held frame was taken */
	bool table_only;	/* net_host_config.table_only */
	bool release_again;	/* a resolved neighbour keeps frames the
				 * output refused: offer them again */
	void *out_arg;

	struct net_neigh *neigh;
	uint32_t neigh_max;
	uint32_t neigh_used;	/* slots [0, neigh_used) may be in use */
	uint32_t neigh_gen;	/* the last generation handed out */

	struct rte_mbuf *txbuf[NET_TXBUF_SIZE];
	unsigned int txbuf_len;

	uint64_t counters[NET_CNT_MAX];
};

static inline struct rte_mbuf **
net_pend_next(const struct net_host *h, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, h->pend_next_off, struct rte_mbuf **);
}

static inline void
net_count(struct net_host *h, enum net_counter c)
{
	h->counters[c]++;
}

static inline bool
net_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

static inline void
net_gid_from_v4(uint8_t gid[16], rte_be32_t ip)
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &ip, 4);
}

static inline rte_be32_t
net_gid_v4(const uint8_t gid[16])
{
	rte_be32_t ip;

	memcpy(&ip, gid + 12, 4);
	return ip;
}

static inline bool
net_gid_is_multicast_or_zero(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	if (net_gid_is_v4(gid)) {
		uint8_t a = gid[12];

		return (a >= 224) || memcmp(gid + 12, zero, 4) == 0;
	}
	return gid[0] == 0xff || memcmp(gid, zero, 16) == 0;
}

/* net_host.c */
const struct net_addr *net_addr_find(const struct net_host *h,
				     const uint8_t gid[16]);
const struct net_addr *net_addr_for_peer(const struct net_host *h,
					 const uint8_t gid[16], int *err);
bool net_addr_solicited(const struct net_host *h, const uint8_t dst[16],
			const uint8_t **target);
int net_tx_try(struct net_host *h, struct rte_mbuf *m);
void net_tx(struct net_host *h, struct rte_mbuf *m);
void net_tx_flush(struct net_host *h);

/* net_neigh.c */
void net_neigh_learn(struct net_host *h, const uint8_t gid[16],
		     const struct rte_ether_addr *mac, bool create);
void net_neigh_confirm(struct net_host *h, const uint8_t gid[16]);
void net_neigh_release_again(struct net_host *h);

/* net_arp.c */
void net_arp_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off);
int net_arp_probe(struct net_host *h, const struct net_addr *src,
		  const uint8_t target[16], const struct rte_ether_addr *dmac);

/* net_ipv4.c / net_ipv6.c: true when m is a RoCE frame to keep */
bool net_ipv4_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off);
bool net_ipv6_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off);
int net_nd_probe(struct net_host *h, const struct net_addr *src,
		 const uint8_t target[16], const struct rte_ether_addr *dmac);

#endif /* NET_PRIVATE_H */
