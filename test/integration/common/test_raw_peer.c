/* SPDX-License-Identifier: BSD-3-Clause */
/* Self-test of the raw peer fixture: a crafted request and droce's answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "raw_peer.h"

#define LEN 64
#define OFF 128

/* An RC QP, and the raw peer's WRITE ONLY of LEN pattern bytes to buf + OFF. */
static struct droce_qp *
qp_and_write(struct raw_peer *rp, uint8_t *data, bool bad_icrc)
{
	struct droce_qp *qp;
	struct roce_pkt p;

	for (unsigned int i = 0; i < LEN; i++)
		data[i] = (uint8_t)(0xa0 + i);
	rp_open(rp, 4096);
	qp = rp_create_qp(rp, DROCE_QPT_RC, 0);
	p = rp_pkt(rp, qp, ROCE_OP_RDMA_WRITE_ONLY, RP_PSN);
	p.reth.va = (uintptr_t)rp->buf + OFF;
	p.reth.rkey = rp->mr->rkey;
	p.reth.len = LEN;
	rp_send(rp, &p, data, LEN, bad_icrc);
	return qp;
}

/*
 * A crafted RC RDMA WRITE ONLY of 64 bytes lands in the MR and is
 * acknowledged (IBTA 9.7.5.1.1: ACK with the request's PSN; C9-148: MSN
 * counts completed messages, 1 after the first).
 */
static void
test_write_only_is_acked(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[LEN];
	struct droce_qp *qp = qp_and_write(&rp, data, false);

	(void)state;
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	assert_int_equal(f[0].err, ROCE_PARSE_OK);
	assert_true(f[0].icrc_ok);
	assert_int_equal(f[0].pkt.opcode, ROCE_OP_ACKNOWLEDGE);
	assert_int_equal(f[0].pkt.dest_qpn, RP_PEER_QPN);
	assert_int_equal(f[0].pkt.psn, RP_PSN);
	assert_int_equal(roce_aeth_type(f[0].pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f[0].pkt.aeth.msn, 1);
	assert_memory_equal(rp.buf + OFF, data, LEN);
	assert_int_equal(rp.buf[OFF - 1], 0);
	assert_int_equal(rp.buf[OFF + LEN], 0);
	assert_int_equal(rp_counter(&rp, "rdma_recvs"), 1);

	rp_destroy_qp(qp);
	rp_close(&rp);
}

/* A bad ICRC (RoCEv2 annex A17.3.3) is dropped silently and counted. */
static void
test_bad_icrc_is_dropped(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[LEN];
	struct droce_qp *qp = qp_and_write(&rp, data, true);

	(void)state;
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	assert_int_equal(rp_counter(&rp, "icrc_err"), 1);
	for (size_t i = 0; i < rp.len; i++)
		assert_int_equal(rp.buf[i], 0);
	assert_int_equal(rp_counter(&rp, "rdma_recvs"), 0);

	rp_destroy_qp(qp);
	rp_close(&rp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_only_is_acked),
		cmocka_unit_test(test_bad_icrc_is_dropped),
	};

	(void)argc;
	rp_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
