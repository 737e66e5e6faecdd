/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICRC cost against bare ISA-L over the same bytes (issue 12 goal row:
 * "rx 1K/4K, tx 1K/4K of bare ISA-L").  For RC RDMA WRITE_ONLY packets with
 * 1 KiB and 4 KiB payloads over IPv4 and IPv6, in one run:
 *   isal     bare crc32_gzip_refl() over the bytes the ICRC covers, one call
 *   rx       roce_icrc_verify_writable() (the receive path: in place)
 *   rx_const roce_icrc_verify() (receive of a shared, read-only frame)
 *   tx       the transmit path: roce_tmpl_build_headers(), payload copy,
 *            roce_build_finish()
 *   tx_base  the same without roce_build_finish()
 * so the receive ICRC is rx and the transmit ICRC is tx - tx_base.  The
 * payload copy between header build and finish is what the transport does
 * (tp_net.c); it also lets the header stores retire before the CRC reads
 * them, as they do there.
 * Each figure is the best of --runs timed runs (~5 ms each; the variants
 * take turns within a run, so a noisy neighbour slows all of them alike).
 * The load average is printed before and after: above ~0.3 the absolute
 * figures are not results, the ratios of one run still mean something.
 * --callgrind runs every variant a fixed number of times and prints
 * nothing timed, for instruction counts per function.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef ROCE_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include "roce_wire.h"

#define DEFAULT_RUNS 40
#define TARGET_NS 5000000.0	/* ~5 ms per timed run */
#define CALLGRIND_ITERS 10000
#define FRAME_CAP 8192
#define QUIET_LOAD 0.3

struct bench_pkt {
	uint8_t frame[FRAME_CAP];	/* as built, never written again */
	uint8_t mut[FRAME_CAP];		/* rx and tx work on this copy */
	uint8_t gap[2048];		/* payload 4K-aliases none of mut */
	uint8_t payload[FRAME_CAP];
	struct roce_pkt p;
	struct roce_tmpl tmpl;
	size_t crc_len;			/* bytes the ICRC covers */
};

static volatile uint32_t sink;

static uint32_t
bare_crc(uint32_t crc, const void *buf, size_t len)
{
#ifdef ROCE_HAVE_ISAL
	return crc32_gzip_refl(crc, buf, len);
#else
	return roce_crc32(crc, buf, len);	/* portable build */
#endif
}

static void
bench_setup(struct bench_pkt *b, unsigned int ipver, uint32_t payload_len)
{
	const uint8_t v4a[4] = { 198, 18, 0, 12 }, v4b[4] = { 198, 18, 0, 11 };

	for (size_t i = 0; i < sizeof(b->payload); i++)
		b->payload[i] = (uint8_t)(i * 7 + 3);
	memset(&b->p, 0, sizeof(b->p));
	b->p.ip_version = (uint8_t)ipver;
	b->p.ip_ttl = 64;
	b->p.ip_dscp_ecn = 0x1a;
	b->p.ip_flow_label = 0x12345;
	if (ipver == 4) {
		roce_gid_from_ipv4(b->p.src_gid, v4a);
		roce_gid_from_ipv4(b->p.dst_gid, v4b);
	} else {
		b->p.src_gid[0] = 0x20; b->p.src_gid[1] = 0x01;
		b->p.src_gid[3] = 0x02; b->p.src_gid[15] = 1;
		memcpy(b->p.dst_gid, b->p.src_gid, 16);
		b->p.dst_gid[15] = 2;
	}
	b->p.opcode = ROCE_OP_RDMA_WRITE_ONLY;
	b->p.dest_qpn = 0x14;
	b->p.pkey = 0xffff;
	b->p.udp_sport = 0xc123;
	b->p.psn = 0x123456;
	b->p.reth.va = 0x1000;
	b->p.reth.rkey = 0x2233;
	b->p.reth.len = payload_len;
	b->p.payload_len = payload_len;
	if (roce_build(b->frame, sizeof(b->frame), &b->p, b->payload) == 0 ||
	    !roce_tmpl_init(&b->tmpl, &b->p))
		abort();
	b->crc_len = b->p.pkt_len - b->p.l3_off - ROCE_ICRC_LEN;
	memcpy(b->mut, b->frame, b->p.pkt_len);
}

/* One iteration of each variant: noinline so callgrind counts them apart. */
__attribute__((noinline)) static uint32_t
v_isal(struct bench_pkt *b)
{
	return bare_crc(0, b->frame + b->p.l3_off, b->crc_len);
}

__attribute__((noinline)) static uint32_t
v_rx(struct bench_pkt *b)
{
	return roce_icrc_verify_writable(b->mut, &b->p);
}

__attribute__((noinline)) static uint32_t
v_rx_const(struct bench_pkt *b)
{
	return roce_icrc_verify(b->frame, &b->p);
}

static struct roce_pkt
tx_headers_and_payload(struct bench_pkt *b)
{
	struct roce_pkt p = b->p;
	size_t off = roce_tmpl_build_headers(&b->tmpl, b->mut, FRAME_CAP, &p);

	memcpy(b->mut + off, b->payload, p.payload_len);
	return p;
}

__attribute__((noinline)) static uint32_t
v_tx(struct bench_pkt *b)
{
	struct roce_pkt p = tx_headers_and_payload(b);

	roce_build_finish(b->mut, &p);
	return p.icrc;
}

__attribute__((noinline)) static uint32_t
v_tx_base(struct bench_pkt *b)
{
	struct roce_pkt p = tx_headers_and_payload(b);

	__asm__ volatile("" : : "r"(b->mut) : "memory");
	return p.pkt_len;
}

typedef uint32_t (*variant_fn)(struct bench_pkt *);

enum { V_ISAL, V_RX, V_RX_CONST, V_TX, V_TX_BASE, NVARIANTS };

static const struct {
	const char *name;
	variant_fn fn;
} variants[NVARIANTS] = {
	[V_ISAL] = { "isal", v_isal },
	[V_RX] = { "rx", v_rx },
	[V_RX_CONST] = { "rx_const", v_rx_const },
	[V_TX] = { "tx", v_tx },
	[V_TX_BASE] = { "tx_base", v_tx_base },
};

static double
now_ns(void)
{
	struct timespec ts;

	/* thread CPU time: time spent descheduled on a busy machine is not
	 * counted (cache and sibling-thread interference still is) */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns per call of one timed run of iters calls. */
static double
time_run(variant_fn fn, struct bench_pkt *b, uint64_t iters)
{
	double t0 = now_ns();
	uint32_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += fn(b);
	sink = acc;
	return (now_ns() - t0) / (double)iters;
}

static void
time_variants(struct bench_pkt *b, int runs, double *best)
{
	uint64_t iters[NVARIANTS];

	for (size_t v = 0; v < NVARIANTS; v++) {
		double warm = time_run(variants[v].fn, b, 10000);

		iters[v] = (uint64_t)(TARGET_NS / (warm > 1 ? warm : 1)) + 1;
		best[v] = 1e300;
	}
	for (int r = 0; r < runs; r++) {
		for (size_t v = 0; v < NVARIANTS; v++) {
			double ns = time_run(variants[v].fn, b, iters[v]);

			if (ns < best[v])
				best[v] = ns;
		}
	}
}

/* Every path must agree with the builder before anything is timed. */
static void
check_paths(struct bench_pkt *b)
{
	if (!v_rx(b) || !v_rx_const(b) || v_tx(b) != b->p.icrc ||
	    memcmp(b->mut, b->frame, b->p.pkt_len) != 0)
		abort();
}

struct ratios {
	double rx, tx;
};

static struct ratios
bench_one(unsigned int ipver, uint32_t payload_len, int runs)
{
	struct bench_pkt *b = calloc(1, sizeof(*b));
	double ns[NVARIANTS];
	struct ratios r;

	if (b == NULL)
		abort();
	bench_setup(b, ipver, payload_len);
	check_paths(b);
	time_variants(b, runs, ns);
	check_paths(b);
	printf("IPv%u %4u B payload, %4zu B covered:\n", ipver, payload_len,
	       b->crc_len);
	for (size_t v = 0; v < NVARIANTS; v++)
		printf("  %-9s %7.1f ns  %6.2f GB/s\n", variants[v].name, ns[v],
		       (double)b->crc_len / ns[v]);
	r.rx = ns[V_RX] / ns[V_ISAL];
	r.tx = (ns[V_TX] - ns[V_TX_BASE]) / ns[V_ISAL];
	printf("  rx/isal %.3f, rx_const/isal %.3f, (tx - tx_base)/isal %.3f\n",
	       r.rx, ns[V_RX_CONST] / ns[V_ISAL], r.tx);
	free(b);
	return r;
}

static void
callgrind_one(unsigned int ipver, uint32_t payload_len)
{
	struct bench_pkt *b = calloc(1, sizeof(*b));
	uint32_t acc = 0;

	if (b == NULL)
		abort();
	bench_setup(b, ipver, payload_len);
	check_paths(b);
	for (size_t v = 0; v < NVARIANTS; v++)
		for (int i = 0; i < CALLGRIND_ITERS; i++)
			acc += variants[v].fn(b);
	sink = acc;
	free(b);
}

static double
load1(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: icrc_bench [--runs N] | --callgrind\n");
	return 2;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1024, 4096 };
	struct ratios r[2][2];	/* [ip 4/6][size] */
	int runs = DEFAULT_RUNS;
	double before, after;

	if (argc == 2 && strcmp(argv[1], "--callgrind") == 0) {
		for (size_t s = 0; s < 2; s++)
			for (unsigned int ipver = 4; ipver <= 6; ipver += 2)
				callgrind_one(ipver, sizes[s]);
		printf("%d iterations of each variant per packet kind\n",
		       CALLGRIND_ITERS);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--runs") == 0)
		runs = atoi(argv[2]);
	else if (argc != 1)
		return usage();
	if (runs < 1)
		return usage();

	before = load1();
	printf("crc32 implementation: %s, best of %d runs\n",
	       roce_crc32_impl(), runs);
	for (size_t s = 0; s < 2; s++)
		for (unsigned int ipver = 4; ipver <= 6; ipver += 2)
			r[ipver / 6][s] = bench_one(ipver, sizes[s], runs);
	after = load1();
	for (int i = 0; i < 2; i++)
		printf("IPv%d rx 1K/4K, tx 1K/4K of bare ISA-L: rx %.2f / %.2f, "
		       "tx %.2f / %.2f\n", i ? 6 : 4, r[i][0].rx, r[i][1].rx,
		       r[i][0].tx, r[i][1].tx);
	printf("load average %.2f before, %.2f after%s\n", before, after,
	       before > QUIET_LOAD || after > QUIET_LOAD ?
	       " (above 0.3: ratios only, not a result)" : "");
	return 0;
}
