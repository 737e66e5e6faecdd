/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Between tp_lcore.c (the transport lcore: command ring, stopping the
 * world, launch) and tp_lcore_rings.c (work queues and CQ rings, one
 * round of an engine).
 */
#ifndef TP_LCORE_H
#define TP_LCORE_H

#include <rte_ring.h>

struct tp_engine;

/* An exact-size ring of count esize-byte elements in rte_malloc memory. */
struct rte_ring *tp_lc_ring_alloc(unsigned int count, unsigned int esize,
				  unsigned int flags);
/* Publish the SQ/RQ tails of the engine's QPs with work. */
void tp_lc_publish_tails(struct tp_engine *eng);
/* Publish the engine's rings of its CQs (heads, overruns) to the pollers. */
void tp_lc_publish_cqs(struct tp_engine *eng);
/* One round of eng on the calling transport lcore; work done. */
unsigned int tp_lc_engine_round(struct tp_engine *eng);

#endif /* TP_LCORE_H */
