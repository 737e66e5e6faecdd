/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_check.c - the remote and local checks, their order, their
 * counters, and the four classic mistakes droce must refuse.
 */
#include <errno.h>

#include "prot_test.h"

#define QPN 0x11

static void *const SENTINEL = (void *)(uintptr_t)0x5a5a;

/* Check, and on success do what the responder would: write/read. */
static enum prot_status
remote(struct fx *f, uint32_t key, uint32_t pd, enum prot_remote_op op,
       uint64_t va, uint64_t len)
{
	void *host = SENTINEL;
	enum prot_status st;

	st = prot_check_remote(f->t, key, pd, QPN, op, va, len, &host);
	if (st == PROT_OK) {
		assert_ptr_not_equal(host, SENTINEL);
		if (op == PROT_OP_WRITE)
			memset(host, 0xee, len);
	} else {
		/* Nothing handed out on failure. */
		assert_ptr_equal(host, SENTINEL);
	}
	return st;
}

static void
assert_untouched(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(p[i], v);
}

static uint32_t
reg(struct fx *f, uint32_t pd, void *addr, uint64_t len, unsigned int acc)
{
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, pd, addr, len, acc, &key), 0);
	return key;
}

/* ---- each remote operation, positive ------------------------------------- */

static void
test_remote_ops(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf, 1024, ALL_REMOTE |
			 PROT_ACC_FLUSH_GLOBAL | PROT_ACC_FLUSH_PERSISTENT);
	uint64_t va = va_of(f->buf);
	void *host;

	memset(f->buf, 0, sizeof(f->buf));
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va + 10, 100),
			 PROT_OK);
	assert_int_equal(f->buf[10], 0xee);
	assert_int_equal(f->buf[109], 0xee);
	assert_int_equal(f->buf[110], 0);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_READ, va, 1024), PROT_OK);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC, va + 16, 8),
			 PROT_OK);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC_WRITE, va + 1016,
				8), PROT_OK);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_FLUSH_GLOBAL, va, 1024),
			 PROT_OK);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_FLUSH_PERSISTENT, va, 1),
			 PROT_OK);
	/* Exact end of region and zero length at the end are inside. */
	assert_int_equal(prot_check_remote(f->t, k, f->pd, QPN, PROT_OP_READ,
					   va + 1023, 1, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 1023);
	assert_int_equal(prot_check_remote(f->t, k, f->pd, QPN, PROT_OP_READ,
					   va + 1024, 0, &host), PROT_OK);
}

/* ---- each failure, with its own counter ---------------------------------- */

static void
test_remote_bad_key_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf, 64, ALL_REMOTE);
	uint64_t va = va_of(f->buf);

	memset(f->buf, 0x11, sizeof(f->buf));
	assert_int_equal(remote(f, k ^ 0x01, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);			/* stale variant */
	assert_int_equal(remote(f, k & 0xff, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);			/* index 0 */
	assert_int_equal(remote(f, 0xffffff00u, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);			/* beyond table */
	assert_int_equal(remote(f, k + 0x100, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);			/* free index */
	assert_untouched(f->buf, sizeof(f->buf), 0x11);
}

static void
test_remote_pd_mismatch_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf, 64, ALL_REMOTE);

	memset(f->buf, 0x11, sizeof(f->buf));
	assert_int_equal(remote(f, k, f->pd2, PROT_OP_WRITE, va_of(f->buf), 8),
			 PROT_PD_MISMATCH);
	assert_untouched(f->buf, sizeof(f->buf), 0x11);
}

static void
test_remote_range_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf + 64, 64, ALL_REMOTE);
	uint64_t va = va_of(f->buf + 64);

	memset(f->buf, 0x11, sizeof(f->buf));
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va - 1, 8),
			 PROT_RANGE);			/* starts before */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va + 60, 8),
			 PROT_RANGE);			/* ends after */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va, 65),
			 PROT_RANGE);			/* too long */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va + 8,
				UINT64_MAX - 4), PROT_RANGE); /* va+len wraps */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, UINT64_MAX - 3, 8),
			 PROT_RANGE);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, 0, 8), PROT_RANGE);
	assert_untouched(f->buf, sizeof(f->buf), 0x11);
}

static void
test_remote_access_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t ro = reg(f, f->pd, f->buf, 64, PROT_ACC_REMOTE_READ);
	uint32_t wo = reg(f, f->pd, f->buf, 64, PROT_ACC_LOCAL_WRITE |
			  PROT_ACC_REMOTE_WRITE);
	uint32_t lo = reg(f, f->pd, f->buf, 64, PROT_ACC_LOCAL_WRITE);
	uint64_t va = va_of(f->buf);

	memset(f->buf, 0x11, sizeof(f->buf));
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_ATOMIC, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_ATOMIC_WRITE, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, wo, f->pd, PROT_OP_READ, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, wo, f->pd, PROT_OP_FLUSH_GLOBAL, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, lo, f->pd, PROT_OP_READ, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, lo, f->pd, PROT_OP_FLUSH_PERSISTENT, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_MAX, va, 8),
			 PROT_ACCESS);
	assert_untouched(f->buf, sizeof(f->buf), 0x11);
}

static void
test_remote_atomic_align(void **state)
{
	struct fx *f = *state;
	uint8_t *base = (uint8_t *)(((uintptr_t)f->buf + 7) & ~(uintptr_t)7);
	uint32_t k = reg(f, f->pd, base, 64, ALL_REMOTE);
	uint64_t va = va_of(base);

	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC, va + 8, 8),
			 PROT_OK);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC_WRITE, va + 56, 8),
			 PROT_OK);
}

static void
test_remote_atomic_align_bad_flow(void **state)
{
	struct fx *f = *state;
	uint8_t *base = (uint8_t *)(((uintptr_t)f->buf + 7) & ~(uintptr_t)7);
	uint32_t k = reg(f, f->pd, base, 64, ALL_REMOTE);
	uint64_t va = va_of(base);

	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC, va + 4, 8),
			 PROT_ALIGN);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_ATOMIC_WRITE, va + 1, 8),
			 PROT_ALIGN);
	/* A misaligned WRITE is fine. */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va + 1, 8),
			 PROT_OK);
}

/* When several checks fail, the first in the documented order wins. */
static void
test_remote_check_order_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t ro = reg(f, f->pd, f->buf, 64, PROT_ACC_REMOTE_READ);
	uint64_t va = va_of(f->buf);

	/* key > PD > range > access > alignment */
	assert_int_equal(remote(f, ro ^ 1, f->pd2, PROT_OP_ATOMIC, va + 99, 8),
			 PROT_BAD_KEY);
	assert_int_equal(remote(f, ro, f->pd2, PROT_OP_ATOMIC, va + 99, 8),
			 PROT_PD_MISMATCH);
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_ATOMIC, va + 99, 8),
			 PROT_RANGE);
	assert_int_equal(remote(f, ro, f->pd, PROT_OP_ATOMIC, va + 1, 8),
			 PROT_ACCESS);
}

static void
test_status_names(void **state)
{
	(void)state;
	assert_string_equal(prot_status_name(PROT_OK), "OK");
	assert_string_equal(prot_status_name(PROT_MW_WRONG_QP), "MW_WRONG_QP");
	assert_string_equal(prot_status_name(PROT_ALIGN), "ALIGN");
	assert_string_equal(prot_status_str(PROT_RANGE),
			    "outside the registered range");
	assert_int_equal(PROT_STATUS_MAX, 7);
}

static void
test_status_names_bad_flow(void **state)
{
	(void)state;
	assert_string_equal(prot_status_name(PROT_STATUS_MAX), "?");
	assert_string_equal(prot_status_str((enum prot_status)-1), "?");
}

/* ---- zero-based regions -------------------------------------------------- */

static void
test_zero_based(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf + 100, 200, ALL_REMOTE |
			 PROT_ACC_ZERO_BASED);
	void *host;

	assert_int_equal(prot_check_remote(f->t, k, f->pd, QPN, PROT_OP_READ,
					   0, 200, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 100);
	assert_int_equal(prot_check_remote(f->t, k, f->pd, QPN, PROT_OP_READ,
					   50, 10, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 150);
}

static void
test_zero_based_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf + 100, 200, ALL_REMOTE |
			 PROT_ACC_ZERO_BASED);

	/* The host address is not a valid va of a zero-based region. */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_READ,
				va_of(f->buf + 100), 8), PROT_RANGE);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_READ, 196, 8),
			 PROT_RANGE);
}

/* ---- local SGE checks ---------------------------------------------------- */

static void
test_local_sge(void **state)
{
	struct fx *f = *state;
	uint32_t rw = reg(f, f->pd, f->buf, 256, PROT_ACC_LOCAL_WRITE);
	uint32_t ro = reg(f, f->pd, f->buf, 256, 0);
	void *host;

	/* Receive buffer / READ target: LOCAL_WRITE. */
	assert_int_equal(prot_check_local(f->t, rw, f->pd, va_of(f->buf + 8),
					  64, true, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 8);
	/* Send source: any registered MR, local read always allowed. */
	assert_int_equal(prot_check_local(f->t, ro, f->pd, va_of(f->buf),
					  256, false, &host), PROT_OK);
}

static void
test_local_sge_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t ro = reg(f, f->pd, f->buf, 256, 0);
	uint32_t mwkey;
	void *host = SENTINEL;

	assert_int_equal(prot_check_local(f->t, ro, f->pd, va_of(f->buf), 8,
					  true, &host), PROT_ACCESS);
	assert_int_equal(prot_check_local(f->t, ro, f->pd2, va_of(f->buf), 8,
					  false, &host), PROT_PD_MISMATCH);
	assert_int_equal(prot_check_local(f->t, ro, f->pd, va_of(f->buf), 257,
					  false, &host), PROT_RANGE);
	assert_int_equal(prot_check_local(f->t, ro ^ 2, f->pd, va_of(f->buf),
					  8, false, &host), PROT_BAD_KEY);
	/* A window's rkey is never an lkey. */
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &mwkey), 0);
	{
		uint32_t mrk = reg(f, f->pd, f->buf, 256, PROT_ACC_MW_BIND |
				   PROT_ACC_LOCAL_WRITE);
		uint32_t rkey;

		assert_int_equal(prot_mw_bind_type1(f->t,
						    prot_key_index(mwkey), mrk,
						    va_of(f->buf), 256,
						    PROT_ACC_REMOTE_READ,
						    &rkey), 0);
		assert_int_equal(prot_check_local(f->t, rkey, f->pd,
						  va_of(f->buf), 8, false,
						  &host), PROT_BAD_KEY);
	}
	assert_ptr_equal(host, SENTINEL);
}

/* ---- the four classic mistakes ------------------------------------------- */

/* 1. Unregistered (malloc'd) memory is unreachable by any key. */
static void
test_classic_unregistered_memory_bad_flow(void **state)
{
	struct fx *f = *state;
	uint8_t *heap = malloc(128);
	uint32_t k = reg(f, f->pd, f->buf, sizeof(f->buf), ALL_REMOTE);
	uint32_t guess;

	assert_non_null(heap);
	memset(heap, 0x33, 128);
	/* A valid key of another region with the heap address. */
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va_of(heap), 8),
			 PROT_RANGE);
	/* Every key that could name an index of this table. */
	for (guess = 0; guess < (f->t->nentries << 8); guess++) {
		if (guess == k)
			continue;
		assert_int_not_equal(remote(f, guess, f->pd, PROT_OP_WRITE,
					    va_of(heap), 8), PROT_OK);
	}
	/* Local SGE on it too. */
	assert_int_equal(prot_check_local(f->t, k, f->pd, va_of(heap), 8,
					  true, &(void *){ NULL }),
			 PROT_RANGE);
	assert_untouched(heap, 128, 0x33);
	free(heap);
}

/* 2. A virtual address is not a capability: without a key nothing works. */
static void
test_classic_va_without_key_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k = reg(f, f->pd, f->buf, 64, ALL_REMOTE);
	uint64_t va = va_of(f->buf);
	uint32_t v;

	memset(f->buf, 0x44, sizeof(f->buf));
	assert_int_equal(remote(f, 0, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);
	/* The va (or its low bits) used as a key. */
	assert_int_equal(remote(f, (uint32_t)va, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_BAD_KEY);
	/* Right index, every other variant. */
	for (v = 0; v < 256; v++) {
		uint32_t g = prot_key_make(prot_key_index(k), (uint8_t)v);

		if (g != k)
			assert_int_equal(remote(f, g, f->pd, PROT_OP_WRITE,
						va, 8), PROT_BAD_KEY);
	}
	assert_untouched(f->buf, sizeof(f->buf), 0x44);
	assert_int_equal(remote(f, k, f->pd, PROT_OP_WRITE, va, 8), PROT_OK);
}

/* 3. An rkey is not a handle: a valid rkey of another PD fails. */
static void
test_classic_rkey_other_pd_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k_other = reg(f, f->pd2, f->buf, 64, ALL_REMOTE);
	uint32_t mwkey, mrk, rkey;

	memset(f->buf, 0x55, sizeof(f->buf));
	assert_int_equal(remote(f, k_other, f->pd, PROT_OP_WRITE,
				va_of(f->buf), 8), PROT_PD_MISMATCH);
	/* Same for a window of the other PD. */
	mrk = reg(f, f->pd2, f->buf, 64, PROT_ACC_LOCAL_WRITE |
		  PROT_ACC_MW_BIND);
	assert_int_equal(prot_mw_alloc(f->t, f->pd2, 1, &mwkey), 0);
	assert_int_equal(prot_mw_bind_type1(f->t, prot_key_index(mwkey), mrk,
					    va_of(f->buf), 64,
					    PROT_ACC_REMOTE_WRITE, &rkey), 0);
	assert_int_equal(remote(f, rkey, f->pd, PROT_OP_WRITE, va_of(f->buf),
				8), PROT_PD_MISMATCH);
	assert_untouched(f->buf, sizeof(f->buf), 0x55);
	assert_int_equal(remote(f, k_other, f->pd2, PROT_OP_WRITE,
				va_of(f->buf), 8), PROT_OK);
}

/* 4. Known address, wrong or under-privileged rkey. */
static void
test_classic_wrong_or_weak_rkey_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t target = reg(f, f->pd, f->buf, 64, PROT_ACC_REMOTE_READ);
	uint32_t elsewhere = reg(f, f->pd, f->buf + 1024, 64, ALL_REMOTE);
	uint64_t va = va_of(f->buf);

	memset(f->buf, 0x66, 64);
	/* Under-privileged: read-only key used for writes and atomics. */
	assert_int_equal(remote(f, target, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_ACCESS);
	assert_int_equal(remote(f, target, f->pd, PROT_OP_ATOMIC, va, 8),
			 PROT_ACCESS);
	/* Wrong: a fully privileged key of a different region. */
	assert_int_equal(remote(f, elsewhere, f->pd, PROT_OP_WRITE, va, 8),
			 PROT_RANGE);
	/* Stale: the target's key after re-registration (a new translation:
	 * re-registering the PD or rights only keeps the key). */
	{
		uint32_t k = target;

		assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_TRANSLATION |
					       PROT_REREG_ACCESS, 0, f->buf, 64,
					       ALL_REMOTE), 0);
		assert_int_equal(remote(f, target, f->pd, PROT_OP_WRITE, va,
					8), PROT_BAD_KEY);
	}
	assert_untouched(f->buf, 64, 0x66);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_remote_ops),
		T(test_remote_bad_key_bad_flow),
		T(test_remote_pd_mismatch_bad_flow),
		T(test_remote_range_bad_flow),
		T(test_remote_access_bad_flow),
		T(test_remote_atomic_align),
		T(test_remote_atomic_align_bad_flow),
		T(test_remote_check_order_bad_flow),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_status_names_bad_flow),
		T(test_zero_based),
		T(test_zero_based_bad_flow),
		T(test_local_sge),
		T(test_local_sge_bad_flow),
		T(test_classic_unregistered_memory_bad_flow),
		T(test_classic_va_without_key_bad_flow),
		T(test_classic_rkey_other_pd_bad_flow),
		T(test_classic_wrong_or_weak_rkey_bad_flow),
	};
#undef T

	return cmocka_run_group_tests_name("protection_check", tests, NULL,
					   NULL);
}
