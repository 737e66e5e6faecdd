/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_bind_mw as ibv_bind_mw: a type-1 bind is a work request on the
 * QP's send queue, executed in order with the QP's other WRs, completed
 * with DROCE_WC_BIND_MW when signalled, and failing in its CQE (QP to ERR)
 * for what only execution checks.  b binds windows on its MR through its
 * QP; a writes through them.  Run with the engines on this lcore, then on a
 * dedicated transport lcore.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_lcore.h>

#include "prot.h"
#include "tp_fixture.h"
#include "verbs_engine.h"

#define BUF (1u << 20)
#define TRANSPORT_LCORE 1
#define WIN_OFF 4096u
#define WIN_LEN 4096u

static struct fx f;
static struct droce_mw *mw;

static int
setup(void **state)
{
	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ 0 });
	memset(f.b.buf, 0x77, BUF);
	fx_fill(f.a.buf, BUF, 1);
	mw = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_1);
	assert_non_null(mw);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	assert_int_equal(droce_dealloc_mw(mw), 0);
	fx_close(&f);
	return 0;
}

static int
bind(struct droce_qp *qp, uint64_t wr_id, unsigned int flags, struct droce_mr *mr,
     uint64_t off, uint64_t len, unsigned int access)
{
	struct droce_mw_bind b = {
		.wr_id = wr_id, .send_flags = flags,
		.bind_info = { .mr = mr, .addr = (uintptr_t)(f.b.buf + off),
			       .length = len, .mw_access_flags = access },
	};

	return droce_bind_mw(qp, mw, &b);
}

/* a WRITEs 64 bytes at b's offset off with rkey; the completion status. */
static enum droce_wc_status
a_write(uint64_t wr_id, size_t off, uint32_t rkey)
{
	return fx_post_wait(&f, &f.a, DROCE_WR_RDMA_WRITE, wr_id, f.a.buf + off, 64,
			    (uintptr_t)(f.b.buf + off), rkey);
}

/* b WRITEs 64 bytes into a's buffer at off (a WR to order a bind behind). */
static void
b_post_write(uint64_t wr_id, size_t off, unsigned int flags)
{
	assert_int_equal(fx_post(f.b.qp, DROCE_WR_RDMA_WRITE, wr_id, f.b.buf + off, 64,
				 f.b.mr->lkey, (uintptr_t)(f.a.buf + off), f.a.mr->rkey,
				 flags), 0);
}

/*
 * A signalled bind completes once, as BIND_MW, after the WRITE posted
 * before it; its rkey (ibv_inc_rkey of the old one) then works for a's
 * WRITE inside the window; a rebind kills it.
 */
static void
test_signaled_bind_in_order(void **state)
{
	uint32_t r0 = mw->rkey, r1;
	struct droce_wc wc[3];

	(void)state;
	b_post_write(1, 0, DROCE_SEND_SIGNALED);
	assert_int_equal(bind(f.b.qp, 2, DROCE_SEND_SIGNALED, f.b.mr, WIN_OFF, WIN_LEN,
			      DROCE_ACCESS_REMOTE_WRITE), 0);
	r1 = mw->rkey;
	assert_int_equal(r1, droce_inc_rkey(r0));
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 3, 0.2), 2);
	fx_assert_wc(&wc[0], 1, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS);
	fx_assert_wc(&wc[1], 2, DROCE_WC_BIND_MW, DROCE_WC_SUCCESS);
	assert_int_equal(wc[1].qp_num, f.b.qp->qp_num);
	assert_int_equal(a_write(3, WIN_OFF + 128, r1), DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + WIN_OFF + 128, f.a.buf + WIN_OFF + 128, 64);
	/* rebind elsewhere: the first key is dead, the new one is the next */
	assert_int_equal(bind(f.b.qp, 4, DROCE_SEND_SIGNALED, f.b.mr, 2 * WIN_OFF,
			      WIN_LEN, DROCE_ACCESS_REMOTE_WRITE), 0);
	assert_int_equal(mw->rkey, droce_inc_rkey(r1));
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 1, 10), 1);
	fx_assert_wc(&wc[0], 4, DROCE_WC_BIND_MW, DROCE_WC_SUCCESS);
	assert_int_equal(a_write(5, 2 * WIN_OFF, mw->rkey), DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + 2 * WIN_OFF, f.a.buf + 2 * WIN_OFF, 64);
	assert_int_equal(a_write(6, WIN_OFF, r1), DROCE_WC_REM_ACCESS_ERR);
	fx_assert_bytes(f.b.buf + WIN_OFF, 64, 0x77);
}

/*
 * An unsignalled bind gives no CQE; the signalled WRITE posted after it
 * completing means the bind ran (SQ order), so a may use the window.
 */
static void
test_unsignaled_bind(void **state)
{
	struct droce_wc wc[2];

	(void)state;
	assert_int_equal(bind(f.b.qp, 1, 0, f.b.mr, WIN_OFF, WIN_LEN,
			      DROCE_ACCESS_REMOTE_WRITE), 0);
	b_post_write(2, 0, DROCE_SEND_SIGNALED);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 2, 0.2), 1);
	fx_assert_wc(&wc[0], 2, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS);
	assert_int_equal(a_write(3, WIN_OFF, mw->rkey), DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + WIN_OFF, f.a.buf + WIN_OFF, 64);
	assert_int_equal(fx_counter(&f.b, "cq_overflow"), 0);
}

/* A bind that fails on execution: its error CQE (signalled or not), the
 * WR behind it flushed, the QP in ERR (IBTA 10.8.3.x), the window's key dead. */
static void
expect_bind_error(struct droce_mr *mr, uint64_t off, uint64_t len, unsigned int access)
{
	struct droce_wc wc[3];
	void *host;

	assert_int_equal(bind(f.b.qp, 1, 0, mr, off, len, access), 0);
	b_post_write(2, 0, DROCE_SEND_SIGNALED);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 3, 0.2), 2);
	fx_assert_wc(&wc[0], 1, DROCE_WC_BIND_MW, DROCE_WC_MW_BIND_ERR);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_ERR);
	/* (b's QP no longer answers: ask b's key table) */
	assert_int_not_equal(prot_check_remote(verbs_prot(f.b.ctx), mw->rkey, f.b.pd->handle,
					       f.b.qp->qp_num, PROT_OP_READ,
					       (uintptr_t)(f.b.buf + off), 1, &host),
			     PROT_OK);
}

/* C10-75: the window must lie inside the MR. */
static void
test_bind_outside_mr(void **state)
{
	(void)state;
	expect_bind_error(f.b.mr, BUF - 64, 128, DROCE_ACCESS_REMOTE_WRITE);
}

/* C10-74: a writable window needs LOCAL_WRITE on the MR. */
static void
test_bind_rights_mr_lacks(void **state)
{
	struct droce_mr *ro = droce_reg_mr(f.b.pd, f.b.buf, BUF, DROCE_ACCESS_MW_BIND |
					   DROCE_ACCESS_REMOTE_READ);

	(void)state;
	assert_non_null(ro);
	expect_bind_error(ro, WIN_OFF, WIN_LEN, DROCE_ACCESS_REMOTE_WRITE);
	assert_int_equal(droce_dereg_mr(ro), 0);
}

/* What post time finds is an errno, with nothing posted and mw->rkey kept. */
static void
test_bind_post_errors(void **state)
{
	struct droce_pd *pd2 = droce_alloc_pd(f.b.ctx);
	struct droce_mr *other;
	struct droce_mw *mw2 = droce_alloc_mw(f.b.pd, DROCE_MW_TYPE_2);
	struct droce_mw_bind b = {
		.send_flags = DROCE_SEND_SIGNALED,
		.bind_info = { .mr = f.b.mr, .addr = (uintptr_t)f.b.buf, .length = 64,
			       .mw_access_flags = DROCE_ACCESS_REMOTE_READ },
	};
	uint32_t r0 = mw->rkey;
	struct droce_wc wc;

	(void)state;
	assert_non_null(pd2);
	assert_non_null(mw2);
	other = droce_reg_mr(pd2, f.b.buf, BUF, DROCE_ACCESS_MW_BIND);
	assert_non_null(other);
	assert_int_equal(droce_bind_mw(NULL, mw, &b), EINVAL);
	assert_int_equal(droce_bind_mw(f.b.qp, mw2, &b), EINVAL);	/* type 2 */
	assert_int_equal(droce_bind_mw(f.b.qp, NULL, &b), EINVAL);
	assert_int_equal(droce_bind_mw(f.b.qp, mw, NULL), EINVAL);
	assert_int_equal(droce_bind_mw(f.a.qp, mw, &b), EINVAL);	/* other context */
	b.bind_info.mr = other;
	assert_int_equal(droce_bind_mw(f.b.qp, mw, &b), EPERM);	/* MR in another PD */
	b.bind_info.mr = NULL;
	assert_int_equal(droce_bind_mw(f.b.qp, mw, &b), EINVAL);
	assert_int_equal(mw->rkey, r0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 0.05), 0);
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_RTS);
	assert_int_equal(droce_dereg_mr(other), 0);
	assert_int_equal(droce_dealloc_pd(pd2), 0);
	assert_int_equal(droce_dealloc_mw(mw2), 0);
}

int
main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_signaled_bind_in_order),
		T(test_unsignaled_bind),
		T(test_bind_outside_mr),
		T(test_bind_rights_mr_lacks),
		T(test_bind_post_errors),
	};
	int failed;

	(void)argc;
	fx_eal_init_with_lcore(argv[0], TRANSPORT_LCORE);
	failed = cmocka_run_group_tests_name("mw_bind_run_to_completion", tests, NULL, NULL);
	fx_set_transport_lcore(TRANSPORT_LCORE);
	failed += cmocka_run_group_tests_name("mw_bind_transport_lcore", tests, NULL, NULL);
	return failed;
}
