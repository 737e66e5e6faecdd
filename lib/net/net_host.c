/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host: creation, local addresses, the receive demultiplexer, the
 * transmit buffer for answers and probes, and the counters.  Protocols
 * live in net_arp.c, net_ipv4.c and net_ipv6.c; the neighbour table in
 * net_neigh.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "net_private.h"

RTE_LOG_REGISTER(net_logtype, droce.net, NOTICE);

static const char *const net_counter_names[NET_CNT_MAX] = {
#define NET_COUNTER_NAME(e, s) [NET_CNT_##e] = s,
	NET_COUNTERS(NET_COUNTER_NAME)
#undef NET_COUNTER_NAME
};

static uint64_t
net_ms_to_tsc(uint32_t ms)
{
	return (uint64_t)ms * (rte_get_timer_hz() / 1000);
}

/* The mbuf field that links the frames held for a neighbour. */
static int
net_pend_field(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "droce_net_pend_next",
		.size = sizeof(struct rte_mbuf *),
		.align = __alignof__(struct rte_mbuf *),
	};
	int off = rte_mbuf_dynfield_register(&desc);

	return off < 0 ? -rte_errno : off;
}

int
net_host_create(const struct net_host_config *cfg, struct net_host **out)
{
	struct net_host *h;
	uint32_t retry_ms;
	int off;

	if (cfg == NULL || out == NULL || cfg->link == NULL)
		return -EINVAL;
	off = net_pend_field();
	if (off < 0)
		return off;
	h = rte_zmalloc("droce_net_host", sizeof(*h), RTE_CACHE_LINE_SIZE);
	if (h == NULL)
		return -ENOMEM;
	h->link = cfg->link;
	h->neigh_max = cfg->neigh_max != 0 ? cfg->neigh_max : NET_NEIGH_MAX_DEFAULT;
	h->pend_next_off = off;
	h->pend_bytes_max = cfg->pending_bytes != 0 ? cfg->pending_bytes :
						      NET_PENDING_BYTES_DEFAULT;
	h->pend_total_max = cfg->pending_total != 0 ? cfg->pending_total :
			    RTE_MAX(NET_PENDING_TOTAL_DEFAULT, h->pend_bytes_max);
	h->tries = cfg->resolve_tries != 0 ? cfg->resolve_tries :
					     NET_RESOLVE_TRIES_DEFAULT;
	retry_ms = cfg->retry_ms != 0 ? cfg->retry_ms : NET_RETRY_MS_DEFAULT;
	h->retry_tsc = net_ms_to_tsc(retry_ms);
	h->reachable_tsc = net_ms_to_tsc(cfg->reachable_ms != 0 ?
					 cfg->reachable_ms : NET_REACHABLE_MS_DEFAULT);
	h->failed_tsc = net_ms_to_tsc(cfg->failed_ms != 0 ? cfg->failed_ms : retry_ms);
	h->table_only = cfg->table_only;
	h->now = rte_get_timer_cycles();
	h->next_deadline = UINT64_MAX;

	h->neigh = rte_zmalloc("droce_net_neigh",
			       sizeof(h->neigh[0]) * h->neigh_max, 0);
	if (h->neigh == NULL) {
		rte_free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void
net_host_destroy(struct net_host *h)
{
	if (h == NULL)
		return;
	for (uint32_t i = 0; i < h->neigh_used; i++)
		if (h->neigh[i].state != NET_NEIGH_NONE)
			(void)net_host_del_neigh(h, h->neigh[i].gid);
	net_tx_flush(h);
	for (unsigned int i = 0; i < h->txbuf_len; i++) {
		rte_pktmbuf_free(h->txbuf[i]);
		net_count(h, NET_CNT_TX_FAIL);
	}
	rte_free(h->neigh);
	rte_free(h);
}

void
net_host_set_output(struct net_host *h, net_host_output_fn out,
		    net_host_released_fn released, void *arg)
{
	h->out = out;
	h->released = released;
	h->out_arg = arg;
}

/* ---- addresses ------------------------------------------------------------- */

/* True when a and b agree on their first bits bits. */
static bool
net_prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

int
net_host_add_addr(struct net_host *h, const uint8_t gid[16], uint8_t prefix_len)
{
	bool v4;
	struct net_addr *a;

	if (h == NULL || gid == NULL)
		return -EINVAL;
	v4 = net_gid_is_v4(gid);
	if (prefix_len > (v4 ? 32 : 128) || net_gid_is_multicast_or_zero(gid))
		return -EINVAL;
	if (net_addr_find(h, gid) != NULL)
		return -EEXIST;
	if (h->naddrs == NET_HOST_MAX_ADDRS)
		return -ENOSPC;
	a = &h->addrs[h->naddrs++];
	memcpy(a->gid, gid, 16);
	a->prefix_len = prefix_len;
	a->v4 = v4;
	return 0;
}

int
net_host_addr(const struct net_host *h, unsigned int index, uint8_t gid[16])
{
	if (index >= h->naddrs)
		return -EINVAL;
	memcpy(gid, h->addrs[index].gid, 16);
	return 0;
}

bool
net_host_is_local(const struct net_host *h, const uint8_t gid[16])
{
	return net_addr_find(h, gid) != NULL;
}

bool
net_host_resolves(const struct net_host *h)
{
	return !h->table_only;
}

const struct net_addr *
net_addr_find(const struct net_host *h, const uint8_t gid[16])
{
	for (unsigned int i = 0; i < h->naddrs; i++)
		if (memcmp(h->addrs[i].gid, gid, 16) == 0)
			return &h->addrs[i];
	return NULL;
}

/* fe80::/10 (RFC 4291 2.5.6) */
static bool
net_gid_is_link_local(const uint8_t gid[16])
{
	return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
}

/*
 * The local address to use toward an on-link peer: same family, and the
 * peer inside its prefix; an IPv6 link-local peer is on the link whatever
 * our prefixes (RFC 4291 2.5.6), and any of our IPv6 addresses may
 * solicit it (RFC 4861 7.2.2).  NULL with *err = -EADDRNOTAVAIL (no
 * address of the family) or -ENETUNREACH (none on the peer's link).
 */
const struct net_addr *
net_addr_for_peer(const struct net_host *h, const uint8_t gid[16], int *err)
{
	bool v4 = net_gid_is_v4(gid);
	bool family = false;

	for (unsigned int i = 0; i < h->naddrs; i++) {
		const struct net_addr *a = &h->addrs[i];

		if (a->v4 != v4)
			continue;
		family = true;
		if (v4 ? net_prefix_match(a->gid + 12, gid + 12, a->prefix_len) :
			 net_gid_is_link_local(gid) ||
			 net_prefix_match(a->gid, gid, a->prefix_len))
			return a;
	}
	*err = family ? -ENETUNREACH : -EADDRNOTAVAIL;
	return NULL;
}

/* dst is the solicited-node multicast group (ff02::1:ffXX:XXXX) of one of ours. */
bool
net_addr_solicited(const struct net_host *h, const uint8_t dst[16],
		   const uint8_t **target)
{
	static const uint8_t snm[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	if (memcmp(dst, snm, sizeof(snm)) != 0)
		return false;
	for (unsigned int i = 0; i < h->naddrs; i++) {
		const struct net_addr *a = &h->addrs[i];

		if (!a->v4 && memcmp(a->gid + 13, dst + 13, 3) == 0) {
			if (target != NULL)
				*target = a->gid;
			return true;
		}
	}
	return false;
}

/* ---- transmit buffer ------------------------------------------------------------ */

/*
 * Offer the buffer to the link.  What it refuses (a port not ready yet:
 * net_memif until its peer's first receive) stays, in order, for the next
 * flush: every call that finds frames here offers them again, and
 * net_host_timer() calls it each round.
 */
void
net_tx_flush(struct net_host *h)
{
	uint16_t sent;

	if (h->txbuf_len == 0)
		return;
	sent = droce_link_tx(h->link, h->txbuf, (uint16_t)h->txbuf_len);
	if (sent < h->txbuf_len) {
		h->counters[NET_CNT_TX_HELD] += h->txbuf_len - sent;
		memmove(h->txbuf, h->txbuf + sent,
			(h->txbuf_len - sent) * sizeof(h->txbuf[0]));
	}
	h->txbuf_len -= sent;
}

/* Queue m for the link: 0, or -EAGAIN (m not taken) when the buffer stays
 * full of frames the link refuses. */
int
net_tx_try(struct net_host *h, struct rte_mbuf *m)
{
	if (h->txbuf_len == NET_TXBUF_SIZE)
		net_tx_flush(h);
	if (h->txbuf_len == NET_TXBUF_SIZE)
		return -EAGAIN;
	h->txbuf[h->txbuf_len++] = m;
	return 0;
}

/*
 * An answer or a probe: past the bound it is lost (tx_fail); its sender
 * (a probe: our timer) repeats it.
 */
void
net_tx(struct net_host *h, struct rte_mbuf *m)
{
	if (net_tx_try(h, m) != 0) {
		rte_pktmbuf_free(m);
		net_count(h, NET_CNT_TX_FAIL);
	}
}

/* ---- receive -------------------------------------------------------------------- */

/* True when m is to be kept (RoCE); otherwise it was consumed. */
static bool
net_input(struct net_host *h, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	uint16_t l3_off = RTE_ETHER_HDR_LEN;
	uint16_t type;

	if (unlikely(m->data_len < RTE_ETHER_HDR_LEN)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (!rte_is_multicast_ether_addr(&eth->dst_addr) &&
	    !rte_is_same_ether_addr(&eth->dst_addr, &h->link->mac)) {
		net_count(h, NET_CNT_DROP_NOT_LOCAL);
		goto drop;
	}
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vlan;

		l3_off += sizeof(struct rte_vlan_hdr);
		if (unlikely(m->data_len < l3_off)) {
			net_count(h, NET_CNT_DROP_MALFORMED);
			goto drop;
		}
		vlan = (const struct rte_vlan_hdr *)(eth + 1);
		type = rte_be_to_cpu_16(vlan->eth_proto);
	}
	switch (type) {
	case RTE_ETHER_TYPE_IPV4:
		return net_ipv4_input(h, m, l3_off);
	case RTE_ETHER_TYPE_IPV6:
		return net_ipv6_input(h, m, l3_off);
	case RTE_ETHER_TYPE_ARP:
		net_arp_input(h, m, l3_off);
		return false;
	default:
		net_count(h, NET_CNT_DROP_ETHERTYPE);
		break;
	}
drop:
	rte_pktmbuf_free(m);
	return false;
}

uint16_t
net_host_rx(struct net_host *h, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	if (h->table_only)
		return n;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		net_count(h, NET_CNT_RX_PKTS);
		if (net_input(h, m)) {
			net_count(h, NET_CNT_RX_ROCE);
			pkts[k++] = m;
		}
	}
	net_tx_flush(h);
	return k;
}

/* ---- counters ------------------------------------------------------------------- */

const uint64_t *
net_host_counters(const struct net_host *h)
{
	return h->counters;
}

uint64_t
net_host_counter(const struct net_host *h, const char *name)
{
	for (unsigned int i = 0; i < NET_CNT_MAX; i++)
		if (strcmp(net_counter_names[i], name) == 0)
			return h->counters[i];
	return UINT64_MAX;
}

const char *
net_counter_name(unsigned int i)
{
	return i < NET_CNT_MAX ? net_counter_names[i] : NULL;
}
