/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dq unit tests: the region's layout, the rings' indices between a
 * producer and a consumer (also garbage written by the other side), the
 * checks of malformed descriptors, each with its exact errno, and an fd
 * passed with a message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dq.h"

static const struct dq_geom geom = { .nqp = 3, .ncq = 2, .sq_depth = 8, .rq_depth = 4,
				     .cq_depth = 16 };

static void *
region(void)
{
	void *p = aligned_alloc(DQ_CACHE_LINE, dq_region_size(&geom));

	assert_non_null(p);
	memset(p, 0, dq_region_size(&geom));
	return p;
}

static void
test_geom(void **state)
{
	struct dq_geom g = geom;

	(void)state;
	assert_int_equal(dq_geom_check(&g), 0);
	g.sq_depth = 6;
	assert_int_equal(dq_geom_check(&g), -EINVAL);
	g = geom;
	g.cq_depth = 0;
	assert_int_equal(dq_geom_check(&g), -EINVAL);
	g = geom;
	g.nqp = 0;
	assert_int_equal(dq_geom_check(&g), -EINVAL);
	g = geom;
	g.rq_depth = DQ_MAX_DEPTH * 2;
	assert_int_equal(dq_geom_check(&g), -E2BIG);
	g = geom;
	g.ncq = DQ_MAX_CQS + 1;
	assert_int_equal(dq_geom_check(&g), -E2BIG);
}

struct span {
	void *r;
	size_t bytes;		/* all of it: indices or lines and entries */
};

/* Every ring, the doorbell and every CQ's notify lines inside the region,
 * cache-line aligned, none overlapping the next. */
static void
test_layout(void **state)
{
	char *base = (char *)0x1000000;
	size_t size = dq_region_size(&geom), end = DQ_CACHE_LINE;
	struct span rings[1 + DQ_MAX_CTXS + 2 * 3 + 2 * 2];
	const size_t idx = sizeof(struct dq_ring);
	int n = 0;

	(void)state;
	rings[n++] = (struct span){ dq_bell(base), sizeof(struct dq_bell) };
	for (uint32_t i = 0; i < DQ_MAX_CTXS; i++)
		rings[n++] = (struct span){ dq_evq(base, &geom, i),
					    idx + DQ_EVENT_DEPTH * sizeof(struct dq_event) };
	for (uint32_t i = 0; i < geom.nqp; i++) {
		rings[n++] = (struct span){ dq_sq(base, &geom, i),
					    idx + geom.sq_depth * sizeof(struct dq_send_wqe) };
		rings[n++] = (struct span){ dq_rq(base, &geom, i),
					    idx + geom.rq_depth * sizeof(struct dq_recv_wqe) };
	}
	for (uint32_t i = 0; i < geom.ncq; i++) {
		rings[n++] = (struct span){ dq_cq_notify(base, &geom, i), sizeof(struct dq_notify) };
		rings[n++] = (struct span){ dq_cq(base, &geom, i),
					    idx + geom.cq_depth * sizeof(struct dq_cqe) };
	}
	for (int i = 0; i < n; i++) {
		size_t off = (size_t)((char *)rings[i].r - base);

		assert_int_equal(off % DQ_CACHE_LINE, 0);
		assert_true(off >= end);
		end = off + rings[i].bytes;
		assert_true(end <= size);
	}
	assert_int_equal(size % DQ_CACHE_LINE, 0);
}

/* Send WQEs round trip through the ring, wrapping around twice. */
static void
test_ring_roundtrip(void **state)
{
	void *base = region();
	struct dq_ring *sq = dq_sq(base, &geom, 2);
	uint32_t prod = 0, cons = 0;

	(void)state;
	for (uint32_t round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < geom.sq_depth; i++) {
			struct dq_send_wqe w = { .wr_id = round * 100 + i, .opcode = DQ_WR_SEND };

			assert_int_equal(dq_send_post(sq, geom.sq_depth, &prod, &w), 0);
		}
		struct dq_send_wqe extra = { .opcode = DQ_WR_SEND };

		assert_int_equal(dq_send_post(sq, geom.sq_depth, &prod, &extra), -EAGAIN);
		assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), (int)geom.sq_depth);
		for (uint32_t i = 0; i < geom.sq_depth; i++) {
			struct dq_send_wqe w;

			dq_send_read(sq, geom.sq_depth, cons++, &w);
			assert_int_equal(w.wr_id, round * 100 + i);
			assert_int_equal(dq_send_check(&w, false, 0), 0);
		}
		dq_ring_consumed(sq, cons);
		assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), 0);
	}
	free(base);
}

/* Indices near UINT32_MAX wrap like any other. */
static void
test_ring_wrap32(void **state)
{
	void *base = region();
	struct dq_ring *cq = dq_cq(base, &geom, 1);
	uint32_t prod = UINT32_MAX - 2, cons = UINT32_MAX - 2;
	struct dq_cqe c = { .wr_id = 7 }, out;

	(void)state;
	cq->prod = cq->cons = prod;
	for (int i = 0; i < 6; i++) {
		c.wr_id = (uint64_t)i;
		assert_int_equal(dq_cqe_put(cq, geom.cq_depth, &prod, &c), 0);
	}
	for (int i = 0; i < 6; i++) {
		assert_int_equal(dq_cqe_take(cq, geom.cq_depth, &cons, &out), 1);
		assert_int_equal(out.wr_id, (uint64_t)i);
	}
	assert_int_equal(dq_cqe_take(cq, geom.cq_depth, &cons, &out), 0);
	assert_int_equal(cons, 3);
	free(base);
}

/* The other side's index as garbage: refused, never trusted. */
static void
test_ring_bad_indices(void **state)
{
	void *base = region();
	struct dq_ring *sq = dq_sq(base, &geom, 0), *cq = dq_cq(base, &geom, 0);
	struct dq_cqe c = { 0 }, out;
	uint32_t prod = 5, cons = 5;

	(void)state;
	/* a producer index more than depth ahead, or behind the consumer's */
	sq->prod = 5 + geom.sq_depth + 1;
	assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), -EINVAL);
	sq->prod = 4;
	assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), -EINVAL);
	sq->prod = 0xdeadbeef;
	assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), -EINVAL);
	sq->prod = 5 + geom.sq_depth;
	assert_int_equal(dq_ring_avail(sq, cons, geom.sq_depth), (int)geom.sq_depth);
	/* a consumer index ahead of the producer, or too far behind */
	cq->cons = 6;
	assert_int_equal(dq_ring_room(cq, prod, geom.cq_depth), -EINVAL);
	assert_int_equal(dq_cqe_put(cq, geom.cq_depth, &prod, &c), -EINVAL);
	assert_int_equal(prod, 5);
	cq->cons = 5 - geom.cq_depth - 1;
	assert_int_equal(dq_ring_room(cq, prod, geom.cq_depth), -EINVAL);
	cq->cons = 5 - geom.cq_depth;
	assert_int_equal(dq_ring_room(cq, prod, geom.cq_depth), 0);
	assert_int_equal(dq_cqe_put(cq, geom.cq_depth, &prod, &c), -EAGAIN);
	cq->prod = 1000;
	assert_int_equal(dq_cqe_take(cq, geom.cq_depth, &cons, &out), -EINVAL);
	free(base);
}

static struct dq_send_wqe
good_write(void)
{
	return (struct dq_send_wqe){ .wr_id = 1, .opcode = DQ_WR_RDMA_WRITE, .num_sge = 2,
				     .flags = DQ_SEND_SIGNALED, .remote_addr = 0x1000,
				     .rkey = 0x1234,
				     .sge = { { 0x10000, 4096, 0x101 }, { 0x20000, 100, 0x102 } } };
}

static void
test_send_check(void **state)
{
	struct dq_send_wqe w = good_write();

	(void)state;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.opcode = DQ_WR_BIND_MW;	/* with SGEs */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.num_sge = 0;
	w.bind.length = 4096;
	w.bind.mr_lkey = 0x101;
	w.bind.access = DQ_MW_ACCESS;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.bind.access = 1u << 4;	/* MW_BIND: not a window's right */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.bind.access = 0;
	w.bind.pad = 1;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.bind.pad = 0;
	w.ah = 1;			/* a bind on UD */
	assert_int_equal(dq_send_check(&w, true, 4), -EINVAL);
	w.ah = 0;
	w.opcode = 10;			/* unknown */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.opcode = 200;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w = good_write();
	w.flags = DQ_SEND_SIGNALED | DQ_SEND_INLINE;	/* inline with SGEs */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.flags = 1u << 4;				/* unknown */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w = good_write();
	w.inline_len = 1;				/* without DQ_SEND_INLINE */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w = good_write();
	w.reserved = 1;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w = good_write();
	w.num_sge = DQ_MAX_SGE + 1;
	assert_int_equal(dq_send_check(&w, false, 0), -E2BIG);
	w.num_sge = 255;
	assert_int_equal(dq_send_check(&w, false, 0), -E2BIG);
	w = good_write();
	w.sge[0].length = UINT32_MAX;	/* 4 GiB + 100 in all */
	assert_int_equal(dq_send_check(&w, false, 0), -EMSGSIZE);
	w = good_write();
	w.sge[1].addr = UINT64_MAX - 10;	/* wraps around */
	assert_int_equal(dq_send_check(&w, false, 0), -EMSGSIZE);
	w = good_write();
	w.sge[0].length = DQ_MAX_MSG - 100;	/* exactly 2^31 */
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w = good_write();
	w.ah = 1;			/* an address handle on an RC QP */
	assert_int_equal(dq_send_check(&w, false, 4), -EINVAL);
	w = good_write();
	w.opcode = DQ_WR_LOCAL_INV;	/* no SGEs */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.num_sge = 0;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
}

/* Inline data: its checks, the entries it takes, written and read back
 * across the ring's end; nothing beyond its own entries touched. */
static void
test_inline(void **state)
{
	struct dq_send_wqe w = { .opcode = DQ_WR_SEND, .flags = DQ_SEND_INLINE,
				 .inline_len = DQ_MAX_INLINE };
	void *base = region();
	struct dq_ring *sq = dq_sq(base, &geom, 0);
	struct dq_send_wqe *e = dq_ring_entries(sq);
	uint8_t in[DQ_MAX_INLINE], out[DQ_MAX_INLINE + 1];
	const uint32_t first = geom.sq_depth - 1;	/* the descriptor wraps */

	(void)state;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.inline_len = DQ_MAX_INLINE + 1;
	assert_int_equal(dq_send_check(&w, false, 0), -EMSGSIZE);
	w.inline_len = 8;
	w.num_sge = 1;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.num_sge = 0;
	w.opcode = DQ_WR_RDMA_READ;		/* nothing to carry */
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.opcode = DQ_WR_RDMA_WRITE_WITH_IMM;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	assert_int_equal(dq_send_slots(0), 1);
	assert_int_equal(dq_send_slots(DQ_INLINE_HEAD), 1);
	assert_int_equal(dq_send_slots(DQ_INLINE_HEAD + 1), 2);
	assert_int_equal(dq_send_slots(DQ_INLINE_HEAD + 128), 2);
	assert_int_equal(dq_send_slots(DQ_INLINE_HEAD + 129), 3);
	assert_int_equal(dq_send_slots(DQ_MAX_INLINE), 3);
	for (uint32_t k = 0; k < sizeof(in); k++)
		in[k] = (uint8_t)(k * 7 + 1);
	memset(e, 0xee, (size_t)geom.sq_depth * sizeof(*e));
	/* in two pieces, as a provider gathers SGEs */
	dq_inline_write(sq, geom.sq_depth, first, 0, in, 100);
	dq_inline_write(sq, geom.sq_depth, first, 100, in + 100, DQ_MAX_INLINE - 100);
	/* the head's fields untouched, the bytes in its SGE area, then in
	 * entries 0 and 1 (after the wrap), entry 2 untouched */
	assert_int_equal(e[first].wr_id, UINT64_C(0xeeeeeeeeeeeeeeee));
	assert_int_equal(e[first].inline_len, 0xeeeeeeeeu);
	assert_memory_equal(e[first].sge, in, DQ_INLINE_HEAD);
	assert_memory_equal(&e[0], in + DQ_INLINE_HEAD, sizeof(*e));
	assert_memory_equal(&e[1], in + DQ_INLINE_HEAD + sizeof(*e), 64);
	assert_int_equal(((uint8_t *)&e[1])[64], 0xee);
	assert_int_equal(e[2].wr_id, UINT64_C(0xeeeeeeeeeeeeeeee));
	out[DQ_MAX_INLINE] = 0x55;
	dq_inline_read(sq, geom.sq_depth, first, out, DQ_MAX_INLINE);
	assert_memory_equal(out, in, DQ_MAX_INLINE);
	assert_int_equal(out[DQ_MAX_INLINE], 0x55);
	free(base);
}

static void
test_atomic_check(void **state)
{
	struct dq_send_wqe w = { .opcode = DQ_WR_ATOMIC_FETCH_AND_ADD, .num_sge = 1,
				 .remote_addr = 0x1008, .rkey = 1, .compare_add = 1,
				 .sge = { { 0x4000, 8, 0x7 } } };

	(void)state;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.remote_addr = 0x1004;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.remote_addr = 0x1008;
	w.sge[0].length = 4;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.sge[0].length = 8;
	w.num_sge = 2;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
}

/* ATOMIC WRITE: exactly 8 bytes, inline or in the descriptor's SGEs. */
static void
test_atomic_write_check(void **state)
{
	struct dq_send_wqe w = { .opcode = DQ_WR_ATOMIC_WRITE, .num_sge = 2,
				 .remote_addr = 0x1008, .rkey = 1,
				 .sge = { { 0x4000, 4, 0x7 }, { 0x5000, 4, 0x7 } } };

	(void)state;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.sge[1].length = 5;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.num_sge = 1;
	w.sge[0].length = 8;
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w = (struct dq_send_wqe){ .opcode = DQ_WR_ATOMIC_WRITE, .flags = DQ_SEND_INLINE,
				  .remote_addr = 0x1008, .rkey = 1, .inline_len = 8 };
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	w.inline_len = 16;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.inline_len = 0;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.opcode = DQ_WR_ATOMIC_WRITE - 1;	/* FLUSH: not carried */
	w.inline_len = 8;
	assert_int_equal(dq_send_check(&w, false, 0), -EINVAL);
	w.opcode = DQ_WR_ATOMIC_WRITE;
	assert_int_equal(dq_send_check(&w, true, 5), -EINVAL);	/* RC only */
}

static void
test_ud_check(void **state)
{
	struct dq_send_wqe w = { .opcode = DQ_WR_SEND, .num_sge = 1, .ah = 3,
				 .remote_qpn = 0x11, .remote_qkey = 0x22,
				 .sge = { { 0x4000, 64, 0x7 } } };

	(void)state;
	assert_int_equal(dq_send_check(&w, true, 3), 0);
	w.ah = 4;			/* beyond the application's AHs */
	assert_int_equal(dq_send_check(&w, true, 3), -EINVAL);
	w.ah = 0;
	assert_int_equal(dq_send_check(&w, true, 3), -EINVAL);
	w.ah = 1;
	w.opcode = DQ_WR_RDMA_WRITE;	/* UD: SENDs only */
	assert_int_equal(dq_send_check(&w, true, 3), -EINVAL);
}

static void
test_recv_check(void **state)
{
	struct dq_recv_wqe w = { .wr_id = 9, .num_sge = 1, .sge = { { 0x4000, 64, 0x7 } } };
	void *base = region();
	struct dq_ring *rq = dq_rq(base, &geom, 1);
	uint32_t prod = 0, cons = 0;
	struct dq_recv_wqe out;

	(void)state;
	assert_int_equal(dq_recv_check(&w), 0);
	assert_int_equal(dq_recv_post(rq, geom.rq_depth, &prod, &w), 0);
	assert_int_equal(dq_ring_avail(rq, cons, geom.rq_depth), 1);
	dq_recv_read(rq, geom.rq_depth, cons, &out);
	assert_memory_equal(&out, &w, sizeof(w));
	w.num_sge = DQ_MAX_SGE + 1;
	assert_int_equal(dq_recv_check(&w), -E2BIG);
	w.num_sge = 1;
	w.pad[3] = 1;
	assert_int_equal(dq_recv_check(&w), -EINVAL);
	w.pad[3] = 0;
	w.sge[0].addr = UINT64_MAX;
	assert_int_equal(dq_recv_check(&w), -EMSGSIZE);
	free(base);
}

/*
 * SGEs beyond a descriptor's 4: the entries they take, written and read
 * back across the ring's end for both rings, nothing beyond their own
 * entries touched; the whole list's lengths checked.
 */
static void
test_sge_entries(void **state)
{
	void *base = region();
	struct dq_ring *sq = dq_sq(base, &geom, 0), *rq = dq_rq(base, &geom, 0);
	struct dq_send_wqe *se = dq_ring_entries(sq), w = good_write();
	struct dq_recv_wqe *re = dq_ring_entries(rq), rw = { .wr_id = 3 };
	struct dq_sge in[DQ_MAX_SGE], out[DQ_MAX_SGE];
	const uint32_t sfirst = geom.sq_depth - 1, rfirst = geom.rq_depth - 2;

	(void)state;
	assert_int_equal(dq_send_sge_slots(0), 1);
	assert_int_equal(dq_send_sge_slots(DQ_WQE_SGE), 1);
	assert_int_equal(dq_send_sge_slots(DQ_WQE_SGE + 1), 2);
	assert_int_equal(dq_send_sge_slots(DQ_WQE_SGE + 8), 2);
	assert_int_equal(dq_send_sge_slots(DQ_WQE_SGE + 9), 3);
	assert_int_equal(dq_send_sge_slots(DQ_MAX_SGE), 3);
	assert_int_equal(dq_recv_slots(DQ_WQE_SGE), 1);
	assert_int_equal(dq_recv_slots(DQ_WQE_SGE + 1), 2);
	assert_int_equal(dq_recv_slots(DQ_WQE_SGE + 5), 2);
	assert_int_equal(dq_recv_slots(DQ_WQE_SGE + 6), 3);
	assert_int_equal(dq_recv_slots(DQ_MAX_SGE), 4);
	for (uint32_t k = 0; k < DQ_MAX_SGE; k++)
		in[k] = (struct dq_sge){ 0x10000 + k * 0x1000, 100 + k, 0x100 + k };
	/* send: 16 SGEs from the ring's last entry on, across its end */
	memset(se, 0xee, (size_t)geom.sq_depth * sizeof(*se));
	se[sfirst] = w;
	se[sfirst].num_sge = DQ_MAX_SGE;
	for (uint32_t k = 0; k < DQ_MAX_SGE; k++)
		dq_send_sge_write(sq, geom.sq_depth, sfirst, k, &in[k]);
	assert_int_equal(se[sfirst].wr_id, w.wr_id);
	assert_int_equal(se[sfirst].inline_len, 0);
	assert_memory_equal(se[sfirst].sge, in, DQ_INLINE_HEAD);
	assert_memory_equal(&se[0], &in[4], sizeof(*se));
	assert_memory_equal(&se[1], &in[12], 4 * sizeof(in[0]));
	assert_int_equal(((uint8_t *)&se[1])[4 * sizeof(in[0])], 0xee);
	dq_send_read(sq, geom.sq_depth, sfirst, &w);
	assert_int_equal(dq_send_check(&w, false, 0), 0);
	assert_int_equal(dq_send_entries(&w), 3);
	dq_send_sges_read(sq, geom.sq_depth, sfirst, &w, out);
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(dq_sges_check(out, DQ_MAX_SGE), 0);
	/* receive: 16 SGEs from the ring's second-last entry on (all 4 entries) */
	memset(re, 0xee, (size_t)geom.rq_depth * sizeof(*re));
	rw.num_sge = DQ_MAX_SGE;
	re[rfirst] = rw;
	for (uint32_t k = 0; k < DQ_MAX_SGE; k++)
		dq_recv_sge_write(rq, geom.rq_depth, rfirst, k, &in[k]);
	assert_memory_equal(re[rfirst].sge, in, 4 * sizeof(in[0]));
	assert_memory_equal(&re[rfirst + 1], &in[4], sizeof(*re));
	assert_memory_equal(&re[0], &in[9], sizeof(*re));
	assert_memory_equal(&re[1], &in[14], 2 * sizeof(in[0]));
	assert_int_equal(((uint8_t *)&re[1])[2 * sizeof(in[0])], 0xee);
	dq_recv_read(rq, geom.rq_depth, rfirst, &rw);
	assert_int_equal(dq_recv_check(&rw), 0);
	memset(out, 0, sizeof(out));
	dq_recv_sges_read(rq, geom.rq_depth, rfirst, &rw, out);
	assert_memory_equal(out, in, sizeof(in));
	/* lengths past the descriptor's own SGEs: the whole list's check */
	in[15].length = DQ_MAX_MSG;
	assert_int_equal(dq_sges_check(in, DQ_MAX_SGE), -EMSGSIZE);
	in[15] = (struct dq_sge){ UINT64_MAX - 4, 8, 1 };	/* wraps around */
	assert_int_equal(dq_sges_check(in, DQ_MAX_SGE), -EMSGSIZE);
	assert_int_equal(dq_sges_check(in, DQ_MAX_SGE - 1), 0);
	free(base);
}

/* What was checked is what is used: the copy does not change with the ring. */
static void
test_read_once(void **state)
{
	void *base = region();
	struct dq_ring *sq = dq_sq(base, &geom, 0);
	struct dq_send_wqe w = good_write(), out, *slot = dq_ring_entries(sq);
	uint32_t prod = 0;

	(void)state;
	assert_int_equal(dq_send_post(sq, geom.sq_depth, &prod, &w), 0);
	dq_send_read(sq, geom.sq_depth, 0, &out);
	slot[0].num_sge = 200;		/* the application rewrites it after the copy */
	assert_int_equal(dq_send_check(&out, false, 0), 0);
	assert_int_equal(out.num_sge, 2);
	free(base);
}

static void
test_events(void **state)
{
	void *base = region();
	struct dq_ring *evq = dq_evq(base, &geom, DQ_MAX_CTXS - 1);
	struct dq_event e = { .type = 2, .slot = 1, .name = 0xabc }, out;
	uint32_t prod = 0, cons = 0;

	(void)state;
	for (int i = 0; i < DQ_EVENT_DEPTH; i++)
		assert_int_equal(dq_event_put(evq, &prod, &e), 0);
	assert_int_equal(dq_event_put(evq, &prod, &e), -EAGAIN);
	assert_int_equal(dq_event_take(evq, &cons, &out), 1);
	assert_memory_equal(&out, &e, sizeof(e));
	assert_int_equal(dq_event_put(evq, &prod, &e), 0);
	free(base);
}

/* A message and an fd across a socket pair; a message without one gives -1. */
static void
test_sock_fd(void **state)
{
	int sv[2], got = -2, fd = dup(0);
	uint64_t msg = 0x1122334455667788, in = 0;
	struct stat a, b;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_true(fd >= 0);
	assert_int_equal(dq_sock_send(sv[0], &msg, sizeof(msg), fd), 0);
	assert_int_equal(dq_sock_recv(sv[1], &in, sizeof(in), &got), (ssize_t)sizeof(in));
	assert_int_equal(in, msg);
	assert_true(got >= 0 && got != fd);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(fstat(got, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(got);
	assert_int_equal(dq_sock_send(sv[0], &msg, sizeof(msg), -1), 0);
	assert_int_equal(dq_sock_recv(sv[1], &in, sizeof(in), &got), (ssize_t)sizeof(in));
	assert_int_equal(got, -1);
	close(sv[0]);
	assert_int_equal(dq_sock_recv(sv[1], &in, sizeof(in), &got), 0);	/* EOF */
	assert_int_equal(dq_sock_send(sv[1], &msg, sizeof(msg), -1), -EPIPE);
	close(sv[1]);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geom),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_ring_roundtrip),
		cmocka_unit_test(test_ring_wrap32),
		cmocka_unit_test(test_ring_bad_indices),
		cmocka_unit_test(test_send_check),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_atomic_check),
		cmocka_unit_test(test_atomic_write_check),
		cmocka_unit_test(test_ud_check),
		cmocka_unit_test(test_recv_check),
		cmocka_unit_test(test_sge_entries),
		cmocka_unit_test(test_read_once),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_sock_fd),
	};

	return cmocka_run_group_tests_name("dq_format", tests, NULL, NULL);
}
