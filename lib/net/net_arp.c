/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP (RFC 826) for IPv4 over Ethernet: answer requests for our addresses
 * in place, learn senders, send requests for the neighbour table.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "net_private.h"

void
net_arp_input(struct net_host *h, struct rte_mbuf *m, uint16_t l3_off)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp;
	struct rte_arp_ipv4 *d;
	uint8_t sgid[16], tgid[16];
	rte_be32_t sip, tip;
	bool for_us;
	uint16_t op;

	if (m->data_len < l3_off + sizeof(*arp)) {
		net_count(h, NET_CNT_DROP_MALFORMED);
		goto drop;
	}
	arp = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, l3_off);
	if (arp->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4) {
		net_count(h, NET_CNT_DROP_ARP);
		goto drop;
	}
	d = &arp->arp_data;
	op = rte_be_to_cpu_16(arp->arp_opcode);
	sip = d->arp_sip;
	tip = d->arp_tip;
	net_gid_from_v4(sgid, sip);
	net_gid_from_v4(tgid, tip);
	for_us = net_addr_find(h, tgid) != NULL;

	/* learn the sender: always refresh an entry, create one if it asks us */
	if (sip != 0 && !net_gid_is_multicast_or_zero(sgid) &&
	    net_addr_find(h, sgid) == NULL)
		net_neigh_learn(h, sgid, &d->arp_sha,
				for_us && op == RTE_ARP_OP_REQUEST);

	if (op == RTE_ARP_OP_REQUEST && for_us) {
		net_count(h, NET_CNT_RX_ARP_REQUEST);
		/* the answer, in place: who asked becomes the target */
		arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
		rte_ether_addr_copy(&d->arp_sha, &d->arp_tha);
		rte_ether_addr_copy(&h->link->mac, &d->arp_sha);
		d->arp_tip = sip;
		d->arp_sip = tip;
		rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
		rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
		net_tx(h, m);
		net_count(h, NET_CNT_TX_ARP_REPLY);
		return;
	}
	if (op == RTE_ARP_OP_REPLY && for_us) {
		net_count(h, NET_CNT_RX_ARP_REPLY);
		goto drop;
	}
	net_count(h, NET_CNT_DROP_ARP);
drop:
	rte_pktmbuf_free(m);
}

/*
 * An ARP request for target from src: broadcast, or unicast to dmac when
 * refreshing a STALE entry.  Padded to the 60-byte Ethernet minimum.
 */
int
net_arp_probe(struct net_host *h, const struct net_addr *src,
	      const uint8_t target[16], const struct rte_ether_addr *dmac)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->link->pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *arp;
	char *p;

	if (m == NULL) {
		net_count(h, NET_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	p = rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		net_count(h, NET_CNT_TX_NOMBUF);
		return -ENOBUFS;
	}
	memset(p, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	eth = (struct rte_ether_hdr *)p;
	if (dmac != NULL)
		rte_ether_addr_copy(dmac, &eth->dst_addr);
	else
		memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	rte_ether_addr_copy(&h->link->mac, &eth->src_addr);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)(eth + 1);
	arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&h->link->mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = net_gid_v4(src->gid);
	arp->arp_data.arp_tip = net_gid_v4(target);	/* tha stays zero */
	net_tx(h, m);
	net_count(h, NET_CNT_TX_ARP_REQUEST);
	return 0;
}
