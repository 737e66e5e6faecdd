/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_lease.c - leases on MRs and MWs (droce extension): a min-heap of
 * leased entries by deadline, under the table lock, whose earliest
 * deadline is published in t->lease_next for the expiry driver (the
 * transport's engine 0) to test without the lock.  Expiry revokes with
 * the same grace period as dereg / invalidate (prot_revoke).
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "prot.h"
#include "prot_private.h"

uint64_t
prot_lease_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the heap (under the lock) ------------------------------------------- */

static uint64_t
deadline_at(const struct prot_ctl *c, uint32_t pos)
{
	return c->leases[c->lease_heap[pos]].deadline;
}

static void
heap_place(struct prot_ctl *c, uint32_t pos, uint32_t idx)
{
	c->lease_heap[pos] = idx;
	c->leases[idx].heap_pos = pos;
}

static void
heap_swap(struct prot_ctl *c, uint32_t a, uint32_t b)
{
	uint32_t ia = c->lease_heap[a];

	heap_place(c, a, c->lease_heap[b]);
	heap_place(c, b, ia);
}

/* Restore the heap order around pos after its deadline changed. */
static void
heap_fix(struct prot_ctl *c, uint32_t pos)
{
	while (pos > 0 && deadline_at(c, (pos - 1) / 2) > deadline_at(c, pos)) {
		heap_swap(c, pos, (pos - 1) / 2);
		pos = (pos - 1) / 2;
	}
	for (;;) {
		uint32_t l = 2 * pos + 1, r = l + 1, min = pos;

		if (l < c->nr_leases && deadline_at(c, l) < deadline_at(c, min))
			min = l;
		if (r < c->nr_leases && deadline_at(c, r) < deadline_at(c, min))
			min = r;
		if (min == pos)
			return;
		heap_swap(c, pos, min);
		pos = min;
	}
}

static void
publish_next(struct prot_tables *t)
{
	struct prot_ctl *c = t->ctl;

	__atomic_store_n(&t->lease_next,
			 c->nr_leases != 0 ? deadline_at(c, 0) : UINT64_MAX,
			 __ATOMIC_RELAXED);
}

static void
heap_insert(struct prot_tables *t, uint32_t idx)
{
	struct prot_ctl *c = t->ctl;

	heap_place(c, c->nr_leases++, idx);
	heap_fix(c, c->nr_leases - 1);
	publish_next(t);
}

static void
heap_remove(struct prot_tables *t, uint32_t idx)
{
	struct prot_ctl *c = t->ctl;
	uint32_t pos = c->leases[idx].heap_pos;

	c->nr_leases--;
	if (pos != c->nr_leases) {
		heap_place(c, pos, c->lease_heap[c->nr_leases]);
		heap_fix(c, pos);
	}
	publish_next(t);
}

/* ---- objects ------------------------------------------------------------- */

/* Under the lock: the MR of key (valid or expired) or the MW of index id. */
static struct prot_entry *
lease_entry(struct prot_tables *t, bool mw, uint32_t id)
{
	return mw ? prot_mw_by_index(t, id) : prot_mr_by_key_or_expired(t, id);
}

static int
leases_alloc(struct prot_tables *t)
{
	struct prot_ctl *c = t->ctl;

	if (c->leases != NULL)
		return 0;
	c->leases = c->ops.zalloc(c->ops.arg, t->nentries * sizeof(*c->leases),
				  64, c->socket_id);
	c->lease_heap = c->ops.zalloc(c->ops.arg,
				      t->nentries * sizeof(*c->lease_heap), 64,
				      c->socket_id);
	if (c->leases != NULL && c->lease_heap != NULL)
		return 0;
	c->ops.free(c->ops.arg, c->leases);
	c->ops.free(c->ops.arg, c->lease_heap);
	c->leases = NULL;
	c->lease_heap = NULL;
	return -ENOMEM;
}

void
prot_lease_forget(struct prot_tables *t, uint32_t idx)
{
	struct prot_entry *e = &t->entries[idx];

	if (e->lease == PROT_LEASE_ACTIVE)
		heap_remove(t, idx);
	e->lease = PROT_LEASE_NONE;
}

/*
 * Whether the lease of e is over at now: expired by the engine, or past its
 * deadline and not yet expired (the engine that expires it did not run
 * since).  A lease is a promise of no access after the deadline, so once
 * it is due nothing may extend it, whichever of the expiry and the
 * owner's call runs first.
 */
static bool
lease_over(const struct prot_tables *t, const struct prot_entry *e, uint64_t now)
{
	if (e->lease == PROT_LEASE_EXPIRED)
		return true;
	return e->lease == PROT_LEASE_ACTIVE &&
	       t->ctl->leases[e - t->entries].deadline <= now;
}

static int
do_lease_set(struct prot_tables *t, struct prot_entry *e, uint64_t period,
	     uint64_t cookie, uint64_t now)
{
	uint32_t idx = (uint32_t)(e - t->entries);
	struct prot_lease *l;

	if (lease_over(t, e, now))
		return -ETIME;
	if (period == 0) {
		prot_lease_forget(t, idx);
		return 0;
	}
	if (leases_alloc(t) != 0)
		return -ENOMEM;
	l = &t->ctl->leases[idx];
	l->period = period;
	l->cookie = cookie;
	l->deadline = now + period;
	if (e->lease == PROT_LEASE_ACTIVE) {
		heap_fix(t->ctl, l->heap_pos);
		publish_next(t);
	} else {
		e->lease = PROT_LEASE_ACTIVE;
		heap_insert(t, idx);
	}
	return 0;
}

int
prot_lease_set(struct prot_tables *t, bool mw, uint32_t id, uint64_t period,
	       uint64_t cookie, uint64_t now)
{
	struct prot_entry *e;
	int ret;
	int tok;

	if (t == NULL || period > UINT64_MAX - now)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = lease_entry(t, mw, id);
	ret = e == NULL ? -EINVAL : do_lease_set(t, e, period, cookie, now);
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_lease_renew(struct prot_tables *t, bool mw, uint32_t id, uint64_t now)
{
	struct prot_entry *e;
	int ret = -EINVAL;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = lease_entry(t, mw, id);
	if (e == NULL)
		ret = -EINVAL;
	else if (e->lease == PROT_LEASE_NONE)
		ret = -ENOENT;
	else if (lease_over(t, e, now))
		ret = -ETIME;
	else
		ret = do_lease_set(t, e, t->ctl->leases[e - t->entries].period,
				   t->ctl->leases[e - t->entries].cookie, now);
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_lease_query(struct prot_tables *t, bool mw, uint32_t id, uint64_t now,
		 struct prot_lease_info *info)
{
	const struct prot_lease *l;
	struct prot_entry *e;
	int tok;

	if (t == NULL || info == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = lease_entry(t, mw, id);
	if (e != NULL) {
		/* due counts as expired: no renewal can save it any more */
		info->state = lease_over(t, e, now) ? PROT_LEASE_EXPIRED :
			      (enum prot_lease_state)e->lease;
		info->period = 0;
		info->remaining = 0;
		if (e->lease != PROT_LEASE_NONE) {
			l = &t->ctl->leases[e - t->entries];
			info->period = l->period;
			if (info->state == PROT_LEASE_ACTIVE)
				info->remaining = l->deadline - now;
		}
	}
	prot_ctl_unlock(t, tok);
	return e == NULL ? -EINVAL : 0;
}

/*
 * The revocation of dereg (MR) or of an unbind / invalidation (MW), the
 * entry kept as EXPIRED.  A region's windows go first (their translation
 * comes from it), each with its grace period, then the region's own key.
 */
static void
expire_entry(struct prot_tables *t, struct prot_entry *e)
{
	if (e->type == PROT_OBJ_MR) {
		prot_mw_unbind_all(t, e);
		prot_revoke(t, e);
	} else {
		prot_mw_unbind(t, e);
	}
	e->lease = PROT_LEASE_EXPIRED;
}

int
prot_lease_expire(struct prot_tables *t, uint64_t now, prot_lease_cb cb, void *arg)
{
	struct prot_ctl *c;
	int n = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	c = t->ctl;
	tok = prot_ctl_lock(t);
	while (c->nr_leases != 0 && deadline_at(c, 0) <= now) {
		uint32_t idx = c->lease_heap[0];
		struct prot_entry *e = &t->entries[idx];

		heap_remove(t, idx);
		expire_entry(t, e);
		n++;
		if (cb != NULL)
			cb(arg, e->type != PROT_OBJ_MR, c->leases[idx].cookie);
	}
	prot_ctl_unlock(t, tok);
	return n;
}
