/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The life of one 8-byte operation on an idle QP pair, counted in
 * progress rounds (run-to-completion: droce_poll_cq runs one round of its
 * engine before it looks at the CQ).  Nothing waits for a later round, a
 * timer or a batch: the requester's first round sends the request, the
 * responder's first round executes it and sends the answer (READ response,
 * atomic ACK, or the ACK of a WRITE/SEND, IBTA 9.7.5.1), and the
 * requester's second round completes it.  The receiver of a SEND has its
 * receive completion after its first round too.  Each direction carries
 * exactly one frame, and each side's QP is visited once (qp_runs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tp_fixture.h"
#include "vwire.h"

#define BUF 4096
#define LEN 8
#define RECV_OFF 2048		/* where b's receive buffer starts */

static struct fx f;

static uint64_t
frames_sent(const struct fx_end *e)
{
	struct vwire_stats st;

	vwire_get_stats(e->link, &st);
	return st.tx;
}

struct snapshot {
	uint64_t a_frames, b_frames, a_runs, b_runs;
};

static void
take(struct snapshot *s)
{
	s->a_frames = frames_sent(&f.a);
	s->b_frames = frames_sent(&f.b);
	s->a_runs = fx_counter(&f.a, "qp_runs");
	s->b_runs = fx_counter(&f.b, "qp_runs");
}

/* Since s: one frame each way, one visit of each side's QP. */
static void
assert_one_exchange(const struct snapshot *s)
{
	struct snapshot now;

	take(&now);
	assert_int_equal(now.a_frames - s->a_frames, 1);
	assert_int_equal(now.b_frames - s->b_frames, 1);
	assert_int_equal(now.a_runs - s->a_runs, 1);
	assert_int_equal(now.b_runs - s->b_runs, 1);
}

static int
setup_pair(void **state)
{
	struct fx_qp_opts o = { .timeout = 14 };

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &o);
	/* ARP resolved and the modify_qp visits behind us */
	assert_int_equal(fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 99, f.a.buf, LEN,
				      (uintptr_t)f.b.buf, f.b.mr->rkey), DROCE_WC_SUCCESS);
	fx_spin(&f, 0.02);
	return 0;
}

static int
close_pair(void **state)
{
	(void)state;
	fx_close(&f);
	return 0;
}

/*
 * wr (posted on a, signaled), then: a's round 1 sends the request, b's
 * round 1 answers (and yields b_cqes completions into bwc), a's round 2
 * completes it.  The CQE is there at a's second poll, not earlier and not
 * later.
 */
static void
run_wr(struct droce_send_wr *wr, enum droce_wc_opcode wc_op, struct droce_wc *bwc,
       int b_cqes)
{
	struct droce_send_wr *bad = NULL;
	struct droce_wc wc;
	struct snapshot s;

	take(&s);
	assert_int_equal(droce_post_send(f.a.qp, wr, &bad), 0);
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);		/* a: round 1 */
	assert_int_equal(droce_poll_cq(f.b.cq, 1, bwc), b_cqes);	/* b: round 1 */
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 1);		/* a: round 2 */
	fx_assert_wc(&wc, wr->wr_id, wc_op, DROCE_WC_SUCCESS);
	assert_one_exchange(&s);
}

/* run_wr of an 8-byte op between a's and b's buffers' starts. */
static void
run_op(enum droce_wr_opcode op, enum droce_wc_opcode wc_op, uint64_t wr_id,
       struct droce_wc *bwc, int b_cqes)
{
	struct droce_sge sge = { (uintptr_t)f.a.buf, LEN, f.a.mr->lkey };
	struct droce_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = DROCE_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)f.b.buf, .rkey = f.b.mr->rkey },
	};

	run_wr(&wr, wc_op, bwc, b_cqes);
}

/* An 8-byte READ or WRITE: text at src (the other buffer cleared) lands at dst. */
static void
run_copy(enum droce_wr_opcode op, enum droce_wc_opcode wc_op, uint64_t wr_id,
	 uint8_t *src, uint8_t *dst, const char *text)
{
	struct droce_wc bwc;

	memcpy(src, text, LEN);
	memset(dst, 0, LEN);
	run_op(op, wc_op, wr_id, &bwc, 0);
	assert_memory_equal(dst, text, LEN);
}

static void
test_read_two_rounds(void **state)
{
	(void)state;
	run_copy(DROCE_WR_RDMA_READ, DROCE_WC_RDMA_READ, 1, f.b.buf, f.a.buf, "8 bytes!");
}

/* FETCH_AND_ADD of 1000 to 41: 41 comes back, the target holds 1041. */
static void
test_atomic_two_rounds(void **state)
{
	struct droce_sge sge = { (uintptr_t)f.a.buf, LEN, f.a.mr->lkey };
	struct droce_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD, .send_flags = DROCE_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)f.b.buf, .compare_add = 1000,
			       .rkey = f.b.mr->rkey },
	};
	struct droce_wc bwc;
	uint64_t v = 41, orig;

	(void)state;
	memcpy(f.b.buf, &v, sizeof(v));
	memset(f.a.buf, 0, LEN);
	run_wr(&wr, DROCE_WC_FETCH_ADD, &bwc, 0);
	memcpy(&orig, f.a.buf, sizeof(orig));
	memcpy(&v, f.b.buf, sizeof(v));
	assert_int_equal(orig, 41);
	assert_int_equal(v, 1041);
}

static void
test_write_two_rounds(void **state)
{
	(void)state;
	run_copy(DROCE_WR_RDMA_WRITE, DROCE_WC_RDMA_WRITE, 3, f.a.buf, f.b.buf, "written!");
}

/* The receiver's completion comes with its first round, beside the ACK. */
static void
test_send_two_rounds(void **state)
{
	struct droce_wc bwc;

	(void)state;
	memcpy(f.a.buf, "a SEND!!", LEN);
	assert_int_equal(fx_post_recv(f.b.qp, 7, f.b.buf + RECV_OFF, 64, f.b.mr->lkey), 0);
	run_op(DROCE_WR_SEND, DROCE_WC_SEND, 4, &bwc, 1);
	fx_assert_wc(&bwc, 7, DROCE_WC_RECV, DROCE_WC_SUCCESS);
	assert_int_equal(bwc.byte_len, LEN);
	assert_memory_equal(f.b.buf + RECV_OFF, "a SEND!!", LEN);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_two_rounds, setup_pair, close_pair),
		cmocka_unit_test_setup_teardown(test_atomic_two_rounds, setup_pair, close_pair),
		cmocka_unit_test_setup_teardown(test_write_two_rounds, setup_pair, close_pair),
		cmocka_unit_test_setup_teardown(test_send_two_rounds, setup_pair, close_pair),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
