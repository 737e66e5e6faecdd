/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soak: a seeded random mix of every RC operation, both directions at once,
 * over a wire that drops 5%, duplicates 2%, reorders 5% (window 8) and
 * corrupts 0.1% of the frames each way.  Checked: every byte that arrives
 * (WRITE targets when the WRITE completes, SEND payloads when received,
 * READ results, atomic results and the final counters), and every WR
 * completes exactly once, successfully, in posting order.
 *
 * DROCE_SOAK_SEED and DROCE_SOAK_OPS override the seed and the number of
 * operations (default 100000 in all); the seed is printed so a failure
 * reproduces.  DROCE_SOAK_OP_MASK (bits of enum soak_op) narrows the mix
 * when hunting a failure.
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

static void
test_soak_random_mix_under_faults(void **state)
{
	uint64_t seed = env_u64("DROCE_SOAK_SEED", 20261129);
	uint64_t total = env_u64("DROCE_SOAK_OPS", 100000);
	struct vwire_config wire = {
		.pool_size = 16383,
		.a_to_b = { .drop = 0.05, .duplicate = 0.02, .reorder = 0.05,
			    .reorder_window = 8, .corrupt = 0.001, .seed = seed },
		.b_to_a = { .drop = 0.05, .duplicate = 0.02, .reorder = 0.05,
			    .reorder_window = 8, .corrupt = 0.001, .seed = seed + 1 },
	};
	uint32_t op_mask = (uint32_t)env_u64("DROCE_SOAK_OP_MASK", (1u << OP_MAX) - 1);
	struct flow ab = { .rng = seed * 3 + 1, .op_mask = op_mask };
	struct flow ba = { .rng = seed * 5 + 2, .op_mask = op_mask };
	double start, deadline;
	struct fx f;

	(void)state;
	printf("# soak seed %" PRIu64 " (DROCE_SOAK_SEED), %" PRIu64 " operations\n",
	       seed, total);
	fx_open(&f, &wire, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = (uint32_t)(seed & 0xffffff),
					     .timeout = 10, .max_wr = 64 });
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
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soak_random_mix_under_faults),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("soak", tests, NULL, NULL);
}
