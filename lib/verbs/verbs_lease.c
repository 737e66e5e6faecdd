/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_lease.c - leases on MRs and MWs and persistent named regions
 * (droce extensions, droce.h): argument checks, then the provider's op
 * (the engine: lib/protection's leases, expired by the device's engines;
 * droced's client: requests, droced's engine expiring them).
 */
#include <errno.h>
#include <stdint.h>

#include "droce.h"
#include "verbs_private.h"

struct droce_mr *
droce_reg_mr_lease(struct droce_pd *pd, void *addr, size_t length, int access,
		   uint32_t lease_ms)
{
	struct droce_mr *mr;
	int ret;

	if (pd == NULL || lease_ms == 0) {
		errno = EINVAL;
		return NULL;
	}
	mr = droce_reg_mr(pd, addr, length, access);
	if (mr == NULL)
		return NULL;
	ret = droce_set_mr_lease(mr, lease_ms);
	if (ret != 0) {
		(void)droce_dereg_mr(mr);
		errno = ret;
		return NULL;
	}
	return mr;
}

int
droce_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms)
{
	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mr->context->ops->set_mr_lease(mr, lease_ms));
}

int
droce_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms)
{
	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mw->context->ops->set_mw_lease(mw, lease_ms));
}

int
droce_renew_mr(struct droce_mr *mr)
{
	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mr->context->ops->renew_mr(mr));
}

int
droce_renew_mw(struct droce_mw *mw)
{
	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mw->context->ops->renew_mw(mw));
}

int
droce_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr)
{
	if (mr == NULL || attr == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mr->context->ops->query_mr_lease(mr, attr));
}

int
droce_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr)
{
	if (mw == NULL || attr == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mw->context->ops->query_mw_lease(mw, attr));
}

/* ---- persistent regions (droced's, app/droced/README.md) --------------------- */

int
droce_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms)
{
	if (mr == NULL || lease_ms > INT32_MAX)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(mr->context->ops->persist_mr(mr, name, lease_ms));
}

struct droce_mr *
droce_attach_mr(struct droce_context *context, const char *name)
{
	struct droce_mr *mr;
	int rc;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = context->ops->attach_mr(context, name, &mr);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return mr;
}

int
droce_release(struct droce_context *context, const char *name)
{
	if (context == NULL)
		return verbs_ret_errno(-EINVAL);
	return verbs_ret_errno(context->ops->release(context, name));
}
