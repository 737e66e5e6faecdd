/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_prot_mr.c - tables, keys, PDs and memory regions.
 */
#include <errno.h>

#include "prot_test.h"

static enum prot_status
rd(struct fx *f, uint32_t key, uint64_t va, uint64_t len)
{
	void *host = NULL;

	return prot_check_remote(f->t, key, f->pd, 1, PROT_OP_READ, va, len,
				 &host);
}

/* ---- keys ---------------------------------------------------------------- */

static void
test_key_format(void **state)
{
	struct fx *f = *state;
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, sizeof(f->buf),
				     PROT_ACC_REMOTE_READ, &key), 0);
	assert_int_equal(prot_key_make(prot_key_index(key),
				       prot_key_variant(key)), key);
	assert_true(prot_key_index(key) != 0);
	assert_true(prot_key_index(key) < f->t->nentries);
	assert_int_equal(f->t->entries[prot_key_index(key)].variant,
			 prot_key_variant(key));
}

static void
test_key_index_not_sequential(void **state)
{
	struct fx *f = *state;
	uint32_t idx[16];
	unsigned int seq = 0;
	unsigned int i, j;

	for (i = 0; i < 16; i++) {
		uint32_t key;

		assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
					     PROT_ACC_REMOTE_READ, &key), 0);
		idx[i] = prot_key_index(key);
		for (j = 0; j < i; j++)
			assert_int_not_equal(idx[i], idx[j]);
	}
	/* Counting must not predict the next key. */
	for (i = 1; i < 16; i++)
		if (idx[i] == idx[i - 1] + 1)
			seq++;
	assert_true(seq < 4);
	assert_int_not_equal(idx[0], 1);
}

static void
test_key_index_not_sequential_bad_flow(void **state)
{
	/* Two tables with different seeds hand out different first keys:
	 * the order is a secret of the instance, not a constant. */
	struct prot_config c1 = { .max_mr = 1024, .max_mw = 1024, .seed = 1 };
	struct prot_config c2 = { .max_mr = 1024, .max_mw = 1024, .seed = 2 };
	struct prot_tables *t1, *t2;
	uint32_t p1, p2, k1, k2;
	uint8_t b[8];

	(void)state;
	assert_int_equal(prot_tables_create(&c1, NULL, &t1), 0);
	assert_int_equal(prot_tables_create(&c2, NULL, &t2), 0);
	assert_int_equal(prot_pd_alloc(t1, &p1), 0);
	assert_int_equal(prot_pd_alloc(t2, &p2), 0);
	assert_int_equal(prot_mr_reg(t1, p1, b, 8, 0, &k1), 0);
	assert_int_equal(prot_mr_reg(t2, p2, b, 8, 0, &k2), 0);
	assert_int_not_equal(prot_key_index(k1), prot_key_index(k2));
	/* A key of one table is nothing in the other. */
	assert_int_equal(prot_check_remote(t2, k1, p2, 0, PROT_OP_READ,
					   va_of(b), 1, &(void *){ NULL }),
			 PROT_BAD_KEY);
	assert_int_equal(prot_mr_dereg(t1, k1), 0);
	assert_int_equal(prot_mr_dereg(t2, k2), 0);
	assert_int_equal(prot_pd_dealloc(t1, p1), 0);
	assert_int_equal(prot_pd_dealloc(t2, p2), 0);
	assert_int_equal(prot_tables_destroy(t1), 0);
	assert_int_equal(prot_tables_destroy(t2), 0);
}

static void
test_tables_config(void **state)
{
	struct prot_config small = { .max_mr = 3, .max_mw = 5 };
	struct prot_tables *t;

	(void)state;
	assert_int_equal(prot_tables_create(NULL, NULL, &t), 0);
	assert_int_equal(t->nentries,
			 PROT_DEFAULT_MAX_MR + PROT_DEFAULT_MAX_MW + 1);
	assert_int_equal(prot_tables_destroy(t), 0);
	/* Entries = max_mr + max_mw + reserved index 0. */
	assert_int_equal(prot_tables_create(&small, NULL, &t), 0);
	assert_int_equal(t->nentries, 9);
	assert_int_equal(prot_tables_destroy(t), 0);
}

static void
test_tables_config_bad_flow(void **state)
{
	struct prot_config big = { .max_mr = PROT_KEY_INDEX_MAX - 10,
				   .max_mw = 11 };
	struct prot_tables *t = NULL;

	(void)state;
	assert_int_equal(prot_tables_create(&big, NULL, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(prot_tables_create(NULL, NULL, NULL), -EINVAL);
}

/* ---- zero-copy holds (prot_tx_hold) -------------------------------------- */

/*
 * A region that frames still send from: the dereg kills the key at once
 * (-EINPROGRESS, lookups fail, the entry and its PD reference kept), a
 * second dereg while held says the same, and the one after the last
 * release frees it.  A window's R_Key holds its region; a new translation
 * is refused while held.
 */
static void
test_tx_hold_dereg(void **state)
{
	struct fx *f = *state;
	uint64_t va = (uintptr_t)f->buf;
	uint32_t key, key2, mw, rkey, *h, *hw;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 4096, PROT_ACC_REMOTE_READ |
				     PROT_ACC_MW_BIND, &key), 0);
	assert_int_equal(rd(f, key, va, 64), PROT_OK);
	h = prot_tx_hold(f->t, key);
	assert_int_equal(prot_mr_tx_holds(f->t, key), 1);
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_TRANSLATION, 0, f->buf,
				       2048, 0), -EBUSY);
	/* a window bound to it: its R_Key's hold is the region's */
	assert_int_equal(prot_mw_alloc(f->t, f->pd, 1, &mw), 0);
	assert_int_equal(prot_mw_bind_type1(f->t, prot_key_index(mw), key, va, 64,
					    PROT_ACC_REMOTE_READ, &rkey), 0);
	hw = prot_tx_hold(f->t, rkey);
	assert_ptr_equal(hw, h);
	assert_int_equal(prot_mr_tx_holds(f->t, key), 2);
	prot_tx_release(hw);
	assert_int_equal(prot_mw_dealloc(f->t, prot_key_index(rkey)), 0);

	assert_int_equal(prot_mr_dereg(f->t, key), -EINPROGRESS);
	assert_int_equal(rd(f, key, va, 64), PROT_BAD_KEY);
	assert_int_equal(prot_mr_count(f->t), 1);
	assert_int_equal(prot_pd_dealloc(f->t, f->pd), -EBUSY);
	assert_int_equal(prot_mr_dereg(f->t, key), -EINPROGRESS);
	prot_tx_release(h);
	assert_int_equal(prot_mr_tx_holds(f->t, key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_mr_count(f->t), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), -EINVAL);
	/* the index is reused clean: no hold, no draining */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64, PROT_ACC_REMOTE_READ,
				     &key2), 0);
	assert_int_equal(prot_mr_dereg(f->t, key2), 0);
}

/* ---- protection domains -------------------------------------------------- */

static void
test_pd_alloc_dealloc(void **state)
{
	struct fx *f = *state;
	uint32_t pd, key;

	assert_int_equal(prot_pd_alloc(f->t, &pd), 0);
	assert_int_not_equal(pd, f->pd);
	assert_int_equal(prot_mr_reg(f->t, pd, f->buf, 8, 0, &key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_pd_dealloc(f->t, pd), 0);
}

static void
test_pd_dealloc_live_children_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t pd, key, mwkey;

	assert_int_equal(prot_pd_alloc(f->t, &pd), 0);
	assert_int_equal(prot_mr_reg(f->t, pd, f->buf, 8, 0, &key), 0);
	assert_int_equal(prot_pd_dealloc(f->t, pd), -EBUSY);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_mw_alloc(f->t, pd, 2, &mwkey), 0);
	assert_int_equal(prot_pd_dealloc(f->t, pd), -EBUSY);
	assert_int_equal(prot_mw_dealloc(f->t, prot_key_index(mwkey)), 0);
	/* A QP's reference (prot_pd_get) also keeps it. */
	assert_int_equal(prot_pd_get(f->t, pd), 0);
	assert_int_equal(prot_pd_dealloc(f->t, pd), -EBUSY);
	assert_int_equal(prot_pd_put(f->t, pd), 0);
	assert_int_equal(prot_pd_put(f->t, pd), -EINVAL);
	assert_int_equal(prot_pd_dealloc(f->t, pd), 0);
	/* Gone: unknown now. */
	assert_int_equal(prot_pd_dealloc(f->t, pd), -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, pd, f->buf, 8, 0, &key), -EINVAL);
	/* Tables with a live PD cannot be destroyed. */
	assert_int_equal(prot_tables_destroy(f->t), -EBUSY);
}

static void
test_pd_limit_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t pd;
	int i, n = 0;

	for (i = 0; i < 32; i++)
		if (prot_pd_alloc(f->t, &pd) == 0)
			n++;
	assert_int_equal(n, 14);	/* 16 minus the fixture's two */
	assert_int_equal(prot_pd_alloc(f->t, &pd), -ENOMEM);
}

/* ---- registration -------------------------------------------------------- */

static void
test_reg_mr(void **state)
{
	struct fx *f = *state;
	uint32_t key;
	void *host = NULL;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, sizeof(f->buf),
				     ALL_REMOTE, &key), 0);
	assert_int_equal(prot_mr_count(f->t), 1);
	/* lkey == rkey: both checks accept the same key. */
	assert_int_equal(prot_check_local(f->t, key, f->pd, va_of(f->buf),
					  sizeof(f->buf), true, &host),
			 PROT_OK);
	assert_ptr_equal(host, f->buf);
	assert_int_equal(rd(f, key, va_of(f->buf + 100), 8), PROT_OK);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_mr_count(f->t), 0);
}

static void
test_reg_mr_remote_write_needs_local_write_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key = 0x1234;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_WRITE, &key), -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_ATOMIC, &key), -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_ATOMIC |
				     PROT_ACC_REMOTE_READ, &key), -EINVAL);
	assert_int_equal(key, 0x1234);
	assert_int_equal(prot_mr_count(f->t), 0);
	/* With LOCAL_WRITE they are fine. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_WRITE |
				     PROT_ACC_LOCAL_WRITE, &key), 0);
}

static void
test_reg_mr_bad_args_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key;

	/* Zero length: EINVAL (ibverbs/kernel refuse an empty umem). */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 0, 0, &key),
			 -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, f->pd, NULL, 64, 0, &key),
			 -EINVAL);
	/* Range wrapping the address space. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, UINT64_MAX, 0,
				     &key), -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64, 1u << 15,
				     &key), -EINVAL);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_ON_DEMAND, &key), -EOPNOTSUPP);
	assert_int_equal(prot_mr_reg(f->t, 9999, f->buf, 64, 0, &key),
			 -EINVAL);
	assert_int_equal(prot_mr_count(f->t), 0);
}

static void
test_reg_mr_overlapping(void **state)
{
	struct fx *f = *state;
	uint32_t k1, k2, k3;

	/* Overlapping and identical registrations are independent. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 1024,
				     PROT_ACC_REMOTE_READ, &k1), 0);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf + 512, 1024,
				     PROT_ACC_REMOTE_READ, &k2), 0);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 1024,
				     PROT_ACC_REMOTE_READ, &k3), 0);
	assert_int_not_equal(k1, k2);
	assert_int_not_equal(k1, k3);
	assert_int_equal(rd(f, k1, va_of(f->buf + 600), 8), PROT_OK);
	assert_int_equal(rd(f, k2, va_of(f->buf + 600), 8), PROT_OK);
	assert_int_equal(prot_mr_dereg(f->t, k1), 0);
	assert_int_equal(rd(f, k2, va_of(f->buf + 600), 8), PROT_OK);
	assert_int_equal(rd(f, k3, va_of(f->buf + 600), 8), PROT_OK);
}

static void
test_reg_mr_overlapping_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t k1, k2;

	/* Each key covers only its own range, even where they overlap. */
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 1024,
				     PROT_ACC_REMOTE_READ, &k1), 0);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf + 512, 1024,
				     PROT_ACC_REMOTE_READ, &k2), 0);
	assert_int_equal(rd(f, k1, va_of(f->buf + 1020), 8), PROT_RANGE);
	assert_int_equal(rd(f, k2, va_of(f->buf + 100), 8), PROT_RANGE);
	assert_int_equal(prot_mr_dereg(f->t, k2), 0);
	assert_int_equal(rd(f, k2, va_of(f->buf + 600), 8), PROT_BAD_KEY);
}

static void
test_reg_mr_limit_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t keys[64], key;
	int i;

	for (i = 0; i < 64; i++)
		assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0,
					     &keys[i]), 0);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0, &key),
			 -ENOMEM);
	assert_int_equal(prot_mr_dereg(f->t, keys[10]), 0);
	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 8, 0, &key), 0);
}

static void
test_dereg_mr(void **state)
{
	struct fx *f = *state;
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_READ, &key), 0);
	assert_int_equal(rd(f, key, va_of(f->buf), 64), PROT_OK);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(rd(f, key, va_of(f->buf), 64), PROT_BAD_KEY);
	assert_int_equal(prot_check_local(f->t, key, f->pd, va_of(f->buf), 8,
					  false, &(void *){ NULL }),
			 PROT_BAD_KEY);
}

static void
test_dereg_mr_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64, 0, &key), 0);
	/* Stale variant, wrong index, MW key: refused, MR stays. */
	assert_int_equal(prot_mr_dereg(f->t, key ^ 1), -EINVAL);
	assert_int_equal(prot_mr_dereg(f->t, 0), -EINVAL);
	assert_int_equal(prot_mr_dereg(f->t, 0xffffffff), -EINVAL);
	assert_int_equal(prot_mr_count(f->t), 1);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), -EINVAL);
}

static void
test_reused_index_new_variant(void **state)
{
	struct fx *f = *state;
	uint32_t prev = 0, key;
	int i;

	/* 2 indices in total: reuse is forced on every registration. */
	for (i = 0; i < 300; i++) {
		assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
					     PROT_ACC_REMOTE_READ, &key), 0);
		assert_int_not_equal(key, prev);
		if (prev != 0)
			assert_int_equal(rd(f, prev, va_of(f->buf), 8),
					 PROT_BAD_KEY);
		assert_int_equal(rd(f, key, va_of(f->buf), 8), PROT_OK);
		assert_int_equal(prot_mr_dereg(f->t, key), 0);
		prev = key;
	}
}

static int
setup_tiny(void **state)
{
	return fx_setup_cfg(state, 1, 1);
}

/* ---- re-registration ----------------------------------------------------- */

static void
test_rereg_mr_access(void **state)
{
	struct fx *f = *state;
	uint32_t old, key;
	void *host;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_READ, &key), 0);
	old = key;
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_ACCESS, 0, NULL,
				       0, PROT_ACC_LOCAL_WRITE |
				       PROT_ACC_REMOTE_WRITE), 0);
	/* new rights, same memory: the key is kept (rxe, mlx5) */
	assert_int_equal(key, old);
	assert_int_equal(prot_check_remote(f->t, key, f->pd, 0, PROT_OP_WRITE,
					   va_of(f->buf), 8, &host), PROT_OK);
	assert_int_equal(rd(f, key, va_of(f->buf), 8), PROT_ACCESS);
	/* a new translation gives a new key, the old one dies */
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_TRANSLATION, 0,
				       f->buf + 64, 64, 0), 0);
	assert_int_equal(prot_key_index(key), prot_key_index(old));
	assert_int_not_equal(prot_key_variant(key), prot_key_variant(old));
	assert_int_equal(prot_check_local(f->t, old, f->pd, va_of(f->buf + 64), 8,
					  false, &host), PROT_BAD_KEY);
}

static void
test_rereg_mr_translation_pd(void **state)
{
	struct fx *f = *state;
	uint32_t key;
	void *host = NULL;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_READ, &key), 0);
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_TRANSLATION |
				       PROT_REREG_PD, f->pd2, f->buf + 1024,
				       128, 0), 0);
	assert_int_equal(rd(f, key, va_of(f->buf), 8), PROT_PD_MISMATCH);
	assert_int_equal(prot_check_remote(f->t, key, f->pd2, 0, PROT_OP_READ,
					   va_of(f->buf + 1024), 128, &host),
			 PROT_OK);
	assert_ptr_equal(host, f->buf + 1024);
	assert_int_equal(prot_check_remote(f->t, key, f->pd2, 0, PROT_OP_READ,
					   va_of(f->buf), 8, &host),
			 PROT_RANGE);
	/* The PD reference moved with it. */
	assert_int_equal(prot_pd_dealloc(f->t, f->pd2), -EBUSY);
}

static void
test_rereg_mr_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key, k;

	assert_int_equal(prot_mr_reg(f->t, f->pd, f->buf, 64,
				     PROT_ACC_REMOTE_READ, &key), 0);
	k = key;
	assert_int_equal(prot_mr_rereg(f->t, &k, 0, 0, NULL, 0, 0), -EINVAL);
	assert_int_equal(prot_mr_rereg(f->t, &k, 8, 0, NULL, 0, 0), -EINVAL);
	assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_ACCESS, 0, NULL, 0,
				       PROT_ACC_REMOTE_WRITE), -EINVAL);
	assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_TRANSLATION, 0,
				       f->buf, 0, 0), -EINVAL);
	assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_PD, 77, NULL, 0,
				       0), -EINVAL);
	k = key ^ 1;
	assert_int_equal(prot_mr_rereg(f->t, &k, PROT_REREG_ACCESS, 0, NULL, 0,
				       0), -EINVAL);
	/* All failures left the old MR intact. */
	assert_int_equal(rd(f, key, va_of(f->buf), 64), PROT_OK);
}

/* ---- registration under an iova ------------------------------------------------ */

#define IOVA UINT64_C(0x7000000000001000)

static void
test_reg_mr_iova(void **state)
{
	struct fx *f = *state;
	void *host = NULL;
	uint32_t key;

	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf + 16, 1024, IOVA,
					  PROT_ACC_LOCAL_WRITE | PROT_ACC_REMOTE_WRITE,
					  &key), 0);
	/* iova + k is host + k, at both ends of the range */
	assert_int_equal(prot_check_remote(f->t, key, f->pd, 1, PROT_OP_WRITE,
					   IOVA, 8, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 16);
	assert_int_equal(prot_check_remote(f->t, key, f->pd, 1, PROT_OP_WRITE,
					   IOVA + 1016, 8, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 16 + 1016);
	assert_int_equal(prot_check_local(f->t, key, f->pd, IOVA + 100, 24, true,
					  &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 116);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

static void
test_reg_mr_iova_bounds_bad_flow(void **state)
{
	struct fx *f = *state;
	void *host = f->other;
	uint32_t key;

	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024, IOVA,
					  PROT_ACC_REMOTE_READ, &key), 0);
	/* one byte before the start, one past the end */
	assert_int_equal(prot_check_remote(f->t, key, f->pd, 1, PROT_OP_READ,
					   IOVA - 1, 8, &host), PROT_RANGE);
	assert_int_equal(prot_check_remote(f->t, key, f->pd, 1, PROT_OP_READ,
					   IOVA + 1017, 8, &host), PROT_RANGE);
	assert_int_equal(prot_check_local(f->t, key, f->pd, IOVA + 1024, 1, false,
					  &host), PROT_RANGE);
	/* the host address is no name of the region */
	assert_int_equal(rd(f, key, va_of(f->buf), 8), PROT_RANGE);
	assert_ptr_equal(host, f->other);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

static void
test_reg_mr_iova_args_bad_flow(void **state)
{
	struct fx *f = *state;
	uint32_t key;

	/* iova + length must be representable, as addr + length is */
	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024,
					  UINT64_MAX - 1022, 0, &key), -EINVAL);
	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024,
					  UINT64_MAX - 1023, 0, &key), -EINVAL);
	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024,
					  UINT64_MAX - 1024, 0, &key), 0);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
	/* ZERO_BASED names the region from 0 */
	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024, IOVA,
					  PROT_ACC_ZERO_BASED, &key), -EINVAL);
	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, NULL, 1024, IOVA, 0, &key),
			 -EINVAL);
	assert_int_equal(prot_mr_count(f->t), 0);
}

static void
test_rereg_mr_iova_kept(void **state)
{
	struct fx *f = *state;
	void *host = NULL;
	uint32_t key;

	assert_int_equal(prot_mr_reg_iova(f->t, f->pd, f->buf, 1024, IOVA,
					  PROT_ACC_REMOTE_READ, &key), 0);
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_PD, f->pd2, NULL,
				       0, 0), 0);
	assert_int_equal(prot_check_remote(f->t, key, f->pd2, 1, PROT_OP_READ,
					   IOVA + 8, 8, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 8);
	/* a new translation is named by its address again */
	assert_int_equal(prot_mr_rereg(f->t, &key, PROT_REREG_TRANSLATION, 0,
				       f->buf + 64, 64, 0), 0);
	assert_int_equal(prot_check_remote(f->t, key, f->pd2, 1, PROT_OP_READ,
					   va_of(f->buf + 64), 8, &host), PROT_OK);
	assert_ptr_equal(host, f->buf + 64);
	assert_int_equal(prot_mr_dereg(f->t, key), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_format, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_key_index_not_sequential,
						fx_setup, fx_teardown),
		cmocka_unit_test(test_key_index_not_sequential_bad_flow),
		cmocka_unit_test(test_tables_config),
		cmocka_unit_test(test_tables_config_bad_flow),
		cmocka_unit_test_setup_teardown(test_pd_alloc_dealloc,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_pd_dealloc_live_children_bad_flow, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_pd_limit_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_reg_mr_remote_write_needs_local_write_bad_flow,
			fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_bad_args_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_overlapping,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_reg_mr_overlapping_bad_flow, fx_setup,
			fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_limit_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_dereg_mr, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_dereg_mr_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reused_index_new_variant,
						setup_tiny, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_iova, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_iova_bounds_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reg_mr_iova_args_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rereg_mr_iova_kept, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_rereg_mr_access,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rereg_mr_translation_pd,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_rereg_mr_bad_flow,
						fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_tx_hold_dereg,
						fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests_name("protection_mr", tests, NULL, NULL);
}
