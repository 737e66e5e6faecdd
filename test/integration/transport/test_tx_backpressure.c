/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit backpressure: many QPs offer more frames in one round than the
 * transmit queue holds, over a virtual wire whose ring takes only a few
 * frames per round.  A full transmit queue must hold the requester back
 * (the frames it did not build are built in a later round), never drop a
 * frame the transport counted as sent: no send_err, no retransmission,
 * every WRITE completes with SUCCESS and its bytes are in the remote
 * buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_mempool.h>

#include "tp_fixture.h"
#include "vwire.h"

#define NQP 128
#define WR_PER_QP 8
#define WR_LEN 2048		/* two packets at path MTU 1024 */
#define NWR (NQP * WR_PER_QP)
#define BUF ((size_t)NWR * WR_LEN)
/* frames in flight on each direction of the wire: far fewer than offered */
#define WIRE_RING 64

struct bp {
	struct fx f;
	struct droce_qp *qa[NQP];
	struct droce_qp *qb[NQP];
};

static struct bp bp;

/* NQP connected pairs; the fixture's own qp fields end up NULL. */
static void
connect_pairs(struct bp *t, const struct fx_qp_opts *o)
{
	for (unsigned int i = 0; i < NQP; i++) {
		fx_connect(&t->f, o);
		t->qa[i] = t->f.a.qp;
		t->qb[i] = t->f.b.qp;
		t->f.a.qp = t->f.b.qp = NULL;
	}
}

static void
destroy_pairs(struct bp *t)
{
	for (unsigned int i = 0; i < NQP; i++) {
		if (t->qa[i] != NULL)
			assert_int_equal(droce_destroy_qp(t->qa[i]), 0);
		if (t->qb[i] != NULL)
			assert_int_equal(droce_destroy_qp(t->qb[i]), 0);
		t->qa[i] = t->qb[i] = NULL;
	}
}

/*
 * Every QP posts all its WRITEs before the engines run, so the first round
 * offers NQP * WR_PER_QP * 2 = 2048 frames: twice the transmit queue.
 * A 67 ms ACK timeout (timeout 14) cannot expire while frames wait their
 * turn, so any retransmission would mean a frame was lost.
 */
static void
test_many_qps_full_txq(void **state)
{
	struct fx_qp_opts o = { .timeout = 14, .max_wr = WR_PER_QP };
	struct bp *t = &bp;
	static struct droce_wc wc[NWR];
	int n;

	(void)state;
	connect_pairs(t, &o);
	fx_fill(t->f.a.buf, BUF, 12);
	memset(t->f.b.buf, 0, BUF);
	for (unsigned int i = 0; i < NWR; i++) {
		size_t off = (size_t)i * WR_LEN;

		assert_int_equal(fx_post(t->qa[i % NQP], DROCE_WR_RDMA_WRITE, i,
					 t->f.a.buf + off, WR_LEN, t->f.a.mr->lkey,
					 (uintptr_t)(t->f.b.buf + off), t->f.b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
	}
	n = fx_poll(&t->f, t->f.a.cq, wc, NWR, 30);
	assert_int_equal(n, NWR);
	for (int i = 0; i < n; i++) {
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
		assert_int_equal(wc[i].opcode, DROCE_WC_RDMA_WRITE);
	}
	assert_memory_equal(t->f.b.buf, t->f.a.buf, BUF);
	assert_int_equal(fx_counter(&t->f.a, "send_err"), 0);
	assert_int_equal(fx_counter(&t->f.b, "send_err"), 0);
	assert_int_equal(fx_counter(&t->f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&t->f.a, "retransmitted_pkts"), 0);
	assert_int_equal(fx_counter(&t->f.a, "sent_pkts"), 2 * NWR);
	assert_int_equal(fx_counter(&t->f.b, "rdma_recvs"), 2 * NWR);
	/* the scenario did hold the requester back (how often depends on
	 * how the wire drains; the outcomes above are exact) */
	assert_true(fx_counter(&t->f.a, "tx_backpressure") > 0);
	/* the wire drained, every mbuf is back in the pair's pool: also
	 * those a refused burst took in bulk and did not use */
	while (fx_wire_in_flight(t->f.a.link) + fx_wire_in_flight(t->f.b.link) != 0)
		fx_spin(&t->f, 0.001);
	fx_spin(&t->f, 0.005);
	assert_int_equal(rte_mempool_avail_count(t->f.a.link->pool), t->f.a.link->pool->size);
}

static int
setup(void **state)
{
	struct vwire_config wire = { .ring_size = WIRE_RING };

	(void)state;
	fx_open(&bp.f, &wire, BUF);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	destroy_pairs(&bp);
	fx_close(&bp.f);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_many_qps_full_txq, setup, teardown),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
