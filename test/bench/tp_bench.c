/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport over the virtual wire (issue 4): two droce contexts joined by
 * a vwire in one thread, one RC QP pair, WRITEs streamed A -> B with
 * `depth` work requests outstanding (perftest ib_write_bw style, one WR in
 * `signal-every` signalled).  Reports goodput, message rate, packets and
 * retransmissions from the transport counters, and in the same run two
 * baselines over the same bytes:
 *   raw    the bare vwire: pre-built frames of the same sizes, tx_burst on
 *          one end and rx_burst on the other, no transport (no mbuf
 *          allocation either: the frames are reused with a reference count);
 *   limit  the per-packet data work both ends cannot avoid: memcpy into the
 *          frame + ICRC (sender), ICRC + memcpy out of it (receiver).
 * The measured loop is tpb_measure(), for
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=tpb_measure
 * (use --runs 1 --no-baseline there).  --op fetch_add streams 8-byte
 * FETCH_AND_ADDs instead (atomic_bw's work; no baselines: they are WRITE
 * frames).  --op write_lat: perftest ib_write_lat's ping-pong instead, 8
 * bytes each way, A writes B's buffer, B sees it and writes A's, A sees
 * it: one round trip per message, both engines in this thread (every
 * instruction of both sides counted, ACKs included); its raw counterpart
 * is the same two WRITE frames forwarded A -> B -> A over a bare vwire
 * (tpb_measure_raw, for --toggle-collect=tpb_measure_raw).
 * Results: BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "bench_roce.h"
#include "droce.h"
#include "ethdev_link.h"
#include "net_host.h"
#include "roce_wire.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define TPB_CQ_SIZE 8192
#define TPB_POLL_BATCH 32
#define TPB_RAW_BURST 32
#define TPB_STALL_S 10.0	/* no completion for this long: give up */

struct tpb_opts {
	const char *op;
	uint32_t size;
	uint32_t mtu;
	double loss;
	uint64_t count;
	uint32_t depth;
	uint32_t signal_every;
	uint8_t timeout;
	uint32_t runs;
	uint64_t seed;
	bool json;
	bool baseline;
	bool lat;		/* --op write_lat */
	bool sr;		/* --sr: selective repeat on both QPs */
	bool ring;		/* --ring: net_ring ports, not the vwire */
	uint32_t zc;		/* --ring's zero copy: ethdev_link_config.tx_zc */
};

struct tpb_end {
	struct droce_context *ctx;
	struct droce_link *link;
	struct droce_pd *pd;
	struct droce_mr *mr;
	uint8_t *buf;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t gid[16];
};

struct tpb {
	struct tpb_opts o;
	struct tpb_end a;
	struct tpb_end b;
	uint64_t lat_seq;	/* write_lat: the last round trip's number */
};

/* Transport counters reported (deltas over the measured loop). */
static const char *const a_counters[] = {
	"sent_pkts", "retransmitted_pkts", "retransmit_timeouts",
	"completer_retry_err", "rcvd_seq_err", "rcvd_acks", "duplicate_response",
	"tx_nombuf", "send_err", "sr_sack_rcvd", "sr_resent_pkts", "sr_timeout_hole",
};
static const char *const b_counters[] = {
	"sent_pkts", "sent_acks", "rcvd_pkts", "duplicate_request",
	"out_of_seq_request", "sent_seq_nak", "sr_sack_sent", "sr_ooo_placed",
};
#define N_A RTE_DIM(a_counters)
#define N_B RTE_DIM(b_counters)

struct tpb_result {
	uint64_t msgs;
	uint64_t bytes;
	double wall_s;
	double cpu_s;
	uint64_t a[N_A];
	uint64_t b[N_B];
	uint64_t dropped_ab;
	uint64_t dropped_ba;
	bool ok;
};

/* ---- helpers ------------------------------------------------------------- */

static double
now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "tp_bench: %s\n", what);
	exit(1);
}

static long
free_hugepages(void)
{
	char line[128];
	long n = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Hugepages unless DROCE_NO_HUGE=1 or none free (22.11: no --in-memory with
 * --no-huge).  A file prefix of its own: EAL's runtime directory of the
 * default prefix is shared with whatever else runs (telemetry's socket),
 * and another process's exit may remove it while EAL starts here.
 */
static bool
eal_init(const char *prog)
{
	const char *no_huge = getenv("DROCE_NO_HUGE");
	char prefix[40];

	snprintf(prefix, sizeof(prefix), "--file-prefix=tp_bench%ld", (long)getpid());
	char *argv_huge[] = { (char *)prog, "--no-pci", "--in-memory", "-l", "0", prefix,
			      "--log-level=lib.eal:error", NULL };
	char *argv_nohuge[] = { (char *)prog, "--no-pci", "--no-huge", "-m", "1024",
				"--no-shconf", "-l", "0", prefix,
				"--log-level=lib.eal:error", NULL };
	bool use_huge = (no_huge == NULL || strcmp(no_huge, "1") != 0) &&
			free_hugepages() >= 256;
	char **argv = use_huge ? argv_huge : argv_nohuge;
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	if (rte_eal_init(argc, argv) < 0)
		die("EAL init failed");
	return use_huge;
}

static enum droce_mtu
mtu_enum(uint32_t mtu)
{
	switch (mtu) {
	case 256: return DROCE_MTU_256;
	case 512: return DROCE_MTU_512;
	case 1024: return DROCE_MTU_1024;
	case 2048: return DROCE_MTU_2048;
	case 4096: return DROCE_MTU_4096;
	default: return 0;
	}
}

static uint32_t
pkts_per_msg(const struct tpb_opts *o)
{
	return o->size == 0 ? 1 : (o->size + o->mtu - 1) / o->mtu;
}

/* ---- setup (the shape of test/integration/transport/tp_fixture.c) -------- */

static void
open_end(struct tpb_end *e, struct droce_link *link, uint8_t host, size_t buflen)
{
	uint8_t ip[4] = { 198, 18, 0, host };
	struct tp_dev_config cfg = { 0 };

	e->ctx = droce_open_context(NULL);
	if (e->ctx == NULL)
		die("droce_open_context");
	e->link = link;
	if (verbs_attach_link(e->ctx, link, &cfg) != 0)
		die("verbs_attach_link");
	roce_gid_from_ipv4(e->gid, ip);
	if (net_host_add_addr(tp_dev_host(verbs_tp(e->ctx)), e->gid, 24) != 0)
		die("net_host_add_addr");
	e->pd = droce_alloc_pd(e->ctx);
	e->buf = rte_zmalloc("tpb_buf", buflen, 64);
	if (e->pd == NULL || e->buf == NULL)
		die("PD or buffer");
	for (size_t i = 0; i < buflen; i++)
		e->buf[i] = (uint8_t)(i * 131 + host);
	e->mr = droce_reg_mr(e->pd, e->buf, buflen, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			     DROCE_ACCESS_REMOTE_ATOMIC);
	e->cq = droce_create_cq(e->ctx, TPB_CQ_SIZE, NULL, NULL, 0);
	if (e->mr == NULL || e->cq == NULL)
		die("MR or CQ");
}

static void
connect_one(struct tpb_end *self, struct tpb_end *peer, const struct tpb_opts *o)
{
	struct droce_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			    DROCE_ACCESS_REMOTE_ATOMIC;
	if (droce_modify_qp(self->qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
			    DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS) != 0)
		die("modify INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	a.path_mtu = mtu_enum(o->mtu);
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (droce_modify_qp(self->qp, &a, DROCE_QP_STATE | DROCE_QP_AV |
			    DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER) != 0)
		die("modify RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = o->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (droce_modify_qp(self->qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN |
			    DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
			    DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		die("modify RTS");
}

/*
 * --ring: the two ends on net_ring ports (drivers/ethdev, as droce opens
 * a DPDK port), one ring each way: the mbufs themselves cross, so a
 * zero-copy frame's chain reaches the receiver, which linearizes it.
 */
static void
ring_pair(const struct tpb_opts *o, struct droce_link **la, struct droce_link **lb)
{
	struct rte_ring *ab = rte_ring_create("tpb_ab", 4096, (int)rte_socket_id(),
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *ba = rte_ring_create("tpb_ba", 4096, (int)rte_socket_id(),
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct ethdev_link_config c = { .mtu = 4200, .mtu_assume = true, .tx_zc = o->zc };
	int pa, pb;

	if (ab == NULL || ba == NULL)
		die("rte_ring_create");
	pa = rte_eth_from_rings("net_tpba", &ba, 1, &ab, 1, (unsigned int)rte_socket_id());
	pb = rte_eth_from_rings("net_tpbb", &ab, 1, &ba, 1, (unsigned int)rte_socket_id());
	if (pa < 0 || pb < 0)
		die("rte_eth_from_rings");
	c.port_id = (uint16_t)pa;
	if (ethdev_link_open(&c, la) != 0)
		die("ethdev_link_open");
	c.port_id = (uint16_t)pb;
	c.mac.addr_bytes[0] = 0x02;
	c.mac.addr_bytes[5] = 0x0b;
	if (ethdev_link_open(&c, lb) != 0)
		die("ethdev_link_open");
	printf("# net_ring, zero copy %s (from %u bytes)\n",
	       ((*la)->offloads & DROCE_LINK_TX_ZC) ? "on" : "off", (*la)->tx_zc_min);
}

static void
tpb_open(struct tpb *t)
{
	const struct tpb_opts *o = &t->o;
	struct vwire_config w;
	struct droce_link *la, *lb;
	struct droce_qp_init_attr init;
	size_t buflen = RTE_MAX(o->size, 64u);

	memset(&w, 0, sizeof(w));
	w.name = "tpb";
	w.a_to_b.drop = o->loss;
	w.a_to_b.seed = o->seed;
	w.b_to_a.drop = o->loss;
	w.b_to_a.seed = o->seed ^ 0x9e3779b97f4a7c15ULL;
	if (o->ring)
		ring_pair(o, &la, &lb);
	else if (vwire_pair_create(&w, &la, &lb) != 0)
		die("vwire_pair_create");
	open_end(&t->a, la, 1, buflen);
	open_end(&t->b, lb, 2, buflen);
	if (net_host_add_static(tp_dev_host(verbs_tp(t->a.ctx)), t->b.gid, &lb->mac) != 0 ||
	    net_host_add_static(tp_dev_host(verbs_tp(t->b.ctx)), t->a.gid, &la->mac) != 0)
		die("net_host_add_static");

	memset(&init, 0, sizeof(init));
	init.qp_type = DROCE_QPT_RC;
	init.cap.max_send_wr = RTE_MAX(o->depth, 16u);
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.send_cq = t->a.cq;
	init.recv_cq = t->a.cq;
	t->a.qp = droce_create_qp(t->a.pd, &init);
	init.send_cq = t->b.cq;
	init.recv_cq = t->b.cq;
	t->b.qp = droce_create_qp(t->b.pd, &init);
	if (t->a.qp == NULL || t->b.qp == NULL)
		die("droce_create_qp");
	if (o->sr && (droce_qp_set_sr(t->a.qp, true) != 0 ||
		      droce_qp_set_sr(t->b.qp, true) != 0))
		die("droce_qp_set_sr");
	connect_one(&t->a, &t->b, o);
	connect_one(&t->b, &t->a, o);
}

static void
close_end(struct tpb_end *e)
{
	if (droce_destroy_qp(e->qp) != 0 || droce_destroy_cq(e->cq) != 0 ||
	    droce_dereg_mr(e->mr) != 0 || droce_dealloc_pd(e->pd) != 0)
		die("teardown");
	rte_free(e->buf);
	if (verbs_detach_link(e->ctx) != 0 || droce_close_context(e->ctx) != 0)
		die("teardown (context)");
}

static void
tpb_close(struct tpb *t)
{
	close_end(&t->a);
	close_end(&t->b);
	droce_link_close(t->a.link);
	droce_link_close(t->b.link);
}

/* ---- the stream ---------------------------------------------------------- */

/*
 * Post `count` WRITEs of `size` bytes (or 8-byte FETCH_AND_ADDs, each
 * adding 1 to the same remote word), at most `depth` outstanding, WR i
 * signalled when (i + 1) % K == 0 or it is the last; a completion for WR i
 * retires every WR up to i.  Both engines progress in this thread:
 * droce_poll_cq() on A's CQ runs A's engine, droce_progress() B's.
 * Returns false on a failed completion or a stall.
 */
static bool
tpb_stream(struct tpb *t, uint64_t count)
{
	const struct tpb_opts *o = &t->o;
	uint32_t k = RTE_MIN(o->signal_every, o->depth);
	struct droce_sge sge = { (uintptr_t)t->a.buf, o->size, t->a.mr->lkey };
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[TPB_POLL_BATCH];
	uint64_t posted = 0, done = 0;
	double last_progress = now_s(CLOCK_MONOTONIC);
	uint32_t idle = 0;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (strcmp(o->op, "fetch_add") == 0) {
		wr.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)t->b.buf;
		wr.wr.atomic.rkey = t->b.mr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.opcode = DROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)t->b.buf;
		wr.wr.rdma.rkey = t->b.mr->rkey;
	}

	while (done < count) {
		int n;

		while (posted < count && posted - done < o->depth) {
			wr.wr_id = posted;
			wr.send_flags = ((posted + 1) % k == 0 || posted + 1 == count) ?
					DROCE_SEND_SIGNALED : 0;
			if (droce_post_send(t->a.qp, &wr, &bad) != 0) {
				fprintf(stderr, "tp_bench: post_send failed at %" PRIu64 "\n",
					posted);
				return false;
			}
			posted++;
		}
		droce_progress(t->b.ctx);
		n = droce_poll_cq(t->a.cq, TPB_POLL_BATCH, wc);
		if (n < 0) {
			fprintf(stderr, "tp_bench: poll_cq: %s\n", strerror(errno));
			return false;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != DROCE_WC_SUCCESS) {
				fprintf(stderr, "tp_bench: WR %" PRIu64 " failed: status %d\n",
					wc[i].wr_id, wc[i].status);
				return false;
			}
			done = wc[i].wr_id + 1;
		}
		if (n > 0) {
			idle = 0;
		} else if (++idle % 4096 == 0) {
			double now = now_s(CLOCK_MONOTONIC);

			if (idle == 4096)
				last_progress = now;
			else if (now - last_progress > TPB_STALL_S) {
				fprintf(stderr, "tp_bench: stalled at %" PRIu64 "/%" PRIu64 "\n",
					done, count);
				return false;
			}
		}
	}
	return true;
}

/* write_lat's byte offsets in each end's buffer: what it sends, where the peer writes */
#define TPB_LAT_SRC 0
#define TPB_LAT_DST 32

/* Drain a CQ (running its engine); false on a failed completion. */
static bool
lat_poll(struct droce_cq *cq)
{
	struct droce_wc wc[TPB_POLL_BATCH];
	int n = droce_poll_cq(cq, TPB_POLL_BATCH, wc);

	if (n < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (wc[i].status != DROCE_WC_SUCCESS) {
			fprintf(stderr, "tp_bench: write_lat WR %" PRIu64 " failed: status %d\n",
				wc[i].wr_id, wc[i].status);
			return false;
		}
	return true;
}

/* One end writes its 8-byte sequence number into the peer's buffer. */
static bool
lat_post(struct tpb_end *from, const struct tpb_end *to, uint64_t seq, uint32_t k)
{
	struct droce_sge sge = { (uintptr_t)from->buf + TPB_LAT_SRC, 8, from->mr->lkey };
	struct droce_send_wr wr, *bad;

	memcpy(from->buf + TPB_LAT_SRC, &seq, 8);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = seq % k == 0 ? DROCE_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = (uintptr_t)to->buf + TPB_LAT_DST;
	wr.wr.rdma.rkey = to->mr->rkey;
	return droce_post_send(from->qp, &wr, &bad) == 0;
}

/* Spin on end e's CQ (its engine) until the peer's write of seq landed. */
static bool
lat_wait(struct tpb_end *e, uint64_t seq)
{
	volatile const uint64_t *dst = (volatile const uint64_t *)(e->buf + TPB_LAT_DST);
	double t0 = now_s(CLOCK_MONOTONIC);
	uint32_t spins = 0;

	while (*dst != seq) {
		if (!lat_poll(e->cq))
			return false;
		if (++spins % 4096 == 0 && now_s(CLOCK_MONOTONIC) - t0 > TPB_STALL_S) {
			fprintf(stderr, "tp_bench: write_lat stalled at %" PRIu64 "\n", seq);
			return false;
		}
	}
	return true;
}

/*
 * perftest ib_write_lat's ping-pong: A writes seq into B's buffer, B polls
 * until it sees it (running B's engine) and writes seq back, A polls until
 * it sees it.  The sequence numbers go on from call to call (t->lat_seq).
 */
static bool
tpb_pingpong(struct tpb *t, uint64_t count)
{
	uint32_t k = RTE_MIN(t->o.signal_every, t->o.depth);

	for (uint64_t i = 0; i < count; i++) {
		uint64_t seq = ++t->lat_seq;

		/* each side's poll after its post runs its engine, which sends
		 * (as the poster's own polling loop does in perftest) */
		if (!lat_post(&t->a, &t->b, seq, k) || !lat_poll(t->a.cq) ||
		    !lat_wait(&t->b, seq) ||
		    !lat_post(&t->b, &t->a, seq, k) || !lat_poll(t->b.cq) ||
		    !lat_wait(&t->a, seq))
			return false;
	}
	return true;
}

/* The measured loop: a function of its own for callgrind --toggle-collect. */
__attribute__((noinline)) bool tpb_measure(struct tpb *t, uint64_t count);

__attribute__((noinline)) bool
tpb_measure(struct tpb *t, uint64_t count)
{
	bool ok = t->o.lat ? tpb_pingpong(t, count) : tpb_stream(t, count);

	/* no tail call: callgrind must see tpb_measure return after the loop */
	__asm__ volatile("" ::: "memory");
	return ok;
}

static void
snapshot(struct tpb *t, uint64_t *a, uint64_t *b, uint64_t *dab, uint64_t *dba)
{
	struct vwire_stats s;

	for (size_t i = 0; i < N_A; i++)
		a[i] = tp_dev_counter(verbs_tp(t->a.ctx), a_counters[i]);
	for (size_t i = 0; i < N_B; i++)
		b[i] = tp_dev_counter(verbs_tp(t->b.ctx), b_counters[i]);
	vwire_get_stats(t->a.link, &s);
	*dab = s.dropped;
	vwire_get_stats(t->b.link, &s);
	*dba = s.dropped;
}

static struct tpb_result
run_once(struct tpb *t)
{
	struct tpb_result r;
	uint64_t a0[N_A], b0[N_B], dab, dba;
	double w0, c0;

	memset(&r, 0, sizeof(r));
	snapshot(t, a0, b0, &dab, &dba);
	w0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	r.ok = tpb_measure(t, t->o.count);
	r.cpu_s = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	r.wall_s = now_s(CLOCK_MONOTONIC) - w0;
	snapshot(t, r.a, r.b, &r.dropped_ab, &r.dropped_ba);
	for (size_t i = 0; i < N_A; i++)
		r.a[i] -= a0[i];
	for (size_t i = 0; i < N_B; i++)
		r.b[i] -= b0[i];
	r.dropped_ab -= dab;
	r.dropped_ba -= dba;
	r.msgs = t->o.count;
	r.bytes = t->o.count * t->o.size;
	return r;
}

/* ---- baselines ------------------------------------------------------------ */

/* The request frames of one message: FIRST / MIDDLE / LAST or ONLY. */
static struct rte_mbuf *
build_frame(struct rte_mempool *pool, uint8_t opcode, uint32_t plen,
	    const uint8_t *payload, uint16_t *payload_off)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct roce_pkt p;
	size_t len;

	if (m == NULL)
		die("baseline mbuf");
	bench_write_pkt(&p, opcode, plen);
	len = roce_build(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), &p,
			 payload);
	if (len == 0)
		die("baseline roce_build");
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	*payload_off = p.payload_off;
	return m;
}

/* Frame i (0-based) of a message of n packets. */
static struct rte_mbuf *
frame_of(struct rte_mbuf *const fr[3], uint32_t i, uint32_t n)
{
	if (n == 1)
		return fr[0];
	return i == 0 ? fr[0] : i == n - 1 ? fr[2] : fr[1];
}

struct tpb_base {
	double raw_s;		/* best time for `count` messages' frames */
	double limit_s;		/* best time for the copy + ICRC work */
	uint64_t frames;
	uint64_t frame_bytes;
};

/* Raw vwire: the same frames, reused (refcount), tx_burst A -> rx_burst B. */
static double
raw_once(struct droce_link *la, struct droce_link *lb, struct rte_mbuf *const fr[3],
	 uint32_t n, uint64_t frames)
{
	struct rte_mbuf *tx[TPB_RAW_BURST], *rx[TPB_RAW_BURST];
	uint64_t sent = 0, got = 0;
	uint32_t pos = 0;
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);

	while (got < frames) {
		uint16_t k = 0, s, r;

		while (k < TPB_RAW_BURST && sent + k < frames) {
			tx[k] = frame_of(fr, pos, n);
			rte_mbuf_refcnt_update(tx[k], 1);
			k++;
			pos = pos + 1 == n ? 0 : pos + 1;
		}
		s = k > 0 ? droce_link_tx(la, tx, k) : 0;
		for (uint16_t i = s; i < k; i++) {	/* refused: undo */
			rte_mbuf_refcnt_update(tx[i], -1);
			pos = pos == 0 ? n - 1 : pos - 1;
		}
		sent += s;
		r = droce_link_rx(lb, rx, TPB_RAW_BURST);
		rte_pktmbuf_free_bulk(rx, r);
		got += r;
	}
	return now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/*
 * write_lat's raw counterpart: the two WRITE frames of a round trip
 * forwarded over a bare vwire, A -> B, then B -> A, each received before
 * the other is sent (reused with a reference count, as raw_once).
 */
__attribute__((noinline)) uint64_t tpb_measure_raw(struct droce_link *la,
						    struct droce_link *lb,
						    struct rte_mbuf *ab, struct rte_mbuf *ba,
						    uint64_t count);

static bool
raw_hop(struct droce_link *from, struct droce_link *to, struct rte_mbuf *m)
{
	struct rte_mbuf *rx[TPB_RAW_BURST];
	uint16_t r = 0;

	rte_mbuf_refcnt_update(m, 1);
	if (droce_link_tx(from, &m, 1) != 1) {
		rte_mbuf_refcnt_update(m, -1);
		return false;
	}
	while (r == 0)
		r = droce_link_rx(to, rx, TPB_RAW_BURST);
	rte_pktmbuf_free_bulk(rx, r);
	return true;
}

__attribute__((noinline)) uint64_t
tpb_measure_raw(struct droce_link *la, struct droce_link *lb, struct rte_mbuf *ab,
		struct rte_mbuf *ba, uint64_t count)
{
	uint64_t done = 0;

	while (done < count && raw_hop(la, lb, ab) && raw_hop(lb, la, ba))
		done++;
	__asm__ volatile("" ::: "memory");
	return done;
}

/* The raw round trips of write_lat (count of them), best CPU time of reps. */
static double
raw_lat(const struct tpb_opts *o, uint32_t reps)
{
	struct vwire_config w = { .name = "tpb_raw_lat" };
	struct droce_link *la, *lb;
	struct rte_mbuf *ab, *ba;
	uint16_t poff;
	uint8_t payload[8] = { 0 };
	double best = 1e30;

	if (vwire_pair_create(&w, &la, &lb) != 0)
		die("baseline vwire");
	ab = build_frame(la->pool, ROCE_OP_RDMA_WRITE_ONLY, 8, payload, &poff);
	ba = build_frame(lb->pool, ROCE_OP_RDMA_WRITE_ONLY, 8, payload, &poff);
	/* warm-up (not in tpb_measure_raw: callgrind counts reps x count) */
	for (uint64_t i = 0; i < o->count / 10 + 1; i++)
		if (!raw_hop(la, lb, ab) || !raw_hop(lb, la, ba))
			die("raw write_lat: a frame was refused");
	for (uint32_t r = 0; r < reps; r++) {
		double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);

		if (tpb_measure_raw(la, lb, ab, ba, o->count) != o->count)
			die("raw write_lat: a frame was refused");
		best = RTE_MIN(best, now_s(CLOCK_THREAD_CPUTIME_ID) - t0);
	}
	rte_pktmbuf_free(ab);
	rte_pktmbuf_free(ba);
	droce_link_close(la);
	droce_link_close(lb);
	return best;
}

/* Both ends' data work per packet: copy in + ICRC, ICRC check + copy out. */
static double
limit_once(struct rte_mbuf *const fr[3], const uint16_t poffs[3], uint32_t n,
	   uint64_t frames, const uint8_t *src, uint8_t *dst, uint32_t mtu,
	   uint32_t size)
{
	static uint8_t work[3][VWIRE_MTU_MAX + VWIRE_FRAME_OVERHEAD];
	uint32_t sink = 0, pos = 0;
	double t0;

	for (int i = 0; i < 3; i++)
		memcpy(work[i], rte_pktmbuf_mtod(fr[i], uint8_t *), fr[i]->data_len);
	t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	for (uint64_t f = 0; f < frames; f++) {
		int w = n == 1 ? 0 : pos == 0 ? 0 : pos == n - 1 ? 2 : 1;
		const struct rte_mbuf *m = fr[w];
		uint32_t off = pos * mtu;
		uint32_t plen = RTE_MIN(mtu, size - off);
		uint16_t l3 = RTE_ETHER_HDR_LEN;
		size_t ip_len = m->data_len - l3;
		uint16_t poff = poffs[w];

		memcpy(work[w] + poff, src + off, plen);
		sink += roce_icrc_compute(work[w] + l3, ip_len, 4);
		sink += roce_icrc_compute(work[w] + l3, ip_len, 4);
		memcpy(dst + off, work[w] + poff, plen);
		pos = pos + 1 == n ? 0 : pos + 1;
	}
	/* the ICRCs are the work measured: keep them from being optimised away */
	__asm__ volatile("" : : "r"(sink));
	return now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static struct tpb_base
baselines(const struct tpb_opts *o, uint32_t reps)
{
	struct tpb_base b = { 0 };
	struct vwire_config w = { .name = "tpb_raw" };
	struct droce_link *la, *lb;
	struct rte_mbuf *fr[3];
	uint16_t poff[3];
	uint32_t n = pkts_per_msg(o);
	uint8_t *src = malloc(RTE_MAX(o->size, 64u));
	uint8_t *dst = malloc(RTE_MAX(o->size, 64u));
	uint32_t last = o->size - (n - 1) * o->mtu;

	if (src == NULL || dst == NULL)
		die("baseline buffers");
	memset(src, 0x5a, RTE_MAX(o->size, 64u));
	if (vwire_pair_create(&w, &la, &lb) != 0)
		die("baseline vwire");
	if (n == 1) {
		fr[0] = build_frame(la->pool, ROCE_OP_RDMA_WRITE_ONLY, o->size, src,
				    &poff[0]);
		fr[1] = fr[2] = fr[0];
		poff[1] = poff[2] = poff[0];
	} else {
		fr[0] = build_frame(la->pool, ROCE_OP_RDMA_WRITE_FIRST, o->mtu, src,
				    &poff[0]);
		fr[1] = build_frame(la->pool, ROCE_OP_RDMA_WRITE_MIDDLE, o->mtu, src,
				    &poff[1]);
		fr[2] = build_frame(la->pool, ROCE_OP_RDMA_WRITE_LAST, last, src,
				    &poff[2]);
	}
	b.frames = o->count * n;
	for (uint32_t i = 0; i < n; i++)
		b.frame_bytes += frame_of(fr, i, n)->data_len;
	b.frame_bytes *= o->count;
	b.raw_s = b.limit_s = 1e30;
	for (uint32_t r = 0; r < reps; r++) {
		b.raw_s = RTE_MIN(b.raw_s, raw_once(la, lb, fr, n, b.frames));
		b.limit_s = RTE_MIN(b.limit_s, limit_once(fr, poff, n, b.frames, src,
							  dst, o->mtu, o->size));
	}
	rte_pktmbuf_free(fr[0]);
	if (n > 1) {
		rte_pktmbuf_free(fr[1]);
		rte_pktmbuf_free(fr[2]);
	}
	droce_link_close(la);
	droce_link_close(lb);
	free(src);
	free(dst);
	return b;
}

/* ---- report ---------------------------------------------------------------- */

static double
gbps(uint64_t bytes, double s)
{
	return s > 0 ? bytes * 8.0 / s / 1e9 : 0;
}

static void
print_result(const struct tpb *t, uint32_t run, const struct tpb_result *r)
{
	const struct tpb_opts *o = &t->o;

	if (o->json) {
		printf("{\"kind\":\"run\",\"run\":%u,\"ok\":%s,\"op\":\"%s\",\"size\":%u,"
		       "\"mtu\":%u,\"loss\":%g,\"depth\":%u,\"signal_every\":%u,"
		       "\"timeout\":%u,\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"seconds\":%.6f,\"cpu_seconds\":%.6f,\"gbps\":%.4f,"
		       "\"mmsgps\":%.5f", run, r->ok ? "true" : "false", o->op,
		       o->size, o->mtu, o->loss, o->depth,
		       RTE_MIN(o->signal_every, o->depth), o->timeout, r->msgs,
		       r->bytes, r->wall_s, r->cpu_s, gbps(r->bytes, r->wall_s),
		       r->msgs / r->wall_s / 1e6);
		for (size_t i = 0; i < N_A; i++)
			printf(",\"a.%s\":%" PRIu64, a_counters[i], r->a[i]);
		for (size_t i = 0; i < N_B; i++)
			printf(",\"b.%s\":%" PRIu64, b_counters[i], r->b[i]);
		printf(",\"wire_dropped_ab\":%" PRIu64 ",\"wire_dropped_ba\":%" PRIu64
		       "}\n", r->dropped_ab, r->dropped_ba);
		return;
	}
	printf("run %u%s: %" PRIu64 " msgs, %" PRIu64 " bytes in %.4f s (cpu %.4f s): "
	       "%.3f Gb/s, %.4f Mmsg/s\n", run, r->ok ? "" : " FAILED", r->msgs,
	       r->bytes, r->wall_s, r->cpu_s, gbps(r->bytes, r->wall_s),
	       r->msgs / r->wall_s / 1e6);
	printf("  A:");
	for (size_t i = 0; i < N_A; i++)
		printf(" %s=%" PRIu64, a_counters[i], r->a[i]);
	printf("\n  B:");
	for (size_t i = 0; i < N_B; i++)
		printf(" %s=%" PRIu64, b_counters[i], r->b[i]);
	printf("\n  wire: dropped a->b %" PRIu64 ", b->a %" PRIu64
	       "; packets/msg: %.3f request, %.3f ack\n", r->dropped_ab, r->dropped_ba,
	       (double)r->a[0] / r->msgs, (double)r->b[0] / r->msgs);
}

static void
print_summary(const struct tpb *t, const struct tpb_result *best,
	      const struct tpb_base *b)
{
	const struct tpb_opts *o = &t->o;
	uint64_t bytes = best->bytes;

	if (o->json) {
		printf("{\"kind\":\"best\",\"seconds\":%.6f,\"cpu_seconds\":%.6f,"
		       "\"gbps\":%.4f,\"mmsgps\":%.5f,\"gbps_cpu\":%.4f",
		       best->wall_s, best->cpu_s, gbps(bytes, best->wall_s),
		       best->msgs / best->wall_s / 1e6, gbps(bytes, best->cpu_s));
		if (b != NULL)
			printf(",\"raw_seconds\":%.6f,\"raw_gbps\":%.4f,\"raw_mmsgps\":%.5f,"
			       "\"raw_frames\":%" PRIu64 ",\"limit_seconds\":%.6f,"
			       "\"limit_gbps\":%.4f,\"ratio_raw\":%.4f,\"ratio_limit\":%.4f",
			       b->raw_s, gbps(bytes, b->raw_s), best->msgs / b->raw_s / 1e6,
			       b->frames, b->limit_s, gbps(bytes, b->limit_s),
			       b->raw_s / best->cpu_s, b->limit_s / best->cpu_s);
		printf("}\n");
		return;
	}
	printf("best: %.3f Gb/s, %.4f Mmsg/s (wall); %.3f Gb/s, %.4f Mmsg/s (cpu time)\n",
	       gbps(bytes, best->wall_s), best->msgs / best->wall_s / 1e6,
	       gbps(bytes, best->cpu_s), best->msgs / best->cpu_s / 1e6);
	if (b == NULL)
		return;
	printf("raw vwire (same %" PRIu64 " frames, %" PRIu64 " frame bytes, no transport): "
	       "%.3f Gb/s payload, %.4f Mmsg/s, %.2f Mframes/s\n", b->frames,
	       b->frame_bytes, gbps(bytes, b->raw_s), best->msgs / b->raw_s / 1e6,
	       b->frames / b->raw_s / 1e6);
	printf("copy+ICRC limit (2 memcpy + 2 ICRC per packet): %.3f Gb/s, %.4f Mmsg/s\n",
	       gbps(bytes, b->limit_s), best->msgs / b->limit_s / 1e6);
	printf("droce / raw vwire: %.3f; droce / copy+ICRC limit: %.3f (cpu time)\n",
	       b->raw_s / best->cpu_s, b->limit_s / best->cpu_s);
}

/* ---- options --------------------------------------------------------------- */

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--op write|fetch_add|write_lat] [--size N] [--mtu 256..4096] [--loss P]\n"
		"          [--count N] [--depth D] [--signal-every K] [--timeout T]\n"
		"          [--runs R] [--seed S] [--sr] [--ring off|MIN] [--no-baseline] [--json]\n"
		"  --loss P        drop probability of every frame, both directions\n"
		"  --depth D       outstanding WRs (default 64)\n"
		"  --signal-every  one WR in K signalled (default 16, at most D)\n"
		"  --timeout T     QP local ACK timeout, 4.096 us * 2^T (default 8)\n"
		"  --runs R        measured runs (best is reported; default 3)\n"
		"  --sr            selective repeat between the two QPs (droce_qp_set_sr)\n"
		"  --ring off|MIN  over net_ring ports (drivers/ethdev), zero copy off or\n"
		"                  from MIN payload bytes (0: net_ring's default)\n"
		"  measured loop: tpb_measure (callgrind --toggle-collect)\n", prog);
	exit(2);
}

static uint64_t
num(const char *s, const char *prog)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || end == s)
		usage(prog);
	return v;
}

static void
parse(int argc, char **argv, struct tpb_opts *o)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "loss", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'c' },
		{ "depth", required_argument, NULL, 'd' },
		{ "signal-every", required_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "runs", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "no-baseline", no_argument, NULL, 'B' },
		{ "sr", no_argument, NULL, 'R' },
		{ "ring", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct tpb_opts){ .op = "write", .size = 65536, .mtu = 4096,
				.count = 20000, .depth = 64, .signal_every = 16,
				.timeout = 8, .runs = 3, .seed = 42, .baseline = true };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'o': o->op = optarg; break;
		case 's': o->size = (uint32_t)num(optarg, argv[0]); break;
		case 'm': o->mtu = (uint32_t)num(optarg, argv[0]); break;
		case 'l': {
			char *end;

			o->loss = strtod(optarg, &end);
			if (*end != '\0' || o->loss < 0 || o->loss > 1)
				usage(argv[0]);
			break;
		}
		case 'c': o->count = num(optarg, argv[0]); break;
		case 'd': o->depth = (uint32_t)num(optarg, argv[0]); break;
		case 'k': o->signal_every = (uint32_t)num(optarg, argv[0]); break;
		case 't': o->timeout = (uint8_t)num(optarg, argv[0]); break;
		case 'r': o->runs = (uint32_t)num(optarg, argv[0]); break;
		case 'S': o->seed = num(optarg, argv[0]); break;
		case 'B': o->baseline = false; break;
		case 'R': o->sr = true; break;
		case 'g':
			o->ring = true;
			o->zc = strcmp(optarg, "off") == 0 ? DROCE_LINK_ZC_OFF :
				(uint32_t)num(optarg, argv[0]);
			break;
		case 'j': o->json = true; break;
		default: usage(argv[0]);
		}
	}
	if (strcmp(o->op, "fetch_add") == 0) {
		if (o->size != 8 || o->baseline) {
			fprintf(stderr, "tp_bench: --op fetch_add needs --size 8 and "
				"--no-baseline (the baselines are WRITE frames)\n");
			exit(2);
		}
	} else if (strcmp(o->op, "write_lat") == 0) {
		if (o->size != 8) {
			fprintf(stderr, "tp_bench: --op write_lat needs --size 8\n");
			exit(2);
		}
		o->lat = true;
	} else if (strcmp(o->op, "write") != 0) {
		fprintf(stderr, "tp_bench: --op %s: write, fetch_add or write_lat\n", o->op);
		exit(2);
	}
	if (mtu_enum(o->mtu) == 0 || o->size == 0 || o->count == 0 ||
	    o->depth == 0 || o->depth > DROCE_MAX_QP_WR || o->signal_every == 0 ||
	    o->runs == 0 || o->timeout > 31 || optind != argc)
		usage(argv[0]);
}

int
main(int argc, char **argv)
{
	struct tpb t;
	struct tpb_result best = { 0 };
	struct tpb_base base;
	bool huge, failed = false;
	uint64_t warm;

	memset(&t, 0, sizeof(t));
	parse(argc, argv, &t.o);
	huge = eal_init(argv[0]);
	if (!t.o.json)
		printf("# EAL %s; WRITE %u B, MTU %u, loss %g both ways (seed %" PRIu64
		       "), depth %u, signal 1/%u, timeout %u (%.2f ms), %" PRIu64
		       " msgs x %u runs%s\n", huge ? "2 MiB hugepages" :
		       "--no-huge (WARNING: slower)", t.o.size, t.o.mtu, t.o.loss,
		       t.o.seed, t.o.depth, RTE_MIN(t.o.signal_every, t.o.depth),
		       t.o.timeout, t.o.timeout == 0 ? 0.0 :
		       (4.096e-3 * (1u << t.o.timeout)), t.o.count, t.o.runs,
		       t.o.sr ? ", selective repeat" : ", go-back-N");
	tpb_open(&t);
	/* warm-up: caches, pools, the mbuf free lists (not measured) */
	warm = RTE_MIN(t.o.count / 10 + 2ull * t.o.depth, t.o.count);
	if (!(t.o.lat ? tpb_pingpong(&t, warm) : tpb_stream(&t, warm)))
		die("warm-up failed");
	best.wall_s = 1e30;
	for (uint32_t r = 0; r < t.o.runs; r++) {
		struct tpb_result res = run_once(&t);

		print_result(&t, r, &res);
		if (!res.ok) {
			failed = true;
			break;
		}
		if (res.wall_s < best.wall_s)
			best = res;
	}
	if (!failed && t.o.lat) {
		/* the raw round trip, the best of runs */
		double raw_s = t.o.baseline ? raw_lat(&t.o, t.o.runs) : 0;

		printf("write_lat: %.3f us per round trip (cpu %.3f us)", best.wall_s * 1e6 /
		       best.msgs, best.cpu_s * 1e6 / best.msgs);
		if (t.o.baseline)
			printf("; raw vwire, the same two WRITE frames: %.3f us (cpu); "
			       "droce / raw: %.2f", raw_s * 1e6 / t.o.count, best.cpu_s / raw_s);
		printf("\n");
	} else if (!failed) {
		if (t.o.baseline)
			base = baselines(&t.o, t.o.runs);
		print_summary(&t, &best, t.o.baseline ? &base : NULL);
	}
	tpb_close(&t);
	rte_eal_cleanup();
	return failed ? 1 : 0;
}
