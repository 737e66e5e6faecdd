/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_mr.c - memory regions: register, deregister, re-register.
 * Each call validates everything first (check_*), then applies (do_*).
 */
#include <errno.h>
#include <stdint.h>

#include "prot.h"
#include "prot_private.h"

/* Access flags of a region, as ib_check_mr_access does for ibverbs. */
static int
check_mr_access(unsigned int access)
{
	if (access & PROT_ACC_ON_DEMAND)
		return -EOPNOTSUPP;
	if (access & ~PROT_ACC_MR_SUPPORTED)
		return -EINVAL;
	/* Remote write/atomic imply the HCA writes local memory: the
	 * region must also allow local write (IBTA ch. 10.6 registration
	 * rules; ibverbs/ib_check_mr_access reject it with EINVAL). */
	if ((access & (PROT_ACC_REMOTE_WRITE | PROT_ACC_REMOTE_ATOMIC)) &&
	    !(access & PROT_ACC_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Zero-length, NULL and wrapping ranges are refused (EINVAL). */
static int
check_mr_range(const void *addr, uint64_t length)
{
	uintptr_t a = (uintptr_t)addr;

	if (addr == NULL || length == 0)
		return -EINVAL;
	if (length > (uint64_t)UINTPTR_MAX - a)
		return -EINVAL;
	return 0;
}

/* The peer's range [iova, iova+length) must not wrap either; a ZERO_BASED
 * region starts at 0. */
static int
check_mr_iova(uint64_t iova, uint64_t length, unsigned int access)
{
	if ((access & PROT_ACC_ZERO_BASED) && iova != 0)
		return -EINVAL;
	if (length > UINT64_MAX - iova)
		return -EINVAL;
	return 0;
}

/* The iova a region of host memory has when none is given. */
static uint64_t
mr_default_iova(const void *addr, unsigned int access)
{
	return (access & PROT_ACC_ZERO_BASED) ? 0 : (uint64_t)(uintptr_t)addr;
}

static void
do_mr_fill(struct prot_entry *e, uint32_t pd, void *addr, uint64_t iova,
	   uint64_t length, unsigned int access)
{
	e->host = (uint64_t)(uintptr_t)addr;
	e->iova = iova;
	e->length = length;
	e->pd = pd;
	e->access = access;
	e->qpn = 0;
}

int
prot_mr_reg(struct prot_tables *t, uint32_t pd, void *addr, uint64_t length,
	    unsigned int access, uint32_t *key)
{
	return prot_mr_reg_iova(t, pd, addr, length, mr_default_iova(addr, access),
				access, key);
}

int
prot_mr_reg_iova(struct prot_tables *t, uint32_t pd, void *addr,
		 uint64_t length, uint64_t iova, unsigned int access,
		 uint32_t *key)
{
	struct prot_pd_slot *s;
	struct prot_entry *e;
	uint32_t idx;
	int ret;
	int tok;

	if (t == NULL || key == NULL)
		return -EINVAL;
	ret = check_mr_access(access);
	if (ret == 0)
		ret = check_mr_range(addr, length);
	if (ret == 0)
		ret = check_mr_iova(iova, length, access);
	if (ret != 0)
		return ret;

	tok = prot_ctl_lock(t);
	ret = prot_entry_alloc(t, pd, t->ctl->nr_mr, t->ctl->max_mr, &s, &idx);
	if (ret != 0)
		goto out;
	e = &t->entries[idx];
	do_mr_fill(e, pd, addr, iova, length, access);
	e->type = PROT_OBJ_MR;
	e->mw_count = 0;
	e->bound = 0;
	e->variant++;
	s->refs++;
	__atomic_add_fetch(&t->ctl->nr_mr, 1, __ATOMIC_RELAXED);
	*key = prot_key_make(idx, e->variant);
	prot_publish(e, *key);
out:
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_mr_dereg(struct prot_tables *t, uint32_t key)
{
	struct prot_entry *e;
	int ret = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	e = prot_mr_by_key_or_expired(t, key);	/* expired: only freed here */
	if (e == NULL) {
		ret = -EINVAL;
	} else if (e->mw_count != 0) {
		/* droce refuses to deregister a region with bound windows
		 * (rdma-core/rxe semantics): unbind or invalidate first. */
		ret = -EBUSY;
	} else {
		if (!e->draining)
			prot_revoke(t, e);
		/* after the grace period every hold under the key is counted */
		e->draining = __atomic_load_n(&e->tx_holds, __ATOMIC_ACQUIRE) != 0;
		if (e->draining) {
			ret = -EINPROGRESS;
		} else {
			t->ctl->pds[e->pd].refs--;
			prot_index_free(t, prot_key_index(key));
			__atomic_sub_fetch(&t->ctl->nr_mr, 1, __ATOMIC_RELAXED);
		}
	}
	prot_ctl_unlock(t, tok);
	return ret;
}

uint32_t
prot_mr_tx_holds(const struct prot_tables *t, uint32_t key)
{
	uint32_t idx = prot_key_index(key);

	if (t == NULL || idx == 0 || idx >= t->nentries ||
	    t->entries[idx].type != PROT_OBJ_MR)
		return 0;
	return __atomic_load_n(&t->entries[idx].tx_holds, __ATOMIC_ACQUIRE);
}

int
prot_mr_rereg(struct prot_tables *t, uint32_t *key, unsigned int flags,
	      uint32_t pd, void *addr, uint64_t length, unsigned int access)
{
	struct prot_entry *e;
	uint32_t new_pd;
	uint64_t new_len, new_iova;
	void *new_addr;
	unsigned int new_access;
	int ret = 0;
	int tok;

	if (t == NULL || key == NULL)
		return -EINVAL;
	if (flags == 0 || (flags & ~(PROT_REREG_TRANSLATION | PROT_REREG_PD |
				     PROT_REREG_ACCESS)))
		return -EINVAL;
	if (flags & PROT_REREG_ACCESS) {
		ret = check_mr_access(access);
		if (ret != 0)
			return ret;
	}
	if (flags & PROT_REREG_TRANSLATION) {
		ret = check_mr_range(addr, length);
		if (ret != 0)
			return ret;
	}

	tok = prot_ctl_lock(t);
	e = prot_entry_by_key(t, *key, PROT_OBJ_MR);
	if (e == NULL) {
		ret = -EINVAL;
		goto out;
	}
	if (e->mw_count != 0) {
		/* Windows derive their translation from the region. */
		ret = -EBUSY;
		goto out;
	}
	if ((flags & PROT_REREG_TRANSLATION) &&
	    __atomic_load_n(&e->tx_holds, __ATOMIC_ACQUIRE) != 0) {
		/* frames the link holds still send from the old memory */
		ret = -EBUSY;
		goto out;
	}
	new_pd = (flags & PROT_REREG_PD) ? pd : e->pd;
	if ((flags & PROT_REREG_PD) && prot_pd_slot(t, pd) == NULL) {
		ret = -EINVAL;
		goto out;
	}
	new_access = (flags & PROT_REREG_ACCESS) ? access : e->access;
	new_addr = (flags & PROT_REREG_TRANSLATION) ?
		addr : (void *)(uintptr_t)e->host;
	new_len = (flags & PROT_REREG_TRANSLATION) ? length : e->length;
	/* a region registered with an iova keeps it while its translation
	 * and its base (ZERO_BASED or not) stay */
	new_iova = e->iova;
	if ((flags & PROT_REREG_TRANSLATION) ||
	    ((new_access ^ e->access) & PROT_ACC_ZERO_BASED))
		new_iova = mr_default_iova(new_addr, new_access);
	if (check_mr_iova(new_iova, new_len, new_access) != 0) {
		ret = -EINVAL;
		goto out;
	}

	/* Validated: revoke the old key, wait out readers, then apply. */
	prot_revoke(t, e);
	if (new_pd != e->pd) {
		t->ctl->pds[e->pd].refs--;
		t->ctl->pds[new_pd].refs++;
	}
	do_mr_fill(e, new_pd, new_addr, new_iova, new_len, new_access);
	/* A new translation is new memory: new keys.  A new PD or new rights
	 * keep them (as rxe and mlx5, and rdma-core's tests expect): the PD
	 * and the rights are checked on every access. */
	if (flags & PROT_REREG_TRANSLATION) {
		e->variant++;
		*key = prot_key_make(prot_key_index(*key), e->variant);
	}
	prot_publish(e, *key);
out:
	prot_ctl_unlock(t, tok);
	return ret;
}
