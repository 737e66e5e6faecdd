/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_mw.c - memory windows: type 1 (bind verb), type 2 (BIND_MW
 * work request, LOCAL_INV, SEND_WITH_INV), and their effect on regions.
 */
#include <errno.h>

#include "prot_test.h"

#define QPN 0x21
#define QPN_OTHER 0x22

#define MR_ACC (ALL_REMOTE | PROT_ACC_MW_BIND)

static uint32_t
key_inc(uint32_t key)
{
	return prot_key_make(prot_key_index(key),
			     (uint8_t)(prot_key_variant(key) + 1));
}

static enum prot_status
acc(struct fx *f, uint32_t key, uint32_t qpn, enum prot_remote_op op,
    uint64_t va, uint64_t len)
{
	void *host = NULL;

	return prot_check_remote(f->t, key, f->pd, qpn, op, va, len, &host);
}

static uint32_t
mr(struct fx *f, uint32_t pd, unsigned int access)
{
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, pd, f->buf, 1024, access, &key), 0);
	return key;
}

static uint32_t
mw(struct fx *f, uint32_t pd, int type)
{
	uint32_t key;

	assert_int_equal(prot_mw_alloc(f->t, pd, type, &key), 0);
	return prot_key_index(key);
}

/* ---- allocation ---------------------------------------------------------- */

static void
test_mw_alloc(void **state)
{
	struct fx *f = *state;
	uint32_t k1, k2, key;

	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &k1), 0);
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 2, &k2), 0);
	assert_int_equal(prot_mw_count(f->t), 2);
	/* Unbound windows grant nothing. */
	assert_int_equal(acc(f, k1, QPN, PROT_OP_READ, va_of(f->buf), 1),
			 PROT_BAD_KEY);
	assert_int_equal(acc(f, k2, QPN, PROT_OP_READ, va_of(f->buf), 1),
			 PROT_BAD_KEY);
	assert_int_equal(prot_entry_key(f->t, prot_key_index(k1), &key), 0);
	assert_int_equal(key, k1);
	assert_int_equal(prot_mw_dealloc(f->t, prot_key_index(k1)), 0);
	assert_int_equal(prot_mw_dealloc(f->t, prot_key_index(k2)), 0);
	assert_int_equal(prot_mw_count(f->t), 0);
}

static void
test_mw_alloc_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key, mrk;
	int i;

	assert_int_equal(prot_mw_alloc(f->t, f->pd, 0, &key), -EINVAL);
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 3, &key), -EINVAL);
	assert_int_equal(prot_mw_alloc(f->t, 99, 1, &key), -EINVAL);
	for (i = 0; i < 64; i++)
		assert_int_equal(prot_mw_alloc(f->t, f->pd, 2, &key), 0);
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 2, &key), -ENOMEM);
	/* MR and MW limits are separate. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0, &mrk), 0);
	/* Dealloc of an MR index or a free index is refused. */
	assert_int_equal(prot_mw_dealloc(f->t, prot_key_index(mrk)), -EINVAL);
	assert_int_equal(prot_mw_dealloc(f->t, 0), -EINVAL);
}

/* ---- type 1 -------------------------------------------------------------- */

static void
test_mw1_bind(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 1);
	uint64_t va = va_of(f->buf);
	uint32_t r1, r2;
	void *host;

	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va + 256, 256,
					    PROT_ACC_REMOTE_WRITE, &r1), 0);
	assert_int_equal(prot_key_index(r1), w);
	assert_int_equal(prot_check_remote(f->t, r1, f->pd, QPN, PROT_OP_WRITE,
					   va + 300, 8, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 300);
	/* Type 1 is not tied to a QP. */
	assert_int_equal(acc(f, r1, QPN_OTHER, PROT_OP_WRITE, va + 256, 256),
			 PROT_OK);
	/* Rebind: new rkey each time, old one dead. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va, 64,
					    PROT_ACC_REMOTE_READ, &r2), 0);
	assert_int_not_equal(r1, r2);
	assert_int_equal(acc(f, r2, QPN, PROT_OP_READ, va, 64), PROT_OK);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_WRITE, va + 300, 8),
			 PROT_BAD_KEY);
}

static void
test_mw1_window_limits_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 1);
	uint64_t va = va_of(f->buf);
	uint32_t r;

	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va + 256, 256,
					    PROT_ACC_REMOTE_READ, &r), 0);
	/* Inside the MR, outside the window. */
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va + 200, 8),
			 PROT_RANGE);
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va + 508, 8),
			 PROT_RANGE);
	/* The MR allows writes, the window does not. */
	assert_int_equal(acc(f, r, QPN, PROT_OP_WRITE, va + 256, 8),
			 PROT_ACCESS);
	assert_int_equal(acc(f, r, QPN, PROT_OP_ATOMIC, va + 256, 8),
			 PROT_ACCESS);
}

static void
test_mw1_bind_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t nobind = mr(f, f->pd, ALL_REMOTE);
	uint32_t nolw = mr(f, f->pd, PROT_ACC_MW_BIND | PROT_ACC_REMOTE_READ);
	uint32_t zb = mr(f, f->pd, MR_ACC | PROT_ACC_ZERO_BASED);
	uint32_t other = mr(f, f->pd2, MR_ACC);
	uint32_t good = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 1);
	uint32_t w2 = mw(f, f->pd, 2);
	uint64_t va = va_of(f->buf);
	uint32_t r = 0;

	/* C10-73: MR without MW_BIND. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, nobind, va, 8,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	/* C10-74: writable/atomic window on an MR without LOCAL_WRITE. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, nolw, va, 8,
					    PROT_ACC_REMOTE_WRITE, &r),
			 -EINVAL);
	assert_int_equal(prot_mw_bind_type1(f->t, w, nolw, va, 8,
					    PROT_ACC_REMOTE_ATOMIC, &r),
			 -EINVAL);
	/* C10-75: outside the MR, including wrap-around. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, good, va + 1000, 100,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	assert_int_equal(prot_mw_bind_type1(f->t, w, good, va - 1, 8,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	assert_int_equal(prot_mw_bind_type1(f->t, w, good, va + 8, UINT64_MAX,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	/* o10-36.2.2: zero based; and windows on zero-based MRs. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, good, va, 8,
					    PROT_ACC_REMOTE_READ |
					    PROT_ACC_ZERO_BASED, &r), -EINVAL);
	assert_int_equal(prot_mw_bind_type1(f->t, w, zb, 0, 8,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	/* Rights a window cannot carry. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, good, va, 8,
					    PROT_ACC_MW_BIND, &r), -EINVAL);
	/* MR of another PD: EPERM. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, other, va, 8,
					    PROT_ACC_REMOTE_READ, &r), -EPERM);
	/* Stale MR key; type-2 window through the type-1 verb. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, good ^ 1, va, 8,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	assert_int_equal(prot_mw_bind_type1(f->t, w2, good, va, 8,
					    PROT_ACC_REMOTE_READ, &r), -EINVAL);
	assert_int_equal(r, 0);
	assert_int_equal(f->t->entries[prot_key_index(good)].mw_count, 0);
}

static void
test_mw1_unbind(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 1);
	uint32_t r1, r2;

	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va_of(f->buf), 64,
					    PROT_ACC_REMOTE_READ, &r1), 0);
	assert_int_equal(prot_mr_dereg(f->t, mrk), -EBUSY);
	/* Length 0 unbinds; MR key is not even looked at. */
	assert_int_equal(prot_mw_bind_type1(f->t, w, 0, 0, 0, 0, &r2), 0);
	assert_int_not_equal(r1, r2);
	assert_int_equal(prot_mr_dereg(f->t, mrk), 0);
}

static void
test_mw1_unbind_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 1);
	uint32_t r1, r2;

	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va_of(f->buf), 64,
					    PROT_ACC_REMOTE_READ, &r1), 0);
	assert_int_equal(prot_mw_bind_type1(f->t, w, 0, 0, 0, 0, &r2), 0);
	/* Neither the old rkey nor the unbound one grants anything. */
	assert_int_equal(acc(f, r1, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
	assert_int_equal(acc(f, r2, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
	/* Type-1 windows are not invalidated by LOCAL_INV
	 * (o10-37.2.26). */
	assert_int_equal(prot_mw_bind_type1(f->t, w, mrk, va_of(f->buf), 64,
					    PROT_ACC_REMOTE_READ, &r1), 0);
	assert_int_equal(prot_local_invalidate(f->t, r1, f->pd), -EINVAL);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
}

/* ---- type 2 -------------------------------------------------------------- */

static uint32_t
bind2(struct fx *f, uint32_t w, uint32_t mrk, uint64_t va, uint64_t len,
      unsigned int access, uint32_t qpn)
{
	uint32_t cur, rkey;

	assert_int_equal(prot_entry_key(f->t, w, &cur), 0);
	rkey = prot_key_make(w, (uint8_t)(prot_key_variant(cur) + 1));
	assert_int_equal(prot_mw_bind_type2(f->t, w, rkey, mrk, va, len,
					    access, f->pd, qpn), 0);
	return rkey;
}

/* LOCAL_WRITE in a bind's rights is ignored (rxe, mlx5): the window
 * grants remote write only, on both window types. */
static void
test_mw_bind_local_write(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w1 = mw(f, f->pd, 1);
	uint32_t w2 = mw(f, f->pd, 2);
	uint64_t va = va_of(f->buf);
	uint32_t r1 = 0;
	uint32_t k2;

	assert_int_equal(prot_mw_bind_type1(f->t, w1, mrk, va, 64,
					    PROT_ACC_LOCAL_WRITE | PROT_ACC_REMOTE_WRITE,
					    &r1), 0);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_WRITE, va, 64), PROT_OK);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_READ, va, 64), PROT_ACCESS);
	assert_int_equal(f->t->entries[w1].access, PROT_ACC_REMOTE_WRITE);
	k2 = bind2(f, w2, mrk, va, 64, PROT_ACC_LOCAL_WRITE | PROT_ACC_REMOTE_WRITE, QPN);
	assert_int_equal(acc(f, k2, QPN, PROT_OP_WRITE, va + 8, 8), PROT_OK);
	assert_int_equal(f->t->entries[w2].access, PROT_ACC_REMOTE_WRITE);
}

static void
test_mw2_bind(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_WRITE, QPN);
	void *host;

	assert_int_equal(prot_check_remote(f->t, r, f->pd, QPN, PROT_OP_WRITE,
					   va_of(f->buf + 64), 64, &host),
			 PROT_OK);
	assert_ptr_equal(host, f->buf + 64);
	assert_int_equal(f->t->entries[prot_key_index(mrk)].mw_count, 1);
}

static void
test_mw2_wrong_qp_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_WRITE, QPN);

	memset(f->buf, 0x77, 128);
	assert_int_equal(acc(f, r, QPN_OTHER, PROT_OP_WRITE, va_of(f->buf), 8),
			 PROT_MW_WRONG_QP);
	/* PD is checked before the QP. */
	{
		void *host = NULL;

		assert_int_equal(prot_check_remote(f->t, r, f->pd2, QPN_OTHER,
						   PROT_OP_WRITE,
						   va_of(f->buf), 8, &host),
				 PROT_PD_MISMATCH);
	}
	assert_int_equal(f->buf[0], 0x77);
}

static void
test_mw2_bind_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t nobind = mr(f, f->pd, ALL_REMOTE);
	uint32_t other_mr = mr(f, f->pd2, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t w1 = mw(f, f->pd, 1);
	uint32_t cur, nk;
	uint64_t va = va_of(f->buf);

	assert_int_equal(prot_entry_key(f->t, w, &cur), 0);
	nk = prot_key_make(w, (uint8_t)(prot_key_variant(cur) + 1));
	/* Same variant as before: the key must change. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, cur, mrk, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EINVAL);
	/* rkey of another index. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk + 0x100, mrk, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EINVAL);
	/* C10-72: QP in another PD. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, mrk, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd2, QPN),
			 -EPERM);
	/* MR in another PD. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, other_mr, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EPERM);
	/* o10-37.2.40: no zero-length bind. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, mrk, va, 0,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EINVAL);
	/* C10-73 and C10-75 as for type 1. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, nobind, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EINVAL);
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, mrk, va + 1020, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 -EINVAL);
	/* A type-1 window through the work request. */
	assert_int_equal(prot_entry_key(f->t, w1, &cur), 0);
	assert_int_equal(prot_mw_bind_type2(f->t, w1, key_inc(cur), mrk, va,
					    8, PROT_ACC_REMOTE_READ, f->pd,
					    QPN), -EINVAL);
	/* o10-37.2.30: a bound type-2 window cannot be bound again. */
	assert_int_equal(prot_mw_bind_type2(f->t, w, nk, mrk, va, 8,
					    PROT_ACC_REMOTE_READ, f->pd, QPN),
			 0);
	assert_int_equal(prot_mw_bind_type2(f->t, w, key_inc(nk), mrk, va,
					    8, PROT_ACC_REMOTE_READ, f->pd,
					    QPN), -EINVAL);
	assert_int_equal(acc(f, nk, QPN, PROT_OP_READ, va, 8), PROT_OK);
	assert_int_equal(f->t->entries[prot_key_index(mrk)].mw_count, 1);
}

static void
test_mw2_local_invalidate(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_READ, QPN);
	uint32_t r2;

	assert_int_equal(prot_local_invalidate(f->t, r, f->pd), 0);
	/* Rejected at once. */
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
	assert_int_equal(f->t->entries[prot_key_index(mrk)].mw_count, 0);
	/* Free again: rebind with the next key. */
	r2 = bind2(f, w, mrk, va_of(f->buf), 64, PROT_ACC_REMOTE_READ, QPN);
	assert_int_not_equal(r, r2);
	assert_int_equal(acc(f, r2, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
}

static void
test_mw2_local_invalidate_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_READ, QPN);

	assert_int_equal(prot_local_invalidate(f->t, r ^ 1, f->pd), -EINVAL);
	assert_int_equal(prot_local_invalidate(f->t, r, f->pd2), -EPERM);
	assert_int_equal(prot_local_invalidate(f->t, mrk, f->pd), -EINVAL);
	assert_int_equal(prot_local_invalidate(f->t, 0, f->pd), -EINVAL);
	/* Still valid after all the refused attempts. */
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
	assert_int_equal(prot_local_invalidate(f->t, r, f->pd), 0);
	assert_int_equal(prot_local_invalidate(f->t, r, f->pd), -EINVAL);
}

static void
test_mw2_remote_invalidate(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_READ, QPN);

	assert_int_equal(prot_remote_invalidate(f->t, r, f->pd, QPN), 0);
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
}

/*
 * Destroying a QP invalidates the type-2 windows bound to it, and only
 * those (IBTA 10.6.7.2): their keys fail at once, they are free to bind
 * again, a type-1 window and a window of another QP are untouched.
 */
static void
test_mw2_invalidate_qp(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w1 = mw(f, f->pd, 2), w2 = mw(f, f->pd, 2);
	uint32_t w3 = mw(f, f->pd, 2), t1 = mw(f, f->pd, 1);
	uint32_t r1 = bind2(f, w1, mrk, va_of(f->buf), 128, PROT_ACC_REMOTE_WRITE, QPN);
	uint32_t r2 = bind2(f, w2, mrk, va_of(f->buf), 64, PROT_ACC_REMOTE_READ, QPN);
	uint32_t r3 = bind2(f, w3, mrk, va_of(f->buf), 64, PROT_ACC_REMOTE_READ,
			    QPN_OTHER);
	uint32_t rt;

	assert_int_equal(prot_mw_bind_type1(f->t, t1, mrk, va_of(f->buf), 64,
					    PROT_ACC_REMOTE_READ, &rt), 0);
	assert_int_equal(prot_mw_invalidate_qp(f->t, QPN), 2);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_WRITE, va_of(f->buf), 8), PROT_BAD_KEY);
	assert_int_equal(acc(f, r2, QPN, PROT_OP_READ, va_of(f->buf), 8), PROT_BAD_KEY);
	assert_int_equal(acc(f, r3, QPN_OTHER, PROT_OP_READ, va_of(f->buf), 8), PROT_OK);
	assert_int_equal(acc(f, rt, QPN, PROT_OP_READ, va_of(f->buf), 8), PROT_OK);
	assert_int_equal(f->t->entries[prot_key_index(mrk)].mw_count, 2);
	/* nothing left on QPN; w1 binds again (o10-37.2.30: it is free) */
	assert_int_equal(prot_mw_invalidate_qp(f->t, QPN), 0);
	r1 = bind2(f, w1, mrk, va_of(f->buf), 128, PROT_ACC_REMOTE_WRITE, QPN);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_WRITE, va_of(f->buf), 8), PROT_OK);
	assert_int_equal(prot_mw_invalidate_qp(NULL, QPN), -EINVAL);
}

static void
test_mw2_remote_invalidate_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w = mw(f, f->pd, 2);
	uint32_t r = bind2(f, w, mrk, va_of(f->buf), 128,
			   PROT_ACC_REMOTE_READ, QPN);

	/* SEND_WITH_INV on a QP the window is not bound to. */
	assert_int_equal(prot_remote_invalidate(f->t, r, f->pd, QPN_OTHER),
			 -EPERM);
	assert_int_equal(prot_remote_invalidate(f->t, r, f->pd2, QPN), -EPERM);
	assert_int_equal(prot_remote_invalidate(f->t, key_inc(r), f->pd,
						QPN), -EINVAL);
	assert_int_equal(acc(f, r, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
}

/* ---- several windows, and the region underneath -------------------------- */

static void
test_mw_several_on_one_mr(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t wa = mw(f, f->pd, 1);
	uint32_t wb = mw(f, f->pd, 2);
	uint32_t wc = mw(f, f->pd, 2);
	uint64_t va = va_of(f->buf);
	uint32_t ra, rb, rc;

	assert_int_equal(prot_mw_bind_type1(f->t, wa, mrk, va, 512,
					    PROT_ACC_REMOTE_READ, &ra), 0);
	rb = bind2(f, wb, mrk, va + 256, 512, PROT_ACC_REMOTE_WRITE, QPN);
	rc = bind2(f, wc, mrk, va, 1024, PROT_ACC_REMOTE_ATOMIC, QPN_OTHER);
	assert_int_equal(f->t->entries[prot_key_index(mrk)].mw_count, 3);

	assert_int_equal(acc(f, ra, QPN, PROT_OP_READ, va + 300, 8), PROT_OK);
	assert_int_equal(acc(f, rb, QPN, PROT_OP_WRITE, va + 300, 8), PROT_OK);
	assert_int_equal(acc(f, rc, QPN_OTHER, PROT_OP_ATOMIC, va + 304, 8),
			 PROT_OK);
	/* Invalidating one leaves the others alone. */
	assert_int_equal(prot_local_invalidate(f->t, rb, f->pd), 0);
	assert_int_equal(acc(f, ra, QPN, PROT_OP_READ, va + 300, 8), PROT_OK);
	assert_int_equal(acc(f, rc, QPN_OTHER, PROT_OP_ATOMIC, va + 304, 8),
			 PROT_OK);
}

static void
test_mw_several_on_one_mr_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t wa = mw(f, f->pd, 1);
	uint32_t wb = mw(f, f->pd, 2);
	uint64_t va = va_of(f->buf);
	uint32_t ra, rb;

	assert_int_equal(prot_mw_bind_type1(f->t, wa, mrk, va, 512,
					    PROT_ACC_REMOTE_READ, &ra), 0);
	rb = bind2(f, wb, mrk, va + 256, 512, PROT_ACC_REMOTE_WRITE, QPN);
	/* Rights do not leak between windows of one MR. */
	assert_int_equal(acc(f, ra, QPN, PROT_OP_WRITE, va + 300, 8),
			 PROT_ACCESS);
	assert_int_equal(acc(f, rb, QPN, PROT_OP_READ, va + 300, 8),
			 PROT_ACCESS);
	assert_int_equal(acc(f, rb, QPN, PROT_OP_WRITE, va + 100, 8),
			 PROT_RANGE);
	assert_int_equal(prot_local_invalidate(f->t, rb, f->pd), 0);
	assert_int_equal(acc(f, rb, QPN, PROT_OP_WRITE, va + 300, 8),
			 PROT_BAD_KEY);
}

static void
test_mr_with_windows(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w1 = mw(f, f->pd, 1);
	uint32_t w2 = mw(f, f->pd, 2);
	uint32_t r1, r2;

	assert_int_equal(prot_mw_bind_type1(f->t, w1, mrk, va_of(f->buf), 8,
					    PROT_ACC_REMOTE_READ, &r1), 0);
	r2 = bind2(f, w2, mrk, va_of(f->buf), 8, PROT_ACC_REMOTE_READ, QPN);
	/* Deallocating a bound window revokes it and releases the MR. */
	assert_int_equal(prot_mw_dealloc(f->t, w1), 0);
	assert_int_equal(acc(f, r1, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_BAD_KEY);
	assert_int_equal(prot_local_invalidate(f->t, r2, f->pd), 0);
	assert_int_equal(prot_mr_dereg(f->t, mrk), 0);
}

static void
test_mr_with_windows_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t mrk = mr(f, f->pd, MR_ACC);
	uint32_t w2 = mw(f, f->pd, 2);
	uint32_t r2, k;

	r2 = bind2(f, w2, mrk, va_of(f->buf), 8, PROT_ACC_REMOTE_READ, QPN);
	/* EBUSY: neither dereg nor rereg while a window is bound. */
	assert_int_equal(prot_mr_dereg(f->t, mrk), -EBUSY);
	k = mrk;
	assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_ACCESS, 0, NULL, 0,
				       MR_ACC), -EBUSY);
	assert_int_equal(k, mrk);
	assert_int_equal(acc(f, mrk, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
	assert_int_equal(acc(f, r2, QPN, PROT_OP_READ, va_of(f->buf), 8),
			 PROT_OK);
	assert_int_equal(prot_pd_dealloc(f->t, f->pd), -EBUSY);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_mw_alloc),
		T(test_mw_alloc_bad_flow),
		T(test_mw1_bind),
		T(test_mw1_window_limits_bad_flow),
		T(test_mw_bind_local_write),
		T(test_mw1_bind_bad_flow),
		T(test_mw1_unbind),
		T(test_mw1_unbind_bad_flow),
		T(test_mw2_bind),
		T(test_mw2_wrong_qp_bad_flow),
		T(test_mw2_bind_bad_flow),
		T(test_mw2_local_invalidate),
		T(test_mw2_local_invalidate_bad_flow),
		T(test_mw2_remote_invalidate),
		T(test_mw2_remote_invalidate_bad_flow),
		T(test_mw2_invalidate_qp),
		T(test_mw_several_on_one_mr),
		T(test_mw_several_on_one_mr_bad_flow),
		T(test_mr_with_windows),
		T(test_mr_with_windows_bad_flow),
	};
#undef T

	return cmocka_run_group_tests_name("protection_mw", tests, NULL, NULL);
}
