/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dedicated transport lcore mode over the virtual wire: EAL "-l 0,1",
 * the test (the application) on the main lcore, both droce engines on
 * transport lcore 1.  The application touches them only through the post,
 * completion and command rings (lib/transport/tp_lcore.c): droce_progress
 * is a no-op here, so every completion below was produced by lcore 1.
 *
 *   - RC SEND (also inline, from a buffer overwritten right after post),
 *     WRITE, READ, CMP_SWP, FETCH_ADD with byte checks, IPv4 and IPv6 GIDs,
 *     on a clean wire and under loss, duplication, reordering, corruption
 *     (and the same under faults in run-to-completion, for comparison);
 *   - posting until the send and receive queues are full: ENOMEM (never a
 *     block, never a lost WR), then success once completions were polled;
 *   - modify_qp(ERR) and destroy_qp while WRs are in flight and in the
 *     work queues, not yet taken: flushed exactly once, nothing left behind;
 *   - deregistering an MR while WRITEs target it: once droce_dereg_mr has
 *     returned no byte of it changes again, the requester gets
 *     REM_ACCESS_ERR then flushes, and READ/atomics with the stale key fail
 *     the same way (the buffer is freed by then: under ASan a late access
 *     would be a use-after-free).
 */
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
#include "verbs_private.h"
#include "verbs_engine.h"

#define BUF (8u << 20)
#define SLOT (16u << 10)
#define NWR 48			/* WRs in flight per batch: the rings carry many */
#define T_OUT 20.0		/* seconds, generous: 2 busy lcores on 2 cores */
#define TRANSPORT_LCORE 1

#define AREA_WRITE 0u			/* a -> b WRITE slots */
#define AREA_READ (1u << 20)		/* b -> a READ slots (in a) */
#define AREA_SEND (2u << 20)		/* SEND buffers (in b) */
#define AREA_ATOMIC (3u << 20)		/* 8-byte words */

static void
expect_status(const struct droce_wc *wc, enum droce_wc_status st)
{
	if (wc->status != st)
		fail_msg("wr %llu: status %s, expected %s",
			 (unsigned long long)wc->wr_id,
			 droce_wc_status_str(wc->status), droce_wc_status_str(st));
}

static void
dump_end(const char *name, struct fx_end *e)
{
	struct tp_qp_snapshot q;

	printf("# %s: sent %llu rcvd %llu retrans %llu timeouts %llu seq_nak %llu "
	       "rcvd_seq_err %llu dup_req %llu oos_req %llu icrc %llu\n", name,
	       (unsigned long long)fx_counter(e, "sent_pkts"),
	       (unsigned long long)fx_counter(e, "rcvd_pkts"),
	       (unsigned long long)fx_counter(e, "retransmitted_pkts"),
	       (unsigned long long)fx_counter(e, "retransmit_timeouts"),
	       (unsigned long long)fx_counter(e, "sent_seq_nak"),
	       (unsigned long long)fx_counter(e, "rcvd_seq_err"),
	       (unsigned long long)fx_counter(e, "duplicate_request"),
	       (unsigned long long)fx_counter(e, "out_of_seq_request"),
	       (unsigned long long)fx_counter(e, "icrc_err"));
	if (e->qp != NULL &&
	    tp_dev_qp_snapshot(verbs_tp(e->ctx), e->qp->qp_num, &q) == 0)
		printf("# %s qp %u: state %d sq_psn %u comp_psn %u resp_psn %u "
		       "outstanding %u rq %u rd_atomic %u retry_left %u wait_rnr %d\n",
		       name, q.qpn, q.state, q.sq_psn, q.comp_psn, q.resp_psn,
		       q.sq_outstanding, q.rq_posted, q.rd_atomic, q.retry_left,
		       q.wait_rnr);
}

/* What the engines did, when a completion does not come. */
static void
dump_state(struct fx *f)
{
	dump_end("a", &f->a);
	dump_end("b", &f->b);
}

/* n completions on cq, in order of wr_id first..first+n-1, all successful. */
static void
poll_ok(struct fx *f, struct droce_cq *cq, int n, uint64_t first,
	enum droce_wc_opcode op)
{
	struct droce_wc wc[NWR * 2];

	int got;

	assert_true(n <= NWR * 2);
	got = fx_poll(f, cq, wc, n, T_OUT);
	if (got != n)
		dump_state(f);
	assert_int_equal(got, n);
	for (int i = 0; i < n; i++) {
		expect_status(&wc[i], DROCE_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, first + (uint64_t)i);
		assert_int_equal(wc[i].opcode, op);
	}
}

static uint32_t
size_of(uint32_t seed, int i)
{
	return 1 + (seed * 7919u + (uint32_t)i * 2713u) % SLOT;
}

static void
batch_write_read(struct fx *f, uint32_t seed)
{
	fx_fill(f->a.buf + AREA_WRITE, NWR * SLOT, seed);
	memset(f->b.buf + AREA_WRITE, 0, NWR * SLOT);
	memset(f->a.buf + AREA_READ, 0, NWR * SLOT);
	for (int i = 0; i < NWR; i++)
		assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_WRITE, 1000 + i,
					 f->a.buf + AREA_WRITE + i * SLOT,
					 size_of(seed, i), f->a.mr->lkey,
					 (uintptr_t)f->b.buf + AREA_WRITE + i * SLOT,
					 f->b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	poll_ok(f, f->a.cq, NWR, 1000, DROCE_WC_RDMA_WRITE);
	for (int i = 0; i < NWR; i++) {
		uint32_t n = size_of(seed, i);

		assert_memory_equal(f->b.buf + AREA_WRITE + i * SLOT,
				    f->a.buf + AREA_WRITE + i * SLOT, n);
		/* nothing beyond the message */
		assert_int_equal(f->b.buf[AREA_WRITE + i * SLOT + n], 0);
	}
	/* READ the slots back into another area of a */
	for (int i = 0; i < NWR; i++)
		assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_READ, 2000 + i,
					 f->a.buf + AREA_READ + i * SLOT,
					 size_of(seed, i), f->a.mr->lkey,
					 (uintptr_t)f->b.buf + AREA_WRITE + i * SLOT,
					 f->b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	poll_ok(f, f->a.cq, NWR, 2000, DROCE_WC_RDMA_READ);
	for (int i = 0; i < NWR; i++)
		assert_memory_equal(f->a.buf + AREA_READ + i * SLOT,
				    f->a.buf + AREA_WRITE + i * SLOT, size_of(seed, i));
}

static void
batch_send(struct fx *f, uint32_t seed)
{
	struct droce_wc wc[NWR];
	uint8_t inl[200];
	struct droce_sge sge = { (uintptr_t)inl, sizeof(inl), 0 };
	struct droce_send_wr wr, *bad;

	memset(f->b.buf + AREA_SEND, 0, (NWR + 1) * SLOT);
	for (int i = 0; i <= NWR; i++)
		assert_int_equal(fx_post_recv(f->b.qp, 3000 + i,
					      f->b.buf + AREA_SEND + i * SLOT, SLOT,
					      f->b.mr->lkey), 0);
	for (int i = 0; i < NWR; i++)
		assert_int_equal(fx_post(f->a.qp, DROCE_WR_SEND, 4000 + i,
					 f->a.buf + AREA_WRITE + i * SLOT,
					 size_of(seed + 1, i), f->a.mr->lkey, 0, 0,
					 DROCE_SEND_SIGNALED), 0);
	/* inline: the bytes are taken at post; the buffer is reused at once */
	fx_fill(inl, sizeof(inl), seed + 2);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4000 + NWR;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE;
	assert_int_equal(droce_post_send(f->a.qp, &wr, &bad), 0);
	memset(inl, 0xA5, sizeof(inl));
	memset(&wr, 0xff, sizeof(wr));		/* and the WR itself */
	poll_ok(f, f->a.cq, NWR + 1, 4000, DROCE_WC_SEND);
	assert_int_equal(fx_poll(f, f->b.cq, wc, NWR, T_OUT), NWR);
	for (int i = 0; i < NWR; i++) {
		expect_status(&wc[i], DROCE_WC_SUCCESS);
		assert_int_equal(wc[i].wr_id, 3000 + i);
		assert_int_equal(wc[i].opcode, DROCE_WC_RECV);
		assert_int_equal(wc[i].byte_len, size_of(seed + 1, i));
		assert_memory_equal(f->b.buf + AREA_SEND + i * SLOT,
				    f->a.buf + AREA_WRITE + i * SLOT, size_of(seed + 1, i));
	}
	assert_int_equal(fx_poll(f, f->b.cq, wc, 1, T_OUT), 1);
	expect_status(&wc[0], DROCE_WC_SUCCESS);
	assert_int_equal(wc[0].byte_len, sizeof(inl));
	fx_fill(inl, sizeof(inl), seed + 2);
	assert_memory_equal(f->b.buf + AREA_SEND + NWR * SLOT, inl, sizeof(inl));
}

static void
batch_atomics(struct fx *f)
{
	uint64_t *word = (uint64_t *)(f->b.buf + AREA_ATOMIC);
	uint64_t *res = (uint64_t *)(f->a.buf + AREA_ATOMIC);
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	const int n = 16;

	for (int i = 0; i < n; i++)
		word[i] = (uint64_t)i * 1000;
	memset(res, 0, 2 * (size_t)n * 8);
	/* FETCH_ADD i, then CMP_SWP (expect i*1000+i, swap 7): in order */
	for (int i = 0; i < 2 * n; i++) {
		int w = i % n;

		sge = (struct droce_sge){ (uintptr_t)&res[i], 8, f->a.mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 5000 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = DROCE_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)&word[w];
		wr.wr.atomic.rkey = f->b.mr->rkey;
		if (i < n) {
			wr.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.compare_add = (uint64_t)w;
		} else {
			wr.opcode = DROCE_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = (uint64_t)w * 1000 + (uint64_t)w;
			wr.wr.atomic.swap = 7;
		}
		assert_int_equal(droce_post_send(f->a.qp, &wr, &bad), 0);
	}
	{
		struct droce_wc wc[32];

		assert_int_equal(fx_poll(f, f->a.cq, wc, 2 * n, T_OUT), 2 * n);
		for (int i = 0; i < 2 * n; i++) {
			expect_status(&wc[i], DROCE_WC_SUCCESS);
			assert_int_equal(wc[i].wr_id, 5000 + i);
			assert_int_equal(wc[i].opcode, i < n ? DROCE_WC_FETCH_ADD :
							       DROCE_WC_COMP_SWAP);
		}
	}
	for (int i = 0; i < n; i++) {
		assert_true(res[i] == (uint64_t)i * 1000);
		assert_true(res[n + i] == (uint64_t)i * 1000 + (uint64_t)i);
		assert_true(word[i] == 7);
	}
}

static void
exercise(struct fx *f, uint32_t seed)
{
	batch_write_read(f, seed);
	batch_send(f, seed);
	batch_atomics(f);
}

static void
run_ops(const struct vwire_config *wire, bool ipv6, int rounds, unsigned int engine_lcore)
{
	struct vwire_config w = wire != NULL ? *wire : (struct vwire_config){ 0 };
	uint64_t sender = wire != NULL ? UINT64_C(1) << engine_lcore : 0;
	struct fx_faults_seen ab, ba;
	struct fx f;

	fx_watch_faults(&w.a_to_b, &ab);
	fx_watch_faults(&w.b_to_a, &ba);
	fx_open(&f, &w, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .ipv6 = ipv6, .psn = 0xfffff0,
					     .timeout = 10, .max_wr = 256 });
	for (int r = 0; r < rounds; r++)
		exercise(&f, (uint32_t)r + (ipv6 ? 100 : 0));
	fx_check_faults(&f, &ab, &ba);
	/* the engines ran where they should: the faulty frames came from there */
	assert_int_equal(ab.lcores, sender);
	assert_int_equal(ba.lcores, sender);
	fx_close(&f);
}

static void
test_ops_ipv4(void **state)
{
	(void)state;
	run_ops(NULL, false, 3, TRANSPORT_LCORE);
}

static void
test_ops_ipv6(void **state)
{
	(void)state;
	run_ops(NULL, true, 3, TRANSPORT_LCORE);
}

static void
test_ops_under_faults(void **state)
{
	struct vwire_config wire = {
		.pool_size = 16383,
		.a_to_b = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() },
		.b_to_a = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() + 1 },
	};

	(void)state;
	run_ops(&wire, false, 3, TRANSPORT_LCORE);
	wire.a_to_b.seed = fx_seed() + 2;
	wire.b_to_a.seed = fx_seed() + 3;
	run_ops(&wire, true, 2, TRANSPORT_LCORE);
}

/* The same batches with the engines on this lcore: both modes agree. */
static void
test_ops_under_faults_run_to_completion(void **state)
{
	struct vwire_config wire = {
		.pool_size = 16383,
		.a_to_b = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() + 4 },
		.b_to_a = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() + 5 },
	};

	(void)state;
	fx_set_transport_lcore(-1);
	run_ops(&wire, false, 3, rte_get_main_lcore());
	fx_set_transport_lcore(TRANSPORT_LCORE);
}

/*
 * b posts no receive: a's SENDs are RNR-NAKed forever (rnr_retry 7), so
 * exactly max_wr of them are outstanding and the next post is ENOMEM, with
 * bad_wr the first WR not taken.  Then b's receive queue fills the same
 * way; once a polled a completion, a may post again.
 */
static void
test_queue_full_enomem(void **state)
{
	const uint32_t max_wr = 16;
	struct droce_sge sge;
	struct droce_send_wr wr[3], *bad;
	struct droce_wc wc[64];
	uint32_t posted = 0, done = 0;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	/* b's RNR NAKs ask for 491.52 ms (IBTA table 45, 31): a retried SEND
	 * that lands while b fills its receive queue would consume a receive
	 * and free the slot the test expects ENOMEM for (with the default
	 * 10 us it did, once in a full run) */
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = max_wr, .min_rnr_timer = 31 });
	for (uint32_t i = 0; i < max_wr; i++, posted++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, i, f.a.buf, 64,
					 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, 99, f.a.buf, 64,
				 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), ENOMEM);
	/* a chain: ENOMEM at its first WR, nothing of it taken */
	sge = (struct droce_sge){ (uintptr_t)f.a.buf, 64, f.a.mr->lkey };
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		wr[i].wr_id = 200 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = DROCE_WR_SEND;
		wr[i].send_flags = DROCE_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	assert_int_equal(droce_post_send(f.a.qp, &wr[0], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	/* still full a while later: nothing completes without receives */
	fx_spin(&f, 0.05);
	assert_int_equal(droce_poll_cq(f.a.cq, 64, wc), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, 99, f.a.buf, 64,
				 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), ENOMEM);
	assert_true(fx_counter(&f.a, "rcvd_rnr_err") > 0 ||
		    fx_counter(&f.b, "send_rnr_err") > 0);

	/* b's receive queue: max_wr fit, the next is ENOMEM */
	for (uint32_t i = 0; i < max_wr; i++)
		assert_int_equal(fx_post_recv(f.b.qp, 100 + i, f.b.buf + i * 128, 128,
					      f.b.mr->lkey), 0);
	assert_int_equal(fx_post_recv(f.b.qp, 999, f.b.buf, 128, f.b.mr->lkey),
			 ENOMEM);

	/* a's SENDs now complete; every completion frees one slot */
	while (done < posted) {
		int n = fx_poll(&f, f.a.cq, wc, 1, T_OUT);

		assert_int_equal(n, 1);
		expect_status(&wc[0], DROCE_WC_SUCCESS);
		assert_int_equal(wc[0].wr_id, done);
		done++;
		if (posted < 2 * max_wr) {
			/* b needs a receive for each further SEND */
			int rc;

			do {
				rc = fx_post_recv(f.b.qp, 100 + posted, f.b.buf, 128,
						  f.b.mr->lkey);
				if (rc == ENOMEM)
					(void)fx_poll(&f, f.b.cq, wc + 1, 1, 0.001);
			} while (rc == ENOMEM);
			assert_int_equal(rc, 0);
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, posted, f.a.buf, 64,
						 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
			posted++;
		}
	}
	assert_int_equal(posted, 2 * max_wr);
	fx_close(&f);
}

/*
 * Control path against a busy data path: a QP stuck in RNR retries with
 * its queue full is moved to ERR (everything completes, flushed, once),
 * WRs posted in ERR are flushed too, and QPs destroyed with WRs still in
 * their work queues leave nothing behind: new QPs on the same CQs work.
 */
static void
test_modify_err_and_destroy_while_busy(void **state)
{
	const uint32_t max_wr = 32;
	struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };
	struct droce_wc wc[64];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = max_wr });
	for (uint32_t i = 0; i < max_wr; i++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, i, f.a.buf, 64,
					 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
	fx_spin(&f, 0.02);			/* RNR NAKs, retries */
	assert_int_equal(droce_modify_qp(f.a.qp, &attr, DROCE_QP_STATE), 0);
	for (uint32_t i = 0; i < 5; i++)	/* accepted in ERR, flushed */
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, max_wr + i, f.a.buf, 64,
					 f.a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, (int)max_wr + 5, T_OUT),
			 (int)max_wr + 5);
	for (uint32_t i = 0; i < max_wr + 5; i++) {
		expect_status(&wc[i], DROCE_WC_WR_FLUSH_ERR);
		assert_int_equal(wc[i].wr_id, i);
	}
	fx_spin(&f, 0.02);
	assert_int_equal(droce_poll_cq(f.a.cq, 64, wc), 0);	/* exactly once */
	fx_destroy_qps(&f);

	/* destroy with WRs in flight and in the rings */
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = max_wr });
	for (uint32_t i = 0; i < max_wr; i++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, i, f.a.buf,
					 65536, f.a.mr->lkey, (uintptr_t)f.b.buf,
					 f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	fx_destroy_qps(&f);
	fx_spin(&f, 0.05);
	/* what completed before the destroy, if anything: taken away */
	while (droce_poll_cq(f.a.cq, 64, wc) > 0)
		;
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = 256 });
	exercise(&f, 77);
	fx_close(&f);
}

static uint32_t
poll_status(struct fx *f, uint32_t n, uint32_t *ok, uint32_t *acc, uint32_t *flush)
{
	struct droce_wc wc[64];
	uint32_t got = 0;

	while (got < n) {
		int r = fx_poll(f, f->a.cq, wc, (int)RTE_MIN(n - got, 64u), T_OUT);

		assert_true(r > 0);
		for (int i = 0; i < r; i++) {
			switch (wc[i].status) {
			case DROCE_WC_SUCCESS:
				/* no success after the first error */
				assert_int_equal(*acc + *flush, 0);
				(*ok)++;
				break;
			case DROCE_WC_REM_ACCESS_ERR:
				assert_int_equal(*acc + *flush, 0);
				(*acc)++;
				break;
			case DROCE_WC_WR_FLUSH_ERR:
				assert_int_equal(*acc, 1);
				(*flush)++;
				break;
			default:
				expect_status(&wc[i], DROCE_WC_SUCCESS);
			}
		}
		got += (uint32_t)r;
	}
	return got;
}

static void
expect_one(struct fx *f, enum droce_wr_opcode op, void *laddr, uint32_t len,
	   uint64_t raddr, uint32_t rkey, enum droce_wc_status st)
{
	struct droce_wc wc;

	fx_destroy_qps(f);
	fx_connect(f, &(struct fx_qp_opts){ .max_wr = 64 });
	assert_int_equal(fx_post(f->a.qp, op, 77, laddr, len, f->a.mr->lkey, raddr,
				 rkey, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(f, f->a.cq, &wc, 1, T_OUT), 1);
	expect_status(&wc, st);
}

static void
test_dereg_mr_under_traffic(void **state)
{
	const size_t len = 1u << 20;
	const uint32_t msg = 64u << 10, depth = 16, before = 64;
	uint32_t posted = 0, got = 0, ok = 0, acc = 0, flush = 0, rkey;
	uint8_t *buf2 = aligned_alloc(4096, len);
	struct droce_mr *mr2;
	struct fx f;

	(void)state;
	assert_non_null(buf2);
	memset(buf2, 0, len);
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .max_wr = 64 });
	mr2 = droce_reg_mr(f.b.pd, buf2, len, DROCE_ACCESS_LOCAL_WRITE |
			   DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			   DROCE_ACCESS_REMOTE_ATOMIC);
	assert_non_null(mr2);
	rkey = mr2->rkey;
	fx_fill(f.a.buf, len, 9);

	/* keep `depth` WRITEs in flight; deregister after `before` completed */
	while (got < before) {
		while (posted - got < depth) {
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, posted,
						 f.a.buf + (posted % 16) * msg, msg,
						 f.a.mr->lkey,
						 (uintptr_t)buf2 + (posted % 16) * msg, rkey,
						 DROCE_SEND_SIGNALED), 0);
			posted++;
		}
		got += poll_status(&f, 1, &ok, &acc, &flush);
	}
	assert_int_equal(acc, 0);
	assert_int_equal(droce_dereg_mr(mr2), 0);
	/* from here on nothing may write into buf2 */
	memset(buf2, 0xEE, len);
	/* more WRITEs with the dead key, while the earlier ones drain */
	for (uint32_t i = 0; i < 8; i++, posted++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, posted, f.a.buf,
					 msg, f.a.mr->lkey, (uintptr_t)buf2, rkey,
					 DROCE_SEND_SIGNALED), 0);
	got += poll_status(&f, posted - got, &ok, &acc, &flush);
	fx_spin(&f, 0.05);
	printf("# %u WRITEs: %u succeeded, %u REM_ACCESS_ERR, %u flushed\n",
	       posted, ok, acc, flush);
	assert_int_equal(acc, 1);
	assert_true(ok >= before);
	assert_int_equal(ok + acc + flush, posted);
	for (size_t i = 0; i < len; i++)
		if (buf2[i] != 0xEE)
			fail_msg("byte %zu of the deregistered MR changed", i);
	free(buf2);
	/* the stale key fails for READ and atomics too (fresh QPs each) */
	expect_one(&f, DROCE_WR_RDMA_READ, f.a.buf, 4096, (uintptr_t)buf2, rkey,
		   DROCE_WC_REM_ACCESS_ERR);
	expect_one(&f, DROCE_WR_ATOMIC_FETCH_AND_ADD, f.a.buf, 8, (uintptr_t)buf2,
		   rkey, DROCE_WC_REM_ACCESS_ERR);
	expect_one(&f, DROCE_WR_RDMA_WRITE, f.a.buf, 8, (uintptr_t)buf2, rkey,
		   DROCE_WC_REM_ACCESS_ERR);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_ipv4),
		cmocka_unit_test(test_ops_ipv6),
		cmocka_unit_test(test_ops_under_faults),
		cmocka_unit_test(test_ops_under_faults_run_to_completion),
		cmocka_unit_test(test_queue_full_enomem),
		cmocka_unit_test(test_modify_err_and_destroy_while_busy),
		cmocka_unit_test(test_dereg_mr_under_traffic),
	};

	(void)argc;
	fx_eal_init_transport_lcore(argv[0], TRANSPORT_LCORE);
	return fx_result(cmocka_run_group_tests_name("lcores_vwire", tests, NULL, NULL));
}
