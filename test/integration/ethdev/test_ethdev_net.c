/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/ethdev + lib/net in one process: two ethdev links joined by two
 * rte_rings (rte_eth_from_rings), each with a net_host.  ARP and IPv6 ND
 * resolution both ways, ICMP/ICMPv6 echo answers checked field by field
 * (checksums recomputed here independently of DPDK's helpers), non-RoCE
 * traffic dropped and counted by reason, RoCEv2 frames passed through
 * unchanged and in order, resolution timeout, aging and refresh, what is
 * learned from ARP requests and replies, NS (global and link-local
 * sources) and NA (with and without the MAC), frames held within the byte
 * budgets for an unresolved neighbour; and the driver alone: a net_ring
 * vdev opened by devargs (twice, to check it is removed), MTU and config
 * checks, multi-segment frames, and rte_flow isolation refused cleanly by a
 * PMD without rte_flow.  Time for net_host_timer() is made up by the test.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "droce_link.h"
#include "ethdev_link.h"
#include "net_host.h"
#include "roce_wire.h"

#define BURST 32
#define POOL_SIZE 2047
/* the fixture's pending budgets: per neighbour, and for the host */
#define PEND_BYTES 1000
#define PEND_TOTAL 1500

/* ---- addresses ------------------------------------------------------------ */

static const uint8_t gid_a4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 1, 1 };
static const uint8_t gid_b4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 1, 2 };
static const uint8_t gid_x4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 1, 9 };
static const uint8_t gid_a6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 1, [15] = 1 };
static const uint8_t gid_b6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 1, [15] = 2 };
static const uint8_t gid_x6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 1, [15] = 9 };
static const uint8_t gid_y6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 1, [15] = 10 };
/* a peer's link-local address (fe80::/64, EUI-64 style) */
static const uint8_t gid_ll6[16] = { 0xfe, 0x80, [8] = 0x02, [11] = 0xff,
				     [12] = 0xfe, [15] = 0x77 };
/* the MAC of a made-up peer whose frames the tests write by hand */
static const struct rte_ether_addr peer_mac = {
	.addr_bytes = { 0x02, 0, 0, 0, 0, 0x77 } };

/* ---- the fixture: two links over two rings, two hosts --------------------- */

struct side {
	struct rte_ring *rx_ring;
	struct droce_link *link;
	struct net_host *host;
	struct rte_mbuf *kept[256];	/* RoCE frames net_host_rx kept */
	unsigned int nkept;
};

struct fx {
	struct side a, b;
	uint64_t now;			/* the made-up clock */
	uint64_t hz;
};

static unsigned int fx_seq;

static struct droce_link *
open_ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx,
	       const struct ethdev_link_config *base, uint8_t mac_low)
{
	struct ethdev_link_config cfg = *base;
	struct droce_link *link = NULL;
	int port = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned int)rte_socket_id());

	assert_true(port >= 0);
	cfg.port_id = (uint16_t)port;
	if (mac_low != 0) {
		const struct rte_ether_addr mac = {
			.addr_bytes = { 0x02, 0, 0, 0, 0x01, mac_low } };

		cfg.mac = mac;
	}
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	if (mac_low != 0)
		assert_int_equal(link->mac.addr_bytes[5], mac_low);
	return link;
}

static const struct ethdev_link_config small_link = {
	.pool_size = POOL_SIZE, .nb_rxd = 256, .nb_txd = 256,
};

static int
fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	/* explicit round numbers (not the defaults): the timeout and aging
	 * tests count probes a second apart, 3 per resolution */
	struct net_host_config hc = {
		.pending_bytes = PEND_BYTES, .pending_total = PEND_TOTAL,
		.resolve_tries = 3, .retry_ms = 1000,
	};
	char name[32];
	unsigned int id = fx_seq++;
	struct rte_ring *ab, *ba;

	assert_non_null(f);
	snprintf(name, sizeof(name), "t_ab%u", id);
	ab = rte_ring_create(name, 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "t_ba%u", id);
	ba = rte_ring_create(name, 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(ab);
	assert_non_null(ba);
	f->a.rx_ring = ba;
	f->b.rx_ring = ab;
	snprintf(name, sizeof(name), "net_ta%u", id);
	f->a.link = open_ring_port(name, ba, ab, &small_link, 0x0a);
	snprintf(name, sizeof(name), "net_tb%u", id);
	f->b.link = open_ring_port(name, ab, ba, &small_link, 0);
	/* a's MAC is configured, b's is the PMD's (or made up if it has none) */
	assert_true(rte_is_valid_assigned_ether_addr(&f->b.link->mac));
	assert_false(rte_is_same_ether_addr(&f->a.link->mac, &f->b.link->mac));

	hc.link = f->a.link;
	assert_int_equal(net_host_create(&hc, &f->a.host), 0);
	hc.link = f->b.link;
	assert_int_equal(net_host_create(&hc, &f->b.host), 0);
	assert_int_equal(net_host_add_addr(f->a.host, gid_a4, 24), 0);
	assert_int_equal(net_host_add_addr(f->a.host, gid_a6, 64), 0);
	assert_int_equal(net_host_add_addr(f->b.host, gid_b4, 24), 0);
	assert_int_equal(net_host_add_addr(f->b.host, gid_b6, 64), 0);
	f->hz = rte_get_timer_hz();
	f->now = rte_get_timer_cycles();
	*state = f;
	return 0;
}

static void
side_free_kept(struct side *s)
{
	rte_pktmbuf_free_bulk(s->kept, s->nkept);
	s->nkept = 0;
}

/* Everything waiting on a side's port, without its host (raw). */
static uint16_t
raw_rx(struct side *s, struct rte_mbuf **pkts)
{
	return droce_link_rx(s->link, pkts, BURST);
}

static void
raw_drain(struct side *s)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n;

	while ((n = raw_rx(s, pkts)) != 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;
	struct side *sides[2] = { &f->a, &f->b };

	for (int i = 0; i < 2; i++) {
		side_free_kept(sides[i]);
		net_host_destroy(sides[i]->host);
	}
	for (int i = 0; i < 2; i++)
		raw_drain(sides[i]);
	for (int i = 0; i < 2; i++)
		droce_link_close(sides[i]->link);
	for (int i = 0; i < 2; i++)
		rte_ring_free(sides[i]->rx_ring);
	free(f);
	return 0;
}

/* One receive pass of a side through its host; returns frames received. */
static uint16_t
side_poll(struct fx *f, struct side *s)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_link_rx(s->link, pkts, BURST);
	uint16_t k = net_host_rx(s->host, pkts, n);

	for (uint16_t i = 0; i < k; i++) {
		assert_true(s->nkept < RTE_DIM(s->kept));
		s->kept[s->nkept++] = pkts[i];
	}
	net_host_timer(s->host, f->now);
	return n;
}

/* Poll both sides until neither receives anything. */
static void
fx_pump(struct fx *f)
{
	for (int idle = 0; idle < 3;) {
		uint16_t n = side_poll(f, &f->a) + side_poll(f, &f->b);

		idle = n == 0 ? idle + 1 : 0;
	}
}

static void
fx_advance_ms(struct fx *f, uint64_t ms)
{
	f->now += ms * (f->hz / 1000);
	net_host_timer(f->a.host, f->now);
	net_host_timer(f->b.host, f->now);
}

static uint64_t
cnt(const struct side *s, const char *name)
{
	uint64_t v = net_host_counter(s->host, name);

	assert_int_not_equal(v, UINT64_MAX);
	return v;
}

/* ---- independent checksums ------------------------------------------------ */

static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Ones' complement sum of an IPv4 header or ICMPv4 message: 0xffff if valid. */
static uint16_t
csum_plain(const uint8_t *p, size_t len)
{
	return fold(sum16(p, len, 0));
}

/* The same over the IPv6 pseudo-header (RFC 8200 8.1) and the message. */
static uint16_t
csum_ipv6(const uint8_t *ip6, const uint8_t *l4, uint32_t len, uint8_t nh)
{
	uint32_t sum = sum16(ip6 + 8, 32, 0);	/* source and destination */

	sum += len >> 16;
	sum += len & 0xffff;
	sum += nh;
	return fold(sum16(l4, len, sum));
}

/* ---- building frames --------------------------------------------------------- */

static struct rte_mbuf *
mbuf_from(struct droce_link *link, const void *bytes, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(link->pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memcpy(p, bytes, len);
	return m;
}

static void
send_raw(struct side *s, const void *bytes, uint32_t len)
{
	struct rte_mbuf *m = mbuf_from(s->link, bytes, len);

	assert_int_equal(droce_link_tx(s->link, &m, 1), 1);
}

static size_t
eth_hdr(uint8_t *buf, const struct rte_ether_addr *dst,
	const struct rte_ether_addr *src, uint16_t type)
{
	memcpy(buf, dst->addr_bytes, 6);
	memcpy(buf + 6, src->addr_bytes, 6);
	buf[12] = (uint8_t)(type >> 8);
	buf[13] = (uint8_t)type;
	return 14;
}

/* IPv4 header (20 bytes) with checksum, from and to IPv4-mapped GIDs. */
static size_t
ipv4_hdr(uint8_t *p, const uint8_t src[16], const uint8_t dst[16],
	 uint8_t proto, uint16_t payload, uint16_t frag)
{
	uint16_t tot = (uint16_t)(20 + payload), c;

	memset(p, 0, 20);
	p[0] = 0x45;
	p[2] = (uint8_t)(tot >> 8);
	p[3] = (uint8_t)tot;
	p[4] = 0x12;
	p[5] = 0x34;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, src + 12, 4);
	memcpy(p + 16, dst + 12, 4);
	c = (uint16_t)~csum_plain(p, 20);
	p[10] = (uint8_t)(c >> 8);
	p[11] = (uint8_t)c;
	return 20;
}

static size_t
ipv6_hdr(uint8_t *p, const uint8_t src[16], const uint8_t dst[16],
	 uint8_t nh, uint16_t payload, uint8_t hops)
{
	memset(p, 0, 40);
	p[0] = 0x60;
	p[4] = (uint8_t)(payload >> 8);
	p[5] = (uint8_t)payload;
	p[6] = nh;
	p[7] = hops;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return 40;
}

/* An echo request of 56 data bytes; returns the frame length. */
static size_t
icmp4_echo_frame(uint8_t *buf, const struct fx *f, uint8_t type)
{
	size_t off = eth_hdr(buf, &f->b.link->mac, &f->a.link->mac, RTE_ETHER_TYPE_IPV4);
	uint8_t *icmp;
	uint16_t c;

	off += ipv4_hdr(buf + off, gid_a4, gid_b4, IPPROTO_ICMP, 64, 0x4000);
	icmp = buf + off;
	memset(icmp, 0, 64);
	icmp[0] = type;
	icmp[4] = 0x42;	/* identifier */
	icmp[5] = 0x43;
	icmp[7] = 7;	/* sequence */
	for (int i = 8; i < 64; i++)
		icmp[i] = (uint8_t)(i * 3);
	c = (uint16_t)~csum_plain(icmp, 64);
	icmp[2] = (uint8_t)(c >> 8);
	icmp[3] = (uint8_t)c;
	return off + 64;
}

static size_t
icmp6_echo_frame(uint8_t *buf, const struct fx *f)
{
	size_t off = eth_hdr(buf, &f->b.link->mac, &f->a.link->mac, RTE_ETHER_TYPE_IPV6);
	uint8_t *ip = buf + off, *icmp;
	uint16_t c;

	off += ipv6_hdr(ip, gid_a6, gid_b6, IPPROTO_ICMPV6, 64, 64);
	icmp = buf + off;
	memset(icmp, 0, 64);
	icmp[0] = 128;
	icmp[4] = 0x42;
	icmp[5] = 0x43;
	icmp[7] = 9;
	for (int i = 8; i < 64; i++)
		icmp[i] = (uint8_t)(i * 5);
	c = (uint16_t)~csum_ipv6(ip, icmp, 64, IPPROTO_ICMPV6);
	icmp[2] = (uint8_t)(c >> 8);
	icmp[3] = (uint8_t)c;
	return off + 64;
}

/* A UDP datagram of 16 payload bytes to dport, IPv4; checksum 0. */
static size_t
udp4_frame(uint8_t *buf, const struct rte_ether_addr *dmac, const struct rte_ether_addr *smac,
	   const uint8_t src[16], const uint8_t dst[16], uint16_t dport, uint16_t frag)
{
	size_t off = eth_hdr(buf, dmac, smac, RTE_ETHER_TYPE_IPV4);
	uint8_t *u;

	off += ipv4_hdr(buf + off, src, dst, IPPROTO_UDP, 24, frag);
	u = buf + off;
	memset(u, 0, 24);
	u[0] = 0xc0;
	u[2] = (uint8_t)(dport >> 8);
	u[3] = (uint8_t)dport;
	u[5] = 24;
	return off + 24;
}

/* A RoCEv2 SEND ONLY from a to b, built by lib/wire. */
static size_t
roce_frame(uint8_t *buf, size_t cap, const struct fx *f, int ipv, uint32_t psn)
{
	struct roce_pkt p;
	uint8_t payload[100];
	size_t len;

	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac, f->b.link->mac.addr_bytes, 6);
	memcpy(p.src_mac, f->a.link->mac.addr_bytes, 6);
	p.ip_version = (uint8_t)ipv;
	memcpy(p.src_gid, ipv == 4 ? gid_a4 : gid_a6, 16);
	memcpy(p.dst_gid, ipv == 4 ? gid_b4 : gid_b6, 16);
	p.ip_ttl = 64;
	p.ip_df = 1;
	p.udp_sport = 0xc123;
	p.udp_dport = ROCE_UDP_PORT;
	p.opcode = ROCE_OP_SEND_ONLY;
	p.pkey = 0xffff;
	p.dest_qpn = 0x11;
	p.psn = psn;
	p.payload_len = sizeof(payload);
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(psn + i);
	len = roce_build(buf, cap, &p, payload);
	assert_true(len > 0);
	return len;
}

/* An ARP request or reply from sha/sip to tip (tha zero in a request). */
static size_t
arp_frame(uint8_t *buf, const struct rte_ether_addr *dmac, uint16_t op,
	  const struct rte_ether_addr *sha, const uint8_t sip[16],
	  const struct rte_ether_addr *tha, const uint8_t tip[16])
{
	size_t off = eth_hdr(buf, dmac, sha, RTE_ETHER_TYPE_ARP);
	uint8_t *a = buf + off;

	memset(a, 0, 28);
	a[1] = 1;			/* Ethernet */
	a[2] = 0x08;			/* IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[7] = (uint8_t)op;
	memcpy(a + 8, sha->addr_bytes, 6);
	memcpy(a + 14, sip + 12, 4);
	if (tha != NULL)
		memcpy(a + 18, tha->addr_bytes, 6);
	memcpy(a + 24, tip + 12, 4);
	return off + 28;
}

/*
 * An NS (type 135) or NA (136) from src to dst about target, with flags
 * (NA: R S O), and a link-layer option (1 SLLA, 2 TLLA) naming lla when
 * opt is not 0.  Hop limit 255, checksum computed here.
 */
static size_t
nd_frame(uint8_t *buf, const struct rte_ether_addr *dmac, const struct rte_ether_addr *smac,
	 const uint8_t src[16], const uint8_t dst[16], uint8_t type, uint8_t flags,
	 const uint8_t target[16], uint8_t opt, const struct rte_ether_addr *lla)
{
	size_t off = eth_hdr(buf, dmac, smac, RTE_ETHER_TYPE_IPV6);
	uint16_t plen = (uint16_t)(opt != 0 ? 32 : 24), c;
	uint8_t *ip = buf + off, *nd;

	off += ipv6_hdr(ip, src, dst, IPPROTO_ICMPV6, plen, 255);
	nd = buf + off;
	memset(nd, 0, plen);
	nd[0] = type;
	nd[4] = flags;
	memcpy(nd + 8, target, 16);
	if (opt != 0) {
		nd[24] = opt;
		nd[25] = 1;
		memcpy(nd + 26, lla->addr_bytes, 6);
	}
	c = (uint16_t)~csum_ipv6(ip, nd, plen, IPPROTO_ICMPV6);
	nd[2] = (uint8_t)(c >> 8);
	nd[3] = (uint8_t)c;
	return off + plen;
}

/* b's solicited-node group (ff02::1:ff00:2) and its Ethernet group. */
static const uint8_t snm_b6[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff, 0, 0, 0x02 };
static const struct rte_ether_addr snm_b6_mac = {
	.addr_bytes = { 0x33, 0x33, 0xff, 0, 0, 0x02 } };
static const struct rte_ether_addr bcast = {
	.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

/* A frame written by hand arrives at b, from the made-up peer. */
static void
to_b(struct fx *f, const uint8_t *frame, size_t len)
{
	send_raw(&f->a, frame, (uint32_t)len);
	assert_int_equal(side_poll(f, &f->b), 1);
	raw_drain(&f->a);		/* b's answer, if any, to nobody */
}

static void
assert_neigh(struct fx *f, const uint8_t gid[16], enum net_neigh_state state,
	     const struct rte_ether_addr *mac)
{
	struct net_neigh_info info;

	net_host_neigh_info(f->b.host, gid, &info);
	assert_int_equal(info.state, state);
	if (mac != NULL)
		assert_true(rte_is_same_ether_addr(&info.mac, mac));
}

/* ---- tests: resolution ----------------------------------------------------- */

static void
check_resolves(struct fx *f, const uint8_t peer[16], const uint8_t self[16])
{
	struct rte_ether_addr mac;
	struct net_neigh_info info;

	assert_int_equal(net_host_resolve(f->a.host, peer, &mac), -EAGAIN);
	/* asking again while in progress sends nothing new */
	assert_int_equal(net_host_resolve(f->a.host, peer, &mac), -EAGAIN);
	net_host_neigh_info(f->a.host, peer, &info);
	assert_int_equal(info.state, NET_NEIGH_INCOMPLETE);
	assert_int_equal(info.tries, 1);
	fx_pump(f);
	memset(&mac, 0, sizeof(mac));
	assert_int_equal(net_host_resolve(f->a.host, peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &f->b.link->mac));
	/* b learned a from the request */
	net_host_neigh_info(f->b.host, self, &info);
	assert_int_equal(info.state, NET_NEIGH_REACHABLE);
	assert_true(rte_is_same_ether_addr(&info.mac, &f->a.link->mac));
	assert_int_equal(net_host_resolve(f->b.host, self, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &f->a.link->mac));
	assert_int_equal(f->a.nkept + f->b.nkept, 0);
}

static void
test_arp_resolve(void **state)
{
	struct fx *f = *state;

	check_resolves(f, gid_b4, gid_a4);
	assert_int_equal(cnt(&f->a, "tx_arp_request"), 1);
	assert_int_equal(cnt(&f->b, "rx_arp_request"), 1);
	assert_int_equal(cnt(&f->b, "tx_arp_reply"), 1);
	assert_int_equal(cnt(&f->a, "rx_arp_reply"), 1);
	assert_int_equal(cnt(&f->a, "neigh_learned"), 1);
	assert_int_equal(cnt(&f->b, "neigh_learned"), 1);
	assert_int_equal(cnt(&f->b, "tx_arp_request"), 0);
}

static void
test_nd_resolve(void **state)
{
	struct fx *f = *state;

	check_resolves(f, gid_b6, gid_a6);
	assert_int_equal(cnt(&f->a, "tx_ns"), 1);
	assert_int_equal(cnt(&f->b, "rx_ns"), 1);
	assert_int_equal(cnt(&f->b, "tx_na"), 1);
	assert_int_equal(cnt(&f->a, "rx_na"), 1);
	assert_int_equal(cnt(&f->a, "drop_malformed"), 0);
	assert_int_equal(cnt(&f->b, "drop_malformed"), 0);
	assert_int_equal(cnt(&f->b, "tx_ns"), 0);
}

/* The NS on the wire: solicited-node group, hop limit 255, valid checksum. */
static void
test_nd_wire_format(void **state)
{
	static const uint8_t snm[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff,
					 0x00, 0x00, 0x02 };
	struct fx *f = *state;
	struct rte_mbuf *pkts[BURST];
	const uint8_t *p, *ip, *nd;

	assert_int_equal(net_host_resolve(f->a.host, gid_b6, NULL), -EAGAIN);
	assert_int_equal(raw_rx(&f->b, pkts), 1);
	p = rte_pktmbuf_mtod(pkts[0], const uint8_t *);
	ip = p + 14;
	nd = ip + 40;
	assert_int_equal(pkts[0]->pkt_len, 14 + 40 + 32);
	assert_int_equal(p[0], 0x33);
	assert_int_equal(p[1], 0x33);
	assert_memory_equal(p + 2, snm + 12, 4);
	assert_memory_equal(p + 6, f->a.link->mac.addr_bytes, 6);
	assert_int_equal(p[12] << 8 | p[13], RTE_ETHER_TYPE_IPV6);
	assert_int_equal(ip[0] >> 4, 6);
	assert_int_equal(ip[4] << 8 | ip[5], 32);
	assert_int_equal(ip[6], IPPROTO_ICMPV6);
	assert_int_equal(ip[7], 255);
	assert_memory_equal(ip + 8, gid_a6, 16);
	assert_memory_equal(ip + 24, snm, 16);
	assert_int_equal(nd[0], 135);
	assert_int_equal(nd[1], 0);
	assert_memory_equal(nd + 8, gid_b6, 16);
	assert_int_equal(nd[24], 1);	/* SLLA */
	assert_int_equal(nd[25], 1);
	assert_memory_equal(nd + 26, f->a.link->mac.addr_bytes, 6);
	assert_int_equal(csum_ipv6(ip, nd, 32, IPPROTO_ICMPV6), 0xffff);
	rte_pktmbuf_free(pkts[0]);
}

/*
 * ARP: a request for our address creates the sender's entry; a reply
 * completes the resolution we started; a reply nobody asked for creates
 * nothing; a request for another host refreshes a known sender's MAC.
 */
static void
test_learn_arp(void **state)
{
	static const struct rte_ether_addr moved = {
		.addr_bytes = { 0x02, 0, 0, 0, 0, 0x78 } };
	struct fx *f = *state;
	uint8_t buf[128];

	to_b(f, buf, arp_frame(buf, &bcast, RTE_ARP_OP_REQUEST, &peer_mac, gid_x4,
			       NULL, gid_b4));
	assert_neigh(f, gid_x4, NET_NEIGH_REACHABLE, &peer_mac);
	assert_int_equal(cnt(&f->b, "tx_arp_reply"), 1);

	assert_int_equal(net_host_resolve(f->b.host, gid_a4, NULL), -EAGAIN);
	raw_drain(&f->a);		/* b's request: a's host never sees it */
	to_b(f, buf, arp_frame(buf, &f->b.link->mac, RTE_ARP_OP_REPLY, &peer_mac, gid_a4,
			       &f->b.link->mac, gid_b4));
	assert_neigh(f, gid_a4, NET_NEIGH_REACHABLE, &peer_mac);

	{
		static const uint8_t gid_u4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 1, 33 };

		to_b(f, buf, arp_frame(buf, &f->b.link->mac, RTE_ARP_OP_REPLY, &peer_mac,
				       gid_u4, &f->b.link->mac, gid_b4));
		assert_neigh(f, gid_u4, NET_NEIGH_NONE, NULL);
	}
	to_b(f, buf, arp_frame(buf, &bcast, RTE_ARP_OP_REQUEST, &moved, gid_x4, NULL,
			       gid_a4));
	assert_neigh(f, gid_x4, NET_NEIGH_REACHABLE, &moved);
	assert_int_equal(cnt(&f->b, "neigh_learned"), 2);
	assert_int_equal(cnt(&f->b, "tx_arp_reply"), 1);
}

/*
 * NS with a source link-layer option, target ours: the sender (the IPv6
 * source) is learned, from a global address and from a link-local one
 * (fe80::/10 is on-link whatever our prefixes, RFC 4291 2.5.6).  An NS
 * binds its option to its own source only (RFC 4861 7.2.3): one from the
 * peer's link-local address says nothing about its global address, which
 * is resolved by our own NS (the transport starts one at RTR) and learned
 * from the advertisement.
 */
static void
test_learn_ns(void **state)
{
	struct fx *f = *state;
	uint8_t buf[128];

	to_b(f, buf, nd_frame(buf, &snm_b6_mac, &peer_mac, gid_x6, snm_b6, 135, 0,
			      gid_b6, 1, &peer_mac));
	assert_neigh(f, gid_x6, NET_NEIGH_REACHABLE, &peer_mac);

	to_b(f, buf, nd_frame(buf, &snm_b6_mac, &peer_mac, gid_ll6, snm_b6, 135, 0,
			      gid_b6, 1, &peer_mac));
	assert_neigh(f, gid_ll6, NET_NEIGH_REACHABLE, &peer_mac);
	assert_int_equal(cnt(&f->b, "rx_ns"), 2);
	assert_int_equal(cnt(&f->b, "tx_na"), 2);
	assert_int_equal(cnt(&f->b, "neigh_learned"), 2);
	/* the peer's global address: not claimed by the NS, resolved by ours */
	assert_neigh(f, gid_y6, NET_NEIGH_NONE, NULL);
	assert_int_equal(net_host_resolve(f->b.host, gid_y6, NULL), -EAGAIN);
	raw_drain(&f->a);
	to_b(f, buf, nd_frame(buf, &f->b.link->mac, &peer_mac, gid_y6, gid_b6, 136,
			      0x60, gid_y6, 2, &peer_mac));
	assert_neigh(f, gid_y6, NET_NEIGH_REACHABLE, &peer_mac);
	/* and link-local peers can be resolved and refreshed like others */
	assert_int_equal(net_host_del_neigh(f->b.host, gid_ll6), 0);
	assert_int_equal(net_host_resolve(f->b.host, gid_ll6, NULL), -EAGAIN);
	assert_int_equal(cnt(&f->b, "tx_ns"), 2);
	raw_drain(&f->a);
}

/*
 * NA: with a target link-layer option it completes a resolution; without
 * one (Linux's answer to a unicast NS, which is how we refresh a STALE
 * entry) a solicited NA confirms the MAC the entry has (RFC 4861 7.2.5),
 * and cannot complete an INCOMPLETE entry.
 */
static void
test_learn_na(void **state)
{
	struct fx *f = *state;
	uint8_t buf[128];

	assert_int_equal(net_host_resolve(f->b.host, gid_x6, NULL), -EAGAIN);
	raw_drain(&f->a);
	to_b(f, buf, nd_frame(buf, &f->b.link->mac, &peer_mac, gid_x6, gid_b6, 136,
			      0x60, gid_x6, 0, NULL));
	assert_neigh(f, gid_x6, NET_NEIGH_INCOMPLETE, NULL);
	to_b(f, buf, nd_frame(buf, &f->b.link->mac, &peer_mac, gid_x6, gid_b6, 136,
			      0x60, gid_x6, 2, &peer_mac));
	assert_neigh(f, gid_x6, NET_NEIGH_REACHABLE, &peer_mac);

	fx_advance_ms(f, 60000);
	assert_neigh(f, gid_x6, NET_NEIGH_STALE, &peer_mac);
	assert_int_equal(net_host_resolve(f->b.host, gid_x6, NULL), 0);	/* probes */
	raw_drain(&f->a);
	/* not solicited: confirms nothing */
	to_b(f, buf, nd_frame(buf, &f->b.link->mac, &peer_mac, gid_x6, gid_b6, 136,
			      0x20, gid_x6, 0, NULL));
	assert_neigh(f, gid_x6, NET_NEIGH_STALE, &peer_mac);
	to_b(f, buf, nd_frame(buf, &f->b.link->mac, &peer_mac, gid_x6, gid_b6, 136,
			      0x40, gid_x6, 0, NULL));
	assert_neigh(f, gid_x6, NET_NEIGH_REACHABLE, &peer_mac);
	assert_int_equal(cnt(&f->b, "rx_na"), 4);
	assert_int_equal(cnt(&f->b, "neigh_learned"), 2);
	/* confirmed: no more probes, and it does not fail 3 tries later */
	fx_advance_ms(f, 3000);
	assert_neigh(f, gid_x6, NET_NEIGH_REACHABLE, &peer_mac);
	assert_int_equal(cnt(&f->b, "tx_ns"), 2);
	assert_int_equal(cnt(&f->b, "neigh_failed"), 0);
}

/* ---- tests: ICMP echo ------------------------------------------------------------- */

static struct rte_mbuf *
one_reply(struct fx *f, const uint8_t *req, size_t len)
{
	struct rte_mbuf *pkts[BURST];

	send_raw(&f->a, req, (uint32_t)len);
	assert_int_equal(side_poll(f, &f->b), 1);
	assert_int_equal(f->b.nkept, 0);
	assert_int_equal(raw_rx(&f->a, pkts), 1);
	assert_int_equal(pkts[0]->nb_segs, 1);
	assert_int_equal(pkts[0]->pkt_len, len);
	return pkts[0];
}

static void
test_icmp4_echo(void **state)
{
	struct fx *f = *state;
	uint8_t req[128];
	size_t len = icmp4_echo_frame(req, f, RTE_IP_ICMP_ECHO_REQUEST);
	struct rte_mbuf *m = one_reply(f, req, len);
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *ip = p + 14, *icmp = ip + 20;

	assert_memory_equal(p, f->a.link->mac.addr_bytes, 6);
	assert_memory_equal(p + 6, f->b.link->mac.addr_bytes, 6);
	assert_memory_equal(p + 12, req + 12, 2);
	assert_int_equal(ip[0], 0x45);
	assert_memory_equal(ip + 2, req + 14 + 2, 2);	/* total length */
	assert_int_equal(ip[9], IPPROTO_ICMP);
	assert_int_equal(ip[8], 64);
	assert_memory_equal(ip + 12, gid_b4 + 12, 4);
	assert_memory_equal(ip + 16, gid_a4 + 12, 4);
	assert_int_equal(csum_plain(ip, 20), 0xffff);
	assert_int_equal(icmp[0], RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(icmp[1], 0);
	assert_memory_equal(icmp + 4, req + 34 + 4, 4);	/* id, seq */
	assert_memory_equal(icmp + 8, req + 34 + 8, 56);	/* data */
	assert_int_equal(csum_plain(icmp, 64), 0xffff);
	rte_pktmbuf_free(m);
	assert_int_equal(cnt(&f->b, "rx_icmp4_echo"), 1);
	assert_int_equal(cnt(&f->b, "tx_icmp4_echo_reply"), 1);

	/* a reply is not answered, a corrupted request neither */
	len = icmp4_echo_frame(req, f, RTE_IP_ICMP_ECHO_REPLY);
	send_raw(&f->a, req, (uint32_t)len);
	len = icmp4_echo_frame(req, f, RTE_IP_ICMP_ECHO_REQUEST);
	req[len - 1] ^= 1;
	send_raw(&f->a, req, (uint32_t)len);
	assert_int_equal(side_poll(f, &f->b), 2);
	assert_int_equal(cnt(&f->b, "drop_icmp"), 1);
	assert_int_equal(cnt(&f->b, "drop_malformed"), 1);
	assert_int_equal(cnt(&f->b, "tx_icmp4_echo_reply"), 1);
}

static void
test_icmp6_echo(void **state)
{
	struct fx *f = *state;
	uint8_t req[160];
	size_t len = icmp6_echo_frame(req, f);
	struct rte_mbuf *m = one_reply(f, req, len);
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *ip = p + 14, *icmp = ip + 40;

	assert_memory_equal(p, f->a.link->mac.addr_bytes, 6);
	assert_memory_equal(p + 6, f->b.link->mac.addr_bytes, 6);
	assert_int_equal(ip[0] >> 4, 6);
	assert_int_equal(ip[4] << 8 | ip[5], 64);
	assert_int_equal(ip[6], IPPROTO_ICMPV6);
	assert_int_equal(ip[7], 64);
	assert_memory_equal(ip + 8, gid_b6, 16);
	assert_memory_equal(ip + 24, gid_a6, 16);
	assert_int_equal(icmp[0], 129);
	assert_int_equal(icmp[1], 0);
	assert_memory_equal(icmp + 4, req + 54 + 4, 60);	/* id, seq, data */
	assert_int_equal(csum_ipv6(ip, icmp, 64, IPPROTO_ICMPV6), 0xffff);
	rte_pktmbuf_free(m);
	assert_int_equal(cnt(&f->b, "rx_icmp6_echo"), 1);
	assert_int_equal(cnt(&f->b, "tx_icmp6_echo_reply"), 1);

	/* a bad checksum is dropped, not answered */
	req[len - 1] ^= 0x80;
	send_raw(&f->a, req, (uint32_t)len);
	assert_int_equal(side_poll(f, &f->b), 1);
	assert_int_equal(cnt(&f->b, "drop_malformed"), 1);
	assert_int_equal(cnt(&f->b, "tx_icmp6_echo_reply"), 1);
}

/* ---- tests: classification ----------------------------------------------------- */

static void
test_non_roce_dropped(void **state)
{
	static const struct rte_ether_addr other_mac = {
		.addr_bytes = { 0x02, 0, 0, 0, 0x77, 0x77 } };
	struct fx *f = *state;
	const struct rte_ether_addr *bm = &f->b.link->mac, *am = &f->a.link->mac;
	uint8_t buf[256];
	size_t len;

	len = udp4_frame(buf, bm, am, gid_a4, gid_b4, 53, 0);
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_udp_port */
	len = udp4_frame(buf, bm, am, gid_a4, gid_x4, ROCE_UDP_PORT, 0);
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_not_local */
	len = udp4_frame(buf, &other_mac, am, gid_a4, gid_b4, ROCE_UDP_PORT, 0);
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_not_local */
	len = udp4_frame(buf, bm, am, gid_a4, gid_b4, ROCE_UDP_PORT, 0x2000);
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_fragment (MF) */
	len = udp4_frame(buf, bm, am, gid_a4, gid_b4, ROCE_UDP_PORT, 0x0010);
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_fragment (offset) */
	len = udp4_frame(buf, bm, am, gid_a4, gid_b4, ROCE_UDP_PORT, 0);
	buf[14 + 9] = IPPROTO_TCP;
	send_raw(&f->a, buf, (uint32_t)len);			/* drop_ip_proto */
	send_raw(&f->a, buf, 14 + 10);				/* drop_malformed */
	len = eth_hdr(buf, bm, am, 0x88b5);
	memset(buf + len, 0, 46);
	send_raw(&f->a, buf, (uint32_t)len + 46);		/* drop_ethertype */
	len = eth_hdr(buf, bm, am, RTE_ETHER_TYPE_IPV6);
	len += ipv6_hdr(buf + len, gid_a6, gid_b6, IPPROTO_UDP, 8, 64);
	memset(buf + len, 0, 8);
	buf[len + 3] = 7;					/* UDP port 7 */
	buf[len + 5] = 8;
	send_raw(&f->a, buf, (uint32_t)len + 8);		/* drop_udp_port */
	len = eth_hdr(buf, bm, am, RTE_ETHER_TYPE_IPV6);
	len += ipv6_hdr(buf + len, gid_a6, gid_x6, IPPROTO_UDP, 8, 64);
	memset(buf + len, 0, 8);
	buf[len + 2] = 0x12;					/* 4791 */
	buf[len + 3] = 0xb7;
	send_raw(&f->a, buf, (uint32_t)len + 8);		/* drop_not_local */
	len = eth_hdr(buf, bm, am, RTE_ETHER_TYPE_IPV6);
	len += ipv6_hdr(buf + len, gid_a6, gid_b6, 0 /* hop-by-hop */, 8, 64);
	memset(buf + len, 0, 8);
	send_raw(&f->a, buf, (uint32_t)len + 8);		/* drop_ip_proto */

	assert_int_equal(side_poll(f, &f->b), 11);
	assert_int_equal(f->b.nkept, 0);
	assert_int_equal(cnt(&f->b, "rx_pkts"), 11);
	assert_int_equal(cnt(&f->b, "rx_roce"), 0);
	assert_int_equal(cnt(&f->b, "drop_udp_port"), 2);
	assert_int_equal(cnt(&f->b, "drop_not_local"), 3);
	assert_int_equal(cnt(&f->b, "drop_fragment"), 2);
	assert_int_equal(cnt(&f->b, "drop_ip_proto"), 2);
	assert_int_equal(cnt(&f->b, "drop_malformed"), 1);
	assert_int_equal(cnt(&f->b, "drop_ethertype"), 1);
	/* nothing was answered */
	side_poll(f, &f->a);
	assert_int_equal(cnt(&f->a, "rx_pkts"), 0);
}

/*
 * RoCEv2 frames interleaved with an ARP request, an echo request and
 * junk: the RoCE frames come out first, in order, byte for byte.
 */
static void
test_roce_pass(void **state)
{
	struct fx *f = *state;
	uint8_t frames[4][512];
	size_t lens[4];
	struct rte_mbuf *pkts[8];
	uint8_t buf[256];
	size_t len;
	uint16_t n = 0, k;

	for (int i = 0; i < 4; i++)
		lens[i] = roce_frame(frames[i], sizeof(frames[i]), f,
				     i % 2 ? 6 : 4, (uint32_t)(100 + i));
	pkts[n++] = mbuf_from(f->b.link, frames[0], (uint32_t)lens[0]);
	len = icmp4_echo_frame(buf, f, RTE_IP_ICMP_ECHO_REQUEST);
	pkts[n++] = mbuf_from(f->b.link, buf, (uint32_t)len);
	pkts[n++] = mbuf_from(f->b.link, frames[1], (uint32_t)lens[1]);
	len = udp4_frame(buf, &f->b.link->mac, &f->a.link->mac, gid_a4, gid_b4, 53, 0);
	pkts[n++] = mbuf_from(f->b.link, buf, (uint32_t)len);
	pkts[n++] = mbuf_from(f->b.link, frames[2], (uint32_t)lens[2]);
	pkts[n++] = mbuf_from(f->b.link, frames[3], (uint32_t)lens[3]);

	k = net_host_rx(f->b.host, pkts, n);
	assert_int_equal(k, 4);
	for (int i = 0; i < 4; i++) {
		struct roce_pkt parsed;

		assert_int_equal(pkts[i]->pkt_len, lens[i]);
		assert_memory_equal(rte_pktmbuf_mtod(pkts[i], const uint8_t *),
				    frames[i], lens[i]);
		assert_int_equal(roce_parse_eth(frames[i], lens[i], &parsed),
				 ROCE_PARSE_OK);
		assert_int_equal(parsed.psn, 100 + i);
	}
	rte_pktmbuf_free_bulk(pkts, k);
	assert_int_equal(cnt(&f->b, "rx_roce"), 4);
	assert_int_equal(cnt(&f->b, "drop_udp_port"), 1);
	assert_int_equal(cnt(&f->b, "tx_icmp4_echo_reply"), 1);
	/* the echo reply went out on b's link */
	assert_int_equal(side_poll(f, &f->a), 1);
	/* and through a real link: the same */
	send_raw(&f->a, frames[0], (uint32_t)lens[0]);
	assert_int_equal(side_poll(f, &f->b), 1);
	assert_int_equal(f->b.nkept, 1);
	assert_memory_equal(rte_pktmbuf_mtod(f->b.kept[0], const uint8_t *),
			    frames[0], lens[0]);
}

/* ---- tests: timeout, aging, pending ------------------------------------------ */

/* The defaults: a probe every 100 ms, 30 in all (3 s, as Linux's 3 x 1 s),
 * so a lost ARP answer is repeated within an RC retry budget. */
static void
test_resolve_defaults(void **state)
{
	struct fx *f = *state;
	struct net_host_config hc = { .link = f->a.link };
	uint64_t ms = f->hz / 1000, t0;
	struct rte_ether_addr mac;
	struct net_host *h;

	assert_int_equal(net_host_create(&hc, &h), 0);
	t0 = rte_get_timer_cycles() + ms;	/* after create's own clock */
	assert_int_equal(net_host_add_addr(h, gid_a4, 24), 0);
	net_host_timer(h, t0);
	assert_int_equal(net_host_resolve(h, gid_b4, &mac), -EAGAIN);
	assert_int_equal(net_host_counter(h, "tx_arp_request"), 1);
	/* one more probe every 100 ms (b does not answer: nobody polls it) */
	for (uint64_t i = 1; i < 30; i++) {
		net_host_timer(h, t0 + i * 100 * ms - 1);
		assert_int_equal(net_host_counter(h, "tx_arp_request"), i);
		net_host_timer(h, t0 + i * 100 * ms);
		assert_int_equal(net_host_counter(h, "tx_arp_request"), i + 1);
		assert_int_equal(net_host_resolve(h, gid_b4, &mac), -EAGAIN);
		raw_drain(&f->b);
	}
	/* 30 probes, 3 s: FAILED */
	net_host_timer(h, t0 + 3000 * ms);
	assert_int_equal(net_host_counter(h, "tx_arp_request"), 30);
	assert_int_equal(net_host_resolve(h, gid_b4, &mac), -EHOSTUNREACH);
	raw_drain(&f->b);
	net_host_destroy(h);
}

/* Three tries a second apart, then -EHOSTUNREACH for failed_ms, then anew. */
static void
check_timeout(struct fx *f, const uint8_t gid[16], const char *probe_cnt)
{
	struct rte_ether_addr mac;
	uint64_t p1;

	assert_int_equal(net_host_resolve(f->a.host, gid, &mac), -EAGAIN);
	p1 = cnt(&f->a, probe_cnt);	/* the first try is out */
	assert_true(p1 >= 1);
	fx_pump(f);
	fx_advance_ms(f, 999);
	assert_int_equal(cnt(&f->a, probe_cnt), p1);
	fx_advance_ms(f, 1);
	assert_int_equal(cnt(&f->a, probe_cnt), p1 + 1);
	assert_int_equal(net_host_resolve(f->a.host, gid, &mac), -EAGAIN);
	fx_advance_ms(f, 1000);
	assert_int_equal(cnt(&f->a, probe_cnt), p1 + 2);
	assert_int_equal(net_host_resolve(f->a.host, gid, &mac), -EAGAIN);
	fx_advance_ms(f, 1000);
	assert_int_equal(cnt(&f->a, probe_cnt), p1 + 2);
	assert_int_equal(net_host_resolve(f->a.host, gid, &mac), -EHOSTUNREACH);
	/* failed_ms later the entry is forgotten and a new round starts */
	fx_advance_ms(f, 1000);
	assert_int_equal(net_host_resolve(f->a.host, gid, &mac), -EAGAIN);
	assert_int_equal(cnt(&f->a, probe_cnt), p1 + 3);
	fx_pump(f);
}

static void
test_resolve_timeout(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	size_t len = roce_frame(buf, sizeof(buf), f, 4, 1);
	struct rte_mbuf *m;

	/* a frame waiting for the unanswered neighbour is dropped with it */
	m = mbuf_from(f->a.link, buf, (uint32_t)len);
	assert_int_equal(net_host_output(f->a.host, gid_x4, m), -EAGAIN);
	check_timeout(f, gid_x4, "tx_arp_request");
	assert_int_equal(cnt(&f->a, "neigh_failed"), 1);
	assert_int_equal(cnt(&f->a, "drop_pending"), 1);
	/* b saw requests for an address it does not have */
	assert_int_equal(cnt(&f->b, "drop_arp"), 4);
	assert_int_equal(cnt(&f->b, "tx_arp_reply"), 0);

	check_timeout(f, gid_x6, "tx_ns");
	/* x4's second round (started above) failed meanwhile too */
	assert_int_equal(cnt(&f->a, "neigh_failed"), 3);
	assert_int_equal(cnt(&f->b, "drop_not_local"), 4);	/* other group */

	/* off-link, no address of the family, ours (loopback: our own MAC,
	 * no probe), multicast */
	{
		static const uint8_t far4[16] = { [10] = 0xff, [11] = 0xff, 198, 19, 0, 1 };
		static const uint8_t mc6[16] = { 0xff, 0x02, [15] = 1 };
		struct net_host *h;
		struct net_host_config hc = { .link = f->a.link };
		struct rte_ether_addr own;
		uint64_t arp_before = cnt(&f->a, "tx_arp_request");

		assert_int_equal(net_host_resolve(f->a.host, far4, NULL), -ENETUNREACH);
		assert_int_equal(net_host_resolve(f->a.host, gid_a4, &own), 0);
		assert_true(rte_is_same_ether_addr(&own, &f->a.link->mac));
		assert_int_equal(cnt(&f->a, "tx_arp_request"), arp_before);
		assert_int_equal(net_host_resolve(f->a.host, mc6, NULL), -EINVAL);
		assert_int_equal(net_host_create(&hc, &h), 0);
		assert_int_equal(net_host_add_addr(h, gid_a4, 24), 0);
		assert_int_equal(net_host_add_addr(h, gid_a4, 24), -EEXIST);
		assert_int_equal(net_host_add_addr(h, gid_a6, 129), -EINVAL);
		assert_int_equal(net_host_resolve(h, gid_b6, NULL), -EADDRNOTAVAIL);
		net_host_destroy(h);
	}
}

static void
test_aging(void **state)
{
	struct fx *f = *state;
	struct rte_ether_addr mac;
	struct net_neigh_info info;
	struct rte_mbuf *pkts[BURST];
	const uint8_t *p;

	assert_int_equal(net_host_resolve(f->a.host, gid_b4, &mac), -EAGAIN);
	fx_pump(f);
	assert_int_equal(net_host_resolve(f->a.host, gid_b4, &mac), 0);

	/* 60 s without news: STALE, still usable, refreshed by a unicast probe */
	fx_advance_ms(f, 59999);
	net_host_neigh_info(f->a.host, gid_b4, &info);
	assert_int_equal(info.state, NET_NEIGH_REACHABLE);
	fx_advance_ms(f, 1);
	net_host_neigh_info(f->a.host, gid_b4, &info);
	assert_int_equal(info.state, NET_NEIGH_STALE);
	assert_int_equal(cnt(&f->a, "neigh_stale"), 1);
	assert_int_equal(net_host_resolve(f->a.host, gid_b4, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &f->b.link->mac));
	assert_int_equal(cnt(&f->a, "tx_arp_request"), 2);
	assert_int_equal(raw_rx(&f->b, pkts), 1);
	p = rte_pktmbuf_mtod(pkts[0], const uint8_t *);
	assert_memory_equal(p, f->b.link->mac.addr_bytes, 6);	/* unicast */
	/* give it to b's host: it answers, a is REACHABLE again */
	assert_int_equal(net_host_rx(f->b.host, pkts, 1), 0);
	fx_pump(f);
	net_host_neigh_info(f->a.host, gid_b4, &info);
	assert_int_equal(info.state, NET_NEIGH_REACHABLE);

	/* aged again, and b has gone: the refresh fails after 3 tries */
	fx_advance_ms(f, 60000);
	assert_int_equal(net_host_resolve(f->a.host, gid_b4, &mac), 0);
	for (int i = 0; i < 3; i++) {
		raw_drain(&f->b);
		fx_advance_ms(f, 1000);
	}
	raw_drain(&f->b);
	assert_int_equal(cnt(&f->a, "tx_arp_request"), 5);
	assert_int_equal(net_host_resolve(f->a.host, gid_b4, &mac), -EHOSTUNREACH);
	net_host_neigh_info(f->a.host, gid_b4, &info);
	assert_int_equal(info.state, NET_NEIGH_FAILED);
}

/*
 * A neighbour handle (what an address vector caches) gives the MAC without
 * a search while its generation holds, and stops at every change of the
 * entry: aged to STALE (so the resolution's unicast refresh runs), FAILED,
 * replaced by a static entry with another MAC, deleted.
 */
static void
test_neigh_handle_generation(void **state)
{
	static const struct rte_ether_addr other = {{ 0x02, 0, 0, 0, 0x77, 0x01 }};
	struct fx *f = *state;
	struct net_neigh_ref ref = { 0 }, old;
	struct rte_ether_addr mac;

	assert_false(net_host_neigh_mac(f->a.host, &ref, &mac));	/* zeroed */
	assert_int_equal(net_host_resolve_ref(f->a.host, gid_b4, &mac, &ref), -EAGAIN);
	assert_int_equal(ref.gen, 0);
	fx_pump(f);
	assert_int_equal(net_host_resolve_ref(f->a.host, gid_b4, &mac, &ref), 0);
	assert_int_not_equal(ref.gen, 0);
	memset(&mac, 0, sizeof(mac));
	assert_true(net_host_neigh_mac(f->a.host, &ref, &mac));
	assert_true(rte_is_same_ether_addr(&mac, &f->b.link->mac));
	old = ref;
	fx_advance_ms(f, 60000);			/* STALE */
	assert_false(net_host_neigh_mac(f->a.host, &old, &mac));
	assert_int_equal(net_host_resolve_ref(f->a.host, gid_b4, &mac, &ref), 0);
	assert_int_equal(ref.gen, 0);		/* STALE: resolve each time */
	assert_int_equal(cnt(&f->a, "tx_arp_request"), 2);
	fx_pump(f);					/* b answers: REACHABLE */
	assert_int_equal(net_host_resolve_ref(f->a.host, gid_b4, &mac, &ref), 0);
	assert_int_not_equal(ref.gen, 0);
	assert_int_not_equal(ref.gen, old.gen);
	/* another MAC: the handle is stale, the new one has the new MAC */
	old = ref;
	assert_int_equal(net_host_add_static(f->a.host, gid_b4, &other), 0);
	assert_false(net_host_neigh_mac(f->a.host, &old, &mac));
	assert_int_equal(net_host_resolve_ref(f->a.host, gid_b4, &mac, &ref), 0);
	assert_true(net_host_neigh_mac(f->a.host, &ref, &mac));
	assert_true(rte_is_same_ether_addr(&mac, &other));
	/* deleted (the slot may be reused for another GID): stale */
	assert_int_equal(net_host_del_neigh(f->a.host, gid_b4), 0);
	assert_false(net_host_neigh_mac(f->a.host, &ref, &mac));
}

/*
 * Frames for an unresolved neighbour are held within the byte budgets
 * (PEND_BYTES per neighbour, PEND_TOTAL in all), then sent in order.  A
 * frame over a budget is refused and counted (drop_pending_budget); those
 * held already stay: the start of what was sent goes out.
 */
static void
test_pending_output(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	size_t len = roce_frame(buf, sizeof(buf), f, 6, 0);
	uint32_t fit = PEND_BYTES / (uint32_t)len;
	uint32_t fit_x = (PEND_TOTAL - fit * (uint32_t)len) / (uint32_t)len;
	struct net_neigh_info info;
	struct rte_ether_addr zero = { .addr_bytes = { 0 } };

	assert_true(fit >= 3 && fit_x >= 1 && fit_x < fit);
	/* destination MAC unknown: zero in the frame, filled in by the host */
	memset(buf, 0, 6);
	for (uint32_t i = 0; i < fit + 2; i++) {
		struct rte_mbuf *m = mbuf_from(f->a.link, buf, (uint32_t)len);

		/* the payload's first byte tells the frames apart */
		rte_pktmbuf_mtod(m, uint8_t *)[len - 5] = (uint8_t)i;
		assert_int_equal(net_host_output(f->a.host, gid_b6, m),
				 i < fit ? -EAGAIN : -ENOBUFS);
	}
	net_host_neigh_info(f->a.host, gid_b6, &info);
	assert_int_equal(info.pending, fit);
	assert_int_equal(info.pending_bytes, fit * len);
	assert_int_equal(cnt(&f->a, "drop_pending_budget"), 2);
	/* a second neighbour gets what is left of the host's budget */
	for (uint32_t i = 0; i < fit_x + 1; i++)
		assert_int_equal(net_host_output(f->a.host, gid_x6,
						 mbuf_from(f->a.link, buf, (uint32_t)len)),
				 i < fit_x ? -EAGAIN : -ENOBUFS);
	net_host_neigh_info(f->a.host, gid_x6, &info);
	assert_int_equal(info.pending, fit_x);
	assert_int_equal(cnt(&f->a, "drop_pending_budget"), 3);
	assert_int_equal(cnt(&f->a, "drop_pending"), 0);
	fx_pump(f);
	assert_int_equal(cnt(&f->a, "tx_pending"), fit);
	assert_int_equal(f->b.nkept, fit);
	for (uint32_t i = 0; i < fit; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(f->b.kept[i], const uint8_t *);

		assert_memory_equal(p, f->b.link->mac.addr_bytes, 6);
		assert_memory_equal(p + 6, f->a.link->mac.addr_bytes, 6);
		assert_int_equal(p[len - 5], i);	/* the first ones, in order */
		assert_memory_equal(p + 12, buf + 12, len - 17);
	}
	/* b6's share is free again: x6 may hold up to its own budget */
	assert_int_equal(net_host_output(f->a.host, gid_x6,
					 mbuf_from(f->a.link, buf, (uint32_t)len)), -EAGAIN);
	/* x6 never answers: what it held is dropped with it (3 tries) */
	for (int i = 0; i < 3; i++) {
		fx_advance_ms(f, 1000);
		raw_drain(&f->b);
	}
	net_host_neigh_info(f->a.host, gid_x6, &info);
	assert_int_equal(info.state, NET_NEIGH_FAILED);
	assert_int_equal(cnt(&f->a, "drop_pending"), fit_x + 1);
	assert_int_equal(cnt(&f->a, "drop_pending_budget"), 3);
	/* resolved now: output sends at once */
	assert_int_equal(net_host_output(f->a.host, gid_b6,
					 mbuf_from(f->a.link, buf, (uint32_t)len)), 0);
	fx_pump(f);
	assert_int_equal(f->b.nkept, fit + 1);

	/* a static entry needs no resolution and is not overwritten */
	assert_int_equal(net_host_add_static(f->a.host, gid_x4, &f->b.link->mac), 0);
	assert_int_equal(net_host_add_static(f->a.host, gid_x4, &zero), -EINVAL);
	assert_int_equal(net_host_resolve(f->a.host, gid_x4, NULL), 0);
	fx_advance_ms(f, 3600 * 1000);
	net_host_neigh_info(f->a.host, gid_x4, &info);
	assert_int_equal(info.state, NET_NEIGH_PERMANENT);
	assert_int_equal(net_host_del_neigh(f->a.host, gid_x4), 0);
	assert_int_equal(net_host_del_neigh(f->a.host, gid_x4), -ENOENT);
}

/* ---- tests: the driver alone --------------------------------------------------- */

static void
test_vdev_loopback(void **state)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link, *again;
	struct ethdev_link_stats st;
	struct rte_mbuf *m, *pkts[BURST];
	uint8_t frame[1000];

	(void)state;
	cfg.devargs = "net_ring0";
	for (int round = 0; round < 2; round++) {
		assert_int_equal(ethdev_link_open(&cfg, &link), 0);
		assert_int_equal(ethdev_link_open(&cfg, &again), -EEXIST);
		assert_string_equal(link->name, "net_ring0");
		assert_int_equal(link->mtu, ETHDEV_LINK_MTU_DEFAULT);
		assert_int_equal(rte_pktmbuf_data_room_size(link->pool),
				 ETHDEV_LINK_DATA_ROOM_DEFAULT);
		for (size_t i = 0; i < sizeof(frame); i++)
			frame[i] = (uint8_t)(i * 7 + round);
		m = mbuf_from(link, frame, sizeof(frame));
		assert_int_equal(droce_link_tx(link, &m, 1), 1);
		/* net_ring0 alone is a loopback: tx ring == rx ring */
		assert_int_equal(droce_link_rx(link, pkts, BURST), 1);
		assert_int_equal(pkts[0]->pkt_len, sizeof(frame));
		assert_memory_equal(rte_pktmbuf_mtod(pkts[0], void *), frame,
				    sizeof(frame));
		rte_pktmbuf_free(pkts[0]);
		assert_int_equal(ethdev_link_stats_get(link, &st), 0);
		assert_int_equal(st.rx_pkts, 1);
		assert_int_equal(st.tx_pkts, 1);
		assert_int_equal(st.rx_bytes, sizeof(frame));
		assert_int_equal(st.tx_bytes, sizeof(frame));
		assert_int_equal(st.hw_ipackets, 1);
		assert_int_equal(st.hw_opackets, 1);
		assert_true(ethdev_link_port_id(link) >= 0);
		droce_link_close(link);
	}
	cfg.devargs = "net_nosuchpmd0";
	assert_true(ethdev_link_open(&cfg, &link) < 0);
	cfg.devargs = ",x";
	assert_int_equal(ethdev_link_open(&cfg, &link), -EINVAL);
}

struct ring_port {
	struct rte_ring *r;
	int port;
};

static void
ring_port_make(struct ring_port *rp, const char *name)
{
	char rname[32];

	snprintf(rname, sizeof(rname), "r_%s", name);
	rp->r = rte_ring_create(rname, 512, (int)rte_socket_id(),
				RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(rp->r);
	rp->port = rte_eth_from_rings(name, &rp->r, 1, &rp->r, 1,
				      (unsigned int)rte_socket_id());
	assert_true(rp->port >= 0);
}

static void
test_config_and_mtu(void **state)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link = NULL;
	struct ring_port rp;

	(void)state;
	ring_port_make(&rp, "net_tcfg");
	cfg.port_id = (uint16_t)rp.port;
	cfg.nb_rxq = 2;
	assert_int_equal(ethdev_link_open(&cfg, &link), -ENOTSUP);
	cfg.nb_rxq = 1;
	cfg.mtu = 20;
	assert_int_equal(ethdev_link_open(&cfg, &link), -EINVAL);
	cfg.mtu = 9000;
	cfg.promiscuous = true;
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	assert_int_equal(link->mtu, 9000);
	droce_link_close(link);		/* closes the port too */
	assert_false(rte_eth_dev_is_valid_port((uint16_t)rp.port));
	cfg.port_id = 4000;
	assert_int_equal(ethdev_link_open(&cfg, &link), -EINVAL);
	rte_ring_free(rp.r);
}

/*
 * Several queue pairs on net_ring (one ring per queue, no RSS: a frame
 * comes back on the queue it was sent on): each queue moves its own
 * frames, the stats sum the queues, and asking for more queues than the
 * port has, or unequal rx/tx counts, is refused.
 */
static void
test_queues(void **state)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link = NULL;
	struct ethdev_link_stats st;
	struct rte_mbuf *pkts[BURST];
	struct rte_ring *r[2];
	int port;

	(void)state;
	r[0] = rte_ring_create("r_tq0", 512, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	r[1] = rte_ring_create("r_tq1", 512, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(r[0]);
	assert_non_null(r[1]);
	port = rte_eth_from_rings("net_tq", r, 2, r, 2, (unsigned int)rte_socket_id());
	assert_true(port >= 0);
	cfg.port_id = (uint16_t)port;
	cfg.nb_rxq = 3;
	cfg.nb_txq = 3;
	assert_int_equal(ethdev_link_open(&cfg, &link), -ENOTSUP);	/* has 2 */
	cfg.nb_txq = 2;
	assert_int_equal(ethdev_link_open(&cfg, &link), -ENOTSUP);	/* 3 != 2 */
	cfg.nb_rxq = 2;
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	assert_int_equal(droce_link_queues(link), 2);
	for (uint16_t q = 0; q < 2; q++) {
		for (int i = 0; i < 3 + q; i++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(link->pool);
			uint8_t *d;

			assert_non_null(m);
			d = (uint8_t *)rte_pktmbuf_append(m, 60);
			assert_non_null(d);
			memset(d, 0, 60);
			d[59] = (uint8_t)(q * 16 + i);
			assert_int_equal(droce_link_tx_q(link, q, &m, 1), 1);
		}
	}
	/* queue 1's frames on queue 1 only, in order; then queue 0's */
	assert_int_equal(droce_link_rx_q(link, 1, pkts, BURST), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rte_pktmbuf_mtod(pkts[i], uint8_t *)[59], 16 + i);
	rte_pktmbuf_free_bulk(pkts, 4);
	assert_int_equal(droce_link_rx_q(link, 1, pkts, BURST), 0);
	/* queue 0 through the single-queue entry points as well */
	assert_int_equal(droce_link_rx(link, pkts, BURST), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rte_pktmbuf_mtod(pkts[i], uint8_t *)[59], i);
	rte_pktmbuf_free_bulk(pkts, 3);
	assert_int_equal(ethdev_link_stats_get(link, &st), 0);
	assert_int_equal(st.tx_pkts, 7);
	assert_int_equal(st.rx_pkts, 7);
	droce_link_close(link);
	rte_ring_free(r[0]);
	rte_ring_free(r[1]);
}

/* A PMD without rte_flow: validation and isolation fail cleanly. */
static void
test_flow_isolate_unsupported(void **state)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link = NULL;
	struct ring_port rp;

	(void)state;
	ring_port_make(&rp, "net_tflow");
	assert_int_equal(ethdev_link_flow_validate((uint16_t)rp.port, false), -ENOTSUP);
	assert_int_equal(ethdev_link_flow_validate((uint16_t)rp.port, true), -ENOTSUP);
	assert_int_equal(ethdev_link_flow_validate(4000, true), -EINVAL);
	cfg.port_id = (uint16_t)rp.port;
	cfg.flow_isolate = true;
	assert_int_equal(ethdev_link_open(&cfg, &link), -ENOTSUP);
	/* the port is untouched and usable without isolation */
	assert_true(rte_eth_dev_is_valid_port((uint16_t)rp.port));
	cfg.flow_isolate = false;
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	droce_link_close(link);
	rte_ring_free(rp.r);
}

/* Chained mbufs from the PMD: linearized in place, copied, or dropped. */
static void
test_multiseg(void **state)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link = NULL;
	struct ethdev_link_stats st;
	struct rte_mbuf *pkts[BURST], *head, *tail;
	struct ring_port rp;
	uint8_t want[300];

	(void)state;
	ring_port_make(&rp, "net_tseg");
	cfg.port_id = (uint16_t)rp.port;
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = (uint8_t)(i ^ 0x5a);

	for (int kind = 0; kind < 3; kind++) {
		head = rte_pktmbuf_alloc(link->pool);
		tail = rte_pktmbuf_alloc(link->pool);
		assert_non_null(head);
		assert_non_null(tail);
		if (kind == 1)	/* no tailroom in the head: must copy */
			head->data_off = (uint16_t)(head->buf_len - 100);
		if (kind == 2) {
			/* longer than any one mbuf: must drop */
			head->data_off = (uint16_t)(head->buf_len - 100);
			memcpy(rte_pktmbuf_append(head, 100), want, 100);
			tail->data_off = 0;
			assert_non_null(rte_pktmbuf_append(tail, (uint16_t)(tail->buf_len - 10)));
		} else {
			memcpy(rte_pktmbuf_append(head, 100), want, 100);
			memcpy(rte_pktmbuf_append(tail, 200), want + 100, 200);
		}
		assert_int_equal(rte_pktmbuf_chain(head, tail), 0);
		assert_int_equal(droce_link_tx(link, &head, 1), 1);
		if (kind == 2) {
			assert_int_equal(droce_link_rx(link, pkts, BURST), 0);
			continue;
		}
		assert_int_equal(droce_link_rx(link, pkts, BURST), 1);
		assert_int_equal(pkts[0]->nb_segs, 1);
		assert_int_equal(pkts[0]->pkt_len, 300);
		assert_memory_equal(rte_pktmbuf_mtod(pkts[0], void *), want, 300);
		rte_pktmbuf_free(pkts[0]);
	}
	assert_int_equal(ethdev_link_stats_get(link, &st), 0);
	assert_int_equal(st.rx_linearized, 2);
	assert_int_equal(st.rx_multiseg_drops, 1);
	assert_int_equal(st.rx_pkts, 2);
	droce_link_close(link);
	rte_ring_free(rp.r);
}

/* ---- the loss knob (rx/tx callbacks) ------------------------------------------ */

#define FAULT_FRAMES 64

struct fault_run {
	unsigned int got;			/* frames received back */
	uint8_t index[FAULT_FRAMES];		/* which frame each was */
	uint16_t type[FAULT_FRAMES];		/* and its EtherType */
	struct ethdev_link_stats st;
};

/* FAULT_FRAMES frames through a loopback port with the knob at drop. */
static void
fault_run(const char *name, double drop, uint64_t seed, uint64_t limit,
	  struct fault_run *out)
{
	struct ethdev_link_config cfg = small_link;
	struct droce_link *link = NULL;
	struct rte_mbuf *pkts[FAULT_FRAMES];
	struct ring_port rp;
	unsigned int got = 0;

	ring_port_make(&rp, name);
	cfg.port_id = (uint16_t)rp.port;
	cfg.drop = drop;
	cfg.seed = seed;
	cfg.drop_limit = limit;
	assert_int_equal(ethdev_link_open(&cfg, &link), 0);
	for (unsigned int i = 0; i < FAULT_FRAMES; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(link->pool);
		struct rte_ether_hdr *eh;

		assert_non_null(m);
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, 60);
		assert_non_null(eh);
		memset(eh, 0, 60);
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		((uint8_t *)eh)[sizeof(*eh)] = (uint8_t)i;
		pkts[i] = m;
	}
	/* every frame counts as sent, lost or not */
	assert_int_equal(droce_link_tx(link, pkts, FAULT_FRAMES), FAULT_FRAMES);
	memset(out, 0, sizeof(*out));
	for (unsigned int n; (n = droce_link_rx(link, pkts, FAULT_FRAMES)) != 0; ) {
		for (unsigned int i = 0; i < n; i++, got++) {
			const struct rte_ether_hdr *eh =
				rte_pktmbuf_mtod(pkts[i], const struct rte_ether_hdr *);

			assert_true(got < FAULT_FRAMES);
			out->index[got] = ((const uint8_t *)eh)[sizeof(*eh)];
			out->type[got] = rte_be_to_cpu_16(eh->ether_type);
			rte_pktmbuf_free(pkts[i]);
		}
	}
	out->got = got;
	assert_int_equal(ethdev_link_stats_get(link, &out->st), 0);
	assert_int_equal(out->st.tx_pkts, FAULT_FRAMES);
	droce_link_close(link);
	rte_ring_free(rp.r);
}

static void
test_fault_knob(void **state)
{
	struct fault_run off, all, a, b;
	unsigned int lost_on_wire = 0;

	(void)state;
	fault_run("net_tfault0", 0, 1, 0, &off);
	assert_int_equal(off.got, FAULT_FRAMES);
	assert_int_equal(off.st.fault_drops, 0);
	for (unsigned int i = 0; i < FAULT_FRAMES; i++) {
		assert_int_equal(off.index[i], i);
		assert_int_equal(off.type[i], RTE_ETHER_TYPE_IPV4);
	}
	/* drop 1: each frame lost when sent and again when received */
	fault_run("net_tfault1", 1, 1, 0, &all);
	assert_int_equal(all.got, 0);
	assert_int_equal(all.st.fault_drops, 2 * FAULT_FRAMES);
	assert_int_equal(all.st.rx_pkts, 0);
	/* the same seed loses the same frames */
	fault_run("net_tfault2", 0.5, 0x5eed, 0, &a);
	fault_run("net_tfault3", 0.5, 0x5eed, 0, &b);
	assert_int_equal(a.got, b.got);
	assert_memory_equal(a.index, b.index, sizeof(a.index));
	assert_memory_equal(a.type, b.type, sizeof(a.type));
	assert_int_equal(a.st.fault_drops, b.st.fault_drops);
	assert_true(a.got > 0 && a.got < FAULT_FRAMES);
	/* a frame lost on send arrives with the EtherType no stack takes */
	for (unsigned int i = 0; i < a.got; i++) {
		assert_true(a.type[i] == RTE_ETHER_TYPE_IPV4 || a.type[i] == 0x88B5);
		lost_on_wire += a.type[i] == 0x88B5;
	}
	/* at least every frame not received, plus those lost on send */
	assert_true(a.st.fault_drops >= FAULT_FRAMES - a.got + lost_on_wire);
	assert_int_equal(a.st.rx_pkts, a.got);
}

/* drop 1 with a limit of 5: the first five frames sent are lost (they
 * arrive with the lost EtherType), then none, on send or on receive. */
static void
test_fault_limit(void **state)
{
	struct fault_run r;

	(void)state;
	fault_run("net_tfault4", 1, 1, 5, &r);
	assert_int_equal(r.st.fault_drops, 5);
	assert_int_equal(r.got, FAULT_FRAMES);
	assert_int_equal(r.st.rx_pkts, FAULT_FRAMES);
	for (unsigned int i = 0; i < FAULT_FRAMES; i++) {
		assert_int_equal(r.index[i], i);
		assert_int_equal(r.type[i], i < 5 ? 0x88B5 : RTE_ETHER_TYPE_IPV4);
	}
}

/* ---- main --------------------------------------------------------------------- */

static unsigned int
free_hugepages(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned int n = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%u", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

int
main(int argc, char **argv)
{
	char *argv_huge[] = { argv[0], "--no-pci", "--in-memory", "-l", "0",
			      "--log-level=lib.eal:error", NULL };
	char *argv_nohuge[] = { argv[0], "--no-pci", "--no-huge", "-m", "512",
				"--no-shconf", "-l", "0",
				"--log-level=lib.eal:error", NULL };
	bool huge = free_hugepages() >= 128;
	char **eal_argv = huge ? argv_huge : argv_nohuge;
	int eal_argc = 0;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_arp_resolve, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_nd_resolve, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_nd_wire_format, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_learn_arp, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_learn_ns, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_learn_na, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_icmp4_echo, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_icmp6_echo, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_non_roce_dropped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_roce_pass, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_resolve_defaults, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_resolve_timeout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_aging, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_neigh_handle_generation, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_pending_output, fx_setup, fx_teardown),
		cmocka_unit_test(test_vdev_loopback),
		cmocka_unit_test(test_config_and_mtu),
		cmocka_unit_test(test_queues),
		cmocka_unit_test(test_flow_isolate_unsupported),
		cmocka_unit_test(test_multiseg),
		cmocka_unit_test(test_fault_knob),
		cmocka_unit_test(test_fault_limit),
	};
	int ret;

	(void)argc;
	while (eal_argv[eal_argc] != NULL)
		eal_argc++;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	printf("# EAL %s\n", huge ? "with 2 MiB hugepages" :
	       "with --no-huge (WARNING: no free hugepages)");
	ret = cmocka_run_group_tests_name("ethdev_net", tests, NULL, NULL);
	rte_eal_cleanup();
	return ret;
}
