/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Object slabs (tp_slab.h).  Why: a QP used to be three rte_zmalloc calls
 * and three rte_free calls, and the DPDK heap grows and shrinks by
 * hugepages under that pattern (a destroy may hand a page back to the
 * kernel, the next create faults a fresh one in and clears it).  Chunks
 * stay until the device closes, so a create after a destroy costs a pop
 * and a memset.
 *
 * Under AddressSanitizer every free object is poisoned (the chunks come
 * from rte_malloc, which ASan does not see), so a use after destroy is
 * reported as in libc memory.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "tp_slab.h"

#if defined(__SANITIZE_ADDRESS__)
#define TP_SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TP_SLAB_ASAN 1
#endif
#endif

#ifdef TP_SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define slab_poison(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define slab_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define slab_poison(p, n) do { (void)(p); (void)(n); } while (0)
#define slab_unpoison(p, n) do { (void)(p); (void)(n); } while (0)
#endif

struct tp_slab_chunk {
	struct tp_slab_chunk *next;
	uint32_t nobj;
	/* the objects follow, from the next cache line */
	uint8_t obj[] __rte_cache_aligned;
};

void
tp_slab_init(struct tp_slab *s, size_t obj_size)
{
	memset(s, 0, sizeof(*s));
	s->obj_size = RTE_ALIGN_CEIL(obj_size, RTE_CACHE_LINE_SIZE);
	s->next_chunk = 1;
}

void
tp_slab_fini(struct tp_slab *s)
{
	struct tp_slab_chunk *c = s->chunks;

	while (c != NULL) {
		struct tp_slab_chunk *next = c->next;

		slab_unpoison(c->obj, (size_t)c->nobj * s->obj_size);
		rte_free(c);
		c = next;
	}
	rte_free(s->free);
	memset(s, 0, sizeof(*s));
}

static uint32_t
chunk_max_objs(const struct tp_slab *s)
{
	size_t n = (TP_SLAB_CHUNK_BYTES - sizeof(struct tp_slab_chunk)) / s->obj_size;

	return n < 1 ? 1 : n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
}

/* The free stack holds every object, so it never overflows on a free. */
static int
reserve_free_stack(struct tp_slab *s, uint32_t nobj)
{
	uint32_t cap = s->free_cap != 0 ? s->free_cap : 64;
	void **stack;

	while (cap < nobj)
		cap *= 2;
	if (cap == s->free_cap)
		return 0;
	stack = rte_realloc(s->free, (size_t)cap * sizeof(*stack), 0);
	if (stack == NULL)
		return -1;
	s->free = stack;
	s->free_cap = cap;
	return 0;
}

static int
grow(struct tp_slab *s)
{
	uint32_t n = RTE_MIN(s->next_chunk, chunk_max_objs(s));
	struct tp_slab_chunk *c;

	if (reserve_free_stack(s, s->nobj + n) != 0)
		return -1;
	c = rte_zmalloc("droce_slab", sizeof(*c) + (size_t)n * s->obj_size,
			RTE_CACHE_LINE_SIZE);
	if (c == NULL)
		return -1;
	c->next = s->chunks;
	c->nobj = n;
	s->chunks = c;
	s->nobj += n;
	s->next_chunk = n * 2;
	s->fresh = c->obj;
	s->nfresh = n;
	slab_poison(c->obj, (size_t)n * s->obj_size);
	return 0;
}

void *
tp_slab_alloc(struct tp_slab *s)
{
	void *obj;

	if (s->nfree != 0) {
		obj = s->free[--s->nfree];
		slab_unpoison(obj, s->obj_size);
		memset(obj, 0, s->obj_size);
		return obj;
	}
	if (s->nfresh == 0 && grow(s) != 0)
		return NULL;
	/* still as rte_zmalloc left it: zero (a memset here would touch
	 * every fresh page twice) */
	obj = s->fresh;
	s->fresh += s->obj_size;
	s->nfresh--;
	slab_unpoison(obj, s->obj_size);
	return obj;
}

void
tp_slab_free(struct tp_slab *s, void *obj)
{
	if (obj == NULL)
		return;
	slab_poison(obj, s->obj_size);
	s->free[s->nfree++] = obj;
}
