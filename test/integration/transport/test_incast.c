/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incast over the virtual wire's bottleneck (BENCHMARKS.md "Incast"):
 * FLOWS RC QP pairs from end a to end b, each keeping DEPTH 64 KiB WRITEs
 * outstanding, all through one direction of the wire, first without a
 * bottleneck (the wire's unlimited rate R, measured), then through a
 * bottleneck of R / FLOWS with a RED/ECN queue, with congestion control
 * "none" and then "dcqcn" (its line rate, rp_max_rate, set to R: the
 * sender's NIC speed).  Per phase it prints the bottleneck queue's 99th
 * percentile against the marking threshold, the goodput as a fraction of
 * the bottleneck's rate and Jain's fairness index over the flows.
 * Asserts the outcomes that do not depend on the machine's load: every
 * WRITE succeeds, its bytes arrive, the CNPs the receiver sent are those
 * the sender counted, DCQCN acted on them.
 *
 * INCAST_JOIN=1 measures a flow joining instead (a benchmark, not run by
 * the test suite): through the same bottleneck, flow 0 runs alone for
 * 0.5 s, then flow 1 starts; per 5 ms bin the bytes each completed, and
 * the time from the join until flow 1's share of a 20 ms window enters
 * [0.35, 0.65] and stays there for 100 ms.
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

#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define FLOWS 8
#define DEPTH 4
#define MSG 65536u
#define BUFLEN ((size_t)FLOWS * DEPTH * MSG)
#define WARMUP_S 0.5
#define MEASURE_S 2.0
#define QUEUE_BYTES (512u << 10)
#define MARK_MIN (32u << 10)
#define MARK_MAX (128u << 10)

struct phase {
	const char *name;
	uint64_t bytes[FLOWS];		/* completed in the window */
	double seconds;
	uint64_t hist[VWIRE_BN_HIST];	/* backlog found, in the window */
	uint64_t marked, dropped;
};

static struct droce_qp *qa[FLOWS], *qb[FLOWS];

/*
 * DCQCN's time constants scaled to this wire.  mlx5's defaults are made
 * for hardware rate limiters on 25-100 Gb/s links (alpha updated every
 * 1 us, a cut at most every 4 us); here one thread runs both engines in
 * rounds of about 100 us on a wire of a few Gb/s, so the receiver answers
 * a QP's marked packets with one CNP per round at most, and at mlx5's
 * settings alpha decays between two CNPs and the cuts vanish (INCAST_MLX5=1
 * runs them: BENCHMARKS.md "Incast").  These are the paper's (Zhu et al.
 * 2015: K = 55 us, g = 1/256, F = 5) with the increase steps scaled.
 */
static const char *const dcqcn_scaled[] = {
	"rp_dce_tcp_rtt", "55", "rp_dce_tcp_g", "1020", "rp_threshold", "5",
	"rp_time_reset", "1500", "rp_byte_reset", "262144",
	"rp_ai_rate", "5", "rp_hai_rate", "10",
	"rp_rate_reduce_monitor_period", "50", "np_min_time_between_cnps", "50",
	NULL,
};

static int
flow_of(uint32_t qpn)
{
	for (int i = 0; i < FLOWS; i++)
		if (qa[i]->qp_num == qpn)
			return i;
	fail_msg("completion of unknown QP %u", qpn);
	return -1;
}

static void
post(struct fx *f, int flow, int slot)
{
	size_t off = ((size_t)flow * DEPTH + (size_t)slot) * MSG;

	assert_int_equal(fx_post(qa[flow], DROCE_WR_RDMA_WRITE, (uint64_t)slot,
				 f->a.buf + off, MSG, f->a.mr->lkey,
				 (uint64_t)(uintptr_t)f->b.buf + off, f->b.mr->rkey,
				 DROCE_SEND_SIGNALED), 0);
}

/* Every flow busy for warmup + measure seconds; completions in the window counted. */
static void
run(struct fx *f, struct phase *ph)
{
	struct vwire_stats s0, s1;
	struct droce_wc wc[64];
	double t0 = fx_now(), m0 = t0 + WARMUP_S, m1 = m0 + MEASURE_S;
	bool in = false;
	int outstanding = FLOWS * DEPTH;

	for (int i = 0; i < FLOWS; i++)
		for (int s = 0; s < DEPTH; s++)
			post(f, i, s);
	for (;;) {
		double now = fx_now();
		int n = droce_poll_cq(f->a.cq, 64, wc);

		(void)droce_poll_cq(f->b.cq, 0, wc);	/* b's engine */
		if (!in && now >= m0) {
			in = true;
			vwire_get_stats(f->a.link, &s0);
		}
		if (in && now >= m1 && ph->seconds == 0) {
			ph->seconds = now - m0;
			vwire_get_stats(f->a.link, &s1);
		}
		for (int k = 0; k < n; k++) {
			int i = flow_of(wc[k].qp_num);

			assert_int_equal(wc[k].status, DROCE_WC_SUCCESS);
			outstanding--;
			if (in && ph->seconds == 0)
				ph->bytes[i] += MSG;
			if (ph->seconds == 0) {
				post(f, i, (int)wc[k].wr_id);
				outstanding++;
			}
		}
		if (ph->seconds != 0 && outstanding == 0)
			break;
		assert_true(now - t0 < 30);
	}
	for (int b = 0; b < VWIRE_BN_HIST; b++)
		ph->hist[b] = s1.bn_hist[b] - s0.bn_hist[b];
	ph->marked = s1.bn_marked - s0.bn_marked;
	ph->dropped = s1.bn_dropped - s0.bn_dropped;
	/* what the last WRITE of flow 3 wrote is there */
	assert_memory_equal(f->b.buf + 3 * DEPTH * MSG, f->a.buf + 3 * DEPTH * MSG, MSG);
}

#define JOIN_AT_S 0.5
#define JOIN_BIN_S 0.005
#define JOIN_BINS 200		/* 1 s after the join */
#define JOIN_WIN 4		/* bins per share window: 20 ms */
#define JOIN_STAY 20		/* bins it must stay fair: 100 ms */

static uint64_t join_bytes[2][JOIN_BINS];

/* Flow 0 alone for JOIN_AT_S, then flow 1 too, for JOIN_BINS bins. */
static void
run_join(struct fx *f)
{
	struct droce_wc wc[64];
	double t0 = fx_now(), tj = t0 + JOIN_AT_S;
	double end = tj + JOIN_BINS * JOIN_BIN_S;
	int outstanding = DEPTH;
	bool joined = false;

	memset(join_bytes, 0, sizeof(join_bytes));
	for (int s = 0; s < DEPTH; s++)
		post(f, 0, s);
	for (;;) {
		double now = fx_now();
		int n = droce_poll_cq(f->a.cq, 64, wc);

		(void)droce_poll_cq(f->b.cq, 0, wc);	/* b's engine */
		if (!joined && now >= tj) {
			joined = true;
			for (int s = 0; s < DEPTH; s++)
				post(f, 1, s);
			outstanding += DEPTH;
		}
		for (int k = 0; k < n; k++) {
			int i = flow_of(wc[k].qp_num);
			int bin = (int)((now - tj) / JOIN_BIN_S);

			assert_int_equal(wc[k].status, DROCE_WC_SUCCESS);
			outstanding--;
			if (now >= tj && bin < JOIN_BINS)
				join_bytes[i][bin] += MSG;
			if (now < end) {
				post(f, i, (int)wc[k].wr_id);
				outstanding++;
			}
		}
		if (now >= end && outstanding == 0)
			break;
		assert_true(now - t0 < 30);
	}
	assert_memory_equal(f->b.buf + DEPTH * MSG, f->a.buf + DEPTH * MSG, MSG);
}

static double
join_share(int from, int bins)
{
	uint64_t b0 = 0, b1 = 0;

	for (int k = from; k < from + bins && k < JOIN_BINS; k++) {
		b0 += join_bytes[0][k];
		b1 += join_bytes[1][k];
	}
	return b0 + b1 == 0 ? 0.5 : (double)b1 / (double)(b0 + b1);
}

static void
join_report(const char *name, double bn_bps)
{
	int conv = -1;
	uint64_t sum = 0;

	for (int k = 0; k + JOIN_WIN + JOIN_STAY <= JOIN_BINS && conv < 0; k++) {
		bool fair = true;

		for (int j = k; j < k + JOIN_STAY && fair; j++) {
			double sh = join_share(j, JOIN_WIN);

			fair = sh >= 0.35 && sh <= 0.65;
		}
		if (fair)
			conv = k;
	}
	for (int k = 0; k < JOIN_BINS; k++)
		sum += join_bytes[0][k] + join_bytes[1][k];
	printf("join %-9s flow 1's share: 0-20 ms %.2f, 20-50 ms %.2f, 50-200 ms %.2f, "
	       "200-1000 ms %.2f; fair (share of a 20 ms window in [0.35, 0.65] for "
	       "100 ms) from %s%.0f ms; goodput %.3f of the bottleneck\n", name,
	       join_share(0, 4), join_share(4, 6), join_share(10, 30), join_share(40, 160),
	       conv < 0 ? "never: " : "", conv < 0 ? 0.0 : conv * JOIN_BIN_S * 1000,
	       (double)sum * 8 / (JOIN_BINS * JOIN_BIN_S) / bn_bps);
}

static double
goodput_bps(const struct phase *ph)
{
	uint64_t sum = 0;

	for (int i = 0; i < FLOWS; i++)
		sum += ph->bytes[i];
	return (double)sum * 8 / ph->seconds;
}

static double
jain(const struct phase *ph)
{
	double s = 0, s2 = 0;

	for (int i = 0; i < FLOWS; i++) {
		s += (double)ph->bytes[i];
		s2 += (double)ph->bytes[i] * (double)ph->bytes[i];
	}
	return s2 == 0 ? 0 : s * s / (FLOWS * s2);
}

/* The backlog below which 99 % of the frames found the queue (bucket top). */
static uint64_t
p99_bytes(const struct phase *ph)
{
	uint64_t n = 0, acc = 0;
	uint64_t width = QUEUE_BYTES / VWIRE_BN_HIST + 1;

	for (int b = 0; b < VWIRE_BN_HIST; b++)
		n += ph->hist[b];
	for (int b = 0; b < VWIRE_BN_HIST; b++) {
		acc += ph->hist[b];
		if (acc * 100 >= n * 99)
			return (uint64_t)(b + 1) * width;
	}
	return QUEUE_BYTES;
}

static void
report(const struct phase *ph, double bn_bps)
{
	printf("incast %d:1 %-12s goodput %7.1f Mb/s = %.3f of the bottleneck, "
	       "Jain %.3f, queue p99 %" PRIu64 " B = %.2f x the marking threshold "
	       "(%u B), marked %" PRIu64 ", dropped %" PRIu64 "\n",
	       FLOWS, ph->name, goodput_bps(ph) / 1e6, goodput_bps(ph) / bn_bps, jain(ph),
	       p99_bytes(ph), (double)p99_bytes(ph) / MARK_MIN, MARK_MIN, ph->marked,
	       ph->dropped);
}

static void
phase_run(struct phase *ph, uint64_t bn_bps, uint64_t line_mbps, bool dcqcn, bool join)
{
	struct fx_qp_opts o = { .timeout = 14 };	/* 67 ms, as on a fabric */
	struct tp_dev_config cfg = { 0 };
	struct vwire_config w = { .ring_size = 4096, .pool_size = 16383 };
	char line[32];
	struct fx f;

	if (bn_bps != 0) {
		w.a_to_b.bn = (struct vwire_bottleneck){ .rate_bps = bn_bps,
			.queue_bytes = QUEUE_BYTES, .mark_min = MARK_MIN,
			.mark_max = MARK_MAX, .mark_prob = 0.2 };
		w.a_to_b.seed = fx_seed();
	}
	if (dcqcn) {
		snprintf(line, sizeof(line), "%" PRIu64, line_mbps);
		assert_int_equal(tp_cc_config_set(&cfg.cc, "cc", "dcqcn"), 0);
		assert_int_equal(tp_cc_config_set(&cfg.cc, "rp_max_rate", line), 0);
		for (const char *const *kv = dcqcn_scaled; getenv("INCAST_MLX5") == NULL &&
		     kv[0] != NULL; kv += 2)
			assert_int_equal(tp_cc_config_set(&cfg.cc, kv[0], kv[1]), 0);
		if (getenv("INCAST_CC") != NULL) {
			char buf[256], *save = NULL;

			snprintf(buf, sizeof(buf), "%s", getenv("INCAST_CC"));
			for (char *kv = strtok_r(buf, ",", &save); kv != NULL;
			     kv = strtok_r(NULL, ",", &save)) {
				char *eq = strchr(kv, '=');

				assert_non_null(eq);
				*eq = '\0';
				assert_int_equal(tp_cc_config_set(&cfg.cc, kv, eq + 1), 0);
			}
		}
	}
	fx_set_dev_config(&cfg);
	fx_open(&f, &w, BUFLEN);
	fx_set_dev_config(NULL);
	fx_fill(f.a.buf, BUFLEN, 7);
	for (int i = 0; i < FLOWS; i++)
		fx_connect_more(&f, &o, &qa[i], &qb[i]);
	if (join) {
		run_join(&f);
		join_report(ph->name, (double)bn_bps);
	} else {
		run(&f, ph);
	}
	if (!join) {
		struct tp_qp_snapshot sn;

		assert_int_equal(tp_dev_qp_snapshot(verbs_tp(f.a.ctx), qa[0]->qp_num, &sn), 0);
		printf("  flow 0: rate %" PRIu64 " Mb/s target %" PRIu64 " alpha %u cnps %" PRIu64
		       " cuts %" PRIu64 "; a: rcvd_cnp %" PRIu64 " handled %" PRIu64
		       " retransmitted %" PRIu64 " timeouts %" PRIu64 " seq_nak %" PRIu64
		       "; b: np_cnp_sent %" PRIu64 " limited %" PRIu64 "\n",
		       sn.cc_rate_bps / 1000000, sn.cc_target_bps / 1000000, sn.cc_alpha,
		       sn.cc_cnps, sn.cc_cuts, fx_counter(&f.a, "rcvd_cnp"),
		       fx_counter(&f.a, "rp_cnp_handled"), fx_counter(&f.a, "retransmitted_pkts"),
		       fx_counter(&f.a, "retransmit_timeouts"), fx_counter(&f.a, "rcvd_seq_err"),
		       fx_counter(&f.b, "np_cnp_sent"), fx_counter(&f.b, "np_cnp_rate_limited"));
	}
	if (dcqcn && !join) {
		assert_true(ph->marked > 0);
		assert_true(fx_counter(&f.a, "rp_cnp_handled") > 0);
	}
	assert_int_equal(fx_counter(&f.a, "rcvd_cnp"), fx_counter(&f.b, "np_cnp_sent"));
	for (int i = 0; i < FLOWS; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	fx_close(&f);
}

static void
test_incast(void **state)
{
	struct phase free_run = { .name = "unlimited" };
	struct phase none = { .name = "cc=none" };
	struct phase dcqcn = { .name = "cc=dcqcn" };
	uint64_t r, bn;

	(void)state;
	phase_run(&free_run, 0, 0, false, false);
	r = (uint64_t)goodput_bps(&free_run);
	bn = r / FLOWS;
	printf("incast %d:1 unlimited    goodput %7.1f Mb/s (the wire's rate R), Jain %.3f; "
	       "bottleneck R/%d = %.1f Mb/s\n", FLOWS, (double)r / 1e6, jain(&free_run),
	       FLOWS, (double)bn / 1e6);
	if (getenv("INCAST_JOIN") != NULL) {
		phase_run(&none, bn, 0, false, true);
		phase_run(&dcqcn, bn, r / 1000000, true, true);
		return;
	}
	phase_run(&none, bn, 0, false, false);
	report(&none, (double)bn);
	phase_run(&dcqcn, bn, r / 1000000, true, false);
	report(&dcqcn, (double)bn);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
