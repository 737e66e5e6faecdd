/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_loop.c - loopback around any link (droce_link_loop_wrap): a frame
 * sent to the link's own MAC comes back on the receive side of the same
 * queue instead of going out, as an RNIC loops back the traffic between
 * two QPs of one port (lib/net resolves our own addresses to our own
 * MAC).  A wire would not return such a frame: a switch does not send a
 * frame back out of the port it came in on.
 *
 * Queue q's loop is a ring written by tx_burst_q(q) and read by
 * rx_burst_q(q), both on the lcore that polls queue q (droce_link.h), so
 * single-producer / single-consumer.  The cost when nothing loops: one
 * MAC comparison and a group-bit test per frame sent and an empty-ring
 * test per burst.
 */
#include <errno.h>
#include <stdio.h>

#include <netinet/in.h>

#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "droce_link.h"

#define LOOP_MAX_QUEUES 16
#define LOOP_RING_SIZE 1024	/* frames in flight to ourselves, per queue */

struct loop_link {
	struct droce_link link;		/* what the transport sees */
	struct droce_link *inner;
	uint16_t nq;
	struct rte_ring *ring[LOOP_MAX_QUEUES];
	uint64_t looped[LOOP_MAX_QUEUES];	/* frames handed back, per queue */
};

static struct loop_link *
loop_of(struct droce_link *link)
{
	return link->priv;
}

static bool
to_self(const struct droce_link *link, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	return rte_is_same_ether_addr(&eth->dst_addr, &link->mac);
}

/*
 * What the port would have done on the way out (the IPv4 header checksum
 * it was asked for), then a received frame's metadata: the receive side
 * checks every checksum itself (no port verdict).
 */
static void
loop_turn(struct rte_mbuf *m)
{
	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		struct rte_ipv4_hdr *ip =
			rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	m->ol_flags = 0;
	m->packet_type = 0;
}

/*
 * A RoCEv2 frame (UDP to 4791) to an Ethernet group address: it goes out,
 * and a copy comes back to this port's receive side, as an RNIC delivers
 * a group's packets to the port's own members too (its QPs attached to
 * the group, lib/transport tp_mcast.c).  ARP, ND and other multicast
 * frames only go out, as before.
 */
static bool
roce_mcast(const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint32_t udp;

	if (len < RTE_ETHER_HDR_LEN || !rte_is_multicast_ether_addr((const void *)f) ||
	    rte_is_broadcast_ether_addr((const void *)f))
		return false;
	if (f[12] == 0x08 && f[13] == 0x00) {		/* IPv4, UDP */
		if (len < RTE_ETHER_HDR_LEN + 20 || f[14 + 9] != IPPROTO_UDP)
			return false;
		udp = RTE_ETHER_HDR_LEN + (uint32_t)(f[14] & 0x0f) * 4;
	} else if (f[12] == 0x86 && f[13] == 0xdd) {	/* IPv6, UDP */
		if (len < RTE_ETHER_HDR_LEN + 40 || f[14 + 6] != IPPROTO_UDP)
			return false;
		udp = RTE_ETHER_HDR_LEN + 40;
	} else {
		return false;
	}
	return len >= udp + 4 && f[udp + 2] == 0x12 && f[udp + 3] == 0xb7;	/* 4791 */
}

/*
 * Send the group frame m alone, and once the port took it, its copy to
 * our receive side (a copy: the port may still read m's data).  No mbuf
 * or a full loop ring: the port's own members miss it, as a frame lost
 * on the wire (UD is unreliable).  Returns the frames sent: 0 or 1.
 */
static uint16_t
loop_tx_mcast(struct loop_link *l, uint16_t q, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

	if (droce_link_tx_q(l->inner, q, &m, 1) != 1) {
		rte_pktmbuf_free(c);
		return 0;
	}
	if (c == NULL)
		return 1;
	loop_turn(c);
	if (rte_ring_sp_enqueue(l->ring[q], c) != 0)
		rte_pktmbuf_free(c);
	else
		l->looped[q]++;
	return 1;
}

static uint16_t
loop_tx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct loop_link *l = loop_of(link);
	uint16_t i = 0;

	while (i < n) {
		uint16_t end = i;

		while (end < n && !to_self(link, pkts[end]) && !roce_mcast(pkts[end]))
			end++;
		if (end > i) {
			uint16_t sent = droce_link_tx_q(l->inner, q, pkts + i,
							(uint16_t)(end - i));

			i = (uint16_t)(i + sent);
			if (i < end)
				return i;	/* the port is full: the caller keeps the rest */
		}
		if (i == n)
			break;
		if (roce_mcast(pkts[i])) {
			if (loop_tx_mcast(l, q, pkts[i]) == 0)
				return i;	/* the port is full */
			i++;
			continue;
		}
		loop_turn(pkts[i]);
		if (rte_ring_sp_enqueue(l->ring[q], pkts[i]) != 0)
			return i;		/* our receive side is behind: kept, as above */
		l->looped[q]++;
		i++;
	}
	return i;
}

static uint16_t
loop_rx_q(struct droce_link *link, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
	struct loop_link *l = loop_of(link);
	uint16_t k = (uint16_t)rte_ring_sc_dequeue_burst(l->ring[q], (void **)pkts,
							 n, NULL);

	if (k < n)
		k = (uint16_t)(k + droce_link_rx_q(l->inner, q, pkts + k,
						   (uint16_t)(n - k)));
	return k;
}

static uint16_t
loop_tx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return loop_tx_q(link, 0, pkts, n);
}

static uint16_t
loop_rx(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	return loop_rx_q(link, 0, pkts, n);
}

static int
loop_status(struct droce_link *link)
{
	return droce_link_status(loop_of(link)->inner);
}

static void
loop_free(struct loop_link *l)
{
	for (uint16_t q = 0; q < l->nq; q++) {
		struct rte_mbuf *m;

		while (l->ring[q] != NULL && rte_ring_sc_dequeue(l->ring[q], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(l->ring[q]);
	}
	rte_free(l);
}

static void
loop_close(struct droce_link *link)
{
	struct loop_link *l = loop_of(link);

	droce_link_close(l->inner);
	loop_free(l);
}

static const struct droce_link_ops loop_ops = {
	.rx_burst = loop_rx,
	.tx_burst = loop_tx,
	.close = loop_close,
	.rx_burst_q = loop_rx_q,
	.tx_burst_q = loop_tx_q,
	.link_status = loop_status,
};

int
droce_link_loop_wrap(struct droce_link *inner, struct droce_link **out)
{
	static uint32_t seq;
	uint32_t id = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	struct loop_link *l;

	if (inner == NULL || out == NULL || droce_link_queues(inner) > LOOP_MAX_QUEUES)
		return -EINVAL;
	l = rte_zmalloc("droce_link_loop", sizeof(*l), RTE_CACHE_LINE_SIZE);
	if (l == NULL)
		return -ENOMEM;
	l->inner = inner;
	l->link = *inner;
	l->link.ops = &loop_ops;
	l->link.priv = l;
	l->link.nb_queues = droce_link_queues(inner);
	for (l->nq = 0; l->nq < l->link.nb_queues; l->nq++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "droce_loop_%u_%u", id, l->nq);
		l->ring[l->nq] = rte_ring_create(name, LOOP_RING_SIZE, SOCKET_ID_ANY,
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (l->ring[l->nq] == NULL) {
			loop_free(l);
			return -ENOMEM;
		}
	}
	*out = &l->link;
	return 0;
}

struct droce_link *
droce_link_loop_inner(struct droce_link *link)
{
	return link->ops == &loop_ops ? loop_of(link)->inner : link;
}

uint64_t
droce_link_loop_count(const struct droce_link *link)
{
	const struct loop_link *l;
	uint64_t n = 0;

	if (link->ops != &loop_ops)
		return 0;
	l = link->priv;
	for (uint16_t q = 0; q < l->nq; q++)
		n += __atomic_load_n(&l->looped[q], __ATOMIC_RELAXED);
	return n;
}
