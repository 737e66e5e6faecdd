/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The modify_qp state machine against the kernel's ib_modify_qp_is_ok()
 * table (IBTA 1.4 vol 1 10.3.1, table 91), for RC, UC and UD QPs: every
 * state pair, every required and every optional attribute, attribute
 * values, cur_qp_state, RESET (queues emptied without completions, the QP
 * usable again) and the init attributes query_qp reports.
 *
 * The tables below are written from the kernel's drivers/infiniband/core/
 * verbs.c qp_state_table, not from lib/transport, so they are an
 * independent oracle.  Notable rules they encode:
 *  - RESET -> ERR is not a valid transition (the kernel table has no such
 *    entry: a QP leaves RESET only for INIT or RESET);
 *  - transitions to RESET and ERR take no attribute but DROCE_QP_STATE;
 *  - DROCE_QP_CUR_STATE is only accepted where the table lists it (from
 *    RTR, RTS, SQD, SQE), and must then match the current state;
 *  - SQE cannot be entered by modify_qp, and RC never enters it at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tp_fixture.h"
#include "vwire.h"

#define BUF (1u << 20)
#define QKEY 0x11111111u

#define S(x) DROCE_QPS_##x
#define M(x) DROCE_QP_##x

static struct fx f;

/* ---- QPs made by a test (destroyed by teardown if a test fails) ---------- */

#define MAX_MADE 16
static struct droce_qp *made[MAX_MADE];

static struct droce_qp *
qp_create_on(struct fx_end *e, enum droce_qp_type type)
{
	struct droce_qp_init_attr init;
	struct droce_qp *qp;

	memset(&init, 0, sizeof(init));
	init.qp_type = type;
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 2;
	init.cap.max_inline_data = 64;
	qp = droce_create_qp(e->pd, &init);
	assert_non_null(qp);
	for (int i = 0; i < MAX_MADE; i++) {
		if (made[i] == NULL) {
			made[i] = qp;
			return qp;
		}
	}
	fail_msg("more than %d QPs alive in one test", MAX_MADE);
	return NULL;
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

/* ---- the oracle: ib_modify_qp_is_ok's table for UD, UC and RC ------------- */

static bool
valid_pair(enum droce_qp_state cur, enum droce_qp_state next)
{
	switch (next) {
	case S(RESET):
		return true;
	case S(ERR):
		return cur != S(RESET);
	case S(INIT):
		return cur == S(RESET) || cur == S(INIT);
	case S(RTR):
		return cur == S(INIT);
	case S(RTS):
		return cur == S(RTR) || cur == S(RTS) || cur == S(SQD) || cur == S(SQE);
	case S(SQD):
		return cur == S(RTS) || cur == S(SQD);
	default:
		return false;		/* SQE: entered on errors only, never by modify */
	}
}

static int
required(enum droce_qp_type t, enum droce_qp_state cur, enum droce_qp_state next)
{
	if (cur == S(RESET) && next == S(INIT))
		return M(PKEY_INDEX) | M(PORT) | (t == DROCE_QPT_UD ? M(QKEY) : M(ACCESS_FLAGS));
	if (cur == S(INIT) && next == S(RTR)) {
		if (t == DROCE_QPT_UD)
			return 0;
		return M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
		       (t == DROCE_QPT_RC ? M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER) : 0);
	}
	if (cur == S(RTR) && next == S(RTS)) {
		if (t != DROCE_QPT_RC)
			return M(SQ_PSN);
		return M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(SQ_PSN) |
		       M(MAX_QP_RD_ATOMIC);
	}
	return 0;
}

static int
optional(enum droce_qp_type t, enum droce_qp_state cur, enum droce_qp_state next)
{
	bool ud = t == DROCE_QPT_UD, rc = t == DROCE_QPT_RC;

	if (cur == S(INIT) && next == S(INIT))
		return M(PKEY_INDEX) | M(PORT) | (ud ? M(QKEY) : M(ACCESS_FLAGS));
	if (cur == S(INIT) && next == S(RTR))
		return ud ? M(PKEY_INDEX) | M(QKEY) :
			    M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX);
	if ((cur == S(RTR) || cur == S(RTS) || cur == S(SQD)) && next == S(RTS))
		return ud ? M(CUR_STATE) | M(QKEY) :
			    M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
			    M(PATH_MIG_STATE) | (rc ? M(MIN_RNR_TIMER) : 0);
	if (cur == S(RTS) && next == S(SQD))
		return M(EN_SQD_ASYNC_NOTIFY);
	if (cur == S(SQD) && next == S(SQD)) {
		if (ud)
			return M(PKEY_INDEX) | M(QKEY);
		if (!rc)
			return M(AV) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) |
			       M(PATH_MIG_STATE);
		return M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
		       M(MAX_QP_RD_ATOMIC) | M(MAX_DEST_RD_ATOMIC) | M(ALT_PATH) |
		       M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(MIN_RNR_TIMER) |
		       M(PATH_MIG_STATE);
	}
	return 0;
}

/* ---- attribute values ------------------------------------------------------ */

/*
 * Valid values for every attribute; variant 0 and 1 differ in every field
 * that can differ, so a query shows which set was applied.
 */
static void
fill(struct droce_qp_attr *a, enum droce_qp_state cur, enum droce_qp_state next,
     int v)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = next;
	a->cur_qp_state = cur;
	a->pkey_index = 0;
	a->port_num = 1;
	a->qkey = v ? 0x22222222u : QKEY;
	a->qp_access_flags = v ? DROCE_ACCESS_REMOTE_READ :
				 DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC;
	a->path_mtu = v ? DROCE_MTU_2048 : DROCE_MTU_1024;
	a->path_mig_state = v ? DROCE_MIG_REARM : DROCE_MIG_MIGRATED;
	a->dest_qp_num = v ? 0xabcdef : 0x123;
	a->rq_psn = v ? 0xfffffe : 0x123456;
	a->sq_psn = v ? 0x000001 : 0x654321;
	a->max_dest_rd_atomic = v ? 16 : 4;
	a->max_rd_atomic = v ? 1 : 8;
	a->min_rnr_timer = v ? 31 : 12;
	a->timeout = v ? 31 : 14;
	a->retry_cnt = v ? 1 : 6;
	a->rnr_retry = v ? 7 : 5;
	a->en_sqd_async_notify = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_index = 0;
	a->ah_attr.grh.hop_limit = v ? 32 : 64;
	a->ah_attr.grh.traffic_class = v ? 0x20 : 0;
	memcpy(a->ah_attr.grh.dgid.raw, f.b.gid, 16);
}

static enum droce_qp_state
qp_state_of(struct droce_qp *qp)
{
	struct droce_qp_attr q;
	struct droce_qp_init_attr init;

	assert_int_equal(droce_query_qp(qp, &q, M(STATE), &init), 0);
	assert_int_equal(q.cur_qp_state, q.qp_state);
	assert_int_equal(qp->state, q.qp_state);	/* ibv_qp.state follows */
	return q.qp_state;
}

/* query_qp shows every attribute of mask as a holds it. */
static void
assert_applied(struct droce_qp *qp, const struct droce_qp_attr *a, int mask)
{
	struct droce_qp_attr q;
	struct droce_qp_init_attr init;

	assert_int_equal(droce_query_qp(qp, &q, mask, &init), 0);
	if (mask & M(STATE))
		assert_int_equal(q.qp_state, a->qp_state);
	if (mask & M(ACCESS_FLAGS))
		assert_int_equal(q.qp_access_flags, a->qp_access_flags);
	if (mask & M(PKEY_INDEX))
		assert_int_equal(q.pkey_index, a->pkey_index);
	if (mask & M(PORT))
		assert_int_equal(q.port_num, a->port_num);
	if (mask & M(QKEY))
		assert_int_equal(q.qkey, a->qkey);
	if (mask & M(AV)) {
		assert_int_equal(q.ah_attr.is_global, 1);
		assert_int_equal(q.ah_attr.grh.sgid_index, a->ah_attr.grh.sgid_index);
		assert_int_equal(q.ah_attr.grh.hop_limit, a->ah_attr.grh.hop_limit);
		assert_int_equal(q.ah_attr.grh.traffic_class, a->ah_attr.grh.traffic_class);
		assert_memory_equal(q.ah_attr.grh.dgid.raw, a->ah_attr.grh.dgid.raw, 16);
	}
	if (mask & M(PATH_MTU))
		assert_int_equal(q.path_mtu, a->path_mtu);
	if (mask & M(TIMEOUT))
		assert_int_equal(q.timeout, a->timeout);
	if (mask & M(RETRY_CNT))
		assert_int_equal(q.retry_cnt, a->retry_cnt);
	if (mask & M(RNR_RETRY))
		assert_int_equal(q.rnr_retry, a->rnr_retry);
	if (mask & M(RQ_PSN))
		assert_int_equal(q.rq_psn, a->rq_psn);
	if (mask & M(SQ_PSN))
		assert_int_equal(q.sq_psn, a->sq_psn);
	if (mask & M(MAX_QP_RD_ATOMIC))
		assert_int_equal(q.max_rd_atomic, a->max_rd_atomic);
	if (mask & M(MAX_DEST_RD_ATOMIC))
		assert_int_equal(q.max_dest_rd_atomic, a->max_dest_rd_atomic);
	if (mask & M(MIN_RNR_TIMER))
		assert_int_equal(q.min_rnr_timer, a->min_rnr_timer);
	if (mask & M(DEST_QPN))
		assert_int_equal(q.dest_qp_num, a->dest_qp_num);
	if (mask & M(PATH_MIG_STATE))
		assert_int_equal(q.path_mig_state, a->path_mig_state);
	if (mask & M(EN_SQD_ASYNC_NOTIFY))
		assert_int_equal(q.en_sqd_async_notify, a->en_sqd_async_notify);
}

/* One step with exactly the required attributes (variant 0); must succeed. */
static void
step(struct droce_qp *qp, enum droce_qp_state next)
{
	enum droce_qp_state cur = qp_state_of(qp);
	struct droce_qp_attr a;
	int mask = M(STATE) | required(qp->qp_type, cur, next);

	fill(&a, cur, next, 0);
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
	assert_applied(qp, &a, mask);
	assert_int_equal(qp_state_of(qp), next);
}

/* A fresh QP in state s (SQE is not reachable by modify_qp). */
static struct droce_qp *
qp_in(enum droce_qp_type t, enum droce_qp_state s)
{
	struct droce_qp *qp = qp_create_on(&f.a, t);

	assert_int_equal(qp_state_of(qp), S(RESET));
	if (s == S(RESET))
		return qp;
	step(qp, S(INIT));
	if (s == S(INIT))
		return qp;
	step(qp, S(RTR));
	if (s == S(RTR))
		return qp;
	step(qp, S(RTS));
	if (s == S(RTS))
		return qp;
	step(qp, s == S(SQD) ? S(SQD) : S(ERR));
	assert_true(s == S(SQD) || s == S(ERR));
	return qp;
}

/* modify must fail with EINVAL and leave the QP where it was. */
static void
expect_einval(struct droce_qp *qp, struct droce_qp_attr *a, int mask)
{
	enum droce_qp_state before = qp_state_of(qp);
	int rc = droce_modify_qp(qp, a, mask);

	if (rc != EINVAL)
		fail_msg("%s QP in state %d: modify to %d with mask 0x%x returned %d, "
			 "expected EINVAL", qp->qp_type == DROCE_QPT_RC ? "RC" :
			 qp->qp_type == DROCE_QPT_UC ? "UC" : "UD", before,
			 a->qp_state, mask, rc);
	assert_int_equal(qp_state_of(qp), before);
}

static const enum droce_qp_type types[] = { DROCE_QPT_RC, DROCE_QPT_UC, DROCE_QPT_UD };
static const enum droce_qp_state reachable[] = {
	S(RESET), S(INIT), S(RTR), S(RTS), S(SQD), S(ERR),
};
#define NREACH (sizeof(reachable) / sizeof(reachable[0]))

/* Every attribute bit ibv_qp_attr_mask defines, and the undefined ones. */
#define ATTR_BITS 31

/* ---- tests -------------------------------------------------------------------- */

/* The whole life of a QP, each step with exactly its required attributes. */
static void
walk(enum droce_qp_type t)
{
	struct droce_qp *qp = qp_create_on(&f.a, t);

	assert_int_equal(qp_state_of(qp), S(RESET));
	step(qp, S(RESET));
	step(qp, S(INIT));
	step(qp, S(INIT));
	step(qp, S(RTR));
	step(qp, S(RTS));
	step(qp, S(RTS));
	step(qp, S(SQD));
	step(qp, S(SQD));
	step(qp, S(RTS));
	step(qp, S(ERR));
	step(qp, S(ERR));
	step(qp, S(RESET));
	step(qp, S(INIT));
	step(qp, S(ERR));
	step(qp, S(RESET));
	qp_drop(qp);
}

static void
test_rc_walk_every_state(void **state)
{
	(void)state;
	walk(DROCE_QPT_RC);
}

static void
test_uc_walk_every_state(void **state)
{
	(void)state;
	walk(DROCE_QPT_UC);
}

static void
test_ud_walk_every_state(void **state)
{
	(void)state;
	walk(DROCE_QPT_UD);
}

/*
 * All 7x7 state pairs from every reachable state: a valid pair succeeds
 * with its required attributes; an invalid one fails with EINVAL and the
 * QP stays where it was, with no attributes, with the attributes that
 * would be required to enter the target from its usual predecessor, and
 * with every attribute the target's usual entry allows.
 */
static void
matrix(enum droce_qp_type t)
{
	static const enum droce_qp_state usual_pred[] = {
		[S(RESET)] = S(RESET), [S(INIT)] = S(RESET), [S(RTR)] = S(INIT),
		[S(RTS)] = S(RTR), [S(SQD)] = S(RTS), [S(SQE)] = S(RTS),
		[S(ERR)] = S(RTS),
	};

	for (size_t i = 0; i < NREACH; i++) {
		for (int next = S(RESET); next <= S(ERR); next++) {
			enum droce_qp_state cur = reachable[i];
			enum droce_qp_state pred = usual_pred[next];
			struct droce_qp *qp = qp_in(t, cur);
			struct droce_qp_attr a;

			fill(&a, cur, (enum droce_qp_state)next, 0);
			if (valid_pair(cur, (enum droce_qp_state)next)) {
				int mask = M(STATE) | required(t, cur, (enum droce_qp_state)next);

				if (droce_modify_qp(qp, &a, mask) != 0)
					fail_msg("type %d: %d -> %d refused", t, cur, next);
				assert_int_equal(qp_state_of(qp), next);
			} else {
				expect_einval(qp, &a, M(STATE));
				expect_einval(qp, &a, M(STATE) |
					      required(t, pred, (enum droce_qp_state)next));
				expect_einval(qp, &a, M(STATE) |
					      required(t, pred, (enum droce_qp_state)next) |
					      (optional(t, pred, (enum droce_qp_state)next) &
					       ~M(CUR_STATE)));
			}
			qp_drop(qp);
		}
	}
}

static void
test_rc_state_pairs_bad_flow(void **state)
{
	(void)state;
	matrix(DROCE_QPT_RC);
}

static void
test_uc_state_pairs_bad_flow(void **state)
{
	(void)state;
	matrix(DROCE_QPT_UC);
}

static void
test_ud_state_pairs_bad_flow(void **state)
{
	(void)state;
	matrix(DROCE_QPT_UD);
}

/*
 * For every valid transition: leaving out any required attribute, or
 * adding any attribute the table does not allow (defined or undefined
 * bit), fails with EINVAL and changes nothing.
 */
static void
masks(enum droce_qp_type t)
{
	for (size_t i = 0; i < NREACH; i++) {
		enum droce_qp_state cur = reachable[i];
		struct droce_qp *qp = qp_in(t, cur);

		for (int next = S(RESET); next <= S(ERR); next++) {
			int req = required(t, cur, (enum droce_qp_state)next);
			int opt = optional(t, cur, (enum droce_qp_state)next);
			struct droce_qp_attr a;

			if (!valid_pair(cur, (enum droce_qp_state)next))
				continue;
			fill(&a, cur, (enum droce_qp_state)next, 0);
			for (int b = 0; b < ATTR_BITS; b++) {
				int bit = 1 << b;

				if (req & bit)
					expect_einval(qp, &a, (M(STATE) | req) & ~bit);
				else if (!(opt & bit) && bit != M(STATE))
					expect_einval(qp, &a, M(STATE) | req | bit);
			}
		}
		qp_drop(qp);
	}
}

static void
test_rc_missing_or_disallowed_attr_bad_flow(void **state)
{
	(void)state;
	masks(DROCE_QPT_RC);
}

static void
test_uc_missing_or_disallowed_attr_bad_flow(void **state)
{
	(void)state;
	masks(DROCE_QPT_UC);
}

static void
test_ud_missing_or_disallowed_attr_bad_flow(void **state)
{
	(void)state;
	masks(DROCE_QPT_UD);
}

/*
 * Every optional attribute of every valid transition is accepted alone and
 * its value shows in query_qp.  ALT_PATH is the exception: the table allows
 * it, but RoCE has no alternate paths (the kernel's _ib_modify_qp bans APM
 * on RoCE ports with EINVAL), and droce neither.
 */
static void
optionals(enum droce_qp_type t)
{
	for (size_t i = 0; i < NREACH; i++) {
		enum droce_qp_state cur = reachable[i];

		for (int next = S(RESET); next <= S(ERR); next++) {
			int req = required(t, cur, (enum droce_qp_state)next);
			int opt = optional(t, cur, (enum droce_qp_state)next);

			if (!valid_pair(cur, (enum droce_qp_state)next))
				continue;
			for (int b = 0; b < ATTR_BITS; b++) {
				int bit = 1 << b;
				struct droce_qp_attr a;
				struct droce_qp *qp;

				if (!(opt & bit))
					continue;
				qp = qp_in(t, cur);
				fill(&a, cur, (enum droce_qp_state)next, 1);
				if (bit == M(ALT_PATH)) {
					a.alt_ah_attr = a.ah_attr;
					a.alt_port_num = 1;
					expect_einval(qp, &a, M(STATE) | req | bit);
				} else {
					int mask = M(STATE) | req | bit;

					if (droce_modify_qp(qp, &a, mask) != 0)
						fail_msg("type %d: %d -> %d, optional 0x%x refused",
							 t, cur, next, bit);
					assert_applied(qp, &a, mask);
				}
				qp_drop(qp);
			}
		}
	}
}

static void
test_rc_optional_attrs(void **state)
{
	(void)state;
	optionals(DROCE_QPT_RC);
}

static void
test_uc_optional_attrs(void **state)
{
	(void)state;
	optionals(DROCE_QPT_UC);
}

static void
test_ud_optional_attrs(void **state)
{
	(void)state;
	optionals(DROCE_QPT_UD);
}

/* The table's best-known refusals, by name (masks() covers them all). */
static void
test_named_disallowed_attrs_bad_flow(void **state)
{
	struct droce_qp *qp;
	struct droce_qp_attr a;

	(void)state;
	/* SQ_PSN belongs to RTR -> RTS, not INIT -> RTR */
	qp = qp_in(DROCE_QPT_RC, S(INIT));
	fill(&a, S(INIT), S(RTR), 0);
	expect_einval(qp, &a, M(STATE) | required(DROCE_QPT_RC, S(INIT), S(RTR)) | M(SQ_PSN));
	qp_drop(qp);
	/* Q_Keys are for UD: not on RC RESET -> INIT */
	qp = qp_in(DROCE_QPT_RC, S(RESET));
	fill(&a, S(RESET), S(INIT), 0);
	expect_einval(qp, &a, M(STATE) | required(DROCE_QPT_RC, S(RESET), S(INIT)) | M(QKEY));
	qp_drop(qp);
	/* access flags are for RC/UC: not on UD, in any transition */
	qp = qp_in(DROCE_QPT_UD, S(RESET));
	fill(&a, S(RESET), S(INIT), 0);
	expect_einval(qp, &a, M(PKEY_INDEX) | M(PORT) | M(QKEY) | M(STATE) | M(ACCESS_FLAGS));
	expect_einval(qp, &a, M(PKEY_INDEX) | M(PORT) | M(STATE) | M(ACCESS_FLAGS));
	qp_drop(qp);
	qp = qp_in(DROCE_QPT_UD, S(RTS));
	fill(&a, S(RTS), S(RTS), 0);
	expect_einval(qp, &a, M(STATE) | M(ACCESS_FLAGS));
	qp_drop(qp);
	/* UD has no path: no AV, no path MTU, no destination QPN */
	qp = qp_in(DROCE_QPT_UD, S(INIT));
	fill(&a, S(INIT), S(RTR), 0);
	expect_einval(qp, &a, M(STATE) | M(AV));
	expect_einval(qp, &a, M(STATE) | M(PATH_MTU));
	expect_einval(qp, &a, M(STATE) | M(DEST_QPN));
	qp_drop(qp);
	/* UC has no RNR, retries or RDMA READ/atomic resources */
	qp = qp_in(DROCE_QPT_UC, S(RTR));
	fill(&a, S(RTR), S(RTS), 0);
	expect_einval(qp, &a, M(STATE) | M(SQ_PSN) | M(TIMEOUT));
	expect_einval(qp, &a, M(STATE) | M(SQ_PSN) | M(RETRY_CNT));
	expect_einval(qp, &a, M(STATE) | M(SQ_PSN) | M(MAX_QP_RD_ATOMIC));
	expect_einval(qp, &a, M(STATE) | M(SQ_PSN) | M(MIN_RNR_TIMER));
	qp_drop(qp);
}

/* Bad values on RESET -> INIT, for every type. */
static void
test_init_bad_values_bad_flow(void **state)
{
	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct droce_qp *qp = qp_in(types[i], S(RESET));
		int mask = M(STATE) | required(types[i], S(RESET), S(INIT));
		struct droce_qp_attr a;

		fill(&a, S(RESET), S(INIT), 0);
		a.port_num = 0;
		expect_einval(qp, &a, mask);
		a.port_num = 2;			/* one port */
		expect_einval(qp, &a, mask);
		fill(&a, S(RESET), S(INIT), 0);
		a.pkey_index = 1;		/* one P_Key, at index 0 */
		expect_einval(qp, &a, mask);
		fill(&a, S(RESET), S(INIT), 0);
		assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
		assert_int_equal(qp_state_of(qp), S(INIT));
		/* INIT -> INIT checks the same values */
		fill(&a, S(INIT), S(INIT), 0);
		a.port_num = 2;
		expect_einval(qp, &a, M(STATE) | M(PORT));
		a.port_num = 1;
		a.pkey_index = 1;
		expect_einval(qp, &a, M(STATE) | M(PKEY_INDEX));
		qp_drop(qp);
	}
}

/* Bad values on INIT -> RTR (RC; UC shares the connected-path checks). */
static void
rtr_bad_values(enum droce_qp_type t)
{
	struct droce_qp *qp = qp_in(t, S(INIT));
	int mask = M(STATE) | required(t, S(INIT), S(RTR));
	struct droce_qp_attr a;

#define BAD(stmt) do { fill(&a, S(INIT), S(RTR), 0); stmt; expect_einval(qp, &a, mask); } while (0)
	BAD(a.path_mtu = 0);
	BAD(a.path_mtu = 6);
	BAD(a.path_mtu = 7);
	BAD(a.dest_qp_num = 1u << 24);
	BAD(a.dest_qp_num = UINT32_MAX);
	BAD(a.rq_psn = 1u << 24);
	BAD(a.ah_attr.is_global = 0);		/* RoCE: the GRH is the address */
	BAD(a.ah_attr.grh.sgid_index = 2);	/* the fixture has GIDs 0 and 1 */
	BAD(a.ah_attr.grh.sgid_index = 255);
	BAD(a.ah_attr.port_num = 2);
	BAD(a.ah_attr.port_num = 0);		/* uverbs: rdma_is_port_valid() */
	BAD(a.ah_attr.grh.sgid_index = 1);	/* IPv6 source, IPv4 destination */
	if (t == DROCE_QPT_RC) {
		BAD(a.max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC + 1);
		BAD(a.min_rnr_timer = 32);
	}
#undef BAD
	/* the largest legal values pass */
	fill(&a, S(INIT), S(RTR), 0);
	a.path_mtu = DROCE_MTU_4096;		/* vwire MTU 4200 holds 4096 + headers */
	a.dest_qp_num = 0xffffff;
	a.rq_psn = 0xffffff;
	a.max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC;
	a.min_rnr_timer = 31;
	a.ah_attr.grh.sgid_index = 0;
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
	assert_applied(qp, &a, mask);
	qp_drop(qp);
}

static void
test_rc_rtr_bad_values_bad_flow(void **state)
{
	(void)state;
	rtr_bad_values(DROCE_QPT_RC);
}

static void
test_uc_rtr_bad_values_bad_flow(void **state)
{
	(void)state;
	rtr_bad_values(DROCE_QPT_UC);
}

static void
test_rc_rts_bad_values_bad_flow(void **state)
{
	struct droce_qp *qp = qp_in(DROCE_QPT_RC, S(RTR));
	int mask = M(STATE) | required(DROCE_QPT_RC, S(RTR), S(RTS));
	struct droce_qp_attr a;

	(void)state;
#define BAD(stmt) do { fill(&a, S(RTR), S(RTS), 0); stmt; expect_einval(qp, &a, mask); } while (0)
	BAD(a.timeout = 32);
	BAD(a.retry_cnt = 8);
	BAD(a.rnr_retry = 8);
	BAD(a.max_rd_atomic = DROCE_MAX_INIT_RD_ATOMIC + 1);
	BAD(a.sq_psn = 1u << 24);
	BAD(a.sq_psn = UINT32_MAX);
#undef BAD
	fill(&a, S(RTR), S(RTS), 0);
	a.timeout = 31;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = DROCE_MAX_INIT_RD_ATOMIC;
	a.sq_psn = 0xffffff;
	assert_int_equal(droce_modify_qp(qp, &a, mask), 0);
	assert_applied(qp, &a, mask);
	/* RTS -> RTS checks min_rnr_timer too */
	fill(&a, S(RTS), S(RTS), 0);
	a.min_rnr_timer = 32;
	expect_einval(qp, &a, M(STATE) | M(MIN_RNR_TIMER));
	qp_drop(qp);
}

static void
test_uc_ud_sq_psn_bad_value_bad_flow(void **state)
{
	(void)state;
	for (size_t i = 1; i < 3; i++) {
		struct droce_qp *qp = qp_in(types[i], S(RTR));
		struct droce_qp_attr a;

		fill(&a, S(RTR), S(RTS), 0);
		a.sq_psn = 1u << 24;
		expect_einval(qp, &a, M(STATE) | M(SQ_PSN));
		a.sq_psn = 0xffffff;
		assert_int_equal(droce_modify_qp(qp, &a, M(STATE) | M(SQ_PSN)), 0);
		assert_applied(qp, &a, M(STATE) | M(SQ_PSN));
		qp_drop(qp);
	}
}

/* Path MTU above the port's active MTU: a 1500-byte wire allows 1024. */
static void
test_path_mtu_above_port_mtu_bad_flow(void **state)
{
	struct vwire_config wire = { .mtu = 1500 };
	struct droce_qp_init_attr init;
	struct droce_qp_attr a;
	struct droce_qp *qp;
	struct fx g;

	(void)state;
	fx_open(&g, &wire, 1u << 16);
	memset(&init, 0, sizeof(init));
	init.qp_type = DROCE_QPT_RC;
	init.send_cq = g.a.cq;
	init.recv_cq = g.a.cq;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = droce_create_qp(g.a.pd, &init);
	assert_non_null(qp);
	fill(&a, S(RESET), S(INIT), 0);
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) |
					 required(DROCE_QPT_RC, S(RESET), S(INIT))), 0);
	fill(&a, S(INIT), S(RTR), 0);
	memcpy(a.ah_attr.grh.dgid.raw, g.b.gid, 16);
	a.path_mtu = DROCE_MTU_4096;
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) |
					 required(DROCE_QPT_RC, S(INIT), S(RTR))), EINVAL);
	a.path_mtu = DROCE_MTU_2048;		/* 2048 + headers > 1500 */
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) |
					 required(DROCE_QPT_RC, S(INIT), S(RTR))), EINVAL);
	assert_int_equal(qp->state, S(INIT));
	a.path_mtu = DROCE_MTU_1024;
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) |
					 required(DROCE_QPT_RC, S(INIT), S(RTR))), 0);
	assert_int_equal(qp->state, S(RTR));
	assert_int_equal(droce_destroy_qp(qp), 0);
	fx_close(&g);
}

/*
 * cur_qp_state: where the table allows it, it must name the current state;
 * where it does not (from RESET or INIT, and on every move to RESET or
 * ERR), it is refused even when it is right.
 */
static void
test_cur_qp_state_bad_flow(void **state)
{
	struct droce_qp *qp;
	struct droce_qp_attr a;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		enum droce_qp_type t = types[i];
		int rts = M(STATE) | M(CUR_STATE) | required(t, S(RTR), S(RTS));

		qp = qp_in(t, S(RTR));
		fill(&a, S(RTR), S(RTS), 0);
		a.cur_qp_state = S(RTS);		/* wrong */
		expect_einval(qp, &a, rts);
		a.cur_qp_state = S(INIT);
		expect_einval(qp, &a, rts);
		a.cur_qp_state = S(RTR);		/* right */
		assert_int_equal(droce_modify_qp(qp, &a, rts), 0);
		assert_int_equal(qp_state_of(qp), S(RTS));
		/* RTS -> RTS and RTS -> ERR */
		fill(&a, S(RTS), S(RTS), 0);
		a.cur_qp_state = S(SQD);
		expect_einval(qp, &a, M(STATE) | M(CUR_STATE));
		a.cur_qp_state = S(RTS);
		assert_int_equal(droce_modify_qp(qp, &a, M(STATE) | M(CUR_STATE)), 0);
		fill(&a, S(RTS), S(ERR), 0);
		expect_einval(qp, &a, M(STATE) | M(CUR_STATE));
		fill(&a, S(RTS), S(RESET), 0);
		expect_einval(qp, &a, M(STATE) | M(CUR_STATE));
		qp_drop(qp);

		/* from INIT, CUR_STATE is never accepted */
		qp = qp_in(t, S(INIT));
		fill(&a, S(INIT), S(INIT), 0);
		expect_einval(qp, &a, M(STATE) | M(CUR_STATE));
		fill(&a, S(INIT), S(RTR), 0);
		expect_einval(qp, &a, M(STATE) | M(CUR_STATE) | required(t, S(INIT), S(RTR)));
		qp_drop(qp);
	}
}

/* A qp_state outside the enum, NULL arguments. */
static void
test_bad_state_value_and_null_bad_flow(void **state)
{
	struct droce_qp *qp = qp_in(DROCE_QPT_RC, S(RTS));
	struct droce_qp_attr a;
	struct droce_qp_init_attr init;

	(void)state;
	fill(&a, S(RTS), S(RTS), 0);
	a.qp_state = DROCE_QPS_UNKNOWN;
	expect_einval(qp, &a, M(STATE));
	a.qp_state = (enum droce_qp_state)100;
	expect_einval(qp, &a, M(STATE));
	a.qp_state = (enum droce_qp_state)-1;
	expect_einval(qp, &a, M(STATE));
	assert_int_equal(droce_modify_qp(qp, NULL, M(STATE)), EINVAL);
	assert_int_equal(droce_modify_qp(NULL, &a, M(STATE)), EINVAL);
	assert_int_equal(droce_query_qp(NULL, &a, 0, &init), EINVAL);
	assert_int_equal(droce_query_qp(qp, NULL, 0, &init), EINVAL);
	/* init_attr is optional */
	assert_int_equal(droce_query_qp(qp, &a, 0, NULL), 0);
	assert_int_equal(a.qp_state, S(RTS));
	/* a mask without DROCE_QP_STATE keeps the state: RTS -> RTS */
	fill(&a, S(RTS), S(RTS), 1);
	assert_int_equal(droce_modify_qp(qp, &a, M(ACCESS_FLAGS)), 0);
	assert_applied(qp, &a, M(ACCESS_FLAGS));
	assert_int_equal(qp_state_of(qp), S(RTS));
	qp_drop(qp);
	/* ... and in RTR, where RTR -> RTR is no transition, it fails */
	qp = qp_in(DROCE_QPT_RC, S(RTR));
	fill(&a, S(RTR), S(RTR), 0);
	expect_einval(qp, &a, M(ACCESS_FLAGS));
	qp_drop(qp);
}

/* ---- RESET empties the queues; the QP comes back ------------------------------ */

static void
bring_up(struct droce_qp *qp, const uint8_t dgid[16], uint32_t dqpn, uint32_t psn)
{
	struct droce_qp_attr a;
	enum droce_qp_type t = qp->qp_type;

	fill(&a, S(RESET), S(INIT), 0);
	a.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ;
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) | required(t, S(RESET), S(INIT))), 0);
	fill(&a, S(INIT), S(RTR), 0);
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	a.dest_qp_num = dqpn;
	a.rq_psn = psn;
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) | required(t, S(INIT), S(RTR))), 0);
	fill(&a, S(RTR), S(RTS), 0);
	a.sq_psn = psn;
	assert_int_equal(droce_modify_qp(qp, &a, M(STATE) | required(t, S(RTR), S(RTS))), 0);
}

static void
test_reset_discards_work_and_qp_is_reusable(void **state)
{
	struct droce_qp *qa = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qb = qp_create_on(&f.b, DROCE_QPT_RC);
	struct droce_send_wr *bad_send;
	struct droce_recv_wr *bad_recv;
	struct droce_qp_attr a;
	struct droce_wc wc[8];

	(void)state;
	bring_up(qa, f.b.gid, qb->qp_num, 100);
	bring_up(qb, f.a.gid, qa->qp_num, 100);

	/* Work posted but never run (no progress between post and reset). */
	memset(f.b.buf, 0, 4096);
	fx_fill(f.a.buf, 4096, 7);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 10 + i, f.a.buf, 64,
					 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(fx_post_recv(qa, 20 + i, f.a.buf + 8192, 64, f.a.mr->lkey), 0);
	fill(&a, S(RTS), S(RESET), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(qp_state_of(qa), S(RESET));

	/* ibverbs: the WRs vanish, no completion, flushed or otherwise */
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 0.2), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 8, 0.01), 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(f.b.buf[i], 0);

	/* nothing can be posted in RESET */
	{
		struct droce_sge sge = { (uintptr_t)f.a.buf, 8, f.a.mr->lkey };
		struct droce_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					     .opcode = DROCE_WR_SEND };
		struct droce_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };

		bad_send = NULL;
		bad_recv = NULL;
		assert_int_equal(droce_post_send(qa, &swr, &bad_send), EINVAL);
		assert_ptr_equal(bad_send, &swr);
		assert_int_equal(droce_post_recv(qa, &rwr, &bad_recv), EINVAL);
		assert_ptr_equal(bad_recv, &rwr);
	}

	/* Reconnect both ends (new PSNs) and use the QP again. */
	fill(&a, S(RTS), S(RESET), 0);
	assert_int_equal(droce_modify_qp(qb, &a, M(STATE)), 0);
	bring_up(qa, f.b.gid, qb->qp_num, 0xfffff0);
	bring_up(qb, f.a.gid, qa->qp_num, 0xfffff0);
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 99, f.a.buf, 4000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 99);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, DROCE_WC_RDMA_WRITE);
	assert_int_equal(wc[0].qp_num, qa->qp_num);
	assert_memory_equal(f.b.buf, f.a.buf, 4000);
	/* and nothing from before the reset surfaced */
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 0.1), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, 8, 0.01), 0);
	qp_drop(qa);
	qp_drop(qb);
}

/* ERR -> RESET -> ... -> RTS after an error: the QP works again. */
static void
test_error_then_reset_then_reuse(void **state)
{
	struct droce_qp *qa = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qb = qp_create_on(&f.b, DROCE_QPT_RC);
	struct droce_qp_attr a;
	struct droce_wc wc[4];

	(void)state;
	bring_up(qa, f.b.gid, qb->qp_num, 5);
	bring_up(qb, f.a.gid, qa->qp_num, 5);
	assert_int_equal(fx_post_recv(qa, 1, f.a.buf, 64, f.a.mr->lkey), 0);
	fill(&a, S(RTS), S(ERR), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	/* ERR flushes what was posted, as ibverbs */
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 1), 1);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	fill(&a, S(ERR), S(RESET), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(droce_modify_qp(qb, &a, M(STATE)), 0);
	bring_up(qa, f.b.gid, qb->qp_num, 77);
	bring_up(qb, f.a.gid, qa->qp_num, 77);
	fx_fill(f.a.buf, 512, 3);
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 2, f.a.buf, 512, f.a.mr->lkey,
				 (uintptr_t)f.b.buf + 1024, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + 1024, f.a.buf, 512);
	qp_drop(qa);
	qp_drop(qb);
}

/* RESET removes the QP's completions not yet polled from its CQ, and no
 * other QP's (libmlx5's mlx5_cq_clean; rdma-core's tests restate a QP from
 * ERR and expect its next completion, not the receives flushed before). */
static void
test_reset_cleans_unpolled_completions(void **state)
{
	struct droce_qp *qa = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qc = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qb = qp_create_on(&f.b, DROCE_QPT_RC);
	struct droce_qp_attr a;
	struct droce_wc wc[8];

	(void)state;
	bring_up(qa, f.b.gid, qb->qp_num, 5);
	bring_up(qb, f.a.gid, qa->qp_num, 5);
	bring_up(qc, f.b.gid, qb->qp_num, 5);
	assert_int_equal(fx_post_recv(qa, 1, f.a.buf, 64, f.a.mr->lkey), 0);
	assert_int_equal(fx_post_recv(qc, 3, f.a.buf, 64, f.a.mr->lkey), 0);
	assert_int_equal(fx_post_recv(qa, 2, f.a.buf, 64, f.a.mr->lkey), 0);
	fill(&a, S(RTS), S(ERR), 0);
	assert_int_equal(droce_modify_qp(qc, &a, M(STATE)), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	/* three flushed receives wait in f.a.cq; none is polled */
	fx_spin(&f, 0.05);
	fill(&a, S(ERR), S(RESET), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 0.2), 1);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(wc[0].qp_num, qc->qp_num);
	assert_int_equal(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	/* the reset QP's next completion is its own new work's */
	assert_int_equal(droce_modify_qp(qb, &a, M(STATE)), 0);
	bring_up(qa, f.b.gid, qb->qp_num, 77);
	bring_up(qb, f.a.gid, qa->qp_num, 77);
	fx_fill(f.a.buf, 256, 5);
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 4, f.a.buf, 256, f.a.mr->lkey,
				 (uintptr_t)f.b.buf + 2048, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 8, 5), 1);
	assert_int_equal(wc[0].wr_id, 4);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf + 2048, f.a.buf, 256);
	qp_drop(qa);
	qp_drop(qc);
	qp_drop(qb);
}

/* SQD: work posted there waits; SQD -> RTS sends it. */
static void
test_sqd_holds_new_work_until_rts(void **state)
{
	struct droce_qp *qa = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qb = qp_create_on(&f.b, DROCE_QPT_RC);
	struct droce_qp_attr a;
	struct droce_wc wc[2];

	(void)state;
	bring_up(qa, f.b.gid, qb->qp_num, 9);
	bring_up(qb, f.a.gid, qa->qp_num, 9);
	fill(&a, S(RTS), S(SQD), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	memset(f.b.buf, 0, 256);
	fx_fill(f.a.buf, 256, 11);
	/* posting in SQD is allowed (ibverbs: only RESET/INIT/RTR refuse sends) */
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 5, f.a.buf, 256, f.a.mr->lkey,
				 (uintptr_t)f.b.buf, f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 0.1), 0);
	for (int i = 0; i < 256; i++)
		assert_int_equal(f.b.buf[i], 0);
	fill(&a, S(SQD), S(RTS), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 5);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf, f.a.buf, 256);
	qp_drop(qa);
	qp_drop(qb);
}

/* SQD drains: a message already started is finished, acknowledged and
 * completed; a WQE behind it waits for RTS (IBTA 10.3.1). */
static void
test_sqd_finishes_the_message_in_progress(void **state)
{
	struct droce_qp *qa = qp_create_on(&f.a, DROCE_QPT_RC);
	struct droce_qp *qb = qp_create_on(&f.b, DROCE_QPT_RC);
	struct droce_qp_attr a;
	struct droce_wc wc[2];

	(void)state;
	bring_up(qa, f.b.gid, qb->qp_num, 9);
	bring_up(qb, f.a.gid, qa->qp_num, 9);
	fx_fill(f.a.buf, 65536, 12);
	memset(f.b.buf, 0, 65536 + 64);
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 65536, f.a.mr->lkey,
				 (uintptr_t)f.b.buf, f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_post(qa, DROCE_WR_RDMA_WRITE, 2, f.a.buf, 64, f.a.mr->lkey,
				 (uintptr_t)f.b.buf + 65536, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	droce_progress(f.a.ctx);	/* one burst: the first WRITE is half sent */
	fill(&a, S(RTS), S(SQD), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 1), 1);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf, f.a.buf, 65536);
	for (int i = 0; i < 64; i++)
		assert_int_equal(f.b.buf[65536 + i], 0);
	fill(&a, S(SQD), S(RTS), 0);
	assert_int_equal(droce_modify_qp(qa, &a, M(STATE)), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 5), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_memory_equal(f.b.buf + 65536, f.a.buf, 64);
	qp_drop(qa);
	qp_drop(qb);
}

/* query_qp returns the init attributes, for every type. */
static void
test_query_returns_init_attrs(void **state)
{
	struct droce_cq *scq = droce_create_cq(f.a.ctx, 32, NULL, NULL, 0);
	int ctx_cookie;

	(void)state;
	assert_non_null(scq);
	for (size_t i = 0; i < 3; i++) {
		struct droce_qp_init_attr init, q_init;
		struct droce_qp_attr q;
		struct droce_qp *qp;

		memset(&init, 0, sizeof(init));
		init.qp_context = &ctx_cookie;
		init.qp_type = types[i];
		init.send_cq = scq;
		init.recv_cq = f.a.cq;
		init.sq_sig_all = (int)(i & 1);
		init.cap.max_send_wr = 7;
		init.cap.max_recv_wr = 5;
		init.cap.max_send_sge = 3;
		init.cap.max_recv_sge = 2;
		init.cap.max_inline_data = 100;
		qp = droce_create_qp(f.a.pd, &init);
		assert_non_null(qp);
		assert_ptr_equal(qp->context, f.a.ctx);
		assert_ptr_equal(qp->pd, f.a.pd);
		assert_ptr_equal(qp->send_cq, scq);
		assert_ptr_equal(qp->recv_cq, f.a.cq);
		assert_ptr_equal(qp->qp_context, &ctx_cookie);
		assert_int_equal(qp->qp_type, types[i]);
		assert_int_equal(qp->state, S(RESET));
		assert_true(qp->qp_num > 1 && qp->qp_num <= 0xffffff);

		memset(&q_init, 0xa5, sizeof(q_init));
		assert_int_equal(droce_query_qp(qp, &q, M(CAP), &q_init), 0);
		assert_int_equal(q.qp_state, S(RESET));
		assert_ptr_equal(q_init.qp_context, &ctx_cookie);
		assert_ptr_equal(q_init.send_cq, scq);
		assert_ptr_equal(q_init.recv_cq, f.a.cq);
		assert_null(q_init.srq);
		assert_int_equal(q_init.qp_type, types[i]);
		assert_int_equal(q_init.sq_sig_all, init.sq_sig_all);
		/* ibverbs may round capacities up, never down */
		assert_true(q_init.cap.max_send_wr >= 7);
		assert_true(q_init.cap.max_recv_wr >= 5);
		assert_true(q_init.cap.max_send_sge >= 3);
		assert_true(q_init.cap.max_recv_sge >= 2);
		assert_true(q_init.cap.max_inline_data >= 100);
		assert_memory_equal(&q.cap, &q_init.cap, sizeof(q.cap));

		/* still the same after the QP went through its states */
		step(qp, S(INIT));
		step(qp, S(RTR));
		step(qp, S(RTS));
		assert_int_equal(droce_query_qp(qp, &q, M(CAP), &q_init), 0);
		assert_int_equal(q.qp_state, S(RTS));
		assert_int_equal(q_init.qp_type, types[i]);
		assert_ptr_equal(q_init.send_cq, scq);
		assert_memory_equal(&q.cap, &q_init.cap, sizeof(q.cap));
		assert_int_equal(droce_destroy_qp(qp), 0);
	}
	assert_int_equal(droce_destroy_cq(scq), 0);
}

int
main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_rc_walk_every_state),
		T(test_uc_walk_every_state),
		T(test_ud_walk_every_state),
		T(test_rc_state_pairs_bad_flow),
		T(test_uc_state_pairs_bad_flow),
		T(test_ud_state_pairs_bad_flow),
		T(test_rc_missing_or_disallowed_attr_bad_flow),
		T(test_uc_missing_or_disallowed_attr_bad_flow),
		T(test_ud_missing_or_disallowed_attr_bad_flow),
		T(test_rc_optional_attrs),
		T(test_uc_optional_attrs),
		T(test_ud_optional_attrs),
		T(test_named_disallowed_attrs_bad_flow),
		T(test_init_bad_values_bad_flow),
		T(test_rc_rtr_bad_values_bad_flow),
		T(test_uc_rtr_bad_values_bad_flow),
		T(test_rc_rts_bad_values_bad_flow),
		T(test_uc_ud_sq_psn_bad_value_bad_flow),
		T(test_path_mtu_above_port_mtu_bad_flow),
		T(test_cur_qp_state_bad_flow),
		T(test_bad_state_value_and_null_bad_flow),
		T(test_reset_discards_work_and_qp_is_reusable),
		T(test_error_then_reset_then_reuse),
		T(test_reset_cleans_unpolled_completions),
		T(test_sqd_holds_new_work_until_rts),
		T(test_sqd_finishes_the_message_in_progress),
		T(test_query_returns_init_attrs),
	};
#undef T

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("qp_state", tests, NULL, NULL);
}
