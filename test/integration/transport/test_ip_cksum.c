/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 header checksum offloads (lib/link DROCE_LINK_*_IPV4_CKSUM) against
 * a raw peer on a virtual wire that reports them (vwire_config.offloads):
 *   - TX offered: droce's frames ask the port for the checksum
 *     (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM, l2_len 14, l3_len 20)
 *     and leave the checksum field 0, ICRC valid;
 *   - not offered: no request, the software checksum is right;
 *   - RX offered: a frame flagged RTE_MBUF_F_RX_IP_CKSUM_BAD is dropped
 *     and counted once (ip_cksum_bad), nothing else counted; a frame with
 *     a wrong checksum flagged GOOD is executed (the software check was
 *     skipped); the same frame on a wire that does not report the offload
 *     is malformed, whatever its flags.
 * Each case is one RDMA WRITE ONLY with AckReq from the peer: its bytes in
 * droce's buffer and its ACK are the outcome.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "droce_link.h"
#include "raw_peer.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define LEN 64

static const uint8_t data[LEN] = { 0xc5, 0x5c, 0x01, 0x02, [LEN - 1] = 0x7e };

static void
open_with(struct raw_peer *rp, uint32_t offloads, struct droce_qp **qp)
{
	struct vwire_config w = { .offloads = offloads };

	rp_open_wire(rp, 4096, &w);
	*qp = rp_create_qp(rp, DROCE_QPT_RC, 0);
}

/* The peer's WRITE of data to the start of droce's buffer, built. */
static struct rte_mbuf *
write_frame(struct raw_peer *rp, struct droce_qp *qp)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

	p.reth.va = (uintptr_t)rp->buf;
	p.reth.rkey = rp->mr->rkey;
	p.reth.len = LEN;
	return rp_build(rp, &p, data, LEN);
}

/* Send m, run the engine; the frames droce sent back (mbufs, caller frees). */
static uint16_t
exchange(struct raw_peer *rp, struct rte_mbuf *m, struct rte_mbuf **out, uint16_t max)
{
	uint16_t n = 0;

	assert_int_equal(droce_link_tx(rp->peer, &m, 1), 1);
	for (int i = 0; i < 8 && n < max; i++) {
		(void)droce_progress(rp->ctx);
		n += droce_link_rx(rp->peer, out + n, (uint16_t)(max - n));
	}
	return n;
}

static uint16_t
ip_cksum_field(const struct rte_mbuf *m)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);

	return (uint16_t)(ip[10] << 8 | ip[11]);
}

/* The ACK droce sent for the WRITE: parsed, ICRC valid. */
static void
assert_ack(const struct rte_mbuf *m)
{
	struct roce_pkt p;

	assert_int_equal(roce_parse_eth_cksum_ok(rte_pktmbuf_mtod(m, const uint8_t *),
						 m->data_len, &p), ROCE_PARSE_OK);
	assert_int_equal(p.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(p.psn, RP_PSN);
	assert_true(roce_icrc_verify(rte_pktmbuf_mtod(m, const uint8_t *), &p));
}

static void
test_tx_offload_requested(void **state)
{
	struct rte_mbuf *out[4];
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_with(&rp, DROCE_LINK_TX_IPV4_CKSUM, &qp);
	assert_int_equal(exchange(&rp, write_frame(&rp, qp), out, 4), 1);
	assert_ack(out[0]);
	assert_int_equal(out[0]->ol_flags & (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM),
			 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM);
	assert_int_equal(out[0]->l2_len, 14);
	assert_int_equal(out[0]->l3_len, 20);
	assert_int_equal(ip_cksum_field(out[0]), 0);
	assert_memory_equal(rp.buf, data, LEN);
	rte_pktmbuf_free(out[0]);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

static void
test_tx_software_cksum(void **state)
{
	struct rte_mbuf *out[4];
	struct droce_qp *qp;
	struct raw_peer rp;
	const struct rte_ipv4_hdr *ip;

	(void)state;
	open_with(&rp, 0, &qp);
	assert_int_equal(exchange(&rp, write_frame(&rp, qp), out, 4), 1);
	assert_ack(out[0]);
	assert_int_equal(out[0]->ol_flags & RTE_MBUF_F_TX_IP_CKSUM, 0);
	ip = rte_pktmbuf_mtod_offset(out[0], const struct rte_ipv4_hdr *, 14);
	assert_int_not_equal(ip_cksum_field(out[0]), 0);
	assert_int_equal(rte_ipv4_cksum(ip), 0);	/* over a correct header */
	rte_pktmbuf_free(out[0]);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

static void
test_rx_bad_dropped_once(void **state)
{
	static const uint8_t zero[LEN];
	struct rte_mbuf *out[4], *m;
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_with(&rp, DROCE_LINK_RX_IPV4_CKSUM, &qp);
	m = write_frame(&rp, qp);		/* a correct checksum: the port's word wins */
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
	assert_int_equal(exchange(&rp, m, out, 4), 0);
	assert_int_equal(rp_counter(&rp, "ip_cksum_bad"), 1);
	assert_int_equal(rp_counter(&rp, "malformed_pkts"), 0);
	assert_int_equal(rp_counter(&rp, "icrc_err"), 0);
	assert_int_equal(rp_counter(&rp, "rcvd_pkts"), 0);
	assert_memory_equal(rp.buf, zero, LEN);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* A wrong checksum the port called GOOD: not checked again, executed. */
static void
test_rx_good_skips_software(void **state)
{
	struct rte_mbuf *out[4], *m;
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_with(&rp, DROCE_LINK_RX_IPV4_CKSUM, &qp);
	m = write_frame(&rp, qp);
	rte_pktmbuf_mtod(m, uint8_t *)[14 + 10] ^= 0x5a;	/* masked in the ICRC */
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	assert_int_equal(exchange(&rp, m, out, 4), 1);
	assert_ack(out[0]);
	assert_memory_equal(rp.buf, data, LEN);
	assert_int_equal(rp_counter(&rp, "rcvd_pkts"), 1);
	assert_int_equal(rp_counter(&rp, "ip_cksum_bad"), 0);
	rte_pktmbuf_free(out[0]);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* Without the offload the flags mean nothing: the software check runs. */
static void
test_rx_flags_ignored_without_offload(void **state)
{
	static const uint8_t zero[LEN];
	struct rte_mbuf *out[4], *m;
	struct droce_qp *qp;
	struct raw_peer rp;

	(void)state;
	open_with(&rp, 0, &qp);
	m = write_frame(&rp, qp);
	rte_pktmbuf_mtod(m, uint8_t *)[14 + 10] ^= 0x5a;
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	assert_int_equal(exchange(&rp, m, out, 4), 0);
	assert_int_equal(rp_counter(&rp, "malformed_pkts"), 1);
	assert_int_equal(rp_counter(&rp, "ip_cksum_bad"), 0);
	assert_memory_equal(rp.buf, zero, LEN);
	rp_destroy_qp(qp);
	rp_close(&rp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tx_offload_requested),
		cmocka_unit_test(test_tx_software_cksum),
		cmocka_unit_test(test_rx_bad_dropped_once),
		cmocka_unit_test(test_rx_good_skips_software),
		cmocka_unit_test(test_rx_flags_ignored_without_offload),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
