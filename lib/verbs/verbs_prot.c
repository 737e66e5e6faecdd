/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_prot.c - droce_* protection verbs: PDs, MRs, MWs.  Thin wrappers:
 * lib/protection does the checks; this file converts -errno into ibverbs'
 * conventions (NULL + errno, positive errno, rereg error codes).
 * droce_bind_mw posts a work request: verbs_qp.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "droce.h"
#include "prot.h"
#include "verbs_daemon.h"
#include "verbs_private.h"

struct droce_pd *
droce_alloc_pd(struct droce_context *context)
{
	struct droce_pd *pd;
	int ret;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (context->daemon != NULL)
		return verbs_dmn_alloc_pd(context);
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = prot_pd_alloc(context->prot, &pd->handle);
	if (ret != 0) {
		free(pd);
		errno = -ret;
		return NULL;
	}
	pd->context = context;
	return pd;
}

int
droce_dealloc_pd(struct droce_pd *pd)
{
	int ret;

	if (pd == NULL)
		return verbs_ret_errno(-EINVAL);
	if (pd->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_dealloc_pd(pd));
	ret = prot_pd_dealloc(pd->context->prot, pd->handle);
	if (ret != 0)
		return verbs_ret_errno(ret);
	free(pd);
	return 0;
}

struct droce_mr *
droce_reg_mr(struct droce_pd *pd, void *addr, size_t length, int access)
{
	uint64_t iova = (access & DROCE_ACCESS_ZERO_BASED) ? 0 : (uintptr_t)addr;

	return droce_reg_mr_iova(pd, addr, length, iova, access);
}

struct droce_mr *
droce_reg_mr_iova(struct droce_pd *pd, void *addr, size_t length,
		  uint64_t iova, int access)
{
	struct droce_mr *mr;
	uint32_t key;
	int ret;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (pd->context->daemon != NULL)
		return verbs_dmn_reg_mr(pd, addr, length, iova, access);
	ret = prot_mr_reg_iova(pd->context->prot, pd->handle, addr, length, iova,
			       (unsigned int)access, &key);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		(void)prot_mr_dereg(pd->context->prot, key);
		errno = ENOMEM;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = prot_key_index(key);
	mr->lkey = key;
	mr->rkey = key;
	return mr;
}

int
droce_dereg_mr(struct droce_mr *mr)
{
	int ret;

	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mr->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_dereg_mr(mr));
	ret = prot_mr_dereg(mr->context->prot, mr->lkey);
	if (ret != 0)
		return verbs_ret_errno(ret);
	/* a lease's expiry may have named it (the event raised under the
	 * table lock, so before the dereg above) */
	verbs_events_forget(mr->context, mr);
	free(mr);
	return 0;
}

/*
 * Every failure leaves the old MR valid and untouched (all checks run
 * before anything changes), so the only error code droce returns is
 * DROCE_REREG_MR_ERR_INPUT, with errno EINVAL, EBUSY (windows bound) or
 * EOPNOTSUPP (ON_DEMAND).
 */
int
droce_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd,
	       void *addr, size_t length, int access)
{
	uint32_t key;
	int ret;

	if (mr != NULL && mr->context->daemon != NULL) {
		errno = EOPNOTSUPP;	/* not in daemon mode yet */
		return DROCE_REREG_MR_ERR_INPUT;
	}
	if (mr == NULL || flags <= 0 ||
	    (flags & ~DROCE_REREG_MR_FLAGS_SUPPORTED)) {
		errno = EINVAL;
		return DROCE_REREG_MR_ERR_INPUT;
	}
	if ((flags & DROCE_REREG_MR_CHANGE_PD) &&
	    (pd == NULL || pd->context != mr->context)) {
		errno = EINVAL;
		return DROCE_REREG_MR_ERR_INPUT;
	}
	key = mr->lkey;
	ret = prot_mr_rereg(mr->context->prot, &key, (unsigned int)flags,
			    (flags & DROCE_REREG_MR_CHANGE_PD) ? pd->handle : 0,
			    addr, length, (unsigned int)access);
	if (ret != 0) {
		errno = -ret;
		return DROCE_REREG_MR_ERR_INPUT;
	}
	if (flags & DROCE_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & DROCE_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = key;
	mr->rkey = key;
	return 0;
}

struct droce_mw *
droce_alloc_mw(struct droce_pd *pd, enum droce_mw_type type)
{
	struct droce_mw *mw;
	uint32_t key;
	int ret;

	if (pd == NULL ||
	    (type != DROCE_MW_TYPE_1 && type != DROCE_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	if (pd->context->daemon != NULL)
		return verbs_dmn_alloc_mw(pd, type);
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = prot_mw_alloc(pd->context->prot, pd->handle, (int)type, &key);
	if (ret != 0) {
		free(mw);
		errno = -ret;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = key;
	mw->handle = prot_key_index(key);
	mw->type = type;
	return mw;
}

int
droce_dealloc_mw(struct droce_mw *mw)
{
	int ret;

	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mw->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_dealloc_mw(mw));
	ret = prot_mw_dealloc(mw->context->prot, mw->handle);
	if (ret != 0)
		return verbs_ret_errno(ret);
	verbs_events_forget(mw->context, mw);	/* as droce_dereg_mr */
	free(mw);
	return 0;
}
