/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many QPs (issue 12): two droce contexts over the virtual wire in one
 * thread, through the public API.
 *
 *   rate    for each QP count N of --qps: N RC QP pairs, 64-byte WRITEs
 *           (--size) posted round-robin over the N QPs, at most --window
 *           outstanding in all, every WR signalled; messages per second
 *           over --count WRITEs, and the transport's drop counters;
 *   create  --create-to M: QPs (--create-wr send and receive WRs, 1 SGE)
 *           created on one context up to M, per block of 4,096 the mean
 *           wall and CPU time and the median and 99th percentile of one
 *           creation, the heap bytes per QP; then
 *           all destroyed and created again.
 *
 *   qp_scale_bench [--qps 1,100,1000,10000] [--count N] [--window 128]
 *                  [--size 64] [--create-to 60000]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_malloc.h>

#include "droce.h"
#include "net_host.h"
#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define QSB_MAX_COUNTS 8
#define QSB_CQ_SIZE 16384
#define QSB_STALL_S 10.0

struct qsb_end {
	struct droce_context *ctx;
	struct droce_link *link;
	struct droce_pd *pd;
	struct droce_mr *mr;
	uint8_t *buf;
	struct droce_cq *cq;
	uint8_t gid[16];
};

struct qsb {
	struct qsb_end a;
	struct qsb_end b;
	uint32_t max_qp;
};

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void
die(const char *what)
{
	fprintf(stderr, "qp_scale_bench: %s\n", what);
	exit(1);
}

static void
eal_init(const char *prog)
{
	char *argv[] = { (char *)prog, "--no-pci", "--in-memory", "-l", "0",
			 "--log-level=lib.eal:error", NULL };

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0)
		die("EAL init failed (hugepages needed)");
}

static size_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(0, &st) != 0)
		return 0;
	return st.heap_allocsz_bytes;
}

static void
open_end(struct qsb_end *e, struct droce_link *link, uint8_t host, uint32_t max_qp)
{
	uint8_t ip[4] = { 198, 18, 0, host };
	struct tp_dev_config cfg = { .max_qp = max_qp };

	e->ctx = droce_open_context(NULL);
	e->link = link;
	if (e->ctx == NULL || verbs_attach_link(e->ctx, link, &cfg) != 0)
		die("context");
	roce_gid_from_ipv4(e->gid, ip);
	if (net_host_add_addr(tp_dev_host(verbs_tp(e->ctx)), e->gid, 24) != 0)
		die("net_host_add_addr");
	e->pd = droce_alloc_pd(e->ctx);
	e->buf = rte_zmalloc("qsb_buf", 4096, 64);
	if (e->pd == NULL || e->buf == NULL)
		die("PD or buffer");
	e->mr = droce_reg_mr(e->pd, e->buf, 4096, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE);
	e->cq = droce_create_cq(e->ctx, QSB_CQ_SIZE, NULL, NULL, 0);
	if (e->mr == NULL || e->cq == NULL)
		die("MR or CQ");
}

static void
close_end(struct qsb_end *e)
{
	if (droce_destroy_cq(e->cq) != 0 || droce_dereg_mr(e->mr) != 0 ||
	    droce_dealloc_pd(e->pd) != 0)
		die("teardown");
	rte_free(e->buf);
	if (verbs_detach_link(e->ctx) != 0 || droce_close_context(e->ctx) != 0)
		die("teardown (context)");
}

static struct droce_qp *
create_qp(struct qsb_end *e, uint32_t max_send_wr, uint32_t max_recv_wr)
{
	struct droce_qp_init_attr init;

	memset(&init, 0, sizeof(init));
	init.qp_type = DROCE_QPT_RC;
	init.cap.max_send_wr = max_send_wr;
	init.cap.max_recv_wr = max_recv_wr;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	return droce_create_qp(e->pd, &init);
}

static void
connect_one(struct droce_qp *qp, uint32_t dest_qpn, const uint8_t dgid[16])
{
	struct droce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE;
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
			    DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS) != 0)
		die("modify INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	a.path_mtu = DROCE_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			    DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER) != 0)
		die("modify RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN | DROCE_QP_TIMEOUT |
			    DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			    DROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		die("modify RTS");
}

static int
post_write(struct qsb *t, struct droce_qp *qp, uint64_t wr_id, uint32_t size)
{
	struct droce_sge sge = { (uintptr_t)t->a.buf, size, t->a.mr->lkey };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)t->b.buf;
	wr.wr.rdma.rkey = t->b.mr->rkey;
	return droce_post_send(qp, &wr, &bad);
}

static uint64_t
counter(struct qsb_end *e, const char *name)
{
	return tp_dev_counter(verbs_tp(e->ctx), name);
}

/* Round-robin 64-byte WRITEs over n QP pairs; returns messages/s, 0 on failure. */
static double
rate_run(struct qsb *t, uint32_t n, uint64_t count, uint32_t window, uint32_t size)
{
	uint32_t per_qp = (window + n - 1) / n;
	struct droce_qp **qa = calloc(n, sizeof(*qa));
	struct droce_qp **qb = calloc(n, sizeof(*qb));
	uint32_t *outst = calloc(n, sizeof(*outst));
	uint64_t posted = 0, done = 0, failed = 0;
	uint32_t inflight = 0, next = 0;
	double t0, t1, last;

	uint64_t err0, bp0, rt0;

	if (qa == NULL || qb == NULL || outst == NULL)
		die("calloc");
	err0 = counter(&t->a, "send_err") + counter(&t->b, "send_err");
	bp0 = counter(&t->a, "tx_backpressure") + counter(&t->b, "tx_backpressure");
	rt0 = counter(&t->a, "retransmitted_pkts");
	for (uint32_t i = 0; i < n; i++) {
		qa[i] = create_qp(&t->a, per_qp, 1);
		qb[i] = create_qp(&t->b, 1, 1);
		if (qa[i] == NULL || qb[i] == NULL)
			die("droce_create_qp");
		connect_one(qa[i], qb[i]->qp_num, t->b.gid);
		connect_one(qb[i], qa[i]->qp_num, t->a.gid);
	}
	t0 = last = now_s();
	while (done < count) {
		struct droce_wc wc[32];
		int got;

		while (posted < count && inflight < window) {
			uint32_t q = next;

			next = next + 1 == n ? 0 : next + 1;
			if (outst[q] == per_qp)
				break;
			if (post_write(t, qa[q], q, size) != 0)
				die("droce_post_send");
			outst[q]++;
			inflight++;
			posted++;
		}
		droce_progress(t->b.ctx);
		got = droce_poll_cq(t->a.cq, 32, wc);
		if (got < 0) {
			fprintf(stderr, "droce_poll_cq: %s after %" PRIu64 " completions\n",
				strerror(-got), done);
			die("droce_poll_cq");
		}
		for (int i = 0; i < got; i++) {
			failed += wc[i].status != DROCE_WC_SUCCESS;
			outst[wc[i].wr_id]--;
		}
		inflight -= (uint32_t)got;
		done += (uint64_t)got;
		t1 = now_s();
		if (got > 0)
			last = t1;
		else if (t1 - last > QSB_STALL_S)
			break;
	}
	t1 = now_s();
	printf("rate qps=%u per_qp_wr=%u msgs=%" PRIu64 " failed=%" PRIu64
	       " Mmsg/s=%.3f send_err=%" PRIu64 " tx_backpressure=%" PRIu64
	       " retransmitted=%" PRIu64 "\n", n, per_qp, done, failed,
	       done / (t1 - t0) / 1e6,
	       counter(&t->a, "send_err") + counter(&t->b, "send_err") - err0,
	       counter(&t->a, "tx_backpressure") + counter(&t->b, "tx_backpressure") - bp0,
	       counter(&t->a, "retransmitted_pkts") - rt0);
	fflush(stdout);
	/* let the last ACKs land, then tear down */
	for (int i = 0; i < 1000; i++) {
		droce_progress(t->a.ctx);
		droce_progress(t->b.ctx);
	}
	for (uint32_t i = 0; i < n; i++)
		if (droce_destroy_qp(qa[i]) != 0 || droce_destroy_qp(qb[i]) != 0)
			die("droce_destroy_qp");
	free(qa);
	free(qb);
	free(outst);
	return done == count && failed == 0 ? done / (t1 - t0) : 0;
}

#define QSB_BUCKET 4096

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One pass of creations on A up to `to`; per bucket of QSB_BUCKET QPs the
 * mean wall time, the mean CPU time of this thread (user + system, which
 * a loaded machine's preemptions do not inflate), and the median and 99th
 * percentile of single creations.
 */
static void
create_pass(struct qsb *t, struct droce_qp **q, uint32_t to, uint32_t cwr,
	    const char *pass)
{
	static double one[QSB_BUCKET];
	double t0 = now_s(), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);

	for (uint32_t i = 0; i < to; i++) {
		double c0 = now_s(), c1;

		q[i] = create_qp(&t->a, cwr, cwr);
		if (q[i] == NULL)
			die("droce_create_qp (raise max_qp?)");
		c1 = now_s();
		one[i % QSB_BUCKET] = c1 - c0;
		if ((i + 1) % QSB_BUCKET == 0 || i + 1 == to) {
			uint32_t n = i % QSB_BUCKET + 1;
			double cpu1 = clock_s(CLOCK_THREAD_CPUTIME_ID);

			qsort(one, n, sizeof(one[0]), cmp_double);
			printf("create %s qps=%u us/qp(last %u): wall=%.2f cpu=%.2f "
			       "p50=%.2f p99=%.2f\n", pass, i + 1, n,
			       (c1 - t0) * 1e6 / n, (cpu1 - cpu0) * 1e6 / n,
			       one[n / 2] * 1e6, one[n * 99 / 100] * 1e6);
			t0 = c1;
			cpu0 = cpu1;
		}
	}
}

/* QPs created on A up to `to`, destroyed, and created again (reuse). */
static void
create_run(struct qsb *t, uint32_t to, uint32_t cwr)
{
	struct droce_qp **q = calloc(to, sizeof(*q));
	size_t heap0 = heap_used();

	if (q == NULL)
		die("calloc");
	create_pass(t, q, to, cwr, "first");
	printf("create heap bytes/qp=%zu (max_send_wr %u, max_recv_wr %u, 1 SGE)\n",
	       (heap_used() - heap0) / to, cwr, cwr);
	for (uint32_t i = 0; i < to; i++)
		if (droce_destroy_qp(q[i]) != 0)
			die("droce_destroy_qp");
	create_pass(t, q, to, cwr, "again");
	for (uint32_t i = 0; i < to; i++)
		if (droce_destroy_qp(q[i]) != 0)
			die("droce_destroy_qp");
	free(q);
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--qps 1,100,1000,10000] [--count N] [--window W]\n"
		"          [--size B] [--create-to M] [--create-wr N] [--max-qp Q]\n", prog);
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "qps", required_argument, NULL, 'q' },
		{ "count", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "create-to", required_argument, NULL, 'C' },
		{ "max-qp", required_argument, NULL, 'm' },
		{ "create-wr", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t qps[QSB_MAX_COUNTS] = { 1, 100, 1000, 10000 };
	uint32_t nq = 4, window = 128, size = 64, create_to = 0, max_qp = 0, create_wr = 1;
	uint64_t count = 2000000;
	struct vwire_config w = { .name = "qsb" };
	struct droce_link *la, *lb;
	struct qsb t;
	double r1 = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			nq = 0;
			for (char *s = strtok(optarg, ","); s != NULL && nq < QSB_MAX_COUNTS;
			     s = strtok(NULL, ","))
				qps[nq++] = (uint32_t)strtoul(s, NULL, 0);
			break;
		case 'c': count = strtoull(optarg, NULL, 0); break;
		case 'w': window = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'C': create_to = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': max_qp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'W': create_wr = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (window == 0 || size == 0 || size > 4096 || count == 0)
		usage(argv[0]);
	for (uint32_t i = 0; i < nq; i++)
		if (qps[i] == 0)
			usage(argv[0]);
	eal_init(argv[0]);
	memset(&t, 0, sizeof(t));
	if (vwire_pair_create(&w, &la, &lb) != 0)
		die("vwire_pair_create");
	open_end(&t.a, la, 1, max_qp);
	open_end(&t.b, lb, 2, max_qp);
	if (net_host_add_static(tp_dev_host(verbs_tp(t.a.ctx)), t.b.gid, &lb->mac) != 0 ||
	    net_host_add_static(tp_dev_host(verbs_tp(t.b.ctx)), t.a.gid, &la->mac) != 0)
		die("net_host_add_static");
	for (uint32_t i = 0; i < nq; i++) {
		double r = rate_run(&t, qps[i], count, window, size);

		if (i == 0)
			r1 = r;
		if (r1 > 0 && r > 0)
			printf("ratio qps=%u of qps=%u: %.3f\n", qps[i], qps[0], r / r1);
	}
	if (create_to != 0)
		create_run(&t, create_to, create_wr);
	close_end(&t.a);
	close_end(&t.b);
	droce_link_close(la);
	droce_link_close(lb);
	return 0;
}
