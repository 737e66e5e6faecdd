/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ready list (lib/transport/README.md "The ready list"): a round visits
 * only the QPs that have work, counted by qp_runs.  With NIDLE connected,
 * idle QP pairs, progress calls visit nothing; one busy QP among them is
 * visited exactly as often as it has work: its requester once per WRITE it
 * sends (an ACK that leaves nothing to send costs no visit), the responder
 * once per WRITE it acknowledges.  Run-to-completion, and with both engines on a dedicated
 * transport lcore (posting rings the QP's doorbell; the lcore's rounds
 * take only doorbelled QPs' posted heads: doorbells counts them, 0 for
 * idle QPs, one per post for the busy one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_lcore.h>

#include "tp_fixture.h"
#include "vwire.h"

#define NIDLE 1000
#define NPROGRESS 5000
#define NWRITE 16
#define BUF (64 * 1024)
#define TRANSPORT_LCORE 1

static struct fx f;
static bool dedicated;		/* engines on TRANSPORT_LCORE */
static struct droce_qp *qa[NIDLE], *qb[NIDLE];

/* NIDLE connected pairs and a busy one (the fixture's f.a.qp / f.b.qp). */
static void
connect_pairs(void)
{
	struct fx_qp_opts o = { .timeout = 14, .max_wr = 4 };

	for (unsigned int i = 0; i < NIDLE; i++) {
		fx_connect(&f, &o);
		qa[i] = f.a.qp;
		qb[i] = f.b.qp;
	}
	fx_connect(&f, &o);
	/* the modify_qp calls marked every QP ready once: let that pass */
	fx_spin(&f, 0.05);
}

/*
 * Until every QP's ready mark of its modify_qp was taken (qp_runs still
 * over 20 ms), for at most a second: the assertions then say what moved.
 */
static void
settle(void)
{
	uint64_t a, b;

	for (int i = 0; i < 50; i++) {
		a = fx_counter(&f.a, "qp_runs");
		b = fx_counter(&f.b, "qp_runs");
		fx_spin(&f, 0.02);
		if (a == fx_counter(&f.a, "qp_runs") && b == fx_counter(&f.b, "qp_runs"))
			return;
	}
}

/*
 * NPROGRESS progress calls of each engine; with a transport lcore (where
 * droce_progress does nothing) as long again as its rounds take, 0.2 s.
 */
static void
run_idle(void)
{
	for (unsigned int i = 0; i < NPROGRESS; i++) {
		droce_progress(f.a.ctx);
		droce_progress(f.b.ctx);
	}
	fx_spin(&f, 0.2);
}

/* qp_runs and doorbells of a and b. */
struct visits {
	uint64_t runs_a, runs_b, bells_a, bells_b;
};

static struct visits
visits_now(void)
{
	return (struct visits){
		.runs_a = fx_counter(&f.a, "qp_runs"),
		.runs_b = fx_counter(&f.b, "qp_runs"),
		.bells_a = fx_counter(&f.a, "doorbells"),
		.bells_b = fx_counter(&f.b, "doorbells"),
	};
}

/* What moved since v0, exactly. */
static void
assert_visits(const struct visits *v0, uint64_t runs_a, uint64_t runs_b,
	      uint64_t bells_a, uint64_t bells_b)
{
	struct visits v = visits_now();

	assert_int_equal(v.runs_a - v0->runs_a, runs_a);
	assert_int_equal(v.runs_b - v0->runs_b, runs_b);
	assert_int_equal(v.bells_a - v0->bells_a, bells_a);
	assert_int_equal(v.bells_b - v0->bells_b, bells_b);
}

static void
test_idle_qps_cost_nothing(void **state)
{
	struct visits v0;

	(void)state;
	connect_pairs();
	settle();
	v0 = visits_now();
	run_idle();
	assert_visits(&v0, 0, 0, 0, 0);
}

static void
test_busy_qp_visited_per_work(void **state)
{
	struct visits v0;

	(void)state;
	connect_pairs();
	settle();
	v0 = visits_now();
	fx_fill(f.a.buf, BUF, 3);
	memset(f.b.buf, 0, BUF);
	for (unsigned int i = 0; i < NWRITE; i++) {
		struct droce_wc wc;

		assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, i, f.a.buf + 64 * i,
					 64, f.a.mr->lkey, (uintptr_t)(f.b.buf + 64 * i),
					 f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
		assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
		fx_assert_wc(&wc, i, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS);
	}
	run_idle();
	assert_memory_equal(f.b.buf, f.a.buf, 64 * NWRITE);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	/*
	 * requester: the visit that sends the WRITE; responder: the visit
	 * that sends the ACK; a transport lcore took a's posted heads once
	 * per post, b's never
	 */
	assert_visits(&v0, NWRITE, NWRITE, dedicated ? NWRITE : 0, 0);
}

static int
setup(void **state)
{
	struct vwire_config wire = { 0 };

	(void)state;
	fx_open(&f, &wire, BUF);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < NIDLE; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	fx_close(&f);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_idle_qps_cost_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_qp_visited_per_work, setup,
						teardown),
	};

	int failed;

	(void)argc;
	fx_eal_init_with_lcore(argv[0], TRANSPORT_LCORE);
	failed = cmocka_run_group_tests_name("ready_run_to_completion", tests, NULL, NULL);
	fx_set_transport_lcore(TRANSPORT_LCORE);
	dedicated = true;
	failed += cmocka_run_group_tests_name("ready_transport_lcore", tests, NULL, NULL);
	fx_set_transport_lcore(-1);
	return fx_result(failed);
}
