/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two transport engines per device running at the same time on two CPUs
 * (EAL "--lcores 0@0,1@0,2@1": engines 0 on lcore 1, engines 1 on lcore
 * 2, which has CPU 1 to itself; the test on the main lcore shares CPU 0
 * with lcore 1), over the virtual wire.
 *
 * What is counted where a check runs must add up exactly: b's R_Key
 * checks (lib/protection's status counted by the engine that ran them,
 * prot_remote_<status>) equal the WRITEs b executed, over QPs of both
 * engines at once, and the bad-R_Key WRITEs, one per QP.
 *
 * A QP's control verbs run on its own engine only: with engine 1 held
 * inside a command (a test function run through tp_engine_call that
 * spins until released), create/modify/query/destroy of QPs of engine 0
 * complete; nothing waits for engine 1.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "prot.h"
#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define NQP 8
#define BUF (1u << 20)
#define SLOT 64u		/* bytes per WRITE */
#define BATCH 64		/* WRITEs per QP in flight */
#define ROUNDS 60		/* batches per QP */
#define T_OUT 60.0
#define T_CONTROL 5.0		/* seconds a control verb may take here */

static uint64_t
remote_checks(struct fx_end *e, enum prot_status st)
{
	return tp_dev_prot_counter(verbs_tp(e->ctx), true, st);
}

static void
connect_pairs(struct fx *f, struct droce_qp **a, struct droce_qp **b)
{
	unsigned int on_engine[2] = { 0, 0 };

	for (unsigned int q = 0; q < NQP; q++) {
		/* timeout 14 (67 ms): the main lcore shares lcore 1's CPU */
		fx_connect(f, &(struct fx_qp_opts){ .max_wr = BATCH, .timeout = 14 });
		a[q] = f->a.qp;
		b[q] = f->b.qp;
		on_engine[b[q]->qp_num % 2]++;
		f->a.qp = f->b.qp = NULL;	/* destroyed here, not by fx_close */
	}
	assert_int_equal(on_engine[0], NQP / 2);
	assert_int_equal(on_engine[1], NQP / 2);
}

/* BATCH WRITEs on every QP at once, then all their completions. */
static void
write_batch(struct fx *f, struct droce_qp **a, unsigned int round)
{
	struct droce_wc wc[NQP * BATCH];

	for (unsigned int q = 0; q < NQP; q++) {
		uint8_t *src = f->a.buf + q * BATCH * SLOT;
		uintptr_t dst = (uintptr_t)(f->b.buf + q * BATCH * SLOT);

		for (unsigned int i = 0; i < BATCH; i++)
			assert_int_equal(fx_post(a[q], DROCE_WR_RDMA_WRITE,
						 (uint64_t)round << 32 | q << 16 | i,
						 src + i * SLOT, SLOT, f->a.mr->lkey,
						 dst + i * SLOT, f->b.mr->rkey,
						 DROCE_SEND_SIGNALED), 0);
	}
	assert_int_equal(fx_poll(f, f->a.cq, wc, NQP * BATCH, T_OUT), NQP * BATCH);
	for (unsigned int i = 0; i < NQP * BATCH; i++)
		if (wc[i].status != DROCE_WC_SUCCESS)
			fail_msg("wr %llx: %s", (unsigned long long)wc[i].wr_id,
				 droce_wc_status_str(wc[i].status));
}

static void
test_prot_counts_exact(void **state)
{
	struct droce_qp *a[NQP], *b[NQP];
	struct droce_wc wc[NQP];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	connect_pairs(&f, a, b);
	fx_fill(f.a.buf, NQP * BATCH * SLOT, 7);
	for (unsigned int r = 0; r < ROUNDS; r++)
		write_batch(&f, a, r);
	assert_memory_equal(f.b.buf, f.a.buf, NQP * BATCH * SLOT);
	/* one R_Key check per WRITE_ONLY executed; a duplicate is not
	 * executed again, so retransmissions add none */
	assert_int_equal(remote_checks(&f.b, PROT_OK), (uint64_t)NQP * BATCH * ROUNDS);
	assert_int_equal(fx_counter(&f.b, "rdma_recvs"), (uint64_t)NQP * BATCH * ROUNDS);
	assert_int_equal(remote_checks(&f.b, PROT_BAD_KEY), 0);
	assert_int_equal(remote_checks(&f.a, PROT_OK), 0);

	/* a stale variant of b's R_Key on every QP at once: NAK, QP to ERR */
	for (unsigned int q = 0; q < NQP; q++)
		assert_int_equal(fx_post(a[q], DROCE_WR_RDMA_WRITE, q, f.a.buf, SLOT,
					 f.a.mr->lkey, (uintptr_t)f.b.buf,
					 f.b.mr->rkey ^ 0x80, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, NQP, T_OUT), NQP);
	for (unsigned int q = 0; q < NQP; q++)
		assert_int_equal(wc[q].status, DROCE_WC_REM_ACCESS_ERR);
	assert_int_equal(remote_checks(&f.b, PROT_BAD_KEY), NQP);
	assert_int_equal(remote_checks(&f.b, PROT_OK), (uint64_t)NQP * BATCH * ROUNDS);

	for (unsigned int q = 0; q < NQP; q++) {
		assert_int_equal(droce_destroy_qp(a[q]), 0);
		assert_int_equal(droce_destroy_qp(b[q]), 0);
	}
	fx_close(&f);
}

/* ---- control verbs on the owning engine only ------------------------------------ */

struct hold {
	struct tp_engine *eng;
	uint32_t entered;	/* atomic: the command runs on the engine */
	uint32_t release;	/* atomic: it may return */
};

/* A command that keeps its engine busy until released. */
static int
hold_fn(void *arg)
{
	struct hold *h = arg;

	__atomic_store_n(&h->entered, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->release, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	return 0;
}

static void *
hold_thread(void *arg)
{
	struct hold *h = arg;

	(void)tp_engine_call(h->eng, hold_fn, h);
	return NULL;
}

struct verbs_run {
	struct fx_end *e;
	struct droce_qp *qp;	/* of engine 0, in RTS */
	uint32_t new_qpn;
	int modify_rc;
	int query_rc;
	int destroy_rc;
	uint32_t done;		/* atomic */
};

/* modify, query, create and destroy on engine 0, from another thread. */
static void *
verbs_thread(void *arg)
{
	struct verbs_run *v = arg;
	struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };
	struct droce_qp_init_attr init = {
		.send_cq = v->e->cq, .recv_cq = v->e->cq, .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp *qp;

	v->modify_rc = droce_modify_qp(v->qp, &attr, DROCE_QP_STATE);
	v->query_rc = droce_query_qp(v->qp, &attr, DROCE_QP_STATE, &init);
	qp = droce_create_qp(v->e->pd, &init);
	v->new_qpn = qp != NULL ? qp->qp_num : 0;
	v->destroy_rc = qp != NULL ? droce_destroy_qp(qp) : -1;
	__atomic_store_n(&v->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_control_on_owner_only(void **state)
{
	struct droce_qp_init_attr init = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_qp *a[2], *b[2], *extra;
	struct hold h = { 0 };
	struct verbs_run v = { 0 };
	pthread_t th, tv;
	double end;
	bool done;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	for (unsigned int q = 0; q < 2; q++) {
		fx_connect(&f, &(struct fx_qp_opts){ .max_wr = 4, .timeout = 14 });
		a[q] = f.a.qp;
		b[q] = f.b.qp;
		f.a.qp = f.b.qp = NULL;
	}
	/* a: one QP on each engine, and one more on engine 1, so that a new
	 * QP goes to engine 0 (the least loaded) */
	init.send_cq = init.recv_cq = f.a.cq;
	extra = droce_create_qp(f.a.pd, &init);
	assert_non_null(extra);
	assert_int_equal(extra->qp_num % 2, 1);
	v.e = &f.a;
	v.qp = a[0]->qp_num % 2 == 0 ? a[0] : a[1];

	h.eng = tp_dev_engine(verbs_tp(f.a.ctx), 1);
	assert_non_null(h.eng);
	assert_int_equal(pthread_create(&th, NULL, hold_thread, &h), 0);
	while (__atomic_load_n(&h.entered, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	assert_int_equal(pthread_create(&tv, NULL, verbs_thread, &v), 0);
	end = fx_now() + T_CONTROL;
	while (!(done = __atomic_load_n(&v.done, __ATOMIC_ACQUIRE)) && fx_now() < end)
		rte_pause();
	/* release engine 1 either way, so that the test can end */
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(pthread_join(tv, NULL), 0);
	if (!done)
		fail_msg("control verbs on engine 0 waited for engine 1 (> %.0f s)",
			 T_CONTROL);
	assert_int_equal(v.modify_rc, 0);
	assert_int_equal(v.query_rc, 0);
	assert_int_equal(fx_qp_state(v.qp), DROCE_QPS_ERR);
	assert_int_not_equal(v.new_qpn, 0);
	assert_int_equal(v.new_qpn % 2, 0);
	assert_int_equal(v.destroy_rc, 0);

	assert_int_equal(droce_destroy_qp(extra), 0);
	for (unsigned int q = 0; q < 2; q++) {
		assert_int_equal(droce_destroy_qp(a[q]), 0);
		assert_int_equal(droce_destroy_qp(b[q]), 0);
	}
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	static const unsigned int lcores[2] = { 1, 2 };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prot_counts_exact),
		cmocka_unit_test(test_control_on_owner_only),
	};

	(void)argc;
	fx_eal_init_lcores(argv[0], "0@0,1@0,2@1");
	if (!rte_lcore_is_enabled(1) || !rte_lcore_is_enabled(2)) {
		fprintf(stderr, "lcores 1 and 2 not available\n");
		return 1;
	}
	fx_set_transport_lcores(lcores, 2);
	printf("# engines 0 on lcore 1 (CPU 0), engines 1 on lcore 2 (CPU 1)\n");
	return fx_result(cmocka_run_group_tests_name("lcores_engines", tests, NULL, NULL));
}
