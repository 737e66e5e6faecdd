/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD and UC between two droce stacks.  UD: SEND with DETH, Q_Key checks,
 * the 40-byte GRH in front of the data as ibverbs delivers it for RoCE,
 * IPv4 and IPv6.  UC: SEND/WRITE without acknowledgements; a lost packet
 * loses its message and nothing else, and never corrupts memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>

#include "roce_wire.h"
#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define BUF (1u << 20)
#define QKEY 0x11111111u

static struct droce_ah *
ah_to(struct fx_end *from, struct fx_end *to, int gid_index)
{
	struct droce_ah_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.sgid_index = (uint8_t)gid_index;
	attr.grh.hop_limit = 64;
	assert_int_equal(tp_dev_query_gid(verbs_tp(to->ctx), (unsigned int)gid_index,
					  attr.grh.dgid.raw), 0);
	return droce_create_ah(from->pd, &attr);
}

static int
post_ud_send(struct fx_end *from, struct droce_ah *ah, uint32_t qpn, uint32_t qkey,
	     uint64_t wr_id, uint32_t len, bool imm)
{
	struct droce_sge sge = { (uintptr_t)from->buf, len, from->mr->lkey };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? DROCE_WR_SEND_WITH_IMM : DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32(0x5eed);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return droce_post_send(from->qp, &wr, &bad);
}

static void
check_ud_receive(struct fx *f, int gid_index, bool ipv6)
{
	struct droce_ah *ah = ah_to(&f->a, &f->b, gid_index);
	struct droce_wc wc;
	uint8_t src_gid[16];

	assert_non_null(ah);
	fx_fill(f->a.buf, 1024, 9);
	memset(f->b.buf, 0, 2048);
	assert_int_equal(fx_post_recv(f->b.qp, 1, f->b.buf, 40 + 1024, f->b.mr->lkey), 0);
	assert_int_equal(post_ud_send(&f->a, ah, f->b.qp->qp_num, QKEY, 2, 1024, true), 0);
	assert_int_equal(fx_poll(f, f->a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_SEND);
	assert_int_equal(fx_poll(f, f->b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_RECV);
	assert_int_equal(wc.byte_len, 40 + 1024);	/* GRH counted, as ibverbs */
	assert_int_equal(wc.src_qp, f->a.qp->qp_num);
	assert_true(wc.wc_flags & DROCE_WC_GRH);
	assert_true(wc.wc_flags & DROCE_WC_WITH_IMM);
	assert_int_equal(rte_be_to_cpu_32(wc.imm_data), 0x5eed);
	assert_memory_equal(f->b.buf + 40, f->a.buf, 1024);

	/* the GRH area holds the IP header the packet came with */
	assert_int_equal(tp_dev_query_gid(verbs_tp(f->a.ctx), (unsigned int)gid_index,
					  src_gid), 0);
	if (ipv6) {
		assert_int_equal(f->b.buf[0] >> 4, 6);
		assert_memory_equal(f->b.buf + 8, src_gid, 16);
	} else {
		assert_int_equal(f->b.buf[20] >> 4, 4);
		assert_memory_equal(f->b.buf + 20 + 12, src_gid + 12, 4);
	}
	assert_int_equal(droce_destroy_ah(ah), 0);
}

static void
test_ud_send_ipv4_and_ipv6_with_grh(void **state)
{
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD, .mtu = DROCE_MTU_4096 });
	check_ud_receive(&f, 0, false);
	check_ud_receive(&f, 1, true);
	fx_close(&f);
}

static void
test_ud_wrong_qkey_is_dropped_bad_flow(void **state)
{
	struct droce_ah *ah;
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD });
	ah = ah_to(&f.a, &f.b, 0);
	assert_non_null(ah);
	assert_int_equal(fx_post_recv(f.b.qp, 1, f.b.buf, 4096, f.b.mr->lkey), 0);
	assert_int_equal(post_ud_send(&f.a, ah, f.b.qp->qp_num, 0x22222222, 2, 64, false), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);	/* UD: sent is done */
	fx_spin(&f, 0.01);
	assert_int_equal(droce_poll_cq(f.b.cq, 1, &wc), 0);
	assert_int_equal(fx_counter(&f.b, "ud_qkey_drop"), 1);
	/* the receive buffer is still there for the right Q_Key */
	assert_int_equal(post_ud_send(&f.a, ah, f.b.qp->qp_num, QKEY, 3, 64, false), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.byte_len, 40 + 64);
	/* a Q_Key with the high bit set means "the sender QP's own Q_Key" */
	assert_int_equal(fx_post_recv(f.b.qp, 4, f.b.buf, 4096, f.b.mr->lkey), 0);
	assert_int_equal(post_ud_send(&f.a, ah, f.b.qp->qp_num, 0x80000000u, 5, 8, false), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.wr_id, 4);
	assert_int_equal(droce_destroy_ah(ah), 0);
	fx_spin(&f, 0.01);
	while (droce_poll_cq(f.a.cq, 1, &wc) > 0)
		;
	fx_close(&f);
}

static void
test_ud_without_receive_buffer_is_dropped_bad_flow(void **state)
{
	struct droce_ah *ah;
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD });
	ah = ah_to(&f.a, &f.b, 0);
	assert_int_equal(post_ud_send(&f.a, ah, f.b.qp->qp_num, QKEY, 1, 64, false), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	fx_spin(&f, 0.01);
	assert_int_equal(droce_poll_cq(f.b.cq, 1, &wc), 0);
	assert_int_equal(fx_counter(&f.b, "rx_no_recv_wqe_drop"), 1);
	/* a message longer than the port MTU (4096 on a 4200 link) cannot be
	 * posted on UD */
	assert_int_equal(post_ud_send(&f.a, ah, f.b.qp->qp_num, QKEY, 2, 4097, false),
			 EINVAL);
	assert_int_equal(droce_destroy_ah(ah), 0);
	fx_close(&f);
}

/*
 * A UD WQE names its AH by index (droce_ah.handle), resolved by the engine
 * for the QP's PD only: an AH of another PD of the same context, and the
 * index of an AH destroyed already, end the WQE in LOC_QP_OP_ERR (and its
 * QP in ERR); nothing is sent.
 */
static void
ud_send_fails(bool stale)
{
	struct droce_ah *mine, *other, copy;
	struct droce_pd *pd2, *pd1;
	struct droce_wc wc;
	struct fx f;

	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD, .mtu = DROCE_MTU_4096 });
	pd2 = droce_alloc_pd(f.a.ctx);
	assert_non_null(pd2);
	mine = ah_to(&f.a, &f.b, 0);
	assert_non_null(mine);
	/* the same address on pd2: only the PD differs */
	pd1 = f.a.pd;
	f.a.pd = pd2;
	other = ah_to(&f.a, &f.b, 0);
	f.a.pd = pd1;
	assert_non_null(other);
	copy = *mine;
	if (stale) {
		assert_int_equal(droce_destroy_ah(mine), 0);
		mine = NULL;
	}
	assert_int_equal(post_ud_send(&f.a, stale ? &copy : other, f.b.qp->qp_num, QKEY, 5,
				      64, false), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.wr_id, 5);
	assert_int_equal(wc.status, DROCE_WC_LOC_QP_OP_ERR);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 1), 0);	/* nothing arrived */
	assert_int_equal(droce_destroy_ah(other), 0);
	if (mine != NULL)
		assert_int_equal(droce_destroy_ah(mine), 0);
	assert_int_equal(droce_dealloc_pd(pd2), 0);
	fx_close(&f);
}

static void
test_ud_ah_of_another_pd_bad_flow(void **state)
{
	(void)state;
	ud_send_fails(false);
}

static void
test_ud_destroyed_ah_bad_flow(void **state)
{
	(void)state;
	ud_send_fails(true);
}

static void
test_uc_write_and_send(void **state)
{
	struct droce_wc wc;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UC, .psn = 0xfffffe,
					     .access = DROCE_ACCESS_REMOTE_WRITE });
	fx_fill(f.a.buf, 100000, 3);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 100000,
				 f.a.mr->lkey, (uintptr_t)f.b.buf, f.b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	fx_spin(&f, 0.01);
	assert_memory_equal(f.b.buf, f.a.buf, 100000);
	assert_int_equal(fx_post_recv(f.b.qp, 2, f.b.buf + 200000, 8192, f.b.mr->lkey), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, 3, f.a.buf, 5000, f.a.mr->lkey,
				 0, 0, DROCE_SEND_SIGNALED), 0);
	assert_int_equal(fx_poll(&f, f.b.cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 5000);
	assert_memory_equal(f.b.buf + 200000, f.a.buf, 5000);
	/* nothing acknowledges UC */
	assert_int_equal(fx_counter(&f.b, "sent_acks"), 0);
	assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 5), 1);
	/* UC has no READ */
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_READ, 4, f.a.buf, 8, f.a.mr->lkey,
				 (uintptr_t)f.b.buf, f.b.mr->rkey, 0), EINVAL);
	fx_close(&f);
}

enum { UC_MSGS = 300, UC_LEN = 6000, UC_PKTS = 6 };	/* 6000 B at MTU 1024 */

/* The packets the wire lost, by PSN (the QPs start at PSN 0). */
static void
uc_packet_lost(void *arg, const struct roce_pkt *sent, const uint8_t *frame)
{
	bool *lost = arg;

	(void)frame;
	assert_true(sent->psn < UC_MSGS * UC_PKTS);
	lost[sent->psn] = true;
}

/*
 * uc_msg_drop counts a message in progress given up at a PSN gap (9.7.7):
 * its FIRST arrived, a later packet of it was lost, and some packet after
 * that loss arrived to show the gap.
 */
static uint64_t
uc_expected_msg_drops(const bool *lost)
{
	uint64_t drops = 0;

	for (uint32_t m = 0; m < UC_MSGS; m++) {
		uint32_t first = m * UC_PKTS, k;

		if (lost[first])
			continue;
		for (k = first + 1; k < first + UC_PKTS && !lost[k]; k++)
			;
		if (k == first + UC_PKTS)
			continue;	/* complete */
		for (k++; k < UC_MSGS * UC_PKTS && lost[k]; k++)
			;
		drops += k < UC_MSGS * UC_PKTS;
	}
	return drops;
}

static bool
uc_msg_whole(const bool *lost, uint32_t m)
{
	for (uint32_t k = 0; k < UC_PKTS; k++)
		if (lost[m * UC_PKTS + k])
			return false;
	return true;
}

/*
 * UC over a lossy wire: a message arrives whole and right exactly when
 * none of its packets was lost, else not at all; a lost packet never makes
 * a receive buffer complete with another message's bytes.  The receive
 * WQEs complete in order, each with the next whole message.
 */
static void
test_uc_loss_drops_messages_never_corrupts(void **state)
{
	struct vwire_config wire = {
		.a_to_b = { .drop = 0.02, .seed = fx_seed() },
	};
	static bool lost[UC_MSGS * UC_PKTS];
	struct fx_faults_seen seen_ab, seen_ba;
	uint8_t want[UC_LEN];
	struct droce_wc wc;
	int sends_done = 0;
	uint32_t got = 0, next = 0;
	struct fx f;

	(void)state;
	memset(lost, 0, sizeof(lost));
	fx_watch_faults(&wire.a_to_b, &seen_ab);
	fx_watch_faults(&wire.b_to_a, &seen_ba);
	seen_ab.lost = uc_packet_lost;
	seen_ab.lost_arg = lost;
	fx_open(&f, &wire, 4u << 20);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UC, .max_wr = 512 });
	for (int i = 0; i < UC_MSGS; i++) {
		/* the message number in the first 4 bytes, then a pattern of it */
		uint8_t *src = f.a.buf + (size_t)i * UC_LEN;

		fx_fill(src, UC_LEN, (uint32_t)i);
		memcpy(src, &i, sizeof(i));
		assert_int_equal(fx_post_recv(f.b.qp, (uint64_t)i,
					      f.b.buf + (size_t)i * 8192, 8192,
					      f.b.mr->lkey), 0);
	}
	for (int i = 0; i < UC_MSGS; i++) {
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, (uint64_t)i,
					 f.a.buf + (size_t)i * UC_LEN, UC_LEN, f.a.mr->lkey,
					 0, 0, DROCE_SEND_SIGNALED), 0);
		while (fx_poll(&f, f.a.cq, &wc, 1, 0.001) == 1) {
			assert_int_equal(wc.status, DROCE_WC_SUCCESS);
			sends_done++;
		}
	}
	while (sends_done < UC_MSGS && fx_poll(&f, f.a.cq, &wc, 1, 5) == 1)
		sends_done++;
	assert_int_equal(sends_done, UC_MSGS);
	fx_check_faults(&f, &seen_ab, &seen_ba);
	while (droce_poll_cq(f.b.cq, 1, &wc) == 1) {
		uint8_t *dst;
		int n;

		assert_int_equal(wc.status, DROCE_WC_SUCCESS);
		assert_int_equal(wc.byte_len, UC_LEN);
		assert_int_equal(wc.wr_id, got);
		/* the next message none of whose packets was lost */
		while (next < UC_MSGS && !uc_msg_whole(lost, next))
			next++;
		assert_true(next < UC_MSGS);
		dst = f.b.buf + (size_t)wc.wr_id * 8192;
		memcpy(&n, dst, sizeof(n));
		assert_int_equal(n, next);
		fx_fill(want, UC_LEN, (uint32_t)n);
		memcpy(want, &n, sizeof(n));
		assert_memory_equal(dst, want, UC_LEN);
		got++;
		next++;
	}
	while (next < UC_MSGS && !uc_msg_whole(lost, next))
		next++;
	assert_int_equal(next, UC_MSGS);	/* no whole message missing */
	printf("# UC: %u of %d messages arrived, %" PRIu64 " packets lost, %" PRIu64
	       " messages given up at a gap\n", got, UC_MSGS, seen_ab.dropped,
	       fx_counter(&f.b, "uc_msg_drop"));
	assert_int_equal(fx_counter(&f.b, "uc_msg_drop"), uc_expected_msg_drops(lost));
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ud_send_ipv4_and_ipv6_with_grh),
		cmocka_unit_test(test_ud_wrong_qkey_is_dropped_bad_flow),
		cmocka_unit_test(test_ud_without_receive_buffer_is_dropped_bad_flow),
		cmocka_unit_test(test_ud_ah_of_another_pd_bad_flow),
		cmocka_unit_test(test_ud_destroyed_ah_bad_flow),
		cmocka_unit_test(test_uc_write_and_send),
		cmocka_unit_test(test_uc_loss_drops_messages_never_corrupts),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests_name("ud_uc", tests, NULL, NULL));
}
