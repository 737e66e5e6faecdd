/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net: the small host stack a port needs because droce owns it.
 *
 * When droce drives a port, nobody else answers ARP, ICMP echo or IPv6
 * neighbour discovery for its addresses, and nobody resolves its peers'
 * MAC addresses.  A struct net_host does that for one link: local IPv4 and
 * IPv6 addresses (as 16-byte GIDs, IPv4-mapped ::ffff:a.b.c.d for IPv4),
 * a neighbour table (GID -> MAC) with INCOMPLETE / REACHABLE / STALE /
 * FAILED states, aging, the frames waiting for an unresolved neighbour
 * (held within a byte budget per neighbour and in total), and counters.
 *
 * Use from the progress loop of the lcore that polls the link:
 *
 *	n = droce_link_rx(link, pkts, BURST);
 *	k = net_host_rx(host, pkts, n);     pkts[0, k): RoCEv2 for the transport
 *	... transport receives pkts[0, k) ...
 *	net_host_timer(host, rte_get_timer_cycles());
 *
 * The transport classifies first (lib/transport tp_recv.c: each frame is
 * parsed once) and gives net_host_rx only what is not RoCEv2.
 *
 * and before sending to a GID, net_host_resolve() (or net_host_output()
 * for a frame whose destination MAC is still to be filled in).
 *
 * Threading: single-threaded, owned by that lcore; no locks.  No
 * allocation after net_host_create() except mbufs from the link's pool
 * (for ARP / NS probes).
 *
 * Time: the host's clock is the last `now` (TSC, rte_get_timer_cycles()
 * units) given to net_host_timer(); net_host_create() starts it at
 * rte_get_timer_cycles().  Every deadline is measured on that clock, so
 * tests drive aging and retries with made-up times.
 *
 * Scope: on-link only (no routers, no IPv4 options or fragments, no IPv6
 * extension headers, no VLAN tags on frames we originate).  Frames with
 * one 802.1Q tag are classified and answered with the tag kept.
 */
#ifndef NET_HOST_H
#define NET_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "droce_link.h"

#define NET_HOST_MAX_ADDRS		16	/* also the GID table's size */
#define NET_NEIGH_MAX_DEFAULT		256
/*
 * Frame bytes held for unresolved neighbours.  Per neighbour: a 1 MiB
 * message at any path MTU (1024 packets of MTU 1024 with their headers),
 * which an RC requester may send at once (its window is 1024 packets)
 * before the first ARP/ND answer is back.  In total: two such peers at a
 * time, a fraction of the link's mbuf pool.
 */
#define NET_PENDING_BYTES_DEFAULT	(2u << 20)
#define NET_PENDING_TOTAL_DEFAULT	(4u << 20)
/*
 * ARP/NS every 100 ms, 30 times: the same 3 s as Linux's 3 probes at 1 s
 * before a neighbour is FAILED, but a lost request or answer is repeated
 * well inside an RC QP's retry budget (timeout 14: 8 x 67 ms = 0.54 s).
 * At 1 s, one lost ARP answer left a peer unable to ACK until the other
 * side's WRITE had failed with RETRY_EXC_ERR (net_memif drops the frames a
 * port sends while its peer is still connecting: perf_memif's write_lat,
 * about 1 run in 2).
 */
#define NET_RESOLVE_TRIES_DEFAULT	30
#define NET_RETRY_MS_DEFAULT		100
#define NET_REACHABLE_MS_DEFAULT	60000

struct net_host;

struct net_host_config {
	struct droce_link *link;	/* required; not owned (close it after
					 * net_host_destroy) */
	uint32_t neigh_max;		/* table entries; 0: default */
	uint32_t pending_bytes;		/* frame bytes held per unresolved
					 * neighbour; 0: default */
	uint32_t pending_total;		/* ... for all neighbours together;
					 * 0: default (at least pending_bytes) */
	uint32_t resolve_tries;		/* ARP requests / NS per resolution
					 * (and per STALE refresh); 0: 30 */
	uint32_t retry_ms;		/* between tries; 0: 100 */
	uint32_t reachable_ms;		/* REACHABLE -> STALE; 0: 60000 */
	uint32_t failed_ms;		/* FAILED entry answers -EHOSTUNREACH this
					 * long, then is forgotten; 0: retry_ms */
	bool table_only;		/* the tables without the protocols (a
					 * wire without other hosts: the virtual
					 * wire): no ARP/ND/ICMP, net_host_rx takes
					 * nothing, only static neighbours
					 * resolve */
};

enum net_neigh_state {
	NET_NEIGH_NONE,		/* no entry */
	NET_NEIGH_INCOMPLETE,	/* probing, MAC unknown */
	NET_NEIGH_REACHABLE,	/* MAC confirmed within reachable_ms */
	NET_NEIGH_STALE,	/* MAC known but old; used, and re-probed on use */
	NET_NEIGH_FAILED,	/* tries exhausted: -EHOSTUNREACH */
	NET_NEIGH_PERMANENT,	/* net_host_add_static(): never ages */
};

struct net_neigh_info {
	enum net_neigh_state state;
	struct rte_ether_addr mac;	/* valid unless INCOMPLETE/FAILED */
	uint32_t tries;			/* probes sent in the current round */
	uint32_t pending;		/* frames held for it */
	uint32_t pending_bytes;		/* their bytes (pkt_len) */
};

/*
 * Counters: one table expands into the enum and the names.
 * X(enum suffix, name)
 */
#define NET_COUNTERS(X)							\
	X(RX_PKTS,		"rx_pkts")	/* frames given to net_host_rx */ \
	X(RX_ROCE,		"rx_roce")	/* passed to the transport */	\
	X(RX_ARP_REQUEST,	"rx_arp_request")	/* for our addresses */	\
	X(RX_ARP_REPLY,		"rx_arp_reply")					\
	X(RX_ICMP4_ECHO,	"rx_icmp4_echo")	/* answered */		\
	X(RX_ICMP6_ECHO,	"rx_icmp6_echo")	/* answered */		\
	X(RX_NS,		"rx_ns")	/* for our addresses, answered */ \
	X(RX_NA,		"rx_na")					\
	X(TX_ARP_REQUEST,	"tx_arp_request")				\
	X(TX_ARP_REPLY,		"tx_arp_reply")					\
	X(TX_ICMP4_ECHO_REPLY,	"tx_icmp4_echo_reply")				\
	X(TX_ICMP6_ECHO_REPLY,	"tx_icmp6_echo_reply")				\
	X(TX_NS,		"tx_ns")					\
	X(TX_NA,		"tx_na")					\
	X(TX_PENDING,		"tx_pending")	/* held frames released */	\
	X(TX_HELD,		"tx_held")	/* refused for the moment (by
						 * the link at a flush, or by the
						 * output at a release) and kept
						 * to be offered again: one per
						 * refusal, not a loss */ \
	X(TX_FAIL,		"tx_fail")	/* lost: freed unsent (the
						 * transmit buffer full of
						 * refused frames, or destroy) */ \
	X(TX_NOMBUF,		"tx_nombuf")	/* no mbuf for a probe */	\
	X(DROP_NOT_LOCAL,	"drop_not_local")	/* not to our MAC/IP */	\
	X(DROP_MALFORMED,	"drop_malformed")	/* truncated, bad
							 * checksum/length */ \
	X(DROP_ETHERTYPE,	"drop_ethertype")	/* not ARP/IPv4/IPv6 */	\
	X(DROP_ARP,		"drop_arp")	/* other ARP ops / targets */	\
	X(DROP_IP_PROTO,	"drop_ip_proto")	/* not UDP/ICMP */	\
	X(DROP_UDP_PORT,	"drop_udp_port")	/* UDP, not 4791 */	\
	X(DROP_FRAGMENT,	"drop_fragment")				\
	X(DROP_ICMP,		"drop_icmp")	/* other ICMP/ICMPv6 types */	\
	X(DROP_PENDING,		"drop_pending")	/* held frames lost: failed
						 * resolution, forgotten entry,
						 * destroy */ \
	X(DROP_PENDING_BUDGET,	"drop_pending_budget")	/* not held: over
						 * the byte budget */ \
	X(NEIGH_LEARNED,	"neigh_learned")	/* entry made REACHABLE */ \
	X(NEIGH_STALE,		"neigh_stale")	/* REACHABLE aged to STALE */	\
	X(NEIGH_FAILED,		"neigh_failed")	/* resolutions that failed */ \
	X(NEIGH_EVICTED,	"neigh_evicted")	/* recycled for a new one */ \
	X(NEIGH_FULL,		"neigh_full")	/* no entry free: -ENOBUFS */

enum net_counter {
#define NET_COUNTER_ENUM(e, s) NET_CNT_##e,
	NET_COUNTERS(NET_COUNTER_ENUM)
#undef NET_COUNTER_ENUM
	NET_CNT_MAX
};

/*
 * Create a host stack for cfg->link.  Returns 0 and *out, or -EINVAL
 * (NULL link, zero-size values where not allowed), -ENOMEM.
 */
int net_host_create(const struct net_host_config *cfg, struct net_host **out);

/* Free queued frames (counted as drop_pending) and the host.  NULL is ok. */
void net_host_destroy(struct net_host *h);

/*
 * Add a local address: an IPv4-mapped GID (prefix_len 0..32, of the IPv4
 * address) or an IPv6 GID (0..128).  This is the port's one address
 * table: the n-th address added is GID index n (the transport's GID
 * query and its destination check read it here).  Returns 0, -EEXIST,
 * -ENOSPC (NET_HOST_MAX_ADDRS), -EINVAL (bad prefix, multicast or
 * unspecified).  Control path: add addresses before the engine runs on
 * other lcores (they read the table without a lock).
 */
int net_host_add_addr(struct net_host *h, const uint8_t gid[16],
		      uint8_t prefix_len);

/* The address of GID index index: 0, or -EINVAL past the last one. */
int net_host_addr(const struct net_host *h, unsigned int index, uint8_t gid[16]);

/* True when gid is one of the local addresses. */
bool net_host_is_local(const struct net_host *h, const uint8_t gid[16]);

/* True unless the host was created table_only: it resolves by ARP/ND. */
bool net_host_resolves(const struct net_host *h);

/*
 * Classify a received burst in place.  ARP requests for our addresses are
 * answered (and the sender learned); ARP replies and requests update the
 * table; ICMPv4/ICMPv6 echo requests to our addresses are answered; IPv6
 * Neighbor Solicitations for our addresses (to the address itself or its
 * solicited-node multicast group) are answered with a Neighbor
 * Advertisement (and the solicitor learned); advertisements update the
 * table.  Frames carrying UDP to port 4791 to one of our addresses (IPv4
 * not fragmented; IPv6 UDP as the first next header) stay: they are moved,
 * unchanged and in their order, to pkts[0, k) and k is returned; the
 * caller owns them.  Every other frame is transmitted (answers, in place)
 * or freed and counted.  Not checked here (the transport's parser does
 * it): the IPv4 header checksum and lengths of the RoCE frames.
 * A table_only host takes nothing: every frame is handed back (k == n,
 * uncounted) for the caller to count and free.
 */
uint16_t net_host_rx(struct net_host *h, struct rte_mbuf **pkts, uint16_t n);

/*
 * The MAC address of an on-link GID (IPv4-mapped or IPv6).
 *   0:            *mac set (REACHABLE, STALE or PERMANENT).  A STALE entry
 *                 is still returned, and a unicast probe refreshes it; no
 *                 answer after resolve_tries makes it FAILED.
 *   -EAGAIN:      resolution in progress: the first call sends an ARP
 *                 request / a Neighbor Solicitation; net_host_timer()
 *                 retries every retry_ms.  Also while frames held for the
 *                 neighbour wait for the output to take them
 *                 (net_host_set_output): a frame sent now would overtake
 *                 them.
 *   -EHOSTUNREACH: resolve_tries probes got no answer.  The entry stays
 *                 FAILED for failed_ms; the first call after that starts
 *                 a new resolution (-EAGAIN).  A table_only host: no
 *                 static entry for the GID (nothing is probed).
 *   -ENETUNREACH: the GID is not inside the prefix of a local address
 *                 of its family (no routers).
 *   -EADDRNOTAVAIL: no local address of the GID's family.
 *   -ENOBUFS:     the table is full of entries that cannot be recycled.
 *   -EINVAL:      a local, multicast or unspecified GID.
 * mac may be NULL (just start / check the resolution).
 */
int net_host_resolve(struct net_host *h, const uint8_t gid[16],
		     struct rte_ether_addr *mac);

/*
 * A neighbour handle an address vector caches: the entry's slot and its
 * generation, which changes whenever the entry's state or MAC does (it
 * ages to STALE, fails, is freed or recycled, learns another MAC).  While
 * the generation holds, the MAC is current and no search is needed; gen 0
 * is never valid (a zeroed ref resolves).
 */
struct net_neigh_ref {
	uint32_t idx;
	uint32_t gen;
};

/*
 * net_host_resolve() that also sets *ref: valid when 0 is returned for a
 * REACHABLE or PERMANENT entry, else gen 0 (a STALE entry must go through
 * the resolution each time, which refreshes it).
 */
int net_host_resolve_ref(struct net_host *h, const uint8_t gid[16],
			 struct rte_ether_addr *mac, struct net_neigh_ref *ref);

/*
 * The data path: true and *mac set when ref still names its entry (same
 * generation); false means resolve again (net_host_resolve_ref).
 */
bool net_host_neigh_mac(struct net_host *h, const struct net_neigh_ref *ref,
			struct rte_ether_addr *mac);

/*
 * Send a complete Ethernet frame to gid, filling in its destination (and
 * source) MAC.  Always takes m.  Returns 0 (on the host's transmit buffer:
 * sent at once, or kept there while the link refuses it), -EAGAIN (held
 * until the neighbour answers, or behind the frames held for it that the
 * output has not taken yet, then released in order to the output,
 * net_host_set_output(); all are
 * dropped if the resolution fails), -ENOBUFS (holding m would exceed the
 * neighbour's or the host's byte budget: m freed, counted as
 * drop_pending_budget; the frames held already stay, so what is sent is
 * the start of what was given), or a negative net_host_resolve() error
 * (m freed, counted as drop_pending).
 * m must be one segment with the Ethernet header in place.
 */
int net_host_output(struct net_host *h, const uint8_t gid[16],
		    struct rte_mbuf *m);

/*
 * Where held frames go once their neighbour is resolved (MACs filled in):
 * out(arg, m) takes m and returns 0, or refuses it for the moment with
 * -EAGAIN (its queue is full and the link takes nothing).  A refused frame
 * is kept with those behind it, in order, counted tx_held, and offered
 * again at the next net_host_timer(); until all are taken the neighbour
 * resolves -EAGAIN, so that new frames to it queue behind them.  The owner
 * of the link (the transport) sends them with its own frames, so that they
 * are captured and retried as those are.  Without one (out NULL) the host
 * transmits them itself, with the same rule at its transmit buffer.
 * released(arg, gid), if not NULL, is called each time the last frame held
 * for gid was taken: what was held left only then (the transport restarts
 * its retransmission timers to that peer).
 */
typedef int (*net_host_output_fn)(void *arg, struct rte_mbuf *m);
typedef void (*net_host_released_fn)(void *arg, const uint8_t gid[16]);
void net_host_set_output(struct net_host *h, net_host_output_fn out,
			 net_host_released_fn released, void *arg);

/*
 * A permanent neighbour (tests, or peers known out of band): never ages,
 * never probed, not overwritten by ARP/ND.  Frames queued for gid are sent.
 */
int net_host_add_static(struct net_host *h, const uint8_t gid[16],
			const struct rte_ether_addr *mac);

/* Forget a neighbour (its queued frames are dropped).  0 or -ENOENT. */
int net_host_del_neigh(struct net_host *h, const uint8_t gid[16]);

/* State of the entry for gid (state NET_NEIGH_NONE when there is none). */
void net_host_neigh_info(const struct net_host *h, const uint8_t gid[16],
			 struct net_neigh_info *info);

/*
 * Advance the host's clock to now (TSC): retry probes, fail resolutions,
 * age REACHABLE entries to STALE, forget old FAILED entries, offer the
 * link again what it refused (the transmit buffer) and the output what it
 * refused (released frames).  Call from every progress-loop iteration
 * (cheap when nothing is due: one compare).
 */
void net_host_timer(struct net_host *h, uint64_t now);

/* Counters by enum net_counter; names alike. */
const uint64_t *net_host_counters(const struct net_host *h);
uint64_t net_host_counter(const struct net_host *h, const char *name);
const char *net_counter_name(unsigned int i);

#endif /* NET_HOST_H */
