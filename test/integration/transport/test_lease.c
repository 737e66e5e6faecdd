/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leases on MRs and MWs (droce extension, droce.h): the client (a) WRITEs
 * and READs back in a loop into memory of the server (b) that b leased;
 * b renews for several periods, then stops.  Checked: every access before
 * the expiry succeeds; the first failure is REM_ACCESS_ERR, no earlier
 * than the deadline, and at most one access that started more than a
 * lease tick after the deadline succeeds (run_until_expiry: bounds that
 * hold however the test and the engine are scheduled); no WRITE after
 * the revocation changed b's memory (a shadow copy of what succeeded);
 * b gets the expiry event exactly once, naming the object; b's handle
 * then reports the state, refuses renewal and frees on dereg / dealloc.
 * Run in run-to-completion mode and with both engines on a transport lcore.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tp_fixture.h"

#define TRANSPORT_LCORE 1
#define BUF 65536
#define REGION 4096		/* b.buf[0, REGION): the leased memory */
#define CHUNK 64
#define LEASE_MS 100
#define RENEW_PERIODS 3		/* renewed for this many periods first */

static struct fx f;

static int
setup(void **state)
{
	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ 0 });
	memset(f.b.buf, 0x5a, BUF);
	fx_events_nonblock(&f.b);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fx_close(&f);
	return 0;
}

struct run {
	uint8_t shadow[REGION];	/* what b's region must hold */
	uint64_t ops;		/* accesses that succeeded */
	double rtt_max;		/* slowest successful access (s) */
	double t_fail;		/* first failure (fx_now) */
	double fail_dur;	/* the failed access's own time (s) */
	enum droce_wc_status st;
	uint32_t writes_after;	/* WRITEs posted after the first failure */
};

/*
 * One WRITE of a unique pattern into chunk i, then a READ of it back: 0
 * while both succeed (shadow updated, READ data checked), else the
 * failure's status in r.
 */
static int
access_once(struct run *r, uint32_t rkey, uint64_t seq)
{
	size_t off = (seq % (REGION / CHUNK)) * CHUNK;
	uint8_t *src = f.a.buf, *dst = f.a.buf + CHUNK;
	double t0 = fx_now(), dt;
	enum droce_wc_status st;

	fx_fill(src, CHUNK, (uint32_t)seq + 1);
	st = fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 2 * seq, src, CHUNK,
			  (uintptr_t)(f.b.buf + off), rkey);
	if (st == DROCE_WC_SUCCESS) {
		memcpy(r->shadow + off, src, CHUNK);
		st = fx_post_wait(&f, &f.a, DROCE_WR_RDMA_READ, 2 * seq + 1, dst,
				  CHUNK, (uintptr_t)(f.b.buf + off), rkey);
		if (st == DROCE_WC_SUCCESS)
			assert_memory_equal(dst, src, CHUNK);
	}
	if (st != DROCE_WC_SUCCESS) {
		r->st = st;
		r->t_fail = fx_now();
		r->fail_dur = r->t_fail - t0;
		return -1;
	}
	dt = (fx_now() - t0) / 2;
	if (dt > r->rtt_max)
		r->rtt_max = dt;
	r->ops++;
	return 0;
}

/*
 * a accesses through rkey until the first failure; b renews (renew != NULL)
 * every LEASE_MS / 10 for RENEW_PERIODS periods, then never again.  The
 * deadline is the start of the last renewal that returned 0 (or t_leased)
 * + LEASE_MS: droce reads its clock (CLOCK_MONOTONIC, as fx_now) after
 * that, so the true deadline is no earlier.  Nothing here assumes the
 * renewals came on time: a stall of the test (or of the engine) past the
 * deadline lets the lease expire, correctly; a renewal then returns ETIME
 * and the checks hold against the last renewal that succeeded.
 *
 * The design's bounds (droce.h, DROCE_LEASE_TICK_US): no revocation
 * before the deadline; engine 0 tests the deadline at least once a tick
 * (after its round's receive burst), so a round that starts a tick past
 * the deadline revokes.  An access is a WRITE then a READ, the READ posted
 * after the WRITE completed: of the accesses that start a tick after the
 * deadline at most one succeeds (with a transport lcore its WRITE and READ
 * can be taken by the round that also revokes and the one just before
 * it), whatever the scheduling; the next one fails.
 */
static void
run_until_expiry(struct run *r, uint32_t rkey, int (*renew)(void *), void *obj,
		 double t_leased)
{
	double t_last = t_leased, t_end = t_leased + RENEW_PERIODS * LEASE_MS / 1e3;
	double t_access = fx_now(), t_ok[2] = { 0, 0 };	/* the last two successes' starts */
	double deadline, late, bound;
	uint32_t renewals = 0;
	uint64_t seq = 0;
	bool renewing = renew != NULL;

	memcpy(r->shadow, f.b.buf, REGION);
	while (access_once(r, rkey, seq++) == 0) {
		double now = fx_now();

		t_ok[0] = t_ok[1];
		t_ok[1] = t_access;
		if (renewing && now < t_end && now - t_last >= LEASE_MS / 10e3) {
			double t0 = fx_now();
			int rc = renew(obj);

			if (rc == 0) {
				t_last = t0;
				renewals++;
			} else {
				/* refused only once the deadline has passed */
				assert_int_equal(rc, ETIME);
				assert_true(fx_now() >= t_last + LEASE_MS / 1e3);
				renewing = false;
			}
		}
		assert_true(now - t_leased < 10.0);	/* it must end */
		t_access = fx_now();
	}
	deadline = t_last + LEASE_MS / 1e3;
	late = r->t_fail - deadline;
	bound = deadline + DROCE_LEASE_TICK_US / 1e6;
	printf("lease: %" PRIu64 " accesses ok, %u renewals, first failure %s %.3f ms after "
	       "the deadline (tick %.3f ms, max RTT %.3f ms, the failed access %.3f ms); "
	       "successes started more than a tick after it: %d\n",
	       r->ops, renewals, droce_wc_status_str(r->st), late * 1e3,
	       DROCE_LEASE_TICK_US / 1e3, r->rtt_max * 1e3, r->fail_dur * 1e3,
	       (t_ok[0] > bound) + (t_ok[1] > bound));
	assert_int_equal(r->st, DROCE_WC_REM_ACCESS_ERR);
	assert_true(late >= 0);
	assert_false(t_ok[0] > bound);
	/* the QP is in ERR now: further WRITEs are flushed, never executed */
	for (uint32_t i = 0; i < 4; i++, r->writes_after++)
		assert_int_equal(fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 1000 + i,
					      f.a.buf, CHUNK, (uintptr_t)f.b.buf, rkey),
				 DROCE_WC_WR_FLUSH_ERR);
	fx_spin(&f, 0.01);
	assert_memory_equal(f.b.buf, r->shadow, REGION);
}

/*
 * b's events: the expiry (naming obj), once, then the QP_ACCESS_ERR of
 * b's QP, whose responder NAKed the access (IBTA 11.6.3.2); then none.
 */
static void
assert_expiry_events(enum droce_event_type type, const void *obj)
{
	struct droce_async_event ev;

	fx_spin(&f, 0.002);
	assert_int_equal(droce_get_async_event(f.b.ctx, &ev), 0);
	assert_int_equal(ev.event_type, type);
	assert_ptr_equal(type == DROCE_EVENT_MR_LEASE_EXPIRED ?
			 (const void *)ev.element.mr : (const void *)ev.element.mw, obj);
	droce_ack_async_event(&ev);
	assert_int_equal(droce_get_async_event(f.b.ctx, &ev), 0);
	assert_int_equal(ev.event_type, DROCE_EVENT_QP_ACCESS_ERR);
	assert_ptr_equal(ev.element.qp, f.b.qp);
	droce_ack_async_event(&ev);
	assert_int_equal(droce_get_async_event(f.b.ctx, &ev), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fx_counter(&f.b, "lease_expired"), 1);
}

static int
renew_mr(void *mr)
{
	return droce_renew_mr(mr);
}

static int
renew_mw(void *mw)
{
	return droce_renew_mw(mw);
}

static void
test_mr_lease_renewed_then_expires(void **state)
{
	struct droce_lease_attr la;
	static struct run r;
	struct droce_mr *mr;
	struct droce_wc wc;
	double t0;

	(void)state;
	memset(&r, 0, sizeof(r));
	t0 = fx_now();
	mr = droce_reg_mr_lease(f.b.pd, f.b.buf, REGION, DROCE_ACCESS_LOCAL_WRITE |
				DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ,
				LEASE_MS);
	assert_non_null(mr);
	assert_int_equal(droce_query_mr_lease(mr, &la), 0);
	assert_int_equal(la.lease_ms, LEASE_MS);
	assert_false(la.expired);
	assert_true(la.remaining_us > 0 && la.remaining_us <= LEASE_MS * 1000);

	run_until_expiry(&r, mr->rkey, renew_mr, mr, t0);
	assert_expiry_events(DROCE_EVENT_MR_LEASE_EXPIRED, mr);
	assert_int_equal(droce_query_mr_lease(mr, &la), 0);
	assert_true(la.expired);
	assert_int_equal(la.remaining_us, 0);
	assert_int_equal(droce_renew_mr(mr), ETIME);
	assert_int_equal(droce_set_mr_lease(mr, LEASE_MS), ETIME);
	/* b's own use of the expired lkey fails too (a local protection error) */
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ 0 });
	assert_int_equal(fx_post(f.b.qp, DROCE_WR_RDMA_WRITE, 9, f.b.buf, CHUNK, mr->lkey,
				 (uintptr_t)f.a.buf, f.a.mr->rkey, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 9, DROCE_WC_RDMA_WRITE, DROCE_WC_LOC_PROT_ERR);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

/* A window's lease: the window dies, the region under it does not. */
static void
test_mw_lease_expires(void **state)
{
	struct droce_mw_bind b = {
		.wr_id = 7, .send_flags = DROCE_SEND_SIGNALED,
		.bind_info = { .mr = f.b.mr, .addr = (uintptr_t)f.b.buf, .length = REGION,
			       .mw_access_flags = DROCE_ACCESS_REMOTE_WRITE |
						  DROCE_ACCESS_REMOTE_READ },
	};
	struct droce_lease_attr la;
	static struct run r;
	struct droce_mw *mw = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_1);
	struct droce_wc wc;
	double t0;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_non_null(mw);
	assert_int_equal(droce_bind_mw(f.b.qp, mw, &b), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 7, DROCE_WC_BIND_MW, DROCE_WC_SUCCESS);
	t0 = fx_now();
	assert_int_equal(droce_set_mw_lease(mw, LEASE_MS), 0);

	run_until_expiry(&r, mw->rkey, renew_mw, mw, t0);
	assert_expiry_events(DROCE_EVENT_MW_LEASE_EXPIRED, mw);
	assert_int_equal(droce_query_mw_lease(mw, &la), 0);
	assert_true(la.expired);
	assert_int_equal(droce_renew_mw(mw), ETIME);
	/* the region keeps working; the window cannot be bound again */
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ 0 });
	assert_int_equal(fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 1, f.a.buf, CHUNK,
				      (uintptr_t)f.b.buf, f.b.mr->rkey), DROCE_WC_SUCCESS);
	assert_int_equal(droce_bind_mw(f.b.qp, mw, &b), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 7, DROCE_WC_BIND_MW, DROCE_WC_MW_BIND_ERR);
	assert_int_equal(droce_dealloc_mw(mw), 0);
}

/*
 * A leased region with a window bound: the window is unbound with the
 * region at expiry (its rkey dies too; dereg of a region with bound
 * windows would be refused, expiry is not), one event (the region's).
 */
static void
test_mr_lease_with_window(void **state)
{
	struct droce_mr *mr = droce_reg_mr(f.b.pd, f.b.buf, REGION,
					   DROCE_ACCESS_LOCAL_WRITE |
					   DROCE_ACCESS_REMOTE_WRITE |
					   DROCE_ACCESS_REMOTE_READ |
					   DROCE_ACCESS_MW_BIND);
	struct droce_mw *mw = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_1);
	struct droce_mw_bind b = {
		.wr_id = 8, .send_flags = DROCE_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)f.b.buf, .length = REGION,
			       .mw_access_flags = DROCE_ACCESS_REMOTE_WRITE |
						  DROCE_ACCESS_REMOTE_READ },
	};
	static struct run r;
	struct droce_wc wc;
	double t0;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_non_null(mr);
	assert_non_null(mw);
	assert_int_equal(droce_bind_mw(f.b.qp, mw, &b), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	fx_assert_wc(&wc, 8, DROCE_WC_BIND_MW, DROCE_WC_SUCCESS);
	assert_int_equal(droce_dereg_mr(mr), EBUSY);
	t0 = fx_now();
	assert_int_equal(droce_set_mr_lease(mr, LEASE_MS), 0);

	run_until_expiry(&r, mw->rkey, NULL, NULL, t0);
	assert_expiry_events(DROCE_EVENT_MR_LEASE_EXPIRED, mr);
	/* the region's own key is dead as well */
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ 0 });
	assert_int_equal(fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, 1, f.a.buf, CHUNK,
				      (uintptr_t)f.b.buf, mr->rkey),
			 DROCE_WC_REM_ACCESS_ERR);
	assert_memory_equal(f.b.buf, r.shadow, REGION);
	assert_int_equal(droce_dereg_mr(mr), 0);	/* windows unbound: no EBUSY */
	assert_int_equal(droce_dealloc_mw(mw), 0);
}

int
main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_mr_lease_renewed_then_expires),
		T(test_mw_lease_expires),
		T(test_mr_lease_with_window),
	};
	int failed;

	(void)argc;
	fx_eal_init_with_lcore(argv[0], TRANSPORT_LCORE);
	failed = cmocka_run_group_tests_name("lease_run_to_completion", tests, NULL, NULL);
	fx_set_transport_lcore(TRANSPORT_LCORE);
	failed += cmocka_run_group_tests_name("lease_transport_lcore", tests, NULL, NULL);
	return failed;
}
