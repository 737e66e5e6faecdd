/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_lease.c - leases on MRs and MWs (prot_lease.c): deadlines in
 * the heap, renew, expiry revoking the key (and the windows of a leased
 * region), the expired state until dereg / dealloc, with an explicit clock.
 */
#include <errno.h>

#include "prot_test.h"

#define MS UINT64_C(1000000)
#define QPN 0x31
#define MR_ACC (ALL_REMOTE | PROT_ACC_MW_BIND)

struct expired {
	int n;
	bool mw[8];
	uint64_t cookie[8];
};

static void
on_expired(void *arg, bool mw, uint64_t cookie)
{
	struct expired *x = arg;

	assert_true(x->n < 8);
	x->mw[x->n] = mw;
	x->cookie[x->n] = cookie;
	x->n++;
}

static enum prot_status
write_check(struct fx *f, uint32_t key, uint64_t va)
{
	void *host = NULL;

	return prot_check_remote(f->t, key, f->pd, QPN, PROT_OP_WRITE, va, 8, &host);
}

static uint32_t
reg(struct fx *f)
{
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 1024, MR_ACC, &key), 0);
	return key;
}

static void
test_lease_expires_at_deadline(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	struct prot_lease_info info;
	uint32_t key = reg(f);

	assert_int_equal(prot_lease_next(f->t), UINT64_MAX);
	assert_int_equal(prot_lease_set(f->t, false, key, 50 * MS, 0xabc, 1000), 0);
	assert_int_equal(prot_lease_next(f->t), 1000 + 50 * MS);
	assert_int_equal(prot_lease_query(f->t, false, key, 1000 + 20 * MS, &info), 0);
	assert_int_equal(info.state, PROT_LEASE_ACTIVE);
	assert_int_equal(info.period, 50 * MS);
	assert_int_equal(info.remaining, 30 * MS);
	/* one ns before the deadline: nothing */
	assert_int_equal(prot_lease_expire(f->t, 1000 + 50 * MS - 1, on_expired, &x), 0);
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_OK);
	assert_int_equal(prot_lease_expire(f->t, 1000 + 50 * MS, on_expired, &x), 1);
	assert_int_equal(x.n, 1);
	assert_false(x.mw[0]);
	assert_int_equal(x.cookie[0], 0xabc);
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_BAD_KEY);
	assert_int_equal(prot_lease_next(f->t), UINT64_MAX);
	/* expired: stays so, renew and set refuse, the handle still names it */
	assert_int_equal(prot_lease_query(f->t, false, key, 1000 + 60 * MS, &info), 0);
	assert_int_equal(info.state, PROT_LEASE_EXPIRED);
	assert_int_equal(info.remaining, 0);
	assert_int_equal(prot_lease_renew(f->t, false, key, 1000 + 60 * MS), -ETIME);
	assert_int_equal(prot_lease_set(f->t, false, key, MS, 0, 0), -ETIME);
	assert_int_equal(prot_lease_expire(f->t, UINT64_MAX, on_expired, &x), 0);
	assert_int_equal(x.n, 1);
	assert_int_equal(prot_mr_count(f->t), 1);
	/* dereg of the expired region succeeds, once */
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_mr_count(f->t), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), -EINVAL);
	assert_int_equal(prot_lease_query(f->t, false, key, 0, &info), -EINVAL);
}

static void
test_lease_renew_and_order(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	uint32_t k1 = reg(f), k2 = reg(f), k3 = reg(f);

	assert_int_equal(prot_lease_renew(f->t, false, k1, 0), -ENOENT);
	assert_int_equal(prot_lease_set(f->t, false, k1, 30 * MS, 1, 0), 0);
	assert_int_equal(prot_lease_set(f->t, false, k2, 17 * MS, 2, 0), 0);
	assert_int_equal(prot_lease_set(f->t, false, k3, 20 * MS, 3, 0), 0);
	assert_int_equal(prot_lease_next(f->t), 17 * MS);
	/* renew k2 (before its deadline) past the others: k3 is next, then
	 * k1, then k2 */
	assert_int_equal(prot_lease_renew(f->t, false, k2, 16 * MS), 0);
	assert_int_equal(prot_lease_next(f->t), 20 * MS);
	assert_int_equal(prot_lease_expire(f->t, 30 * MS, on_expired, &x), 2);
	assert_int_equal(x.cookie[0], 3);
	assert_int_equal(x.cookie[1], 1);
	assert_int_equal(prot_lease_next(f->t), 33 * MS);
	assert_int_equal(write_check(f, k2, va_of(f->buf)), PROT_OK);
	/* a lease removed (period 0) never expires; dereg of a leased MR
	 * takes its lease away */
	assert_int_equal(prot_lease_set(f->t, false, k2, 0, 2, 30 * MS), 0);
	assert_int_equal(prot_lease_next(f->t), UINT64_MAX);
	assert_int_equal(prot_lease_set(f->t, false, k2, MS, 2, 30 * MS), 0);
	assert_int_equal(prot_mr_dereg(f->t, k2), 0);
	assert_int_equal(prot_lease_next(f->t), UINT64_MAX);
	assert_int_equal(prot_lease_expire(f->t, UINT64_MAX, on_expired, &x), 0);
	assert_int_equal(x.n, 2);
	assert_int_equal(prot_mr_dereg(f->t, k1), 0);
	assert_int_equal(prot_mr_dereg(f->t, k3), 0);
}

/*
 * Past its deadline a lease is over before the engine expires it (an owner
 * whose engine did not run since: run-to-completion, a stopped process):
 * renew, set and unlease fail ETIME, query says expired, and the expiry
 * that follows revokes the key and calls back once.  Before: the renewal
 * succeeded and the WRITEs went on landing.
 */
static void
test_lease_due_before_expiry(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	struct prot_lease_info info;
	uint32_t key = reg(f), k1, w1;

	assert_int_equal(prot_lease_set(f->t, false, key, 200 * MS, 5, 0), 0);
	/* one ns before the deadline it is still renewable */
	assert_int_equal(prot_lease_renew(f->t, false, key, 200 * MS - 1), 0);
	assert_int_equal(prot_lease_next(f->t), 400 * MS - 1);
	/* at the deadline it is over */
	assert_int_equal(prot_lease_query(f->t, false, key, 400 * MS - 1, &info), 0);
	assert_int_equal(info.state, PROT_LEASE_EXPIRED);
	assert_int_equal(info.remaining, 0);
	assert_int_equal(info.period, 200 * MS);
	assert_int_equal(prot_lease_renew(f->t, false, key, 400 * MS - 1), -ETIME);
	/* 200 ms late, no expiry run in between */
	assert_int_equal(prot_lease_renew(f->t, false, key, 600 * MS), -ETIME);
	assert_int_equal(prot_lease_set(f->t, false, key, 200 * MS, 5, 600 * MS), -ETIME);
	assert_int_equal(prot_lease_set(f->t, false, key, 0, 5, 600 * MS), -ETIME);
	/* nothing moved the deadline: the expiry still comes, once */
	assert_int_equal(prot_lease_next(f->t), 400 * MS - 1);
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_OK);
	assert_int_equal(prot_lease_expire(f->t, 600 * MS, on_expired, &x), 1);
	assert_int_equal(x.n, 1);
	assert_int_equal(x.cookie[0], 5);
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_BAD_KEY);
	assert_int_equal(prot_lease_renew(f->t, false, key, 600 * MS), -ETIME);

	/* a window's lease alike */
	key = reg(f);
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &k1), 0);
	w1 = prot_key_index(k1);
	assert_int_equal(prot_lease_set(f->t, true, w1, 10 * MS, 6, 0), 0);
	assert_int_equal(prot_lease_renew(f->t, true, w1, 10 * MS), -ETIME);
	assert_int_equal(prot_lease_query(f->t, true, w1, 11 * MS, &info), 0);
	assert_int_equal(info.state, PROT_LEASE_EXPIRED);
	assert_int_equal(prot_lease_expire(f->t, 11 * MS, on_expired, &x), 1);
	assert_true(x.mw[1]);
	assert_int_equal(prot_mw_dealloc(f->t, w1), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

/* A leased region's windows die with it: type 1 unbound, type 2 free. */
static void
test_lease_mr_with_windows(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	uint32_t key = reg(f), k1, k2, r1, r2 = 0;
	uint32_t w1, w2;

	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &k1), 0);
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 2, &k2), 0);
	w1 = prot_key_index(k1);
	w2 = prot_key_index(k2);
	assert_int_equal(prot_mw_bind_type1(f->t, w1, key, va_of(f->buf), 256,
					    PROT_ACC_REMOTE_WRITE, &r1), 0);
	r2 = prot_key_make(w2, (uint8_t)(prot_key_variant(k2) + 1));
	assert_int_equal(prot_mw_bind_type2(f->t, w2, r2, key, va_of(f->buf) + 256,
					    256, PROT_ACC_REMOTE_WRITE, f->pd, QPN), 0);
	assert_int_equal(write_check(f, r1, va_of(f->buf)), PROT_OK);
	assert_int_equal(write_check(f, r2, va_of(f->buf) + 256), PROT_OK);
	/* with windows bound, dereg is refused; expiry is not */
	assert_int_equal(prot_mr_dereg(f->t, key), -EBUSY);
	assert_int_equal(prot_lease_set(f->t, false, key, MS, 7, 0), 0);
	assert_int_equal(prot_lease_expire(f->t, MS, on_expired, &x), 1);
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_BAD_KEY);
	assert_int_equal(write_check(f, r1, va_of(f->buf)), PROT_BAD_KEY);
	assert_int_equal(write_check(f, r2, va_of(f->buf) + 256), PROT_BAD_KEY);
	assert_int_equal(f->t->entries[w1].bound, 0);
	assert_int_equal(f->t->entries[w2].bound, 0);
	/* the windows are unbound, not expired: they bind again elsewhere */
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	key = reg(f);
	assert_int_equal(prot_mw_bind_type1(f->t, w1, key, va_of(f->buf), 64,
					    PROT_ACC_REMOTE_WRITE, &r1), 0);
	assert_int_equal(write_check(f, r1, va_of(f->buf)), PROT_OK);
	assert_int_equal(prot_mw_dealloc(f->t, w1), 0);
	assert_int_equal(prot_mw_dealloc(f->t, w2), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

/* A window's own lease: unbound at expiry, never bound again, dealloc ok. */
static void
test_lease_mw(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	struct prot_lease_info info;
	uint32_t key = reg(f), k1, r1, w1;

	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &k1), 0);
	w1 = prot_key_index(k1);
	assert_int_equal(prot_mw_bind_type1(f->t, w1, key, va_of(f->buf), 256,
					    PROT_ACC_REMOTE_WRITE, &r1), 0);
	assert_int_equal(prot_lease_set(f->t, true, w1, 5 * MS, 9, 0), 0);
	assert_int_equal(prot_lease_renew(f->t, true, w1, 4 * MS), 0);
	assert_int_equal(prot_lease_expire(f->t, 8 * MS, on_expired, &x), 0);
	assert_int_equal(write_check(f, r1, va_of(f->buf)), PROT_OK);
	assert_int_equal(prot_lease_expire(f->t, 9 * MS, on_expired, &x), 1);
	assert_true(x.mw[0]);
	assert_int_equal(x.cookie[0], 9);
	assert_int_equal(write_check(f, r1, va_of(f->buf)), PROT_BAD_KEY);
	/* the region is untouched; its window count went back to 0 */
	assert_int_equal(write_check(f, key, va_of(f->buf)), PROT_OK);
	assert_int_equal(prot_lease_query(f->t, true, w1, 9 * MS, &info), 0);
	assert_int_equal(info.state, PROT_LEASE_EXPIRED);
	assert_int_equal(prot_mw_bind_type1(f->t, w1, key, va_of(f->buf), 256,
					    PROT_ACC_REMOTE_WRITE, &r1), -EINVAL);
	assert_int_equal(prot_mw_dealloc(f->t, w1), 0);
	assert_int_equal(prot_mw_count(f->t), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

/* The heap keeps order over many leases (ties, removal from the middle). */
static void
test_lease_many(void **state)
{
	struct fx *f = *state;
	struct expired x = { 0 };
	uint32_t keys[40];
	uint64_t last = 0;

	for (int i = 0; i < 40; i++) {
		keys[i] = reg(f);
		assert_int_equal(prot_lease_set(f->t, false, keys[i],
						(uint64_t)((i * 17) % 40 + 1) * MS,
						(uint64_t)i, 0), 0);
	}
	for (int i = 0; i < 40; i += 3)
		assert_int_equal(prot_lease_set(f->t, false, keys[i], 0, 0, 0), 0);
	for (uint64_t t = 1; t <= 41; t++) {
		uint64_t next = prot_lease_next(f->t);

		assert_true(next == UINT64_MAX || next >= last);
		if (next != UINT64_MAX)
			last = next;
		x.n = 0;
		(void)prot_lease_expire(f->t, t * MS, on_expired, &x);
		for (int k = 0; k < x.n; k++) {
			int i = (int)x.cookie[k];

			assert_int_not_equal(i % 3, 0);
			assert_int_equal((uint64_t)((i * 17) % 40 + 1), t);
		}
	}
	assert_int_equal(prot_lease_next(f->t), UINT64_MAX);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(write_check(f, keys[i], va_of(f->buf)),
				 i % 3 == 0 ? PROT_OK : PROT_BAD_KEY);
		assert_int_equal(prot_mr_dereg(f->t, keys[i]), 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lease_expires_at_deadline,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_renew_and_order,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_due_before_expiry,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_mr_with_windows,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_mw, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_many, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
