/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opcodes droce does not execute, from a raw peer: reserved opcodes (and
 * RD's, which RoCEv2 does not carry) and manufacturer-specific ones
 * (0xc0-0xff, IBTA table 38) are dropped and counted under their own
 * names, not as malformed (selective repeat's SACK, 0xd8, too, to a QP
 * that did not set it); a CNP (RoCEv2 annex A17.9) to a QP is counted as
 * a CNP.  The ICRC is checked first: a corrupted frame is an ICRC
 * error whatever its opcode says.
 *
 * The receive classifier's cheap checks: a frame is for us when its QP
 * exists, its destination MAC is our link's and its destination GID one
 * of ours; else it is dropped silently (IBTA 9.6.1.1) and counted as
 * not_for_us when intact, as an ICRC error when not (those checks come
 * before the ICRC pass, yet a corrupted frame is an ICRC error wherever
 * the corruption is).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "raw_peer.h"

#define LEN 64

static struct raw_peer rp;
static struct droce_qp *qp;
static uint8_t data[LEN];

static int
setup(void **state)
{
	(void)state;
	memset(data, 0xc5, sizeof(data));
	rp_open(&rp, 4096);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	rp_close(&rp);
	return 0;
}

static int
qp_setup(void **state)
{
	(void)state;
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	memset(rp.buf, 0, rp.len);
	return 0;
}

static int
qp_teardown(void **state)
{
	(void)state;
	rp_destroy_qp(qp);
	return 0;
}

/* A WRITE ONLY of data at buf, at RP_PSN. */
static struct roce_pkt
write_pkt(void)
{
	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

	p.reth.va = (uintptr_t)rp.buf;
	p.reth.rkey = rp.mr->rkey;
	p.reth.len = LEN;
	return p;
}

/* That WRITE, sent with opcode `wire` in its BTH. */
static void
send_write_as(uint8_t wire, bool bad_icrc)
{
	struct roce_pkt p = write_pkt();

	rp_send_as(&rp, &p, data, LEN, wire, bad_icrc);
}

static bool
buf_is_zero(void)
{
	for (size_t i = 0; i < rp.len; i++)
		if (rp.buf[i] != 0)
			return false;
	return true;
}

/* Counters that change in these tests, read before and compared after. */
struct counts {
	uint64_t rcvd, rsvd, vendor, cnp, malformed, icrc, not_for_us;
};

static struct counts
read_counts(void)
{
	return (struct counts){
		.rcvd = rp_counter(&rp, "rcvd_pkts"),
		.rsvd = rp_counter(&rp, "rsvd_opcode_drop"),
		.vendor = rp_counter(&rp, "vendor_opcode_drop"),
		.cnp = rp_counter(&rp, "rcvd_cnp"),
		.malformed = rp_counter(&rp, "malformed_pkts"),
		.icrc = rp_counter(&rp, "icrc_err"),
		.not_for_us = rp_counter(&rp, "not_for_us_pkts"),
	};
}

/* droce answered nothing, and each counter moved by exactly d since c0. */
static void
expect_silent_counts(const struct counts *c0, struct counts d)
{
	struct rp_frame f[4];
	struct counts c;

	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	c = read_counts();
	assert_int_equal(c.rcvd - c0->rcvd, d.rcvd);
	assert_int_equal(c.rsvd - c0->rsvd, d.rsvd);
	assert_int_equal(c.vendor - c0->vendor, d.vendor);
	assert_int_equal(c.cnp - c0->cnp, d.cnp);
	assert_int_equal(c.malformed - c0->malformed, d.malformed);
	assert_int_equal(c.icrc - c0->icrc, d.icrc);
	assert_int_equal(c.not_for_us - c0->not_for_us, d.not_for_us);
}

/* After the hostile frames the QP still expects RP_PSN and executes it. */
static void
expect_qp_unharmed(void)
{
	struct rp_frame f[4];

	assert_true(buf_is_zero());
	send_write_as(ROCE_OP_RDMA_WRITE_ONLY, false);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(roce_aeth_type(f[0].pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f[0].pkt.psn, RP_PSN);
	assert_int_equal(f[0].pkt.aeth.msn, 1);
	assert_memory_equal(rp.buf, data, LEN);
}

/*
 * One opcode of each reserved range: RC 0x15, 0x18-0x1b, 0x1e, 0x1f; UC
 * 0x2c-0x3f; RD 0x40-0x5f (no RD in RoCEv2); UD 0x60-0x63, 0x66-0x7f; the
 * CNP service's 0x80, 0x82-0x9f; 0xa0-0xbf.
 */
static const uint8_t reserved_ops[] = {
	0x15, 0x18, 0x1b, 0x1e, 0x1f, 0x2c, 0x3f, 0x40, 0x4a, 0x5f, 0x60, 0x66,
	0x7f, 0x80, 0x82, 0x9f, 0xa0, 0xbf,
};

static void
test_reserved_opcodes_counted(void **state)
{
	struct counts c0 = read_counts();

	(void)state;
	for (size_t i = 0; i < sizeof(reserved_ops); i++)
		send_write_as(reserved_ops[i], false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = sizeof(reserved_ops),
						   .rsvd = sizeof(reserved_ops) });
	expect_qp_unharmed();
}

static void
test_vendor_opcodes_counted(void **state)
{
	static const uint8_t vendor_ops[] = { 0xc0, 0xd7, 0xe0, 0xff };
	struct counts c0 = read_counts();

	(void)state;
	for (size_t i = 0; i < sizeof(vendor_ops); i++)
		send_write_as(vendor_ops[i], false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = sizeof(vendor_ops),
						   .vendor = sizeof(vendor_ops) });
	expect_qp_unharmed();
}

/*
 * Selective repeat's SACK (opcode 0xd8, as a READ RESPONSE ONLY with 16
 * bytes: lib/transport README) to a QP that did not set selective repeat:
 * a manufacturer-specific opcode like any other, nothing acknowledged.
 */
static void
test_sack_without_sr_is_vendor(void **state)
{
	static const uint8_t sack[16] = { 0, 0x12, 0x34, 0x56, 0, 0x12, 0x34, 0x50,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct counts c0 = read_counts();
	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN);

	(void)state;
	p.ackreq = 0;
	p.aeth.syndrome = ROCE_AETH_ACK_NO_CREDIT;
	p.aeth.msn = 1;
	rp_send_as(&rp, &p, sack, sizeof(sack), 0xd8, false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = 1, .vendor = 1 });
	assert_int_equal(rp_counter(&rp, "sr_sack_rcvd"), 0);
	expect_qp_unharmed();
}

/* A reserved opcode with a bad ICRC is an ICRC error, nothing else. */
static void
test_reserved_opcode_bad_icrc(void **state)
{
	struct counts c0 = read_counts();

	(void)state;
	send_write_as(0x15, true);
	send_write_as(0xc1, true);
	expect_silent_counts(&c0, (struct counts){ .icrc = 2 });
	expect_qp_unharmed();
}

/* A CNP to the QP is a CNP; one to no QP of ours is not for us. */
static void
test_cnp_counted(void **state)
{
	struct counts c0 = read_counts();
	struct roce_pkt p;

	(void)state;
	p = rp_pkt(&rp, qp, ROCE_OP_CNP, 0);
	p.ackreq = 0;
	p.becn = 1;
	rp_send(&rp, &p, NULL, 0, false);
	rp_send(&rp, &p, NULL, 0, false);
	p.dest_qpn = 0x7ffff;
	rp_send(&rp, &p, NULL, 0, false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = 3, .cnp = 2, .not_for_us = 1 });
	expect_qp_unharmed();
}

/* Another port's MAC (a promiscuous PMD delivers it): not for us. */
static void
test_other_mac_not_for_us(void **state)
{
	struct counts c0 = read_counts();
	struct roce_pkt p = write_pkt();

	(void)state;
	p.dst_mac[5] ^= 0x01;
	rp_send(&rp, &p, data, LEN, false);
	p.dst_mac[0] |= 0x01;		/* a multicast MAC: not ours either */
	rp_send(&rp, &p, data, LEN, false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = 2, .not_for_us = 2 });
	expect_qp_unharmed();
}

/* Another host's GID, or a QP we do not have: not for us. */
static void
test_other_gid_or_qp_not_for_us(void **state)
{
	struct counts c0 = read_counts();
	struct roce_pkt p = write_pkt();

	(void)state;
	p.dst_gid[15] ^= 0x01;
	rp_send(&rp, &p, data, LEN, false);
	p = write_pkt();
	p.dest_qpn = 0x7ffff;
	rp_send(&rp, &p, data, LEN, false);
	expect_silent_counts(&c0, (struct counts){ .rcvd = 2, .not_for_us = 2 });
	expect_qp_unharmed();
}

/* The same, corrupted, and one for us: ICRC errors, nothing else. */
static void
test_corrupted_not_for_us_is_icrc_err(void **state)
{
	struct counts c0 = read_counts();
	struct roce_pkt p = write_pkt();

	(void)state;
	p.dst_mac[5] ^= 0x01;
	rp_send(&rp, &p, data, LEN, true);
	p = write_pkt();
	p.dst_gid[15] ^= 0x01;
	rp_send(&rp, &p, data, LEN, true);
	p = write_pkt();
	p.dest_qpn = 0x7ffff;
	rp_send(&rp, &p, data, LEN, true);
	p = write_pkt();
	rp_send(&rp, &p, data, LEN, true);
	expect_silent_counts(&c0, (struct counts){ .icrc = 4 });
	expect_qp_unharmed();
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reserved_opcodes_counted,
						qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_vendor_opcodes_counted,
						qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_sack_without_sr_is_vendor, qp_setup,
						qp_teardown),
		cmocka_unit_test_setup_teardown(test_reserved_opcode_bad_icrc,
						qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_cnp_counted, qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_other_mac_not_for_us,
						qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_other_gid_or_qp_not_for_us,
						qp_setup, qp_teardown),
		cmocka_unit_test_setup_teardown(test_corrupted_not_for_us_is_icrc_err,
						qp_setup, qp_teardown),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
