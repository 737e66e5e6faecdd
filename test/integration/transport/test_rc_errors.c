/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every NAK and error path between two droce stacks: the requester gets
 * the right completion status, the remote buffer is untouched, the right
 * counter moves, both QPs end in the error state and flush what is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define BUF (1u << 20)

static struct fx f;

static int
setup(void **state)
{
	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = 0xfffffa });
	memset(f.b.buf, 0x77, BUF);
	fx_fill(f.a.buf, BUF, 1);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fx_close(&f);
	return 0;
}

static void
assert_untouched(size_t off, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (f.b.buf[off + i] != 0x77)
			fail_msg("remote byte %zu was written", off + i);
}

/* Post one WR, expect one completion with status st, both QPs in ERR. */
static void
expect_remote_failure(enum droce_wr_opcode op, uint32_t len, uint64_t raddr,
		      uint32_t rkey, enum droce_wc_status st)
{
	struct droce_qp_attr attr;
	struct droce_qp_init_attr init;
	struct droce_wc wc[4];

	assert_int_equal(fx_post(f.a.qp, op, 1, f.a.buf + 4096, len, f.a.mr->lkey,
				 raddr, rkey, DROCE_SEND_SIGNALED), 0);
	/* a WR behind the failing one is flushed, not executed */
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 2, f.a.buf, 64,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 10), 2);
	if (wc[0].status != st)
		fail_msg("got %s, expected %s", droce_wc_status_str(wc[0].status),
			 droce_wc_status_str(st));
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(droce_query_qp(f.a.qp, &attr, 0, &init), 0);
	assert_int_equal(attr.qp_state, DROCE_QPS_ERR);
	assert_int_equal(droce_query_qp(f.b.qp, &attr, 0, &init), 0);
	assert_int_equal(attr.qp_state, DROCE_QPS_ERR);
	assert_untouched(0, 64);
}

static void
test_write_wrong_rkey_bad_flow(void **state)
{
	(void)state;
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 100, (uintptr_t)f.b.buf + 4096,
			      f.b.mr->rkey ^ 0x100, DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(4096, 100);
	assert_int_equal(fx_counter(&f.b, "sent_rem_access_nak"), 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_err_nak"), 1);
}

static void
test_write_out_of_range_bad_flow(void **state)
{
	(void)state;
	/* the last 50 bytes would land past the region */
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 100, (uintptr_t)f.b.buf + BUF - 50,
			      f.b.mr->rkey, DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(BUF - 50, 50);
}

static void
test_write_without_remote_write_right_bad_flow(void **state)
{
	struct droce_mr *ro = droce_reg_mr(f.b.pd, f.b.buf + 8192, 8192,
					   DROCE_ACCESS_REMOTE_READ);

	(void)state;
	assert_non_null(ro);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)f.b.buf + 8192,
			      ro->rkey, DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(8192, 64);
	assert_int_equal(droce_dereg_mr(ro), 0);
}

static void
test_read_without_remote_read_right_bad_flow(void **state)
{
	struct droce_mr *wo = droce_reg_mr(f.b.pd, f.b.buf + 8192, 8192,
					   DROCE_ACCESS_LOCAL_WRITE |
					   DROCE_ACCESS_REMOTE_WRITE);

	(void)state;
	assert_non_null(wo);
	memset(f.a.buf + 4096, 0x11, 64);
	expect_remote_failure(DROCE_WR_RDMA_READ, 64, (uintptr_t)f.b.buf + 8192,
			      wo->rkey, DROCE_WC_REM_ACCESS_ERR);
	/* nothing came back into the local buffer */
	for (int i = 0; i < 64; i++)
		assert_int_equal(f.a.buf[4096 + i], 0x11);
	assert_int_equal(droce_dereg_mr(wo), 0);
}

/* Valid key and range but not 8-byte aligned: Invalid Request (IBTA
 * 9.4.5 / class C, as Linux rxe), not an access error. */
static void
test_atomic_misaligned_bad_flow(void **state)
{
	(void)state;
	expect_remote_failure(DROCE_WR_ATOMIC_FETCH_AND_ADD, 8,
			      (uintptr_t)f.b.buf + 4, f.b.mr->rkey,
			      DROCE_WC_REM_INV_REQ_ERR);
	assert_untouched(0, 16);
}

/* A valid rkey of another PD on the same device: not ours to use. */
static void
test_rkey_of_another_pd_bad_flow(void **state)
{
	struct droce_pd *pd2 = droce_alloc_pd(f.b.ctx);
	struct droce_mr *mr2;

	(void)state;
	assert_non_null(pd2);
	mr2 = droce_reg_mr(pd2, f.b.buf + 16384, 4096,
			   DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE);
	assert_non_null(mr2);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)f.b.buf + 16384,
			      mr2->rkey, DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(16384, 64);
	assert_int_equal(droce_dereg_mr(mr2), 0);
	assert_int_equal(droce_dealloc_pd(pd2), 0);
}

/* A deregistered region's key never works again. */
static void
test_deregistered_rkey_bad_flow(void **state)
{
	struct droce_mr *tmp = droce_reg_mr(f.b.pd, f.b.buf + 32768, 4096,
					    DROCE_ACCESS_LOCAL_WRITE |
					    DROCE_ACCESS_REMOTE_WRITE);
	uint32_t rkey;

	(void)state;
	assert_non_null(tmp);
	rkey = tmp->rkey;
	assert_int_equal(droce_dereg_mr(tmp), 0);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)f.b.buf + 32768,
			      rkey, DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(32768, 64);
}

static void
test_qp_without_remote_write_access_bad_flow(void **state)
{
	struct droce_qp_attr a = { .qp_access_flags = DROCE_ACCESS_REMOTE_READ,
				   .qp_state = DROCE_QPS_RTS };

	(void)state;
	/* RTS -> RTS may change qp_access_flags */
	assert_int_equal(droce_modify_qp(f.b.qp, &a, DROCE_QP_ACCESS_FLAGS), 0);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)f.b.buf,
			      f.b.mr->rkey, DROCE_WC_REM_INV_REQ_ERR);
}

static void
test_send_longer_than_receive_buffer_bad_flow(void **state)
{
	struct droce_wc wc;

	(void)state;
	assert_int_equal(fx_post_recv(f.b.qp, 77, f.b.buf, 100, f.b.mr->lkey), 0);
	expect_remote_failure(DROCE_WR_SEND, 3000, 0, 0, DROCE_WC_REM_INV_REQ_ERR);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(wc.status, DROCE_WC_LOC_LEN_ERR);
}

static void
test_receive_buffer_without_local_write_bad_flow(void **state)
{
	struct droce_mr *ro = droce_reg_mr(f.b.pd, f.b.buf + 65536, 4096,
					   DROCE_ACCESS_REMOTE_READ);
	struct droce_wc wc;

	(void)state;
	assert_non_null(ro);
	assert_int_equal(fx_post_recv(f.b.qp, 78, f.b.buf + 65536, 4096, ro->lkey), 0);
	expect_remote_failure(DROCE_WR_SEND, 64, 0, 0, DROCE_WC_REM_OP_ERR);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_LOC_PROT_ERR);
	assert_untouched(65536, 64);
	assert_int_equal(droce_dereg_mr(ro), 0);
}

/* Local key problems end in a local error, nothing goes on the wire. */
static void
test_local_lkey_invalid_bad_flow(void **state)
{
	struct droce_wc wc;

	(void)state;
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 5, f.a.buf, 64,
				 f.a.mr->lkey ^ 0x1, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_LOC_PROT_ERR);
	assert_int_equal(fx_counter(&f.b, "rcvd_pkts"), 0);
	assert_untouched(0, 64);
}

/*
 * A multi-packet WRITE whose SGE runs past the end of its region: the
 * packets inside the region go out (the requester checks each one's bytes,
 * or the whole SGE at once, which fails here and falls back to the check
 * per packet), the first packet outside fails the WQE with a local
 * protection error, and nothing beyond the region is read.
 */
static void
test_local_sge_leaves_region_mid_message_bad_flow(void **state)
{
	struct droce_mr *part = droce_reg_mr(f.a.pd, f.a.buf, 2 * 1024 + 512,
					     DROCE_ACCESS_LOCAL_WRITE);
	struct droce_wc wc;

	(void)state;
	assert_non_null(part);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 6, f.a.buf, 3 * 1024,
				 part->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.wr_id, 6);
	assert_int_equal(wc.status, DROCE_WC_LOC_PROT_ERR);
	/* FIRST and MIDDLE arrived and were written; LAST was never built */
	assert_int_equal(fx_counter(&f.b, "rcvd_pkts"), 2);
	assert_memory_equal(f.b.buf, f.a.buf, 2 * 1024);
	assert_untouched(2 * 1024, 1024);
	assert_int_equal(droce_dereg_mr(part), 0);
}

/*
 * Two WRITEs through one L_Key built in one requester burst: the first
 * lies inside the region, the second runs past its end.  The translation
 * the first one checked must not carry the second: it fails with a local
 * protection error and nothing of it goes out, while the first one went
 * out whole (and, not yet acknowledged when the QP moved to ERR, is
 * flushed: its completion comes first, in send queue order).
 */
static void
test_local_sge_after_a_good_one_leaves_region_bad_flow(void **state)
{
	struct droce_mr *part = droce_reg_mr(f.a.pd, f.a.buf, 2 * 1024 + 512,
					     DROCE_ACCESS_LOCAL_WRITE);
	struct droce_wc wc[2];

	(void)state;
	assert_non_null(part);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 7, f.a.buf, 64,
				 part->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 8, f.a.buf + 2 * 1024 + 480, 64,
				 part->lkey, (uintptr_t)f.b.buf + 1024, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 5), 2);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[1].wr_id, 8);
	assert_int_equal(wc[1].status, DROCE_WC_LOC_PROT_ERR);
	assert_int_equal(fx_counter(&f.b, "rcvd_pkts"), 1);
	assert_memory_equal(f.b.buf, f.a.buf, 64);
	assert_untouched(1024, 64);
	assert_int_equal(droce_dereg_mr(part), 0);
}

/* ---- RNR ------------------------------------------------------------------ */

static void
test_rnr_without_retry_fails_bad_flow(void **state)
{
	struct droce_wc wc;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .retry_set = true, .retry_cnt = 7,
					     .rnr_retry = 0 });
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, 1, f.a.buf, 64, f.a.mr->lkey,
				 0, 0, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_rnr_err"), 1);
	assert_int_equal(fx_counter(&f.a, "retry_rnr_exceeded_err"), 1);
}

static void
test_rnr_retries_until_a_buffer_is_posted(void **state)
{
	struct droce_wc wc;

	(void)state;
	fx_destroy_qps(&f);
	/* rnr_retry 7 = forever; min_rnr_timer 14 = 1.28 ms */
	fx_connect(&f, &(struct fx_qp_opts){ .min_rnr_timer = 14 });
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, 1, f.a.buf, 3000, f.a.mr->lkey,
				 0, 0, DROCE_SEND_SIGNALED), 0);
	fx_spin(&f, 0.02);		/* several RNR rounds */
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);
	assert_true(fx_counter(&f.a, "rcvd_rnr_err") >= 2);
	assert_int_equal(fx_post_recv(f.b.qp, 2, f.b.buf, 4096, f.b.mr->lkey), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.byte_len, 3000);
	assert_memory_equal(f.b.buf, f.a.buf, 3000);
}

/* ---- the peer vanishes ------------------------------------------------------ */

static void
test_retry_exhausted_when_peer_vanishes_bad_flow(void **state)
{
	struct vwire_faults cut = { .drop = 1.0, .seed = 1 };
	struct vwire_faults ok = { .seed = 1 };
	struct droce_wc wc[3];
	struct vwire_stats before, after;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .retry_set = true, .retry_cnt = 2,
					     .rnr_retry = 0, .timeout = 8 });
	vwire_get_stats(f.a.link, &before);
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 5000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_READ, 2, f.a.buf, 64,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey, 0), 0);
	assert_int_equal(fx_post_recv(f.a.qp, 3, f.a.buf, 64, f.a.mr->lkey), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 3, 5), 3);
	assert_int_equal(wc[0].status, DROCE_WC_RETRY_EXC_ERR);
	assert_int_equal(wc[0].wr_id, 1);
	/* the unsignaled READ is flushed and reported anyway, then the RQ */
	assert_int_equal(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[2].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].opcode, DROCE_WC_RECV);
	/* 1 try + 2 retries, each ending in a timeout */
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 3);
	assert_int_equal(fx_counter(&f.a, "retry_exceeded_err"), 1);
	/* each try sent the whole window: 5 WRITE packets and the READ */
	vwire_get_stats(f.a.link, &after);
	assert_int_equal(after.dropped - before.dropped, (1 + 2) * (5 + 1));
	assert_int_equal(after.tx - before.tx, (1 + 2) * (5 + 1));
	assert_untouched(0, 5000);
	assert_int_equal(vwire_set_faults(f.a.link, &ok), 0);
}

/* ---- the engine's own gaps (lib/transport tp_timer.c) ----------------------- */

#define GAP_TIMEOUT 12		/* 4.096 us x 2^12 = 16.8 ms */
#define GAP_STALL_MS 200	/* > the budget of retry_cnt 0 or 1: 16.8 or 33.6 ms */

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/*
 * The process (both engines, run-to-completion) is descheduled for longer
 * than the requester's whole retry budget (retry_cnt 0: the first charged
 * timeout fails the WR) with a WRITE in flight.  Its timer expired while
 * its own engine was not running: re-armed, no retry charged, and the
 * WRITE completes once both run again.  The gap is counted on the engine
 * that had a timer armed, not on the responder's, whose engine had none.
 */
static void
test_timeout_in_own_gap_charges_no_retry(void **state)
{
	struct droce_wc wc;
	uint64_t t0, stall_us;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .retry_set = true, .retry_cnt = 0,
					     .rnr_retry = 0, .timeout = GAP_TIMEOUT });
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 3000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	droce_progress(f.a.ctx);		/* sent: the timer runs */
	assert_int_equal(fx_counter(&f.a, "sent_pkts"), 3);
	t0 = rte_get_timer_cycles();
	sleep_ms(GAP_STALL_MS);
	/* the stall in the engine's own clock (EAL's estimate of the timer's
	 * rate, off by 10 % and more on a loaded virtual machine, is in both) */
	stall_us = (rte_get_timer_cycles() - t0) * 1000000 / rte_get_timer_hz();
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(fx_qp_state(f.a.qp), DROCE_QPS_RTS);
	assert_memory_equal(f.b.buf, f.a.buf, 3000);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts_in_gap"), 1);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&f.a, "completer_retry_err"), 0);
	assert_int_equal(fx_counter(&f.a, "retry_exceeded_err"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	assert_int_equal(fx_counter(&f.a, "sent_pkts"), 3);
	assert_true(fx_counter(&f.a, "sched_gaps") >= 1);
	assert_true(fx_counter(&f.a, "sched_gap_max_us") + 1000 >= stall_us);
	assert_int_equal(fx_counter(&f.b, "sched_gaps"), 0);
	assert_int_equal(fx_counter(&f.b, "sched_gap_max_us"), 0);
}

/*
 * A dead peer is still found by an application that calls in only every
 * 50 ms (3 timeouts): each expiry falls in a gap, the first of each pair
 * is re-armed, the second charged, so retry_cnt 1 fails after 4 expiries.
 */
static void
test_gap_rearm_once_per_retry_finds_dead_peer_bad_flow(void **state)
{
	struct vwire_faults cut = { .drop = 1.0, .seed = 1 };
	struct vwire_faults ok = { .seed = 1 };
	struct droce_wc wc;
	int rounds = 0, got = 0;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .retry_set = true, .retry_cnt = 1,
					     .rnr_retry = 0, .timeout = GAP_TIMEOUT });
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 64,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	while (got == 0 && rounds < 10) {
		droce_progress(f.a.ctx);
		droce_progress(f.b.ctx);
		got = droce_poll_cq(f.a.cq, 1, &wc);
		rounds++;
		if (got == 0)
			sleep_ms(50);
	}
	assert_int_equal(got, 1);
	assert_int_equal(wc.status, DROCE_WC_RETRY_EXC_ERR);
	/* the post's round, then 4 expiries: gap, charged, gap, charged */
	assert_int_equal(rounds, 5);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts_in_gap"), 2);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 2);
	assert_int_equal(fx_counter(&f.a, "completer_retry_err"), 1);
	assert_int_equal(fx_counter(&f.a, "retry_exceeded_err"), 1);
	assert_int_equal(fx_counter(&f.a, "sched_gaps"), 4);
	assert_int_equal(vwire_set_faults(f.a.link, &ok), 0);
}

/* retry_cnt 7: 7 retries per IBTA; forever with the rxe compatibility switch */
static void
test_retry_cnt_7_is_finite_unless_rxe_compat(void **state)
{
	struct vwire_faults cut = { .drop = 1.0, .seed = 1 };
	struct vwire_faults ok_wire = { .seed = 1 };
	struct vwire_stats before, after;
	struct droce_wc wc;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .retry_set = true, .retry_cnt = 7,
					     .rnr_retry = 0, .timeout = 5 });
	/* compat on: the link is cut for 12 timeouts, the WR survives */
	tp_dev_set_retry_cnt_7_infinite(verbs_tp(f.a.ctx), true);
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 64,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	while (fx_counter(&f.a, "retransmit_timeouts") < 12)
		assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 0.001), 0);
	assert_int_equal(vwire_set_faults(f.a.link, &ok_wire), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	/* compat off (IBTA): 1 try + 7 retries, then RETRY_EXC_ERR */
	tp_dev_set_retry_cnt_7_infinite(verbs_tp(f.a.ctx), false);
	vwire_get_stats(f.a.link, &before);
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 2, f.a.buf, 64,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_RETRY_EXC_ERR);
	vwire_get_stats(f.a.link, &after);
	assert_int_equal(after.dropped - before.dropped, 1 + 7);	/* one packet a try */
	assert_int_equal(vwire_set_faults(f.a.link, &ok_wire), 0);
}

/*
 * Responses late enough for the requester to time out: it sends its READs
 * again while their first responses are still on the wire, those complete
 * the READs, and the new READs it then posts reach the responder while it
 * still streams the duplicates' answers.  Each new READ takes the oldest
 * record all the same (the requester had that READ's answer before it
 * could post another: its initiator depth), never Invalid Request.
 */
static void
test_new_reads_while_duplicates_still_stream(void **state)
{
	const struct vwire_faults late = { .delay_us = 3000, .seed = 1 };
	const struct vwire_faults ok = { .seed = 1 };
	const uint32_t len = 65536, nreads = 64, slots = BUF / len;
	struct droce_wc wc[64];
	int got = 0;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .timeout = 8, .max_rd_atomic = 16 });
	fx_fill(f.b.buf, BUF, 2);
	memset(f.a.buf, 0, BUF);
	assert_int_equal(vwire_set_faults(f.b.link, &late), 0);
	for (uint32_t i = 0; i < nreads; i++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_READ, i,
					 f.a.buf + (i % slots) * len, len, f.a.mr->lkey,
					 (uintptr_t)f.b.buf + (i % slots) * len, f.b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
	while (got < (int)nreads) {
		int n = fx_poll(&f, f.a.cq, wc, (int)nreads - got, 20);

		assert_true(n > 0);
		for (int i = 0; i < n; i++)
			fx_assert_wc(&wc[i], (uint64_t)got + (uint64_t)i, DROCE_WC_RDMA_READ,
				     DROCE_WC_SUCCESS);
		got += n;
	}
	assert_memory_equal(f.a.buf, f.b.buf, BUF);
	assert_true(fx_counter(&f.a, "retransmit_timeouts") > 0);
	assert_true(fx_counter(&f.b, "duplicate_request") > 0);
	assert_int_equal(fx_counter(&f.b, "sent_inv_req_nak"), 0);
	assert_int_equal(vwire_set_faults(f.b.link, &ok), 0);
}

/* ---- the error state ----------------------------------------------------------- */

static void
test_modify_to_err_flushes_everything(void **state)
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_ERR };
	struct droce_wc wc[16];
	int n;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(fx_post_recv(f.b.qp, 100 + i, f.b.buf, 64,
					      f.b.mr->lkey), 0);
	assert_int_equal(droce_modify_qp(f.b.qp, &a, DROCE_QP_STATE), 0);
	n = fx_poll(&f, f.b.cq, wc, 4, 5);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, 100 + i);
		assert_int_equal(wc[i].status, DROCE_WC_WR_FLUSH_ERR);
	}
	/* posting in ERR is allowed and completes at once with a flush */
	assert_int_equal(fx_post_recv(f.b.qp, 200, f.b.buf, 64, f.b.mr->lkey), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(fx_post(f.b.qp, DROCE_WR_SEND, 201, f.b.buf, 8, f.b.mr->lkey,
				 0, 0, 0), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 201);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
}

/* ---- memory windows through the transport ---------------------------------------- */

static uint32_t
bind_type2(struct droce_mw *mw, uint64_t addr, uint64_t len, unsigned int acc)
{
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;
	uint32_t rkey = droce_inc_rkey(mw->rkey);

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 900;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = f.b.mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = acc;
	assert_int_equal(droce_post_send(f.b.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_BIND_MW);
	mw->rkey = rkey;
	return rkey;
}

static void
test_type2_window_write_then_local_invalidate_bad_flow(void **state)
{
	struct droce_mw *mw = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_2);
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;
	uint32_t rkey;

	(void)state;
	assert_non_null(mw);
	rkey = bind_type2(mw, (uintptr_t)f.b.buf + 4096, 4096, DROCE_ACCESS_REMOTE_WRITE);
	/* the window works through its QP */
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 128,
				 f.a.mr->lkey, (uintptr_t)f.b.buf + 4096, rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + 4096, f.a.buf, 128);
	/* LOCAL_INV by the owner: the rkey is dead at once */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 901;
	wr.opcode = DROCE_WR_LOCAL_INV;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	assert_int_equal(droce_post_send(f.b.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_LOCAL_INV);
	memset(f.b.buf + 4096, 0x77, 128);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 128, (uintptr_t)f.b.buf + 4096, rkey,
			      DROCE_WC_REM_ACCESS_ERR);
	assert_untouched(4096, 128);
	assert_int_equal(droce_dealloc_mw(mw), 0);
}

static void
test_type2_window_remote_invalidate_by_send_with_inv_bad_flow(void **state)
{
	struct droce_mw *mw = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_2);
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;
	uint32_t rkey;

	(void)state;
	assert_non_null(mw);
	rkey = bind_type2(mw, (uintptr_t)f.b.buf, 8192, DROCE_ACCESS_REMOTE_WRITE);
	assert_int_equal(fx_post_recv(f.b.qp, 5, f.b.buf + 65536, 256, f.b.mr->lkey), 0);
	sge = (struct droce_sge){ (uintptr_t)f.a.buf, 16, f.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND_WITH_INV;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_true(wc.wc_flags & DROCE_WC_WITH_INV);
	assert_int_equal(wc.invalidated_rkey, rkey);
	memset(f.b.buf + 65536, 0x77, 16);
	expect_remote_failure(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)f.b.buf, rkey,
			      DROCE_WC_REM_ACCESS_ERR);
	assert_int_equal(droce_dealloc_mw(mw), 0);
}

int
main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_write_wrong_rkey_bad_flow),
		T(test_write_out_of_range_bad_flow),
		T(test_write_without_remote_write_right_bad_flow),
		T(test_read_without_remote_read_right_bad_flow),
		T(test_atomic_misaligned_bad_flow),
		T(test_rkey_of_another_pd_bad_flow),
		T(test_deregistered_rkey_bad_flow),
		T(test_qp_without_remote_write_access_bad_flow),
		T(test_send_longer_than_receive_buffer_bad_flow),
		T(test_receive_buffer_without_local_write_bad_flow),
		T(test_local_lkey_invalid_bad_flow),
		T(test_local_sge_leaves_region_mid_message_bad_flow),
		T(test_local_sge_after_a_good_one_leaves_region_bad_flow),
		T(test_rnr_without_retry_fails_bad_flow),
		T(test_rnr_retries_until_a_buffer_is_posted),
		T(test_retry_exhausted_when_peer_vanishes_bad_flow),
		T(test_retry_cnt_7_is_finite_unless_rxe_compat),
		T(test_timeout_in_own_gap_charges_no_retry),
		T(test_gap_rearm_once_per_retry_finds_dead_peer_bad_flow),
		T(test_new_reads_while_duplicates_still_stream),
		T(test_modify_to_err_flushes_everything),
		T(test_type2_window_write_then_local_invalidate_bad_flow),
		T(test_type2_window_remote_invalidate_by_send_with_inv_bad_flow),
	};
#undef T

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("rc_errors", tests, NULL, NULL);
}
