/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receiving side: take frames off the ring in order, keep them
 * invisible until their release time (delay), and hold back the ones the
 * sender marked for reordering.  Runs only on the receiving end's thread,
 * which is also what lets a held frame come out on time when the sender
 * has gone quiet: the receiver polls, the sender may not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "vwire_private.h"

/* The oldest frame on the wire, or NULL when the wire is empty. */
static struct vwire_slot *
vwire_rx_peek(struct vwire_dir *dir)
{
	struct vwire_rx *rx = &dir->rx;

	if (rx->pending_count == 0) {
		rx->pending_head = 0;
		rx->pending_count = rte_ring_sc_dequeue_burst_elem(dir->ring,
				rx->pending, sizeof(rx->pending[0]),
				VWIRE_RX_PENDING, NULL);
		if (rx->pending_count == 0)
			return NULL;
	}
	return &rx->pending[rx->pending_head];
}

static void
vwire_rx_pop(struct vwire_rx *rx)
{
	rx->pending_head++;
	rx->pending_count--;
}

/*
 * Hold a frame back if there is room: at most the sender's window frames
 * are held at once, which bounds how far any frame moves.
 */
static bool
vwire_rx_try_hold(struct vwire_rx *rx, const struct vwire_slot *slot,
		  uint64_t now)
{
	struct vwire_held *h;

	if (rx->held_count >= slot->window)
		return false;
	h = &rx->held[rx->held_count++];
	h->m = slot->m;
	h->frames_left = slot->hold;
	h->deadline_tsc = now + vwire_us_to_tsc(slot->hold_us);
	vwire_count(&rx->reordered, 1);
	return true;
}

/* The oldest held frame whose turn came (or whose hold expired), if any. */
static struct rte_mbuf *
vwire_rx_take_held(struct vwire_rx *rx, uint64_t now)
{
	for (unsigned int i = 0; i < rx->held_count; i++) {
		struct vwire_held *h = &rx->held[i];
		struct rte_mbuf *m;

		if (h->frames_left != 0 && h->deadline_tsc > now)
			continue;
		m = h->m;
		/* keep the rest oldest first */
		memmove(h, h + 1, (rx->held_count - i - 1) * sizeof(*h));
		rx->held_count--;
		return m;
	}
	return NULL;
}

/* Every delivery is one more later frame passing the held ones. */
static void
vwire_rx_note_delivery(struct vwire_rx *rx)
{
	for (unsigned int i = 0; i < rx->held_count; i++)
		if (rx->held[i].frames_left != 0)
			rx->held[i].frames_left--;
}

/* The next frame to deliver, or NULL when none is due yet. */
static struct rte_mbuf *
vwire_rx_next(struct vwire_dir *dir, uint64_t now)
{
	struct vwire_rx *rx = &dir->rx;
	struct vwire_slot *slot;
	struct rte_mbuf *m;

	for (;;) {
		m = vwire_rx_take_held(rx, now);
		if (m != NULL)
			return m;
		slot = vwire_rx_peek(dir);
		/* the wire is FIFO: a frame not due blocks the ones behind */
		if (slot == NULL || slot->release_tsc > now)
			return NULL;
		vwire_rx_pop(rx);
		if (slot->hold == 0 || !vwire_rx_try_hold(rx, slot, now))
			return slot->m;
	}
}

/*
 * Nothing held back: deliver the frames due now, in ring order, straight
 * from the pending slots, until one is to be held or is not due (then the
 * general loop in vwire_rx_burst takes over).  What vwire_rx_next would
 * do for such frames, without its per-frame bookkeeping for held ones.
 */
static uint16_t
vwire_rx_plain(struct vwire_dir *dir, struct rte_mbuf **pkts, uint16_t n,
	       uint64_t now)
{
	struct vwire_rx *rx = &dir->rx;
	uint16_t nb = 0;

	while (nb < n) {
		const struct vwire_slot *slot;

		if (rx->pending_count == 0 && vwire_rx_peek(dir) == NULL)
			break;
		slot = &rx->pending[rx->pending_head];
		if (slot->hold != 0 || slot->release_tsc > now)
			break;
		pkts[nb++] = slot->m;
		vwire_rx_pop(rx);
	}
	return nb;
}

uint16_t
vwire_rx_burst(struct droce_link *link, struct rte_mbuf **pkts, uint16_t n)
{
	struct vwire_pair *pair = link->priv;
	struct vwire_dir *dir = &pair->dir[vwire_peer_id(vwire_end_id(link))];
	uint64_t now = rte_get_timer_cycles();
	uint16_t nb = 0;

	if (dir->rx.held_count == 0)
		nb = vwire_rx_plain(dir, pkts, n, now);
	while (nb < n) {
		struct rte_mbuf *m = vwire_rx_next(dir, now);

		if (m == NULL)
			break;
		pkts[nb++] = m;
		vwire_rx_note_delivery(&dir->rx);
	}
	vwire_count(&dir->rx.delivered, nb);
	return nb;
}

/* Free every frame the receiving side holds and everything on the ring. */
void
vwire_rx_flush(struct vwire_dir *dir)
{
	struct vwire_rx *rx = &dir->rx;

	for (unsigned int i = 0; i < rx->held_count; i++)
		rte_pktmbuf_free(rx->held[i].m);
	rx->held_count = 0;
	for (;;) {
		while (rx->pending_count > 0) {
			rte_pktmbuf_free(rx->pending[rx->pending_head].m);
			vwire_rx_pop(rx);
		}
		if (vwire_rx_peek(dir) == NULL)
			break;
	}
}
