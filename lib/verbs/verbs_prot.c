/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_prot.c - droce_* protection verbs: PDs, MRs, MWs.  Argument checks,
 * the provider's op, then ibverbs' conventions (NULL + errno, positive
 * errno, rereg error codes).  droce_bind_mw posts a work request:
 * verbs_qp.c.
 */
#include <errno.h>
#include <stdint.h>

#include "droce.h"
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
	ret = context->ops->alloc_pd(context, &pd);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	return pd;
}

int
droce_dealloc_pd(struct droce_pd *pd)
{
	if (pd == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(pd->context->ops->dealloc_pd(pd));
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
	int ret;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ret = pd->context->ops->reg_mr(pd, addr, length, iova, access, &mr);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	return mr;
}

int
droce_dereg_mr(struct droce_mr *mr)
{
	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mr->context->ops->dereg_mr(mr));
}

/*
 * Every failure leaves the old MR valid and untouched (all checks run
 * before anything changes), so the only error code droce returns is
 * DROCE_REREG_MR_ERR_INPUT, with errno EINVAL, EBUSY (windows bound) or
 * EOPNOTSUPP (ON_DEMAND; a provider without rereg).
 */
int
droce_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd,
	       void *addr, size_t length, int access)
{
	int ret;

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
	ret = mr->context->ops->rereg_mr(mr, flags, pd, addr, length, access);
	if (ret != 0) {
		errno = -ret;
		return DROCE_REREG_MR_ERR_INPUT;
	}
	return 0;
}

struct droce_mw *
droce_alloc_mw(struct droce_pd *pd, enum droce_mw_type type)
{
	struct droce_mw *mw;
	int ret;

	if (pd == NULL ||
	    (type != DROCE_MW_TYPE_1 && type != DROCE_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	ret = pd->context->ops->alloc_mw(pd, (int)type, &mw);
	if (ret != 0) {
		errno = -ret;
		return NULL;
	}
	return mw;
}

int
droce_dealloc_mw(struct droce_mw *mw)
{
	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mw->context->ops->dealloc_mw(mw));
}
