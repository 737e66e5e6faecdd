/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 input: keep UDP/4791 to our addresses (RoCEv2), answer ICMPv6 echo
 * requests (RFC 4443) and Neighbor Solicitations (RFC 4861) in place,
 * learn from solicitations and advertisements, send solicitations for the
 * neighbour table.  No extension headers: the first next header decides.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "net_private.h"

#define NET_ND_MSG_LEN	((uint16_t)sizeof(struct net_nd_msg))	/* 24 */
#define NET_ND_OPT_LEN	((uint16_t)sizeof(struct net_nd_opt_lla))	/* 8 */

static const uint8_t net_all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };

/* ICMPv6 checksum over the pseudo-header and len bytes at l4. */
static bool
net_icmp6_cksum_ok(const struct rte_ipv6_hdr *ip, const void *l4, uint16_t len)
{
	uint32_t sum = rte_raw_cksum(l4, len);

	sum += rte_ipv6_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Fill the checksum (bytes 2-3) of the ICMPv6 message at l4. */
static void
net_icmp6_cksum_set(const struct rte_ipv6_hdr *ip, uint8_t *l4)
{
	uint16_t cksum;

	memset(l4 + 2, 0, 2);
	/* with proto 58 this is the ICMPv6 checksum (RFC 4443 2.3); the
	 * value is in network order already, as DPDK stores it */
	cksum = rte_ipv6_udptcp_cksum(ip, l4);
	memcpy(l4 + 2, &cksum, 2);
}

static void
net_ipv6_hdr_init(struct rte_ipv6_hdr *ip, uint16_t plen, uint8_t hops,
		  const uint8_t src[16], const uint8_t dst[16])
{
	ip->vtc_flow = RTE_BE32(UINT32_C(6) << 28);
	ip->payload_len = rte_cpu_to_be_16(plen);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = hops;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
}

/*
 * Copy the link-layer address option of type want to *mac: 1 when found,
 * 0 when absent, -1 when the options are malformed.
 */
static int
net_nd_find_lla(const uint8_t *opt, uint16_t len, uint8_t want,
		struct rte_ether_addr *mac)
{
	int found = 0;

	while (len >= 2) {
		uint16_t olen = (uint16_t)(opt[1] * 8);

		if (olen == 0 || olen > len)
			return -1;	/* RFC 4861 4.6: length 0 is invalid */
		if (opt[0] == want && olen == NET_ND_OPT_LEN) {
			memcpy(mac->addr_bytes, opt + 2, RTE_ETHER_ADDR_LEN);
			found = 1;
		}
		opt += olen;
		len = (uint16_t)(len - olen);
	}
	return found;
}

/* Answer a Neighbor Solicitation for one of ours with an advertisement. */
static void
net_ns_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off,
	     struct rte_ipv6_hdr *ip, uint16_t plen)
{
	static const uint8_t unspecified[16];
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct net_nd_msg *nd = (struct net_nd_msg *)(ip + 1);
	struct rte_ether_addr slla_mac;
	const struct rte_ether_addr *slla;
	struct net_nd_opt_lla *tlla;
	uint8_t target[16], dst[16];
	bool dad;
	int found;
	uint32_t want = (uint32_t)l3_off + sizeof(*ip) + NET_ND_MSG_LEN + NET_ND_OPT_LEN;

	found = plen < NET_ND_MSG_LEN ? -1 :
		net_nd_find_lla((const uint8_t *)(nd + 1),
				(uint16_t)(plen - NET_ND_MSG_LEN),
				NET_ND_OPT_SLLA, &slla_mac);
	if (found < 0 || nd->target[0] == 0xff) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	slla = found ? &slla_mac : NULL;
	memcpy(target, nd->target, 16);
	if (net_gid_is_v4(target) || net_addr_find(h, target) == NULL) {
		net_count(h, NET_CNT_DROP_NOT_LOCAL);
		goto drop;
	}
	dad = memcmp(ip->src_addr, unspecified, 16) == 0;
	if (dad && slla != NULL) {
		net_count(h, NET_CNT_DROP_MALFORMED);	/* RFC 4861 7.1.1 */
		goto drop;
	}
	net_count(h, NET_CNT_RX_NS);
	if (!dad && slla != NULL && ip->src_addr[0] != 0xff)
		net_neigh_learn(h, ip->src_addr, slla, true);

	/* the advertisement: header + message + target link-layer address */
	if (m->data_len < want) {
		if (rte_pktmbuf_append(m, (uint16_t)(want - m->data_len)) == NULL) {
			net_count(h, NET_CNT_TX_NOMBUF);
			goto drop;
		}
	} else {
		m->data_len = (uint16_t)want;
		m->pkt_len = want;
	}
	memcpy(dst, dad ? net_all_nodes : ip->src_addr, 16);
	net_ipv6_hdr_init(ip, NET_ND_MSG_LEN + NET_ND_OPT_LEN, NET_ND_HOP_LIMIT,
			  target, dst);
	nd->type = NET_ICMP6_NA;
	nd->code = 0;
	nd->flags = NET_NA_FLAG_OVERRIDE | (dad ? 0 : NET_NA_FLAG_SOLICITED);
	memset(nd->reserved, 0, sizeof(nd->reserved));
	tlla = (struct net_nd_opt_lla *)(nd + 1);
	tlla->type = NET_ND_OPT_TLLA;
	tlla->len = 1;
	memcpy(tlla->mac, h->link->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	net_icmp6_cksum_set(ip, (uint8_t *)nd);
	if (dad) {
		/* 33:33 + the low 32 bits of ff02::1 */
		memset(&eth->dst_addr, 0, sizeof(eth->dst_addr));
		eth->dst_addr.addr_bytes[0] = 0x33;
		eth->dst_addr.addr_bytes[1] = 0x33;
		eth->dst_addr.addr_bytes[5] = 0x01;
	} else {
		rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	}
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
	net_tx(h, m);
	net_count(h, NET_CNT_TX_NA);
	return;
drop:
	rte_pktmbuf_free(m);
}

static void
net_na_input(struct net_host *h, struct rte_mbuf *m, struct rte_ipv6_hdr *ip,
	     uint16_t plen)
{
	const struct net_nd_msg *nd = (const struct net_nd_msg *)(ip + 1);
	struct rte_ether_addr tlla;
	int found;

	found = plen < NET_ND_MSG_LEN ? -1 :
		net_nd_find_lla((const uint8_t *)(nd + 1),
				(uint16_t)(plen - NET_ND_MSG_LEN),
				NET_ND_OPT_TLLA, &tlla);
	if (found < 0 || nd->target[0] == 0xff) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	net_count(h, NET_CNT_RX_NA);
	if (net_gid_is_v4(nd->target) || net_addr_find(h, nd->target) != NULL)
		goto drop;
	if (found)
		net_neigh_learn(h, nd->target, &tlla, false);
	else if (nd->flags & NET_NA_FLAG_SOLICITED)
		net_neigh_confirm(h, nd->target);
drop:
	rte_pktmbuf_free(m);
}

static void
net_echo6_input(struct net_host *h, struct rte_mbuf *m, struct rte_ipv6_hdr *ip,
		uint16_t plen)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	uint8_t *icmp = (uint8_t *)(ip + 1);
	uint8_t src[16];

	memcpy(src, ip->src_addr, 16);
	if (plen < 8 || src[0] == 0xff || net_gid_is_multicast_or_zero(src)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		rte_pktmbuf_free(m);
		return;
	}
	net_count(h, NET_CNT_RX_ICMP6_ECHO);
	/* identifier, sequence number and data come back unchanged */
	icmp[0] = NET_ICMP6_ECHO_REPLY;
	memcpy(ip->src_addr, ip->dst_addr, 16);
	memcpy(ip->dst_addr, src, 16);
	ip->hop_limits = NET_HOP_LIMIT;
	net_icmp6_cksum_set(ip, icmp);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
	net_tx(h, m);
	net_count(h, NET_CNT_TX_ICMP6_ECHO_REPLY);
}

static void
net_icmp6_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off,
		struct rte_ipv6_hdr *ip, uint16_t plen, bool unicast)
{
	const uint8_t *icmp = (const uint8_t *)(ip + 1);

	if (plen < 4 || m->nb_segs != 1 || !net_icmp6_cksum_ok(ip, icmp, plen)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	if (icmp[0] == NET_ICMP6_NS || icmp[0] == NET_ICMP6_NA) {
		/* RFC 4861 7.1: only from the link itself */
		if (ip->hop_limits != NET_ND_HOP_LIMIT || icmp[1] != 0) {
			net_count(h, NET_CNT_DROP_MALFORMED);
			goto drop;
		}
		if (icmp[0] == NET_ICMP6_NS)
			net_ns_input(h, m, l3_off, ip, plen);
		else
			net_na_input(h, m, ip, plen);
		return;
	}
	if (icmp[0] == NET_ICMP6_ECHO_REQUEST && icmp[1] == 0 && unicast) {
		net_echo6_input(h, m, ip, plen);
		return;
	}
	net_count(h, NET_CNT_DROP_ICMP);
drop:
	rte_pktmbuf_free(m);
}

bool
net_ipv6_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off)
{
	struct rte_ipv6_hdr *ip;
	uint16_t plen;
	bool unicast;

	if (m->data_len < l3_off + sizeof(*ip)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3_off);
	plen = rte_be_to_cpu_16(ip->payload_len);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 ||
	    m->pkt_len < (uint32_t)l3_off + sizeof(*ip) + plen) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	unicast = net_addr_find(h, ip->dst_addr) != NULL &&
		  !net_gid_is_v4(ip->dst_addr);
	if (!unicast && !net_addr_solicited(h, ip->dst_addr, NULL) &&
	    memcmp(ip->dst_addr, net_all_nodes, 16) != 0) {
		net_count(h, NET_CNT_DROP_NOT_LOCAL);
		goto drop;
	}
	switch (ip->proto) {
	case IPPROTO_UDP: {
		const struct rte_udp_hdr *udp;

		if (!unicast) {
			net_count(h, NET_CNT_DROP_NOT_LOCAL);
			goto drop;
		}
		if (plen < sizeof(*udp) ||
		    m->data_len < l3_off + sizeof(*ip) + sizeof(*udp)) {
			net_count(h, NET_CNT_DROP_MALFORMED);
			goto drop;
		}
		udp = (const struct rte_udp_hdr *)(ip + 1);
		if (udp->dst_port == RTE_BE16(NET_ROCE_PORT))
			return true;
		net_count(h, NET_CNT_DROP_UDP_PORT);
		goto drop;
	}
	case IPPROTO_ICMPV6:
		net_icmp6_input(h, m, l3_off, ip, plen, unicast);
		return false;
	default:
		net_count(h, NET_CNT_DROP_IP_PROTO);
		break;
	}
drop:
	rte_pktmbuf_free(m);
	return false;
}

/*
 * A Neighbor Solicitation for target from src: to the target's
 * solicited-node group, or unicast to dmac when refreshing a STALE entry.
 */
int
net_nd_probe(struct net_host *h, const struct net_addr *src,
	     const uint8_t target[16], const struct rte_ether_addr *dmac)
{
	const uint16_t plen = NET_ND_MSG_LEN + NET_ND_OPT_LEN;
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->link->pool);
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip;
	struct net_nd_msg *nd;
	struct net_nd_opt_lla *slla;
	uint8_t dst[16];
	char *p;

	if (m == NULL) {
		net_count(h, NET_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	p = rte_pktmbuf_append(m, (uint16_t)(sizeof(*eth) + sizeof(*ip) + plen));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		net_count(h, NET_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	eth = (struct rte_ether_hdr *)p;
	ip = (struct rte_ipv6_hdr *)(eth + 1);
	nd = (struct net_nd_msg *)(ip + 1);
	slla = (struct net_nd_opt_lla *)(nd + 1);
	if (dmac != NULL) {
		memcpy(dst, target, 16);
		rte_ether_addr_copy(dmac, &eth->dst_addr);
	} else {
		/* ff02::1:ff00:0/104 | low 24 bits; 33:33 | low 32 bits */
		static const uint8_t snm[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

		memcpy(dst, snm, sizeof(snm));
		memcpy(dst + 13, target + 13, 3);
		eth->dst_addr.addr_bytes[0] = 0x33;
		eth->dst_addr.addr_bytes[1] = 0x33;
		memcpy(&eth->dst_addr.addr_bytes[2], dst + 12, 4);
	}
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
	net_ipv6_hdr_init(ip, plen, NET_ND_HOP_LIMIT, src->gid, dst);
	memset(nd, 0, sizeof(*nd));
	nd->type = NET_ICMP6_NS;
	memcpy(nd->target, target, 16);
	slla->type = NET_ND_OPT_SLLA;
	slla->len = 1;
	memcpy(slla->mac, h->link->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	net_icmp6_cksum_set(ip, (uint8_t *)nd);
	net_tx(h, m);
	net_count(h, NET_CNT_TX_NS);
	return 0;
}
