/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vwire internals.  A pair holds two directions; a direction has a tx side
 * (written only by the sending end's thread), an rx side (written only by
 * the receiving end's thread) and the SP/SC ring between them.  Counters
 * have a single writer each, so they are plain relaxed atomic stores;
 * readers (vwire_get_stats) may be on any thread.
 */
#ifndef VWIRE_PRIVATE_H
#define VWIRE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "droce_link.h"
#include "vwire.h"

extern int vwire_logtype;
#define VWIRE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, vwire_logtype, "vwire: " fmt "\n", ##__VA_ARGS__)

/* Frames the rx side takes from the ring at a time. */
#define VWIRE_RX_PENDING 32

/* One frame on the wire: the ring's element. */
struct vwire_slot {
	struct rte_mbuf *m;
	uint64_t release_tsc;	/* invisible to rx_burst before this time */
	uint16_t hold;		/* reorder: later frames to let pass; 0: none */
	uint16_t window;	/* sender's reorder window: most frames held */
	uint32_t hold_us;	/* longest reorder hold */
};

/* splitmix64: one independent stream per kind of fault. */
struct vwire_rng {
	uint64_t state;
};

enum vwire_stream {
	VWIRE_STREAM_DROP,
	VWIRE_STREAM_DUPLICATE,
	VWIRE_STREAM_CORRUPT,
	VWIRE_STREAM_REORDER,
	VWIRE_STREAM_MARK,
	VWIRE_STREAM_MAX
};

/* The sending side of a direction: owned by the sender's thread. */
struct vwire_tx {
	struct vwire_faults faults;	/* in effect */
	uint32_t faults_gen;		/* generation of faults in effect */
	bool faults_active;		/* any fault or delay: else the plain path */
	uint64_t delay_tsc;
	/* bottleneck: the last frame's departure, TSC cycles per 1024 bytes */
	uint64_t bn_depart_tsc;
	uint64_t bn_tsc_per_kib;
	uint64_t bn_hist_width;		/* bytes per bn_hist bucket */
	uint32_t refuse_left;		/* tx_burst calls still to refuse */
	struct vwire_rng rng[VWIRE_STREAM_MAX];
	/* counters (single writer: the sender) */
	uint64_t tx;
	uint64_t dropped;
	uint64_t duplicated;
	uint64_t corrupted;
	uint64_t delayed;
	uint64_t ring_full;
	uint64_t refused_calls;
	uint64_t oversize;
	uint64_t bn_marked;
	uint64_t bn_dropped;
	uint64_t bn_backlog_max;
	uint64_t bn_hist[VWIRE_BN_HIST];
} __rte_cache_aligned;

/* A frame held back for reordering. */
struct vwire_held {
	struct rte_mbuf *m;
	uint64_t deadline_tsc;		/* released at the latest then */
	uint32_t frames_left;		/* deliveries to let pass first */
};

/* The receiving side of a direction: owned by the receiver's thread. */
struct vwire_rx {
	struct vwire_slot pending[VWIRE_RX_PENDING];	/* taken from the ring */
	unsigned int pending_head;
	unsigned int pending_count;
	struct vwire_held held[VWIRE_REORDER_WINDOW_MAX];	/* oldest first */
	unsigned int held_count;
	/* counters (single writer: the receiver) */
	uint64_t delivered;
	uint64_t reordered;
} __rte_cache_aligned;

/* Faults handed from vwire_set_faults() (any thread) to the tx side. */
struct vwire_faults_box {
	rte_spinlock_t lock;
	struct vwire_faults next;
	uint32_t gen;			/* bumped under lock, read atomically */
} __rte_cache_aligned;

struct vwire_dir {
	struct rte_ring *ring;
	struct vwire_faults_box box;
	struct vwire_tx tx;
	struct vwire_rx rx;
};

enum vwire_end_id {
	VWIRE_END_A,
	VWIRE_END_B,
	VWIRE_END_MAX
};

struct vwire_pair {
	struct droce_link end[VWIRE_END_MAX];
	struct vwire_dir dir[VWIRE_END_MAX];	/* indexed by the sending end */
	struct rte_mempool *pool;
	bool own_pool;
	uint32_t max_frame_len;
	bool closed[VWIRE_END_MAX];		/* atomic */
	uint32_t open_ends;			/* atomic */
	bool carrier_down;			/* atomic; vwire_set_carrier */
};

static inline enum vwire_end_id
vwire_end_id(const struct droce_link *link)
{
	const struct vwire_pair *pair = link->priv;

	return link == &pair->end[VWIRE_END_A] ? VWIRE_END_A : VWIRE_END_B;
}

static inline enum vwire_end_id
vwire_peer_id(enum vwire_end_id id)
{
	return id == VWIRE_END_A ? VWIRE_END_B : VWIRE_END_A;
}

/* Add to a counter that only the calling thread writes. */
static inline void
vwire_count(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline uint64_t
vwire_counter_read(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static inline uint64_t
vwire_us_to_tsc(uint32_t us)
{
	uint64_t hz = rte_get_timer_hz();

	/* split so that neither product can overflow */
	return us * (hz / 1000000) + us * (hz % 1000000) / 1000000;
}

/* vwire_fault.c */
void vwire_rng_seed(struct vwire_rng *rng, uint64_t seed, enum vwire_stream s);
bool vwire_rng_chance(struct vwire_rng *rng, double p);
uint64_t vwire_rng_below(struct vwire_rng *rng, uint64_t bound);
int vwire_faults_check(const struct vwire_faults *f);
void vwire_tx_apply_faults(struct vwire_tx *tx, const struct vwire_faults *f);
/* The bottleneck's verdict on m at now: its departure time, or 0 (dropped). */
struct rte_mbuf *vwire_bottleneck(struct vwire_tx *tx, struct rte_mbuf *m,
				  struct rte_mempool *pool, uint64_t now,
				  uint64_t *depart);
struct rte_mbuf *vwire_corrupt(struct vwire_tx *tx, struct rte_mbuf *m,
			       struct rte_mempool *pool);

/* vwire_tx.c / vwire_rx.c */
uint16_t vwire_tx_burst(struct droce_link *link, struct rte_mbuf **pkts,
			uint16_t n);
uint16_t vwire_rx_burst(struct droce_link *link, struct rte_mbuf **pkts,
			uint16_t n);
void vwire_rx_flush(struct vwire_dir *dir);

#endif /* VWIRE_PRIVATE_H */
