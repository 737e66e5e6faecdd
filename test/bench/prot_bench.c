/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_bench.c - scale benchmark of lib/protection (not a test).
 *
 *   prot_bench [-n regions] [-w windows] [-l lookups] [-p hot|random] [-H]
 *
 * Registers n MRs (and w type-1 MWs bound onto them), then runs l remote
 * lookup+checks (prot_check_remote, RDMA WRITE of 64 bytes) over a
 * precomputed key sequence:
 *   hot:    64 keys picked at random among all live keys (a QP's working
 *           set; for n = 1 that is the one key), repeated;
 *   random: uniformly random over all live keys (table cache misses).
 * -H puts the tables in 2 MiB hugepages (mmap MAP_HUGETLB), as under EAL
 * where lib/verbs allocates them with rte_zmalloc_socket; without -H they
 * are in ordinary 4 KiB pages.
 * Prints registration rates and ns per lookup (thread CPU time, so time
 * spent descheduled on a shared machine does not count).  For instructions per
 * lookup run it twice under callgrind with different -l and divide the
 * difference of the totals by the difference of -l (BENCHMARKS.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prot.h"

#define BUF_SIZE (1u << 20)
#define SEQ_LEN (1u << 20)
#define HOT_KEYS 64

struct op {
	uint32_t key;
	uint64_t va;
};

/* -H: hugepage-backed allocator hook (sizes rounded to 2 MiB). */
#define HUGE_SZ (2u << 20)

struct huge_hdr {
	size_t len;
};

static void *
huge_zalloc(void *arg, size_t size, size_t align, int socket)
{
	size_t len = (size + HUGE_SZ + HUGE_SZ - 1) & ~(size_t)(HUGE_SZ - 1);
	uint8_t *p;

	(void)arg;
	(void)socket;
	if (align > HUGE_SZ)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Header in the first huge page, data 2 MiB in: keeps alignment. */
	((struct huge_hdr *)(void *)p)->len = len;
	return p + HUGE_SZ;
}

static void
huge_free(void *arg, void *ptr)
{
	uint8_t *p = ptr;

	(void)arg;
	if (p == NULL)
		return;
	p -= HUGE_SZ;
	munmap(p, ((struct huge_hdr *)(void *)p)->len);
}

static const struct prot_alloc_ops huge_ops = {
	.zalloc = huge_zalloc,
	.free = huge_free,
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static void
die(const char *what, int err)
{
	fprintf(stderr, "prot_bench: %s: %s\n", what, strerror(-err));
	exit(1);
}

int
main(int argc, char **argv)
{
	uint64_t n_mr = 1, n_mw = 0, lookups = 10000000, rng = 42;
	const char *pattern = "hot";
	struct prot_config cfg = { .max_pd = 4, .seed = 3 };
	struct prot_tables *t;
	struct op *live, *seq;
	uint64_t n_live, i, sum = 0, ok = 0;
	uint8_t *buf;
	uint32_t pd;
	double t0, t1;
	const struct prot_alloc_ops *ops = NULL;
	int c, ret;

	while ((c = getopt(argc, argv, "n:w:l:p:H")) != -1) {
		switch (c) {
		case 'n':
			n_mr = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			n_mw = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			lookups = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pattern = optarg;
			break;
		case 'H':
			ops = &huge_ops;
			break;
		default:
			fprintf(stderr, "usage: %s [-n mrs] [-w mws] "
				"[-l lookups] [-p hot|random] [-H]\n", argv[0]);
			return 2;
		}
	}
	if (n_mr == 0 || n_mr > PROT_KEY_INDEX_MAX - 1)
		die("-n", -EINVAL);
	cfg.max_mr = (uint32_t)n_mr;
	cfg.max_mw = n_mw != 0 ? (uint32_t)n_mw : 1;
	ret = prot_tables_create(&cfg, ops, &t);
	if (ret != 0)
		die("prot_tables_create", ret);
	ret = prot_pd_alloc(t, &pd);
	if (ret != 0)
		die("prot_pd_alloc", ret);
	buf = calloc(1, BUF_SIZE);
	n_live = n_mr + n_mw;
	live = calloc(n_live, sizeof(*live));
	seq = calloc(SEQ_LEN, sizeof(*seq));
	if (buf == NULL || live == NULL || seq == NULL)
		die("calloc", -ENOMEM);

	/* Regions: 4 KiB each, overlapping slices of one buffer. */
	t0 = now_s();
	for (i = 0; i < n_mr; i++) {
		uint64_t off = (i * 64) % (BUF_SIZE - 4096);

		ret = prot_mr_reg(t, pd, buf + off, 4096, PROT_ACC_LOCAL_WRITE |
				  PROT_ACC_REMOTE_WRITE | PROT_ACC_MW_BIND,
				  &live[i].key);
		if (ret != 0)
			die("prot_mr_reg", ret);
		live[i].va = (uint64_t)(uintptr_t)(buf + off);
	}
	t1 = now_s();
	printf("register %" PRIu64 " MRs: %.3f s, %.0f reg/s\n", n_mr,
	       t1 - t0, (double)n_mr / (t1 - t0));

	/* Windows: allocate and bind (type 1), 1 KiB inside an MR each. */
	t0 = now_s();
	for (i = 0; i < n_mw; i++) {
		const struct op *m = &live[i % n_mr];
		uint32_t key;

		ret = prot_mw_alloc(t, pd, 1, &key);
		if (ret == 0)
			ret = prot_mw_bind_type1(t, prot_key_index(key), m->key,
						 m->va + 1024, 1024,
						 PROT_ACC_REMOTE_WRITE,
						 &live[n_mr + i].key);
		if (ret != 0)
			die("prot_mw_alloc/bind", ret);
		live[n_mr + i].va = m->va + 1024;
	}
	t1 = now_s();
	if (n_mw != 0)
		printf("alloc+bind %" PRIu64 " MWs: %.3f s, %.0f /s\n", n_mw,
		       t1 - t0, (double)n_mw / (t1 - t0));

	/* The access sequence, prepared outside the timed loop. */
	if (strcmp(pattern, "random") == 0) {
		for (i = 0; i < SEQ_LEN; i++)
			seq[i] = live[xorshift(&rng) % n_live];
	} else {
		struct op hot[HOT_KEYS];

		for (i = 0; i < HOT_KEYS; i++)
			hot[i] = live[xorshift(&rng) % n_live];
		for (i = 0; i < SEQ_LEN; i++)
			seq[i] = hot[xorshift(&rng) % HOT_KEYS];
	}

	t0 = now_s();
	for (i = 0; i < lookups; i++) {
		const struct op *o = &seq[i & (SEQ_LEN - 1)];
		void *host = NULL;
		enum prot_status st;

		st = prot_check_remote(t, o->key, pd, 1, PROT_OP_WRITE,
				       o->va + 8, 64, &host);
		ok += st == PROT_OK;
		sum += (uintptr_t)host;
	}
	t1 = now_s();
	printf("lookup+check (%s, %s, %" PRIu64 " live keys): %" PRIu64
	       " ops, %.2f ns/op, ok %" PRIu64 " (sum %" PRIx64 ")\n",
	       pattern, ops != NULL ? "2M pages" : "4K pages", n_live, lookups,
	       (t1 - t0) * 1e9 / (double)(lookups ? lookups : 1), ok, sum);
	if (ok != lookups) {
		fprintf(stderr, "prot_bench: %" PRIu64 " checks failed\n",
			lookups - ok);
		return 1;
	}

	/* Deregistration rate (windows first: they pin their MR). */
	t0 = now_s();
	for (i = 0; i < n_mw; i++)
		(void)prot_mw_dealloc(t, prot_key_index(live[n_mr + i].key));
	for (i = 0; i < n_mr; i++)
		(void)prot_mr_dereg(t, live[i].key);
	t1 = now_s();
	printf("dealloc %" PRIu64 " MWs + dereg %" PRIu64 " MRs: %.3f s\n",
	       n_mw, n_mr, t1 - t0);
	(void)prot_pd_dealloc(t, pd);
	(void)prot_tables_destroy(t);
	free(seq);
	free(live);
	free(buf);
	return 0;
}
