/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/vwire: an in-process virtual wire joining two droce link ends,
 * with deterministic, seeded fault injection.
 *
 * It is a real link driver (struct droce_link_ops), not a test shortcut:
 * the transport cannot tell it from a DPDK port.  Each direction is a
 * single-producer/single-consumer rte_ring; the sender's thread runs the
 * tx side of a direction and the receiver's thread its rx side, so a pair
 * may be polled by one lcore (both ends) or by two threads (one per end).
 *
 * Fault semantics, per direction (frames sent by one end):
 *   - The sender decides every fault at tx time from its own PRNG streams
 *     (splitmix64 seeded from faults.seed; one stream per kind of fault),
 *     so the same seed and the same sequence of tx calls give the same
 *     decisions, whatever the timing of the receiver.  A frame refused by
 *     a full ring draws nothing.  (Two things can still vary: a duplicate
 *     is not made when the pool is dry, and a held frame whose hold
 *     expires comes out earlier than its frame count said.)
 *   - Order of decisions for each frame: oversize check, drop, duplicate;
 *     then for the frame and for its copy: corrupt, reorder, delay.
 *   - drop:      the frame is freed and never delivered.
 *   - duplicate: a copy (from the link's pool) follows the frame; each copy
 *                then gets its own corrupt/reorder decisions.
 *   - corrupt:   one random bit is flipped beyond the 14-byte Ethernet
 *                header (anywhere in frames of 14 bytes or less).  A frame
 *                shared with someone else (refcnt > 1, indirect, external
 *                buffer) is copied first, so the sender's retained copy
 *                (retransmission) stays intact.  The driver knows nothing
 *                of RoCE, so a flip can land where no receiver check looks,
 *                as on a real wire: in IPv4 RoCE frames only the UDP
 *                checksum and the BTH FECN/BECN byte (both masked in the
 *                ICRC, and the UDP checksum is not verified); in IPv6 also
 *                the traffic class, flow label and hop limit.  Everything
 *                else fails the IPv4 header checksum, parsing or the ICRC.
 *   - reorder:   the frame is held back by the receiving side until
 *                1..reorder_window (uniform) later frames were delivered,
 *                or until reorder_hold_us passed, so a frame is never stuck
 *                when traffic stops.  At most reorder_window frames are held
 *                at once (a frame that would exceed that goes in order), so
 *                no frame moves more than reorder_window positions.
 *   - delay_us:  fixed one-way delay: a frame becomes visible to rx_burst
 *                only delay_us after tx_burst (rte_get_timer_cycles()).  The
 *                wire stays FIFO: a frame never overtakes an earlier one
 *                because of the delay.
 *   - refuse_tx_calls: the first refuse_tx_calls tx_burst calls after
 *                the faults take effect take nothing (return 0, whatever
 *                n): a port that is not ready yet, as net_memif refuses
 *                until its peer's first receive after connecting.  They
 *                draw nothing; the frames count as ring_full.
 *   - bottleneck (bn.rate_bps != 0): the direction is a switch's egress
 *                port of that rate with a queue of bn.queue_bytes.  Each
 *                frame (after the faults above) leaves the queue one
 *                serialisation time (its length at the rate) after the one
 *                before it left, or after it arrived when the queue was
 *                empty; it becomes visible to rx_burst then (plus delay_us).
 *                The backlog a frame finds (the bytes still queued ahead
 *                of it, from the departure times) decides, as RED with ECN
 *                does: a frame that would not fit is dropped (counted in
 *                dropped and bn_dropped, on_fault told); from bn.mark_min
 *                bytes an ECN-capable IP frame (ECT(0)/ECT(1)) is marked
 *                CE with probability rising linearly to bn.mark_prob at
 *                bn.mark_max and 1 above it (mark_min == mark_max: every
 *                one from there); a Not-ECT frame is never marked.
 *                bn_hist counts the backlog each frame found.
 * Probabilities are doubles in [0, 1]: 0 never, 1 always (drop = 1.0 is a
 * cut cable or a vanished peer).
 */
#ifndef VWIRE_H
#define VWIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>

#include "droce_link.h"

#define VWIRE_MTU_DEFAULT		4200
#define VWIRE_MTU_MIN			68	/* IPv4 minimum */
#define VWIRE_MTU_MAX			9216
#define VWIRE_POOL_SIZE_DEFAULT		8191
#define VWIRE_RING_SIZE_DEFAULT		1024
#define VWIRE_REORDER_WINDOW_MAX	64
#define VWIRE_REORDER_HOLD_US_DEFAULT	1000
/* Largest frame accepted: Ethernet header + one VLAN tag + MTU. */
#define VWIRE_FRAME_OVERHEAD		(RTE_ETHER_HDR_LEN + 4)

enum vwire_fault_kind {
	VWIRE_FAULT_DROP,	/* m is about to be lost to the drop fault */
	VWIRE_FAULT_CORRUPT,	/* bit `bit` of m was just flipped */
};

/*
 * Told of every frame the drop fault loses (m still intact, bit 0) and of
 * every bit the wire flips (m as it goes on the wire; the flipped bit is
 * byte bit / 8 from the frame's start, mask 1 << bit % 8), on the sending
 * end's thread.  Lets a test tell exactly which frames a receiver cannot
 * have had, and the flips it detects from those in fields no check covers.
 */
struct rte_mbuf;
typedef void vwire_fault_cb(void *arg, enum vwire_fault_kind kind,
			    const struct rte_mbuf *m, uint64_t bit);

/* A direction's bottleneck (above); rate_bps 0: none. */
struct vwire_bottleneck {
	uint64_t rate_bps;	/* the egress port's rate, bit/s */
	uint32_t queue_bytes;	/* its queue (a frame must fit whole) */
	uint32_t mark_min;	/* bytes queued from which ECT frames may be marked */
	uint32_t mark_max;	/* bytes queued from which every ECT frame is */
	double mark_prob;	/* marking probability at mark_max (RED max_p) */
};

/* Buckets of vwire_stats.bn_hist: queue_bytes / VWIRE_BN_HIST bytes each. */
#define VWIRE_BN_HIST 64

/* Faults applied to the frames one end sends. All zero: a clean wire. */
struct vwire_faults {
	double drop;		/* probability a frame is lost */
	double duplicate;	/* probability a frame arrives twice */
	double reorder;		/* probability a frame is held back */
	double corrupt;		/* probability one bit is flipped */
	uint32_t reorder_window;	/* 1..VWIRE_REORDER_WINDOW_MAX frames
					 * (needed when reorder > 0) */
	uint32_t reorder_hold_us;	/* longest hold; 0: the default */
	uint32_t delay_us;	/* fixed one-way delay */
	uint32_t refuse_tx_calls;	/* first tx_burst calls refused */
	uint64_t seed;		/* PRNG seed of this direction */
	struct vwire_bottleneck bn;	/* a congested egress port */
	vwire_fault_cb *on_fault;	/* NULL: nobody is told */
	void *on_fault_arg;
};

struct vwire_config {
	const char *name;	/* link names "<name>.a"/".b"; NULL: "vwire<N>" */
	uint32_t mtu;		/* IP MTU; 0: VWIRE_MTU_DEFAULT */
	uint32_t pool_size;	/* mbufs in the pair's pool; 0: default */
	uint32_t ring_size;	/* frames in flight per direction; 0: default */
	/*
	 * Use this pool for both ends (and for duplicates and copies) instead
	 * of creating one; the driver never frees it.  Its data room must hold
	 * mtu + VWIRE_FRAME_OVERHEAD bytes.  NULL: the pair creates its own.
	 */
	struct rte_mempool *pool;
	struct rte_ether_addr mac_a;	/* all zero: 02:00:00:00:00:01 */
	struct rte_ether_addr mac_b;	/* all zero: 02:00:00:00:00:02 */
	struct vwire_faults a_to_b;	/* faults on frames a sends */
	struct vwire_faults b_to_a;	/* faults on frames b sends */
	/*
	 * Offloads both ends report (droce_link.offloads), for tests of what
	 * the transport asks of a port.  The wire does none of the work: a
	 * frame arrives as sent, its mbuf fields (ol_flags, l2_len, l3_len)
	 * as the sender left them, so a test reads the TX requests at the
	 * other end and sets RX verdicts on the frames it sends.
	 */
	uint32_t offloads;
};

/* Counters of one direction: the frames one end sent and what became of them. */
struct vwire_stats {
	uint64_t tx;		/* frames taken by tx_burst */
	uint64_t delivered;	/* frames returned by the peer's rx_burst */
	uint64_t dropped;	/* lost: drop fault, peer closed, no mbuf to copy */
	uint64_t duplicated;	/* extra copies put on the wire */
	uint64_t reordered;	/* frames the receiving side held back */
	uint64_t corrupted;	/* frames put on the wire with one bit flipped */
	uint64_t delayed;	/* frames sent with a nonzero delay */
	uint64_t ring_full;	/* frames refused: tx_burst returned < n */
	uint64_t refused_calls;	/* tx_burst calls refused (refuse_tx_calls) */
	uint64_t oversize;	/* frames longer than mtu + overhead, dropped */
	/* bottleneck */
	uint64_t bn_marked;	/* frames marked CE */
	uint64_t bn_dropped;	/* frames dropped: the queue was full */
	uint64_t bn_backlog_max; /* the largest backlog a frame found, bytes */
	uint64_t bn_hist[VWIRE_BN_HIST];	/* backlog found by each frame */
};

/*
 * Create two joined link ends.  cfg may be NULL (all defaults).  Returns 0,
 * or -EINVAL (bad config), -ENOMEM, or -rte_errno of a failed ring/pool
 * creation.  Close each end with droce_link_close(); the shared resources
 * (rings, the pool unless cfg->pool) go with the last one.  Mbufs of the
 * pool still held by the application must be freed before that.
 */
int vwire_pair_create(const struct vwire_config *cfg, struct droce_link **a,
		      struct droce_link **b);

/*
 * Replace the faults on frames sent by end and reseed its PRNG streams
 * with tx_faults->seed.  Safe from any thread; takes effect at the next
 * tx_burst of end.  Returns 0, or -EINVAL (not a vwire end, bad values).
 */
int vwire_set_faults(struct droce_link *end, const struct vwire_faults *tx_faults);

/*
 * The carrier both ends report (link_status; up when created), for
 * tests of link events.  Frames still move: combine with drop = 1.0 for a
 * cut cable.  Safe from any thread.  0, or -EINVAL (not a vwire end).
 */
int vwire_set_carrier(struct droce_link *end, bool up);

/* Counters of the frames sent by end (safe from any thread). */
void vwire_get_stats(const struct droce_link *end, struct vwire_stats *tx_side);

#endif /* VWIRE_H */
