/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQ/QP/AH/post/poll verbs against libibverbs' contract: argument
 * checks (NULL/errno from creators, positive errno from the rest, *bad_wr
 * on the first WR not posted), queue limits, CQ overrun, sq_sig_all, and
 * droce.h's enums and structs against rdma-core's <infiniband/verbs.h>
 * (values and layouts, so porting an ibverbs program is a rename).
 *
 * Choices where ibverbs leaves room, pinned here:
 *  - create_qp with an SRQ of another context fails with EINVAL;
 *  - a full CQ (overrun) keeps the completions it holds; once they are
 *    polled, poll_cq returns -1 with errno EOVERFLOW, and keeps doing so.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tp_fixture.h"
#include "vwire.h"

#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define HAVE_IBVERBS_H 1
#endif
#endif

#define BUF (1u << 20)

#define S(x) DROCE_QPS_##x
#define M(x) DROCE_QP_##x

static struct fx f;

/* ---- QPs made by a test (destroyed by teardown if a test fails) ---------- */

#define MAX_MADE 8
static struct droce_qp *made[MAX_MADE];

static void
track(struct droce_qp *qp)
{
	assert_non_null(qp);
	for (int i = 0; i < MAX_MADE; i++) {
		if (made[i] == NULL) {
			made[i] = qp;
			return;
		}
	}
	fail_msg("more than %d QPs alive in one test", MAX_MADE);
}

static void
qp_drop(struct droce_qp *qp)
{
	for (int i = 0; i < MAX_MADE; i++)
		if (made[i] == qp)
			made[i] = NULL;
	assert_int_equal(droce_destroy_qp(qp), 0);
}

static int
setup(void **state)
{
	(void)state;
	fx_open(&f, NULL, BUF);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	for (int i = 0; i < MAX_MADE; i++) {
		if (made[i] != NULL)
			droce_destroy_qp(made[i]);
		made[i] = NULL;
	}
	fx_close(&f);
	return 0;
}

static void
init_attr(struct droce_qp_init_attr *init, enum droce_qp_type t, struct droce_cq *cq)
{
	memset(init, 0, sizeof(*init));
	init->qp_type = t;
	init->send_cq = cq;
	init->recv_cq = cq;
	init->cap.max_send_wr = 16;
	init->cap.max_recv_wr = 16;
	init->cap.max_send_sge = 2;
	init->cap.max_recv_sge = 2;
	init->cap.max_inline_data = 32;
}

static struct droce_qp *
qp_new(struct fx_end *e, const struct droce_qp_init_attr *tmpl)
{
	struct droce_qp_init_attr init = *tmpl;
	struct droce_qp *qp = droce_create_qp(e->pd, &init);

	track(qp);
	return qp;
}

static void
modify_to(struct droce_qp *qp, enum droce_qp_state s, const uint8_t dgid[16],
	  uint32_t dqpn)
{
	struct droce_qp_attr a;
	int mask = M(STATE);
	bool ud = qp->qp_type == DROCE_QPT_UD, rc = qp->qp_type == DROCE_QPT_RC;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	switch (s) {
	case S(INIT):
		a.port_num = 1;
		a.qkey = 0x11111111;
		a.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
				    DROCE_ACCESS_REMOTE_ATOMIC;
		mask |= M(PKEY_INDEX) | M(PORT) | (ud ? M(QKEY) : M(ACCESS_FLAGS));
		break;
	case S(RTR):
		if (ud)
			break;
		a.path_mtu = DROCE_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0x1000;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
		mask |= M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN);
		if (rc)
			mask |= M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER);
		break;
	case S(RTS):
		a.sq_psn = 0x1000;
		a.timeout = 8;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= M(SQ_PSN);
		if (rc)
			mask |= M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC);
		break;
	default:
		break;
	}
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
}

/* Two QPs (a from ta, b from tb) connected RESET -> INIT -> RTR -> RTS. */
static void
pair(const struct droce_qp_init_attr *ta, const struct droce_qp_init_attr *tb,
     struct droce_qp **qa, struct droce_qp **qb)
{
	*qa = qp_new(&f.a, ta);
	*qb = qp_new(&f.b, tb);
	for (enum droce_qp_state s = S(INIT); s <= S(RTS); s++) {
		modify_to(*qa, s, f.b.gid, (*qb)->qp_num);
		modify_to(*qb, s, f.a.gid, (*qa)->qp_num);
	}
}

static void
write_wr(struct droce_send_wr *wr, struct droce_sge *sge, uint64_t id, uint32_t off,
	 uint32_t len, unsigned int flags)
{
	*sge = (struct droce_sge){ (uintptr_t)f.a.buf + off, len, f.a.mr->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = DROCE_WR_RDMA_WRITE;
	wr->send_flags = flags;
	wr->wr.rdma.remote_addr = (uintptr_t)f.b.buf + off;
	wr->wr.rdma.rkey = f.b.mr->rkey;
}

/* ---- completion queues ----------------------------------------------------- */

static void
test_create_cq_bad_cqe_bad_flow(void **state)
{
	static const int bad[] = { 0, -1, INT_MIN, DROCE_MAX_CQE + 1, INT_MAX };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(droce_create_cq(f.a.ctx, bad[i], NULL, NULL, 0));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_null(droce_create_cq(NULL, 16, NULL, NULL, 0));
	assert_int_equal(errno, EINVAL);
}

static void
test_create_cq_with_channel_bad_flow(void **state)
{
	struct droce_comp_channel *b_channel = droce_create_comp_channel(f.b.ctx);

	(void)state;
	/* a channel of another context; no completion vectors */
	assert_non_null(b_channel);
	errno = 0;
	assert_null(droce_create_cq(f.a.ctx, 16, NULL, b_channel, 0));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(b_channel->refcnt, 0);
	assert_int_equal(droce_destroy_comp_channel(b_channel), 0);
	errno = 0;
	assert_null(droce_create_cq(f.a.ctx, 16, NULL, NULL, 1));
	assert_int_equal(errno, EINVAL);
}

static void
test_create_cq_capacity_at_least_requested(void **state)
{
	static const int want[] = { 1, 2, 3, 100, 1000, 4097 };
	int cookie;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct droce_cq *cq = droce_create_cq(f.a.ctx, want[i], &cookie, NULL, 0);

		assert_non_null(cq);
		assert_true(cq->cqe >= want[i]);
		assert_ptr_equal(cq->context, f.a.ctx);
		assert_ptr_equal(cq->cq_context, &cookie);
		assert_null(cq->channel);
		/* an empty CQ polls 0 */
		{
			struct droce_wc wc;

			assert_int_equal(droce_poll_cq(cq, 1, &wc), 0);
		}
		assert_int_equal(droce_req_notify_cq(cq, 0), 0);
		assert_int_equal(droce_destroy_cq(cq), 0);
	}
}

static void
test_destroy_cq_in_use_bad_flow(void **state)
{
	struct droce_cq *scq = droce_create_cq(f.a.ctx, 16, NULL, NULL, 0);
	struct droce_cq *rcq = droce_create_cq(f.a.ctx, 16, NULL, NULL, 0);
	struct droce_qp_init_attr init;
	struct droce_qp *qp;

	(void)state;
	assert_non_null(scq);
	assert_non_null(rcq);
	init_attr(&init, DROCE_QPT_RC, scq);
	init.recv_cq = rcq;
	qp = qp_new(&f.a, &init);
	assert_int_equal(droce_destroy_cq(scq), EBUSY);
	assert_int_equal(droce_destroy_cq(rcq), EBUSY);
	/* both still work */
	{
		struct droce_wc wc;

		assert_int_equal(droce_poll_cq(scq, 1, &wc), 0);
		assert_int_equal(droce_poll_cq(rcq, 1, &wc), 0);
	}
	qp_drop(qp);
	assert_int_equal(droce_destroy_cq(scq), 0);
	assert_int_equal(droce_destroy_cq(rcq), 0);
	assert_int_equal(droce_destroy_cq(NULL), EINVAL);
}

static void
test_poll_cq_bad_args_bad_flow(void **state)
{
	struct droce_wc wc[2];

	(void)state;
	errno = 0;
	assert_int_equal(droce_poll_cq(f.a.cq, -1, wc), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(droce_poll_cq(f.a.cq, INT_MIN, wc), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(droce_poll_cq(NULL, 1, wc), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(droce_poll_cq(f.a.cq, 1, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_poll_cq(f.a.cq, 0, NULL), 0);
	assert_int_equal(droce_poll_cq(f.a.cq, 0, wc), 0);
}

/*
 * CQ overrun (IBTA 11.4.2.1, o11-?): completions beyond the capacity are
 * not silently lost: after the ones the CQ holds, poll_cq fails.
 */
static void
test_cq_overrun_reported_bad_flow(void **state)
{
	struct droce_cq *tiny = droce_create_cq(f.a.ctx, 1, NULL, NULL, 0);
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr[3], *bad = NULL;
	struct droce_sge sge[3];
	struct droce_qp *qa, *qb;
	struct droce_wc wc[4];
	uint64_t lost0;
	double end;

	(void)state;
	assert_non_null(tiny);
	assert_int_equal(tiny->cqe, 1);
	init_attr(&ia, DROCE_QPT_RC, tiny);
	ia.recv_cq = f.a.cq;
	init_attr(&ib, DROCE_QPT_RC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	lost0 = fx_counter(&f.a, "cq_overflow");
	for (int i = 0; i < 3; i++) {
		write_wr(&wr[i], &sge[i], (uint64_t)i, (uint32_t)i * 64, 64,
			 DROCE_SEND_SIGNALED);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	assert_int_equal(droce_post_send(qa, wr, &bad), 0);
	/* run both engines without draining the tiny CQ */
	end = fx_now() + 5;
	while (fx_counter(&f.a, "cq_overflow") - lost0 < 2 && fx_now() < end) {
		droce_progress(f.a.ctx);
		droce_progress(f.b.ctx);
	}
	assert_int_equal(fx_counter(&f.a, "cq_overflow") - lost0, 2);
	/* what the CQ holds comes out first ... */
	assert_int_equal(droce_poll_cq(tiny, 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 0);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	/* ... then the overrun is an error, every time */
	errno = 0;
	assert_int_equal(droce_poll_cq(tiny, 4, wc), -1);
	assert_int_equal(errno, EOVERFLOW);
	errno = 0;
	assert_int_equal(droce_poll_cq(tiny, 4, wc), -1);
	assert_int_equal(errno, EOVERFLOW);
	qp_drop(qa);
	qp_drop(qb);
	assert_int_equal(droce_destroy_cq(tiny), 0);
}

static void
test_wc_status_str_every_status(void **state)
{
	const char *seen[DROCE_WC_TM_RNDV_INCOMPLETE + 1];

	(void)state;
	for (int s = DROCE_WC_SUCCESS; s <= DROCE_WC_TM_RNDV_INCOMPLETE; s++) {
		const char *str = droce_wc_status_str((enum droce_wc_status)s);

		assert_non_null(str);
		assert_true(strlen(str) > 0);
		for (int j = 0; j < s; j++)
			if (strcmp(seen[j], str) == 0)
				fail_msg("statuses %d and %d share \"%s\"", j, s, str);
		seen[s] = str;
	}
	/* values outside the enum still give a printable string */
	assert_true(strlen(droce_wc_status_str(DROCE_WC_TM_RNDV_INCOMPLETE + 1)) > 0);
	assert_true(strlen(droce_wc_status_str((enum droce_wc_status)1000)) > 0);
	assert_true(strlen(droce_wc_status_str((enum droce_wc_status)-1)) > 0);
}

/* ---- queue pairs ------------------------------------------------------------- */

static void
expect_create_qp_fails(struct droce_pd *pd, struct droce_qp_init_attr *init, int err)
{
	errno = 0;
	assert_null(droce_create_qp(pd, init));
	assert_int_equal(errno, err);
}

static void
test_create_qp_bad_attrs_bad_flow(void **state)
{
	static const int bad_types[] = { 0, 1, 5, 8, 9, 10, 0xff, -1 };
	struct droce_qp_init_attr init;
	struct droce_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct droce_srq *other_srq = droce_create_srq(f.b.pd, &sa);
	struct droce_cq *other_cq;

	(void)state;
	assert_non_null(other_srq);
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		init_attr(&init, DROCE_QPT_RC, f.a.cq);
		init.qp_type = (enum droce_qp_type)bad_types[i];
		expect_create_qp_fails(f.a.pd, &init, EINVAL);
	}
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.srq = other_srq;
	expect_create_qp_fails(f.a.pd, &init, EINVAL);

#define CAP(field, v) do { init_attr(&init, DROCE_QPT_RC, f.a.cq); \
	init.cap.field = (v); expect_create_qp_fails(f.a.pd, &init, EINVAL); } while (0)
	CAP(max_send_wr, DROCE_MAX_QP_WR + 1);
	CAP(max_recv_wr, DROCE_MAX_QP_WR + 1);
	CAP(max_send_sge, DROCE_MAX_SGE + 1);
	CAP(max_recv_sge, DROCE_MAX_SGE + 1);
	CAP(max_inline_data, DROCE_MAX_INLINE_DATA + 1);
	CAP(max_send_wr, UINT32_MAX);
#undef CAP

	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.send_cq = NULL;
	expect_create_qp_fails(f.a.pd, &init, EINVAL);
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.recv_cq = NULL;
	expect_create_qp_fails(f.a.pd, &init, EINVAL);
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	expect_create_qp_fails(NULL, &init, EINVAL);
	expect_create_qp_fails(f.a.pd, NULL, EINVAL);

	/* a CQ of another context */
	other_cq = f.b.cq;
	init_attr(&init, DROCE_QPT_RC, other_cq);
	expect_create_qp_fails(f.a.pd, &init, EINVAL);
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.recv_cq = other_cq;
	expect_create_qp_fails(f.a.pd, &init, EINVAL);
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.send_cq = other_cq;
	expect_create_qp_fails(f.a.pd, &init, EINVAL);

	/* the largest legal capacities pass */
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	init.cap.max_send_wr = DROCE_MAX_QP_WR;
	init.cap.max_recv_wr = DROCE_MAX_QP_WR;
	init.cap.max_send_sge = DROCE_MAX_SGE;
	init.cap.max_recv_sge = DROCE_MAX_SGE;
	init.cap.max_inline_data = DROCE_MAX_INLINE_DATA;
	qp_drop(qp_new(&f.a, &init));
	/* and zero-sized queues too (a send-only or receive-only QP) */
	init_attr(&init, DROCE_QPT_UD, f.a.cq);
	init.cap.max_recv_wr = 0;
	init.cap.max_recv_sge = 0;
	qp_drop(qp_new(&f.a, &init));

	/* the failures left no reference behind: CQs and the PD can go */
	{
		struct droce_pd *pd = droce_alloc_pd(f.a.ctx);
		struct droce_cq *cq = droce_create_cq(f.a.ctx, 4, NULL, NULL, 0);

		assert_non_null(pd);
		assert_non_null(cq);
		init_attr(&init, DROCE_QPT_RC, cq);
		init.cap.max_send_sge = DROCE_MAX_SGE + 1;
		expect_create_qp_fails(pd, &init, EINVAL);
		init_attr(&init, DROCE_QPT_RC, cq);
		init.srq = other_srq;
		expect_create_qp_fails(pd, &init, EINVAL);
		assert_int_equal(droce_destroy_cq(cq), 0);
		assert_int_equal(droce_dealloc_pd(pd), 0);
	}
	assert_int_equal(droce_destroy_srq(other_srq), 0);	/* no QP kept it */
}

static void
test_dealloc_pd_with_qp_bad_flow(void **state)
{
	struct droce_pd *pd = droce_alloc_pd(f.a.ctx);
	struct droce_qp_init_attr init;
	struct droce_qp *qp;

	(void)state;
	assert_non_null(pd);
	init_attr(&init, DROCE_QPT_UC, f.a.cq);
	qp = droce_create_qp(pd, &init);
	track(qp);
	assert_ptr_equal(qp->pd, pd);
	assert_int_equal(droce_dealloc_pd(pd), EBUSY);
	qp_drop(qp);
	assert_int_equal(droce_dealloc_pd(pd), 0);
}

/* An AH keeps its PD alive too (ibv_dealloc_pd: EBUSY while AHs use it). */
static void
test_dealloc_pd_with_ah_bad_flow(void **state)
{
	struct droce_pd *pd = droce_alloc_pd(f.a.ctx);
	struct droce_ah_attr attr;
	struct droce_ah *ah;

	(void)state;
	assert_non_null(pd);
	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	memcpy(attr.grh.dgid.raw, f.b.gid, 16);
	ah = droce_create_ah(pd, &attr);
	assert_non_null(ah);
	assert_int_equal(droce_dealloc_pd(pd), EBUSY);
	assert_int_equal(droce_destroy_ah(ah), 0);
	/* a failed create_ah takes no reference */
	attr.is_global = 0;
	assert_null(droce_create_ah(pd, &attr));
	assert_int_equal(droce_dealloc_pd(pd), 0);
}

/* ---- post_send / post_recv ------------------------------------------------------ */

/* post_send is refused before RTS: EINVAL, *bad_wr = the first WR. */
static void
test_post_send_before_rts_bad_flow(void **state)
{
	static const enum droce_qp_type types[] = { DROCE_QPT_RC, DROCE_QPT_UC, DROCE_QPT_UD };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct droce_qp_init_attr init;
		struct droce_send_wr wr[2], *bad;
		struct droce_sge sge[2];
		struct droce_qp *qp;
		struct droce_wc wc;

		init_attr(&init, types[i], f.a.cq);
		qp = qp_new(&f.a, &init);
		for (enum droce_qp_state s = S(RESET); s <= S(RTR); s++) {
			if (s != S(RESET))
				modify_to(qp, s, f.b.gid, 0x20);
			for (int j = 0; j < 2; j++) {
				write_wr(&wr[j], &sge[j], (uint64_t)j, 0, 8, DROCE_SEND_SIGNALED);
				wr[j].opcode = DROCE_WR_SEND;
				wr[j].next = j == 0 ? &wr[1] : NULL;
			}
			bad = NULL;
			assert_int_equal(droce_post_send(qp, wr, &bad), EINVAL);
			assert_ptr_equal(bad, &wr[0]);
		}
		assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 0.05), 0);
		qp_drop(qp);
	}
	/* NULL arguments */
	{
		struct droce_send_wr *bad;
		struct droce_recv_wr *rbad;

		assert_int_equal(droce_post_send(NULL, NULL, &bad), EINVAL);
		assert_int_equal(droce_post_recv(NULL, NULL, &rbad), EINVAL);
	}
}

/* post_recv: refused in RESET; from INIT on, receives queue up. */
static void
test_post_recv_in_reset_bad_flow_and_in_init(void **state)
{
	struct droce_qp_init_attr init;
	struct droce_recv_wr rwr[3], *bad;
	struct droce_sge sge = { (uintptr_t)f.a.buf, 64, f.a.mr->lkey };
	struct droce_qp_attr a;
	struct droce_wc wc[4];
	struct droce_qp *qp;

	(void)state;
	init_attr(&init, DROCE_QPT_RC, f.a.cq);
	qp = qp_new(&f.a, &init);
	for (int i = 0; i < 3; i++)
		rwr[i] = (struct droce_recv_wr){ .wr_id = 40 + (uint64_t)i, .sg_list = &sge,
						 .num_sge = 1, .next = i < 2 ? &rwr[i + 1] : NULL };
	bad = NULL;
	assert_int_equal(droce_post_recv(qp, rwr, &bad), EINVAL);
	assert_ptr_equal(bad, &rwr[0]);
	modify_to(qp, S(INIT), NULL, 0);
	bad = NULL;
	assert_int_equal(droce_post_recv(qp, rwr, &bad), 0);
	assert_null(bad);
	/* they are there: ERR flushes them, in order */
	memset(&a, 0, sizeof(a));
	a.qp_state = S(ERR);
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE)), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 1), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wc[i].wr_id, 40 + i);
		assert_int_equal(wc[i].status, DROCE_WC_WR_FLUSH_ERR);
		assert_int_equal(wc[i].opcode, DROCE_WC_RECV);
		assert_int_equal(wc[i].qp_num, qp->qp_num);
	}
	qp_drop(qp);
}

/* In ERR, posting is allowed and what is posted completes as flushed. */
static void
test_post_in_error_state_flushes(void **state)
{
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr[2], *bad;
	struct droce_sge sge[2];
	struct droce_qp *qa, *qb;
	struct droce_qp_attr a = { .qp_state = S(ERR) };
	struct droce_wc wc[4];

	(void)state;
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	init_attr(&ib, DROCE_QPT_RC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	memset(f.b.buf, 0, 64);
	fx_fill(f.a.buf, 64, 1);
	/* the flush status is reported even for an unsignaled WR */
	write_wr(&wr[0], &sge[0], 1, 0, 32, 0);
	write_wr(&wr[1], &sge[1], 2, 32, 32, DROCE_SEND_SIGNALED);
	wr[0].next = &wr[1];
	bad = NULL;
	assert_int_equal(droce_post_send(qa, wr, &bad), 0);
	assert_int_equal(fx_post_recv(qa, 3, f.a.buf + 4096, 64, f.a.mr->lkey), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 1), 3);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].wr_id, 3);
	assert_int_equal(wc[2].status, DROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].opcode, DROCE_WC_RECV);
	for (int i = 0; i < 64; i++)
		assert_int_equal(f.b.buf[i], 0);
	qp_drop(qa);
	qp_drop(qb);
}

/*
 * A chain longer than the SQ: ENOMEM, *bad_wr = the first WR that did not
 * fit; the ones before it are posted and complete.  Same for the RQ.
 */
static void
test_queue_full_bad_flow(void **state)
{
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr[6], *bad;
	struct droce_recv_wr rwr[5], *rbad;
	struct droce_sge sge[6];
	struct droce_qp *qa, *qb;
	struct droce_wc wc[8];

	(void)state;
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	init_attr(&ib, DROCE_QPT_RC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	fx_fill(f.a.buf, 6 * 128, 21);
	memset(f.b.buf, 0, 6 * 128);
	for (int i = 0; i < 6; i++) {
		write_wr(&wr[i], &sge[i], 100 + (uint64_t)i, (uint32_t)i * 128, 128,
			 DROCE_SEND_SIGNALED);
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	assert_int_equal(droce_post_send(qa, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 5), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, 100 + i);
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
	}
	assert_memory_equal(f.b.buf, f.a.buf, 4 * 128);
	for (int i = 4 * 128; i < 6 * 128; i++)
		assert_int_equal(f.b.buf[i], 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 0.05), 0);
	/* the rest fits now */
	bad = NULL;
	assert_int_equal(droce_post_send(qa, &wr[4], &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 5), 2);
	assert_int_equal(wc[0].wr_id, 104);
	assert_int_equal(wc[1].wr_id, 105);
	assert_memory_equal(f.b.buf, f.a.buf, 6 * 128);

	for (int i = 0; i < 5; i++) {
		sge[i] = (struct droce_sge){ (uintptr_t)f.a.buf + 65536, 64, f.a.mr->lkey };
		rwr[i] = (struct droce_recv_wr){ .wr_id = 200 + (uint64_t)i, .sg_list = &sge[i],
						 .num_sge = 1, .next = i < 4 ? &rwr[i + 1] : NULL };
	}
	rbad = NULL;
	assert_int_equal(droce_post_recv(qa, rwr, &rbad), ENOMEM);
	assert_ptr_equal(rbad, &rwr[4]);
	qp_drop(qa);
	qp_drop(qb);

	/* num_sge above max_recv_sge (2): EINVAL at that WR, the one before posted */
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	pair(&ia, &ib, &qa, &qb);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct droce_sge){ (uintptr_t)f.a.buf + 65536, 64, f.a.mr->lkey };
	rwr[0] = (struct droce_recv_wr){ .wr_id = 300, .sg_list = sge, .num_sge = 1,
					 .next = &rwr[1] };
	rwr[1] = (struct droce_recv_wr){ .wr_id = 301, .sg_list = sge, .num_sge = 3 };
	rbad = NULL;
	assert_int_equal(droce_post_recv(qa, rwr, &rbad), EINVAL);
	assert_ptr_equal(rbad, &rwr[1]);
	rwr[1].num_sge = -1;
	rbad = NULL;
	assert_int_equal(droce_post_recv(qa, &rwr[1], &rbad), EINVAL);
	assert_ptr_equal(rbad, &rwr[1]);
	{
		struct droce_qp_attr a = { .qp_state = S(ERR) };

		assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	}
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 1), 1);
	assert_int_equal(wc[0].wr_id, 300);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	qp_drop(qa);
	qp_drop(qb);
}

/* Post one WR (or chain) that must be refused with EINVAL, *bad_wr = bad. */
static void
expect_post_einval(struct droce_qp *qp, struct droce_send_wr *wr,
		   struct droce_send_wr *bad_one)
{
	struct droce_send_wr *bad = NULL;
	int rc = droce_post_send(qp, wr, &bad);

	if (rc != EINVAL)
		fail_msg("opcode %d: post_send returned %d, expected EINVAL",
			 bad_one->opcode, rc);
	assert_ptr_equal(bad, bad_one);
}

static void
test_post_send_bad_wr_bad_flow(void **state)
{
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr[2];
	struct droce_sge sge[4];
	struct droce_qp *qa, *qb;
	struct droce_wc wc[4];
	static const int bad_ops[] = {
		DROCE_WR_TSO, DROCE_WR_DRIVER1, 12, 13, 16, 255, -1,
	};

	(void)state;
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	ia.cap.max_send_sge = 2;
	ia.cap.max_inline_data = 32;
	init_attr(&ib, DROCE_QPT_RC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);

	/* num_sge above max_send_sge: the WR before it is posted and completes */
	write_wr(&wr[0], &sge[0], 1, 0, 16, DROCE_SEND_SIGNALED);
	write_wr(&wr[1], &sge[1], 2, 16, 16, DROCE_SEND_SIGNALED);
	wr[0].next = &wr[1];
	sge[2] = sge[1];
	sge[3] = sge[1];
	wr[1].sg_list = &sge[1];
	wr[1].num_sge = 3;
	expect_post_einval(qa, wr, &wr[1]);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 2), 1);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	wr[1].num_sge = -1;
	expect_post_einval(qa, &wr[1], &wr[1]);
	wr[1].num_sge = 1;
	wr[1].sg_list = NULL;
	expect_post_einval(qa, &wr[1], &wr[1]);

	/* inline above max_inline_data (32); exactly 32 is fine */
	write_wr(&wr[0], &sge[0], 3, 0, 33, DROCE_SEND_SIGNALED | DROCE_SEND_INLINE);
	expect_post_einval(qa, wr, &wr[0]);
	write_wr(&wr[0], &sge[0], 4, 0, 20, DROCE_SEND_SIGNALED | DROCE_SEND_INLINE);
	write_wr(&wr[1], &sge[1], 4, 20, 13, DROCE_SEND_SIGNALED | DROCE_SEND_INLINE);
	wr[0].num_sge = 2;		/* 20 + 13 over two SGEs */
	sge[1] = (struct droce_sge){ (uintptr_t)f.a.buf + 20, 13, f.a.mr->lkey };
	expect_post_einval(qa, wr, &wr[0]);
	write_wr(&wr[0], &sge[0], 5, 0, 32, DROCE_SEND_SIGNALED | DROCE_SEND_INLINE);
	assert_int_equal(droce_post_send(qa, wr, &(struct droce_send_wr *){ NULL }), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 2), 1);
	assert_int_equal(wc[0].wr_id, 5);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);

	/* atomics take one 8-byte SGE */
	for (int op = DROCE_WR_ATOMIC_CMP_AND_SWP; op <= DROCE_WR_ATOMIC_FETCH_AND_ADD; op++) {
		static const uint32_t lens[] = { 0, 4, 7, 9, 16 };

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			write_wr(&wr[0], &sge[0], 6, 4096, lens[i], DROCE_SEND_SIGNALED);
			wr[0].opcode = (enum droce_wr_opcode)op;
			wr[0].wr.atomic.remote_addr = (uintptr_t)f.b.buf + 4096;
			wr[0].wr.atomic.rkey = f.b.mr->rkey;
			expect_post_einval(qa, wr, &wr[0]);
		}
		/* two SGEs of 4 bytes are 8 bytes, but not one buffer */
		write_wr(&wr[0], &sge[0], 6, 4096, 4, DROCE_SEND_SIGNALED);
		sge[1] = (struct droce_sge){ (uintptr_t)f.a.buf + 4100, 4, f.a.mr->lkey };
		wr[0].num_sge = 2;
		wr[0].opcode = (enum droce_wr_opcode)op;
		wr[0].wr.atomic.remote_addr = (uintptr_t)f.b.buf + 4096;
		wr[0].wr.atomic.rkey = f.b.mr->rkey;
		expect_post_einval(qa, wr, &wr[0]);
		wr[0].num_sge = 0;
		expect_post_einval(qa, wr, &wr[0]);
	}

	/* unsupported and unknown opcodes */
	for (size_t i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		write_wr(&wr[0], &sge[0], 7, 0, 8, DROCE_SEND_SIGNALED);
		wr[0].opcode = (enum droce_wr_opcode)bad_ops[i];
		expect_post_einval(qa, wr, &wr[0]);
	}
	/* nothing of the refused WRs completed */
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 0.1), 0);
	qp_drop(qa);
	qp_drop(qb);
}

/* UC has no READ, atomics or SEND with invalidate (IBTA 9.2: UC opcodes). */
static void
test_uc_read_and_atomics_bad_flow(void **state)
{
	static const enum droce_wr_opcode ops[] = {
		DROCE_WR_RDMA_READ, DROCE_WR_ATOMIC_CMP_AND_SWP,
		DROCE_WR_ATOMIC_FETCH_AND_ADD, DROCE_WR_SEND_WITH_INV,
	};
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr;
	struct droce_sge sge;
	struct droce_qp *qa, *qb;
	struct droce_wc wc;

	(void)state;
	init_attr(&ia, DROCE_QPT_UC, f.a.cq);
	init_attr(&ib, DROCE_QPT_UC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		write_wr(&wr, &sge, 1, 0, 8, DROCE_SEND_SIGNALED);
		wr.opcode = ops[i];
		if (ops[i] == DROCE_WR_ATOMIC_CMP_AND_SWP ||
		    ops[i] == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = (uintptr_t)f.b.buf;
			wr.wr.atomic.rkey = f.b.mr->rkey;
		}
		expect_post_einval(qa, &wr, &wr);
	}
	/* a WRITE is fine */
	fx_fill(f.a.buf, 64, 5);
	write_wr(&wr, &sge, 2, 0, 64, DROCE_SEND_SIGNALED);
	assert_int_equal(droce_post_send(qa, &wr, &(struct droce_send_wr *){ NULL }), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 2), 1);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf, f.a.buf, 64);
	qp_drop(qa);
	qp_drop(qb);
}

static struct droce_ah_attr
ah_attr_to_b(void)
{
	struct droce_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.sgid_index = 0;
	attr.grh.hop_limit = 64;
	memcpy(attr.grh.dgid.raw, f.b.gid, 16);
	return attr;
}

/* UD: a send needs an AH; no RDMA; AHs need a GRH (RoCE). */
static void
test_ud_send_without_ah_bad_flow(void **state)
{
	struct droce_qp_init_attr ia, ib;
	struct droce_ah_attr attr;
	struct droce_send_wr wr;
	struct droce_sge sge;
	struct droce_qp *qa, *qb;
	struct droce_ah *ah;
	struct droce_wc wc;

	(void)state;
	init_attr(&ia, DROCE_QPT_UD, f.a.cq);
	init_attr(&ib, DROCE_QPT_UD, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	attr = ah_attr_to_b();
	ah = droce_create_ah(f.a.pd, &attr);
	assert_non_null(ah);
	assert_ptr_equal(ah->pd, f.a.pd);
	assert_ptr_equal(ah->context, f.a.ctx);

	write_wr(&wr, &sge, 1, 0, 8, DROCE_SEND_SIGNALED);
	wr.opcode = DROCE_WR_SEND;
	wr.wr.ud.ah = NULL;
	wr.wr.ud.remote_qpn = qb->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	expect_post_einval(qa, &wr, &wr);
	for (int op = DROCE_WR_RDMA_WRITE; op <= DROCE_WR_ATOMIC_FETCH_AND_ADD; op++) {
		if (op == DROCE_WR_SEND || op == DROCE_WR_SEND_WITH_IMM)
			continue;
		write_wr(&wr, &sge, 1, 0, 8, DROCE_SEND_SIGNALED);
		wr.opcode = (enum droce_wr_opcode)op;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qb->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		expect_post_einval(qa, &wr, &wr);
	}
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 0.05), 0);
	assert_int_equal(droce_destroy_ah(ah), 0);
	qp_drop(qa);
	qp_drop(qb);
}

static void
test_create_ah_bad_attrs_bad_flow(void **state)
{
	struct droce_ah_attr attr;

	(void)state;
#define BAD_AH(stmt) do { attr = ah_attr_to_b(); stmt; errno = 0; \
	assert_null(droce_create_ah(f.a.pd, &attr)); assert_int_equal(errno, EINVAL); } while (0)
	BAD_AH(attr.is_global = 0);
	BAD_AH(attr.grh.sgid_index = 2);
	BAD_AH(attr.grh.sgid_index = 255);
	BAD_AH(attr.port_num = 0);		/* uverbs create_ah: rdma_is_port_valid() */
	BAD_AH(attr.port_num = 2);
#undef BAD_AH
	attr = ah_attr_to_b();
	errno = 0;
	assert_null(droce_create_ah(NULL, &attr));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_create_ah(f.a.pd, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_destroy_ah(NULL), EINVAL);
}

/* sq_sig_all = 1: every WR completes; 0: only the signaled ones. */
static void
test_sq_sig_all(void **state)
{
	struct droce_qp_init_attr ia, ib;
	struct droce_send_wr wr[2], *bad;
	struct droce_sge sge[2];
	struct droce_qp *qa, *qb;
	struct droce_wc wc[4];

	(void)state;
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	ia.sq_sig_all = 1;
	init_attr(&ib, DROCE_QPT_RC, f.b.cq);
	pair(&ia, &ib, &qa, &qb);
	fx_fill(f.a.buf, 512, 17);
	memset(f.b.buf, 0, 512);
	for (int i = 0; i < 2; i++) {
		write_wr(&wr[i], &sge[i], 10 + (uint64_t)i, (uint32_t)i * 256, 256, 0);
		wr[i].next = i == 0 ? &wr[1] : NULL;
	}
	assert_int_equal(droce_post_send(qa, wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 5), 2);
	assert_int_equal(wc[0].wr_id, 10);
	assert_int_equal(wc[1].wr_id, 11);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, DROCE_WC_RDMA_WRITE);
	assert_int_equal(wc[0].byte_len, 256);
	assert_memory_equal(f.b.buf, f.a.buf, 512);
	qp_drop(qa);
	qp_drop(qb);

	/* sq_sig_all = 0: the unsignaled WRITE runs but does not complete */
	init_attr(&ia, DROCE_QPT_RC, f.a.cq);
	pair(&ia, &ib, &qa, &qb);
	fx_fill(f.a.buf, 512, 18);
	memset(f.b.buf, 0, 512);
	write_wr(&wr[0], &sge[0], 20, 0, 256, 0);
	write_wr(&wr[1], &sge[1], 21, 256, 256, DROCE_SEND_SIGNALED);
	wr[0].next = &wr[1];
	assert_int_equal(droce_post_send(qa, wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 21);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 0.05), 0);
	assert_memory_equal(f.b.buf, f.a.buf, 512);
	qp_drop(qa);
	qp_drop(qb);
}

/* ---- droce.h against <infiniband/verbs.h> ------------------------------------- */

#ifdef HAVE_IBVERBS_H
#define SAME(d, i) assert_int_equal((long)(d), (long)(i))
#define SAME_OFF(ds, is, fld) \
	assert_int_equal(offsetof(struct ds, fld), offsetof(struct is, fld))
#define SAME_SIZE(ds, is) assert_int_equal(sizeof(struct ds), sizeof(struct is))

static void
test_abi_qp_enums(void **state)
{
	(void)state;
	SAME(DROCE_QPT_RC, IBV_QPT_RC);
	SAME(DROCE_QPT_UC, IBV_QPT_UC);
	SAME(DROCE_QPT_UD, IBV_QPT_UD);

	SAME(DROCE_QPS_RESET, IBV_QPS_RESET);
	SAME(DROCE_QPS_INIT, IBV_QPS_INIT);
	SAME(DROCE_QPS_RTR, IBV_QPS_RTR);
	SAME(DROCE_QPS_RTS, IBV_QPS_RTS);
	SAME(DROCE_QPS_SQD, IBV_QPS_SQD);
	SAME(DROCE_QPS_SQE, IBV_QPS_SQE);
	SAME(DROCE_QPS_ERR, IBV_QPS_ERR);
	SAME(DROCE_QPS_UNKNOWN, IBV_QPS_UNKNOWN);

	SAME(DROCE_QP_STATE, IBV_QP_STATE);
	SAME(DROCE_QP_CUR_STATE, IBV_QP_CUR_STATE);
	SAME(DROCE_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY);
	SAME(DROCE_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
	SAME(DROCE_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
	SAME(DROCE_QP_PORT, IBV_QP_PORT);
	SAME(DROCE_QP_QKEY, IBV_QP_QKEY);
	SAME(DROCE_QP_AV, IBV_QP_AV);
	SAME(DROCE_QP_PATH_MTU, IBV_QP_PATH_MTU);
	SAME(DROCE_QP_TIMEOUT, IBV_QP_TIMEOUT);
	SAME(DROCE_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
	SAME(DROCE_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
	SAME(DROCE_QP_RQ_PSN, IBV_QP_RQ_PSN);
	SAME(DROCE_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
	SAME(DROCE_QP_ALT_PATH, IBV_QP_ALT_PATH);
	SAME(DROCE_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
	SAME(DROCE_QP_SQ_PSN, IBV_QP_SQ_PSN);
	SAME(DROCE_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
	SAME(DROCE_QP_PATH_MIG_STATE, IBV_QP_PATH_MIG_STATE);
	SAME(DROCE_QP_CAP, IBV_QP_CAP);
	SAME(DROCE_QP_DEST_QPN, IBV_QP_DEST_QPN);
	SAME(DROCE_QP_RATE_LIMIT, IBV_QP_RATE_LIMIT);

	SAME(DROCE_MTU_256, IBV_MTU_256);
	SAME(DROCE_MTU_512, IBV_MTU_512);
	SAME(DROCE_MTU_1024, IBV_MTU_1024);
	SAME(DROCE_MTU_2048, IBV_MTU_2048);
	SAME(DROCE_MTU_4096, IBV_MTU_4096);
	SAME(DROCE_MIG_MIGRATED, IBV_MIG_MIGRATED);
	SAME(DROCE_MIG_REARM, IBV_MIG_REARM);
	SAME(DROCE_MIG_ARMED, IBV_MIG_ARMED);

	SAME(DROCE_SEND_FENCE, IBV_SEND_FENCE);
	SAME(DROCE_SEND_SIGNALED, IBV_SEND_SIGNALED);
	SAME(DROCE_SEND_SOLICITED, IBV_SEND_SOLICITED);
	SAME(DROCE_SEND_INLINE, IBV_SEND_INLINE);
	SAME(DROCE_SEND_IP_CSUM, IBV_SEND_IP_CSUM);
}

static void
test_abi_wc_enums(void **state)
{
	(void)state;
	SAME(DROCE_WC_SUCCESS, IBV_WC_SUCCESS);
	SAME(DROCE_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
	SAME(DROCE_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
	SAME(DROCE_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_EEC_OP_ERR);
	SAME(DROCE_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
	SAME(DROCE_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
	SAME(DROCE_WC_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
	SAME(DROCE_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
	SAME(DROCE_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
	SAME(DROCE_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
	SAME(DROCE_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
	SAME(DROCE_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
	SAME(DROCE_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
	SAME(DROCE_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
	SAME(DROCE_WC_LOC_RDD_VIOL_ERR, IBV_WC_LOC_RDD_VIOL_ERR);
	SAME(DROCE_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_INV_RD_REQ_ERR);
	SAME(DROCE_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
	SAME(DROCE_WC_INV_EECN_ERR, IBV_WC_INV_EECN_ERR);
	SAME(DROCE_WC_INV_EEC_STATE_ERR, IBV_WC_INV_EEC_STATE_ERR);
	SAME(DROCE_WC_FATAL_ERR, IBV_WC_FATAL_ERR);
	SAME(DROCE_WC_RESP_TIMEOUT_ERR, IBV_WC_RESP_TIMEOUT_ERR);
	SAME(DROCE_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
	SAME(DROCE_WC_TM_ERR, IBV_WC_TM_ERR);
	SAME(DROCE_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RNDV_INCOMPLETE);

	SAME(DROCE_WC_SEND, IBV_WC_SEND);
	SAME(DROCE_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
	SAME(DROCE_WC_RDMA_READ, IBV_WC_RDMA_READ);
	SAME(DROCE_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
	SAME(DROCE_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
	SAME(DROCE_WC_BIND_MW, IBV_WC_BIND_MW);
	SAME(DROCE_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
	SAME(DROCE_WC_TSO, IBV_WC_TSO);
	SAME(DROCE_WC_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE);
	SAME(DROCE_WC_RECV, IBV_WC_RECV);
	SAME(DROCE_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
	/* rdma-core 44 predates IBV_WC_FLUSH; its documented value is 8 */
	SAME(DROCE_WC_FLUSH, 8);

	SAME(DROCE_WC_GRH, IBV_WC_GRH);
	SAME(DROCE_WC_WITH_IMM, IBV_WC_WITH_IMM);
	SAME(DROCE_WC_IP_CSUM_OK, IBV_WC_IP_CSUM_OK);
	SAME(DROCE_WC_WITH_INV, IBV_WC_WITH_INV);
}

static void
test_abi_wc_sge_wr_structs(void **state)
{
	(void)state;
	SAME_SIZE(droce_sge, ibv_sge);
	SAME_OFF(droce_sge, ibv_sge, addr);
	SAME_OFF(droce_sge, ibv_sge, length);
	SAME_OFF(droce_sge, ibv_sge, lkey);

	SAME_SIZE(droce_wc, ibv_wc);
	SAME_OFF(droce_wc, ibv_wc, wr_id);
	SAME_OFF(droce_wc, ibv_wc, status);
	SAME_OFF(droce_wc, ibv_wc, opcode);
	SAME_OFF(droce_wc, ibv_wc, vendor_err);
	SAME_OFF(droce_wc, ibv_wc, byte_len);
	SAME_OFF(droce_wc, ibv_wc, imm_data);
	SAME_OFF(droce_wc, ibv_wc, invalidated_rkey);
	SAME_OFF(droce_wc, ibv_wc, qp_num);
	SAME_OFF(droce_wc, ibv_wc, src_qp);
	SAME_OFF(droce_wc, ibv_wc, wc_flags);
	SAME_OFF(droce_wc, ibv_wc, pkey_index);
	SAME_OFF(droce_wc, ibv_wc, slid);
	SAME_OFF(droce_wc, ibv_wc, sl);
	SAME_OFF(droce_wc, ibv_wc, dlid_path_bits);

	SAME_SIZE(droce_send_wr, ibv_send_wr);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr_id);
	SAME_OFF(droce_send_wr, ibv_send_wr, next);
	SAME_OFF(droce_send_wr, ibv_send_wr, sg_list);
	SAME_OFF(droce_send_wr, ibv_send_wr, num_sge);
	SAME_OFF(droce_send_wr, ibv_send_wr, opcode);
	SAME_OFF(droce_send_wr, ibv_send_wr, send_flags);
	SAME_OFF(droce_send_wr, ibv_send_wr, imm_data);
	SAME_OFF(droce_send_wr, ibv_send_wr, invalidate_rkey);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.rdma.remote_addr);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.rdma.rkey);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.atomic.remote_addr);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.atomic.compare_add);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.atomic.swap);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.atomic.rkey);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.ud.ah);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.ud.remote_qpn);
	SAME_OFF(droce_send_wr, ibv_send_wr, wr.ud.remote_qkey);
	SAME_OFF(droce_send_wr, ibv_send_wr, qp_type.xrc.remote_srqn);
	SAME_OFF(droce_send_wr, ibv_send_wr, bind_mw.mw);
	SAME_OFF(droce_send_wr, ibv_send_wr, bind_mw.rkey);
	SAME_OFF(droce_send_wr, ibv_send_wr, bind_mw.bind_info);

	SAME_SIZE(droce_recv_wr, ibv_recv_wr);
	SAME_OFF(droce_recv_wr, ibv_recv_wr, wr_id);
	SAME_OFF(droce_recv_wr, ibv_recv_wr, next);
	SAME_OFF(droce_recv_wr, ibv_recv_wr, sg_list);
	SAME_OFF(droce_recv_wr, ibv_recv_wr, num_sge);
}

static void
test_abi_qp_structs(void **state)
{
	(void)state;
	SAME_SIZE(droce_qp_cap, ibv_qp_cap);
	SAME_OFF(droce_qp_cap, ibv_qp_cap, max_send_wr);
	SAME_OFF(droce_qp_cap, ibv_qp_cap, max_recv_wr);
	SAME_OFF(droce_qp_cap, ibv_qp_cap, max_send_sge);
	SAME_OFF(droce_qp_cap, ibv_qp_cap, max_recv_sge);
	SAME_OFF(droce_qp_cap, ibv_qp_cap, max_inline_data);

	assert_int_equal(sizeof(union droce_gid), sizeof(union ibv_gid));
	assert_int_equal(offsetof(union droce_gid, global.interface_id),
			 offsetof(union ibv_gid, global.interface_id));
	SAME_SIZE(droce_global_route, ibv_global_route);
	SAME_OFF(droce_global_route, ibv_global_route, dgid);
	SAME_OFF(droce_global_route, ibv_global_route, flow_label);
	SAME_OFF(droce_global_route, ibv_global_route, sgid_index);
	SAME_OFF(droce_global_route, ibv_global_route, hop_limit);
	SAME_OFF(droce_global_route, ibv_global_route, traffic_class);
	SAME_SIZE(droce_ah_attr, ibv_ah_attr);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, grh);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, dlid);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, sl);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, src_path_bits);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, static_rate);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, is_global);
	SAME_OFF(droce_ah_attr, ibv_ah_attr, port_num);

	SAME_SIZE(droce_qp_attr, ibv_qp_attr);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, qp_state);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, cur_qp_state);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, path_mtu);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, path_mig_state);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, qkey);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, rq_psn);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, sq_psn);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, dest_qp_num);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, qp_access_flags);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, cap);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, ah_attr);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, alt_ah_attr);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, pkey_index);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, alt_pkey_index);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, en_sqd_async_notify);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, sq_draining);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, max_rd_atomic);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, max_dest_rd_atomic);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, min_rnr_timer);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, port_num);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, timeout);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, retry_cnt);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, rnr_retry);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, alt_port_num);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, alt_timeout);
	SAME_OFF(droce_qp_attr, ibv_qp_attr, rate_limit);

	SAME_SIZE(droce_qp_init_attr, ibv_qp_init_attr);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, qp_context);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, send_cq);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, recv_cq);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, srq);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, cap);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, qp_type);
	SAME_OFF(droce_qp_init_attr, ibv_qp_init_attr, sq_sig_all);

	/* the objects: droce's are prefixes of ibverbs' (no mutex/cond) */
	SAME_OFF(droce_cq, ibv_cq, context);
	SAME_OFF(droce_cq, ibv_cq, channel);
	SAME_OFF(droce_cq, ibv_cq, cq_context);
	SAME_OFF(droce_cq, ibv_cq, handle);
	SAME_OFF(droce_cq, ibv_cq, cqe);
	SAME_OFF(droce_qp, ibv_qp, context);
	SAME_OFF(droce_qp, ibv_qp, qp_context);
	SAME_OFF(droce_qp, ibv_qp, pd);
	SAME_OFF(droce_qp, ibv_qp, send_cq);
	SAME_OFF(droce_qp, ibv_qp, recv_cq);
	SAME_OFF(droce_qp, ibv_qp, srq);
	SAME_OFF(droce_qp, ibv_qp, handle);
	SAME_OFF(droce_qp, ibv_qp, qp_num);
	SAME_OFF(droce_qp, ibv_qp, state);
	SAME_OFF(droce_qp, ibv_qp, qp_type);
	SAME_SIZE(droce_ah, ibv_ah);
	SAME_OFF(droce_ah, ibv_ah, pd);
	SAME_OFF(droce_ah, ibv_ah, handle);
	SAME_OFF(droce_srq, ibv_srq, context);
	SAME_OFF(droce_srq, ibv_srq, srq_context);
	SAME_OFF(droce_srq, ibv_srq, pd);
	SAME_OFF(droce_srq, ibv_srq, handle);
	SAME_SIZE(droce_srq_attr, ibv_srq_attr);
	SAME_OFF(droce_srq_attr, ibv_srq_attr, max_wr);
	SAME_OFF(droce_srq_attr, ibv_srq_attr, max_sge);
	SAME_OFF(droce_srq_attr, ibv_srq_attr, srq_limit);
	SAME_SIZE(droce_srq_init_attr, ibv_srq_init_attr);
	SAME_OFF(droce_srq_init_attr, ibv_srq_init_attr, srq_context);
	SAME_OFF(droce_srq_init_attr, ibv_srq_init_attr, attr);
	assert_int_equal(DROCE_SRQ_MAX_WR, IBV_SRQ_MAX_WR);
	assert_int_equal(DROCE_SRQ_LIMIT, IBV_SRQ_LIMIT);
}
#else
static void
test_abi_skipped(void **state)
{
	(void)state;
	skip();		/* no <infiniband/verbs.h> on this system */
}
#endif

int
main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_create_cq_bad_cqe_bad_flow),
		T(test_create_cq_with_channel_bad_flow),
		T(test_create_cq_capacity_at_least_requested),
		T(test_destroy_cq_in_use_bad_flow),
		T(test_poll_cq_bad_args_bad_flow),
		T(test_cq_overrun_reported_bad_flow),
		T(test_wc_status_str_every_status),
		T(test_create_qp_bad_attrs_bad_flow),
		T(test_dealloc_pd_with_qp_bad_flow),
		T(test_dealloc_pd_with_ah_bad_flow),
		T(test_post_send_before_rts_bad_flow),
		T(test_post_recv_in_reset_bad_flow_and_in_init),
		T(test_post_in_error_state_flushes),
		T(test_queue_full_bad_flow),
		T(test_post_send_bad_wr_bad_flow),
		T(test_uc_read_and_atomics_bad_flow),
		T(test_ud_send_without_ah_bad_flow),
		T(test_create_ah_bad_attrs_bad_flow),
		T(test_sq_sig_all),
#ifdef HAVE_IBVERBS_H
		cmocka_unit_test(test_abi_qp_enums),
		cmocka_unit_test(test_abi_wc_enums),
		cmocka_unit_test(test_abi_wc_sge_wr_structs),
		cmocka_unit_test(test_abi_qp_structs),
#else
		cmocka_unit_test(test_abi_skipped),
#endif
	};
#undef T

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("verbs_api", tests, NULL, NULL);
}
