/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_eal.c - under EAL, the protection tables of a context live in
 * DPDK's heap (hugepages, or 4K pages under --no-huge), on the requested
 * NUMA socket, and work there.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "droce.h"
#include "prot.h"
#include "prot_private.h"
#include "verbs_private.h"
#include "verbs_engine.h"

static int use_huge;

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

/* ptr is an rte_malloc block in a memseg of the expected kind/socket. */
static void
assert_dpdk_heap(const void *ptr, int socket)
{
	const struct rte_memseg *ms = rte_mem_virt2memseg(ptr, NULL);
	size_t sz = 0;

	assert_non_null(ms);
	assert_int_equal(rte_malloc_validate(ptr, &sz), 0);
	assert_true(sz > 0);
	if (use_huge)
		assert_true(ms->hugepage_sz >= RTE_PGSIZE_2M);
	if (socket != SOCKET_ID_ANY)
		assert_int_equal(ms->socket_id, socket);
}

static void
test_tables_in_dpdk_heap(void **state)
{
	struct droce_context_attr attr = {
		.max_pd = 8, .max_mr = 4096, .max_mw = 4096,
		.socket_id = (int)rte_socket_id(),
	};
	struct droce_context *ctx;
	struct prot_tables *t;

	(void)state;
	ctx = droce_open_context(&attr);
	assert_non_null(ctx);
	t = verbs_prot(ctx);
	assert_int_equal(t->nentries, 8193);
	assert_dpdk_heap(t, attr.socket_id);
	assert_dpdk_heap(t->entries, attr.socket_id);
	assert_dpdk_heap(t->ctl, attr.socket_id);
	assert_dpdk_heap(t->ctl->ring, attr.socket_id);
	assert_dpdk_heap(t->ctl->pds, attr.socket_id);
	/* Entries are cache-line aligned: one line per lookup. */
	assert_int_equal((uintptr_t)t->entries % 64, 0);
	assert_int_equal(droce_close_context(ctx), 0);
}

static void
test_tables_in_dpdk_heap_bad_flow(void **state)
{
	void *libc = malloc(64);

	(void)state;
	/* The check above can fail: libc memory is not DPDK memory. */
	assert_non_null(libc);
	assert_null(rte_mem_virt2memseg(libc, NULL));
	free(libc);
	/* Oversized tables are refused before any allocation. */
	{
		struct droce_context_attr attr = { .max_mr = 1u << 24,
						   .max_mw = 1 };

		errno = 0;
		assert_null(droce_open_context(&attr));
		assert_int_equal(errno, EINVAL);
	}
}

static void
test_register_under_eal(void **state)
{
	struct droce_context *ctx = droce_open_context(NULL);
	struct droce_pd *pd, *pd2;
	struct droce_mr *mr;
	uint8_t *buf = rte_zmalloc("test", 4096, 64);
	void *host = NULL;
	int i;

	(void)state;
	assert_non_null(ctx);
	assert_non_null(buf);
	pd = droce_alloc_pd(ctx);
	pd2 = droce_alloc_pd(ctx);
	assert_non_null(pd);
	assert_non_null(pd2);
	mr = droce_reg_mr(pd, buf, 4096, DROCE_ACCESS_LOCAL_WRITE |
			  DROCE_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	assert_int_equal(prot_check_remote(verbs_prot(ctx), mr->rkey, pd->handle, 1,
					   PROT_OP_WRITE,
					   (uint64_t)(uintptr_t)buf + 100, 8,
					   &host), PROT_OK);
	assert_ptr_equal(host, buf + 100);
	/* Negative: other PD, beyond the end, stale after dereg. */
	assert_int_equal(prot_check_remote(verbs_prot(ctx), mr->rkey, pd2->handle,
					   1, PROT_OP_WRITE,
					   (uint64_t)(uintptr_t)buf, 8, &host),
			 PROT_PD_MISMATCH);
	assert_int_equal(prot_check_remote(verbs_prot(ctx), mr->rkey, pd->handle, 1,
					   PROT_OP_WRITE,
					   (uint64_t)(uintptr_t)buf + 4090, 8,
					   &host), PROT_RANGE);
	{
		uint32_t rkey = mr->rkey;

		assert_int_equal(droce_dereg_mr(mr), 0);
		assert_int_equal(prot_check_remote(verbs_prot(ctx), rkey,
						   pd->handle, 1,
						   PROT_OP_WRITE,
						   (uint64_t)(uintptr_t)buf, 8,
						   &host), PROT_BAD_KEY);
	}
	/* Many registrations in hugepage-backed tables. */
	for (i = 0; i < 1000; i++) {
		struct droce_mr *m = droce_reg_mr(pd, buf + i, 8, 0);

		assert_non_null(m);
		assert_int_equal(droce_dereg_mr(m), 0);
	}
	assert_int_equal(droce_dealloc_pd(pd), 0);
	assert_int_equal(droce_dealloc_pd(pd2), 0);
	assert_int_equal(droce_close_context(ctx), 0);
	rte_free(buf);
}

/*
 * One EAL per process, so meson runs this twice: test_prot_eal_huge (no
 * argument: hugepages, which must be free; under DROCE_NO_HUGE=1 it
 * cannot run and says so with exit 77) and test_prot_eal_nohuge
 * (--no-huge: 4K pages).  DPDK 22.11 refuses --in-memory with --no-huge
 * ("--legacy-mem is not compatible with --in-memory": --no-huge implies
 * legacy memory); --no-shconf keeps that run's files out of the runtime
 * directory instead.
 */
static int
start_eal(const char *argv0, int huge)
{
	char *eal_huge[] = { (char *)argv0, "--no-pci", "--in-memory",
			     "-l", "0", "--log-level=lib.*:error", NULL };
	char *eal_nohuge[] = { (char *)argv0, "--no-pci", "--no-shconf",
			       "--no-huge", "-m", "128", "-l", "0",
			       "--log-level=lib.*:error", NULL };
	char **args = huge ? eal_huge : eal_nohuge;
	int n = 0;

	while (args[n] != NULL)
		n++;
	if (rte_eal_init(n, args) < 0) {
		fprintf(stderr, "rte_eal_init (%s) failed: %s\n",
			huge ? "hugepages" : "--no-huge",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_in_dpdk_heap),
		cmocka_unit_test(test_tables_in_dpdk_heap_bad_flow),
		cmocka_unit_test(test_register_under_eal),
	};
	const char *no_huge_env = getenv("DROCE_NO_HUGE");
	int ret;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--no-huge") != 0)) {
		fprintf(stderr, "usage: %s [--no-huge]\n", argv[0]);
		return 2;
	}
	use_huge = argc == 1;
	if (use_huge && no_huge_env != NULL && strcmp(no_huge_env, "1") == 0) {
		fprintf(stderr, "DROCE_NO_HUGE=1: the hugepage run cannot run "
			"here\n");
		return 77;
	}
	if (use_huge && free_hugepages() < 16) {
		fprintf(stderr, "no free hugepages (fewer than 16): run "
			"usertools/droce-setup\n");
		return 1;
	}
	if (start_eal(argv[0], use_huge) != 0)
		return 1;
	printf("EAL with %s\n", use_huge ? "hugepages" : "--no-huge");
	ret = cmocka_run_group_tests_name(use_huge ? "protection_eal_huge" :
					  "protection_eal_nohuge", tests,
					  NULL, NULL);
	rte_eal_cleanup();
	return ret;
}
