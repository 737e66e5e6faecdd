/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sending side: decide every fault for a frame, in tx order, and put
 * the result on the ring.  Runs only on the sending end's thread.
 */
#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_spinlock.h>

#include "vwire_private.h"

/* Pick up faults set by vwire_set_faults() since the last burst. */
static void
vwire_tx_refresh_faults(struct vwire_dir *dir)
{
	struct vwire_faults_box *box = &dir->box;

	if (likely(__atomic_load_n(&box->gen, __ATOMIC_ACQUIRE) ==
		   dir->tx.faults_gen))
		return;
	rte_spinlock_lock(&box->lock);
	vwire_tx_apply_faults(&dir->tx, &box->next);
	dir->tx.faults_gen = box->gen;
	rte_spinlock_unlock(&box->lock);
}

/*
 * Room for a frame and its possible duplicate.  Only this thread enqueues,
 * so the room seen here never shrinks before we use it.  Reserving the
 * duplicate's slot up front means a duplicate is never lost to a full ring,
 * which would skip its random draws and break determinism.
 */
static bool
vwire_ring_has_room(const struct vwire_dir *dir)
{
	unsigned int need = dir->tx.faults.duplicate > 0.0 ? 2 : 1;

	return rte_ring_free_count(dir->ring) >= need;
}

/*
 * Put one copy of a frame on the wire, after its own corrupt and reorder
 * decisions.  The caller made sure the ring has room.
 */
static void
vwire_tx_put(struct vwire_pair *pair, struct vwire_dir *dir,
	     struct rte_mbuf *m, uint64_t now)
{
	struct vwire_tx *tx = &dir->tx;
	const struct vwire_faults *f = &tx->faults;
	struct vwire_slot slot = { .hold = 0 };

	if (vwire_rng_chance(&tx->rng[VWIRE_STREAM_CORRUPT], f->corrupt)) {
		m = vwire_corrupt(tx, m, pair->pool);
		if (m == NULL) {
			vwire_count(&tx->dropped, 1);
			return;
		}
	}
	if (vwire_rng_chance(&tx->rng[VWIRE_STREAM_REORDER], f->reorder)) {
		slot.hold = (uint16_t)(1 + vwire_rng_below(
				&tx->rng[VWIRE_STREAM_REORDER], f->reorder_window));
		slot.window = (uint16_t)f->reorder_window;
		slot.hold_us = f->reorder_hold_us;
	}
	if (f->bn.rate_bps != 0) {
		m = vwire_bottleneck(tx, m, pair->pool, now, &slot.release_tsc);
		if (m == NULL)
			return;
	}
	if (f->delay_us != 0) {
		slot.release_tsc = RTE_MAX(slot.release_tsc, now) + tx->delay_tsc;
		vwire_count(&tx->delayed, 1);
	}
	slot.m = m;
	/* cannot fail: room was checked and only this thread enqueues */
	if (unlikely(rte_ring_sp_enqueue_elem(dir->ring, &slot,
					      sizeof(slot)) != 0)) {
		rte_pktmbuf_free(m);
		vwire_count(&tx->ring_full, 1);
	}
}

/*
 * One frame taken by tx_burst; the ring has room for it and a duplicate.
 * A duplicate that cannot be allocated (pool dry) is simply not made.
 */
static void
vwire_tx_one(struct vwire_pair *pair, struct vwire_dir *dir,
	     struct rte_mbuf *m, uint64_t now)
{
	struct vwire_tx *tx = &dir->tx;
	const struct vwire_faults *f = &tx->faults;
	struct rte_mbuf *dup = NULL;

	if (unlikely(m->pkt_len > pair->max_frame_len)) {
		/* a NIC would not send it either */
		vwire_count(&tx->oversize, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if (vwire_rng_chance(&tx->rng[VWIRE_STREAM_DROP], f->drop)) {
		if (f->on_fault != NULL)
			f->on_fault(f->on_fault_arg, VWIRE_FAULT_DROP, m, 0);
		vwire_count(&tx->dropped, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if (vwire_rng_chance(&tx->rng[VWIRE_STREAM_DUPLICATE], f->duplicate))
		dup = rte_pktmbuf_copy(m, pair->pool, 0, UINT32_MAX);

	vwire_tx_put(pair, dir, m, now);
	if (dup != NULL) {
		vwire_count(&tx->duplicated, 1);
		vwire_tx_put(pair, dir, dup, now);
	}
}

/* A peer that closed is a cable to nowhere: frames vanish. */
static uint16_t
vwire_tx_to_nowhere(struct vwire_tx *tx, struct rte_mbuf **pkts, uint16_t n)
{
	rte_pktmbuf_free_bulk(pkts, n);
	vwire_count(&tx->tx, n);
	vwire_count(&tx->dropped, n);
	return n;
}

/* Frames the fault-free path puts on the ring with one enqueue. */
#define VWIRE_TX_CHUNK 32

/*
 * No fault or delay in effect: the frames go on the ring as they are (no
 * hold, no release time), a chunk per enqueue instead of one frame per
 * call.  Same outcome as the per-frame path: in order, oversize frames
 * dropped and counted, stop at the first frame the ring has no room for.
 */
static uint16_t
vwire_tx_plain(struct vwire_pair *pair, struct vwire_dir *dir,
	       struct rte_mbuf **pkts, uint16_t n)
{
	struct vwire_slot slots[VWIRE_TX_CHUNK];
	uint16_t done = 0;

	while (done < n) {
		unsigned int k = RTE_MIN(n - done, VWIRE_TX_CHUNK);
		unsigned int j, put;

		for (j = 0; j < k; j++) {
			struct rte_mbuf *m = pkts[done + j];

			if (unlikely(m->pkt_len > pair->max_frame_len))
				break;
			slots[j] = (struct vwire_slot){ .m = m };
		}
		put = rte_ring_sp_enqueue_burst_elem(dir->ring, slots,
						     sizeof(slots[0]), j, NULL);
		done += put;
		if (put < j || (j < k && rte_ring_free_count(dir->ring) == 0)) {
			vwire_count(&dir->tx.ring_full, n - done);
			break;
		}
		if (j < k) {
			/* pkts[done] is oversize: a NIC would not send it either */
			vwire_count(&dir->tx.oversize, 1);
			rte_pktmbuf_free(pkts[done]);
			done++;
		}
	}
	vwire_count(&dir->tx.tx, done);
	return done;
}

uint16_t
vwire_tx_burst(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	struct vwire_pair *pair = link->priv;
	enum vwire_end_id me = vwire_end_id(link);
	struct vwire_dir *dir = &pair->dir[me];
	uint64_t now;
	uint16_t i;

	vwire_tx_refresh_faults(dir);
	if (unlikely(__atomic_load_n(&pair->closed[vwire_peer_id(me)],
				     __ATOMIC_ACQUIRE)))
		return vwire_tx_to_nowhere(&dir->tx, pkts, n);
	if (unlikely(dir->tx.refuse_left != 0)) {
		/* not ready yet: takes nothing, draws nothing */
		dir->tx.refuse_left--;
		vwire_count(&dir->tx.refused_calls, 1);
		vwire_count(&dir->tx.ring_full, n);
		return 0;
	}

	if (likely(!dir->tx.faults_active))
		return vwire_tx_plain(pair, dir, pkts, n);
	now = rte_get_timer_cycles();
	for (i = 0; i < n; i++) {
		/*
		 * Check room before any fault decision, so that a refused
		 * frame consumes no random numbers: determinism must not
		 * depend on how fast the receiver drains the ring.
		 */
		if (!vwire_ring_has_room(dir)) {
			vwire_count(&dir->tx.ring_full, n - i);
			break;
		}
		vwire_tx_one(pair, dir, pkts[i], now);
	}
	vwire_count(&dir->tx.tx, i);
	return i;
}
