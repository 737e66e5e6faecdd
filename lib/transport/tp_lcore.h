/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Between tp_lcore.c (the transport lcore: command ring, stopping the
 * world, launch) and tp_lcore_rings.c (post and completion rings, one
 * round of a device).
 */
#ifndef TP_LCORE_H
#define TP_LCORE_H

#include <rte_ring.h>

struct tp_dev;

/* An exact-size ring of count esize-byte elements in rte_malloc memory. */
struct rte_ring *tp_lc_ring_alloc(unsigned int count, unsigned int esize,
				  unsigned int flags);
/* Publish the SQ/RQ tails of the shard's (TP_LC_ALL: every) QPs with work. */
void tp_lc_publish_tails(struct tp_dev *dev, unsigned int shard);
/* One round of dev as shard on the calling transport lcore; work done. */
unsigned int tp_lc_dev_round(struct tp_dev *dev, unsigned int shard);

#endif /* TP_LCORE_H */
