/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_mw.c - memory windows: allocate, bind (type 1 by verb, type 2 by
 * work request), invalidate (LOCAL_INV, SEND_WITH_INV), deallocate.
 * Rule numbers are IBTA Vol. 1 compliance statements.
 */
#include <errno.h>
#include <stdint.h>

#include "prot.h"
#include "prot_private.h"

int
prot_mw_alloc(struct prot_tables *t, uint32_t pd, int type, uint32_t *key)
{
	struct prot_pd_slot *s;
	struct prot_entry *e;
	uint32_t idx;
	int ret = 0;
	int tok;

	if (t == NULL || key == NULL || (type != 1 && type != 2))
		return -EINVAL;
	tok = prot_ctl_lock(t);
	ret = prot_entry_alloc(t, pd, t->ctl->nr_mw, t->ctl->max_mw, &s, &idx);
	if (ret != 0)
		goto out;
	e = &t->entries[idx];
	/* Allocated but unbound: no valid key yet (tag stays 0). */
	e->type = type == 1 ? PROT_OBJ_MW1 : PROT_OBJ_MW2;
	e->pd = pd;
	e->access = 0;
	e->iova = 0;
	e->length = 0;
	e->host = 0;
	e->qpn = 0;
	e->bound = 0;
	e->parent = 0;
	e->variant++;
	s->refs++;
	__atomic_add_fetch(&t->ctl->nr_mw, 1, __ATOMIC_RELAXED);
	*key = prot_key_make(idx, e->variant);
out:
	prot_ctl_unlock(t, tok);
	return ret;
}

struct prot_entry *
prot_mw_by_index(struct prot_tables *t, uint32_t idx)
{
	struct prot_entry *e;

	if (idx == 0 || idx >= t->nentries)
		return NULL;
	e = &t->entries[idx];
	if (e->type != PROT_OBJ_MW1 && e->type != PROT_OBJ_MW2)
		return NULL;
	return e;
}

void
prot_mw_unbind(struct prot_tables *t, struct prot_entry *mw)
{
	if (!mw->bound)
		return;
	prot_revoke(t, mw);
	t->entries[mw->parent].mw_count--;
	if (mw->type == PROT_OBJ_MW2)
		t->ctl->nr_mw2_bound--;
	mw->bound = 0;
	mw->parent = 0;
	mw->access = 0;
	mw->iova = 0;
	mw->length = 0;
	mw->host = 0;
	mw->qpn = 0;
}

int
prot_mw_dealloc(struct prot_tables *t, uint32_t mw_index)
{
	struct prot_entry *e;
	int ret = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = prot_mw_by_index(t, mw_index);
	if (e == NULL) {
		ret = -EINVAL;
	} else {
		prot_mw_unbind(t, e);
		t->ctl->pds[e->pd].refs--;
		prot_index_free(t, mw_index);
		__atomic_sub_fetch(&t->ctl->nr_mw, 1, __ATOMIC_RELAXED);
	}
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_mw_bound(struct prot_tables *t, uint32_t mw_index, bool *bound)
{
	struct prot_entry *e;
	int ret = 0;
	int tok;

	if (t == NULL || bound == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = prot_mw_by_index(t, mw_index);
	if (e == NULL)
		ret = -EINVAL;
	else
		*bound = e->bound != 0;
	prot_ctl_unlock(t, tok);
	return ret;
}

void
prot_mw_unbind_all(struct prot_tables *t, struct prot_entry *mr)
{
	for (uint32_t i = 1; mr->mw_count != 0 && i < t->nentries; i++) {
		struct prot_entry *e = &t->entries[i];

		if ((e->type == PROT_OBJ_MW1 || e->type == PROT_OBJ_MW2) &&
		    e->bound && &t->entries[e->parent] == mr)
			prot_mw_unbind(t, e);
	}
}

/* Rights a window may carry; no zero-based windows in droce. */
static int
check_mw_access(unsigned int access)
{
	/* o10-36.2.2: a type-1 window cannot be zero based.  droce
	 * supports no zero-based type-2 windows either (as mlx5). */
	if (access & PROT_ACC_ZERO_BASED)
		return -EINVAL;
	/* LOCAL_WRITE is accepted and ignored: a window grants remote
	 * rights only, and rxe and mlx5 take a bind that names it (rdma-core's
	 * tests bind with LOCAL_WRITE | REMOTE_WRITE). */
	if (access & ~(PROT_ACC_MW_SUPPORTED | PROT_ACC_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The region rules common to both window types. */
static int
check_bind_mr(const struct prot_entry *mw, const struct prot_entry *mr,
	      uint64_t addr, uint64_t length, unsigned int access)
{
	/* The window and the region belong to the same PD (IBTA 10.6.7
	 * bind rules; ibverbs providers return EPERM). */
	if (mr->pd != mw->pd)
		return -EPERM;
	/* Windows on zero-based regions are not supported (as rxe). */
	if (mr->access & PROT_ACC_ZERO_BASED)
		return -EINVAL;
	/* C10-73: the region must allow window binding. */
	if (!(mr->access & PROT_ACC_MW_BIND))
		return -EINVAL;
	/* C10-74: remote write or atomic through a window need local
	 * write on the region. */
	if ((access & (PROT_ACC_REMOTE_WRITE | PROT_ACC_REMOTE_ATOMIC)) &&
	    !(mr->access & PROT_ACC_LOCAL_WRITE))
		return -EINVAL;
	/* C10-75: the window lies inside the region (overflow-free). */
	if (addr < mr->iova || length > mr->length ||
	    addr - mr->iova > mr->length - length)
		return -EINVAL;
	return 0;
}

static void
do_bind(struct prot_tables *t, struct prot_entry *mw, struct prot_entry *mr,
	uint64_t addr, uint64_t length, unsigned int access, uint32_t qpn)
{
	mw->iova = addr;
	mw->length = length;
	mw->host = mr->host + (addr - mr->iova);
	mw->access = access & PROT_ACC_MW_SUPPORTED;
	mw->qpn = qpn;
	mw->parent = (uint32_t)(mr - t->entries);
	mw->bound = 1;
	mr->mw_count++;
	if (mw->type == PROT_OBJ_MW2)
		t->ctl->nr_mw2_bound++;
}

/* new_rkey 0: the next variant; else the key the bind must give it.
 * qp_pd: the PD of the QP whose work request binds (NULL: the verb). */
static int
bind_type1(struct prot_tables *t, uint32_t mw_index, uint32_t new_rkey,
	   uint32_t mr_key, uint64_t addr, uint64_t length, unsigned int access,
	   const uint32_t *qp_pd, uint32_t *rkey)
{
	struct prot_entry *mw;
	struct prot_entry *mr = NULL;
	int ret;
	int tok;

	if (t == NULL || rkey == NULL)
		return -EINVAL;
	ret = check_mw_access(access);
	if (ret != 0)
		return ret;

	tok = prot_ctl_lock(t);
	mw = prot_mw_by_index(t, mw_index);
	/* an expired window stays unbound until deallocated */
	if (mw == NULL || mw->type != PROT_OBJ_MW1 || mw->lease == PROT_LEASE_EXPIRED ||
	    (new_rkey != 0 && (prot_key_index(new_rkey) != mw_index ||
			       prot_key_variant(new_rkey) == mw->variant))) {
		ret = -EINVAL;
		goto out;
	}
	/* A QP binds or unbinds only its own PD's windows: with droced the
	 * applications share these tables, and a work request naming another
	 * application's window must fail (C10-72's rule, for type 1 too). */
	if (qp_pd != NULL && mw->pd != *qp_pd) {
		ret = -EPERM;
		goto out;
	}
	if (length != 0) {
		mr = prot_entry_by_key(t, mr_key, PROT_OBJ_MR);
		if (mr == NULL) {
			ret = -EINVAL;
			goto out;
		}
		ret = check_bind_mr(mw, mr, addr, length, access);
		if (ret != 0)
			goto out;
	}
	/* Validated.  A rebind or unbind kills the old rkey first; every
	 * bind, including length 0 (unbind), hands out a new variant. */
	prot_mw_unbind(t, mw);
	mw->variant = new_rkey != 0 ? prot_key_variant(new_rkey) :
				      (uint8_t)(mw->variant + 1);
	*rkey = prot_key_make(mw_index, mw->variant);
	if (mr != NULL) {
		do_bind(t, mw, mr, addr, length, access, 0);
		prot_publish(mw, *rkey);
	}
out:
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_mw_bind_type1(struct prot_tables *t, uint32_t mw_index, uint32_t mr_key,
		   uint64_t addr, uint64_t length, unsigned int access,
		   uint32_t *rkey)
{
	return bind_type1(t, mw_index, 0, mr_key, addr, length, access, NULL, rkey);
}

int
prot_mw_bind_type1_key(struct prot_tables *t, uint32_t mw_index,
		       uint32_t new_rkey, uint32_t mr_key, uint64_t addr,
		       uint64_t length, unsigned int access, uint32_t qp_pd)
{
	uint32_t rkey;

	if (new_rkey == 0)
		return -EINVAL;
	return bind_type1(t, mw_index, new_rkey, mr_key, addr, length, access, &qp_pd,
			  &rkey);
}

int
prot_mw_bind_type2(struct prot_tables *t, uint32_t mw_index,
		   uint32_t new_rkey, uint32_t mr_key, uint64_t addr,
		   uint64_t length, unsigned int access, uint32_t qp_pd,
		   uint32_t qpn)
{
	struct prot_entry *mw;
	struct prot_entry *mr;
	int ret;
	int tok;

	if (t == NULL)
		return -EINVAL;
	ret = check_mw_access(access);
	if (ret != 0)
		return ret;

	tok = prot_ctl_lock(t);
	mw = prot_mw_by_index(t, mw_index);
	if (mw == NULL || mw->type != PROT_OBJ_MW2 || mw->lease == PROT_LEASE_EXPIRED ||
	    prot_key_index(new_rkey) != mw_index) {
		ret = -EINVAL;
		goto out;
	}
	/* o10-37.2.30: only a free (unbound or invalidated) window. */
	if (mw->bound) {
		ret = -EINVAL;
		goto out;
	}
	/* The consumer-owned key byte must change, so that a key of an
	 * earlier binding can never become valid again right away. */
	if (prot_key_variant(new_rkey) == mw->variant) {
		ret = -EINVAL;
		goto out;
	}
	/* C10-72: the QP and the window are in the same PD. */
	if (qp_pd != mw->pd) {
		ret = -EPERM;
		goto out;
	}
	/* o10-37.2.40: a type-2 window cannot be bound with length 0
	 * (it is freed by invalidation, not by a zero-length bind). */
	if (length == 0) {
		ret = -EINVAL;
		goto out;
	}
	mr = prot_entry_by_key(t, mr_key, PROT_OBJ_MR);
	if (mr == NULL) {
		ret = -EINVAL;
		goto out;
	}
	ret = check_bind_mr(mw, mr, addr, length, access);
	if (ret != 0)
		goto out;
	/* The window was revoked when it was last unbound (tag 0 since,
	 * with a grace period): fields may be written now. */
	do_bind(t, mw, mr, addr, length, access, qpn);
	mw->variant = prot_key_variant(new_rkey);
	prot_publish(mw, new_rkey);
out:
	prot_ctl_unlock(t, tok);
	return ret;
}

static int
invalidate(struct prot_tables *t, uint32_t rkey, uint32_t qp_pd,
	   bool remote, uint32_t qpn)
{
	struct prot_entry *e;
	uint32_t idx = prot_key_index(rkey);
	int ret = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = prot_mw_by_index(t, idx);
	/* o10-37.2.26: type-1 windows cannot be invalidated; regions
	 * cannot either (no fast-register MRs in droce yet). */
	if (e == NULL || e->type != PROT_OBJ_MW2) {
		ret = -EINVAL;
		goto out;
	}
	/* The key must be the window's current, valid rkey. */
	if (__atomic_load_n(&e->tag, __ATOMIC_RELAXED) !=
	    (PROT_TAG_VALID | rkey)) {
		ret = -EINVAL;
		goto out;
	}
	/* Same PD as the QP (C10-72 applies to the whole binding). */
	if (e->pd != qp_pd) {
		ret = -EPERM;
		goto out;
	}
	/* Send with Invalidate: only through the QP the window is bound
	 * to (type 2B windows belong to their QP). */
	if (remote && e->qpn != qpn) {
		ret = -EPERM;
		goto out;
	}
	/* Dead before we return: revoke waits for a grace period. */
	prot_mw_unbind(t, e);
out:
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_local_invalidate(struct prot_tables *t, uint32_t rkey, uint32_t qp_pd)
{
	return invalidate(t, rkey, qp_pd, false, 0);
}

int
prot_remote_invalidate(struct prot_tables *t, uint32_t rkey, uint32_t qp_pd,
		       uint32_t qpn)
{
	return invalidate(t, rkey, qp_pd, true, qpn);
}

/*
 * IBTA Vol. 1 10.6.7.2: a type-2 window's binding belongs to the QP it was
 * bound through (type 2B: usable through that QP alone, C10-72), so it
 * cannot outlive the QP: destroying the QP invalidates the window, which
 * returns to the free state (bindable again, its old rkey dead).  Were the
 * binding kept, the next QP handed the same QPN would pass the "window's
 * QP" check of prot_lookup with another peer behind it.  A scan of the
 * table, skipped when no type-2 window is bound: destroying a QP is rare
 * and on the control path.
 */
int
prot_mw_invalidate_qp(struct prot_tables *t, uint32_t qpn)
{
	int n = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	for (uint32_t i = 1; t->ctl->nr_mw2_bound != 0 && i < t->nentries; i++) {
		struct prot_entry *e = &t->entries[i];

		if (e->type == PROT_OBJ_MW2 && e->bound && e->qpn == qpn) {
			prot_mw_unbind(t, e);	/* dead before we return */
			n++;
		}
	}
	prot_ctl_unlock(t, tok);
	return n;
}
