/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two run modes over the same link: two droce devices in one process
 * on net_af_packet over a veth pair (DROCE_TEST_VETH="ifa,ifb", as
 * test/integration/device/run_in_netns.sh sets it), EAL -l 0,1 in both
 * modes, the benchmark on the main lcore.
 *   default   run-to-completion: lcore 0 runs both engines (droce_poll_cq,
 *             droce_progress) and the application; lcore 1 idles.
 *   --lcore   --droce-transport-lcores=1 for both devices: lcore 1 runs
 *             both engines, lcore 0 only posts and polls (rings).
 * Measures:
 *   rate      RC WRITE of --size bytes (64), --depth outstanding (64), one
 *             in 16 signalled, --count messages: messages per second;
 *   latency   8 B SEND ping-pong a -> b -> a, --iters round trips:
 *             half the round trip, median and average.
 * Run:  test/integration/device/run_in_netns.sh BUILD/test/bench/lc_bench [--lcore]
 * --memif DIR without --qps: the same over net_memif in this process.
 * --mtu 1024|4096: the QPs' path MTU (1024).  --span MiB: the sender's
 * buffer (1 MiB), which the WRITEs walk round (larger than the caches:
 * every payload read from memory, as a large transfer's is).  The rate line also gives
 * the process's CPU time over the loop (every thread; a figure a loaded
 * machine disturbs less than the wall clock) and tx_zc_pkts (zero copy,
 * DROCE_TX_ZC: lib/transport README).
 *
 * Many QPs (usertools/droce-bench's 10,000-QP row):
 *   lc_bench --memif DIR --qps N [--count C] [--depth W]
 * joins the two devices by net_memif in this process (socket in DIR) instead
 * of the veth, creates N RC QP pairs (--droce-max-qp raised to fit) and
 * posts 64 B WRITEs round-robin over them, W outstanding in all (default
 * 128), every WR signalled (a QP has about W / N outstanding, so none can
 * wait for a later signalled one), first over QP 0 alone (the other QPs not
 * yet created: idle QPs are not free), then over all N.
 * Each prints "lc_bench: mode=qps qps=Q msgs=C seconds=S mmsgps=R send_err=E
 * retransmitted=T acks_per_msg=A qp_runs_per_msg=V" (ACKs the responder
 * sent and QP visits of both engines, per message).
 * Results: BENCHMARKS.md.
 */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce.h"

#define BUF (1u << 20)
#define SIGNAL_EVERY 16

struct end {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	struct droce_qp **qps;		/* --qps */
	uint8_t *buf;
};

static struct end a, b;

/* The sender's buffer (--span MiB, at least BUF), which WRITEs walk. */
static size_t a_len = BUF;

/* The path MTU of the QPs (--mtu 1024 or 4096). */
static enum droce_mtu path_mtu = DROCE_MTU_1024;

/* CPU time of the whole process, every thread, user and system. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "lc_bench: %s\n", what);
	exit(1);
}

static void
open_end(struct end *e, struct droce_device *dev, size_t len)
{
	e->ctx = droce_open_device(dev);
	if (e->ctx == NULL)
		die("droce_open_device");
	e->pd = droce_alloc_pd(e->ctx);
	e->buf = aligned_alloc(4096, len);
	if (e->pd == NULL || e->buf == NULL)
		die("pd/buffer");
	memset(e->buf, 0, len);
	e->mr = droce_reg_mr(e->pd, e->buf, len, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ);
	e->cq = droce_create_cq(e->ctx, 4096, NULL, NULL, 0);
	if (e->mr == NULL || e->cq == NULL)
		die("mr/cq");
}

static void
connect_qp(struct end *self, struct end *peer)
{
	struct droce_qp_attr at;
	union droce_gid dgid;

	if (droce_query_gid(peer->ctx, 1, 0, &dgid) != 0)
		die("query_gid");
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_INIT;
	at.port_num = 1;
	at.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ;
	if (droce_modify_qp(self->qp, &at, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
			    DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS) != 0)
		die("INIT");
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTR;
	at.path_mtu = path_mtu;
	at.dest_qp_num = peer->qp->qp_num;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.dgid = dgid;
	at.ah_attr.grh.hop_limit = 1;
	if (droce_modify_qp(self->qp, &at, DROCE_QP_STATE | DROCE_QP_AV |
			    DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER) != 0)
		die("RTR");
	memset(&at, 0, sizeof(at));
	at.qp_state = DROCE_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	if (droce_modify_qp(self->qp, &at, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
			    DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			    DROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS");
}

static void
make_qps(uint32_t depth)
{
	struct droce_qp_init_attr init = {
		.cap = { .max_send_wr = depth + 8, .max_recv_wr = depth + 8,
			 .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64 },
		.qp_type = DROCE_QPT_RC,
	};

	init.send_cq = init.recv_cq = a.cq;
	a.qp = droce_create_qp(a.pd, &init);
	init.send_cq = init.recv_cq = b.cq;
	b.qp = droce_create_qp(b.pd, &init);
	if (a.qp == NULL || b.qp == NULL)
		die("create_qp");
	connect_qp(&a, &b);
	connect_qp(&b, &a);
}

/* Completions of e (also runs the other engine in run-to-completion). */
static int
poll(struct end *e, struct end *other, struct droce_wc *wc, int n)
{
	int r;

	droce_progress(other->ctx);		/* a no-op with a transport lcore */
	r = droce_poll_cq(e->cq, n, wc);
	if (r < 0)
		die("poll_cq");
	for (int i = 0; i < r; i++)
		if (wc[i].status != DROCE_WC_SUCCESS)
			die(droce_wc_status_str(wc[i].status));
	return r;
}

static void
bench_rate(uint32_t size, uint64_t count, uint32_t depth)
{
	struct droce_sge sge = { (uintptr_t)a.buf, size, a.mr->lkey };
	struct droce_send_wr wr, *bad;
	uint64_t posted = 0, done = 0;
	/* a signalled WR at least every half window, or the window stalls */
	uint32_t sig = depth >= 2 * SIGNAL_EVERY ? SIGNAL_EVERY :
		       depth / 2 > 0 ? depth / 2 : 1;
	uint64_t zc0 = droce_get_counter(a.ctx, "tx_zc_pkts");
	double t0, t, c0, c;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	t0 = now();
	c0 = cpu_now();
	while (done < count) {
		struct droce_wc wc[32];
		int r;

		while (posted < count && posted - done < depth) {
			wr.wr_id = posted;
			/* one in SIGNAL_EVERY signalled; it retires the ones before */
			wr.send_flags = (posted + 1) % sig == 0 ||
					posted + 1 == count ? DROCE_SEND_SIGNALED : 0;
			/* from the next size bytes of a's buffer, round the
			 * buffer (--span: beyond the caches) */
			sge.addr = (uintptr_t)a.buf + (posted * size) % (a_len / size * size);
			if (droce_post_send(a.qp, &wr, &bad) != 0)
				break;		/* queue full: poll first */
			posted++;
		}
		r = poll(&a, &b, wc, 32);
		for (int i = 0; i < r; i++)
			done = wc[i].wr_id + 1;
	}
	t = now() - t0;
	c = cpu_now() - c0;
	printf("rate    WRITE %u B x %llu, depth %u: %.3f s, %.3f Mmsg/s, %.1f MB/s; "
	       "cpu %.3f s, %.1f MB per cpu-second; tx_zc_pkts %llu\n",
	       size, (unsigned long long)count, depth, t, (double)count / t / 1e6,
	       (double)count * size / t / 1e6, c, (double)count * size / c / 1e6,
	       (unsigned long long)(droce_get_counter(a.ctx, "tx_zc_pkts") - zc0));
}

/* ---- many QPs ---------------------------------------------------------- */

/*
 * QP pairs [from, to) of a.qps/b.qps (allocated for n); QP 0 holds the whole
 * window (the 1-QP run), the others 16.
 */
static void
make_many_qps(uint32_t from, uint32_t to, uint32_t n, uint32_t window)
{
	struct droce_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = DROCE_QPT_RC,
	};

	if (a.qps == NULL) {
		a.qps = calloc(n, sizeof(*a.qps));
		b.qps = calloc(n, sizeof(*b.qps));
		if (a.qps == NULL || b.qps == NULL)
			die("calloc");
	}
	for (uint32_t i = from; i < to; i++) {
		init.cap.max_send_wr = i == 0 ? window + 8 : 16;
		init.send_cq = init.recv_cq = a.cq;
		a.qp = a.qps[i] = droce_create_qp(a.pd, &init);
		init.send_cq = init.recv_cq = b.cq;
		b.qp = b.qps[i] = droce_create_qp(b.pd, &init);
		if (a.qp == NULL || b.qp == NULL)
			die("create_qp (many)");
		connect_qp(&a, &b);
		connect_qp(&b, &a);
	}
}

static void
destroy_many_qps(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (droce_destroy_qp(a.qps[i]) != 0 || droce_destroy_qp(b.qps[i]) != 0)
			die("destroy_qp (many)");
	free(a.qps);
	free(b.qps);
}

/* count 64 B WRITEs round-robin over the first n QPs, window outstanding. */
static void
bench_qps(uint32_t n, uint64_t count, uint32_t window)
{
	struct droce_sge sge = { (uintptr_t)a.buf, 64, a.mr->lkey };
	struct droce_send_wr wr, *bad;
	uint64_t posted = 0, done = 0, err0, rtx0, acks0, runs0;
	uint32_t next = 0;
	double t0, t;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	err0 = droce_get_counter(a.ctx, "send_err");
	rtx0 = droce_get_counter(a.ctx, "retransmitted_pkts");
	acks0 = droce_get_counter(b.ctx, "sent_acks");
	runs0 = droce_get_counter(a.ctx, "qp_runs") + droce_get_counter(b.ctx, "qp_runs");
	t0 = now();
	while (done < count) {
		struct droce_wc wc[32];

		while (posted < count && posted - done < window) {
			wr.wr_id = posted;
			if (droce_post_send(a.qps[next], &wr, &bad) != 0)
				break;		/* that QP's queue is full: poll first */
			next = next + 1 == n ? 0 : next + 1;
			posted++;
		}
		done += (uint64_t)poll(&a, &b, wc, 32);
	}
	t = now() - t0;
	printf("lc_bench: mode=qps qps=%u msgs=%llu seconds=%.6f mmsgps=%.4f send_err=%llu "
	       "retransmitted=%llu acks_per_msg=%.3f qp_runs_per_msg=%.3f\n", n,
	       (unsigned long long)count, t, (double)count / t / 1e6,
	       (unsigned long long)(droce_get_counter(a.ctx, "send_err") - err0),
	       (unsigned long long)(droce_get_counter(a.ctx, "retransmitted_pkts") - rtx0),
	       (double)(droce_get_counter(b.ctx, "sent_acks") - acks0) / (double)count,
	       (double)(droce_get_counter(a.ctx, "qp_runs") +
			droce_get_counter(b.ctx, "qp_runs") - runs0) / (double)count);
	fflush(stdout);
}

static int
cmp_double(const void *x, const void *y)
{
	double d = *(const double *)x - *(const double *)y;

	return d < 0 ? -1 : d > 0;
}

static void
post_recv(struct end *e)
{
	struct droce_sge s = { (uintptr_t)e->buf + BUF / 2, 64, e->mr->lkey };
	struct droce_recv_wr rw = { .wr_id = 1, .sg_list = &s, .num_sge = 1 }, *rbad;

	if (droce_post_recv(e->qp, &rw, &rbad) != 0)
		die("post_recv");
}

static void
send8(struct end *e)
{
	struct droce_sge s = { (uintptr_t)e->buf, 8, e->mr->lkey };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE;
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post_send");
}

/* Wait for e's receive completion (and reap its send completions). */
static void
wait_recv(struct end *e, struct end *other)
{
	for (;;) {
		struct droce_wc wc[4];
		int r = poll(e, other, wc, 4);

		for (int i = 0; i < r; i++)
			if (wc[i].opcode == DROCE_WC_RECV)
				return;
	}
}

static void
bench_latency(uint32_t iters)
{
	double *half = calloc(iters, sizeof(*half)), sum = 0;

	if (half == NULL)
		die("calloc");
	post_recv(&a);
	post_recv(&b);
	for (uint32_t i = 0; i < iters; i++) {
		double t0 = now();

		send8(&a);
		wait_recv(&b, &a);
		post_recv(&b);
		send8(&b);
		wait_recv(&a, &b);
		post_recv(&a);
		half[i] = (now() - t0) / 2 * 1e6;
		sum += half[i];
	}
	qsort(half, iters, sizeof(*half), cmp_double);
	printf("latency SEND 8 B ping-pong x %u: half round trip median %.2f us, "
	       "average %.2f us, p99 %.2f us\n", iters, half[iters / 2], sum / iters,
	       half[(size_t)iters * 99 / 100]);
	free(half);
}

static void
close_ends(void)
{
	for (struct end *e = &a; e != NULL; e = e == &a ? &b : NULL) {
		droce_destroy_cq(e->cq);
		droce_dereg_mr(e->mr);
		droce_dealloc_pd(e->pd);
		if (droce_close_device(e->ctx) != 0)
			die("close_device");
		free(e->buf);
	}
	droce_cleanup();
}

int
main(int argc, char **argv)
{
	const char *veth = getenv("DROCE_TEST_VETH");
	const char *no_huge = getenv("DROCE_NO_HUGE");
	const char *memif = NULL;
	uint32_t size = 64, depth = 64, iters = 20000, qps = 0;
	uint64_t count = 1000000;
	bool lcore = false;
	char v0[PATH_MAX + 96], v1[PATH_MAX + 96], prefix[64], max_qp[48];
	char *args[40];
	int nargs = 0, opt;
	struct droce_device **list;
	static const struct option longopts[] = {
		{ "lcore", no_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "depth", required_argument, NULL, 'd' },
		{ "iters", required_argument, NULL, 'i' },
		{ "memif", required_argument, NULL, 'M' },
		{ "qps", required_argument, NULL, 'q' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "span", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l': lcore = true; break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'd': depth = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'i': iters = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'M': memif = optarg; break;
		case 'q': qps = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S':
			a_len = (size_t)strtoul(optarg, NULL, 0) << 20;
			if (a_len < BUF)
				a_len = BUF;
			break;
		case 'm':
			path_mtu = strcmp(optarg, "4096") == 0 ? DROCE_MTU_4096 :
				   strcmp(optarg, "1024") == 0 ? DROCE_MTU_1024 : 0;
			if (path_mtu == 0)
				die("--mtu: 1024 or 4096");
			break;
		default: die("usage: lc_bench [--lcore] [--size B] [--count N] "
			     "[--depth D] [--iters N] [--mtu 1024|4096] [--span MiB] [--memif DIR [--qps N]]");
		}
	}
	if (memif == NULL && (veth == NULL || strchr(veth, ',') == NULL))
		die("DROCE_TEST_VETH=ifa,ifb not set (run it via run_in_netns.sh)");
	if (size < 1 || size > BUF / 2 || depth < 1 || depth > 2048 || iters < 1 ||
	    count < 1 || qps > (1u << 20) - 16 || (qps != 0 && memif == NULL))
		die("bad option value (--qps needs --memif)");
	if (qps != 0 && depth == 64)
		depth = 128;		/* the many-QP window (BENCHMARKS.md) */
	if (memif != NULL) {
		snprintf(v0, sizeof(v0), "net_memif0,role=server,socket=%s/lc.sock,"
			 "socket-abstract=no,bsize=8192", memif);
		snprintf(v1, sizeof(v1), "net_memif1,role=client,socket=%s/lc.sock,"
			 "socket-abstract=no,bsize=8192", memif);
	} else if (veth != NULL) {
		const char *comma = strchr(veth, ',');	/* checked above */

		if (comma == NULL)
			die("DROCE_TEST_VETH=ifa,ifb not set (run it via run_in_netns.sh)");
		snprintf(v0, sizeof(v0), "net_af_packet0,iface=%.*s,framesz=8192,blocksz=8192",
			 (int)(comma - veth), veth);
		snprintf(v1, sizeof(v1), "net_af_packet1,iface=%s,framesz=8192,blocksz=8192",
			 comma + 1);
	}
	snprintf(max_qp, sizeof(max_qp), "--droce-max-qp=%u", qps + 16);
	snprintf(prefix, sizeof(prefix), "--file-prefix=droce-lcb-%d", getpid());
	args[nargs++] = argv[0];
	args[nargs++] = "--no-pci";
	args[nargs++] = "-l";
	args[nargs++] = "0,1";
	args[nargs++] = prefix;
	args[nargs++] = "--log-level=lib.eal:error";
	if (no_huge != NULL && strcmp(no_huge, "1") == 0) {
		args[nargs++] = "--no-huge";
		args[nargs++] = "-m";
		args[nargs++] = "1024";
	}
	args[nargs++] = "--vdev";
	args[nargs++] = v0;
	args[nargs++] = "--vdev";
	args[nargs++] = v1;
	args[nargs++] = "--";
	args[nargs++] = memif != NULL ? "--droce-port=net_memif0" : "--droce-port=net_af_packet0";
	args[nargs++] = "--droce-ipv4=198.18.13.1/24";
	args[nargs++] = "--droce-mtu=4200";
	if (lcore)
		args[nargs++] = "--droce-transport-lcores=1";
	if (qps != 0)
		args[nargs++] = max_qp;
	args[nargs++] = memif != NULL ? "--droce-port=net_memif1" : "--droce-port=net_af_packet1";
	args[nargs++] = "--droce-ipv4=198.18.13.2/24";
	args[nargs++] = "--droce-mtu=4200";
	if (lcore)
		args[nargs++] = "--droce-transport-lcores=1";
	if (qps != 0)
		args[nargs++] = max_qp;
	args[nargs] = NULL;
	if (droce_init(nargs, args) < 0)
		die("droce_init");
	list = droce_get_device_list(NULL);
	if (list == NULL || list[0] == NULL || list[1] == NULL)
		die("two devices expected");
	open_end(&a, list[0], a_len);
	open_end(&b, list[1], BUF);
	droce_free_device_list(list);
	printf("# mode: %s; %s %s\n",
	       lcore ? "dedicated transport lcore 1 (app on lcore 0)" :
		       "run-to-completion on lcore 0",
	       memif != NULL ? "net_memif in this process, socket in" : "net_af_packet on veth",
	       memif != NULL ? memif : veth);
	if (qps != 0) {
		/* the 1-QP rate with no other QP in the process */
		make_many_qps(0, 1, qps, depth);
		bench_qps(1, count < 20000 ? count : 20000, depth);	/* warm-up: ARP, caches */
		bench_qps(1, count, depth);
		make_many_qps(1, qps, qps, depth);
		bench_qps(qps, count, depth);
		destroy_many_qps(qps);
		close_ends();
		return 0;
	}
	make_qps(depth);
	bench_rate(8, 1000, 8);			/* warm-up: ARP, caches */
	bench_rate(size, count, depth);
	bench_latency(iters);
	printf("# a: sent_pkts %llu retransmitted_pkts %llu retransmit_timeouts %llu "
	       "rcvd_seq_err %llu; b: sent_seq_nak %llu\n",
	       (unsigned long long)droce_get_counter(a.ctx, "sent_pkts"),
	       (unsigned long long)droce_get_counter(a.ctx, "retransmitted_pkts"),
	       (unsigned long long)droce_get_counter(a.ctx, "retransmit_timeouts"),
	       (unsigned long long)droce_get_counter(a.ctx, "rcvd_seq_err"),
	       (unsigned long long)droce_get_counter(b.ctx, "sent_seq_nak"));
	droce_destroy_qp(a.qp);
	droce_destroy_qp(b.qp);
	close_ends();
	return 0;
}

