/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive classifier's cheap checks, from a raw peer: a RoCEv2 frame
 * is for us when its QP exists, its destination MAC is our link's and its
 * destination GID one of ours; anything else is dropped silently (IBTA
 * 9.6.1.1) and counted as not_for_us when it arrived intact, as an ICRC
 * error when it did not (wherever the corruption is, the ICRC names it).
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
	memset(data, 0x5c, sizeof(data));
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

/* A WRITE ONLY of data to the start of the buffer, at RP_PSN. */
static struct roce_pkt
write_pkt(void)
{
	struct roce_pkt p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);

	p.reth.va = (uintptr_t)rp.buf;
	p.reth.rkey = rp.mr->rkey;
	p.reth.len = LEN;
	return p;
}

struct counts {
	uint64_t rcvd, icrc, not_for_us, malformed;
};

static struct counts
read_counts(void)
{
	return (struct counts){
		.rcvd = rp_counter(&rp, "rcvd_pkts"),
		.icrc = rp_counter(&rp, "icrc_err"),
		.not_for_us = rp_counter(&rp, "not_for_us_pkts"),
		.malformed = rp_counter(&rp, "malformed_pkts"),
	};
}

/* Nothing answered, nothing written, each counter moved by exactly d. */
static void
expect_dropped(const struct counts *c0, struct counts d)
{
	struct rp_frame f[4];
	struct counts c;

	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	c = read_counts();
	assert_int_equal(c.rcvd - c0->rcvd, d.rcvd);
	assert_int_equal(c.icrc - c0->icrc, d.icrc);
	assert_int_equal(c.not_for_us - c0->not_for_us, d.not_for_us);
	assert_int_equal(c.malformed - c0->malformed, d.malformed);
	for (size_t i = 0; i < rp.len; i++)
		assert_int_equal(rp.buf[i], 0);
}

/* The QP still expects RP_PSN: the same WRITE, addressed right, is done. */
static void
expect_qp_unharmed(void)
{
	struct roce_pkt p = write_pkt();
	struct rp_frame f[4];

	rp_send(&rp, &p, data, LEN, false);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(roce_aeth_type(f[0].pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f[0].pkt.psn, RP_PSN);
	assert_memory_equal(rp.buf, data, LEN);
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
	expect_dropped(&c0, (struct counts){ .rcvd = 2, .not_for_us = 2 });
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
	expect_dropped(&c0, (struct counts){ .rcvd = 2, .not_for_us = 2 });
	expect_qp_unharmed();
}

/*
 * The same frames corrupted (a bad ICRC): ICRC errors, not not_for_us,
 * although the cheap checks come first.
 */
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
	rp_send(&rp, &p, data, LEN, true);	/* for us, corrupted */
	expect_dropped(&c0, (struct counts){ .icrc = 4 });
	expect_qp_unharmed();
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
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
