/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prot_table.c - table creation, key index allocation, PDs and the
 * quiescent-state based revocation (QSBR) used by every revoking call.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "prot.h"
#include "prot_private.h"

/* ---- allocator hook: libc default ---------------------------------------- */

static void *
libc_zalloc(void *arg, size_t size, size_t align, int socket)
{
	void *p;

	(void)arg;
	(void)socket;
	if (align < sizeof(void *))
		align = sizeof(void *);
	size = (size + align - 1) & ~(align - 1);
	p = aligned_alloc(align, size);
	if (p != NULL)
		memset(p, 0, size);
	return p;
}

static void
libc_free(void *arg, void *ptr)
{
	(void)arg;
	free(ptr);
}

static const struct prot_alloc_ops libc_ops = {
	.zalloc = libc_zalloc,
	.free = libc_free,
	.arg = NULL,
};

/* ---- PRNG for the index permutation and initial variants ------------------ */

static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
random_seed(void)
{
	uint64_t seed = 0;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == sizeof(seed) &&
	    seed != 0)
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		(uint64_t)(uintptr_t)&seed;
}

/* ---- creation ------------------------------------------------------------ */

static void *
ctl_zalloc(struct prot_ctl *c, size_t size, size_t align, int socket)
{
	return c->ops.zalloc(c->ops.arg, size, align, socket);
}

static void
tables_free(struct prot_tables *t, const struct prot_alloc_ops *ops)
{
	struct prot_ctl *c = t->ctl;

	if (c != NULL) {
		pthread_mutex_destroy(&c->lock);
		ops->free(ops->arg, c->ring);
		ops->free(ops->arg, c->pds);
		ops->free(ops->arg, c->pd_free);
		ops->free(ops->arg, c->leases);
		ops->free(ops->arg, c->lease_heap);
		ops->free(ops->arg, c);
	}
	ops->free(ops->arg, t->entries);
	ops->free(ops->arg, t);
}

int
prot_tables_create(const struct prot_config *cfg,
		   const struct prot_alloc_ops *ops, struct prot_tables **out)
{
	struct prot_config def = { 0 };
	struct prot_tables *t;
	struct prot_ctl *c;
	uint64_t rng;
	uint64_t n;
	uint32_t i;

	if (out == NULL)
		return -EINVAL;
	if (cfg == NULL)
		cfg = &def;
	if (ops == NULL)
		ops = &libc_ops;
	if (ops->zalloc == NULL || ops->free == NULL)
		return -EINVAL;

	def = *cfg;
	if (def.max_pd == 0)
		def.max_pd = PROT_DEFAULT_MAX_PD;
	if (def.max_mr == 0)
		def.max_mr = PROT_DEFAULT_MAX_MR;
	if (def.max_mw == 0)
		def.max_mw = PROT_DEFAULT_MAX_MW;
	/* Index 0 is reserved, so max_mr + max_mw indices must fit 24 bits. */
	n = (uint64_t)def.max_mr + def.max_mw + 1;
	if (n > (uint64_t)PROT_KEY_INDEX_MAX + 1 || def.max_pd > (1u << 24))
		return -EINVAL;
	rng = def.seed != 0 ? def.seed : random_seed();

	t = ops->zalloc(ops->arg, sizeof(*t), 64, def.socket_id);
	if (t == NULL)
		return -ENOMEM;
	c = ops->zalloc(ops->arg, sizeof(*c), 64, def.socket_id);
	t->ctl = c;
	if (c == NULL)
		goto nomem;
	c->ops = *ops;
	c->socket_id = def.socket_id;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		ops->free(ops->arg, c);
		t->ctl = NULL;
		goto nomem;
	}
	t->nentries = (uint32_t)n;
	t->epoch = 1;
	t->lease_next = UINT64_MAX;
	t->entries = ctl_zalloc(c, n * sizeof(struct prot_entry), 64,
				def.socket_id);
	c->ring = ctl_zalloc(c, (n - 1) * sizeof(uint32_t), 64, def.socket_id);
	c->pds = ctl_zalloc(c, def.max_pd * sizeof(struct prot_pd_slot), 64,
			    def.socket_id);
	c->pd_free = ctl_zalloc(c, def.max_pd * sizeof(uint32_t), 64,
				def.socket_id);
	if (t->entries == NULL || c->ring == NULL || c->pds == NULL ||
	    c->pd_free == NULL)
		goto nomem;
	c->max_pd = def.max_pd;
	c->max_mr = def.max_mr;
	c->max_mw = def.max_mw;

	/*
	 * Key indices 1..n-1 in a uniformly random order (Fisher-Yates,
	 * splitmix64 seeded from getrandom): the first keys handed out are
	 * not 1, 2, 3... and a peer cannot count its way to live keys.
	 * Freed indices go to the tail of the FIFO, so an index is reused
	 * as late as possible.  Initial variants are random too.
	 */
	c->ring_cap = (uint32_t)(n - 1);
	for (i = 0; i < c->ring_cap; i++)
		c->ring[i] = i + 1;
	for (i = c->ring_cap; i > 1; i--) {
		uint32_t j = (uint32_t)(splitmix64(&rng) % i);
		uint32_t tmp = c->ring[i - 1];

		c->ring[i - 1] = c->ring[j];
		c->ring[j] = tmp;
	}
	c->ring_head = 0;
	c->ring_count = c->ring_cap;
	for (i = 0; i < n; i++)
		t->entries[i].variant = (uint8_t)splitmix64(&rng);

	/* PD handles: plain stack, lowest first (never on the wire). */
	for (i = 0; i < def.max_pd; i++)
		c->pd_free[i] = def.max_pd - 1 - i;
	c->pd_free_count = def.max_pd;

	*out = t;
	return 0;
nomem:
	tables_free(t, ops);
	return -ENOMEM;
}

int
prot_tables_destroy(struct prot_tables *t)
{
	struct prot_alloc_ops ops;
	int tok;

	if (t == NULL)
		return 0;
	tok = prot_ctl_lock(t);
	if (t->ctl->pd_free_count != t->ctl->max_pd) {
		prot_ctl_unlock(t, tok);
		return -EBUSY;
	}
	prot_ctl_unlock(t, tok);
	ops = t->ctl->ops;
	tables_free(t, &ops);
	return 0;
}

uint32_t
prot_mr_count(const struct prot_tables *t)
{
	return __atomic_load_n(&t->ctl->nr_mr, __ATOMIC_RELAXED);
}

void
prot_tables_limits(const struct prot_tables *t, struct prot_config *limits)
{
	limits->max_pd = t->ctl->max_pd;
	limits->max_mr = t->ctl->max_mr;
	limits->max_mw = t->ctl->max_mw;
}

uint32_t
prot_mw_count(const struct prot_tables *t)
{
	return __atomic_load_n(&t->ctl->nr_mw, __ATOMIC_RELAXED);
}

/* ---- key indices ----------------------------------------------------------- */

uint32_t
prot_index_alloc(struct prot_tables *t)
{
	struct prot_ctl *c = t->ctl;
	uint32_t idx;

	if (c->ring_count == 0)
		return 0;
	idx = c->ring[c->ring_head];
	c->ring_head = (c->ring_head + 1 == c->ring_cap) ? 0 : c->ring_head + 1;
	c->ring_count--;
	return idx;
}

int
prot_entry_alloc(struct prot_tables *t, uint32_t pd, uint32_t nr, uint32_t max,
		 struct prot_pd_slot **slot, uint32_t *idx)
{
	*slot = prot_pd_slot(t, pd);
	if (*slot == NULL)
		return -EINVAL;
	if (nr >= max)
		return -ENOMEM;
	*idx = prot_index_alloc(t);
	return *idx == 0 ? -ENOMEM : 0;
}

void
prot_index_free(struct prot_tables *t, uint32_t idx)
{
	struct prot_ctl *c = t->ctl;
	uint64_t tail = (uint64_t)c->ring_head + c->ring_count;

	if (tail >= c->ring_cap)
		tail -= c->ring_cap;
	c->ring[tail] = idx;
	c->ring_count++;
	prot_lease_forget(t, idx);
	t->entries[idx].type = PROT_OBJ_NONE;
}

/* ---- protection domains -------------------------------------------------- */

int
prot_pd_alloc(struct prot_tables *t, uint32_t *pd)
{
	struct prot_ctl *c;
	uint32_t h;
	int tok;

	if (t == NULL || pd == NULL)
		return -EINVAL;
	c = t->ctl;
	tok = prot_ctl_lock(t);
	if (c->pd_free_count == 0) {
		prot_ctl_unlock(t, tok);
		return -ENOMEM;
	}
	h = c->pd_free[--c->pd_free_count];
	c->pds[h].used = 1;
	c->pds[h].refs = 0;
	prot_ctl_unlock(t, tok);
	*pd = h;
	return 0;
}

int
prot_pd_dealloc(struct prot_tables *t, uint32_t pd)
{
	struct prot_pd_slot *s;
	int ret = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	s = prot_pd_slot(t, pd);
	if (s == NULL) {
		ret = -EINVAL;
	} else if (s->refs != 0) {
		/* Children keep the PD alive (verbs: EBUSY). */
		ret = -EBUSY;
	} else {
		s->used = 0;
		t->ctl->pd_free[t->ctl->pd_free_count++] = pd;
	}
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_pd_get(struct prot_tables *t, uint32_t pd)
{
	struct prot_pd_slot *s;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	s = prot_pd_slot(t, pd);
	if (s != NULL)
		s->refs++;
	prot_ctl_unlock(t, tok);
	return s == NULL ? -EINVAL : 0;
}

int
prot_pd_put(struct prot_tables *t, uint32_t pd)
{
	struct prot_pd_slot *s;
	int ret = 0;
	int tok;

	if (t == NULL)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	s = prot_pd_slot(t, pd);
	if (s == NULL || s->refs == 0)
		ret = -EINVAL;
	else
		s->refs--;
	prot_ctl_unlock(t, tok);
	return ret;
}

int
prot_entry_key(struct prot_tables *t, uint32_t index, uint32_t *key)
{
	int ret = -EINVAL;
	int tok;

	if (t == NULL || key == NULL || index == 0 || index >= t->nentries)
		return -EINVAL;
	tok = prot_ctl_lock(t);
	if (t->entries[index].type != PROT_OBJ_NONE) {
		*key = prot_key_make(index, t->entries[index].variant);
		ret = 0;
	}
	prot_ctl_unlock(t, tok);
	return ret;
}

/* ---- readers and grace periods ------------------------------------------- */

static uint64_t
self_id(void)
{
	return (uint64_t)pthread_self();
}

int
prot_reader_register(struct prot_tables *t)
{
	uint64_t me = self_id();
	int i;

	for (i = 0; i < PROT_MAX_READERS; i++) {
		uint64_t expect = 0;

		if (__atomic_compare_exchange_n(&t->readers[i].owner, &expect,
						me, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			prot_reader_online(t, i);
			return i;
		}
	}
	return -ENOSPC;
}

void
prot_reader_unregister(struct prot_tables *t, int id)
{
	if (id < 0 || id >= PROT_MAX_READERS)
		return;
	prot_reader_offline(t, id);
	__atomic_store_n(&t->readers[id].owner, 0, __ATOMIC_RELEASE);
}

void
prot_reader_offline(struct prot_tables *t, int id)
{
	__atomic_store_n(&t->readers[id].seen, 0, __ATOMIC_RELEASE);
}

void
prot_reader_online(struct prot_tables *t, int id)
{
	uint64_t e = __atomic_load_n(&t->epoch, __ATOMIC_SEQ_CST);

	/*
	 * Store-load ordering against prot_revoke (store tag; bump epoch;
	 * read seen): either the writer sees us online and waits, or our
	 * later tag loads see its revocation.
	 */
	__atomic_store_n(&t->readers[id].seen, e, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void
prot_synchronize(struct prot_tables *t)
{
	uint64_t target = __atomic_add_fetch(&t->epoch, 1, __ATOMIC_SEQ_CST);
	int i;

	for (i = 0; i < PROT_MAX_READERS; i++) {
		for (;;) {
			uint64_t s = __atomic_load_n(&t->readers[i].seen,
						     __ATOMIC_SEQ_CST);

			if (s == 0 || s >= target)
				break;
			sched_yield();
		}
	}
}

void
prot_revoke(struct prot_tables *t, struct prot_entry *e)
{
	__atomic_store_n(&e->tag, 0, __ATOMIC_SEQ_CST);
	prot_synchronize(t);
}

int
prot_ctl_lock(struct prot_tables *t)
{
	uint64_t me = self_id();
	int tok = -1;
	int i;

	for (i = 0; i < PROT_MAX_READERS; i++) {
		if (__atomic_load_n(&t->readers[i].owner, __ATOMIC_RELAXED) ==
		    me &&
		    __atomic_load_n(&t->readers[i].seen, __ATOMIC_RELAXED) != 0) {
			/* Quiescent while inside a control call: never
			 * wait for ourselves in prot_synchronize. */
			prot_reader_offline(t, i);
			tok = i;
			break;
		}
	}
	pthread_mutex_lock(&t->ctl->lock);
	return tok;
}

void
prot_ctl_unlock(struct prot_tables *t, int tok)
{
	pthread_mutex_unlock(&t->ctl->lock);
	if (tok >= 0)
		prot_reader_online(t, tok);
}
