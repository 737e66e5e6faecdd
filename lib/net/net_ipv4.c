/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 input: keep UDP/4791 to our addresses (RoCEv2), answer ICMP echo
 * requests in place (RFC 792), drop and count the rest.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "net_private.h"

/* Answer an echo request in place; the IPv4 header was checked. */
static void
net_icmp4_echo(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off,
	       struct rte_ipv4_hdr *ip, uint16_t hlen, uint16_t tlen)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_icmp_hdr *icmp;
	uint16_t ilen = (uint16_t)(tlen - hlen);
	rte_be32_t src = ip->src_addr;
	uint8_t sgid[16];

	net_gid_from_v4(sgid, src);
	if (ilen < sizeof(*icmp) || m->nb_segs != 1 ||
	    net_gid_is_multicast_or_zero(sgid) || src == RTE_BE32(0xffffffff)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	icmp = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *, l3_off + hlen);
	if (rte_raw_cksum(icmp, ilen) != 0xffff) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0) {
		net_count(h, NET_CNT_DROP_ICMP);
		goto drop;
	}
	net_count(h, NET_CNT_RX_ICMP4_ECHO);
	/* identifier, sequence number and data come back unchanged */
	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	icmp->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, ilen);
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = src;
	ip->time_to_live = NET_HOP_LIMIT;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
	net_tx(h, m);
	net_count(h, NET_CNT_TX_ICMP4_ECHO_REPLY);
	return;
drop:
	rte_pktmbuf_free(m);
}

bool
net_ipv4_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off)
{
	struct rte_ipv4_hdr *ip;
	uint16_t hlen, tlen;
	uint8_t dgid[16];

	if (m->data_len < l3_off + sizeof(*ip)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3_off);
	hlen = rte_ipv4_hdr_len(ip);
	tlen = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || hlen < sizeof(*ip) ||
	    m->data_len < l3_off + hlen || tlen < hlen ||
	    m->pkt_len < (uint32_t)l3_off + tlen) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	net_gid_from_v4(dgid, ip->dst_addr);
	if (net_addr_find(h, dgid) == NULL) {
		net_count(h, NET_CNT_DROP_NOT_LOCAL);
		goto drop;
	}
	if ((ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG |
					    RTE_IPV4_HDR_OFFSET_MASK)) != 0) {
		net_count(h, NET_CNT_DROP_FRAGMENT);
		goto drop;
	}
	switch (ip->next_proto_id) {
	case IPPROTO_UDP: {
		const struct rte_udp_hdr *udp;

		if (tlen < hlen + sizeof(*udp) ||
		    m->data_len < l3_off + hlen + sizeof(*udp)) {
			net_count(h, NET_CNT_DROP_MALFORMED);
			goto drop;
		}
		udp = rte_pktmbuf_mtod_offset(m, const struct rte_udp_hdr *,
					      l3_off + hlen);
		if (udp->dst_port == RTE_BE16(NET_ROCE_PORT))
			return true;
		net_count(h, NET_CNT_DROP_UDP_PORT);
		goto drop;
	}
	case IPPROTO_ICMP:
		if (rte_raw_cksum(ip, hlen) != 0xffff) {
			net_count(h, NET_CNT_DROP_MALFORMED);
			goto drop;
		}
		net_icmp4_echo(h, m, l3_off, ip, hlen, tlen);
		return false;
	default:
		net_count(h, NET_CNT_DROP_IP_PROTO);
		break;
	}
drop:
	rte_pktmbuf_free(m);
	return false;
}
