/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fixed-size object slabs for the control path: objects carved from
 * rte_malloc chunks that grow geometrically (1, 2, 4, ... objects, up to
 * TP_SLAB_CHUNK_BYTES per chunk), a stack of free objects, nothing given
 * back to the heap before tp_slab_fini.  An allocation from the stack
 * walks no heap; the object comes back zeroed (a reused one by a memset,
 * a never used one as rte_zmalloc zeroed its chunk).  Not thread-safe: one
 * owner (the lcore that runs the device's control verbs).
 */
#ifndef TP_SLAB_H
#define TP_SLAB_H

#include <stddef.h>
#include <stdint.h>

/* the largest chunk: one 2 MiB hugepage less the allocator's headers */
#define TP_SLAB_CHUNK_BYTES ((size_t)2 * 1024 * 1024 - 4096)

struct tp_slab_chunk;

struct tp_slab {
	size_t obj_size;		/* a multiple of the cache line */
	struct tp_slab_chunk *chunks;	/* every chunk, newest first */
	uint32_t next_chunk;		/* objects in the next chunk */
	uint32_t nobj;			/* objects in all chunks */
	uint8_t *fresh;			/* the newest chunk's never used objects */
	uint32_t nfresh;
	void **free;			/* stack of free objects */
	uint32_t nfree;
	uint32_t free_cap;
};

void tp_slab_init(struct tp_slab *s, size_t obj_size);
/* Frees every chunk; objects still allocated die with them. */
void tp_slab_fini(struct tp_slab *s);
/* A zeroed object, or NULL when the heap has no room for a new chunk. */
void *tp_slab_alloc(struct tp_slab *s);
void tp_slab_free(struct tp_slab *s, void *obj);

#endif
