/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IBTA 1.5 memory-placement operations between two droce stacks over
 * the virtual wire: ATOMIC WRITE (8 bytes, one aligned store) and FLUSH
 * (placement types global / persistent, range and region levels).  Each
 * success with the target bytes and the completion checked; each error
 * (right, alignment, length, bounds, PD, revoked key, the QP's access
 * flags, an undefined FETH) with its completion status and the memory
 * left alone; a lost response answered from the responder's record (the
 * store not repeated); and a run under loss and duplication.
 * Linux 6.1 (the interop guest) has neither operation: droce to droce only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_common.h>

#include "tp_fixture.h"
#include "transport.h"
#include "vwire.h"

#define BUF (64u << 10)
#define NEAR_WRAP 0xfffff0u

#define FLUSH_BOTH (DROCE_FLUSH_GLOBAL | DROCE_FLUSH_PERSISTENT)
#define QP_ALL (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
		DROCE_ACCESS_REMOTE_ATOMIC | DROCE_ACCESS_FLUSH_GLOBAL | \
		DROCE_ACCESS_FLUSH_PERSISTENT)
#define MR_ALL (DROCE_ACCESS_LOCAL_WRITE | QP_ALL)

static struct fx f;

static void
connect_all(unsigned int qp_access)
{
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP, .access = qp_access });
}

/* The peer's QPs went to ERR: a fresh pair for the next case. */
static void
reconnect(void)
{
	fx_destroy_qps(&f);
	connect_all(QP_ALL);
}

/* A region over b's buffer with these remote rights (and LOCAL_WRITE,
 * which remote write and atomic rights need, 10.6). */
static struct droce_mr *
reg_b(struct droce_pd *pd, unsigned int access)
{
	struct droce_mr *mr = droce_reg_mr(pd, f.b.buf, BUF,
					   (int)(access | DROCE_ACCESS_LOCAL_WRITE));

	assert_non_null(mr);
	return mr;
}

/* An ATOMIC WRITE of the 8 bytes at src to raddr; its completion. */
static struct droce_wc
atomic_write(uint64_t wr_id, const void *src, uint64_t raddr, uint32_t rkey)
{
	struct droce_wc wc;

	assert_int_equal(fx_post(f.a.qp, DROCE_WR_ATOMIC_WRITE, wr_id, (void *)(uintptr_t)src,
				 8, f.a.mr->lkey, raddr, rkey, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	return wc;
}

static int
post_flush(uint64_t wr_id, uint64_t raddr, uint32_t len, uint32_t rkey, uint8_t type,
	   uint8_t level)
{
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = DROCE_WR_FLUSH;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.flush.remote_addr = raddr;
	wr.wr.flush.length = len;
	wr.wr.flush.rkey = rkey;
	wr.wr.flush.type = type;
	wr.wr.flush.level = level;
	return droce_post_send(f.a.qp, &wr, &bad);
}

static struct droce_wc
flush(uint64_t wr_id, uint64_t raddr, uint32_t len, uint32_t rkey, uint8_t type,
      uint8_t level)
{
	struct droce_wc wc;

	assert_int_equal(post_flush(wr_id, raddr, len, rkey, type, level), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	return wc;
}

static void
expect(const struct droce_wc *wc, uint64_t wr_id, enum droce_wc_opcode op,
       enum droce_wc_status st, uint32_t byte_len)
{
	fx_assert_wc(wc, wr_id, op, st);
	if (st == DROCE_WC_SUCCESS)
		assert_int_equal(wc->byte_len, byte_len);
}

static int
setup(void **state)
{
	(void)state;
	fx_open(&f, NULL, BUF);
	connect_all(QP_ALL);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fx_close(&f);
	return 0;
}

/* ---- ATOMIC WRITE ------------------------------------------------------------- */

static void
test_atomic_write_places_8_bytes(void **state)
{
	static const uint8_t v1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t v2[8] = { 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87 };
	struct droce_mr *mr = reg_b(f.b.pd, DROCE_ACCESS_REMOTE_WRITE);
	uint8_t *t = f.b.buf + 4096;
	uint64_t recvs = fx_counter(&f.b, "rdma_recvs");
	uint64_t dups = fx_counter(&f.b, "duplicate_request");
	struct droce_send_wr wr, *bad;
	struct droce_sge sge;
	struct droce_wc wc;

	(void)state;
	memset(t - 8, 0x5a, 24);
	memcpy(f.a.buf, v1, 8);
	wc = atomic_write(1, f.a.buf, (uintptr_t)t, mr->rkey);
	expect(&wc, 1, DROCE_WC_ATOMIC_WRITE, DROCE_WC_SUCCESS, 8);
	assert_memory_equal(t, v1, 8);
	fx_assert_bytes(t - 8, 8, 0x5a);
	fx_assert_bytes(t + 8, 8, 0x5a);

	/* the same with the 8 bytes inline, from a buffer no key covers */
	memset(&wr, 0, sizeof(wr));
	sge = (struct droce_sge){ (uintptr_t)v2, 8, 0 };
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_ATOMIC_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)t;
	wr.wr.rdma.rkey = mr->rkey;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect(&wc, 2, DROCE_WC_ATOMIC_WRITE, DROCE_WC_SUCCESS, 8);
	assert_memory_equal(t, v2, 8);
	fx_assert_bytes(t + 8, 8, 0x5a);
	assert_int_equal(fx_counter(&f.b, "rdma_recvs") - recvs, 2);
	assert_int_equal(fx_counter(&f.b, "duplicate_request") - dups, 0);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

/* ATOMIC WRITE's 8 inline bytes are its operand: taken on a QP created
 * without inline data (the ibv_wr_atomic_write path), which still refuses
 * an inline SEND. */
static void
test_atomic_write_inline_without_max_inline(void **state)
{
	uint64_t v = 0x1122334455667788ull;
	struct droce_sge sge = { (uintptr_t)&v, 8, 0 };
	struct droce_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_ATOMIC_WRITE,
		.send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE,
	};
	struct droce_send_wr *bad;
	struct droce_wc wc;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .no_inline = true });
	memset(f.b.buf, 0x5a, 24);
	wr.wr.rdma.remote_addr = (uintptr_t)f.b.buf + 8;
	wr.wr.rdma.rkey = f.b.mr->rkey;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect(&wc, 3, DROCE_WC_ATOMIC_WRITE, DROCE_WC_SUCCESS, 8);
	assert_memory_equal(f.b.buf + 8, &v, 8);
	fx_assert_bytes(f.b.buf, 8, 0x5a);
	fx_assert_bytes(f.b.buf + 16, 8, 0x5a);
	/* a SEND's inline data has the QP's room only: the SGE area's
	 * (droce_qp_min_inline) on a QP that asked for none */
	{
		struct droce_qp_attr at;
		struct droce_qp_init_attr init;

		assert_int_equal(droce_query_qp(f.a.qp, &at, DROCE_QP_CAP, &init), 0);
		assert_int_equal(at.cap.max_inline_data,
				 droce_qp_min_inline(at.cap.max_send_sge));
		sge = (struct droce_sge){ (uintptr_t)f.a.buf, at.cap.max_inline_data + 1, 0 };
	}
	wr.opcode = DROCE_WR_SEND;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), EINVAL);
	reconnect();
}

/* Not 8 bytes: refused at post (and the parser drops such a packet). */
static void
test_atomic_write_wrong_length_bad_flow(void **state)
{
	uint32_t lens[] = { 0, 4, 7, 9, 16 };

	(void)state;
	for (size_t i = 0; i < RTE_DIM(lens); i++)
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_ATOMIC_WRITE, 1, f.a.buf, lens[i],
					 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
					 DROCE_SEND_SIGNALED), EINVAL);
	assert_int_equal(fx_qp_state(f.a.qp), DROCE_QPS_RTS);
}

/* UC and UD have no ATOMIC WRITE or FLUSH (RC only, annex A19). */
static void
test_placement_rc_only_bad_flow(void **state)
{
	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UC });
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_ATOMIC_WRITE, 1, f.a.buf, 8, f.a.mr->lkey,
				 (uintptr_t)f.b.buf, f.b.mr->rkey, 0), EINVAL);
	assert_int_equal(post_flush(2, (uintptr_t)f.b.buf, 8, f.b.mr->rkey,
				    DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE), EINVAL);
	reconnect();
}

/* One refused request: its QP pair fresh, its region as the case says. */
struct err_case {
	const char *what;
	unsigned int qp_access;	/* b's QP */
	unsigned int mr_access;	/* the target region's */
	bool other_pd;
	bool revoked;
	uint8_t flush_type;	/* 0: an ATOMIC WRITE; else a FLUSH of this type */
	uint64_t off;		/* target offset in b's buffer */
	uint32_t len;		/* FLUSH: the range */
	enum droce_wc_status want;
};

static void
run_err_case(const struct err_case *c)
{
	static const uint8_t v[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	struct droce_pd *pd = c->other_pd ? droce_alloc_pd(f.b.ctx) : f.b.pd;
	uint64_t raddr = (uintptr_t)f.b.buf + c->off;
	struct droce_mr *mr;
	uint32_t rkey;
	struct droce_wc wc;

	fx_destroy_qps(&f);
	connect_all(c->qp_access);
	assert_non_null(pd);
	mr = reg_b(pd, c->mr_access);
	rkey = mr->rkey;
	if (c->revoked) {
		assert_int_equal(droce_dereg_mr(mr), 0);
		mr = NULL;
	}
	memset(f.b.buf, 0x33, BUF);
	memcpy(f.a.buf, v, 8);
	wc = c->flush_type == 0 ? atomic_write(7, f.a.buf, raddr, rkey) :
	     flush(7, raddr, c->len, rkey, c->flush_type, DROCE_FLUSH_RANGE);
	if (wc.status != c->want)
		fail_msg("%s: %s, expected %s", c->what, droce_wc_status_str(wc.status),
			 droce_wc_status_str(c->want));
	fx_assert_bytes(f.b.buf, BUF, 0x33);
	assert_int_equal(fx_qp_state(f.a.qp), DROCE_QPS_ERR);
	assert_int_equal(fx_qp_state(f.b.qp), DROCE_QPS_ERR);
	if (mr != NULL)
		assert_int_equal(droce_dereg_mr(mr), 0);
	if (c->other_pd)
		assert_int_equal(droce_dealloc_pd(pd), 0);
}

static void
test_atomic_write_errors_bad_flow(void **state)
{
	static const struct err_case cases[] = {
		{ "misaligned", QP_ALL, MR_ALL, false, false, 0, 4100, 0,
		  DROCE_WC_REM_INV_REQ_ERR },
		{ "misaligned by 1", QP_ALL, MR_ALL, false, false, 0, 1, 0,
		  DROCE_WC_REM_INV_REQ_ERR },
		{ "no REMOTE_WRITE on the region", QP_ALL,
		  DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC, false, false, 0, 8, 0,
		  DROCE_WC_REM_ACCESS_ERR },
		{ "no REMOTE_WRITE on the QP", DROCE_ACCESS_REMOTE_ATOMIC, MR_ALL, false, false,
		  0, 8, 0, DROCE_WC_REM_INV_REQ_ERR },
		{ "past the region's end", QP_ALL, MR_ALL, false, false, 0, BUF, 0,
		  DROCE_WC_REM_ACCESS_ERR },
		{ "straddling the region's end", QP_ALL, MR_ALL, false, false, 0, BUF - 4, 0,
		  DROCE_WC_REM_ACCESS_ERR },
		{ "region of another PD", QP_ALL, MR_ALL, true, false, 0, 8, 0,
		  DROCE_WC_REM_ACCESS_ERR },
		{ "rkey revoked", QP_ALL, MR_ALL, false, true, 0, 8, 0,
		  DROCE_WC_REM_ACCESS_ERR },
	};

	(void)state;
	for (size_t i = 0; i < RTE_DIM(cases); i++)
		run_err_case(&cases[i]);
	reconnect();
}

/* ---- FLUSH --------------------------------------------------------------------- */

static void
test_flush_every_type_and_level(void **state)
{
	struct droce_mr *mr = reg_b(f.b.pd, MR_ALL);
	static const uint8_t types[] = { DROCE_FLUSH_GLOBAL, DROCE_FLUSH_PERSISTENT, FLUSH_BOTH };
	uint64_t recvs = fx_counter(&f.b, "rdma_recvs");
	struct droce_wc wc[2];
	uint64_t id = 10;

	(void)state;
	for (size_t i = 0; i < RTE_DIM(types); i++) {
		for (uint8_t level = DROCE_FLUSH_RANGE; level <= DROCE_FLUSH_MR; level++) {
			/* a WRITE, then the FLUSH behind it: both complete in order */
			fx_fill(f.a.buf, 3000, (uint32_t)id);
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, id, f.a.buf, 3000,
						 f.a.mr->lkey, (uintptr_t)f.b.buf + 100,
						 mr->rkey, DROCE_SEND_SIGNALED), 0);
			assert_int_equal(post_flush(id + 1, (uintptr_t)f.b.buf + 100, 3000,
						    mr->rkey, types[i], level), 0);
			assert_int_equal(fx_poll(&f, f.a.cq, wc, 2, 10), 2);
			expect(&wc[0], id, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS, 3000);
			expect(&wc[1], id + 1, DROCE_WC_FLUSH, DROCE_WC_SUCCESS, 0);
			assert_memory_equal(f.b.buf + 100, f.a.buf, 3000);
			id += 2;
		}
	}
	/* a zero-length range: nothing to place, the key checked */
	wc[0] = flush(id, (uintptr_t)f.b.buf, 0, mr->rkey, DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE);
	expect(&wc[0], id, DROCE_WC_FLUSH, DROCE_WC_SUCCESS, 0);
	/* the WRITEs (3000 B: 3 packets each) and the FLUSHes */
	assert_int_equal(fx_counter(&f.b, "rdma_recvs") - recvs, 6 * 3 + 6 + 1);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

static void
test_flush_bad_type_or_level_refused_at_post_bad_flow(void **state)
{
	(void)state;
	assert_int_equal(post_flush(1, (uintptr_t)f.b.buf, 8, f.b.mr->rkey, 0,
				    DROCE_FLUSH_RANGE), EINVAL);
	assert_int_equal(post_flush(1, (uintptr_t)f.b.buf, 8, f.b.mr->rkey, 4,
				    DROCE_FLUSH_RANGE), EINVAL);
	assert_int_equal(post_flush(1, (uintptr_t)f.b.buf, 8, f.b.mr->rkey,
				    DROCE_FLUSH_GLOBAL, 2), EINVAL);
	assert_int_equal(fx_qp_state(f.a.qp), DROCE_QPS_RTS);
}

static void
test_flush_errors_bad_flow(void **state)
{
	static const struct err_case cases[] = {
		{ "global without FLUSH_GLOBAL on the region", QP_ALL,
		  MR_ALL & ~(unsigned int)DROCE_ACCESS_FLUSH_GLOBAL, false, false,
		  DROCE_FLUSH_GLOBAL, 0, 64, DROCE_WC_REM_ACCESS_ERR },
		{ "persistent without FLUSH_PERSISTENT on the region", QP_ALL,
		  MR_ALL & ~(unsigned int)DROCE_ACCESS_FLUSH_PERSISTENT, false, false,
		  DROCE_FLUSH_PERSISTENT, 0, 64, DROCE_WC_REM_ACCESS_ERR },
		{ "both with only FLUSH_GLOBAL on the region", QP_ALL,
		  MR_ALL & ~(unsigned int)DROCE_ACCESS_FLUSH_PERSISTENT, false, false,
		  FLUSH_BOTH, 0, 64, DROCE_WC_REM_ACCESS_ERR },
		{ "global without FLUSH_GLOBAL on the QP",
		  QP_ALL & ~(unsigned int)DROCE_ACCESS_FLUSH_GLOBAL, MR_ALL, false, false,
		  DROCE_FLUSH_GLOBAL, 0, 64, DROCE_WC_REM_INV_REQ_ERR },
		{ "persistent without FLUSH_PERSISTENT on the QP",
		  QP_ALL & ~(unsigned int)DROCE_ACCESS_FLUSH_PERSISTENT, MR_ALL, false, false,
		  DROCE_FLUSH_PERSISTENT, 0, 64, DROCE_WC_REM_INV_REQ_ERR },
		{ "range past the region's end", QP_ALL, MR_ALL, false, false,
		  DROCE_FLUSH_GLOBAL, BUF - 32, 64, DROCE_WC_REM_ACCESS_ERR },
		{ "region of another PD", QP_ALL, MR_ALL, true, false, DROCE_FLUSH_GLOBAL, 0,
		  64, DROCE_WC_REM_ACCESS_ERR },
		{ "rkey revoked", QP_ALL, MR_ALL, false, true, DROCE_FLUSH_GLOBAL, 0, 64,
		  DROCE_WC_REM_ACCESS_ERR },
	};

	(void)state;
	for (size_t i = 0; i < RTE_DIM(cases); i++)
		run_err_case(&cases[i]);
	reconnect();
}

/* ---- lost responses, duplicates, loss ------------------------------------------ */

/*
 * The response is lost: the request comes again after the retransmit
 * timeout, is a duplicate at the responder and is answered from its
 * record.  The ATOMIC WRITE is not executed again: a value stored by the
 * target's owner in between survives.
 */
static void
test_lost_response_answered_not_repeated(void **state)
{
	struct vwire_faults cut = { .drop = 1.0, .seed = 1 };
	struct vwire_faults ok = { .seed = 1 };
	static const uint8_t v[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t later[8] = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x01 };
	struct droce_mr *mr = reg_b(f.b.pd, MR_ALL);
	uint8_t *t = f.b.buf + 512;
	uint64_t dups = fx_counter(&f.b, "duplicate_request");
	uint64_t tmo = fx_counter(&f.a, "retransmit_timeouts");
	struct droce_wc wc;

	(void)state;
	/* timeout 14 (67 ms): no retransmission while the wire is cut */
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP, .access = QP_ALL,
					     .timeout = 14 });
	memcpy(f.a.buf, v, 8);
	assert_int_equal(vwire_set_faults(f.b.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_ATOMIC_WRITE, 1, f.a.buf, 8, f.a.mr->lkey,
				 (uintptr_t)t, mr->rkey, DROCE_SEND_SIGNALED), 0);
	fx_spin(&f, 0.002);		/* executed at b, its answer lost */
	assert_memory_equal(t, v, 8);
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);
	memcpy(t, later, 8);		/* b's owner stores a newer value */
	assert_int_equal(vwire_set_faults(f.b.link, &ok), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect(&wc, 1, DROCE_WC_ATOMIC_WRITE, DROCE_WC_SUCCESS, 8);
	assert_memory_equal(t, later, 8);
	assert_int_equal(fx_counter(&f.b, "duplicate_request") - dups, 1);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts") - tmo, 1);

	/* a FLUSH whose answer is lost is answered again */
	assert_int_equal(vwire_set_faults(f.b.link, &cut), 0);
	assert_int_equal(post_flush(2, (uintptr_t)t, 8, mr->rkey, FLUSH_BOTH, DROCE_FLUSH_MR), 0);
	fx_spin(&f, 0.002);
	assert_int_equal(droce_poll_cq(f.a.cq, 1, &wc), 0);
	assert_int_equal(vwire_set_faults(f.b.link, &ok), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect(&wc, 2, DROCE_WC_FLUSH, DROCE_WC_SUCCESS, 0);
	assert_int_equal(fx_counter(&f.b, "duplicate_request") - dups, 2);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts") - tmo, 2);
	assert_int_equal(droce_dereg_mr(mr), 0);
	reconnect();
}

/*
 * Under loss and duplication both ways: every ATOMIC WRITE lands its own
 * value in its own slot, every FLUSH completes, all in order.
 */
#define LOSSY_OPS 400

static void
test_under_loss_and_duplication(void **state)
{
	struct vwire_faults lossy = { .drop = 0.05, .duplicate = 0.05, .seed = fx_seed() };
	struct vwire_faults ok = { .seed = 1 };
	struct droce_mr *mr = reg_b(f.b.pd, MR_ALL);
	uint64_t *slots = (uint64_t *)(f.b.buf + 8192);
	uint64_t *src = (uint64_t *)(f.a.buf + 8192);
	struct droce_wc wc[LOSSY_OPS];
	uint64_t resent = fx_counter(&f.a, "retransmitted_pkts");
	int got = 0;

	(void)state;
	fx_destroy_qps(&f);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP, .access = QP_ALL,
					     .max_wr = LOSSY_OPS });
	memset(slots, 0, LOSSY_OPS * 8);
	assert_int_equal(vwire_set_faults(f.a.link, &lossy), 0);
	lossy.seed++;
	assert_int_equal(vwire_set_faults(f.b.link, &lossy), 0);
	for (uint32_t i = 0; i < LOSSY_OPS; i++) {
		src[i] = 0x0101010100000000ull | i;
		if (i % 4 == 3)
			assert_int_equal(post_flush(i, (uintptr_t)&slots[i - 1], 8, mr->rkey,
						    DROCE_FLUSH_GLOBAL, DROCE_FLUSH_RANGE), 0);
		else
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_ATOMIC_WRITE, i, &src[i], 8,
						 f.a.mr->lkey, (uintptr_t)&slots[i], mr->rkey,
						 DROCE_SEND_SIGNALED), 0);
	}
	while (got < LOSSY_OPS) {
		int n = fx_poll(&f, f.a.cq, wc + got, LOSSY_OPS - got, 30);

		assert_true(n > 0);
		got += n;
	}
	for (uint32_t i = 0; i < LOSSY_OPS; i++) {
		bool fl = i % 4 == 3;

		expect(&wc[i], i, fl ? DROCE_WC_FLUSH : DROCE_WC_ATOMIC_WRITE,
		       DROCE_WC_SUCCESS, fl ? 0 : 8);
		assert_int_equal(slots[i], fl ? 0 : src[i]);
	}
	assert_int_equal(vwire_set_faults(f.a.link, &ok), 0);
	assert_int_equal(vwire_set_faults(f.b.link, &ok), 0);
	/* (how many is the seed's: that the faults were met at all) */
	assert_true(fx_counter(&f.a, "retransmitted_pkts") > resent);
	assert_int_equal(droce_dereg_mr(mr), 0);
	reconnect();
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomic_write_places_8_bytes),
		cmocka_unit_test(test_atomic_write_inline_without_max_inline),
		cmocka_unit_test(test_atomic_write_wrong_length_bad_flow),
		cmocka_unit_test(test_placement_rc_only_bad_flow),
		cmocka_unit_test(test_atomic_write_errors_bad_flow),
		cmocka_unit_test(test_flush_every_type_and_level),
		cmocka_unit_test(test_flush_bad_type_or_level_refused_at_post_bad_flow),
		cmocka_unit_test(test_flush_errors_bad_flow),
		cmocka_unit_test(test_lost_response_answered_not_repeated),
		cmocka_unit_test(test_under_loss_and_duplication),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests_name("placement", tests, setup, teardown));
}
