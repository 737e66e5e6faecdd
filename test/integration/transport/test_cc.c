/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control, ECN and UDP source ports between two droce stacks
 * over the virtual wire (lib/transport README, "Congestion control"):
 * - ECT(0) on every packet sent (configurable DSCP/ECN);
 * - the notification point: a CE-marked packet answered by a CNP whose
 *   bytes are annex A17.9.3's, at most one per np_min_time_between_cnps;
 * - the reaction point: CNPs ignored by "none", cutting DCQCN's rate;
 * - the pacer holding a QP to its rate;
 * - the bottleneck's marking and drop counters, exact;
 * - UDP source ports: per-QP hash (64 QPs), fixed, rotated on timeout;
 * - a UD QP's CE answered by a CNP to the sending QP;
 * - the algorithm chosen per QP (droce_qp_set_cc).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "roce_wire.h"
#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define MAC_A 0x01	/* last byte of end a's MAC (vwire default) */
#define BUFLEN (4u << 20)

/* What the capture around each end's link saw it send. */
struct seen {
	uint64_t roce[2];		/* RoCEv2 frames sent by a, b */
	uint64_t tos_other[2];		/* ... whose TOS was not tos_want */
	uint8_t tos_want;
	uint64_t cnps;			/* CNPs sent by b */
	uint8_t cnp[128];		/* the first one's bytes */
	size_t cnp_len;
	uint16_t sport_a;		/* a request's UDP source port */
	uint32_t sport_qpn;		/* ... of this destination QP (0: any) */
};

static struct seen seen;

static void
capture(void *arg, uint16_t q, struct rte_mbuf *const *pkts, uint16_t n, bool tx)
{
	(void)arg;
	(void)q;
	if (!tx)
		return;
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *fr = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		int end = fr[11] == MAC_A ? 0 : 1;
		struct roce_pkt p;

		if (roce_parse_eth(fr, pkts[i]->data_len, &p) != ROCE_PARSE_OK)
			continue;
		if (roce_pkt_is_cnp(&p)) {
			if (seen.cnps++ == 0) {
				seen.cnp_len = RTE_MIN((size_t)pkts[i]->data_len,
						       sizeof(seen.cnp));
				memcpy(seen.cnp, fr, seen.cnp_len);
			}
			continue;
		}
		seen.roce[end]++;
		if (p.ip_dscp_ecn != seen.tos_want)
			seen.tos_other[end]++;
		if (end == 0 && (seen.sport_qpn == 0 || p.dest_qpn == seen.sport_qpn))
			seen.sport_a = p.udp_sport;
	}
}

static void
open_cc(struct fx *f, const struct vwire_config *w, const char *const *kv)
{
	struct tp_dev_config cfg = { 0 };

	for (; kv != NULL && kv[0] != NULL; kv += 2)
		assert_int_equal(tp_cc_config_set(&cfg.cc, kv[0], kv[1]), 0);
	fx_set_dev_config(&cfg);
	fx_set_tap(capture);
	memset(&seen, 0, sizeof(seen));
	fx_open(f, w, BUFLEN);
	fx_set_dev_config(NULL);
	fx_set_tap(NULL);
}

/* n signalled WRITEs of len bytes a -> b, all completed successfully. */
static void
writes(struct fx *f, struct droce_qp *qp, int n, uint32_t len)
{
	struct droce_wc wc[64];
	int got = 0;

	for (int i = 0; i < n; i++)
		assert_int_equal(fx_post(qp, DROCE_WR_RDMA_WRITE, (uint64_t)i,
					 f->a.buf + (size_t)i * len % (BUFLEN / 2), len,
					 f->a.mr->lkey,
					 (uint64_t)(uintptr_t)f->b.buf + (size_t)i * len % (BUFLEN / 2),
					 f->b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	while (got < n) {
		int k = fx_poll(f, f->a.cq, wc, RTE_MIN(n - got, 64), 20.0);

		assert_true(k > 0);
		for (int i = 0; i < k; i++)
			assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
		got += k;
	}
	fx_spin(f, 0.01);	/* the last ACKs and CNPs arrive */
}

static struct tp_qp_snapshot
snap(struct fx_end *e, struct droce_qp *qp)
{
	struct tp_qp_snapshot s;

	assert_int_equal(tp_dev_qp_snapshot(verbs_tp(e->ctx), qp->qp_num, &s), 0);
	return s;
}

/* ---- ECN marks ------------------------------------------------------------- */

static void
test_packets_carry_ect0(void **state)
{
	struct fx f;

	(void)state;
	open_cc(&f, NULL, NULL);
	seen.tos_want = ROCE_ECN_ECT0;
	fx_connect(&f, NULL);
	writes(&f, f.a.qp, 8, 4096);
	/* requests from a, ACKs from b: ECT(0), DSCP 0 */
	assert_true(seen.roce[0] >= 32);
	assert_true(seen.roce[1] >= 1);
	assert_int_equal(seen.tos_other[0], 0);
	assert_int_equal(seen.tos_other[1], 0);
	fx_close(&f);

	/* configured: DSCP 26, ECN off */
	open_cc(&f, NULL, (const char *const[]){ "dscp", "26", "ecn", "0", NULL });
	seen.tos_want = 26 << 2;
	fx_connect(&f, NULL);
	writes(&f, f.a.qp, 8, 4096);
	assert_true(seen.roce[0] >= 32);
	assert_int_equal(seen.tos_other[0], 0);
	assert_int_equal(seen.tos_other[1], 0);
	fx_close(&f);
}

/* ---- notification point ------------------------------------------------- */

/* a -> b through a bottleneck that marks every ECT frame CE */
static void
mark_all(struct vwire_config *w)
{
	memset(w, 0, sizeof(*w));
	w->a_to_b.bn.rate_bps = 100000000000ull;
	w->a_to_b.bn.queue_bytes = 1u << 20;
	w->a_to_b.bn.mark_min = 0;
	w->a_to_b.bn.mark_max = 0;
	w->a_to_b.seed = fx_seed();
}

static void
check_cnp_bytes(const struct fx *f)
{
	static const uint8_t zero[ROCE_CNP_RSVD_LEN];
	const uint8_t *c = seen.cnp;
	struct roce_pkt p;

	/* Ethernet b -> a, IPv4 with DSCP np_cnp_dscp (48) and Not-ECT */
	assert_int_equal(seen.cnp_len, 74);
	assert_int_equal(c[11], 0x02);
	assert_int_equal(c[12] << 8 | c[13], 0x0800);
	assert_int_equal(c[15], 48 << 2);
	assert_int_equal(c[23], 17);
	assert_int_equal(c[36] << 8 | c[37], ROCE_UDP_PORT);
	/* BTH: 0x81, SE/M/Pad/TVer 0, P_Key 0xffff, BECN, dest QP a, PSN 0 */
	assert_int_equal(c[42], 0x81);
	assert_int_equal(c[43], 0x00);
	assert_int_equal(c[44] << 8 | c[45], 0xffff);
	assert_int_equal(c[46], 0x40);
	assert_int_equal((uint32_t)(c[47] << 16 | c[48] << 8 | c[49]), f->a.qp->qp_num);
	assert_int_equal(c[50] | c[51] | c[52] | c[53], 0);
	assert_memory_equal(c + 54, zero, sizeof(zero));
	assert_int_equal(roce_parse_eth(c, seen.cnp_len, &p), ROCE_PARSE_OK);
	assert_true(roce_icrc_verify(c, &p));
}

static void
test_ce_answered_by_cnps(void **state)
{
	struct vwire_config w;
	struct vwire_stats st;
	struct fx f;
	uint64_t marked;

	(void)state;
	/* np_min_time_between_cnps 0: one CNP per CE-marked packet */
	mark_all(&w);
	open_cc(&f, &w, (const char *const[]){ "np_min_time_between_cnps", "0", NULL });
	fx_connect(&f, NULL);
	writes(&f, f.a.qp, 16, 4096);
	vwire_get_stats(f.a.link, &st);
	marked = st.bn_marked;
	assert_int_equal(marked, fx_counter(&f.a, "sent_pkts"));
	assert_int_equal(fx_counter(&f.b, "np_ecn_marked_roce_packets"), marked);
	assert_int_equal(fx_counter(&f.b, "np_cnp_sent"), marked);
	assert_int_equal(fx_counter(&f.b, "np_cnp_rate_limited"), 0);
	assert_int_equal(seen.cnps, marked);
	/* the reaction point of "none": counted, ignored */
	assert_int_equal(fx_counter(&f.a, "rcvd_cnp"), marked);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_ignored"), marked);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_handled"), 0);
	check_cnp_bytes(&f);
	fx_close(&f);

	/* 10 s between CNPs: one CNP for the whole run */
	mark_all(&w);
	open_cc(&f, &w, (const char *const[]){ "np_min_time_between_cnps", "10000000", NULL });
	fx_connect(&f, NULL);
	writes(&f, f.a.qp, 16, 4096);
	vwire_get_stats(f.a.link, &st);
	assert_true(st.bn_marked >= 64);
	assert_int_equal(fx_counter(&f.b, "np_ecn_marked_roce_packets"), st.bn_marked);
	assert_int_equal(fx_counter(&f.b, "np_cnp_sent"), 1);
	assert_int_equal(fx_counter(&f.b, "np_cnp_rate_limited"), st.bn_marked - 1);
	assert_int_equal(fx_counter(&f.a, "rcvd_cnp"), 1);
	fx_close(&f);
}

/* ---- reaction point and pacer --------------------------------------------- */

static void
test_dcqcn_cuts_on_cnps(void **state)
{
	struct vwire_config w;
	struct tp_qp_snapshot s;
	struct fx f;
	uint64_t handled, ignored;

	(void)state;
	mark_all(&w);
	open_cc(&f, &w, (const char *const[]){ "cc", "dcqcn", NULL });
	fx_connect(&f, NULL);
	s = snap(&f.a, f.a.qp);
	assert_string_equal(s.cc_algo, "dcqcn");
	assert_int_equal(s.cc_rate_bps, 100000000000ull);
	writes(&f, f.a.qp, 16, 65536);
	handled = fx_counter(&f.a, "rp_cnp_handled");
	ignored = fx_counter(&f.a, "rp_cnp_ignored");
	assert_true(handled >= 1);
	assert_int_equal(handled + ignored, fx_counter(&f.a, "rcvd_cnp"));
	assert_int_equal(fx_counter(&f.a, "rcvd_cnp"), fx_counter(&f.b, "np_cnp_sent"));
	s = snap(&f.a, f.a.qp);
	assert_int_equal(s.cc_cnps, handled + ignored);
	/* (the rate may have recovered by now: a cut is the outcome) */
	assert_int_equal(s.cc_cuts, handled);
	fx_close(&f);
}

/*
 * DCQCN's line rate set to 100 Mb/s: 2 MiB take 168 ms at least.  (A
 * local ACK timeout of 67 ms: at that rate the 16 packets between two
 * AckReqs take 1.4 ms, more than the fixture's 1 ms.)
 */
static void
test_pacer_holds_the_rate(void **state)
{
	struct fx_qp_opts o = { .timeout = 14 };
	struct fx f;
	double t0, dt;

	(void)state;
	open_cc(&f, NULL, (const char *const[]){ "cc", "dcqcn", "rp_max_rate", "100", NULL });
	fx_connect(&f, &o);
	t0 = fx_now();
	writes(&f, f.a.qp, 32, 65536);
	dt = fx_now() - t0;
	printf("2 MiB at 100 Mb/s: %.3f s (the payload alone: 0.168 s)\n", dt);
	assert_true(dt >= 0.168);
	assert_true(fx_counter(&f.a, "cc_pace_waits") > 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	fx_close(&f);
}

/* ---- the bottleneck, exact -------------------------------------------------- */

/*
 * 20 ECT(0) frames of 998 bytes in one tx_burst (one instant) into a
 * queue of 10,240 bytes at 1 Gb/s marking from 4,096 bytes: frame k finds
 * k frames queued (k x 998 bytes less rounding): 0..4 pass, 5..9 are
 * marked, 10..19 do not fit (the queue stays at 10 frames).  Then 20
 * Not-ECT frames after the queue drained: the same drops, no mark.
 */
static void
burst(struct droce_link *a, struct droce_link *b, uint8_t tos, int *ce)
{
	static const uint8_t payload[940];
	struct rte_mbuf *m[20];
	uint16_t n = 0;

	for (int i = 0; i < 20; i++) {
		struct roce_pkt p = { .ip_version = 4, .opcode = ROCE_OP_RDMA_WRITE_MIDDLE,
				      .ip_ttl = 64, .ip_dscp_ecn = tos, .pkey = 0xffff,
				      .dest_qpn = 0x12, .payload_len = 940 };
		uint8_t v4a[4] = { 198, 18, 0, 1 }, v4b[4] = { 198, 18, 0, 2 };

		roce_gid_from_ipv4(p.src_gid, v4a);
		roce_gid_from_ipv4(p.dst_gid, v4b);
		m[i] = rte_pktmbuf_alloc(a->pool);
		assert_non_null(m[i]);
		assert_int_not_equal(roce_build(rte_pktmbuf_mtod(m[i], void *), 2048, &p,
						payload), 0);
		m[i]->data_len = m[i]->pkt_len = (uint32_t)roce_frame_len(&p);
		assert_int_equal(m[i]->pkt_len, 998);
	}
	assert_int_equal(droce_link_tx(a, m, 20), 20);
	*ce = 0;
	for (double t0 = fx_now(); n < 10 && fx_now() - t0 < 5;) {
		struct rte_mbuf *r[20];
		uint16_t k = droce_link_rx(b, r, 20);

		for (uint16_t i = 0; i < k; i++) {
			struct roce_pkt q;

			assert_int_equal(roce_parse_eth(rte_pktmbuf_mtod(r[i], void *),
							r[i]->data_len, &q), ROCE_PARSE_OK);
			assert_true(roce_icrc_verify(rte_pktmbuf_mtod(r[i], void *), &q));
			*ce += roce_pkt_ecn(&q) == ROCE_ECN_CE;
			rte_pktmbuf_free(r[i]);
		}
		n += k;
	}
	assert_int_equal(n, 10);
}

static void
test_bottleneck_marks_and_drops(void **state)
{
	struct vwire_config w = { 0 };
	struct droce_link *a, *b;
	struct vwire_stats st;
	uint64_t hist = 0;
	int ce;

	(void)state;
	w.a_to_b.bn = (struct vwire_bottleneck){ .rate_bps = 1000000000ull,
		.queue_bytes = 10240, .mark_min = 4096, .mark_max = 4096 };
	assert_int_equal(vwire_pair_create(&w, &a, &b), 0);
	burst(a, b, ROCE_ECN_ECT0, &ce);
	assert_int_equal(ce, 5);
	vwire_get_stats(a, &st);
	assert_int_equal(st.bn_marked, 5);
	assert_int_equal(st.bn_dropped, 10);
	assert_int_equal(st.dropped, 10);
	assert_int_equal(st.delivered, 10);
	assert_true(st.bn_backlog_max >= 9000 && st.bn_backlog_max < 10000);
	for (int i = 0; i < VWIRE_BN_HIST; i++)
		hist += st.bn_hist[i];
	assert_int_equal(hist, 20);

	burst(a, b, 0, &ce);		/* Not-ECT: never marked */
	assert_int_equal(ce, 0);
	vwire_get_stats(a, &st);
	assert_int_equal(st.bn_marked, 5);
	assert_int_equal(st.bn_dropped, 20);
	droce_link_close(a);
	droce_link_close(b);
}

/* ---- UDP source ports ----------------------------------------------------- */

#define NQP 64

static void
test_sport_per_qp_hash(void **state)
{
	struct droce_qp *qa[NQP], *qb[NQP];
	uint8_t used[16384] = { 0 };
	unsigned int distinct = 0;
	struct fx f;

	(void)state;
	open_cc(&f, NULL, NULL);
	for (int i = 0; i < NQP; i++) {
		struct tp_qp_snapshot s;
		uint16_t want;

		fx_connect_more(&f, NULL, &qa[i], &qb[i]);
		s = snap(&f.a, qa[i]);
		want = roce_udp_sport(qa[i]->qp_num, qb[i]->qp_num);
		assert_int_equal(s.udp_sport, want);
		if (!used[want & 0x3fff]++)
			distinct++;
	}
	printf("%d QPs: %u distinct UDP source ports\n", NQP, distinct);
	assert_true(distinct >= 60);
	/* what goes on the wire: QP 37's requests */
	seen.sport_qpn = qb[37]->qp_num;
	writes(&f, qa[37], 1, 4096);
	assert_int_equal(seen.sport_a, roce_udp_sport(qa[37]->qp_num, qb[37]->qp_num));
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	fx_close(&f);

	/* fixed: every QP the same port */
	open_cc(&f, NULL, (const char *const[]){ "udp_sport", "fixed",
						 "udp_sport_fixed", "50000", NULL });
	fx_connect(&f, NULL);
	assert_int_equal(snap(&f.a, f.a.qp).udp_sport, 50000);
	writes(&f, f.a.qp, 1, 4096);
	assert_int_equal(seen.sport_a, 50000);
	fx_close(&f);
}

static void
test_sport_rotates_on_timeout(void **state)
{
	struct vwire_faults cut = { .drop = 1.0, .seed = fx_seed() };
	struct vwire_faults clean = { .seed = fx_seed() };
	struct fx f;
	uint16_t before, after;

	(void)state;
	open_cc(&f, NULL, (const char *const[]){ "udp_sport", "rotate", NULL });
	fx_connect(&f, NULL);
	before = snap(&f.a, f.a.qp).udp_sport;
	assert_int_equal(before, roce_udp_sport(f.a.qp->qp_num, f.b.qp->qp_num));
	assert_int_equal(vwire_set_faults(f.a.link, &cut), 0);
	assert_int_equal(fx_post(f.a.qp, DROCE_WR_RDMA_WRITE, 1, f.a.buf, 4096,
				 f.a.mr->lkey, (uint64_t)(uintptr_t)f.b.buf,
				 f.b.mr->rkey, DROCE_SEND_SIGNALED), 0);
	/* timeout 8: ~1 ms; the cable cut until the first timeout rotated
	 * the port (well before retry_cnt 7 is spent) */
	for (double t0 = fx_now(); fx_counter(&f.a, "udp_sport_rotations") == 0;) {
		assert_true(fx_now() - t0 < 5.0);
		fx_spin(&f, 0.0005);
	}
	assert_int_equal(vwire_set_faults(f.a.link, &clean), 0);
	{
		struct droce_wc wc;

		assert_int_equal(fx_poll(&f, f.a.cq, &wc, 1, 10.0), 1);
		assert_int_equal(wc.status, DROCE_WC_SUCCESS);
	}
	after = snap(&f.a, f.a.qp).udp_sport;
	assert_true(fx_counter(&f.a, "udp_sport_rotations") >= 1);
	assert_int_equal(fx_counter(&f.a, "udp_sport_rotations"),
			 fx_counter(&f.a, "retransmit_timeouts"));
	assert_int_not_equal(after, before);
	assert_true(after >= 0xc000);
	assert_int_equal(seen.sport_a, after);	/* the last request sent */
	fx_close(&f);
}

/* ---- UD notification point ------------------------------------------------ */

#define UD_QKEY 0x11111111u

static void
ud_send(struct fx *f, struct droce_ah *ah, uint64_t wr_id, uint32_t len)
{
	struct droce_sge sge = { (uintptr_t)f->a.buf, len, f->a.mr->lkey };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = f->b.qp->qp_num;
	wr.wr.ud.remote_qkey = UD_QKEY;
	assert_int_equal(droce_post_send(f->a.qp, &wr, &bad), 0);
}

/* Each CE-marked UD SEND answered by a CNP to the QP its DETH names. */
static void
test_ud_ce_answered_by_cnps(void **state)
{
	enum { N = 8 };
	struct droce_ah_attr attr;
	struct vwire_config w;
	struct vwire_stats st;
	struct droce_wc wc[N];
	struct droce_ah *ah;
	struct fx f;

	(void)state;
	mark_all(&w);
	open_cc(&f, &w, (const char *const[]){ "np_min_time_between_cnps", "0", NULL });
	fx_connect(&f, &(struct fx_qp_opts){ .type = DROCE_QPT_UD });
	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.hop_limit = 64;
	memcpy(attr.grh.dgid.raw, f.b.gid, 16);
	ah = droce_create_ah(f.a.pd, &attr);
	assert_non_null(ah);
	for (int i = 0; i < N; i++)
		assert_int_equal(fx_post_recv(f.b.qp, (uint64_t)i, f.b.buf + i * 2048, 2048,
					      f.b.mr->lkey), 0);
	for (int i = 0; i < N; i++)
		ud_send(&f, ah, (uint64_t)i, 1000);
	assert_int_equal(fx_poll(&f, f.b.cq, wc, N, 10), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
	assert_int_equal(fx_poll(&f, f.a.cq, wc, N, 10), N);
	fx_spin(&f, 0.01);
	vwire_get_stats(f.a.link, &st);
	assert_int_equal(st.bn_marked, N);
	assert_int_equal(fx_counter(&f.b, "np_ecn_marked_roce_packets"), N);
	assert_int_equal(fx_counter(&f.b, "np_cnp_sent"), N);
	assert_int_equal(seen.cnps, N);
	assert_int_equal(fx_counter(&f.a, "rcvd_cnp"), N);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_ignored") +
			 fx_counter(&f.a, "rp_cnp_handled"), N);
	check_cnp_bytes(&f);	/* to a's QP, from b's MAC, P_Key, ICRC */
	assert_int_equal(droce_destroy_ah(ah), 0);
	fx_close(&f);
}

/* ---- the algorithm per QP ----------------------------------------------- */

static void
test_cc_per_qp(void **state)
{
	struct vwire_config w;
	struct droce_qp *qa, *qb;
	uint64_t handled, ignored, cnps;
	struct fx f;

	(void)state;
	/* the device's none, a's first QP DCQCN */
	mark_all(&w);
	open_cc(&f, &w, NULL);
	fx_connect(&f, &(struct fx_qp_opts){ .a_cc = "dcqcn" });
	assert_string_equal(snap(&f.a, f.a.qp).cc_algo, "dcqcn");
	assert_string_equal(snap(&f.b, f.b.qp).cc_algo, "none");
	assert_int_equal(droce_qp_set_cc(f.a.qp, "bbr"), EINVAL);
	assert_int_equal(droce_qp_set_cc(f.a.qp, "none"), EBUSY);	/* RTS */
	assert_string_equal(snap(&f.a, f.a.qp).cc_algo, "dcqcn");
	writes(&f, f.a.qp, 16, 65536);
	handled = fx_counter(&f.a, "rp_cnp_handled");
	ignored = fx_counter(&f.a, "rp_cnp_ignored");
	cnps = fx_counter(&f.a, "rcvd_cnp");
	assert_true(handled >= 1);
	assert_int_equal(snap(&f.a, f.a.qp).cc_cuts, handled);
	assert_int_equal(handled + ignored, cnps);

	/* a second pair keeps the device's: its CNPs are all ignored */
	fx_connect_more(&f, NULL, &qa, &qb);
	assert_string_equal(snap(&f.a, qa).cc_algo, "none");
	writes(&f, qa, 16, 65536);
	assert_true(fx_counter(&f.a, "rcvd_cnp") > cnps);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_handled"), handled);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_ignored") - ignored,
			 fx_counter(&f.a, "rcvd_cnp") - cnps);
	assert_int_equal(droce_destroy_qp(qa), 0);
	assert_int_equal(droce_destroy_qp(qb), 0);
	fx_close(&f);

	/* the device's DCQCN, a's QP none: never a cut */
	mark_all(&w);
	open_cc(&f, &w, (const char *const[]){ "cc", "dcqcn", NULL });
	fx_connect(&f, &(struct fx_qp_opts){ .a_cc = "none" });
	assert_string_equal(snap(&f.a, f.a.qp).cc_algo, "none");
	assert_string_equal(snap(&f.b, f.b.qp).cc_algo, "dcqcn");
	writes(&f, f.a.qp, 16, 65536);
	assert_true(fx_counter(&f.a, "rcvd_cnp") >= 1);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_handled"), 0);
	assert_int_equal(fx_counter(&f.a, "rp_cnp_ignored"), fx_counter(&f.a, "rcvd_cnp"));
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packets_carry_ect0),
		cmocka_unit_test(test_ce_answered_by_cnps),
		cmocka_unit_test(test_dcqcn_cuts_on_cnps),
		cmocka_unit_test(test_pacer_holds_the_rate),
		cmocka_unit_test(test_bottleneck_marks_and_drops),
		cmocka_unit_test(test_sport_per_qp_hash),
		cmocka_unit_test(test_sport_rotates_on_timeout),
		cmocka_unit_test(test_ud_ce_answered_by_cnps),
		cmocka_unit_test(test_cc_per_qp),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
