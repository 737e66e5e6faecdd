/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Between tp_lcore.c (the transport lcore: command ring, stopping the
 * world, launch) and tp_lcore_rings.c (work queues and CQ rings, one
 * round of a device).
 */
#ifndef TP_LCORE_H
#define TP_LCORE_H

#include <rte_ring.h>

struct tp_dev;

/* Shard filter: this shard's QPs, or every QP (TP_LC_ALL, world stopped). */
#define TP_LC_ALL UINT32_MAX

/* An exact-size ring of count esize-byte elements in rte_malloc memory. */
struct rte_ring *tp_lc_ring_alloc(unsigned int count, unsigned int esize,
				  unsigned int flags);
/* Take what was posted to the shard's QPs' SQ/RQ; how many WQEs. */
unsigned int tp_lc_drain_dev(struct tp_dev *dev, unsigned int shard);
/* Publish the shard's QPs' SQ/RQ tails to the posting side. */
void tp_lc_publish_tails(struct tp_dev *dev, unsigned int shard);
/* Publish the calling engine's CQ rings (heads, overruns) to the pollers. */
void tp_lc_publish_cqs(struct tp_dev *dev);
/* One round of dev as shard on the calling transport lcore; work done. */
unsigned int tp_lc_dev_round(struct tp_dev *dev, unsigned int shard);

#endif /* TP_LCORE_H */
