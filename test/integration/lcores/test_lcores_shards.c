/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several transport lcores per device (lib/transport/tp_shard.c) over the
 * virtual wire: EAL "--lcores 0@0,1@1,2@1" (3 lcores on a 2-core machine: the
 * busy-polling threads share cores, so timeouts are generous and nothing
 * here measures speed), the test on the main lcore, each of the two droce
 * engines sharded over lcores 1 and 2 (QP n on lcore 1 + n % 2).
 *
 * The vwire has one queue: shard 0 receives every frame and hands those
 * of shard 1's QPs over (the handoff counters must show it), shard 1
 * sends through shard 0.  Eight RC QP pairs, all on one CQ per side (a CQ
 * shared by QPs of both shards), run WRITE, READ, SEND and both atomics
 * at the same time: every byte, every completion (status, opcode, length,
 * per-QP order) is checked, over IPv4 and IPv6, on a clean wire and
 * under loss, duplication, reordering and corruption.  Also: UD sends
 * between QPs of different shards, QPN placement on the least-loaded
 * shard, and bad lcore lists.
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
#include "verbs_private.h"
#include "verbs_engine.h"

#define NQP 8
#define BUF (8u << 20)
#define REGION (256u << 10)	/* per QP: WRITE, READ, SEND areas */
#define MSG (24u << 10)		/* up to this many bytes per message */
#define T_OUT 60.0		/* seconds: 3 busy lcores on 2 cores */
#define NOPS 5			/* WRITE, READ, SEND, FETCH_ADD, CMP_SWP */

#define OFF_WRITE 0u
#define OFF_READ (64u << 10)
#define OFF_SEND (128u << 10)
#define OFF_ATOMIC (7u << 20)	/* one 8-byte word per QP */

struct pair {
	struct droce_qp *a;
	struct droce_qp *b;
};

static void dump(void);
static unsigned int counter_index(const char *name);

static void
expect_status(const struct droce_wc *wc, enum droce_wc_status st)
{
	if (wc->status != st)
		dump();
	if (wc->status != st)
		fail_msg("wr %llu: status %s, expected %s",
			 (unsigned long long)wc->wr_id,
			 droce_wc_status_str(wc->status), droce_wc_status_str(st));
}

static uint32_t
msg_len(uint32_t seed, unsigned int q)
{
	return 1 + (seed * 7919u + q * 2713u) % MSG;
}

static void
connect_pairs(struct fx *f, struct pair *p, bool ipv6)
{
	unsigned int on_shard[2] = { 0, 0 };

	for (unsigned int q = 0; q < NQP; q++) {
		/*
		 * timeout 14 (67 ms): two busy lcores share one CPU here, each
		 * waits a time slice (ms) for the other; the default 1 ms
		 * would retransmit what is only waiting in a handoff ring
		 */
		fx_connect(f, &(struct fx_qp_opts){ .ipv6 = ipv6, .max_wr = 64,
						    .timeout = 14 });
		p[q].a = f->a.qp;
		p[q].b = f->b.qp;
		on_shard[p[q].a->qp_num % 2]++;
		f->a.qp = f->b.qp = NULL;	/* destroyed here, not by fx_close */
	}
	/* the QPs are spread over both shards */
	assert_int_equal(on_shard[0], NQP / 2);
	assert_int_equal(on_shard[1], NQP / 2);
}

static void
destroy_pairs(struct pair *p)
{
	for (unsigned int q = 0; q < NQP; q++) {
		assert_int_equal(droce_destroy_qp(p[q].a), 0);
		assert_int_equal(droce_destroy_qp(p[q].b), 0);
	}
}

static uint64_t
wr_id(unsigned int q, unsigned int op)
{
	return (uint64_t)q * 100 + op;
}

/* Every QP: WRITE, READ of it back, SEND, FETCH_ADD, CMP_SWP, at once. */
static void
post_all(struct fx *f, struct pair *p, uint32_t seed)
{
	for (unsigned int q = 0; q < NQP; q++) {
		uint8_t *la = f->a.buf + q * REGION, *lb = f->b.buf + q * REGION;
		uintptr_t rb = (uintptr_t)lb;
		uint64_t *word = (uint64_t *)(f->b.buf + OFF_ATOMIC) + q;
		uint32_t n = msg_len(seed, q);

		fx_fill(la + OFF_WRITE, MSG, seed + q);
		memset(lb + OFF_WRITE, 0, MSG + 1);
		memset(la + OFF_READ, 0, MSG + 1);
		memset(lb + OFF_SEND, 0, MSG + 1);
		*word = 1000 + q;
		assert_int_equal(fx_post_recv(p[q].b, wr_id(q, 9), lb + OFF_SEND, MSG,
					      f->b.mr->lkey), 0);
		assert_int_equal(fx_post(p[q].a, DROCE_WR_RDMA_WRITE, wr_id(q, 0),
					 la + OFF_WRITE, n, f->a.mr->lkey,
					 rb + OFF_WRITE, f->b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
		/* RC executes in order: the READ sees the WRITE's bytes */
		assert_int_equal(fx_post(p[q].a, DROCE_WR_RDMA_READ, wr_id(q, 1),
					 la + OFF_READ, n, f->a.mr->lkey,
					 rb + OFF_WRITE, f->b.mr->rkey,
					 DROCE_SEND_SIGNALED), 0);
		assert_int_equal(fx_post(p[q].a, DROCE_WR_SEND, wr_id(q, 2),
					 la + OFF_WRITE, n, f->a.mr->lkey, 0, 0,
					 DROCE_SEND_SIGNALED), 0);
		/* the atomics' old values land in the READ area's tail */
		{
			struct droce_sge sge = { (uintptr_t)(la + OFF_READ + MSG + 64), 8,
						 f->a.mr->lkey };
			struct droce_send_wr wr = { 0 }, *bad;

			wr.wr_id = wr_id(q, 3);
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD;
			wr.send_flags = DROCE_SEND_SIGNALED;
			wr.wr.atomic.remote_addr = (uintptr_t)word;
			wr.wr.atomic.rkey = f->b.mr->rkey;
			wr.wr.atomic.compare_add = 5;
			assert_int_equal(droce_post_send(p[q].a, &wr, &bad), 0);
			sge.addr += 8;
			wr.wr_id = wr_id(q, 4);
			wr.opcode = DROCE_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = 1005 + q;
			wr.wr.atomic.swap = 0xABCD0000u + q;
			assert_int_equal(droce_post_send(p[q].a, &wr, &bad), 0);
		}
	}
}

static void
check_all(struct fx *f, const struct pair *p, uint32_t seed)
{
	static const enum droce_wc_opcode ops[NOPS] = {
		DROCE_WC_RDMA_WRITE, DROCE_WC_RDMA_READ, DROCE_WC_SEND,
		DROCE_WC_FETCH_ADD, DROCE_WC_COMP_SWAP,
	};
	struct droce_wc wc[NQP * NOPS];
	unsigned int next[NQP] = { 0 };
	int got;

	/* the requester side: one CQ for the QPs of both shards */
	got = fx_poll(f, f->a.cq, wc, NQP * NOPS, T_OUT);
	assert_int_equal(got, NQP * NOPS);
	for (int i = 0; i < got; i++) {
		unsigned int q = (unsigned int)(wc[i].wr_id / 100);
		unsigned int op = (unsigned int)(wc[i].wr_id % 100);

		expect_status(&wc[i], DROCE_WC_SUCCESS);
		assert_true(q < NQP);
		/* one QP's completions in the order of its WRs */
		assert_int_equal(op, next[q]);
		next[q]++;
		assert_int_equal(wc[i].opcode, ops[op]);
		assert_int_equal(wc[i].qp_num, p[q].a->qp_num);
	}
	for (unsigned int q = 0; q < NQP; q++) {
		uint8_t *la = f->a.buf + q * REGION, *lb = f->b.buf + q * REGION;
		uint64_t old[2], word = ((uint64_t *)(f->b.buf + OFF_ATOMIC))[q];
		uint32_t n = msg_len(seed, q);

		assert_int_equal(next[q], NOPS);
		assert_memory_equal(lb + OFF_WRITE, la + OFF_WRITE, n);
		assert_int_equal(lb[OFF_WRITE + n], 0);
		assert_memory_equal(la + OFF_READ, la + OFF_WRITE, n);
		assert_int_equal(la[OFF_READ + n], 0);
		memcpy(old, la + OFF_READ + MSG + 64, sizeof(old));
		assert_int_equal(old[0], 1000 + q);
		assert_int_equal(old[1], 1005 + q);
		assert_int_equal(word, 0xABCD0000u + q);
	}
	/* the responder side: the SENDs, on b's shared CQ */
	got = fx_poll(f, f->b.cq, wc, NQP, T_OUT);
	assert_int_equal(got, NQP);
	for (int i = 0; i < got; i++) {
		unsigned int q = (unsigned int)(wc[i].wr_id / 100);
		uint32_t n;

		expect_status(&wc[i], DROCE_WC_SUCCESS);
		assert_true(q < NQP);
		assert_int_equal(wc[i].wr_id % 100, 9);
		assert_int_equal(wc[i].opcode, DROCE_WC_RECV);
		assert_int_equal(wc[i].qp_num, p[q].b->qp_num);
		n = msg_len(seed, q);
		assert_int_equal(wc[i].byte_len, n);
		assert_memory_equal(f->b.buf + q * REGION + OFF_SEND,
				    f->a.buf + q * REGION + OFF_WRITE, n);
	}
}

static unsigned int
counter_index(const char *name)
{
	for (unsigned int i = 0; i < tp_counter_count(); i++)
		if (strcmp(tp_counter_name(i), name) == 0)
			return i;
	fail_msg("no counter %s", name);
	return 0;
}

/* Both shards worked, and frames crossed from one to the other. */
static void
check_shards(struct fx_end *e, struct fx_end *peer, const char *name)
{
	struct vwire_stats wire;
	struct tp_dev *dev = verbs_tp(e->ctx);
	unsigned int rcvd = counter_index("rcvd_pkts");
	unsigned int sent = counter_index("sent_pkts");
	uint64_t s0 = tp_dev_shard_counter(dev, 0, rcvd);
	uint64_t s1 = tp_dev_shard_counter(dev, 1, rcvd);

	assert_int_equal(tp_dev_shards(dev), 2);
	printf("# %s: shard 0 rcvd %llu sent %llu, shard 1 rcvd %llu sent %llu, "
	       "handoff rx %llu tx %llu drop %llu\n", name,
	       (unsigned long long)s0,
	       (unsigned long long)tp_dev_shard_counter(dev, 0, sent),
	       (unsigned long long)s1,
	       (unsigned long long)tp_dev_shard_counter(dev, 1, sent),
	       (unsigned long long)fx_counter(e, "shard_handoff_rx"),
	       (unsigned long long)fx_counter(e, "shard_handoff_tx"),
	       (unsigned long long)fx_counter(e, "shard_handoff_drop"));
	assert_true(s0 > 0);
	assert_true(s1 > 0);
	/* the summed counter is the shards' sum */
	assert_int_equal(fx_counter(e, "rcvd_pkts"), s0 + s1);
	assert_int_equal(fx_counter(e, "shard_handoff_drop"), 0);
	/* single-queue wire: shard 0 took every frame the wire delivered ... */
	vwire_get_stats(peer->link, &wire);
	assert_int_equal(tp_dev_shard_counter(dev, 0, counter_index("shard_link_rx")),
			 wire.delivered);
	assert_int_equal(tp_dev_shard_counter(dev, 1, counter_index("shard_link_rx")), 0);
	/* ... and handed shard 1 its frames (those with a bad ICRC too: the
	 * owner checks it) ... */
	assert_int_equal(fx_counter(e, "shard_handoff_rx"),
			 s1 + tp_dev_shard_counter(dev, 1, counter_index("icrc_err")));
	/* ... and sent every frame shard 1 made */
	assert_int_equal(fx_counter(e, "shard_handoff_tx"),
			 tp_dev_shard_counter(dev, 1, sent));
}

static struct fx *cur;

/* Per-shard counters, when a completion is not what it should be. */
static void
dump(void)
{
	static const char *const names[] = {
		"sent_pkts", "rcvd_pkts", "retransmitted_pkts", "retransmit_timeouts",
		"not_for_us_pkts", "icrc_err", "malformed_pkts", "shard_handoff_rx",
		"shard_handoff_tx", "shard_handoff_drop", "send_err",
		"rx_no_recv_wqe_drop", "ud_qkey_drop", "transport_mismatch",
	};

	for (int e = 0; e < 2 && cur != NULL; e++) {
		struct tp_dev *dev = verbs_tp(e == 0 ? cur->a.ctx : cur->b.ctx);

		for (unsigned int i = 0; i < RTE_DIM(names); i++)
			printf("# %c %s: shard 0 %llu, shard 1 %llu\n", 'a' + e, names[i],
			       (unsigned long long)tp_dev_shard_counter(dev, 0,
						counter_index(names[i])),
			       (unsigned long long)tp_dev_shard_counter(dev, 1,
						counter_index(names[i])));
	}
}

static void
run(const struct vwire_config *wire, bool ipv6, unsigned int rounds)
{
	struct vwire_config w = wire != NULL ? *wire : (struct vwire_config){ 0 };
	/* one link queue: shard 0 (lcore 1) sends every shard's frames */
	uint64_t sender = wire != NULL ? UINT64_C(1) << 1 : 0;
	struct fx_faults_seen ab, ba;
	struct pair p[NQP];
	struct fx f;

	fx_watch_faults(&w.a_to_b, &ab);
	fx_watch_faults(&w.b_to_a, &ba);
	fx_open(&f, &w, BUF);
	cur = &f;
	connect_pairs(&f, p, ipv6);
	for (unsigned int r = 0; r < rounds; r++) {
		post_all(&f, p, 17 + r);
		check_all(&f, p, 17 + r);
	}
	fx_check_faults(&f, &ab, &ba);		/* (the wire is empty now) */
	check_shards(&f.a, &f.b, "a");
	check_shards(&f.b, &f.a, "b");
	assert_int_equal(ab.lcores, sender);
	assert_int_equal(ba.lcores, sender);
	destroy_pairs(p);
	fx_close(&f);
}

static void
test_shards_ipv4(void **state)
{
	(void)state;
	run(NULL, false, 3);
}

static void
test_shards_ipv6(void **state)
{
	(void)state;
	run(NULL, true, 3);
}

static void
test_shards_under_faults(void **state)
{
	struct vwire_config wire = {
		.pool_size = 16383,
		.a_to_b = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() },
		.b_to_a = { .drop = 0.02, .duplicate = 0.01, .reorder = 0.02,
			    .reorder_window = 8, .corrupt = 0.001, .seed = fx_seed() + 1 },
	};

	(void)state;
	run(&wire, false, 2);
	wire.a_to_b.seed = fx_seed() + 2;
	wire.b_to_a.seed = fx_seed() + 3;
	run(&wire, true, 2);
}

/*
 * UD across shards: two UD QPs per side (one on each shard); every QP of
 * a sends to every QP of b (so shard 0 to shard 1 and back as well), with
 * an address handle made once, IPv4 then IPv6.
 */
static void
test_ud_across_shards(void **state)
{
	struct droce_qp *ua[2], *ub[2];
	struct fx f;

	(void)state;
	fx_open(&f, NULL, 1u << 20);
	cur = &f;
	for (int i = 0; i < 2; i++) {
		fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD,
						    .mtu = DROCE_MTU_4096 });
		ua[i] = f.a.qp;
		ub[i] = f.b.qp;
		f.a.qp = f.b.qp = NULL;
	}
	assert_int_not_equal(ua[0]->qp_num % 2, ua[1]->qp_num % 2);
	assert_int_not_equal(ub[0]->qp_num % 2, ub[1]->qp_num % 2);
	for (int gid = 0; gid < 2; gid++) {
		struct droce_ah_attr attr = { .is_global = 1, .port_num = 1 };
		struct droce_wc wc[4];
		struct droce_ah *ah;
		int seen[2][2] = { { 0 } };

		attr.grh.sgid_index = (uint8_t)gid;
		attr.grh.hop_limit = 64;
		assert_int_equal(tp_dev_query_gid(verbs_tp(f.b.ctx), (unsigned int)gid,
						  attr.grh.dgid.raw), 0);
		ah = droce_create_ah(f.a.pd, &attr);
		assert_non_null(ah);
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				assert_int_equal(fx_post_recv(ub[j], (uint64_t)(j * 2 + k),
							      f.b.buf + (j * 2 + k) * 4096,
							      4096, f.b.mr->lkey), 0);
		for (int i = 0; i < 2; i++) {
			for (int j = 0; j < 2; j++) {
				uint8_t *src = f.a.buf + (i * 2 + j) * 4096;
				struct droce_sge sge = { (uintptr_t)src, 1000, f.a.mr->lkey };
				struct droce_send_wr wr = { 0 }, *bad;

				memset(src, 0x40 + i * 2 + j, 1000);
				wr.wr_id = (uint64_t)(i * 2 + j);
				wr.sg_list = &sge;
				wr.num_sge = 1;
				wr.opcode = DROCE_WR_SEND;
				wr.send_flags = DROCE_SEND_SIGNALED;
				wr.wr.ud.ah = ah;
				wr.wr.ud.remote_qpn = ub[j]->qp_num;
				wr.wr.ud.remote_qkey = 0x11111111;
				assert_int_equal(droce_post_send(ua[i], &wr, &bad), 0);
			}
		}
		assert_int_equal(fx_poll(&f, f.a.cq, wc, 4, T_OUT), 4);
		for (int n = 0; n < 4; n++)
			expect_status(&wc[n], DROCE_WC_SUCCESS);
		if (fx_poll(&f, f.b.cq, wc, 4, T_OUT) != 4) {
			dump();
			fail_msg("gid %d: not every UD SEND arrived", gid);
		}
		for (int n = 0; n < 4; n++) {
			int j = (int)wc[n].wr_id / 2, i;
			const uint8_t *got = f.b.buf + wc[n].wr_id * 4096 + 40;

			expect_status(&wc[n], DROCE_WC_SUCCESS);
			assert_int_equal(wc[n].qp_num, ub[j]->qp_num);
			assert_int_equal(wc[n].byte_len, 40 + 1000);
			i = wc[n].src_qp == ua[0]->qp_num ? 0 : 1;
			assert_int_equal(wc[n].src_qp, ua[i]->qp_num);
			/* each receive of ub[j] holds one of the two sends to it */
			assert_int_equal(got[0], 0x40 + i * 2 + j);
			assert_int_equal(got[999], 0x40 + i * 2 + j);
			seen[i][j]++;
		}
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				assert_int_equal(seen[i][j], 1);
		assert_int_equal(droce_destroy_ah(ah), 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(droce_destroy_qp(ua[i]), 0);
		assert_int_equal(droce_destroy_qp(ub[i]), 0);
	}
	fx_close(&f);
}

/*
 * QPN allocation fills the emptier shard: after the QPs of shard 1 are
 * destroyed, the next ones all land there, then they alternate again.
 */
static void
test_least_loaded(void **state)
{
	struct droce_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = DROCE_QPT_RC,
	};
	struct droce_qp *qp[NQP], *more[NQP / 2 + 2];
	unsigned int on1 = 0;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, 1u << 20);
	init.send_cq = init.recv_cq = f.a.cq;
	for (unsigned int q = 0; q < NQP; q++) {
		qp[q] = droce_create_qp(f.a.pd, &init);
		assert_non_null(qp[q]);
		on1 += qp[q]->qp_num % 2;
	}
	assert_int_equal(on1, NQP / 2);
	for (unsigned int q = 0; q < NQP; q++) {
		if (qp[q]->qp_num % 2 == 1) {
			assert_int_equal(droce_destroy_qp(qp[q]), 0);
			qp[q] = NULL;
		}
	}
	/* shard 1 is empty: the next NQP / 2 QPs go there */
	for (unsigned int q = 0; q < NQP / 2; q++) {
		more[q] = droce_create_qp(f.a.pd, &init);
		assert_non_null(more[q]);
		assert_int_equal(more[q]->qp_num % 2, 1);
	}
	/* even again: one each */
	for (unsigned int q = NQP / 2; q < NQP / 2 + 2; q++) {
		more[q] = droce_create_qp(f.a.pd, &init);
		assert_non_null(more[q]);
	}
	assert_int_not_equal(more[NQP / 2]->qp_num % 2, more[NQP / 2 + 1]->qp_num % 2);
	for (unsigned int q = 0; q < NQP; q++)
		if (qp[q] != NULL)
			assert_int_equal(droce_destroy_qp(qp[q]), 0);
	for (unsigned int q = 0; q < NQP / 2 + 2; q++)
		assert_int_equal(droce_destroy_qp(more[q]), 0);
	fx_close(&f);
}

/* A bad lcore list is refused before anything changes. */
static void
test_bad_lists(void **state)
{
	struct droce_context *ctx = droce_open_context(NULL);
	struct droce_link *la, *lb;
	struct tp_dev_config cfg = { 0 };
	unsigned int dup[2] = { 1, 1 }, main_lc[2] = { 1, 0 }, off[2] = { 1, 7 };

	(void)state;
	assert_non_null(ctx);
	assert_int_equal(vwire_pair_create(&(struct vwire_config){ 0 }, &la, &lb), 0);
	assert_int_equal(verbs_attach_link(ctx, la, &cfg), 0);
	assert_int_equal(tp_dev_run_on_lcores(verbs_tp(ctx), dup, 2), -EINVAL);
	assert_int_equal(tp_dev_run_on_lcores(verbs_tp(ctx), main_lc, 2), -EINVAL);
	assert_int_equal(tp_dev_run_on_lcores(verbs_tp(ctx), off, 2), -EINVAL);
	assert_int_equal(tp_dev_shards(verbs_tp(ctx)), 1);
	assert_false(tp_dev_dedicated(verbs_tp(ctx)));
	assert_int_equal(verbs_detach_link(ctx), 0);
	assert_int_equal(droce_close_context(ctx), 0);
	droce_link_close(la);
	droce_link_close(lb);
}

int
main(int argc, char **argv)
{
	static const unsigned int lcores[2] = { 1, 2 };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_lists),
		cmocka_unit_test(test_least_loaded),
		cmocka_unit_test(test_ud_across_shards),
		cmocka_unit_test(test_shards_ipv4),
		cmocka_unit_test(test_shards_ipv6),
		cmocka_unit_test(test_shards_under_faults),
	};

	(void)argc;
	/* 3 lcores on a 2-CPU machine: lcore 2 shares CPU 1 with lcore 1 */
	fx_eal_init_lcores(argv[0], "0@0,1@1,2@1");
	if (!rte_lcore_is_enabled(1) || !rte_lcore_is_enabled(2)) {
		fprintf(stderr, "lcores 1 and 2 not available\n");
		return 1;
	}
	fx_set_transport_lcores(lcores, 2);
	printf("# application on lcore %u, each engine sharded over lcores 1 and 2\n",
	       rte_lcore_id());
	return fx_result(cmocka_run_group_tests_name("lcores_shards", tests, NULL, NULL));
}
