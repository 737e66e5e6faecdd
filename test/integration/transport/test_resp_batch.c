/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's batches (test/integration/common/raw_peer): a QP's
 * consecutive request packets from one receive burst are handled as one
 * batch.  A WRITE's R_Key is checked once per message and batch, not per
 * packet (the translation lives until the round's quiescent point,
 * lib/protection's QSBR); one ACK answers the batch (an ACK covers every
 * earlier PSN, IBTA 9.7.5.1); a key revoked between two bursts still
 * stops the next packet with a remote access error NAK.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "raw_peer.h"

#define MTU 1024u

static void
fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13);
}

/*
 * Packet i of an npkts-packet WRITE of npkts * MTU bytes to addr under
 * rkey, starting at psn, with AckReq set (rp_pkt sets it on every packet).
 */
static void
send_write_pkt(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, unsigned int i,
	       unsigned int npkts, void *addr, uint32_t rkey, const uint8_t *data)
{
	uint8_t op = i == 0 ? ROCE_OP_RDMA_WRITE_FIRST :
		     i == npkts - 1 ? ROCE_OP_RDMA_WRITE_LAST : ROCE_OP_RDMA_WRITE_MIDDLE;
	struct roce_pkt p = rp_pkt(rp, qp, op, psn + i);

	if (i == 0) {
		p.reth.va = (uint64_t)(uintptr_t)addr;
		p.reth.rkey = rkey;
		p.reth.len = npkts * MTU;
	}
	rp_send(rp, &p, data + (size_t)i * MTU, MTU, false);
}

/*
 * Eight packets of one WRITE in one burst, each asking for an ACK: one
 * R_Key check, one ACK frame naming the last PSN with MSN 1, every byte
 * in place.
 */
static void
test_batch_one_check_one_ack(void **state)
{
	enum { K = 8 };
	static uint8_t data[K * MTU];
	struct raw_peer rp;
	struct rp_frame f[K];
	struct droce_qp *qp;
	uint64_t checks, acks;

	(void)state;
	rp_open(&rp, K * MTU);
	fill(data, sizeof(data), 7);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	checks = rp_rkey_checks(&rp);
	acks = rp_counter(&rp, "sent_acks");

	for (unsigned int i = 0; i < K; i++)
		send_write_pkt(&rp, qp, RP_PSN, i, K, rp.buf, rp.mr->rkey, data);
	assert_int_equal(rp_collect(&rp, f, K, RP_WAIT_S), 1);
	rp_expect_aeth(&f[0], RP_PSN + K - 1, ROCE_AETH_ACK, 0, 1);
	assert_int_equal(rp_rkey_checks(&rp) - checks, 1);
	assert_int_equal(rp_counter(&rp, "sent_acks") - acks, 1);
	assert_memory_equal(rp.buf, data, sizeof(data));

	rp_destroy_qp(qp);
	rp_close(&rp);
}

/*
 * Two two-packet WRITEs in one burst, the second under a key that is not
 * valid: each message is checked (two checks), the first is ACKed with
 * MSN 1 and the second NAKed (remote access error) at its first PSN, MSN
 * 1; its bytes are not written, the QP goes to ERR.
 */
static void
test_batch_each_message_checked(void **state)
{
	static uint8_t data[2 * MTU];
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_qp *qp;
	uint64_t checks;

	(void)state;
	rp_open(&rp, 4 * MTU);
	fill(data, sizeof(data), 9);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	checks = rp_rkey_checks(&rp);

	for (unsigned int i = 0; i < 2; i++)
		send_write_pkt(&rp, qp, RP_PSN, i, 2, rp.buf, rp.mr->rkey, data);
	for (unsigned int i = 0; i < 2; i++)
		send_write_pkt(&rp, qp, RP_PSN + 2, i, 2, rp.buf + 2 * MTU,
			       rp.mr->rkey ^ 0x5a5a5a00u, data);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 2);
	rp_expect_aeth(&f[0], RP_PSN + 1, ROCE_AETH_ACK, 0, 1);
	rp_expect_aeth(&f[1], RP_PSN + 2, ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS_ERR, 1);
	assert_int_equal(rp_rkey_checks(&rp) - checks, 2);
	assert_memory_equal(rp.buf, data, sizeof(data));
	for (unsigned int i = 0; i < 2 * MTU; i++)
		assert_int_equal(rp.buf[2 * MTU + i], 0);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	rp_destroy_qp(qp);
	rp_close(&rp);
}

/*
 * A four-packet WRITE into a second MR: FIRST and MIDDLE in one burst
 * (one check, one ACK), the MR deregistered, the next MIDDLE in a second
 * burst: it is checked again and NAKed (remote access error, MSN 0), its
 * bytes never written, the QP in ERR.
 */
static void
test_batch_revoked_between_bursts(void **state)
{
	enum { K = 4 };
	static uint8_t data[K * MTU];
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_mr *mr2;
	struct droce_qp *qp;
	uint64_t checks;
	uint8_t *buf2;

	(void)state;
	rp_open(&rp, 2 * K * MTU);
	buf2 = rp.buf + K * MTU;
	fill(data, sizeof(data), 11);
	mr2 = droce_reg_mr(rp.pd, buf2, K * MTU, DROCE_ACCESS_LOCAL_WRITE |
			   DROCE_ACCESS_REMOTE_WRITE);
	assert_non_null(mr2);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	checks = rp_rkey_checks(&rp);

	send_write_pkt(&rp, qp, RP_PSN, 0, K, buf2, mr2->rkey, data);
	send_write_pkt(&rp, qp, RP_PSN, 1, K, buf2, mr2->rkey, data);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	rp_expect_aeth(&f[0], RP_PSN + 1, ROCE_AETH_ACK, 0, 0);
	assert_int_equal(rp_rkey_checks(&rp) - checks, 1);
	assert_memory_equal(buf2, data, 2 * MTU);

	assert_int_equal(droce_dereg_mr(mr2), 0);
	send_write_pkt(&rp, qp, RP_PSN, 2, K, buf2, 0, data);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	rp_expect_aeth(&f[0], RP_PSN + 2, ROCE_AETH_NAK, ROCE_NAK_REM_ACCESS_ERR, 0);
	assert_int_equal(rp_rkey_checks(&rp) - checks, 2);
	for (unsigned int i = 0; i < 2 * MTU; i++)
		assert_int_equal(buf2[2 * MTU + i], 0);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	rp_destroy_qp(qp);
	rp_close(&rp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_one_check_one_ack),
		cmocka_unit_test(test_batch_each_message_checked),
		cmocka_unit_test(test_batch_revoked_between_bursts),
	};

	rp_eal_init(argv[0]);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);	/* one test by name (a pattern) */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
