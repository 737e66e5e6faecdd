/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (droce_create_srq & co., IBTA 10.2.9) between two
 * droce stacks over the virtual wire, run three times: engines on this
 * lcore, on a dedicated transport lcore, and sharded over two transport
 * lcores (b's SRQ and its QPs on one engine, a's QPs on both).  b's QPs
 * take their receive WQEs from an SRQ; each test checks the completions
 * (wr_id, status, byte_len, qp_num, src_qp), the received bytes, the
 * exact counters and the exact asynchronous events (SRQ_LIMIT_REACHED,
 * QP_LAST_WQE_REACHED, and that nothing else is pending).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define BUF (1u << 20)
#define SLOT 256u		/* bytes per message buffer */
#define MSG_LEN 100u
#define NQP 64
#define PER_QP 2
#define QKEY 0x11111111u

static struct fx f;

/* ---- helpers ------------------------------------------------------------------ */


static void
open_pair(void)
{
	fx_open(&f, NULL, BUF);
	fx_events_nonblock(&f.a);
	fx_events_nonblock(&f.b);
	memset(f.b.buf, 0x77, BUF);
	fx_fill(f.a.buf, BUF, 1);
}

static struct droce_srq *
srq_new(uint32_t max_wr, uint32_t max_sge)
{
	struct droce_srq_init_attr init = { .attr = { max_wr, max_sge, 0 } };
	struct droce_srq *srq = droce_create_srq(f.b.pd, &init);

	assert_non_null(srq);
	assert_ptr_equal(srq->pd, f.b.pd);
	assert_ptr_equal(srq->context, f.b.ctx);
	return srq;
}

/* A receive WQE on srq: wr_id, and b's buffer slot wr_id. */
static int
srq_post(struct droce_srq *srq, uint64_t wr_id)
{
	struct droce_sge sge = { (uintptr_t)(f.b.buf + wr_id * SLOT), SLOT, f.b.mr->lkey };
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad = NULL;

	return droce_post_srq_recv(srq, &wr, &bad);
}

/* Message id from a's QP qp: a's slot id, its first 4 bytes the id. */
static void
send_msg(struct droce_qp *qp, uint32_t id)
{
	memcpy(f.a.buf + id * SLOT, &id, sizeof(id));
	assert_int_equal(fx_post(qp, DROCE_WR_SEND, id, f.a.buf + id * SLOT, MSG_LEN,
				 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
}

static void
poll_exact(struct droce_cq *cq, struct droce_wc *wc, int n)
{
	struct droce_wc extra;

	assert_int_equal(fx_poll(&f, cq, wc, n, 10), n);
	fx_spin(&f, 0.002);
	assert_int_equal(droce_poll_cq(cq, 1, &extra), 0);
}

/* a's SEND completions: n, all successful. */
static void
expect_sends(int n)
{
	struct droce_wc wc[NQP * PER_QP];

	poll_exact(f.a.cq, wc, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
		assert_int_equal(wc[i].opcode, DROCE_WC_SEND);
	}
}

/* b's receive completion of message id on qpn, the bytes as sent. */
static void
check_recv(const struct droce_wc *wc, uint32_t qpn, uint32_t id)
{
	uint32_t got;

	assert_int_equal(wc->status, DROCE_WC_SUCCESS);
	assert_int_equal(wc->opcode, DROCE_WC_RECV);
	assert_int_equal(wc->byte_len, MSG_LEN);
	assert_int_equal(wc->qp_num, qpn);
	memcpy(&got, f.b.buf + wc->wr_id * SLOT, sizeof(got));
	assert_int_equal(got, id);
	assert_memory_equal(f.b.buf + wc->wr_id * SLOT, f.a.buf + id * SLOT, MSG_LEN);
	fx_assert_bytes(f.b.buf + wc->wr_id * SLOT + MSG_LEN, SLOT - MSG_LEN, 0x77);
}

static void
connect_on(struct droce_srq *srq, const struct fx_qp_opts *o)
{
	struct fx_qp_opts c = o != NULL ? *o : (struct fx_qp_opts){ 0 };

	if (c.timeout == 0)
		c.timeout = fx_qp_timeout();
	c.max_wr = 8;
	c.b_srq = srq;
	fx_connect(&f, &c);
	assert_ptr_equal(f.b.qp->srq, srq);
}

/* ---- tests ---------------------------------------------------------------------- */

/*
 * 64 RC QPs on one SRQ, 2 SENDs to each: every message lands once, in a
 * WQE of the SRQ, and its completion names the QP it arrived on.
 */
static void
test_srq_shared_by_64_qps(void **state)
{
	struct droce_qp *qa[NQP], *qb[NQP];
	struct droce_wc wc[NQP * PER_QP];
	bool seen[NQP * PER_QP] = { false };
	bool slot_used[NQP * PER_QP] = { false };
	struct droce_srq *srq;

	(void)state;
	open_pair();
	srq = srq_new(NQP * PER_QP, 1);
	for (int i = 0; i < NQP; i++) {
		connect_on(srq, NULL);
		qa[i] = f.a.qp;
		qb[i] = f.b.qp;
	}
	for (uint64_t w = 0; w < NQP * PER_QP; w++)
		assert_int_equal(srq_post(srq, w), 0);
	for (uint32_t k = 0; k < PER_QP; k++)
		for (uint32_t i = 0; i < NQP; i++)
			send_msg(qa[i], i * PER_QP + k);
	expect_sends(NQP * PER_QP);
	poll_exact(f.b.cq, wc, NQP * PER_QP);
	for (int n = 0; n < NQP * PER_QP; n++) {
		uint32_t id;
		int i;

		assert_true(wc[n].wr_id < NQP * PER_QP);
		assert_false(slot_used[wc[n].wr_id]);
		slot_used[wc[n].wr_id] = true;
		memcpy(&id, f.b.buf + wc[n].wr_id * SLOT, sizeof(id));
		assert_true(id < NQP * PER_QP);
		assert_false(seen[id]);
		seen[id] = true;
		i = (int)(id / PER_QP);
		check_recv(&wc[n], qb[i]->qp_num, id);
	}
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 0);
	fx_expect_no_event(&f.b);
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	f.a.qp = f.b.qp = NULL;
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

static void
query_limit(struct droce_srq *srq, uint32_t limit)
{
	struct droce_srq_attr attr = { 0 };

	assert_int_equal(droce_query_srq(srq, &attr), 0);
	assert_int_equal(attr.max_wr, 16);
	assert_int_equal(attr.max_sge, 2);
	assert_int_equal(attr.srq_limit, limit);
}

/* One SEND (message id) and its receive: b's WQE wr_id. */
static void
one_message(uint32_t id)
{
	struct droce_wc wc;

	send_msg(f.a.qp, id);
	expect_sends(1);
	poll_exact(f.b.cq, &wc, 1);
	check_recv(&wc, f.b.qp->qp_num, id);
	assert_int_equal(wc.wr_id, id);
}

/*
 * The limit event fires once, when fewer WQEs than srq_limit are left,
 * and disarms the limit (query shows 0); it fires again only after
 * modify_srq armed it again.
 */
static void
test_srq_limit_event_once(void **state)
{
	struct droce_srq_attr attr = { .srq_limit = 8 };
	struct droce_srq *srq;
	uint32_t id = 0;

	(void)state;
	open_pair();
	srq = srq_new(16, 2);
	connect_on(srq, NULL);
	for (uint64_t w = 0; w < 10; w++)
		assert_int_equal(srq_post(srq, w), 0);
	query_limit(srq, 0);
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_LIMIT), 0);
	query_limit(srq, 8);
	one_message(id++);		/* 9 left */
	one_message(id++);		/* 8 left: not below 8 */
	fx_expect_no_event(&f.b);
	query_limit(srq, 8);
	one_message(id++);		/* 7 left */
	fx_expect_event(&f, &f.b, DROCE_EVENT_SRQ_LIMIT_REACHED, srq);
	fx_expect_no_event(&f.b);
	query_limit(srq, 0);
	one_message(id++);		/* 6 left: disarmed */
	one_message(id++);		/* 5 left */
	fx_spin(&f, 0.005);
	fx_expect_no_event(&f.b);
	attr.srq_limit = 4;
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_LIMIT), 0);
	one_message(id++);		/* 4 left: not below 4 */
	fx_expect_no_event(&f.b);
	one_message(id++);		/* 3 left */
	fx_expect_event(&f, &f.b, DROCE_EVENT_SRQ_LIMIT_REACHED, srq);
	one_message(id++);
	fx_spin(&f, 0.005);
	fx_expect_no_event(&f.b);
	fx_expect_no_event(&f.a);
	fx_destroy_qps(&f);
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

/*
 * An empty SRQ: the RC SEND is RNR NAKed (min_rnr_timer 31: 491.52 ms,
 * IBTA table 45, so nothing is retried before the post; local ACK timeout
 * 20, 4.3 s, so no retransmission either on a busy machine); once a WQE
 * is posted, the retry lands in it.  One RNR NAK each way, exactly.
 */
static void
test_srq_empty_rnr_then_success(void **state)
{
	struct droce_srq *srq;
	struct droce_wc wc;
	double end;

	(void)state;
	open_pair();
	srq = srq_new(16, 2);
	connect_on(srq, &(struct fx_qp_opts){ .min_rnr_timer = 31, .timeout = 20 });
	send_msg(f.a.qp, 5);
	end = fx_now() + 10;
	while (fx_counter(&f.a, "rcvd_rnr_err") == 0 && fx_now() < end)
		fx_spin(&f, 0.001);
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_rnr_err"), 1);
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);
	assert_int_equal(droce_poll_cq(f.b.cq, 1, &wc), 0);
	assert_int_equal(srq_post(srq, 9), 0);
	expect_sends(1);
	poll_exact(f.b.cq, &wc, 1);
	check_recv(&wc, f.b.qp->qp_num, 5);
	assert_int_equal(wc.wr_id, 9);
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_rnr_err"), 1);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	fx_destroy_qps(&f);
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

/*
 * A QP on an SRQ: query_qp names it, post_recv is EINVAL (no RQ of its
 * own), destroy_srq is EBUSY while the QP exists.  Moved to ERR it raises
 * QP_LAST_WQE_REACHED once, and the SRQ keeps its WQEs for the others.
 */
static void
test_srq_qp_lifecycle(void **state)
{
	struct droce_qp_init_attr init;
	struct droce_qp_attr attr;
	struct droce_qp *qa0, *qb0;
	struct droce_srq *srq;
	struct droce_wc wc;

	(void)state;
	open_pair();
	srq = srq_new(16, 2);
	connect_on(srq, NULL);
	qa0 = f.a.qp;
	qb0 = f.b.qp;
	assert_int_equal(droce_query_qp(qb0, &attr, 0, &init), 0);
	assert_ptr_equal(init.srq, srq);
	assert_int_equal(init.cap.max_recv_wr, 0);
	assert_int_equal(fx_post_recv(qb0, 1, f.b.buf, 64, f.b.mr->lkey), EINVAL);
	assert_int_equal(droce_destroy_srq(srq), EBUSY);
	for (uint64_t w = 0; w < 3; w++)
		assert_int_equal(srq_post(srq, w), 0);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = DROCE_QPS_ERR;
	assert_int_equal(droce_modify_qp(qb0, &attr, DROCE_QP_STATE), 0);
	fx_expect_event(&f, &f.b, DROCE_EVENT_QP_LAST_WQE_REACHED, qb0);
	fx_expect_no_event(&f.b);
	assert_int_equal(droce_poll_cq(f.b.cq, 1, &wc), 0);	/* nothing flushed */

	connect_on(srq, NULL);	/* a second pair: the SRQ's 3 WQEs are its */
	for (uint32_t id = 0; id < 3; id++) {
		send_msg(f.a.qp, id);
		expect_sends(1);
		poll_exact(f.b.cq, &wc, 1);
		check_recv(&wc, f.b.qp->qp_num, id);
		assert_int_equal(wc.wr_id, id);
	}
	assert_int_equal(droce_destroy_srq(srq), EBUSY);
	fx_destroy_qps(&f);
	assert_int_equal(droce_destroy_srq(srq), EBUSY);	/* qb0 still on it */
	assert_int_equal(droce_destroy_qp(qa0), 0);
	assert_int_equal(droce_destroy_qp(qb0), 0);
	fx_expect_no_event(&f.b);
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

/* Creation, modify and post limits, as ibverbs. */
static void
test_srq_bad_attrs_bad_flow(void **state)
{
	struct droce_srq_init_attr init = { .attr = { 0, 1, 0 } };
	struct droce_srq_attr attr;
	struct droce_sge sge[3];
	struct droce_recv_wr wr[3], *bad;
	struct droce_srq *srq;

	(void)state;
	open_pair();
	errno = 0;
	assert_null(droce_create_srq(f.b.pd, &init));
	assert_int_equal(errno, EINVAL);
	init.attr.max_wr = DROCE_MAX_QP_WR + 1;
	errno = 0;
	assert_null(droce_create_srq(f.b.pd, &init));
	assert_int_equal(errno, EINVAL);
	init.attr = (struct droce_srq_attr){ 4, DROCE_MAX_SGE + 1, 0 };
	errno = 0;
	assert_null(droce_create_srq(f.b.pd, &init));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_create_srq(NULL, &init));
	assert_int_equal(errno, EINVAL);

	srq = srq_new(4, 2);
	/* a limit must be below max_wr */
	attr = (struct droce_srq_attr){ .srq_limit = 4 };
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_LIMIT), EINVAL);
	attr = (struct droce_srq_attr){ .max_wr = 0 };
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_MAX_WR), EINVAL);
	attr = (struct droce_srq_attr){ .max_wr = DROCE_MAX_QP_WR + 1 };
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_MAX_WR), EINVAL);
	assert_int_equal(droce_modify_srq(srq, &attr, 1 << 2), EINVAL);

	/* num_sge above max_sge: EINVAL at that WR, the ones before taken */
	for (int i = 0; i < 3; i++) {
		sge[i] = (struct droce_sge){ (uintptr_t)(f.b.buf + i * SLOT), SLOT,
					     f.b.mr->lkey };
		wr[i] = (struct droce_recv_wr){ .wr_id = (uint64_t)i, .sg_list = &sge[i],
						.num_sge = 1, .next = i < 2 ? &wr[i + 1] : NULL };
	}
	wr[1].num_sge = 3;
	bad = NULL;
	assert_int_equal(droce_post_srq_recv(srq, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	wr[1].num_sge = 1;
	/* full: ENOMEM at the first WR not taken (1 + 3 = max_wr 4) */
	bad = NULL;
	assert_int_equal(droce_post_srq_recv(srq, &wr[1], &bad), 0);
	assert_int_equal(srq_post(srq, 3), 0);
	bad = NULL;
	assert_int_equal(droce_post_srq_recv(srq, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);

	/* a resize below the 4 WQEs held fails and changes nothing */
	attr = (struct droce_srq_attr){ .max_wr = 3, .srq_limit = 1 };
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_MAX_WR | DROCE_SRQ_LIMIT),
			 EINVAL);
	assert_int_equal(droce_query_srq(srq, &attr), 0);
	assert_int_equal(attr.max_wr, 4);
	assert_int_equal(attr.srq_limit, 0);
	/* growing keeps the WQEs, in order, and takes more */
	attr = (struct droce_srq_attr){ .max_wr = 6 };
	assert_int_equal(droce_modify_srq(srq, &attr, DROCE_SRQ_MAX_WR), 0);
	assert_int_equal(droce_query_srq(srq, &attr), 0);
	assert_int_equal(attr.max_wr, 6);
	assert_int_equal(srq_post(srq, 4), 0);
	assert_int_equal(srq_post(srq, 5), 0);
	assert_int_equal(srq_post(srq, 6), ENOMEM);
	connect_on(srq, NULL);
	/* WQEs 0 to 5, in the order posted, across the resize */
	for (uint32_t id = 0; id < 6; id++) {
		struct droce_wc wc;

		send_msg(f.a.qp, 10 + id);
		expect_sends(1);
		poll_exact(f.b.cq, &wc, 1);
		assert_int_equal(wc.wr_id, id);
		check_recv(&wc, f.b.qp->qp_num, 10 + id);
	}
	fx_destroy_qps(&f);
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

/*
 * A QP on an SRQ that also sends (a ping-pong, as ibv_srq_pingpong): its
 * own posts never touch its receive side, each message takes the next
 * WQE of the SRQ.
 */
static void
test_srq_qp_sends_too(void **state)
{
	struct droce_srq *srq;
	struct droce_wc wc;

	(void)state;
	open_pair();
	srq = srq_new(16, 2);
	connect_on(srq, NULL);
	for (uint64_t w = 0; w < 4; w++)
		assert_int_equal(srq_post(srq, w), 0);
	for (uint32_t id = 0; id < 4; id++) {
		send_msg(f.a.qp, id);
		expect_sends(1);
		poll_exact(f.b.cq, &wc, 1);
		check_recv(&wc, f.b.qp->qp_num, id);
		assert_int_equal(wc.wr_id, id);
		/* the pong: b's SEND into a's own receive queue */
		assert_int_equal(fx_post_recv(f.a.qp, 100 + id, f.a.buf + (8 + id) * SLOT,
					      SLOT, f.a.mr->lkey), 0);
		assert_int_equal(fx_post(f.b.qp, DROCE_WR_SEND, 200 + id, f.b.buf, 16,
					 f.b.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
		poll_exact(f.b.cq, &wc, 1);
		fx_assert_wc(&wc, 200 + id, DROCE_WC_SEND, DROCE_WC_SUCCESS);
		poll_exact(f.a.cq, &wc, 1);
		fx_assert_wc(&wc, 100 + id, DROCE_WC_RECV, DROCE_WC_SUCCESS);
	}
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 0);
	fx_destroy_qps(&f);
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

static struct droce_ah *
ah_to_b(void)
{
	struct droce_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.hop_limit = 64;
	assert_int_equal(tp_dev_query_gid(verbs_tp(f.b.ctx), 0, attr.grh.dgid.raw), 0);
	return droce_create_ah(f.a.pd, &attr);
}

/*
 * UD on an SRQ: 3 senders to 3 QPs of b on one SRQ; each completion names
 * its receiving QP and the sender (src_qp), with the 40-byte GRH first.
 */
static void
test_srq_ud(void **state)
{
	struct droce_qp *qa[3], *qb[3];
	struct droce_ah *ah;
	struct droce_srq *srq;
	bool seen[3] = { false };

	(void)state;
	open_pair();
	srq = srq_new(8, 1);
	for (int i = 0; i < 3; i++) {
		connect_on(srq, &(struct fx_qp_opts){ .type = DROCE_QPT_UD });
		qa[i] = f.a.qp;
		qb[i] = f.b.qp;
	}
	ah = ah_to_b();
	assert_non_null(ah);
	for (uint64_t w = 0; w < 3; w++)
		assert_int_equal(srq_post(srq, w), 0);
	for (uint32_t i = 0; i < 3; i++) {
		struct droce_sge sge = { (uintptr_t)(f.a.buf + i * SLOT), MSG_LEN,
					 f.a.mr->lkey };
		struct droce_send_wr wr, *bad;

		memcpy(f.a.buf + i * SLOT, &i, sizeof(i));
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = DROCE_WR_SEND;
		wr.send_flags = DROCE_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = qb[i]->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		assert_int_equal(droce_post_send(qa[i], &wr, &bad), 0);
	}
	expect_sends(3);
	{
		struct droce_wc wc[3];

		poll_exact(f.b.cq, wc, 3);
		for (int n = 0; n < 3; n++) {
			uint8_t *p = f.b.buf + wc[n].wr_id * SLOT;
			uint32_t id;

			assert_int_equal(wc[n].status, DROCE_WC_SUCCESS);
			assert_int_equal(wc[n].byte_len, 40 + MSG_LEN);
			assert_true(wc[n].wc_flags & DROCE_WC_GRH);
			memcpy(&id, p + 40, sizeof(id));
			assert_true(id < 3);
			assert_false(seen[id]);
			seen[id] = true;
			assert_int_equal(wc[n].qp_num, qb[id]->qp_num);
			assert_int_equal(wc[n].src_qp, qa[id]->qp_num);
			assert_memory_equal(p + 40, f.a.buf + id * SLOT, MSG_LEN);
		}
	}
	assert_int_equal(droce_destroy_ah(ah), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	f.a.qp = f.b.qp = NULL;
	assert_int_equal(droce_destroy_srq(srq), 0);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srq_shared_by_64_qps),
		cmocka_unit_test(test_srq_limit_event_once),
		cmocka_unit_test(test_srq_empty_rnr_then_success),
		cmocka_unit_test(test_srq_qp_lifecycle),
		cmocka_unit_test(test_srq_qp_sends_too),
		cmocka_unit_test(test_srq_bad_attrs_bad_flow),
		cmocka_unit_test(test_srq_ud),
	};

	(void)argc;
	return fx_run_modes(argv[0], "srq", tests, sizeof(tests) / sizeof(tests[0]));
}
