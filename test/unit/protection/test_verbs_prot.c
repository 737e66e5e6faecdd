/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_verbs_prot.c - the public droce_* protection API (lib/verbs) and
 * its ibverbs return conventions, without EAL.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "droce.h"
#include "prot.h"
#include "verbs_private.h"
#include "verbs_engine.h"

struct vfx {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_pd *pd2;
	uint8_t buf[4096];
};

static int
vsetup(void **state)
{
	struct droce_context_attr attr = { .max_pd = 4, .max_mr = 32,
					   .max_mw = 32, .socket_id = -1 };
	struct vfx *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return -1;
	v->ctx = droce_open_context(&attr);
	if (v->ctx == NULL)
		return -1;
	v->pd = droce_alloc_pd(v->ctx);
	v->pd2 = droce_alloc_pd(v->ctx);
	if (v->pd == NULL || v->pd2 == NULL)
		return -1;
	*state = v;
	return 0;
}

static int
vteardown(void **state)
{
	struct vfx *v = *state;

	assert_int_equal(droce_dealloc_pd(v->pd), 0);
	assert_int_equal(droce_dealloc_pd(v->pd2), 0);
	assert_int_equal(droce_close_context(v->ctx), 0);
	free(v);
	return 0;
}

static void
test_open_context(void **state)
{
	struct droce_context *ctx;

	(void)state;
	ctx = droce_open_context(NULL);
	assert_non_null(ctx);
	assert_int_equal(verbs_prot(ctx)->nentries,
			 PROT_DEFAULT_MAX_MR + PROT_DEFAULT_MAX_MW + 1);
	assert_int_equal(droce_close_context(ctx), 0);
}

static void
test_open_context_bad_flow(void **state)
{
	struct droce_context_attr attr = { .max_mr = 1u << 24, .max_mw = 1 };
	struct droce_context *ctx;
	struct droce_pd *pd;

	(void)state;
	errno = 0;
	assert_null(droce_open_context(&attr));
	assert_int_equal(errno, EINVAL);
	/* A context with a live PD cannot be closed. */
	ctx = droce_open_context(NULL);
	assert_non_null(ctx);
	pd = droce_alloc_pd(ctx);
	assert_non_null(pd);
	assert_int_equal(droce_close_context(ctx), EBUSY);
	assert_int_equal(droce_dealloc_pd(pd), 0);
	assert_int_equal(droce_close_context(ctx), 0);
	assert_null(droce_alloc_pd(NULL));
	assert_int_equal(errno, EINVAL);
}

static void
test_pd(void **state)
{
	struct vfx *v = *state;

	assert_ptr_equal(v->pd->context, v->ctx);
	assert_int_not_equal(v->pd->handle, v->pd2->handle);
}

static void
test_pd_bad_flow(void **state)
{
	struct vfx *v = *state;
	struct droce_pd *p1, *p2, *p3;
	struct droce_mr *mr;

	mr = droce_reg_mr(v->pd, v->buf, 64, 0);
	assert_non_null(mr);
	assert_int_equal(droce_dealloc_pd(v->pd), EBUSY);
	assert_int_equal(droce_dereg_mr(mr), 0);
	/* max_pd = 4: two more, then ENOMEM. */
	p1 = droce_alloc_pd(v->ctx);
	p2 = droce_alloc_pd(v->ctx);
	assert_non_null(p1);
	assert_non_null(p2);
	errno = 0;
	p3 = droce_alloc_pd(v->ctx);
	assert_null(p3);
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(droce_dealloc_pd(p1), 0);
	assert_int_equal(droce_dealloc_pd(p2), 0);
	assert_int_equal(droce_dealloc_pd(NULL), EINVAL);
}

static void
test_reg_mr(void **state)
{
	struct vfx *v = *state;
	struct droce_mr *mr;
	void *host;

	mr = droce_reg_mr(v->pd, v->buf, sizeof(v->buf),
			  DROCE_ACCESS_LOCAL_WRITE |
			  DROCE_ACCESS_REMOTE_WRITE |
			  DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	assert_ptr_equal(mr->context, v->ctx);
	assert_ptr_equal(mr->pd, v->pd);
	assert_ptr_equal(mr->addr, v->buf);
	assert_int_equal(mr->length, sizeof(v->buf));
	assert_int_equal(mr->lkey, mr->rkey);
	assert_int_equal(mr->handle, mr->rkey >> 8);
	assert_int_equal(prot_check_remote(verbs_prot(v->ctx), mr->rkey,
					   v->pd->handle, 1, PROT_OP_WRITE,
					   (uint64_t)(uintptr_t)v->buf, 16,
					   &host), PROT_OK);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

static void
test_reg_mr_bad_flow(void **state)
{
	struct vfx *v = *state;

	errno = 0;
	assert_null(droce_reg_mr(v->pd, v->buf, 64,
				 DROCE_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_reg_mr(v->pd, v->buf, 64,
				 DROCE_ACCESS_REMOTE_ATOMIC));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_reg_mr(v->pd, v->buf, 0, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_reg_mr(NULL, v->buf, 64, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_reg_mr(v->pd, v->buf, 64, DROCE_ACCESS_ON_DEMAND));
	assert_int_equal(errno, EOPNOTSUPP);
	assert_int_equal(droce_dereg_mr(NULL), EINVAL);
	assert_int_equal(prot_mr_count(verbs_prot(v->ctx)), 0);
}

static void
test_reg_mr_iova(void **state)
{
	const uint64_t iova = UINT64_C(0x4000000000);
	struct vfx *v = *state;
	struct droce_mr *mr;
	void *host = NULL;

	mr = droce_reg_mr_iova(v->pd, v->buf + 8, 256, iova,
			       DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	assert_ptr_equal(mr->addr, v->buf + 8);
	assert_int_equal(mr->length, 256);
	assert_int_equal(prot_check_remote(verbs_prot(v->ctx), mr->rkey, v->pd->handle, 1,
					   PROT_OP_WRITE, iova + 248, 8, &host),
			 PROT_OK);
	assert_ptr_equal(host, v->buf + 8 + 248);
	assert_int_equal(droce_dereg_mr(mr), 0);
	errno = 0;
	assert_null(droce_reg_mr_iova(v->pd, v->buf, 64, UINT64_MAX - 62, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(droce_reg_mr_iova(v->pd, v->buf, 64, iova, DROCE_ACCESS_ZERO_BASED));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(prot_mr_count(verbs_prot(v->ctx)), 0);
}

static void
test_rereg_mr(void **state)
{
	struct vfx *v = *state;
	struct droce_mr *mr;
	uint32_t old;

	mr = droce_reg_mr(v->pd, v->buf, 64, DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	old = mr->rkey;
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_TRANSLATION |
					DROCE_REREG_MR_CHANGE_PD, v->pd2,
					v->buf + 128, 256, 0), 0);
	assert_int_not_equal(mr->rkey, old);
	assert_int_equal(mr->lkey, mr->rkey);
	assert_ptr_equal(mr->pd, v->pd2);
	assert_ptr_equal(mr->addr, v->buf + 128);
	assert_int_equal(mr->length, 256);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

static void
test_rereg_mr_bad_flow(void **state)
{
	struct vfx *v = *state;
	struct droce_mr *mr;
	struct droce_mw *mw;
	uint32_t key;

	mr = droce_reg_mr(v->pd, v->buf, 64, DROCE_ACCESS_MW_BIND |
			  DROCE_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	key = mr->rkey;
	errno = 0;
	assert_int_equal(droce_rereg_mr(mr, 0, NULL, NULL, 0, 0),
			 DROCE_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_FLAGS_SUPPORTED + 1,
					NULL, NULL, 0, 0),
			 DROCE_REREG_MR_ERR_INPUT);
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_PD, NULL,
					NULL, 0, 0), DROCE_REREG_MR_ERR_INPUT);
	errno = 0;
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_ACCESS, NULL,
					NULL, 0, DROCE_ACCESS_REMOTE_WRITE),
			 DROCE_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_ACCESS, NULL,
					NULL, 0, DROCE_ACCESS_ON_DEMAND),
			 DROCE_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EOPNOTSUPP);
	/* A bound window pins the MR: EBUSY.  (droce_bind_mw posts to a QP:
	 * transport_mw_bind; here the table's type-1 bind, which it executes.) */
	mw = droce_alloc_mw(v->pd, DROCE_MW_TYPE_1);
	assert_non_null(mw);
	assert_int_equal(prot_mw_bind_type1(verbs_prot(v->ctx), mw->handle, mr->lkey,
					    (uint64_t)(uintptr_t)v->buf, 64,
					    DROCE_ACCESS_REMOTE_READ, &mw->rkey), 0);
	errno = 0;
	assert_int_equal(droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_ACCESS, NULL,
					NULL, 0, 0), DROCE_REREG_MR_ERR_INPUT);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(droce_dereg_mr(mr), EBUSY);
	/* Every failure left the old keys in place. */
	assert_int_equal(mr->rkey, key);
	assert_int_equal(droce_dealloc_mw(mw), 0);
	assert_int_equal(droce_dereg_mr(mr), 0);
}

static void
test_mw(void **state)
{
	struct vfx *v = *state;
	struct droce_mr *mr;
	struct droce_mw *mw1, *mw2;
	uint32_t r0;
	void *host;

	mr = droce_reg_mr(v->pd, v->buf, 1024, DROCE_ACCESS_LOCAL_WRITE |
			  DROCE_ACCESS_MW_BIND);
	assert_non_null(mr);
	mw1 = droce_alloc_mw(v->pd, DROCE_MW_TYPE_1);
	mw2 = droce_alloc_mw(v->pd, DROCE_MW_TYPE_2);
	assert_non_null(mw1);
	assert_non_null(mw2);
	assert_int_equal(mw1->type, DROCE_MW_TYPE_1);
	assert_int_equal(mw2->type, DROCE_MW_TYPE_2);
	assert_ptr_equal(mw1->pd, v->pd);
	assert_int_equal(mw1->handle, mw1->rkey >> 8);
	r0 = mw1->rkey;
	/* a QP of another PD binds none of this PD's windows */
	assert_int_equal(prot_mw_bind_type1_key(verbs_prot(v->ctx), mw1->handle,
						droce_inc_rkey(r0), mr->lkey,
						(uint64_t)(uintptr_t)v->buf + 64, 128,
						DROCE_ACCESS_REMOTE_WRITE, v->pd->handle + 1),
			 -EPERM);
	/* droce_bind_mw's bind, as the transport executes it (the verb
	 * itself: transport_mw_bind): the key the WR names */
	assert_int_equal(prot_mw_bind_type1_key(verbs_prot(v->ctx), mw1->handle,
						droce_inc_rkey(r0), mr->lkey,
						(uint64_t)(uintptr_t)v->buf + 64, 128,
						DROCE_ACCESS_REMOTE_WRITE, v->pd->handle), 0);
	assert_int_equal(prot_check_remote(verbs_prot(v->ctx), droce_inc_rkey(r0),
					   v->pd->handle, 0, PROT_OP_WRITE,
					   (uint64_t)(uintptr_t)v->buf + 64, 128, &host),
			 PROT_OK);
	assert_ptr_equal(host, v->buf + 64);
	/* not the same key twice, not another window's index */
	assert_int_equal(prot_mw_bind_type1_key(verbs_prot(v->ctx), mw1->handle,
						droce_inc_rkey(r0), mr->lkey,
						(uint64_t)(uintptr_t)v->buf, 64,
						DROCE_ACCESS_REMOTE_READ, v->pd->handle), -EINVAL);
	assert_int_equal(prot_mw_bind_type1_key(verbs_prot(v->ctx), mw1->handle,
						mw2->rkey, mr->lkey,
						(uint64_t)(uintptr_t)v->buf, 64,
						DROCE_ACCESS_REMOTE_READ, v->pd->handle), -EINVAL);
	/* Unbind with length 0: the old key is dead. */
	assert_int_equal(prot_mw_bind_type1_key(verbs_prot(v->ctx), mw1->handle,
						droce_inc_rkey(droce_inc_rkey(r0)), 0,
						0, 0, 0, v->pd->handle), 0);
	assert_int_not_equal(prot_check_remote(verbs_prot(v->ctx), droce_inc_rkey(r0),
					       v->pd->handle, 0, PROT_OP_WRITE,
					       (uint64_t)(uintptr_t)v->buf + 64, 128,
					       &host), PROT_OK);
	assert_int_equal(droce_dereg_mr(mr), 0);
	assert_int_equal(droce_dealloc_mw(mw1), 0);
	assert_int_equal(droce_dealloc_mw(mw2), 0);
}

/* droce_bind_mw's own checks need a QP: transport_mw_bind. */
static void
test_mw_bad_flow(void **state)
{
	struct vfx *v = *state;

	errno = 0;
	assert_null(droce_alloc_mw(v->pd, (enum droce_mw_type)3));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(droce_dealloc_mw(NULL), EINVAL);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, vsetup, vteardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_context),
		cmocka_unit_test(test_open_context_bad_flow),
		T(test_reg_mr_iova),
		T(test_pd),
		T(test_pd_bad_flow),
		T(test_reg_mr),
		T(test_reg_mr_bad_flow),
		T(test_rereg_mr),
		T(test_rereg_mr_bad_flow),
		T(test_mw),
		T(test_mw_bad_flow),
	};
#undef T

	return cmocka_run_group_tests_name("verbs_protection", tests, NULL,
					   NULL);
}
