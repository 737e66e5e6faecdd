/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_private.h - control-path internals of lib/protection.
 */
#ifndef DROCE_PROT_PRIVATE_H
#define DROCE_PROT_PRIVATE_H

#include <pthread.h>
#include <stdint.h>

#include "prot.h"

struct prot_pd_slot {
	uint32_t refs;		/* MRs, MWs and external references */
	uint8_t used;
};

/* An entry's lease (prot_lease.c), by key index. */
struct prot_lease {
	uint64_t deadline;	/* ns */
	uint64_t period;	/* ns */
	uint64_t cookie;	/* the owner's, for the expiry callback */
	uint32_t heap_pos;	/* in prot_ctl.lease_heap while active */
};

struct prot_ctl {
	pthread_mutex_t lock;		/* serialises all control calls */
	struct prot_alloc_ops ops;
	int socket_id;
	/* Free key indices, FIFO ring seeded in a random permutation. */
	uint32_t *ring;
	uint32_t ring_cap;
	uint32_t ring_head;
	uint32_t ring_count;
	/* Protection domains: handle = slot; free handles as a stack. */
	struct prot_pd_slot *pds;
	uint32_t *pd_free;
	uint32_t pd_free_count;
	uint32_t max_pd;
	uint32_t max_mr;
	uint32_t max_mw;
	uint32_t nr_mr;
	uint32_t nr_mw;
	uint32_t nr_mw2_bound;		/* type-2 windows bound to a QP */
	/* Leases: made at the first one (nentries each). */
	struct prot_lease *leases;
	uint32_t *lease_heap;		/* min-heap of indices by deadline */
	uint32_t nr_leases;		/* active ones, in the heap */
};

/* Lock the control path; a calling reader goes offline meanwhile.
 * Returns a token for prot_ctl_unlock. */
int prot_ctl_lock(struct prot_tables *t);
void prot_ctl_unlock(struct prot_tables *t, int token);

/* Key index allocation (under the lock).  0 when none is free. */
uint32_t prot_index_alloc(struct prot_tables *t);
void prot_index_free(struct prot_tables *t, uint32_t idx);

/*
 * Under the lock: a new MR or MW entry of PD pd, given how many of its
 * kind exist (nr) and may (max).  Sets *slot (the PD) and *idx; 0, or
 * -EINVAL (unknown PD) / -ENOMEM (limit reached, no free index).
 */
int prot_entry_alloc(struct prot_tables *t, uint32_t pd, uint32_t nr,
		     uint32_t max, struct prot_pd_slot **slot, uint32_t *idx);

/* Under the lock: validity of a PD handle. */
static inline struct prot_pd_slot *
prot_pd_slot(struct prot_tables *t, uint32_t pd)
{
	struct prot_ctl *c = t->ctl;

	if (pd >= c->max_pd || !c->pds[pd].used)
		return NULL;
	return &c->pds[pd];
}

/* Under the lock: the entry whose current valid key is key, of type. */
static inline struct prot_entry *
prot_entry_by_key(struct prot_tables *t, uint32_t key, enum prot_obj_type type)
{
	uint32_t idx = prot_key_index(key);
	struct prot_entry *e;

	if (idx == 0 || idx >= t->nentries)
		return NULL;
	e = &t->entries[idx];
	if (e->type != type ||
	    __atomic_load_n(&e->tag, __ATOMIC_RELAXED) != (PROT_TAG_VALID | key))
		return NULL;
	return e;
}

/* Under the lock: the MR of key, valid, expired by its lease or draining
 * (its key dead then, the entry kept until dereg). */
static inline struct prot_entry *
prot_mr_by_key_or_expired(struct prot_tables *t, uint32_t key)
{
	struct prot_entry *e = prot_entry_by_key(t, key, PROT_OBJ_MR);
	uint32_t idx = prot_key_index(key);

	if (e != NULL || idx == 0 || idx >= t->nentries)
		return e;
	e = &t->entries[idx];
	if (e->type != PROT_OBJ_MR ||
	    (e->lease != PROT_LEASE_EXPIRED && !e->draining) ||
	    e->variant != prot_key_variant(key))
		return NULL;
	return e;
}

/* Make key the entry's only valid key (fields written before). */
static inline void
prot_publish(struct prot_entry *e, uint32_t key)
{
	__atomic_store_n(&e->tag, PROT_TAG_VALID | key, __ATOMIC_RELEASE);
}

/* Kill the entry's key; on return no reader can still be using it. */
void prot_revoke(struct prot_tables *t, struct prot_entry *e);

/* Under the lock: the entry (index idx) goes away; its lease with it. */
void prot_lease_forget(struct prot_tables *t, uint32_t idx);
/* Under the lock: revoke a bound window's key, detach it from its region. */
void prot_mw_unbind(struct prot_tables *t, struct prot_entry *mw);
/* Under the lock: unbind every window bound to MR entry mr (revoked). */
void prot_mw_unbind_all(struct prot_tables *t, struct prot_entry *mr);
/* Under the lock: the MW entry of index idx, or NULL. */
struct prot_entry *prot_mw_by_index(struct prot_tables *t, uint32_t idx);

#endif /* DROCE_PROT_PRIVATE_H */
