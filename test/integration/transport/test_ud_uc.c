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

/*
 * UC over a lossy wire: every SEND message either arrives whole and right
 * or not at all; a lost packet never makes a receive buffer complete with
 * another message's bytes, and WRITEs never land partially wrong.
 */
static void
test_uc_loss_drops_messages_never_corrupts(void **state)
{
	struct vwire_config wire = {
		.a_to_b = { .drop = 0.02, .seed = 42 },
	};
	enum { MSGS = 300, LEN = 6000 };
	uint8_t want[LEN];
	struct droce_wc wc;
	int got = 0, sends_done = 0;
	struct fx f;

	(void)state;
	fx_open(&f, &wire, 4u << 20);
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UC, .max_wr = 512 });
	for (int i = 0; i < MSGS; i++) {
		/* the message number in the first 4 bytes, then a pattern of it */
		uint8_t *src = f.a.buf + (size_t)i * LEN;

		fx_fill(src, LEN, (uint32_t)i);
		memcpy(src, &i, sizeof(i));
		assert_int_equal(fx_post_recv(f.b.qp, (uint64_t)i,
					      f.b.buf + (size_t)i * 8192, 8192,
					      f.b.mr->lkey), 0);
	}
	for (int i = 0; i < MSGS; i++) {
		assert_int_equal(fx_post(f.a.qp, DROCE_WR_SEND, (uint64_t)i,
					 f.a.buf + (size_t)i * LEN, LEN, f.a.mr->lkey, 0, 0,
					 DROCE_SEND_SIGNALED), 0);
		while (fx_poll(&f, f.a.cq, &wc, 1, 0.001) == 1) {
			assert_int_equal(wc.status, DROCE_WC_SUCCESS);
			sends_done++;
		}
	}
	while (sends_done < MSGS && fx_poll(&f, f.a.cq, &wc, 1, 5) == 1)
		sends_done++;
	assert_int_equal(sends_done, MSGS);
	fx_spin(&f, 0.05);
	while (droce_poll_cq(f.b.cq, 1, &wc) == 1) {
		uint8_t *dst;
		int n;

		assert_int_equal(wc.status, DROCE_WC_SUCCESS);
		assert_int_equal(wc.byte_len, LEN);
		/* receive WQEs complete in order; a buffer may carry a later
		 * message when an earlier one was lost, but always a whole one */
		dst = f.b.buf + (size_t)wc.wr_id * 8192;
		memcpy(&n, dst, sizeof(n));
		assert_true(n >= (int)wc.wr_id && n < MSGS);
		fx_fill(want, LEN, (uint32_t)n);
		memcpy(want, &n, sizeof(n));
		assert_memory_equal(dst, want, LEN);
		got++;
	}
	printf("# UC: %d of %d messages arrived, %" PRIu64 " dropped as broken\n", got,
	       MSGS, fx_counter(&f.b, "uc_msg_drop"));
	assert_true(got > 0 && got < MSGS);	/* some were lost, none corrupt */
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ud_send_ipv4_and_ipv6_with_grh),
		cmocka_unit_test(test_ud_wrong_qkey_is_dropped_bad_flow),
		cmocka_unit_test(test_ud_without_receive_buffer_is_dropped_bad_flow),
		cmocka_unit_test(test_uc_write_and_send),
		cmocka_unit_test(test_uc_loss_drops_messages_never_corrupts),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return cmocka_run_group_tests_name("ud_uc", tests, NULL, NULL);
}
