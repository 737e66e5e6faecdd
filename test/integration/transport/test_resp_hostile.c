/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder against a hostile peer (test/integration/common/raw_peer):
 * crafted requests to one droce QP, every answer checked on the wire.
 *
 *   MSN (IBTA C9-148): every AETH carries the MSN after counting the
 *   message it answers; duplicates carry the original's; a NAK never
 *   counts the message it fails.
 *   Responder resources (max_dest_rd_atomic, 4 here): READs and atomics
 *   share them; duplicates are answered from their records only
 *   (9.7.5.1.x).
 *   UC (9.7.7): a packet dropped inside a message drops the rest of it; the
 *   receive WQE is reused.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_common.h>

#include "dev_pair.h"
#include "raw_peer.h"

#define MTU 1024u
#define RES 4u			/* max_dest_rd_atomic of rp_create_qp */

static void
fill(uint8_t *p, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static uint64_t
va_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void
send_read(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, const void *addr,
	  uint32_t rkey, uint32_t len)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_RDMA_READ_REQUEST, psn);

	p.reth.va = va_of(addr);
	p.reth.rkey = rkey;
	p.reth.len = len;
	rp_send(rp, &p, NULL, 0, false);
}

static void
send_atomic(struct raw_peer *rp, struct droce_qp *qp, uint8_t opcode, uint32_t psn,
	    const void *addr, uint64_t swap_add, uint64_t comp)
{
	struct roce_pkt p = rp_pkt(rp, qp, opcode, psn);

	p.atmeth.va = va_of(addr);
	p.atmeth.rkey = rp->mr->rkey;
	p.atmeth.swap = swap_add;
	p.atmeth.comp = comp;
	rp_send(rp, &p, NULL, 0, false);
}

static void
send_write_only(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, void *addr,
		const uint8_t *data, uint32_t len)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_RDMA_WRITE_ONLY, psn);

	p.reth.va = va_of(addr);
	p.reth.rkey = rp->mr->rkey;
	p.reth.len = len;
	rp_send(rp, &p, data, len, false);
}

static void
send_data(struct raw_peer *rp, struct droce_qp *qp, uint8_t opcode, uint32_t psn,
	  const uint8_t *data, uint32_t len)
{
	struct roce_pkt p = rp_pkt(rp, qp, opcode, psn);

	rp_send(rp, &p, data, len, false);
}

static void
post_recv(struct raw_peer *rp, struct droce_qp *qp, uint64_t wr_id, void *addr,
	  uint32_t len)
{
	struct droce_sge sge = { .addr = va_of(addr), .length = len, .lkey = rp->mr->lkey };
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad = NULL;

	assert_int_equal(droce_post_recv(qp, &wr, &bad), 0);
}

static void
expect_ack(const struct rp_frame *f, uint32_t psn, uint32_t msn)
{
	rp_expect_aeth(f, psn, ROCE_AETH_ACK, 0, msn);
}

static void
expect_nak(const struct rp_frame *f, uint32_t psn, unsigned int code, uint32_t msn)
{
	rp_expect_aeth(f, psn, ROCE_AETH_NAK, code, msn);
}

/*
 * A READ response packet: its payload is exactly src[0..len); FIRST, LAST
 * and ONLY carry an ACK AETH with msn (MIDDLE has no AETH).
 */
static void
expect_read_resp(const struct rp_frame *f, uint8_t opcode, uint32_t psn, uint32_t msn,
		 const uint8_t *src, uint32_t len)
{
	rp_expect_frame(f, opcode, psn);
	if (opcode != ROCE_OP_RDMA_READ_RESPONSE_MIDDLE) {
		assert_int_equal(roce_aeth_type(f->pkt.aeth.syndrome), ROCE_AETH_ACK);
		assert_int_equal(f->pkt.aeth.msn, msn);
	}
	assert_int_equal(f->pkt.payload_len, len);
	assert_memory_equal(rp_payload(f), src, len);
}

static void
expect_atomic_ack(const struct rp_frame *f, uint32_t psn, uint32_t msn, uint64_t orig)
{
	rp_expect_frame(f, ROCE_OP_ATOMIC_ACKNOWLEDGE, psn);
	assert_int_equal(roce_aeth_type(f->pkt.aeth.syndrome), ROCE_AETH_ACK);
	assert_int_equal(f->pkt.aeth.msn, msn);
	assert_int_equal(f->pkt.atmack_orig, orig);
}

/* A 2500-byte READ at psn: FIRST, MIDDLE, LAST, all with msn. */
static void
expect_read_2500(struct raw_peer *rp, uint32_t psn, uint32_t msn, const uint8_t *src)
{
	struct rp_frame f[4];

	assert_int_equal(rp_collect(rp, f, 4, RP_WAIT_S), 3);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_FIRST, psn, msn, src, MTU);
	expect_read_resp(&f[1], ROCE_OP_RDMA_READ_RESPONSE_MIDDLE, psn + 1, msn,
			 src + MTU, MTU);
	expect_read_resp(&f[2], ROCE_OP_RDMA_READ_RESPONSE_LAST, psn + 2, msn,
			 src + 2 * MTU, 2500 - 2 * MTU);
}

static void
close_rp(struct raw_peer *rp, struct droce_qp *qp)
{
	rp_destroy_qp(qp);
	rp_close(rp);
}

/* ---- MSN (C9-148) ------------------------------------------------------------------ */

/*
 * A first READ on a fresh QP is answered with MSN 1 (rxe: 1), a three-packet
 * READ with MSN 2 on FIRST and LAST; their duplicates, after a WRITE made
 * the MSN 3, with 1 and 2 again.
 */
static void
test_msn_read_responses(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[16];
	struct droce_qp *qp;

	(void)state;
	rp_open(&rp, 8192);
	fill(rp.buf, 4096, 1);
	fill(data, sizeof(data), 9);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_read(&rp, qp, RP_PSN, rp.buf, rp.mr->rkey, 64);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN, 1, rp.buf, 64);

	send_read(&rp, qp, RP_PSN + 1, rp.buf + 64, rp.mr->rkey, 2500);
	expect_read_2500(&rp, RP_PSN + 1, 2, rp.buf + 64);

	send_write_only(&rp, qp, RP_PSN + 4, rp.buf + 4096, data, sizeof(data));
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN + 4, 3);

	send_read(&rp, qp, RP_PSN, rp.buf, rp.mr->rkey, 64);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN, 1, rp.buf, 64);
	send_read(&rp, qp, RP_PSN + 1, rp.buf + 64, rp.mr->rkey, 2500);
	expect_read_2500(&rp, RP_PSN + 1, 2, rp.buf + 64);
	assert_int_equal(rp_counter(&rp, "duplicate_request"), 2);

	close_rp(&rp, qp);
}

/*
 * An atomic ACK carries its own message's MSN, and so does the answer to
 * its duplicate, which is not executed again (the target keeps 5 + 3).
 */
static void
test_msn_atomic_acks(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[8] = { 0 };
	struct droce_qp *qp;
	uint64_t *target;

	(void)state;
	rp_open(&rp, 4096);
	target = (uint64_t *)(void *)rp.buf;
	*target = 5;
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN, target, 3, 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_atomic_ack(&f[0], RP_PSN, 1, 5);
	assert_int_equal(*target, 8);

	send_write_only(&rp, qp, RP_PSN + 1, rp.buf + 1024, data, sizeof(data));
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN + 1, 2);

	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN, target, 3, 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_atomic_ack(&f[0], RP_PSN, 1, 5);
	assert_int_equal(*target, 8);

	send_atomic(&rp, qp, ROCE_OP_COMPARE_SWAP, RP_PSN + 2, target, 42, 8);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_atomic_ack(&f[0], RP_PSN + 2, 3, 8);
	assert_int_equal(*target, 42);

	close_rp(&rp, qp);
}

/*
 * ACKs inside a message carry the MSN before it, after its LAST the MSN
 * with it; RNR NAK, sequence NAK and the ACK of a duplicate WRITE the MSN of
 * the last completed message; a SEND_WITH_INVALIDATE whose invalidate fails
 * is NAKed (Invalid Request) with the MSN not advanced, and its receive WQE
 * completes in error.
 */
static void
test_msn_acks_and_naks(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_wc wc[2];
	uint8_t data[MTU];
	struct droce_qp *qp;
	struct roce_pkt p;

	(void)state;
	rp_open(&rp, 8192);
	fill(data, sizeof(data), 3);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	p = rp_pkt(&rp, qp, ROCE_OP_RDMA_WRITE_FIRST, RP_PSN);
	p.reth.va = va_of(rp.buf);
	p.reth.rkey = rp.mr->rkey;
	p.reth.len = 2 * MTU;
	rp_send(&rp, &p, data, MTU, false);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN, 0);
	send_data(&rp, qp, ROCE_OP_RDMA_WRITE_LAST, RP_PSN + 1, data, MTU);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN + 1, 1);
	assert_memory_equal(rp.buf + MTU, data, MTU);

	/* no receive WQE: RNR NAK with min_rnr_timer 1 */
	send_data(&rp, qp, ROCE_OP_SEND_ONLY, RP_PSN + 2, data, 64);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	rp_expect_aeth(&f[0], RP_PSN + 2, ROCE_AETH_RNR_NAK, 1, 1);

	/* a gap: sequence NAK naming the expected PSN */
	send_write_only(&rp, qp, RP_PSN + 4, rp.buf, data, 64);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_nak(&f[0], RP_PSN + 2, ROCE_NAK_PSN_SEQ_ERR, 1);

	/* a duplicate WRITE: ACK of ePSN - 1 */
	send_write_only(&rp, qp, RP_PSN, rp.buf, data, 64);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN + 1, 1);

	post_recv(&rp, qp, 77, rp.buf + 4096, 1024);
	p = rp_pkt(&rp, qp, ROCE_OP_SEND_ONLY_WITH_INVALIDATE, RP_PSN + 2);
	p.ieth_rkey = rp.mr->rkey ^ 0x5a5a5a00u;
	rp_send(&rp, &p, data, 64, false);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_nak(&f[0], RP_PSN + 2, ROCE_NAK_INVALID_REQ, 1);
	assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 1);
	assert_int_equal(wc[0].wr_id, 77);
	assert_int_equal(wc[0].status, DROCE_WC_REM_INV_REQ_ERR);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	close_rp(&rp, qp);
}

/*
 * A READ whose MR is deregistered while its response streams is NAKed
 * (remote access error) at the first PSN it can no longer read, with the
 * MSN before the READ: the READ did not complete.
 */
static void
test_msn_read_revoked_mid_stream(void **state)
{
	enum { LEN = 96 * MTU };
	struct raw_peer rp;
	static struct rp_frame f[128];
	struct droce_mr *mr2;
	struct droce_qp *qp;
	uint8_t *buf2;
	int n, total;

	(void)state;
	rp_open(&rp, 2 * LEN);
	buf2 = rp.buf + LEN;
	fill(buf2, LEN, 5);
	mr2 = droce_reg_mr(rp.pd, buf2, LEN, DROCE_ACCESS_LOCAL_WRITE |
			   DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr2);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	/* (rp_collect stops once it has 16, a burst of the first 32 sent) */
	send_read(&rp, qp, RP_PSN, buf2, mr2->rkey, LEN);
	total = rp_collect(&rp, f, 16, RP_WAIT_S);
	assert_int_equal(total, 16);
	assert_int_equal(droce_dereg_mr(mr2), 0);
	n = rp_collect(&rp, f + total, 128 - total, RP_WAIT_S);
	total += n;
	assert_true(total > 16 && total < 96);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_FIRST, RP_PSN, 1, buf2, MTU);
	for (int i = 1; i < total - 1; i++)
		expect_read_resp(&f[i], ROCE_OP_RDMA_READ_RESPONSE_MIDDLE, RP_PSN + i, 1,
				 buf2 + i * MTU, MTU);
	expect_nak(&f[total - 1], RP_PSN + total - 1, ROCE_NAK_REM_ACCESS_ERR, 0);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	close_rp(&rp, qp);
}

/*
 * Error NAKs after one completed WRITE carry MSN 1, never counting the
 * request they fail: a READ with an unknown R_Key (remote access error), a
 * SEND into a receive WQE whose L_Key is bad (remote operational error,
 * the WQE completes with LOC_PROT_ERR), an atomic on a misaligned address
 * (Invalid Request).  One QP each: an error NAK moves it to ERR.
 */
static void
test_msn_error_naks(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_wc wc[2];
	uint8_t data[16] = { 0 };
	struct droce_qp *qp;

	(void)state;
	rp_open(&rp, 4096);
	for (unsigned int i = 0; i < 3; i++) {
		qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
		send_write_only(&rp, qp, RP_PSN, rp.buf, data, sizeof(data));
		if (i == 0) {
			send_read(&rp, qp, RP_PSN + 1, rp.buf, rp.mr->rkey ^ 0x5a5a5a00u, 64);
		} else if (i == 1) {
			struct droce_sge sge = { .addr = va_of(rp.buf + 1024), .length = 64,
						 .lkey = rp.mr->lkey ^ 0x5a5a5a00u };
			struct droce_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
			struct droce_recv_wr *bad = NULL;

			assert_int_equal(droce_post_recv(qp, &wr, &bad), 0);
			send_data(&rp, qp, ROCE_OP_SEND_ONLY, RP_PSN + 1, data, sizeof(data));
		} else {
			send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN + 1, rp.buf + 4, 1, 0);
		}
		assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 2);
		expect_ack(&f[0], RP_PSN, 1);
		expect_nak(&f[1], RP_PSN + 1, i == 0 ? ROCE_NAK_REM_ACCESS_ERR :
			   i == 1 ? ROCE_NAK_REM_OP_ERR : ROCE_NAK_INVALID_REQ, 1);
		if (i == 1) {
			assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 1);
			assert_int_equal(wc[0].wr_id, 9);
			assert_int_equal(wc[0].status, DROCE_WC_LOC_PROT_ERR);
		}
		assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);
		rp_destroy_qp(qp);
	}
	rp_close(&rp);
}

/* ---- responder resources ------------------------------------------------------------ */

/*
 * READs and atomics share the responder resources: of a burst of 5 mixed
 * requests (2 READs, 3 atomics) to a QP with 4, the first 4 are answered
 * and exactly the 5th is NAKed (Invalid Request) and not executed.
 */
static void
test_res_burst_beyond_limit(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[8];
	struct droce_qp *qp;
	uint64_t *target;

	(void)state;
	rp_open(&rp, 4096);
	fill(rp.buf + 1024, 1024, 7);
	target = (uint64_t *)(void *)rp.buf;
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_read(&rp, qp, RP_PSN, rp.buf + 1024, rp.mr->rkey, 64);
	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN + 1, target, 1, 0);
	send_read(&rp, qp, RP_PSN + 2, rp.buf + 2048, rp.mr->rkey, 64);
	send_atomic(&rp, qp, ROCE_OP_COMPARE_SWAP, RP_PSN + 3, target, 7, 1);
	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN + 4, target, 100, 0);
	assert_int_equal(rp_collect(&rp, f, 8, RP_WAIT_S), 5);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN, 1, rp.buf + 1024, 64);
	expect_atomic_ack(&f[1], RP_PSN + 1, 2, 0);
	expect_read_resp(&f[2], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN + 2, 3,
			 rp.buf + 2048, 64);
	expect_atomic_ack(&f[3], RP_PSN + 3, 4, 1);
	expect_nak(&f[4], RP_PSN + 4, ROCE_NAK_INVALID_REQ, 4);
	assert_int_equal(*target, 7);
	assert_int_equal(rp_counter(&rp, "sent_inv_req_nak"), 1);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	close_rp(&rp, qp);
}

/*
 * Records are reused in order once their responses have left: 4 READs
 * answered, then 4 more in a burst are all answered too (MSN 5..8), each
 * reusing the record of the READ 4 before it.  A duplicate of a READ whose
 * record was reused is dropped; one of a READ still recorded is answered.
 */
static void
test_res_reused_in_order(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[8];
	struct droce_qp *qp;

	(void)state;
	rp_open(&rp, 4096);
	fill(rp.buf, 4096, 11);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	for (uint32_t round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < RES; i++)
			send_read(&rp, qp, RP_PSN + round * RES + i, rp.buf + 64 * i,
				  rp.mr->rkey, 64);
		assert_int_equal(rp_collect(&rp, f, 8, RP_WAIT_S), RES);
		for (uint32_t i = 0; i < RES; i++)
			expect_read_resp(&f[i], ROCE_OP_RDMA_READ_RESPONSE_ONLY,
					 RP_PSN + round * RES + i, round * RES + i + 1,
					 rp.buf + 64 * i, 64);
	}
	send_read(&rp, qp, RP_PSN + 3, rp.buf + 3 * 64, rp.mr->rkey, 64);
	assert_int_equal(rp_collect(&rp, f, 8, RP_WAIT_S), 0);
	send_read(&rp, qp, RP_PSN + 7, rp.buf + 3 * 64, rp.mr->rkey, 64);
	assert_int_equal(rp_collect(&rp, f, 8, RP_WAIT_S), 1);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN + 7, 8,
			 rp.buf + 3 * 64, 64);
	assert_int_equal(rp_counter(&rp, "sent_inv_req_nak"), 0);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_RTS);

	close_rp(&rp, qp);
}

/*
 * A duplicate READ is answered only if it matches its record: another
 * R_Key (another MR), a range beyond the original, the PSN of an atomic or
 * of a WRITE are dropped without an answer; a sub-range at a PSN inside
 * the original is read again (from that PSN, with the original's MSN).  A
 * duplicate atomic at a READ's PSN is dropped, not executed.
 */
static void
test_dup_read_must_match_record(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[16] = { 0 };
	struct droce_mr *mr2;
	struct droce_qp *qp;
	uint64_t *target;
	uint8_t *buf2;

	(void)state;
	rp_open(&rp, 8192);
	fill(rp.buf, 4096, 13);
	buf2 = rp.buf + 4096;
	fill(buf2, 2048, 17);
	target = (uint64_t *)(void *)(rp.buf + 3072);
	*target = 0;
	mr2 = droce_reg_mr(rp.pd, buf2, 2048, DROCE_ACCESS_LOCAL_WRITE |
			   DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr2);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_read(&rp, qp, RP_PSN, rp.buf, rp.mr->rkey, 2 * MTU);
	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN + 2, target, 1, 0);
	send_write_only(&rp, qp, RP_PSN + 3, rp.buf + 3584, data, sizeof(data));
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 4);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_FIRST, RP_PSN, 1, rp.buf, MTU);
	expect_read_resp(&f[1], ROCE_OP_RDMA_READ_RESPONSE_LAST, RP_PSN + 1, 1,
			 rp.buf + MTU, MTU);
	expect_atomic_ack(&f[2], RP_PSN + 2, 2, 0);
	expect_ack(&f[3], RP_PSN + 3, 3);

	send_read(&rp, qp, RP_PSN, buf2, mr2->rkey, 2 * MTU);	/* other key */
	send_read(&rp, qp, RP_PSN, rp.buf, rp.mr->rkey, 3 * MTU);	/* longer */
	send_read(&rp, qp, RP_PSN + 1, rp.buf + MTU, rp.mr->rkey, 2 * MTU); /* beyond */
	send_read(&rp, qp, RP_PSN + 2, rp.buf + 3072, rp.mr->rkey, 8);	/* atomic's */
	send_read(&rp, qp, RP_PSN + 3, rp.buf + 3584, rp.mr->rkey, 16);	/* WRITE's */
	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN, target, 1, 0);	/* READ's */
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	assert_int_equal(*target, 1);

	send_read(&rp, qp, RP_PSN + 1, rp.buf + MTU + 8, rp.mr->rkey, 512);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN + 1, 1,
			 rp.buf + MTU + 8, 512);
	assert_int_equal(rp_counter(&rp, "duplicate_request"), 7);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_RTS);

	rp_destroy_qp(qp);
	assert_int_equal(droce_dereg_mr(mr2), 0);
	rp_close(&rp);
}

/*
 * A duplicate READ matching its record is checked against the protection
 * tables of now: its MR deregistered, it is NAKed (remote access error,
 * with the MSN before the READ) and nothing is read.
 */
static void
test_dup_read_revoked_key(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	uint8_t data[16] = { 0 };
	struct droce_mr *mr2;
	struct droce_qp *qp;
	uint8_t *buf2;

	(void)state;
	rp_open(&rp, 8192);
	buf2 = rp.buf + 4096;
	fill(buf2, 64, 19);
	mr2 = droce_reg_mr(rp.pd, buf2, 64, DROCE_ACCESS_LOCAL_WRITE |
			   DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr2);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_read(&rp, qp, RP_PSN, buf2, mr2->rkey, 64);
	send_write_only(&rp, qp, RP_PSN + 1, rp.buf, data, sizeof(data));
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 2);
	expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN, 1, buf2, 64);
	expect_ack(&f[1], RP_PSN + 1, 2);

	send_read(&rp, qp, RP_PSN, buf2, mr2->rkey, 64);
	assert_int_equal(droce_dereg_mr(mr2), 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_nak(&f[0], RP_PSN, ROCE_NAK_REM_ACCESS_ERR, 0);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);

	close_rp(&rp, qp);
}

/*
 * A duplicate atomic whose record was reused by later READs is dropped:
 * never executed a second time, never answered with a result.
 */
static void
test_dup_atomic_after_reuse(void **state)
{
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_qp *qp;
	uint64_t *target;

	(void)state;
	rp_open(&rp, 4096);
	target = (uint64_t *)(void *)rp.buf;
	*target = 0;
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);

	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN, target, 1, 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_atomic_ack(&f[0], RP_PSN, 1, 0);
	for (uint32_t i = 1; i <= RES; i++) {
		send_read(&rp, qp, RP_PSN + i, rp.buf + 64, rp.mr->rkey, 64);
		assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
		expect_read_resp(&f[0], ROCE_OP_RDMA_READ_RESPONSE_ONLY, RP_PSN + i, i + 1,
				 rp.buf + 64, 64);
	}
	send_atomic(&rp, qp, ROCE_OP_FETCH_ADD, RP_PSN, target, 1, 0);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 0);
	assert_int_equal(*target, 1);
	assert_int_equal(rp_counter(&rp, "duplicate_request"), 1);

	close_rp(&rp, qp);
}

/* ---- ATOMIC WRITE and FLUSH (IBTA 1.5 annex A19) ------------------------------------ */

static void
send_atomic_write(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, void *addr,
		  uint32_t reth_len, const uint8_t v[8])
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_ATOMIC_WRITE, psn);

	p.reth.va = va_of(addr);
	p.reth.rkey = rp->mr->rkey;
	p.reth.len = reth_len;
	rp_send(rp, &p, v, 8, false);
}

static void
send_flush(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, uint32_t rkey,
	   uint8_t plt, uint8_t sel)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_FLUSH, psn);

	p.reth.va = va_of(rp->buf);
	p.reth.rkey = rkey;
	p.reth.len = 64;
	p.feth.plt = plt;
	p.feth.sel = sel;
	rp_send(rp, &p, NULL, 0, false);
}

/* The QP (in RTS) may also be asked for both kinds of FLUSH. */
static void
allow_flush(struct droce_qp *qp)
{
	struct droce_qp_attr a = {
		.qp_state = DROCE_QPS_RTS,
		.qp_access_flags = DP_REMOTE_ALL | DROCE_ACCESS_FLUSH_GLOBAL |
				   DROCE_ACCESS_FLUSH_PERSISTENT,
	};

	assert_int_equal(droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_ACCESS_FLAGS), 0);
}

/* A zero-length READ response ONLY: how both are answered (as rxe). */
static void
expect_placed(const struct rp_frame *f, uint32_t psn, uint32_t msn)
{
	rp_expect_frame(f, ROCE_OP_RDMA_READ_RESPONSE_ONLY, psn);
	assert_int_equal(f->pkt.aeth.syndrome, ROCE_AETH_ACK_NO_CREDIT);
	assert_int_equal(f->pkt.aeth.msn, msn);
	assert_int_equal(f->pkt.payload_len, 0);
}

/*
 * An ATOMIC WRITE is answered by an empty READ response with its MSN; a
 * WRITE then stores over it; the ATOMIC WRITE's duplicate is answered
 * again (same PSN, same MSN) and not executed: the WRITE's bytes stay.
 * A FLUSH alike, its duplicate answered again.
 */
static void
test_placement_answers_and_duplicates(void **state)
{
	static const uint8_t v[8] = { 1, 3, 5, 7, 9, 11, 13, 15 };
	static const uint8_t w[8] = { 2, 4, 6, 8, 10, 12, 14, 16 };
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_mr *mr;
	struct droce_qp *qp;

	(void)state;
	rp_open(&rp, 4096);
	qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
	allow_flush(qp);
	mr = droce_reg_mr(rp.pd, rp.buf, 4096, DROCE_ACCESS_LOCAL_WRITE |
			  DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT);
	assert_non_null(mr);

	send_atomic_write(&rp, qp, RP_PSN, rp.buf + 8, 8, v);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_placed(&f[0], RP_PSN, 1);
	assert_memory_equal(rp.buf + 8, v, 8);
	send_write_only(&rp, qp, RP_PSN + 1, rp.buf + 8, w, 8);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_ack(&f[0], RP_PSN + 1, 2);
	send_atomic_write(&rp, qp, RP_PSN, rp.buf + 8, 8, v);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_placed(&f[0], RP_PSN, 1);
	assert_memory_equal(rp.buf + 8, w, 8);
	assert_int_equal(rp_counter(&rp, "duplicate_request"), 1);

	send_flush(&rp, qp, RP_PSN + 2, mr->rkey, DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT,
		   DROCE_FLUSH_RANGE);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_placed(&f[0], RP_PSN + 2, 3);
	send_flush(&rp, qp, RP_PSN + 2, mr->rkey, DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT,
		   DROCE_FLUSH_RANGE);
	assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
	expect_placed(&f[0], RP_PSN + 2, 3);
	assert_int_equal(rp_counter(&rp, "duplicate_request"), 2);
	assert_int_equal(rp_counter(&rp, "rdma_recvs"), 3);
	assert_int_equal(rp_qp_state(qp), DROCE_QPS_RTS);
	assert_int_equal(droce_dereg_mr(mr), 0);
	close_rp(&rp, qp);
}

/*
 * Fields a droce requester never sends: an ATOMIC WRITE whose RETH length
 * is not its 8 bytes, a FLUSH with no placement type, an undefined type
 * bit or selectivity level.  Each is an Invalid Request (NAK, MSN 0, QP
 * to ERR), nothing written.
 */
static void
test_placement_undefined_fields(void **state)
{
	static const uint8_t v[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const struct { uint8_t plt, sel; } bad_feth[] = { { 0, 0 }, { 4, 0 }, { 1, 2 } };
	struct raw_peer rp;
	struct rp_frame f[4];
	struct droce_mr *mr;
	struct droce_qp *qp;

	(void)state;
	rp_open(&rp, 4096);
	mr = droce_reg_mr(rp.pd, rp.buf, 4096, DROCE_ACCESS_LOCAL_WRITE |
			  DROCE_ACCESS_FLUSH_GLOBAL | DROCE_ACCESS_FLUSH_PERSISTENT);
	assert_non_null(mr);
	for (unsigned int i = 0; i < 2 + RTE_DIM(bad_feth); i++) {
		qp = rp_create_qp(&rp, DROCE_QPT_RC, 0);
		allow_flush(qp);
		if (i < 2)
			send_atomic_write(&rp, qp, RP_PSN, rp.buf + 16, i == 0 ? 16 : 0, v);
		else
			send_flush(&rp, qp, RP_PSN, mr->rkey, bad_feth[i - 2].plt,
				   bad_feth[i - 2].sel);
		assert_int_equal(rp_collect(&rp, f, 4, RP_WAIT_S), 1);
		expect_nak(&f[0], RP_PSN, ROCE_NAK_INVALID_REQ, 0);
		assert_int_equal(rp_qp_state(qp), DROCE_QPS_ERR);
		rp_destroy_qp(qp);
	}
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(rp.buf[i], 0);
	assert_int_equal(rp_counter(&rp, "sent_inv_req_nak"), 2 + RTE_DIM(bad_feth));
	assert_int_equal(droce_dereg_mr(mr), 0);
	rp_close(&rp);
}

/* ---- UC holes (9.7.7) ---------------------------------------------------------------- */

/*
 * UC SEND FIRST, a dropped packet (broken_op with broken_len bytes at the
 * next PSN, or a gap when psn_skip), LAST: nothing completes, uc_msg_drop
 * is 1; then a whole FIRST, MIDDLE, LAST completes into the same receive
 * WQE with exactly its bytes.
 */
static void
uc_hole(uint8_t broken_op, uint32_t broken_len, uint32_t psn_skip)
{
	struct raw_peer rp;
	struct droce_wc wc[2];
	uint8_t data[3][MTU], junk[MTU];
	struct droce_qp *qp;
	uint32_t psn = RP_PSN;

	rp_open(&rp, 8192);
	for (unsigned int i = 0; i < 3; i++)
		fill(data[i], MTU, (uint8_t)(40 + i));
	memset(junk, 0xee, sizeof(junk));
	qp = rp_create_qp(&rp, DROCE_QPT_UC, 0);
	post_recv(&rp, qp, 7, rp.buf, 4096);

	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_FIRST, psn++, junk, MTU);
	psn += psn_skip;
	if (psn_skip == 0)
		send_data(&rp, qp, broken_op, psn++, junk, broken_len);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_LAST, psn++, junk, 100);
	assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 0);
	assert_int_equal(rp_counter(&rp, "uc_msg_drop"), 1);

	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_FIRST, psn++, data[0], MTU);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_MIDDLE, psn++, data[1], MTU);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_LAST, psn++, data[2], 100);
	assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, DROCE_WC_RECV);
	assert_int_equal(wc[0].byte_len, 2 * MTU + 100);
	assert_memory_equal(rp.buf, data[0], MTU);
	assert_memory_equal(rp.buf + MTU, data[1], MTU);
	assert_memory_equal(rp.buf + 2 * MTU, data[2], 100);
	assert_int_equal(rp.buf[2 * MTU + 100], 0);
	assert_int_equal(rp_counter(&rp, "uc_msg_drop"), 1);

	close_rp(&rp, qp);
}

/* a MIDDLE shorter than the MTU (FIRST and MIDDLE carry exactly one) */
static void
test_uc_hole_bad_length(void **state)
{
	(void)state;
	uc_hole(ROCE_OP_UC | ROCE_OP_SEND_MIDDLE, MTU / 2, 0);
}

/* a WRITE MIDDLE inside a SEND: opcode sequence error */
static void
test_uc_hole_bad_sequence(void **state)
{
	(void)state;
	uc_hole(ROCE_OP_UC | ROCE_OP_RDMA_WRITE_MIDDLE, MTU, 0);
}

/* a MIDDLE lost on the wire: PSN gap */
static void
test_uc_hole_psn_gap(void **state)
{
	(void)state;
	uc_hole(0, 0, 1);
}

/* A UC WRITE FIRST of one MTU, its RETH announcing 3 MTUs at dst. */
static void
uc_write_first(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn, void *dst,
	       const uint8_t *data)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_UC | ROCE_OP_RDMA_WRITE_FIRST, psn);

	p.reth.va = va_of(dst);
	p.reth.rkey = rp->mr->rkey;
	p.reth.len = 3 * MTU;
	rp_send(rp, &p, data, MTU, false);
}

static void
uc_write_last_imm(struct raw_peer *rp, struct droce_qp *qp, uint32_t psn,
		  const uint8_t *data)
{
	struct roce_pkt p = rp_pkt(rp, qp, ROCE_OP_UC | ROCE_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE,
				   psn);

	p.imm = 0x12345678;
	rp_send(rp, &p, data, MTU, false);
}

/*
 * UC WRITE_WITH_IMM: FIRST (RETH for 3 MTUs), a SEND MIDDLE where a WRITE
 * MIDDLE belongs (opcode sequence), a WRITE MIDDLE, LAST_WITH_IMM: the
 * message is abandoned at the bad packet, so neither later packet writes
 * and nothing completes; a whole message then completes into the same
 * receive WQE with its immediate and writes exactly its bytes.
 */
static void
test_uc_hole_write_with_imm(void **state)
{
	struct raw_peer rp;
	struct droce_wc wc[2];
	uint8_t data[3][MTU], junk[MTU];
	struct droce_qp *qp;
	uint8_t *dst;

	(void)state;
	rp_open(&rp, 8192);
	dst = rp.buf + 4096;
	for (unsigned int i = 0; i < 3; i++)
		fill(data[i], MTU, (uint8_t)(60 + i));
	memset(junk, 0xee, sizeof(junk));
	qp = rp_create_qp(&rp, DROCE_QPT_UC, 0);
	post_recv(&rp, qp, 8, rp.buf, 64);

	uc_write_first(&rp, qp, RP_PSN, dst, junk);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_SEND_MIDDLE, RP_PSN + 1, junk, MTU);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_RDMA_WRITE_MIDDLE, RP_PSN + 2, junk, MTU);
	uc_write_last_imm(&rp, qp, RP_PSN + 3, junk);
	assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 0);
	assert_memory_equal(dst, junk, MTU);
	assert_int_equal(dst[MTU], 0);
	assert_int_equal(dst[3 * MTU - 1], 0);
	assert_int_equal(rp_counter(&rp, "uc_msg_drop"), 1);

	uc_write_first(&rp, qp, RP_PSN + 4, dst, data[0]);
	send_data(&rp, qp, ROCE_OP_UC | ROCE_OP_RDMA_WRITE_MIDDLE, RP_PSN + 5, data[1], MTU);
	uc_write_last_imm(&rp, qp, RP_PSN + 6, data[2]);
	assert_int_equal(rp_poll_cq(&rp, wc, 2, RP_WAIT_S), 1);
	assert_int_equal(wc[0].wr_id, 8);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, DROCE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(wc[0].wc_flags & DROCE_WC_WITH_IMM, DROCE_WC_WITH_IMM);
	assert_int_equal(wc[0].imm_data, htonl(0x12345678));
	assert_int_equal(wc[0].byte_len, 3 * MTU);
	for (unsigned int i = 0; i < 3; i++)
		assert_memory_equal(dst + i * MTU, data[i], MTU);
	assert_int_equal(rp.buf[0], 0);
	assert_int_equal(rp_counter(&rp, "uc_msg_drop"), 1);

	close_rp(&rp, qp);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msn_read_responses),
		cmocka_unit_test(test_msn_atomic_acks),
		cmocka_unit_test(test_msn_acks_and_naks),
		cmocka_unit_test(test_msn_read_revoked_mid_stream),
		cmocka_unit_test(test_msn_error_naks),
		cmocka_unit_test(test_res_burst_beyond_limit),
		cmocka_unit_test(test_res_reused_in_order),
		cmocka_unit_test(test_dup_read_must_match_record),
		cmocka_unit_test(test_dup_read_revoked_key),
		cmocka_unit_test(test_dup_atomic_after_reuse),
		cmocka_unit_test(test_placement_answers_and_duplicates),
		cmocka_unit_test(test_placement_undefined_fields),
		cmocka_unit_test(test_uc_hole_bad_length),
		cmocka_unit_test(test_uc_hole_bad_sequence),
		cmocka_unit_test(test_uc_hole_psn_gap),
		cmocka_unit_test(test_uc_hole_write_with_imm),
	};

	rp_eal_init(argv[0]);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);	/* one test by name (a pattern) */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
