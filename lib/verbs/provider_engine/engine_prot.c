/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_prot.c - the engine provider's PDs, MRs and MWs: lib/protection's
 * tables of this process, which do the checks; and their leases, which
 * live in lib/protection too (prot_lease_*) while expiry runs on the
 * device's engines (lib/transport tp_event.c), raising the event that
 * names the handle passed here as the lease's cookie.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "engine.h"

#define NS_PER_MS UINT64_C(1000000)

/*
 * How long a dereg waits for the link to free zero-copy frames that still
 * send from the region (lib/transport README.md, "Zero copy"): a port
 * frees them within its next transmit call, a ring's peer when it polls.
 */
#define DEREG_HOLD_WAIT_MS 100
#define DEREG_HOLD_POLL_NS (100 * 1000)

int
verbs_engine_alloc_pd(struct droce_context *ctx, struct droce_pd **out)
{
	struct droce_pd *pd = calloc(1, sizeof(*pd));
	int ret;

	if (pd == NULL)
		return -ENOMEM;
	ret = prot_pd_alloc(engine_ctx(ctx)->prot, &pd->handle);
	if (ret != 0) {
		free(pd);
		return ret;
	}
	pd->context = ctx;
	*out = pd;
	return 0;
}

int
verbs_engine_dealloc_pd(struct droce_pd *pd)
{
	int ret = prot_pd_dealloc(engine_ctx(pd->context)->prot, pd->handle);

	if (ret != 0)
		return ret;
	free(pd);
	return 0;
}

int
verbs_engine_reg_mr(struct droce_pd *pd, void *addr, size_t length, uint64_t iova,
	      int access, struct droce_mr **out)
{
	struct prot_tables *t = engine_ctx(pd->context)->prot;
	struct droce_mr *mr;
	uint32_t key;
	int ret;

	ret = prot_mr_reg_iova(t, pd->handle, addr, length, iova, (unsigned int)access, &key);
	if (ret != 0)
		return ret;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		(void)prot_mr_dereg(t, key);
		return -ENOMEM;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = prot_key_index(key);
	mr->lkey = key;
	mr->rkey = key;
	*out = mr;
	return 0;
}

/*
 * The keys die at the first call, whatever the link holds (a peer's
 * access fails at once).  The memory is the application's again only when
 * no frame the link holds sends from it: the call waits up to
 * DEREG_HOLD_WAIT_MS for that, then reports -EBUSY with the region still
 * registered under dead keys (droce_dereg_mr(3): call it again later).
 */
static int
dereg_wait(struct prot_tables *t, uint32_t key)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = DEREG_HOLD_POLL_NS };
	int ret = prot_mr_dereg(t, key);

	for (uint64_t i = 0; ret == -EINPROGRESS &&
	     i < DEREG_HOLD_WAIT_MS * NS_PER_MS / DEREG_HOLD_POLL_NS; i++) {
		nanosleep(&ts, NULL);
		ret = prot_mr_dereg(t, key);
	}
	return ret == -EINPROGRESS ? -EBUSY : ret;
}

int
verbs_engine_dereg_mr(struct droce_mr *mr)
{
	int ret = dereg_wait(engine_ctx(mr->context)->prot, mr->lkey);

	if (ret != 0)
		return ret;
	/* a lease's expiry may have named it (the event raised under the
	 * table lock, so before the dereg above) */
	verbs_events_forget(mr->context, mr);
	free(mr);
	return 0;
}

/* The flags were checked (droce_rereg_mr); lib/protection checks the rest first. */
int
verbs_engine_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr,
		size_t length, int access)
{
	uint32_t key = mr->lkey;
	int ret;

	ret = prot_mr_rereg(engine_ctx(mr->context)->prot, &key, (unsigned int)flags,
			    (flags & DROCE_REREG_MR_CHANGE_PD) ? pd->handle : 0,
			    addr, length, (unsigned int)access);
	if (ret != 0)
		return ret;
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

int
verbs_engine_alloc_mw(struct droce_pd *pd, int type, struct droce_mw **out)
{
	struct droce_mw *mw = calloc(1, sizeof(*mw));
	uint32_t key;
	int ret;

	if (mw == NULL)
		return -ENOMEM;
	ret = prot_mw_alloc(engine_ctx(pd->context)->prot, pd->handle, type, &key);
	if (ret != 0) {
		free(mw);
		return ret;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = key;
	mw->handle = prot_key_index(key);
	mw->type = (enum droce_mw_type)type;
	*out = mw;
	return 0;
}

int
verbs_engine_dealloc_mw(struct droce_mw *mw)
{
	int ret = prot_mw_dealloc(engine_ctx(mw->context)->prot, mw->handle);

	if (ret != 0)
		return ret;
	verbs_events_forget(mw->context, mw);	/* as verbs_engine_dereg_mr */
	free(mw);
	return 0;
}

/* ---- leases ------------------------------------------------------------------ */

/* An object's lease needs the engine that expires it: a context without
 * a link has none (EOPNOTSUPP). */
static int
set_lease(struct droce_context *ctx, bool mw, uint32_t id, void *obj, uint32_t lease_ms)
{
	struct engine_context *e = engine_ctx(ctx);

	if (e->tp == NULL)
		return -EOPNOTSUPP;
	return prot_lease_set(e->prot, mw, id, lease_ms * NS_PER_MS,
			      (uint64_t)(uintptr_t)obj, prot_lease_clock());
}

static int
renew(struct droce_context *ctx, bool mw, uint32_t id)
{
	struct engine_context *e = engine_ctx(ctx);

	if (e->tp == NULL)
		return -EOPNOTSUPP;
	return prot_lease_renew(e->prot, mw, id, prot_lease_clock());
}

static int
query(struct droce_context *ctx, bool mw, uint32_t id, struct droce_lease_attr *attr)
{
	struct prot_lease_info info;
	int ret;

	ret = prot_lease_query(engine_ctx(ctx)->prot, mw, id, prot_lease_clock(), &info);
	if (ret != 0)
		return ret;
	attr->lease_ms = (uint32_t)(info.period / NS_PER_MS);
	attr->expired = info.state == PROT_LEASE_EXPIRED;
	attr->remaining_us = info.remaining / 1000;
	return 0;
}

int
verbs_engine_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms)
{
	return set_lease(mr->context, false, mr->lkey, mr, lease_ms);
}

int
verbs_engine_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms)
{
	return set_lease(mw->context, true, mw->handle, mw, lease_ms);
}

int
verbs_engine_renew_mr(struct droce_mr *mr)
{
	return renew(mr->context, false, mr->lkey);
}

int
verbs_engine_renew_mw(struct droce_mw *mw)
{
	return renew(mw->context, true, mw->handle);
}

int
verbs_engine_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr)
{
	return query(mr->context, false, mr->lkey, attr);
}

int
verbs_engine_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr)
{
	return query(mw->context, true, mw->handle, attr);
}
