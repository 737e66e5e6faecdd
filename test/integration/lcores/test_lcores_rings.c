/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The work queues and CQ rings between the application and a dedicated
 * transport lcore (lib/transport/README.md "Run modes"): EAL "-l 0,1", the
 * test on the main lcore, both engines on transport lcore 1.
 *
 *   - ENOMEM at exactly max_wr outstanding, for a max_wr below the ring's
 *     power-of-two size, on the SQ and on the RQ, with bad_wr the first WR
 *     not taken; exactly one more post fits per WR retired;
 *   - the CQ overruns at exactly cqe unpolled completions: cqe of them
 *     are all delivered and no error follows, cqe + 1 deliver cqe and then
 *     EOVERFLOW, one completion counted lost;
 *   - the application posts SENDs (inline, one SGE, two SGEs, chains) and
 *     receives while the engine consumes both queues, for thousands of
 *     messages around the rings: every WQE arrives intact (wr_id, length,
 *     every byte in the receive buffer, order);
 *   - a round hook (tp_dev_set_round_hook) runs on the transport lcore,
 *     round after round, and may post there: the SEND it posts from the
 *     lcore completes (wr_id, status) and its bytes arrive; once removed,
 *     it is not called again; set from the lcore itself: EINVAL.
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
#include <rte_lcore.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_engine.h"

#define TRANSPORT_LCORE 1
#define BUF (4u << 20)
#define T_OUT 20.0		/* seconds: 2 busy lcores on a shared machine */

/* a SEND of 64 bytes from a's buffer, signalled */
static int
send64(struct fx *f, uint64_t wr_id)
{
	return fx_post(f->a.qp, DROCE_WR_SEND, wr_id, f->a.buf, 64, f->a.mr->lkey, 0, 0,
		       DROCE_SEND_SIGNALED);
}

/* A connected pair whose work queues take max_wr WRs each. */
static void
open_pair(struct fx *f, uint32_t max_wr)
{
	fx_open(f, NULL, BUF);
	fx_connect(f, &(struct fx_qp_opts){ .max_wr = max_wr });
}

static void
expect_wc(const struct droce_wc *wc, uint64_t wr_id, enum droce_wc_opcode op)
{
	if (wc->status != DROCE_WC_SUCCESS)
		fail_msg("wr %llu: status %s", (unsigned long long)wc->wr_id,
			 droce_wc_status_str(wc->status));
	assert_int_equal(wc->wr_id, wr_id);
	assert_int_equal(wc->opcode, op);
}

/*
 * max_wr 6 (the queues are 8 slots): b posts no receive, so a's SENDs are
 * RNR-NAKed and stay outstanding; exactly 6 are taken.  One receive at b
 * retires exactly one SEND, and then exactly one more post fits.
 */
static void
test_sq_enomem_at_max_wr(void **state)
{
	const uint32_t max_wr = 6;
	struct droce_sge sge;
	struct droce_send_wr wr[2], *bad;
	struct fx f;
	struct droce_wc wc;

	(void)state;
	open_pair(&f, max_wr);
	for (uint32_t i = 0; i < max_wr; i++)
		assert_int_equal(send64(&f, i), 0);
	assert_int_equal(send64(&f, 100), ENOMEM);
	sge = (struct droce_sge){ (uintptr_t)f.a.buf, 64, f.a.mr->lkey };
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 2; i++) {
		wr[i].wr_id = 200 + (uint64_t)i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = DROCE_WR_SEND;
		wr[i].send_flags = DROCE_SEND_SIGNALED;
	}
	wr[0].next = &wr[1];
	bad = NULL;
	assert_int_equal(droce_post_send(f.a.qp, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	fx_spin(&f, 0.05);
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);
	assert_int_equal(send64(&f, 100), ENOMEM);

	/* one receive: one SEND retires, one slot is free, not two */
	assert_int_equal(fx_post_recv(f.b.qp, 0, f.b.buf, 64, f.b.mr->lkey), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, T_OUT), 1);
	expect_wc(&wc, 0, DROCE_WC_SEND);
	assert_int_equal(send64(&f, max_wr), 0);
	assert_int_equal(send64(&f, 100), ENOMEM);
	bad = NULL;
	assert_int_equal(droce_post_send(f.a.qp, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	fx_close(&f);
}

/*
 * The same for b's RQ (max_wr 5, 8 slots), with nothing sent: exactly 5
 * receives are taken; one SEND consumes one, and exactly one more fits.
 */
static void
test_rq_enomem_at_max_wr(void **state)
{
	const uint32_t max_wr = 5;
	struct droce_sge sge;
	struct droce_recv_wr wr[2], *bad;
	struct droce_wc wc;
	struct fx f;

	(void)state;
	open_pair(&f, max_wr);
	for (uint32_t i = 0; i < max_wr; i++)
		assert_int_equal(fx_post_recv(f.b.qp, i, f.b.buf + 64 * i, 64,
					      f.b.mr->lkey), 0);
	assert_int_equal(fx_post_recv(f.b.qp, 100, f.b.buf, 64, f.b.mr->lkey), ENOMEM);
	sge = (struct droce_sge){ (uintptr_t)f.b.buf, 64, f.b.mr->lkey };
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct droce_recv_wr){ .wr_id = 200, .sg_list = &sge, .num_sge = 1,
					.next = &wr[1] };
	wr[1] = (struct droce_recv_wr){ .wr_id = 201, .sg_list = &sge, .num_sge = 1 };
	bad = NULL;
	assert_int_equal(droce_post_recv(f.b.qp, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	fx_spin(&f, 0.05);
	assert_int_equal(fx_post_recv(f.b.qp, 100, f.b.buf, 64, f.b.mr->lkey), ENOMEM);

	assert_int_equal(send64(&f, 7), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, T_OUT), 1);
	expect_wc(&wc, 0, DROCE_WC_RECV);
	assert_int_equal(fx_post_recv(f.b.qp, max_wr, f.b.buf, 64, f.b.mr->lkey), 0);
	assert_int_equal(fx_post_recv(f.b.qp, 100, f.b.buf, 64, f.b.mr->lkey), ENOMEM);
	bad = NULL;
	assert_int_equal(droce_post_recv(f.b.qp, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	fx_close(&f);
}

#define OVR_CQE 16

/* a's QP on a CQ of OVR_CQE, n signalled 8-byte WRITEs nobody polls yet. */
static void
post_unpolled_writes(struct fx *f, int n)
{
	fx_open(f, NULL, BUF);
	assert_int_equal(droce_destroy_cq(f->a.cq), 0);
	f->a.cq = droce_create_cq(f->a.ctx, OVR_CQE, NULL, NULL, 0);
	assert_non_null(f->a.cq);
	assert_int_equal(f->a.cq->cqe, OVR_CQE);
	fx_connect(f, &(struct fx_qp_opts){ .max_wr = 64 });
	fx_fill(f->a.buf, 8u * (unsigned int)n, (uint32_t)n);
	for (int i = 0; i < n; i++)
		assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_WRITE, (uint64_t)i,
					 f->a.buf + 8 * i, 8, f->a.mr->lkey,
					 (uintptr_t)(f->b.buf + 8 * i), f->b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
}

/* Poll a's CQ until want completions, an error or t seconds; how many. */
static int
poll_until(struct fx *f, struct droce_wc *wc, int want, double t, int *err)
{
	int got = 0;

	*err = 0;
	for (double end = fx_now() + t; got < want && fx_now() < end;) {
		int r = droce_poll_cq(f->a.cq, want - got, wc + got);

		if (r < 0) {
			*err = errno;
			break;
		}
		got += r;
	}
	return got;
}

/* cqe completions fit: all delivered, in order, no overrun. */
static void
test_cq_holds_exactly_cqe(void **state)
{
	struct droce_wc wc[OVR_CQE + 1];
	struct fx f;
	int err, got;

	(void)state;
	post_unpolled_writes(&f, OVR_CQE);
	got = poll_until(&f, wc, OVR_CQE, T_OUT, &err);
	assert_int_equal(err, 0);
	assert_int_equal(got, OVR_CQE);
	for (int i = 0; i < got; i++)
		expect_wc(&wc[i], (uint64_t)i, DROCE_WC_RDMA_WRITE);
	/* nothing more, and no error */
	assert_int_equal(poll_until(&f, wc, 1, 0.1, &err), 0);
	assert_int_equal(err, 0);
	assert_int_equal(fx_counter(&f.a, "cq_overflow"), 0);
	assert_memory_equal(f.b.buf, f.a.buf, 8 * OVR_CQE);
	fx_close(&f);
}

/* cqe + 1: the last is lost, cqe are delivered, then EOVERFLOW. */
static void
test_cq_overruns_at_cqe_plus_one(void **state)
{
	struct droce_wc wc[OVR_CQE + 2];
	struct fx f;
	int err, got;

	(void)state;
	post_unpolled_writes(&f, OVR_CQE + 1);
	for (double end = fx_now() + T_OUT; fx_counter(&f.a, "cq_overflow") == 0;)
		if (fx_now() > end)
			fail_msg("no CQ overrun with %d completions on a CQ of %d",
				 OVR_CQE + 1, OVR_CQE);
	got = poll_until(&f, wc, OVR_CQE + 1, T_OUT, &err);
	assert_int_equal(err, EOVERFLOW);
	assert_int_equal(got, OVR_CQE);
	for (int i = 0; i < got; i++)
		expect_wc(&wc[i], (uint64_t)i, DROCE_WC_RDMA_WRITE);
	assert_int_equal(fx_counter(&f.a, "cq_overflow"), 1);
	assert_memory_equal(f.b.buf, f.a.buf, 8 * (OVR_CQE + 1));
	fx_close(&f);
}

/* ---- concurrent post while the engine consumes ---------------------------- */

#define MSGS 20000
#define SQ_WR 50		/* outstanding SENDs: the 64-slot SQ wraps mid-way */
#define RQ_WR 64
#define SLOT 4096u		/* one message's buffer, in a (source) and b */
#define RSLOTS 64u

static uint32_t
msg_len(uint32_t i)
{
	return 1 + (i * 2654435761u >> 7) % 3000;	/* 1..3000: up to 3 packets */
}

static uint8_t
msg_byte(uint32_t i, uint32_t k)
{
	return (uint8_t)(i * 131u + k * 7u + (k >> 8));
}

static void
fill_msg(uint8_t *p, uint32_t i)
{
	for (uint32_t k = 0; k < msg_len(i); k++)
		p[k] = msg_byte(i, k);
}

/*
 * Message i: inline if short enough and i % 3 == 0 (its source is then
 * overwritten right after post), else one SGE or two (i odd); every 5th
 * is posted as a chain with the next one.
 */
static void
post_msgs(struct fx *f, uint32_t i, uint32_t n)
{
	struct droce_sge sge[2][2];
	struct droce_send_wr wr[2], *bad = NULL;
	uint8_t *src[2];

	memset(wr, 0, sizeof(wr));
	for (uint32_t j = 0; j < n; j++) {
		uint32_t m = i + j, len = msg_len(m), half = len / 2;

		src[j] = f->a.buf + (m % RSLOTS) * SLOT;
		fill_msg(src[j], m);
		wr[j].wr_id = m;
		wr[j].opcode = DROCE_WR_SEND;
		wr[j].sg_list = sge[j];
		wr[j].send_flags = DROCE_SEND_SIGNALED;
		sge[j][0] = (struct droce_sge){ (uintptr_t)src[j], len, f->a.mr->lkey };
		wr[j].num_sge = 1;
		if (m % 3 == 0 && len <= DROCE_MAX_INLINE_DATA) {
			wr[j].send_flags |= DROCE_SEND_INLINE;
		} else if (m % 2 == 1 && half > 0) {
			sge[j][0].length = half;
			sge[j][1] = (struct droce_sge){ (uintptr_t)src[j] + half, len - half,
							f->a.mr->lkey };
			wr[j].num_sge = 2;
		}
		wr[j].next = j + 1 < n ? &wr[j + 1] : NULL;
	}
	assert_int_equal(droce_post_send(f->a.qp, &wr[0], &bad), 0);
	for (uint32_t j = 0; j < n; j++)
		if (wr[j].send_flags & DROCE_SEND_INLINE)
			memset(src[j], 0xA5, msg_len(i + j));	/* copied at post */
}

static void
check_recv(struct fx *f, const struct droce_wc *wc, uint32_t i)
{
	const uint8_t *p = f->b.buf + (i % RSLOTS) * SLOT;

	expect_wc(wc, i, DROCE_WC_RECV);
	assert_int_equal(wc->byte_len, msg_len(i));
	for (uint32_t k = 0; k < msg_len(i); k++)
		if (p[k] != msg_byte(i, k))
			fail_msg("message %u byte %u: 0x%02x, expected 0x%02x", i, k, p[k],
				 msg_byte(i, k));
}

static void
test_concurrent_post_intact(void **state)
{
	struct droce_wc wc[64];
	uint32_t sent = 0, sdone = 0, rposted = 0, rdone = 0;
	double end;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	/* 67 ms ACK timeout: the engine lcore shares a loaded machine */
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = RQ_WR, .timeout = 14 });
	for (; rposted < RQ_WR; rposted++)
		assert_int_equal(fx_post_recv(f.b.qp, rposted,
					      f.b.buf + (rposted % RSLOTS) * SLOT, SLOT,
					      f.b.mr->lkey), 0);
	end = fx_now() + 120;
	while (rdone < MSGS) {
		int n;

		if (fx_now() > end)
			fail_msg("stuck: sent %u, send done %u, received %u", sent, sdone,
				 rdone);
		/* a: keep SQ_WR SENDs outstanding (a message's source slot is free
		 * again once it completed: RSLOTS > SQ_WR), never more than b has
		 * receives for (no RNR NAK) */
		while (sent < MSGS && sent - sdone < SQ_WR && sent < rposted) {
			uint32_t k = sent % 5 == 0 && sent + 1 < MSGS &&
				     sent + 1 - sdone < SQ_WR && sent + 1 < rposted ? 2 : 1;

			post_msgs(&f, sent, k);
			sent += k;
		}
		n = droce_poll_cq(f.a.cq, 64, wc);
		assert_true(n >= 0);
		for (int j = 0; j < n; j++) {
			if (wc[j].opcode == DROCE_WC_RECV)
				fail_msg("a received");
			expect_wc(&wc[j], sdone++, DROCE_WC_SEND);
		}
		/* b: every receive checked, its slot posted again at once */
		n = droce_poll_cq(f.b.cq, 64, wc);
		assert_true(n >= 0);
		for (int j = 0; j < n; j++) {
			check_recv(&f, &wc[j], rdone++);
			if (rposted < MSGS) {
				assert_int_equal(fx_post_recv(f.b.qp, rposted,
							      f.b.buf + (rposted % RSLOTS) * SLOT,
							      SLOT, f.b.mr->lkey), 0);
				rposted++;
			}
		}
	}
	assert_int_equal(fx_poll(&f, f.a.cq, wc, (int)(MSGS - sdone), T_OUT),
			 (int)(MSGS - sdone));
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	assert_int_equal(fx_counter(&f.b, "send_rnr_err"), 0);
	fx_close(&f);
}

/* What the hook saw and did (written by the transport lcore). */
static struct {
	struct fx *f;
	uint64_t calls;
	unsigned int lcore;
	int posted;		/* 0: not yet, 1: its SEND posted, -errno */
	int nested;		/* tp_dev_set_round_hook from the lcore itself */
} hook;

static unsigned int
round_hook(void *arg)
{
	(void)arg;
	__atomic_store_n(&hook.lcore, rte_lcore_id(), __ATOMIC_RELAXED);
	if (hook.posted == 0) {
		int rc = send64(hook.f, 77);

		hook.nested = tp_dev_set_round_hook(verbs_tp(hook.f->a.ctx), NULL, NULL);
		__atomic_store_n(&hook.posted, rc == 0 ? 1 : rc, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&hook.calls, hook.calls + 1, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t
hook_calls(void)
{
	return __atomic_load_n(&hook.calls, __ATOMIC_ACQUIRE);
}

static void
test_round_hook(void **state)
{
	struct droce_wc wc;
	uint64_t calls;
	double end;
	struct fx f;

	(void)state;
	open_pair(&f, 16);
	memset(f.a.buf, 0x5C, 64);
	assert_int_equal(fx_post_recv(f.b.qp, 5, f.b.buf, 64, f.b.mr->lkey), 0);
	memset(&hook, 0, sizeof(hook));
	hook.f = &f;
	hook.lcore = UINT32_MAX;
	assert_int_equal(tp_dev_set_round_hook(verbs_tp(f.a.ctx), round_hook, NULL), 0);
	/* the SEND it posted on the lcore completes, its bytes arrive */
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, T_OUT), 1);
	expect_wc(&wc, 77, DROCE_WC_SEND);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, T_OUT), 1);
	expect_wc(&wc, 5, DROCE_WC_RECV);
	assert_int_equal(wc.byte_len, 64);
	for (uint32_t k = 0; k < 64; k++)
		assert_int_equal(f.b.buf[k], 0x5C);
	assert_int_equal(__atomic_load_n(&hook.posted, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(hook.nested, -EINVAL);
	assert_int_equal(__atomic_load_n(&hook.lcore, __ATOMIC_RELAXED), TRANSPORT_LCORE);
	/* round after round */
	calls = hook_calls();
	end = fx_now() + T_OUT;
	while (hook_calls() < calls + 1000 && fx_now() < end)
		;
	assert_true(hook_calls() >= calls + 1000);
	/* removed: not called again once the call returned */
	assert_int_equal(tp_dev_set_round_hook(verbs_tp(f.a.ctx), NULL, NULL), 0);
	calls = hook_calls();
	end = fx_now() + 0.05;
	while (fx_now() < end)
		;
	assert_int_equal(hook_calls(), calls);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sq_enomem_at_max_wr),
		cmocka_unit_test(test_rq_enomem_at_max_wr),
		cmocka_unit_test(test_cq_holds_exactly_cqe),
		cmocka_unit_test(test_cq_overruns_at_cqe_plus_one),
		cmocka_unit_test(test_concurrent_post_intact),
		cmocka_unit_test(test_round_hook),
	};

	(void)argc;
	fx_eal_init_transport_lcore(argv[0], TRANSPORT_LCORE);
	return fx_result(cmocka_run_group_tests_name("lcores_rings_vwire", tests, NULL,
						     NULL));
}
