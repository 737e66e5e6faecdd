/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_lease.c - leases on MRs and MWs (droce extension, droce.h): the
 * lease itself lives in lib/protection (prot_lease_*), expiry runs on the
 * device's engines (lib/transport tp_event.c), which raise the event
 * naming the handle passed here as the lease's cookie.  In daemon mode
 * setting, renewing and querying the lease of an MR or MW are requests:
 * it runs in droced (verbs_persist.c, app/droced/README.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "droce.h"
#include "prot.h"
#include "verbs_daemon.h"
#include "verbs_private.h"

#define NS_PER_MS UINT64_C(1000000)

/* An object's lease needs the engine that expires it. */
static int
check_ctx(const struct droce_context *ctx)
{
	if (ctx == NULL)
		return EINVAL;
	return ctx->tp != NULL ? 0 : EOPNOTSUPP;
}

static int
set_lease(struct droce_context *ctx, bool mw, uint32_t id, void *obj,
	  uint32_t lease_ms)
{
	int ret = check_ctx(ctx);

	if (ret != 0)
		return verbs_ret_errno(-ret);
	return verbs_ret_errno(prot_lease_set(ctx->prot, mw, id,
					      lease_ms * NS_PER_MS,
					      (uint64_t)(uintptr_t)obj,
					      prot_lease_clock()));
}

static int
renew(struct droce_context *ctx, bool mw, uint32_t id)
{
	int ret = check_ctx(ctx);

	if (ret != 0)
		return verbs_ret_errno(-ret);
	return verbs_ret_errno(prot_lease_renew(ctx->prot, mw, id,
						prot_lease_clock()));
}

static int
query(struct droce_context *ctx, bool mw, uint32_t id,
      struct droce_lease_attr *attr)
{
	struct prot_lease_info info;
	int ret;

	if (ctx == NULL)
		return verbs_ret_errno(-EINVAL);
	ret = prot_lease_query(ctx->prot, mw, id, prot_lease_clock(), &info);
	if (ret != 0)
		return verbs_ret_errno(ret);
	attr->lease_ms = (uint32_t)(info.period / NS_PER_MS);
	attr->expired = info.state == PROT_LEASE_EXPIRED;
	attr->remaining_us = info.remaining / 1000;
	return 0;
}

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
	/* daemon mode: the lease runs in droced's engine */
	ret = pd->context->daemon != NULL ? 0 : check_ctx(pd->context);
	if (ret != 0) {
		errno = ret;
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

/* Daemon mode: droced's handle of the application's MR or MW proxy. */
static uint64_t
dmn_mr(const struct droce_mr *mr)
{
	return ((const struct verbs_dmn_mr *)mr)->h;
}

static uint64_t
dmn_mw(const struct droce_mw *mw)
{
	return ((const struct verbs_dmn_mw *)mw)->h;
}

int
droce_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms)
{
	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mr->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_set_lease(DMN_LEASE_MR, dmn_mr(mr), lease_ms));
	return set_lease(mr->context, false, mr->lkey, mr, lease_ms);
}

int
droce_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms)
{
	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mw->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_set_lease(DMN_LEASE_MW, dmn_mw(mw), lease_ms));
	return set_lease(mw->context, true, mw->handle, mw, lease_ms);
}

int
droce_renew_mr(struct droce_mr *mr)
{
	if (mr == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mr->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_renew(DMN_LEASE_MR, dmn_mr(mr)));
	return renew(mr->context, false, mr->lkey);
}

int
droce_renew_mw(struct droce_mw *mw)
{
	if (mw == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mw->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_renew(DMN_LEASE_MW, dmn_mw(mw)));
	return renew(mw->context, true, mw->handle);
}

int
droce_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr)
{
	if (mr == NULL || attr == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mr->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_query_lease(DMN_LEASE_MR, dmn_mr(mr), attr));
	return query(mr->context, false, mr->lkey, attr);
}

int
droce_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr)
{
	if (mw == NULL || attr == NULL)
		return verbs_ret_errno(-EINVAL);
	if (mw->context->daemon != NULL)
		return verbs_ret_errno(-verbs_dmn_query_lease(DMN_LEASE_MW, dmn_mw(mw), attr));
	return query(mw->context, true, mw->handle, attr);
}
