/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC operations between two droce stacks over a clean virtual wire: every
 * operation, each size class (0, 1, MTU-1, MTU, MTU+1, multi-MB), each path
 * MTU, byte-for-byte checks of both buffers and of the completion fields.
 * PSNs start just below 2^24 so every test crosses the wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>
#include <rte_log.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"

#define BUF (8u << 20)
#define BIG (3u << 20)
#define NEAR_WRAP 0xfffff0u

static const enum droce_mtu mtus[] = { DROCE_MTU_256, DROCE_MTU_1024, DROCE_MTU_4096 };

static void
sizes_for(uint32_t mtu, uint32_t *s)
{
	s[0] = 0;
	s[1] = 1;
	s[2] = mtu - 1;
	s[3] = mtu;
	s[4] = mtu + 1;
	s[5] = BIG;
}

static void
expect_wc(const struct droce_wc *wc, uint64_t wr_id, enum droce_wc_opcode op,
	  enum droce_wc_status st, uint32_t qpn)
{
	if (wc->status != st)
		fail_msg("wr %llu: status %s, expected %s",
			 (unsigned long long)wc->wr_id, droce_wc_status_str(wc->status),
			 droce_wc_status_str(st));
	assert_int_equal(wc->wr_id, wr_id);
	assert_int_equal(wc->opcode, op);
	assert_int_equal(wc->qp_num, qpn);
}

static void
test_rc_write_every_size_and_mtu(void **state)
{
	struct droce_wc wc;
	uint32_t sizes[6];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	for (size_t m = 0; m < sizeof(mtus) / sizeof(mtus[0]); m++) {
		struct fx_qp_opts o = { .mtu = mtus[m], .psn = NEAR_WRAP };

		fx_connect(&f, &o);
		sizes_for((uint32_t)droce_mtu_to_num(mtus[m]), sizes);
		for (int i = 0; i < 6; i++) {
			fx_fill(f.a.buf, sizes[i], (uint32_t)(m * 10 + i));
			memset(f.b.buf + 64, 0xee, sizes[i] + 64);
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 100 + i, f.a.buf,
						 sizes[i], f.a.mr->lkey,
						 (uintptr_t)f.b.buf + 64, f.b.mr->rkey,
						 DROCE_SEND_SIGNALED), 0);
			assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
			expect_wc(&wc, 100 + i, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS,
				  f.a.qp->qp_num);
			assert_memory_equal(f.b.buf + 64, f.a.buf, sizes[i]);
			/* not one byte past the end */
			assert_int_equal(f.b.buf[64 + sizes[i]], 0xee);
		}
		fx_destroy_qps(&f);
	}
	fx_close(&f);
}

static void
test_rc_send_every_size_with_and_without_imm(void **state)
{
	struct droce_wc wc;
	uint32_t sizes[6];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	for (size_t m = 0; m < sizeof(mtus) / sizeof(mtus[0]); m++) {
		struct fx_qp_opts o = { .mtu = mtus[m], .psn = NEAR_WRAP };

		fx_connect(&f, &o);
		sizes_for((uint32_t)droce_mtu_to_num(mtus[m]), sizes);
		for (int i = 0; i < 6; i++) {
			bool imm = i & 1;
			struct droce_sge sge = { (uintptr_t)f.a.buf, sizes[i], f.a.mr->lkey };
			struct droce_send_wr wr = {
				.wr_id = 200 + i, .sg_list = &sge, .num_sge = 1,
				.opcode = imm ? DROCE_WR_SEND_WITH_IMM : DROCE_WR_SEND,
				.send_flags = DROCE_SEND_SIGNALED,
				.imm_data = rte_cpu_to_be_32(0xabc000u + (uint32_t)i),
			}, *bad;

			fx_fill(f.a.buf, sizes[i], (uint32_t)(m * 20 + i));
			memset(f.b.buf, 0, sizes[i] + 16);
			assert_int_equal(fx_post_recv(f.b.qp, 300 + i, f.b.buf, BIG + 4096,
						      f.b.mr->lkey), 0);
			assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
			assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
			expect_wc(&wc, 200 + i, DROCE_WC_SEND, DROCE_WC_SUCCESS, f.a.qp->qp_num);
			assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
			expect_wc(&wc, 300 + i, DROCE_WC_RECV, DROCE_WC_SUCCESS, f.b.qp->qp_num);
			assert_int_equal(wc.byte_len, sizes[i]);
			assert_int_equal(!!(wc.wc_flags & DROCE_WC_WITH_IMM), imm);
			if (imm)
				assert_int_equal(rte_be_to_cpu_32(wc.imm_data), 0xabc000u + i);
			assert_memory_equal(f.b.buf, f.a.buf, sizes[i]);
		}
		fx_destroy_qps(&f);
	}
	fx_close(&f);
}

static void
test_rc_read_every_size_and_mtu(void **state)
{
	struct droce_wc wc;
	uint32_t sizes[6];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	for (size_t m = 0; m < sizeof(mtus) / sizeof(mtus[0]); m++) {
		struct fx_qp_opts o = { .mtu = mtus[m], .psn = NEAR_WRAP };

		fx_connect(&f, &o);
		sizes_for((uint32_t)droce_mtu_to_num(mtus[m]), sizes);
		for (int i = 0; i < 6; i++) {
			fx_fill(f.b.buf + 4096, sizes[i], (uint32_t)(m * 30 + i));
			memset(f.a.buf, 0x5a, sizes[i] + 8);
			assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_READ, 400 + i, f.a.buf,
						 sizes[i], f.a.mr->lkey,
						 (uintptr_t)f.b.buf + 4096, f.b.mr->rkey,
						 DROCE_SEND_SIGNALED), 0);
			assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
			expect_wc(&wc, 400 + i, DROCE_WC_RDMA_READ, DROCE_WC_SUCCESS,
				  f.a.qp->qp_num);
			assert_int_equal(wc.byte_len, sizes[i]);
			assert_memory_equal(f.a.buf, f.b.buf + 4096, sizes[i]);
			assert_int_equal(f.a.buf[sizes[i]], 0x5a);
		}
		fx_destroy_qps(&f);
	}
	fx_close(&f);
}

static void
test_rc_atomics_are_real_atomics(void **state)
{
	uint64_t *target, *result;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP });
	target = (uint64_t *)(f.b.buf + 1024);
	result = (uint64_t *)(f.a.buf + 2048);
	*target = 40;

	sge = (struct droce_sge){ (uintptr_t)result, 8, f.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = f.b.mr->rkey;

	/* FETCH_ADD returns the old value and adds */
	wr.wr_id = 1;
	wr.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 2;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 1, DROCE_WC_FETCH_ADD, DROCE_WC_SUCCESS, f.a.qp->qp_num);
	assert_true(*result == 40 && *target == 42);

	/* CMP_SWAP that matches swaps */
	wr.wr_id = 2;
	wr.opcode = DROCE_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 0x1122334455667788ull;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 2, DROCE_WC_COMP_SWAP, DROCE_WC_SUCCESS, f.a.qp->qp_num);
	assert_true(*result == 42 && *target == 0x1122334455667788ull);

	/* CMP_SWAP that does not match leaves memory alone */
	wr.wr_id = 3;
	wr.wr.atomic.compare_add = 7;
	wr.wr.atomic.swap = 9;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 3, DROCE_WC_COMP_SWAP, DROCE_WC_SUCCESS, f.a.qp->qp_num);
	assert_true(*result == 0x1122334455667788ull &&
		    *target == 0x1122334455667788ull);
	fx_destroy_qps(&f);
	fx_close(&f);
}

static void
test_rc_write_with_imm_and_multi_sge(void **state)
{
	struct droce_sge sges[3], rsges[2];
	struct droce_send_wr wr, *bad;
	struct droce_recv_wr rwr, *rbad;
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP });
	fx_fill(f.a.buf, 10000, 77);

	/* WRITE_WITH_IMM gathered from three pieces; the receiver's WQE is
	 * consumed and reports the immediate and the byte count */
	sges[0] = (struct droce_sge){ (uintptr_t)f.a.buf, 1000, f.a.mr->lkey };
	sges[1] = (struct droce_sge){ (uintptr_t)f.a.buf + 1000, 3000, f.a.mr->lkey };
	sges[2] = (struct droce_sge){ (uintptr_t)f.a.buf + 4000, 6000, f.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = sges;
	wr.num_sge = 3;
	wr.opcode = DROCE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32(0x33333333);
	wr.wr.rdma.remote_addr = (uintptr_t)f.b.buf + 100000;
	wr.wr.rdma.rkey = f.b.mr->rkey;
	assert_int_equal(fx_post_recv(f.b.qp, 10, NULL, 0, 0), 0);
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 9, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS, f.a.qp->qp_num);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 10, DROCE_WC_RECV_RDMA_WITH_IMM, DROCE_WC_SUCCESS, f.b.qp->qp_num);
	assert_int_equal(rte_be_to_cpu_32(wc.imm_data), 0x33333333);
	assert_int_equal(wc.byte_len, 10000);
	assert_memory_equal(f.b.buf + 100000, f.a.buf, 10000);

	/* SEND scattered into two receive buffers */
	rsges[0] = (struct droce_sge){ (uintptr_t)f.b.buf + 200000, 2500, f.b.mr->lkey };
	rsges[1] = (struct droce_sge){ (uintptr_t)f.b.buf + 300000, 10000, f.b.mr->lkey };
	rwr = (struct droce_recv_wr){ .wr_id = 11, .sg_list = rsges, .num_sge = 2 };
	assert_int_equal(droce_post_recv(f.b.qp, &rwr, &rbad), 0);
	wr.opcode = DROCE_WR_SEND;
	wr.wr_id = 12;
	assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
	expect_wc(&wc, 11, DROCE_WC_RECV, DROCE_WC_SUCCESS, f.b.qp->qp_num);
	assert_int_equal(wc.byte_len, 10000);
	assert_memory_equal(f.b.buf + 200000, f.a.buf, 2500);
	assert_memory_equal(f.b.buf + 300000, f.a.buf + 2500, 7500);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);

	/* inline SEND: the source buffer may change right after posting */
	{
		uint8_t tmp[64];

		memset(tmp, 0x42, sizeof(tmp));
		sges[0] = (struct droce_sge){ (uintptr_t)tmp, sizeof(tmp), 0 };
		wr.num_sge = 1;
		wr.wr_id = 13;
		wr.send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE;
		assert_int_equal(fx_post_recv(f.b.qp, 14, f.b.buf, 64, f.b.mr->lkey), 0);
		assert_int_equal(droce_post_send(f.a.qp, &wr, &bad), 0);
		memset(tmp, 0, sizeof(tmp));
		assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 10), 1);
		expect_wc(&wc, 14, DROCE_WC_RECV, DROCE_WC_SUCCESS, f.b.qp->qp_num);
		for (int i = 0; i < 64; i++)
			assert_int_equal(f.b.buf[i], 0x42);
		assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	}
	fx_destroy_qps(&f);
	fx_close(&f);
}

/* Four WRITEs of 100 bytes to 4 places, the first three unsignaled. */
static void
post_four_writes(struct fx *f, uint64_t first_id, uint32_t fill)
{
	for (int i = 0; i < 4; i++) {
		uint8_t *src = f->a.buf + 1000 * i;

		fx_fill(src, 100, fill + (uint32_t)i);
		assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_WRITE, first_id + i, src,
					 100, f->a.mr->lkey, (uintptr_t)f->b.buf + 1000 * i,
					 f->b.mr->rkey, i == 3 ? DROCE_SEND_SIGNALED : 0),
				 0);
	}
}

static void
assert_four_writes_landed(struct fx *f)
{
	for (int i = 0; i < 4; i++)
		assert_memory_equal(f->b.buf + 1000 * i, f->a.buf + 1000 * i, 100);
}

static void
test_rc_unsignaled_and_sq_sig_all(void **state)
{
	struct droce_wc wc[8];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP });
	/* three unsignaled writes then a signaled one: one completion */
	post_four_writes(&f, 50, 1);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 1, 10), 1);
	assert_int_equal(wc[0].wr_id, 53);
	assert_int_equal(wc[0].status, DROCE_WC_SUCCESS);
	assert_four_writes_landed(&f);
	fx_spin(&f, 0.01);
	assert_int_equal(droce_poll_cq(f.a.cq, 8, wc), 0);
	fx_destroy_qps(&f);

	/* sq_sig_all: the same WRs complete every one, in order */
	fx_connect(&f, &(struct fx_qp_opts){ .psn = NEAR_WRAP, .sq_sig_all = true });
	post_four_writes(&f, 60, 5);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, 10), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, 60 + i);
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
		assert_int_equal(wc[i].opcode, DROCE_WC_RDMA_WRITE);
	}
	assert_four_writes_landed(&f);
	fx_spin(&f, 0.01);
	assert_int_equal(droce_poll_cq(f.a.cq, 8, wc), 0);
	fx_destroy_qps(&f);
	fx_close(&f);
}

/* Every frame the wire lost: all IPv6 between GID index 1 of a and b. */
struct v6_frames {
	uint8_t src[16], dst[16];
	unsigned int n;
};

static void
check_v6_frame(void *arg, const struct roce_pkt *sent, const uint8_t *frame)
{
	struct v6_frames *v = arg;

	(void)frame;
	assert_int_equal(sent->ip_version, 6);
	assert_memory_equal(sent->src_gid, v->src, 16);
	assert_memory_equal(sent->dst_gid, v->dst, 16);
	assert_int_equal(sent->udp_dport, ROCE_UDP_PORT);
	v->n++;
}

/*
 * The same operations over IPv6 GIDs (2001:2::/48).  The wire is cut for
 * the WRITE's first try: it reports every frame, all IPv6 with the GIDs
 * of index 1; the retry after the timeout goes through.
 */
static void
test_rc_over_ipv6(void **state)
{
	struct vwire_config wire = { 0 };
	struct vwire_faults cut = { .drop = 1.0 };
	struct fx_faults_seen seen_ab, seen_ba;
	struct v6_frames v6 = { .n = 0 };
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_watch_faults(&wire.a_to_b, &seen_ab);
	fx_watch_faults(&wire.b_to_a, &seen_ba);
	fx_open(&f, &wire, BUF);
	/* timeout 14 (67 ms): the first try is out long before the retry */
	fx_connect(&f, &(struct fx_qp_opts){ .psn = 5, .ipv6 = true, .timeout = 14 });
	assert_int_equal(tp_dev_query_gid(verbs_tp(f.a.ctx), 1, v6.src), 0);
	assert_int_equal(tp_dev_query_gid(verbs_tp(f.b.ctx), 1, v6.dst), 0);
	fx_watch_faults(&cut, &seen_ab);
	seen_ab.lost = check_v6_frame;
	seen_ab.lost_arg = &v6;
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	fx_fill(f.a.buf, 20000, 5);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 20000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	while (v6.n < (20000 + 1023) / 1024 && fx_counter(&f.a, "retransmit_timeouts") == 0)
		fx_spin(&f, 0.0001);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(v6.n, (20000 + 1023) / 1024);
	assert_int_equal(vwire_set_faults(f.a.link, &wire.a_to_b), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.b.buf, f.a.buf, 20000);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 1);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_READ, 2, f.a.buf + 50000, 20000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_memory_equal(f.a.buf + 50000, f.a.buf, 20000);
	assert_int_equal(v6.n, (20000 + 1023) / 1024);
	fx_check_faults(&f, &seen_ab, &seen_ba);
	fx_destroy_qps(&f);
	fx_close(&f);
}


/*
 * One WRITE, one SEND and one READ; returns the log the engines wrote.
 * The byte and completion checks are the same traced or not.
 */
static char *
run_write_send_read(struct fx *f, uint32_t round)
{
	struct droce_wc wc;
	char *log = NULL;
	size_t loglen = 0;
	FILE *out = open_memstream(&log, &loglen);

	assert_non_null(out);
	rte_openlog_stream(out);
	fx_fill(f->a.buf, 4096, round);
	assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_WRITE, 1, f->a.buf, 64,
				 f->a.mr->lkey, (uintptr_t)f->b.buf, f->b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(f, f->a.cq, &wc, 1, 5), 1);
	expect_wc(&wc, 1, DROCE_WC_RDMA_WRITE, DROCE_WC_SUCCESS, f->a.qp->qp_num);
	assert_memory_equal(f->b.buf, f->a.buf, 64);
	assert_int_equal(fx_post_recv(f->b.qp, 2, f->b.buf + 1024, 256, f->b.mr->lkey), 0);
	assert_int_equal(fx_post(f->a.qp, DROCE_WR_SEND, 3, f->a.buf + 64, 100,
				 f->a.mr->lkey, 0, 0, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(f, f->b.cq, &wc, 1, 5), 1);
	expect_wc(&wc, 2, DROCE_WC_RECV, DROCE_WC_SUCCESS, f->b.qp->qp_num);
	assert_int_equal(wc.byte_len, 100);
	assert_int_equal(fx_poll(f, f->a.cq, &wc, 1, 5), 1);
	expect_wc(&wc, 3, DROCE_WC_SEND, DROCE_WC_SUCCESS, f->a.qp->qp_num);
	assert_memory_equal(f->b.buf + 1024, f->a.buf + 64, 100);
	assert_int_equal(fx_post(f->a.qp, DROCE_WR_RDMA_READ, 4, f->a.buf + 2048, 8,
				 f->a.mr->lkey, (uintptr_t)f->b.buf + 8, f->b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(f, f->a.cq, &wc, 1, 5), 1);
	expect_wc(&wc, 4, DROCE_WC_RDMA_READ, DROCE_WC_SUCCESS, f->a.qp->qp_num);
	assert_memory_equal(f->a.buf + 2048, f->b.buf + 8, 8);
	fx_spin(f, 0.01);
	rte_openlog_stream(NULL);
	fclose(out);
	return log;
}

static const char *const counted[] = {
	"sent_pkts", "rcvd_pkts", "rdma_sends", "rdma_recvs", "sent_acks", "rcvd_acks",
	"duplicate_request", "out_of_seq_request", "retransmitted_pkts",
};
#define NCOUNTED (sizeof(counted) / sizeof(counted[0]))

static void
take_counters(struct fx *f, uint64_t *v)
{
	for (size_t i = 0; i < NCOUNTED; i++) {
		v[i] = fx_counter(&f->a, counted[i]);
		v[NCOUNTED + i] = fx_counter(&f->b, counted[i]);
	}
}

/*
 * Per-packet traces (droce.transport at DEBUG) only log: the same states
 * run, so the same packets, completions and counters come out, and the
 * trace names the path each packet took.
 */
static void
test_rc_traced_runs_the_same_code(void **state)
{
	uint64_t c0[2 * NCOUNTED], c1[2 * NCOUNTED], c2[2 * NCOUNTED];
	struct fx_qp_opts o = { .mtu = DROCE_MTU_1024, .psn = NEAR_WRAP };
	char want[192];
	char *log;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &o);
	take_counters(&f, c0);
	log = run_write_send_read(&f, 1);
	assert_null(strstr(log, "resp psn"));
	free(log);
	take_counters(&f, c1);

	assert_int_equal(rte_log_set_level_pattern("droce.transport", RTE_LOG_DEBUG), 0);
	log = run_write_send_read(&f, 2);
	assert_int_equal(rte_log_set_level_pattern("droce.transport", RTE_LOG_NOTICE), 0);
	take_counters(&f, c2);
	for (size_t i = 0; i < 2 * NCOUNTED; i++)
		if (c2[i] - c1[i] != c1[i] - c0[i])
			fail_msg("%s %s: %llu traced, %llu untraced", i < NCOUNTED ? "A" : "B",
				 counted[i % NCOUNTED], (unsigned long long)(c2[i] - c1[i]),
				 (unsigned long long)(c1[i] - c0[i]));
	/* the WRITE of the traced round: the responder's first packet of it */
	snprintf(want, sizeof(want), "qp %u resp psn %u: CHECK_PSN CHECK_OP_SEQ "
		 "CHECK_OP_VALID CHECK_RESOURCE CHECK_LENGTH CHECK_RKEY EXECUTE "
		 "COMPLETE ACKNOWLEDGE\n", f.b.qp->qp_num, (NEAR_WRAP + 3) & 0xffffff);
	if (strstr(log, want) == NULL)
		fail_msg("no \"%s\" in the trace:\n%s", want, log);
	free(log);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_write_every_size_and_mtu),
		cmocka_unit_test(test_rc_send_every_size_with_and_without_imm),
		cmocka_unit_test(test_rc_read_every_size_and_mtu),
		cmocka_unit_test(test_rc_atomics_are_real_atomics),
		cmocka_unit_test(test_rc_write_with_imm_and_multi_sge),
		cmocka_unit_test(test_rc_unsignaled_and_sq_sig_all),
		cmocka_unit_test(test_rc_over_ipv6),
		cmocka_unit_test(test_rc_traced_runs_the_same_code),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("rc_ops", tests, NULL, NULL);
}
