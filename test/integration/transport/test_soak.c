/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak, one test per transport, each over a faulty virtual wire whose
 * every fault is reported to the test (tp_fixture fx_watch_faults), so the
 * outcome is checked exactly whatever the seed:
 *   RC: a seeded random mix of every RC operation, both directions at
 *       once, over a wire that drops 5%, duplicates 2%, reorders 5%
 *       (window 8) and corrupts 0.1% of the frames each way.  Checked:
 *       every byte that arrives (WRITE targets when the WRITE completes,
 *       SEND payloads when received, READ results, atomic results and the
 *       final counters), every WR completes exactly once, successfully, in
 *       posting order.
 *   UD (IPv6): SENDs over drops, reordering and corruption: each message
 *       is delivered intact exactly once unless its frame was lost
 *       (dropped, or a flip the receiver detects), and then not at all.
 *   UC (IPv4): multi-packet SEND/WRITE with immediate over drops and
 *       corruption: each message is delivered intact, once and in order,
 *       exactly when none of its packets was lost, else not at all.
 * UD and UC see no duplication (neither transport detects a duplicate:
 * IBTA leaves that to the application) and UC no reordering (a packet out
 * of sequence ends the message in progress, 9.7.7), so that the fate of
 * every message follows from the frames the wire reported lost.
 * In every test the receivers dropped exactly the detectable flips.
 *
 * The fault seed is fresh each run and printed; DROCE_SEED=N replays one.
 * DROCE_SOAK_OPS overrides the number of RC operations (default 100000 in
 * all); DROCE_SOAK_OP_MASK (bits of enum soak_op) narrows the mix when
 * hunting a failure.  With the argument "lcore" (EAL lcores 0,1) the RC
 * soak runs with both engines on transport lcore 1, with "shards" (0@0,
 * 1@1, 2@1) each engine sharded over lcores 1 and 2; both check that the
 * faulty frames were sent from the transport lcore.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define BUF (16u << 20)
#define SLOTS 64			/* WRITE/READ/recv slots per side */
#define SLOT_SIZE (32u << 10)
#define WRITE_AREA 0			/* remote side: WRITE targets */
#define READ_AREA (SLOTS * SLOT_SIZE)	/* remote side: read-only pattern */
#define RECV_AREA (2 * SLOTS * SLOT_SIZE)
#define SRC_AREA (3 * SLOTS * SLOT_SIZE)	/* local: source / READ dest */
#define ATOMIC_OFF (4 * SLOTS * SLOT_SIZE)
#define DEPTH 16			/* outstanding WRs per direction */

enum soak_op { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_READ,
	       OP_FADD, OP_CSWAP, OP_MAX };

struct pending {
	uint64_t id;
	enum soak_op op;
	uint32_t len;
	uint32_t slot;
	uint64_t expect_orig;		/* atomics */
};

/* One direction: requester 'src' -> responder 'dst'. */
struct flow {
	struct fx_end *src;
	struct fx_end *dst;
	uint64_t rng;
	uint64_t next_id;
	uint64_t posted;
	uint64_t completed;
	struct pending inflight[DEPTH];	/* ring, posting order */
	uint32_t head, tail;
	/* receive side expectations for this flow's SEND / WRITE_IMM, in order */
	struct pending recv_expect[DEPTH];
	uint32_t rhead, rtail;
	uint64_t recvs_posted, recvs_done;
	uint64_t atomic_value;		/* what the remote counter must hold */
	uint32_t op_mask;		/* operations to draw from */
	uint64_t bytes;
};

static uint64_t
rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
rnd_len(uint64_t *s)
{
	uint32_t r = (uint32_t)(rnd(s) % 100);

	if (r < 55)
		return (uint32_t)(rnd(s) % 257);		/* small, incl. 0 */
	if (r < 90)
		return (uint32_t)(rnd(s) % 4097);
	return (uint32_t)(rnd(s) % SLOT_SIZE);
}

static void
post_recv_slot(struct flow *fl)
{
	uint32_t slot = (uint32_t)(fl->recvs_posted % SLOTS);

	assert_int_equal(fx_post_recv(fl->dst->qp, fl->recvs_posted,
				      fl->dst->buf + RECV_AREA + slot * SLOT_SIZE,
				      SLOT_SIZE, fl->dst->mr->lkey), 0);
	fl->recvs_posted++;
}

static void
post_one(struct flow *fl)
{
	struct pending *p = &fl->inflight[fl->head++ % DEPTH];
	struct fx_end *s = fl->src, *d = fl->dst;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	uint8_t *src;

	memset(p, 0, sizeof(*p));
	p->id = fl->next_id++;
	do
		p->op = (enum soak_op)(rnd(&fl->rng) % OP_MAX);
	while (!(fl->op_mask & (1u << p->op)));
	p->len = rnd_len(&fl->rng);
	p->slot = (uint32_t)(p->id % SLOTS);
	src = s->buf + SRC_AREA + p->slot * SLOT_SIZE;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = p->id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = DROCE_SEND_SIGNALED;
	sge = (struct droce_sge){ (uintptr_t)src, p->len, s->mr->lkey };

	switch (p->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		fx_fill(src, p->len, (uint32_t)p->id);
		wr.opcode = p->op == OP_WRITE ? DROCE_WR_RDMA_WRITE :
						DROCE_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = rte_cpu_to_be_32((uint32_t)p->id);
		wr.wr.rdma.remote_addr = (uintptr_t)d->buf + WRITE_AREA + p->slot * SLOT_SIZE;
		wr.wr.rdma.rkey = d->mr->rkey;
		break;
	case OP_SEND:
	case OP_SEND_IMM:
		fx_fill(src, p->len, (uint32_t)p->id);
		wr.opcode = p->op == OP_SEND ? DROCE_WR_SEND : DROCE_WR_SEND_WITH_IMM;
		wr.imm_data = rte_cpu_to_be_32((uint32_t)p->id);
		break;
	case OP_READ:
		memset(src, 0xcd, p->len);
		wr.opcode = DROCE_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)d->buf + READ_AREA + p->slot * 128;
		wr.wr.rdma.rkey = d->mr->rkey;
		if (p->len > SLOT_SIZE - p->slot * 128)
			p->len = SLOT_SIZE - p->slot * 128;
		sge.length = p->len;
		break;
	case OP_FADD:
	case OP_CSWAP:
		sge.length = p->len = 8;
		wr.opcode = p->op == OP_FADD ? DROCE_WR_ATOMIC_FETCH_AND_ADD :
					       DROCE_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.remote_addr = (uintptr_t)d->buf + ATOMIC_OFF;
		wr.wr.atomic.rkey = d->mr->rkey;
		p->expect_orig = fl->atomic_value;
		if (p->op == OP_FADD) {
			wr.wr.atomic.compare_add = p->id;
			fl->atomic_value += p->id;
		} else {
			wr.wr.atomic.compare_add = fl->atomic_value;
			wr.wr.atomic.swap = rnd(&fl->rng);
			fl->atomic_value = wr.wr.atomic.swap;
		}
		break;
	default:
		fail();
	}
	if (p->op == OP_SEND || p->op == OP_SEND_IMM || p->op == OP_WRITE_IMM) {
		fl->recv_expect[fl->rhead++ % DEPTH] = *p;
		post_recv_slot(fl);
	}
	assert_int_equal(droce_post_send(s->qp, &wr, &bad), 0);
	fl->posted++;
	fl->bytes += p->len;
}

static void
check_send_completion(struct flow *fl, const struct droce_wc *wc)
{
	struct pending *p = &fl->inflight[fl->tail++ % DEPTH];
	uint8_t *local = fl->src->buf + SRC_AREA + p->slot * SLOT_SIZE;

	if (wc->status != DROCE_WC_SUCCESS)
		fail_msg("wr %" PRIu64 " (op %d len %u): %s", p->id, p->op, p->len,
			 droce_wc_status_str(wc->status));
	if (wc->wr_id != p->id)
		fail_msg("completion out of order: got %" PRIu64 ", expected %" PRIu64,
			 wc->wr_id, p->id);
	switch (p->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		/* acknowledged means executed: the bytes are there now */
		assert_memory_equal(fl->dst->buf + WRITE_AREA + p->slot * SLOT_SIZE,
				    local, p->len);
		break;
	case OP_READ:
		assert_memory_equal(local, fl->dst->buf + READ_AREA + p->slot * 128,
				    p->len);
		break;
	case OP_FADD:
	case OP_CSWAP:
		if (*(uint64_t *)local != p->expect_orig)
			fail_msg("atomic wr %" PRIu64 ": orig %" PRIu64 ", expected %" PRIu64,
				 p->id, *(uint64_t *)local, p->expect_orig);
		break;
	default:
		break;
	}
	fl->completed++;
}

static void
check_recv_completion(struct flow *fl, const struct droce_wc *wc)
{
	struct pending *p = &fl->recv_expect[fl->rtail++ % DEPTH];
	uint32_t slot = (uint32_t)(fl->recvs_done % SLOTS);
	uint8_t want[SLOT_SIZE];

	if (wc->status != DROCE_WC_SUCCESS)
		fail_msg("recv for wr %" PRIu64 ": %s", p->id,
			 droce_wc_status_str(wc->status));
	assert_int_equal(wc->wr_id, fl->recvs_done);
	fl->recvs_done++;
	if (p->op == OP_WRITE_IMM) {
		assert_int_equal(wc->opcode, DROCE_WC_RECV_RDMA_WITH_IMM);
	} else {
		assert_int_equal(wc->opcode, DROCE_WC_RECV);
		fx_fill(want, p->len, (uint32_t)p->id);
		assert_memory_equal(fl->dst->buf + RECV_AREA + slot * SLOT_SIZE, want,
				    p->len);
	}
	assert_int_equal(wc->byte_len, p->len);
	if (p->op != OP_SEND) {
		assert_true(wc->wc_flags & DROCE_WC_WITH_IMM);
		assert_int_equal(rte_be_to_cpu_32(wc->imm_data), (uint32_t)p->id);
	}
}

/* Both ends share one CQ for send and receive: route by opcode. */
static void
drain(struct fx_end *e, struct flow *as_src, struct flow *as_dst)
{
	struct droce_wc wc[32];
	int n = droce_poll_cq(e->cq, 32, wc);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (wc[i].opcode & DROCE_WC_RECV)
			check_recv_completion(as_dst, &wc[i]);
		else
			check_send_completion(as_src, &wc[i]);
	}
}

static uint64_t
env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? strtoull(v, NULL, 0) : def;
}

/* The EAL lcores that must send the frames: the engines' (a bit each). */
static uint64_t soak_sender_lcores = UINT64_C(1) << 0;

/*
 * The RC soak's local ACK timeout: 10 (4.2 ms, 8 x that of retry budget).
 * "shards" puts two engines on one CPU, so one waits out the other's time
 * slices (tens of ms on a loaded machine): a peer engine descheduled for
 * longer than the budget exhausts it without a defect (seen once in a full
 * run), and this soak is about loss recovery, not the budget: timeout 14
 * there (8 x 67 ms), as the fixture's two-shard mode.
 */
static uint8_t soak_rc_timeout = 10;

/* What one RC soak ran with (selective repeat on a's / b's QP) and counted. */
struct rc_soak {
	uint64_t seed;
	uint64_t total;
	uint32_t op_mask;		/* 0: DROCE_SOAK_OP_MASK, else all */
	bool a_sr, b_sr;
	uint64_t a_retransmitted, a_timeouts, a_seq_nak_rcvd;
	uint64_t b_retransmitted;
	uint64_t a_sack_rcvd, a_sr_resent, b_sack_sent, b_placed;
	uint64_t b_sack_rcvd, b_sr_resent, a_sack_sent, a_placed;
};

static void
rc_soak(struct rc_soak *r)
{
	uint64_t seed = r->seed;
	uint64_t total = r->total;
	struct fx_faults_seen seen_ab, seen_ba;
	struct vwire_config wire = {
		.pool_size = 16383,
		.a_to_b = { .drop = 0.05, .duplicate = 0.02, .reorder = 0.05,
			    .reorder_window = 8, .corrupt = 0.001, .seed = seed },
		.b_to_a = { .drop = 0.05, .duplicate = 0.02, .reorder = 0.05,
			    .reorder_window = 8, .corrupt = 0.001, .seed = seed + 1 },
	};
	uint32_t op_mask = r->op_mask != 0 ? r->op_mask :
			   (uint32_t)env_u64("DROCE_SOAK_OP_MASK", (1u << OP_MAX) - 1);
	struct flow ab = { .rng = seed * 3 + 1, .op_mask = op_mask };
	struct flow ba = { .rng = seed * 5 + 2, .op_mask = op_mask };
	double start, deadline;
	struct fx f;

	printf("# RC soak: %" PRIu64 " operations%s%s\n", total, r->a_sr ? ", a sr" : "",
	       r->b_sr ? ", b sr" : "");
	fx_watch_faults(&wire.a_to_b, &seen_ab);
	fx_watch_faults(&wire.b_to_a, &seen_ba);
	fx_open(&f, &wire, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = (uint32_t)(seed & 0xffffff),
					     .timeout = soak_rc_timeout, .max_wr = 64,
					     .a_sr = r->a_sr, .b_sr = r->b_sr });
	ab.src = &f.a;
	ab.dst = &f.b;
	ba.src = &f.b;
	ba.dst = &f.a;
	fx_fill(f.a.buf + READ_AREA, SLOTS * SLOT_SIZE, 1);
	fx_fill(f.b.buf + READ_AREA, SLOTS * SLOT_SIZE, 2);

	start = fx_now();
	deadline = start + 30;		/* without a completion: stuck */
	while (ab.completed + ba.completed < total) {
		uint64_t before = ab.completed + ba.completed;

		for (struct flow *fl = &ab; fl != NULL; fl = fl == &ab ? &ba : NULL)
			while (fl->head - fl->tail < DEPTH && fl->rhead - fl->rtail < DEPTH &&
			       fl->posted < total / 2)
				post_one(fl);
		droce_progress(f.a.ctx);
		droce_progress(f.b.ctx);
		drain(&f.a, &ab, &ba);
		drain(&f.b, &ba, &ab);
		if (ab.completed + ba.completed != before)
			deadline = fx_now() + 30;
		else if (fx_now() > deadline)
			fail_msg("seed %" PRIu64 ": no completion for 30 s after %" PRIu64
				 "+%" PRIu64 " completions", seed, ab.completed,
				 ba.completed);
	}
	/* every SEND was received exactly once, nothing extra arrives later */
	fx_spin(&f, 0.05);
	drain(&f.a, &ab, &ba);
	drain(&f.b, &ba, &ab);
	assert_int_equal(ab.recvs_done, ab.recvs_posted);
	assert_int_equal(ba.recvs_done, ba.recvs_posted);
	assert_true(*(uint64_t *)(f.b.buf + ATOMIC_OFF) == ab.atomic_value);
	assert_true(*(uint64_t *)(f.a.buf + ATOMIC_OFF) == ba.atomic_value);

	{
		struct vwire_stats sa, sb;
		double secs = fx_now() - start;

		vwire_get_stats(f.a.link, &sa);
		vwire_get_stats(f.b.link, &sb);
		printf("# %" PRIu64 " ops, %.1f MB in %.1f s; wire a->b: %" PRIu64
		       " frames, %" PRIu64 " dropped, %" PRIu64 " dup, %" PRIu64
		       " reordered, %" PRIu64 " corrupted\n",
		       ab.completed + ba.completed, (ab.bytes + ba.bytes) / 1e6, secs,
		       sa.tx, sa.dropped, sa.duplicated, sa.reordered, sa.corrupted);
		printf("# a: retransmitted %" PRIu64 ", timeouts %" PRIu64
		       ", seq NAKs rcvd %" PRIu64 ", icrc_err %" PRIu64 ", dup requests at b %"
		       PRIu64 "\n", fx_counter(&f.a, "retransmitted_pkts"),
		       fx_counter(&f.a, "retransmit_timeouts"),
		       fx_counter(&f.a, "rcvd_seq_err"), fx_counter(&f.b, "icrc_err"),
		       fx_counter(&f.b, "duplicate_request"));
		/* the faults really happened and were recovered from */
		assert_true(sa.dropped > 0 && sa.duplicated > 0 && sa.reordered > 0);
		assert_true(fx_counter(&f.a, "retransmitted_pkts") > 0);
		assert_true(fx_counter(&f.b, "duplicate_request") > 0);
	}
	fx_check_faults(&f, &seen_ab, &seen_ba);
	printf("# flips a->b: %" PRIu64 " detected, %" PRIu64 " in unchecked fields\n",
	       seen_ab.detectable, seen_ab.undetectable);
	assert_int_equal(seen_ab.lcores, soak_sender_lcores);
	assert_int_equal(seen_ba.lcores, soak_sender_lcores);
	r->a_retransmitted = fx_counter(&f.a, "retransmitted_pkts");
	r->b_retransmitted = fx_counter(&f.b, "retransmitted_pkts");
	r->a_timeouts = fx_counter(&f.a, "retransmit_timeouts");
	r->a_seq_nak_rcvd = fx_counter(&f.a, "rcvd_seq_err");
	r->a_sack_rcvd = fx_counter(&f.a, "sr_sack_rcvd");
	r->a_sr_resent = fx_counter(&f.a, "sr_resent_pkts");
	r->a_sack_sent = fx_counter(&f.a, "sr_sack_sent");
	r->a_placed = fx_counter(&f.a, "sr_ooo_placed");
	r->b_sack_rcvd = fx_counter(&f.b, "sr_sack_rcvd");
	r->b_sr_resent = fx_counter(&f.b, "sr_resent_pkts");
	r->b_sack_sent = fx_counter(&f.b, "sr_sack_sent");
	r->b_placed = fx_counter(&f.b, "sr_ooo_placed");
	/* nothing was taken for a manufacturer-specific opcode it is not */
	assert_int_equal(fx_counter(&f.a, "vendor_opcode_drop"), 0);
	assert_int_equal(fx_counter(&f.b, "vendor_opcode_drop"), 0);
	printf("# sr: a sack rcvd %" PRIu64 " resent %" PRIu64 " | b sack sent %" PRIu64
	       " placed %" PRIu64 " | b->a: b resent %" PRIu64 ", a sack sent %" PRIu64
	       "\n", r->a_sack_rcvd, r->a_sr_resent, r->b_sack_sent, r->b_placed,
	       r->b_sr_resent, r->a_sack_sent);
	fx_close(&f);
}

static void
test_soak_random_mix_under_faults(void **state)
{
	struct rc_soak r = { .seed = fx_seed(), .total = env_u64("DROCE_SOAK_OPS", 100000) };

	(void)state;
	rc_soak(&r);
	/* neither end set selective repeat: nothing of it ran */
	assert_int_equal(r.a_sack_rcvd + r.b_sack_sent + r.a_placed + r.b_placed +
			 r.a_sr_resent + r.b_sr_resent, 0);
}

/*
 * Selective repeat between droce peers (both ends set it): the soak, every
 * byte and completion checked exactly once.  WRITEs (with and without
 * immediate: what the responder places out of order) against go-back-N
 * for the same seed: SACKs and selective resends both ways, no sequence
 * NAK, and under a quarter of go-back-N's retransmissions.  Then the
 * whole mix (SENDs, READs and atomics stay in order: dropped out of
 * order and resent, READ responses go back N), its outcome as exact.
 */
static void
test_soak_sr(void **state)
{
	uint64_t seed = fx_seed(), total = env_u64("DROCE_SOAK_OPS", 10000);
	uint32_t writes = (1u << OP_WRITE) | (1u << OP_WRITE_IMM);
	struct rc_soak gbn = { .seed = seed, .total = total, .op_mask = writes };
	struct rc_soak sr = { .seed = seed, .total = total, .op_mask = writes,
			      .a_sr = true, .b_sr = true };
	struct rc_soak mix = { .seed = seed + 2, .total = total, .a_sr = true, .b_sr = true };

	(void)state;
	rc_soak(&gbn);
	rc_soak(&sr);
	printf("# WRITEs retransmitted a->b: go-back-N %" PRIu64 ", selective repeat %" PRIu64
	       "; b->a: %" PRIu64 ", %" PRIu64 "\n", gbn.a_retransmitted,
	       sr.a_retransmitted, gbn.b_retransmitted, sr.b_retransmitted);
	assert_true(sr.a_sack_rcvd > 0 && sr.b_sack_sent > 0 && sr.b_placed > 0 &&
		    sr.a_sr_resent > 0);
	assert_true(sr.b_sack_rcvd > 0 && sr.a_sack_sent > 0 && sr.a_placed > 0 &&
		    sr.b_sr_resent > 0);
	/* selective repeat never sends a sequence NAK: it sends SACKs */
	assert_int_equal(sr.a_seq_nak_rcvd, 0);
	assert_true(gbn.a_seq_nak_rcvd > 0);
	assert_true(sr.a_retransmitted * 4 < gbn.a_retransmitted);
	assert_true(sr.b_retransmitted * 4 < gbn.b_retransmitted);
	assert_int_equal(gbn.a_sack_rcvd + gbn.b_sack_sent + gbn.a_placed + gbn.b_placed, 0);
	rc_soak(&mix);
	assert_true(mix.a_sack_rcvd > 0 && mix.b_placed > 0 && mix.a_sr_resent > 0);
	assert_true(mix.b_sack_rcvd > 0 && mix.a_placed > 0 && mix.b_sr_resent > 0);
	assert_int_equal(mix.a_seq_nak_rcvd, 0);
}

/* ---- selective repeat set on one end only: go-back-N, counted alike ---- */

#define ONE_MSG (16u << 10)		/* 16 packets at MTU 1024 */
#define ONE_DEPTH 4			/* WRITEs outstanding: 64 packets */
#define ONE_TOTAL 300

struct one_counts {
	uint64_t a_sent, a_retransmitted, a_seq_nak_rcvd, a_timeouts, a_acks_rcvd;
	uint64_t b_seq_nak_sent, b_dup, b_oos, b_acks_sent;
	uint64_t sr_any;		/* every sr_* counter of both ends, summed */
};

static const char *const sr_counter_names[] = {
	"sr_sack_sent", "sr_sack_rcvd", "sr_ooo_placed", "sr_ooo_dropped",
	"sr_resent_pkts", "sr_timeout_hole",
};

/*
 * ONE_TOTAL WRITEs of ONE_MSG a -> b, ONE_DEPTH at a time, over a wire
 * dropping 1 % each way (seeded): each WRITE's bytes checked when it
 * completes, every completion successful and in order.  One flow, so what
 * is sent depends only on the seed: the same run twice sends the same.
 */
static void
one_flow(uint64_t seed, bool a_sr, bool b_sr, struct one_counts *c)
{
	struct vwire_config wire = {
		.a_to_b = { .drop = 0.01, .seed = seed },
		.b_to_a = { .drop = 0.01, .seed = seed + 1 },
	};
	uint32_t posted = 0, done = 0;
	double deadline;
	struct fx f;

	fx_open(&f, &wire, BUF);
	/* timeout 14 (67 ms): no round of a loaded machine (or of ASan) takes
	 * that long, so every timeout is a real loss's, when nothing else
	 * moves, and the run stays a function of the seed */
	fx_connect(&f, &(struct fx_qp_opts){ .psn = (uint32_t)(seed & 0xffffff),
					     .timeout = 14, .a_sr = a_sr, .b_sr = b_sr });
	deadline = fx_now() + 30;
	while (done < ONE_TOTAL) {
		struct droce_wc wc[8];
		int n;

		while (posted < ONE_TOTAL && posted - done < ONE_DEPTH) {
			uint32_t slot = posted % SLOTS;
			uint8_t *src = f.a.buf + SRC_AREA + slot * SLOT_SIZE;
			struct droce_sge sge = { (uintptr_t)src, ONE_MSG, f.a.mr->lkey };
			struct droce_send_wr wr = { .wr_id = posted, .sg_list = &sge,
						    .num_sge = 1, .opcode = DROCE_WR_RDMA_WRITE,
						    .send_flags = DROCE_SEND_SIGNALED }, *bad;

			fx_fill(src, ONE_MSG, posted);
			wr.wr.rdma.remote_addr = (uintptr_t)f.b.buf + WRITE_AREA + slot * SLOT_SIZE;
			wr.wr.rdma.rkey = f.b.mr->rkey;
			assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
			posted++;
		}
		droce_progress(f.a.ctx);
		droce_progress(f.b.ctx);
		n = droce_poll_cq(f.a.cq, 8, wc);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, done++) {
			uint32_t slot = done % SLOTS;

			if (wc[i].status != DROCE_WC_SUCCESS)
				fail_msg("WRITE %u: %s", done, droce_wc_status_str(wc[i].status));
			assert_int_equal(wc[i].wr_id, done);
			assert_memory_equal(f.b.buf + WRITE_AREA + slot * SLOT_SIZE,
					    f.a.buf + SRC_AREA + slot * SLOT_SIZE, ONE_MSG);
			deadline = fx_now() + 30;
		}
		if (fx_now() > deadline)
			fail_msg("seed %" PRIu64 ": %u of %u WRITEs done, none for 30 s", seed,
				 done, ONE_TOTAL);
	}
	c->a_sent = fx_counter(&f.a, "sent_pkts");
	c->a_retransmitted = fx_counter(&f.a, "retransmitted_pkts");
	c->a_seq_nak_rcvd = fx_counter(&f.a, "rcvd_seq_err");
	c->a_timeouts = fx_counter(&f.a, "retransmit_timeouts");
	c->a_acks_rcvd = fx_counter(&f.a, "rcvd_acks");
	c->b_seq_nak_sent = fx_counter(&f.b, "sent_seq_nak");
	c->b_dup = fx_counter(&f.b, "duplicate_request");
	c->b_oos = fx_counter(&f.b, "out_of_seq_request");
	c->b_acks_sent = fx_counter(&f.b, "sent_acks");
	c->sr_any = 0;
	for (size_t i = 0; i < RTE_DIM(sr_counter_names); i++)
		c->sr_any += fx_counter(&f.a, sr_counter_names[i]) +
			     fx_counter(&f.b, sr_counter_names[i]);
	printf("# sr a %d b %d: sent %" PRIu64 ", retransmitted %" PRIu64 ", seq NAKs %"
	       PRIu64 ", timeouts %" PRIu64 ", sr counters %" PRIu64 "\n", a_sr, b_sr,
	       c->a_sent, c->a_retransmitted, c->a_seq_nak_rcvd, c->a_timeouts, c->sr_any);
	fx_close(&f);
}

static void
assert_counts_equal(const struct one_counts *x, const struct one_counts *y)
{
	assert_int_equal(x->a_sent, y->a_sent);
	assert_int_equal(x->a_retransmitted, y->a_retransmitted);
	assert_int_equal(x->a_seq_nak_rcvd, y->a_seq_nak_rcvd);
	assert_int_equal(x->a_timeouts, y->a_timeouts);
	assert_int_equal(x->a_acks_rcvd, y->a_acks_rcvd);
	assert_int_equal(x->b_seq_nak_sent, y->b_seq_nak_sent);
	assert_int_equal(x->b_dup, y->b_dup);
	assert_int_equal(x->b_oos, y->b_oos);
	assert_int_equal(x->b_acks_sent, y->b_acks_sent);
}

/*
 * Selective repeat set on one end only (either one) is go-back-N, counted
 * exactly as when neither set it; set on both, the same flow is repaired
 * by SACKs and selective resends with fewer retransmissions.
 */
static void
test_sr_one_sided(void **state)
{
	uint64_t seed = fx_seed() + 30;
	struct one_counts none, a_only, b_only, both;

	(void)state;
	one_flow(seed, false, false, &none);
	one_flow(seed, true, false, &a_only);
	one_flow(seed, false, true, &b_only);
	one_flow(seed, true, true, &both);
	/* losses happened and go-back-N repaired them */
	assert_true(none.a_retransmitted > 0 && none.b_seq_nak_sent > 0);
	assert_int_equal(none.sr_any, 0);
	assert_int_equal(a_only.sr_any, 0);
	assert_int_equal(b_only.sr_any, 0);
	assert_counts_equal(&a_only, &none);
	assert_counts_equal(&b_only, &none);
	assert_int_equal(both.b_seq_nak_sent, 0);
	assert_true(both.sr_any > 0);
	assert_true(both.a_retransmitted * 2 < none.a_retransmitted);
}

/* ---- UD and UC: every message delivered exactly when none of it was lost ---- */

#define MSG_DEPTH 16		/* messages in flight, so the wire never fills */
#define MSG_RECVS 64		/* receive WQEs kept posted */
#define MSG_SLOT (16u << 10)	/* per message: source, receive, WRITE target */
#define UD_GRH 40

enum fate { FATE_NONE, FATE_LOST, FATE_DELIVERED };

/* One direction a -> b of messages numbered 0, 1, ... */
struct msgs {
	struct fx *f;
	uint32_t total;
	uint32_t posted, send_done, recvs_posted, recvs_done;
	uint32_t resolved;		/* lost + delivered */
	uint32_t last_delivered;	/* UC: delivery is in order */
	uint32_t lost, delivered;
	uint8_t *fate;			/* enum fate, by message */
	uint32_t *len;
	uint32_t *psn_msg;		/* UC: message of each PSN offset */
	uint32_t start_psn, next_psn;
	uint64_t rng;
	struct fx_faults_seen seen_ab, seen_ba;
};

static void
msgs_init(struct msgs *m, struct fx *f, uint32_t total, uint32_t max_pkts,
	  uint32_t psn, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	m->f = f;
	m->total = total;
	m->fate = calloc(total, 1);
	m->len = calloc(total, sizeof(*m->len));
	m->psn_msg = calloc((size_t)total * max_pkts, sizeof(*m->psn_msg));
	assert_true(m->fate != NULL && m->len != NULL && m->psn_msg != NULL);
	m->start_psn = m->next_psn = psn;
	m->last_delivered = UINT32_MAX;
	m->rng = seed;
}

static void
msgs_free(struct msgs *m)
{
	free(m->fate);
	free(m->len);
	free(m->psn_msg);
}

static void
msg_resolve(struct msgs *m, uint32_t id, enum fate fate)
{
	assert_true(id < m->posted);
	if (m->fate[id] != FATE_NONE)
		fail_msg("message %u: %s, and then %s", id,
			 m->fate[id] == FATE_LOST ? "lost" : "delivered",
			 fate == FATE_LOST ? "lost" : "delivered");
	m->fate[id] = (uint8_t)fate;
	m->resolved++;
	if (fate == FATE_LOST)
		m->lost++;
	else
		m->delivered++;
}

/* The message's bytes: its number in the first 4, then a pattern of it. */
static void
msg_fill(uint8_t *p, uint32_t id, uint32_t len)
{
	fx_fill(p, len, id);
	memcpy(p, &id, RTE_MIN(len, (uint32_t)sizeof(id)));
}

static void
msg_expect_bytes(const uint8_t *got, uint32_t id, uint32_t len)
{
	static uint8_t want[MSG_SLOT];

	msg_fill(want, id, len);
	if (memcmp(got, want, len) != 0)
		fail_msg("message %u (%u bytes) arrived with other bytes", id, len);
}

static void
msg_post_recv(struct msgs *m)
{
	uint32_t slot = m->recvs_posted % MSG_RECVS;

	assert_int_equal(fx_post_recv(m->f->b.qp, m->recvs_posted,
				      m->f->b.buf + RECV_AREA + slot * MSG_SLOT, MSG_SLOT,
				      m->f->b.mr->lkey), 0);
	m->recvs_posted++;
}

/*
 * Open f over wire (faults a -> b reported, lost frames to lost), connect
 * the QPs, count messages from 0 and post the receives.
 */
static void
msgs_open(struct msgs *m, struct fx *f, struct vwire_config *wire,
	  void (*lost)(void *, const struct roce_pkt *, const uint8_t *),
	  const struct fx_qp_opts *o, uint32_t max_pkts, uint64_t seed)
{
	msgs_init(m, f, (uint32_t)env_u64("DROCE_SOAK_MSGS", 20000), max_pkts, o->psn,
		  seed);
	fx_watch_faults(&wire->a_to_b, &m->seen_ab);
	fx_watch_faults(&wire->b_to_a, &m->seen_ba);
	m->seen_ab.lost = lost;
	m->seen_ab.lost_arg = m;
	fx_open(f, wire, BUF);
	fx_connect(f, o);
	for (int i = 0; i < MSG_RECVS; i++)
		msg_post_recv(m);
}

static uint8_t *
msg_src(struct msgs *m, uint32_t id)
{
	return m->f->a.buf + SRC_AREA + (id % MSG_DEPTH) * MSG_SLOT;
}

/* Poll cq: every completion successful, wr_ids in order from *next, to fn. */
static void
msg_poll(struct msgs *m, struct droce_cq *cq, uint32_t *next, const char *what,
	 void (*fn)(struct msgs *, const struct droce_wc *))
{
	struct droce_wc wc[32];
	int n = droce_poll_cq(cq, 32, wc);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS)
			fail_msg("%s %" PRIu64 ": %s", what, wc[i].wr_id,
				 droce_wc_status_str(wc[i].status));
		assert_int_equal(wc[i].wr_id, *next);
		if (fn != NULL)
			fn(m, &wc[i]);
		(*next)++;
	}
}

/* Post, progress, poll until every message is resolved or nothing moves. */
static void
msgs_run(struct msgs *m, void (*post)(struct msgs *), void (*recv)(struct msgs *,
	 const struct droce_wc *))
{
	double deadline = fx_now() + 30;

	while (m->resolved < m->total) {
		uint32_t before = m->resolved;

		while (m->posted < m->total && m->posted - m->resolved < MSG_DEPTH &&
		       m->posted - m->send_done < MSG_DEPTH)
			post(m);
		droce_progress(m->f->a.ctx);
		droce_progress(m->f->b.ctx);
		msg_poll(m, m->f->a.cq, &m->send_done, "send of message", NULL);
		msg_poll(m, m->f->b.cq, &m->recvs_done, "receive", recv);
		if (m->resolved != before)
			deadline = fx_now() + 30;
		else if (fx_now() > deadline)
			fail_msg("%u of %u messages resolved, none for 30 s (%u lost, "
				 "%u delivered)", m->resolved, m->total, m->lost,
				 m->delivered);
	}
	while (m->send_done < m->total) {
		droce_progress(m->f->a.ctx);
		msg_poll(m, m->f->a.cq, &m->send_done, "send of message", NULL);
	}
}

/*
 * After the run: the wire's faults as reported, nothing more arrives,
 * nothing refused by the link or dropped for want of a receive buffer.
 */
static void
msgs_check_end(struct msgs *m)
{
	struct droce_wc wc;

	fx_check_faults(m->f, &m->seen_ab, &m->seen_ba);
	assert_int_equal(droce_poll_cq(m->f->b.cq, 1, &wc), 0);
	assert_int_equal(m->lost + m->delivered, m->total);
	assert_int_equal(fx_counter(&m->f->a, "send_err"), 0);
	assert_int_equal(fx_counter(&m->f->b, "rx_no_recv_wqe_drop"), 0);
	for (uint32_t i = 0; i < m->total; i++)
		assert_int_not_equal(m->fate[i], FATE_NONE);
}

/* UD: one frame per message; the message number is in its payload. */
static void
ud_lost(void *arg, const struct roce_pkt *sent, const uint8_t *frame)
{
	struct msgs *m = arg;
	uint32_t id;

	assert_true(sent->payload_len >= sizeof(id));
	memcpy(&id, frame + sent->payload_off, sizeof(id));
	msg_resolve(m, id, FATE_LOST);
}

static struct droce_ah *ud_ah;

static void
ud_post(struct msgs *m)
{
	uint32_t id = m->posted, len = 4 + (uint32_t)(rnd(&m->rng) % 4093);
	struct droce_sge sge = { (uintptr_t)msg_src(m, id), len, m->f->a.mr->lkey };
	struct droce_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_SEND,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ud_ah;
	wr.wr.ud.remote_qpn = m->f->b.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	m->len[id] = len;
	msg_fill(msg_src(m, id), id, len);
	m->posted++;
	assert_int_equal(droce_post_send(m->f->a.qp, &wr, &bad), 0);
}

static void
ud_recv(struct msgs *m, const struct droce_wc *wc)
{
	const uint8_t *buf = m->f->b.buf + RECV_AREA + (m->recvs_done % MSG_RECVS) * MSG_SLOT;
	uint32_t id;

	assert_int_equal(wc->opcode, DROCE_WC_RECV);
	assert_int_equal(wc->src_qp, m->f->a.qp->qp_num);
	memcpy(&id, buf + UD_GRH, sizeof(id));
	assert_true(id < m->posted);
	assert_int_equal(wc->byte_len, UD_GRH + m->len[id]);
	msg_expect_bytes(buf + UD_GRH, id, m->len[id]);
	msg_resolve(m, id, FATE_DELIVERED);
	msg_post_recv(m);
}

static void
test_soak_ud_under_faults(void **state)
{
	uint64_t seed = fx_seed() + 10;
	struct vwire_config wire = {
		.a_to_b = { .drop = 0.05, .reorder = 0.05, .reorder_window = 8,
			    .corrupt = 0.01, .seed = seed },
		.b_to_a = { .seed = seed + 1 },
	};
	struct droce_ah_attr ah = { .is_global = 1, .port_num = 1,
				    .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct msgs m;
	struct fx f;

	(void)state;
	msgs_open(&m, &f, &wire, ud_lost,
		  &(struct fx_qp_opts){ .type = DROCE_QPT_UD, .max_wr = 128,
					.mtu = DROCE_MTU_4096 }, 1, seed);
	assert_int_equal(tp_dev_query_gid(verbs_tp(f.b.ctx), 1, ah.grh.dgid.raw), 0);
	ud_ah = droce_create_ah(f.a.pd, &ah);
	assert_non_null(ud_ah);
	msgs_run(&m, ud_post, ud_recv);
	msgs_check_end(&m);
	/* every frame that arrived intact was delivered: nothing else */
	assert_int_equal(fx_counter(&f.b, "rcvd_pkts"), m.delivered);
	assert_int_equal(m.lost, m.seen_ab.dropped + m.seen_ab.detectable);
	printf("# UD (IPv6): %u messages, %u delivered, %u lost (%" PRIu64 " dropped, %"
	       PRIu64 " flips detected, %" PRIu64 " in unchecked fields)\n", m.total,
	       m.delivered, m.lost, m.seen_ab.dropped, m.seen_ab.detectable,
	       m.seen_ab.undetectable);
	assert_int_equal(droce_destroy_ah(ud_ah), 0);
	msgs_free(&m);
	fx_close(&f);
}

/* UC: the lost packet's PSN names its message. */
static void
uc_lost(void *arg, const struct roce_pkt *sent, const uint8_t *frame)
{
	struct msgs *m = arg;
	uint32_t off = (sent->psn - m->start_psn) & 0xffffff;
	uint32_t id;

	(void)frame;
	assert_true(off < ((m->next_psn - m->start_psn) & 0xffffff));
	id = m->psn_msg[off];
	if (m->fate[id] == FATE_NONE)
		msg_resolve(m, id, FATE_LOST);	/* (its first lost packet) */
}

#define UC_MTU 1024
#define UC_MAX_LEN (8 * UC_MTU)

static void
uc_post(struct msgs *m)
{
	uint32_t id = m->posted, len = (uint32_t)(rnd(&m->rng) % (UC_MAX_LEN + 1));
	uint32_t pkts = len == 0 ? 1 : (len + UC_MTU - 1) / UC_MTU;
	bool write = rnd(&m->rng) % 2 == 0;
	struct fx_end *b = &m->f->b;
	struct droce_sge sge = { (uintptr_t)msg_src(m, id), len, m->f->a.mr->lkey };
	struct droce_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				    .send_flags = DROCE_SEND_SIGNALED,
				    .imm_data = rte_cpu_to_be_32(id) }, *bad;

	if (write) {
		wr.opcode = DROCE_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf + WRITE_AREA +
					 (id % SLOTS) * MSG_SLOT;
		wr.wr.rdma.rkey = b->mr->rkey;
	} else {
		wr.opcode = DROCE_WR_SEND_WITH_IMM;
	}
	m->len[id] = len | (write ? 1u << 31 : 0);
	for (uint32_t k = 0; k < pkts; k++)
		m->psn_msg[((m->next_psn + k - m->start_psn) & 0xffffff)] = id;
	m->next_psn = (m->next_psn + pkts) & 0xffffff;
	msg_fill(msg_src(m, id), id, len);
	m->posted++;
	assert_int_equal(droce_post_send(m->f->a.qp, &wr, &bad), 0);
}

static void
uc_recv(struct msgs *m, const struct droce_wc *wc)
{
	struct fx_end *b = &m->f->b;
	uint32_t id = rte_be_to_cpu_32(wc->imm_data);
	uint32_t len, from;
	bool write;

	assert_true(wc->wc_flags & DROCE_WC_WITH_IMM);
	assert_true(id < m->posted);
	len = m->len[id] & ~(1u << 31);
	write = (m->len[id] >> 31) != 0;
	/* in order: every message skipped since the last one was lost */
	from = m->last_delivered == UINT32_MAX ? 0 : m->last_delivered + 1;
	assert_true(id >= from);
	for (uint32_t k = from; k < id; k++)
		if (m->fate[k] != FATE_LOST)
			fail_msg("message %u delivered, %u before it neither lost nor "
				 "delivered", id, k);
	assert_int_equal(wc->byte_len, len);
	if (write) {
		assert_int_equal(wc->opcode, DROCE_WC_RECV_RDMA_WITH_IMM);
		msg_expect_bytes(b->buf + WRITE_AREA + (id % SLOTS) * MSG_SLOT, id, len);
	} else {
		assert_int_equal(wc->opcode, DROCE_WC_RECV);
		msg_expect_bytes(b->buf + RECV_AREA + (m->recvs_done % MSG_RECVS) * MSG_SLOT,
				 id, len);
	}
	msg_resolve(m, id, FATE_DELIVERED);
	m->last_delivered = id;
	msg_post_recv(m);
}

static void
test_soak_uc_under_faults(void **state)
{
	uint64_t seed = fx_seed() + 20;
	struct vwire_config wire = {
		.a_to_b = { .drop = 0.01, .corrupt = 0.01, .seed = seed },
		.b_to_a = { .seed = seed + 1 },
	};
	struct msgs m;
	struct fx f;

	(void)state;
	msgs_open(&m, &f, &wire, uc_lost,
		  &(struct fx_qp_opts){ .type = DROCE_QPT_UC, .max_wr = 128,
					.psn = (uint32_t)(seed & 0xffffff),
					.access = DROCE_ACCESS_REMOTE_WRITE },
		  UC_MAX_LEN / UC_MTU, seed);
	msgs_run(&m, uc_post, uc_recv);
	msgs_check_end(&m);
	printf("# UC (IPv4): %u messages, %u delivered, %u lost (%" PRIu64 " dropped, %"
	       PRIu64 " flips detected, %" PRIu64 " in unchecked fields), uc_msg_drop %"
	       PRIu64 "\n", m.total, m.delivered, m.lost, m.seen_ab.dropped,
	       m.seen_ab.detectable, m.seen_ab.undetectable,
	       fx_counter(&f.b, "uc_msg_drop"));
	msgs_free(&m);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	static const unsigned int shards[2] = { 1, 2 };
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_soak_random_mix_under_faults),
		cmocka_unit_test(test_soak_ud_under_faults),
		cmocka_unit_test(test_soak_uc_under_faults),
	};
	const struct CMUnitTest rc_only[] = {
		cmocka_unit_test(test_soak_random_mix_under_faults),
	};
	const struct CMUnitTest sr[] = {
		cmocka_unit_test(test_sr_one_sided),
		cmocka_unit_test(test_soak_sr),
	};
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "sr") == 0) {
		/* selective repeat between droce peers (lib/transport README) */
		fx_eal_init(argv[0]);
		return fx_result(cmocka_run_group_tests_name("sr", sr, NULL, NULL));
	}
	if (strcmp(mode, "lcore") == 0) {
		/* the RC soak with both engines on transport lcore 1 */
		fx_eal_init_lcores(argv[0], "0,1");
		fx_set_transport_lcore(1);
	} else if (strcmp(mode, "shards") == 0) {
		/* 3 lcores on a 2-CPU machine: lcore 2 shares CPU 1 with 1;
		 * shard 0 (lcore 1) sends for both shards */
		fx_eal_init_lcores(argv[0], "0@0,1@1,2@1");
		fx_set_transport_lcores(shards, 2);
		soak_rc_timeout = 14;
	} else if (mode[0] == '\0') {
		fx_eal_init(argv[0]);
		return fx_result(cmocka_run_group_tests_name("soak", all, NULL, NULL));
	} else {
		fprintf(stderr, "usage: %s [lcore|shards|sr]\n", argv[0]);
		return 2;
	}
	soak_sender_lcores = UINT64_C(1) << 1;
	return fx_result(cmocka_run_group_tests_name(mode, rc_only, NULL, NULL));
}
