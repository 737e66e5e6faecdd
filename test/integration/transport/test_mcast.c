/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast for UD QPs (droce_attach_mcast): one UD SEND to a group
 * reaches every QP attached to it, on the peer device over the virtual
 * wire and on the sender's own device through the port's loopback; each
 * takes its own receive WQE and checks its own Q_Key; a QP of another
 * group, a detached one and the sender (not attached) get nothing.  The
 * verbs' answers as the kernel's (EINVAL, attach twice is one attachment).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_byteorder.h>

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_engine.h"

#define BUF (1u << 20)
#define QKEY 0x01234567u
#define LEN 100
#define SLOT 4096		/* each receiver's part of its end's buffer */

struct rq {
	struct fx_end *end;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
};

/* 230.18.0.n (IPv4-mapped) or ff0e::18:n */
static union droce_gid
group(bool ipv6, uint8_t n)
{
	union droce_gid g;

	memset(&g, 0, sizeof(g));
	if (ipv6) {
		g.raw[0] = 0xff;
		g.raw[1] = 0x0e;
		g.raw[13] = 0x18;
		g.raw[15] = n;
	} else {
		g.raw[10] = g.raw[11] = 0xff;
		g.raw[12] = 230;
		g.raw[13] = 18;
		g.raw[15] = n;
	}
	return g;
}

/* A UD QP in RTS with Q_Key qkey and a CQ of its own; buffer slot idx. */
static void
rq_open(struct rq *r, struct fx_end *e, uint32_t qkey, unsigned int idx)
{
	struct droce_qp_init_attr init;
	struct droce_qp_attr a;

	r->end = e;
	r->buf = e->buf + (size_t)idx * SLOT;
	r->cq = droce_create_cq(e->ctx, 64, NULL, NULL, 0);
	assert_non_null(r->cq);
	memset(&init, 0, sizeof(init));
	init.qp_type = DROCE_QPT_UD;
	init.cap.max_send_wr = init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = init.cap.max_recv_sge = 1;
	init.send_cq = init.recv_cq = r->cq;
	r->qp = droce_create_qp(e->pd, &init);
	assert_non_null(r->qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	assert_int_equal(droce_modify_qp(r->qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
					 DROCE_QP_PORT | DROCE_QP_QKEY), 0);
	a.qp_state = DROCE_QPS_RTR;
	assert_int_equal(droce_modify_qp(r->qp, &a, DROCE_QP_STATE), 0);
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = 0;
	assert_int_equal(droce_modify_qp(r->qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN), 0);
	memset(r->buf, 0, SLOT);
	assert_int_equal(fx_post_recv(r->qp, idx, r->buf, SLOT, e->mr->lkey), 0);
}

static void
rq_close(struct rq *r)
{
	if (r->qp != NULL)
		assert_int_equal(droce_destroy_qp(r->qp), 0);
	assert_int_equal(droce_destroy_cq(r->cq), 0);
}

/* One SEND_WITH_IMM of LEN bytes from s to the group g, hop limit hops. */
static void
send_to_group(struct fx *f, struct rq *s, const union droce_gid *g, bool ipv6,
	      uint8_t hops, uint32_t remote_qpn)
{
	struct droce_ah_attr attr;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_ah *ah;
	struct droce_wc wc;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.sgid_index = ipv6 ? 1 : 0;
	attr.grh.hop_limit = hops;
	attr.grh.dgid = *g;
	ah = droce_create_ah(s->end->pd, &attr);
	assert_non_null(ah);
	fx_fill(s->buf, LEN, 77);
	sge = (struct droce_sge){ (uintptr_t)s->buf, LEN, s->end->mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 99;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND_WITH_IMM;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32(0x6d63);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = QKEY;
	assert_int_equal(droce_post_send(s->qp, &wr, &bad), 0);
	assert_int_equal(fx_poll(f, s->cq, &wc, 1, 5), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_SEND);
	fx_spin(f, 0.02);	/* every copy delivered */
	assert_int_equal(droce_destroy_ah(ah), 0);
}

/* r got the message from s: data, GRH (destination g, hop limit), fields. */
static void
expect_got(struct fx *f, struct rq *r, const struct rq *s, const union droce_gid *g,
	   bool ipv6, uint8_t hops)
{
	uint8_t want[LEN];
	struct droce_wc wc;

	assert_int_equal(fx_poll(f, r->cq, &wc, 1, 1), 1);
	assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	assert_int_equal(wc.opcode, DROCE_WC_RECV);
	assert_int_equal(wc.qp_num, r->qp->qp_num);
	assert_int_equal(wc.src_qp, s->qp->qp_num);
	assert_int_equal(wc.byte_len, 40 + LEN);
	assert_true(wc.wc_flags & DROCE_WC_GRH);
	assert_true(wc.wc_flags & DROCE_WC_WITH_IMM);
	assert_int_equal(rte_be_to_cpu_32(wc.imm_data), 0x6d63);
	fx_fill(want, LEN, 77);
	assert_memory_equal(r->buf + 40, want, LEN);
	if (ipv6) {
		assert_int_equal(r->buf[0] >> 4, 6);
		assert_int_equal(r->buf[7], hops);
		assert_memory_equal(r->buf + 24, g->raw, 16);
	} else {
		assert_int_equal(r->buf[20] >> 4, 4);
		assert_int_equal(r->buf[20 + 8], hops);
		assert_memory_equal(r->buf + 20 + 16, g->raw + 12, 4);
	}
	assert_int_equal(droce_poll_cq(r->cq, 1, &wc), 0);	/* one only */
}

static void
expect_nothing(struct rq *r)
{
	struct droce_wc wc;

	assert_int_equal(droce_poll_cq(r->cq, 1, &wc), 0);
}

static void
fanout(bool ipv6)
{
	union droce_gid g = group(ipv6, 1), other = group(ipv6, 2);
	struct rq snd, a_m, b_m1, b_m2, b_other, b_det, b_qkey;
	struct fx f;

	fx_set_loopback(true);
	fx_open(&f, NULL, BUF);
	fx_set_loopback(false);
	rq_open(&snd, &f.a, QKEY, 0);
	rq_open(&a_m, &f.a, QKEY, 1);
	rq_open(&b_m1, &f.b, QKEY, 2);
	rq_open(&b_m2, &f.b, QKEY, 3);
	rq_open(&b_other, &f.b, QKEY, 4);
	rq_open(&b_det, &f.b, QKEY, 5);
	rq_open(&b_qkey, &f.b, QKEY + 1, 6);
	assert_int_equal(droce_attach_mcast(a_m.qp, &g, 0), 0);
	assert_int_equal(droce_attach_mcast(b_m1.qp, &g, 0), 0);
	assert_int_equal(droce_attach_mcast(b_m1.qp, &g, 0), 0);	/* one entry */
	assert_int_equal(droce_attach_mcast(b_m2.qp, &g, 0), 0);
	assert_int_equal(droce_attach_mcast(b_other.qp, &other, 0), 0);
	assert_int_equal(droce_attach_mcast(b_det.qp, &g, 0), 0);
	assert_int_equal(droce_detach_mcast(b_det.qp, &g, 0), 0);
	assert_int_equal(droce_detach_mcast(b_det.qp, &g, 0), EINVAL);
	assert_int_equal(droce_attach_mcast(b_qkey.qp, &g, 0), 0);

	/* whatever QPN the WR names, a group gets the permissive DQPN */
	send_to_group(&f, &snd, &g, ipv6, 7, b_other.qp->qp_num);
	expect_got(&f, &a_m, &snd, &g, ipv6, 7);	/* the sender's port loops it */
	expect_got(&f, &b_m1, &snd, &g, ipv6, 7);
	expect_got(&f, &b_m2, &snd, &g, ipv6, 7);
	expect_nothing(&snd);
	expect_nothing(&b_other);
	expect_nothing(&b_det);
	expect_nothing(&b_qkey);
	assert_int_equal(fx_counter(&f.b, "rcvd_mcast_pkts"), 1);
	assert_int_equal(fx_counter(&f.b, "mcast_qp_deliveries"), 3);
	assert_int_equal(fx_counter(&f.b, "ud_qkey_drop"), 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_mcast_pkts"), 1);
	assert_int_equal(fx_counter(&f.a, "mcast_qp_deliveries"), 1);

	/* b_m1 leaves, b_m2 is destroyed (it leaves its groups): b has
	 * nobody left in g but b_qkey; a group nobody joined is not for us */
	assert_int_equal(droce_detach_mcast(b_m1.qp, &g, 0), 0);
	assert_int_equal(droce_destroy_qp(b_m2.qp), 0);
	b_m2.qp = NULL;
	assert_int_equal(fx_post_recv(a_m.qp, 1, a_m.buf, SLOT, f.a.mr->lkey), 0);
	assert_int_equal(fx_post_recv(b_m1.qp, 2, b_m1.buf, SLOT, f.b.mr->lkey), 0);
	send_to_group(&f, &snd, &g, ipv6, 3, 0xffffff);
	expect_got(&f, &a_m, &snd, &g, ipv6, 3);
	expect_nothing(&b_m1);
	assert_int_equal(fx_counter(&f.b, "rcvd_mcast_pkts"), 2);
	assert_int_equal(fx_counter(&f.b, "mcast_qp_deliveries"), 4);
	assert_int_equal(fx_counter(&f.b, "ud_qkey_drop"), 2);
	assert_int_equal(droce_detach_mcast(b_qkey.qp, &g, 0), 0);
	send_to_group(&f, &snd, &g, ipv6, 3, 0xffffff);
	assert_int_equal(fx_counter(&f.b, "rcvd_mcast_pkts"), 2);
	assert_int_equal(fx_counter(&f.b, "not_for_us_pkts"), 1);
	assert_int_equal(fx_counter(&f.b, "mcast_qp_deliveries"), 4);
	expect_nothing(&b_m1);
	expect_nothing(&b_other);

	rq_close(&snd);
	rq_close(&a_m);
	rq_close(&b_m1);
	rq_close(&b_m2);
	rq_close(&b_other);
	rq_close(&b_det);
	rq_close(&b_qkey);
	fx_close(&f);
}

static void
test_mcast_ipv4_fanout(void **state)
{
	(void)state;
	fanout(false);
}

static void
test_mcast_ipv6_fanout(void **state)
{
	(void)state;
	fanout(true);
}

static void
test_mcast_verbs_bad_flow(void **state)
{
	union droce_gid g = group(false, 9), unicast;
	struct droce_device_attr attr;
	struct rq u;
	struct fx f;

	(void)state;
	fx_open(&f, NULL, BUF);
	assert_int_equal(droce_query_device(f.a.ctx, &attr), 0);
	assert_int_equal(attr.max_mcast_grp, TP_MCAST_MAX_GRP);
	assert_int_equal(attr.max_mcast_qp_attach, TP_MCAST_MAX_QP_ATTACH);
	assert_int_equal(attr.max_total_mcast_qp_attach, TP_MCAST_MAX_TOTAL_ATTACH);
	fx_connect(&f, NULL);		/* RC */
	assert_int_equal(droce_attach_mcast(f.a.qp, &g, 0), EINVAL);
	rq_open(&u, &f.a, QKEY, 0);
	memcpy(unicast.raw, f.b.gid, 16);
	assert_int_equal(droce_attach_mcast(u.qp, &unicast, 0), EINVAL);
	assert_int_equal(droce_detach_mcast(u.qp, &g, 0), EINVAL);	/* no group */
	assert_int_equal(droce_attach_mcast(NULL, &g, 0), EINVAL);
	assert_int_equal(droce_attach_mcast(u.qp, NULL, 0), EINVAL);
	/* the per-group limit */
	{
		struct rq more[TP_MCAST_MAX_QP_ATTACH + 1];

		for (unsigned int i = 0; i <= TP_MCAST_MAX_QP_ATTACH; i++)
			rq_open(&more[i], &f.b, QKEY, i);
		for (unsigned int i = 0; i < TP_MCAST_MAX_QP_ATTACH; i++)
			assert_int_equal(droce_attach_mcast(more[i].qp, &g, 0), 0);
		assert_int_equal(droce_attach_mcast(more[TP_MCAST_MAX_QP_ATTACH].qp, &g, 0),
				 ENOMEM);
		for (unsigned int i = 0; i <= TP_MCAST_MAX_QP_ATTACH; i++)
			rq_close(&more[i]);
	}
	rq_close(&u);
	fx_destroy_qps(&f);
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcast_ipv4_fanout),
		cmocka_unit_test(test_mcast_ipv6_fanout),
		cmocka_unit_test(test_mcast_verbs_bad_flow),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests_name("mcast", tests, NULL, NULL));
}
