/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One table of local addresses and one neighbour table: lib/net's, read
 * by the transport.  A droce context on end a of a virtual wire; the test
 * drives end b by hand.
 *   - an address added with the one call (net_host_add_addr on
 *     tp_dev_host) is the GID the transport's query returns at its index,
 *     and ARP and IPv6 ND answer for it (exact frames);
 *   - the address vector's neighbour comes from the same table: a static
 *     entry resolves on a table-only host (no host stack, the virtual
 *     wire tests' mode), any other peer fails there (-EHOSTUNREACH, not
 *     a frame sent), and with a host stack the same AV starts ARP (the
 *     exact request).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "net_host.h"
#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

static const uint8_t ip_a[4] = { 198, 18, 0, 1 };
static const uint8_t ip_b[4] = { 198, 18, 0, 2 };
static const uint8_t ip_far[4] = { 198, 18, 0, 9 };	/* on-link, no entry */
static const uint8_t gid6_a[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 1 };
static const uint8_t gid6_b[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 2 };

struct end {
	struct droce_context *ctx;
	struct tp_dev *tp;
	struct droce_link *la;		/* droce's end */
	struct droce_link *lb;		/* the test's end */
	struct droce_pd *pd;
};

static void
end_open(struct end *e, bool host_stack)
{
	struct tp_dev_config cfg = { .host_stack = host_stack };
	struct vwire_config w = { 0 };

	memset(e, 0, sizeof(*e));
	assert_int_equal(vwire_pair_create(&w, &e->la, &e->lb), 0);
	e->ctx = droce_open_context(NULL);
	assert_non_null(e->ctx);
	assert_int_equal(verbs_attach_link(e->ctx, e->la, &cfg), 0);
	e->tp = verbs_tp(e->ctx);
	e->pd = droce_alloc_pd(e->ctx);
	assert_non_null(e->pd);
}

static void
end_close(struct end *e)
{
	assert_int_equal(droce_dealloc_pd(e->pd), 0);
	assert_int_equal(verbs_detach_link(e->ctx), 0);
	assert_int_equal(droce_close_context(e->ctx), 0);
	droce_link_close(e->la);
	droce_link_close(e->lb);
}

/* The one frame droce sent after a few rounds; its bytes in buf. */
static uint16_t
one_frame_out(struct end *e, uint8_t *buf, uint16_t cap)
{
	struct rte_mbuf *m[4];
	uint16_t n, len;

	for (int i = 0; i < 4; i++)
		(void)tp_progress(e->tp);
	n = droce_link_rx(e->lb, m, 4);
	assert_int_equal(n, 1);
	len = m[0]->data_len;
	assert_true(len <= cap);
	memcpy(buf, rte_pktmbuf_mtod(m[0], const void *), len);
	rte_pktmbuf_free(m[0]);
	return len;
}

static uint16_t
frames_out(struct end *e)
{
	struct rte_mbuf *m[4];
	uint16_t n;

	for (int i = 0; i < 4; i++)
		(void)tp_progress(e->tp);
	n = droce_link_rx(e->lb, m, 4);
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static void
send_from_b(struct end *e, const void *frame, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e->lb->pool);

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, len), frame, len);
	assert_int_equal(droce_link_tx(e->lb, &m, 1), 1);
}

/* Ethernet + ARP (RFC 826), padded to the 60-byte minimum. */
static void
arp_frame(uint8_t f[60], const uint8_t *dmac, const uint8_t *smac, uint16_t op,
	  const uint8_t *sha, const uint8_t spa[4], const uint8_t *tha,
	  const uint8_t tpa[4])
{
	static const uint8_t hdr[8] = { 0x00, 0x01, 0x08, 0x00, 6, 4, 0, 0 };
	static const uint8_t zero[6];

	memset(f, 0, 60);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memcpy(f + 14, hdr, 8);
	f[21] = (uint8_t)op;
	memcpy(f + 22, sha, 6);
	memcpy(f + 28, spa, 4);
	memcpy(f + 32, tha != NULL ? tha : zero, 6);
	memcpy(f + 38, tpa, 4);
}

/*
 * Ethernet + IPv6 + an ND message (NS 135 / NA 136) for target with one
 * link-layer address option (1 source, 2 target) holding lla: 86 bytes.
 */
static void
nd_frame(uint8_t f[86], const uint8_t *dmac, const uint8_t *smac,
	 const uint8_t src[16], const uint8_t dst[16], uint8_t type,
	 uint8_t flags, const uint8_t target[16], uint8_t opt, const uint8_t *lla)
{
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(f + 14);
	uint8_t *nd = f + 54;
	uint16_t cksum;

	memset(f, 0, 86);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip->vtc_flow = RTE_BE32(UINT32_C(6) << 28);
	ip->payload_len = RTE_BE16(32);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 255;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	nd[0] = type;
	nd[4] = flags;
	memcpy(nd + 8, target, 16);
	nd[24] = opt;
	nd[25] = 1;
	memcpy(nd + 26, lla, 6);
	cksum = rte_ipv6_udptcp_cksum(ip, nd);
	memcpy(nd + 2, &cksum, 2);
}

/*
 * The one call: both GIDs land in lib/net's table, the transport's GID
 * query reads them at their indices, and ARP / ND answer for them.
 */
static void
test_one_address_table(void **state)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t snm_mac[6] = { 0x33, 0x33, 0xff, 0x00, 0x00, 0x01 };
	static const uint8_t snm[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff, [15] = 1 };
	uint8_t gid4[16], g[16], want[86], got[128];
	const uint8_t *ma, *mb;
	struct end e;

	(void)state;
	end_open(&e, true);
	ma = e.la->mac.addr_bytes;
	mb = e.lb->mac.addr_bytes;
	roce_gid_from_ipv4(gid4, ip_a);
	assert_int_equal(net_host_add_addr(tp_dev_host(e.tp), gid4, 24), 0);
	assert_int_equal(net_host_add_addr(tp_dev_host(e.tp), gid6_a, 64), 0);

	assert_int_equal(tp_dev_query_gid(e.tp, 0, g), 0);
	assert_memory_equal(g, gid4, 16);
	assert_int_equal(tp_dev_query_gid(e.tp, 1, g), 0);
	assert_memory_equal(g, gid6_a, 16);
	assert_int_equal(tp_dev_query_gid(e.tp, 2, g), -EINVAL);

	/* who-has 198.18.0.1 from 198.18.0.2: the reply, byte for byte */
	arp_frame(want, bcast, mb, 1, mb, ip_b, NULL, ip_a);
	send_from_b(&e, want, 60);
	arp_frame(want, mb, ma, 2, ma, ip_a, mb, ip_b);
	assert_int_equal(one_frame_out(&e, got, sizeof(got)), 60);
	assert_memory_equal(got, want, 60);

	/* NS for 2001:2::1 to its solicited-node group: the solicited NA */
	nd_frame(want, snm_mac, mb, gid6_b, snm, 135, 0, gid6_a, 1, mb);
	send_from_b(&e, want, 86);
	nd_frame(want, mb, ma, gid6_a, gid6_b, 136, 0x60, gid6_a, 2, ma);
	assert_int_equal(one_frame_out(&e, got, sizeof(got)), 86);
	assert_memory_equal(got, want, 86);

	assert_int_equal(net_host_counter(tp_dev_host(e.tp), "tx_arp_reply"), 1);
	assert_int_equal(net_host_counter(tp_dev_host(e.tp), "tx_na"), 1);
	end_close(&e);
}

static struct droce_ah *
ah_to(struct end *e, const uint8_t ip[4])
{
	struct droce_ah_attr a = { .is_global = 1, .port_num = 1 };

	roce_gid_from_ipv4(a.grh.dgid.raw, ip);
	a.grh.sgid_index = 0;
	return droce_create_ah(e->pd, &a);
}

/*
 * No host stack (table-only, as every virtual-wire test runs): a static
 * neighbour resolves an address vector, another peer does not, and a
 * frame that is not RoCEv2 is handed back to the transport (malformed,
 * exactly once) without an answer.
 */
static void
test_static_neighbour_table_only(void **state)
{
	uint8_t gid4[16], gid_b[16], f[60];
	struct net_neigh_info info;
	struct droce_ah *ah;
	struct end e;

	(void)state;
	end_open(&e, false);
	roce_gid_from_ipv4(gid4, ip_a);
	roce_gid_from_ipv4(gid_b, ip_b);
	assert_int_equal(net_host_add_addr(tp_dev_host(e.tp), gid4, 24), 0);
	assert_int_equal(net_host_add_static(tp_dev_host(e.tp), gid_b, &e.lb->mac), 0);
	net_host_neigh_info(tp_dev_host(e.tp), gid_b, &info);
	assert_int_equal(info.state, NET_NEIGH_PERMANENT);

	ah = ah_to(&e, ip_b);
	assert_non_null(ah);
	assert_int_equal(droce_destroy_ah(ah), 0);
	errno = 0;
	assert_null(ah_to(&e, ip_far));
	assert_int_equal(errno, EHOSTUNREACH);
	assert_int_equal(net_host_counter(tp_dev_host(e.tp), "tx_arp_request"), 0);

	arp_frame(f, e.la->mac.addr_bytes, e.lb->mac.addr_bytes, 1,
		  e.lb->mac.addr_bytes, ip_b, NULL, ip_a);
	send_from_b(&e, f, 60);
	assert_int_equal(frames_out(&e), 0);
	assert_int_equal(tp_dev_counter(e.tp, "malformed_pkts"), 1);
	assert_int_equal(net_host_counter(tp_dev_host(e.tp), "rx_pkts"), 0);
	end_close(&e);
}

/* With a host stack the same address vector starts ARP: the exact request. */
static void
test_unknown_neighbour_host_stack(void **state)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t gid4[16], want[60], got[128];
	struct droce_ah *ah;
	struct end e;

	(void)state;
	end_open(&e, true);
	roce_gid_from_ipv4(gid4, ip_a);
	assert_int_equal(net_host_add_addr(tp_dev_host(e.tp), gid4, 24), 0);
	ah = ah_to(&e, ip_far);
	assert_non_null(ah);
	arp_frame(want, bcast, e.la->mac.addr_bytes, 1, e.la->mac.addr_bytes, ip_a,
		  NULL, ip_far);
	assert_int_equal(one_frame_out(&e, got, sizeof(got)), 60);
	assert_memory_equal(got, want, 60);
	assert_int_equal(droce_destroy_ah(ah), 0);
	end_close(&e);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_address_table),
		cmocka_unit_test(test_static_neighbour_table_only),
		cmocka_unit_test(test_unknown_neighbour_host_stack),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
