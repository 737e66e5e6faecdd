/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault decisions: the seeded PRNG streams, fault validation and the bit
 * flip.  Everything here runs on the sending end's thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "roce_wire.h"
#include "vwire_private.h"

/*
 * splitmix64 (Steele, Lea, Flood 2014): a 64-bit counter pushed through a
 * bijective mixer.  Small, fast, statistically good enough for fault
 * injection, and every seed (even 0) is valid.
 */
static uint64_t
vwire_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#define VWIRE_GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static uint64_t
vwire_rng_next(struct vwire_rng *rng)
{
	rng->state += VWIRE_GOLDEN_GAMMA;
	return vwire_mix64(rng->state);
}

/*
 * Each kind of fault draws from its own stream, so that, e.g., turning on
 * duplication does not change which frames a given seed drops.  Mixing the
 * stream number into the start state scatters the streams over the cycle
 * (seed + k * gamma would make stream k the drop stream shifted by k).
 */
void
vwire_rng_seed(struct vwire_rng *rng, uint64_t seed, enum vwire_stream s)
{
	rng->state = vwire_mix64(seed ^ vwire_mix64((uint64_t)s + 1));
}

/* True with probability p.  p <= 0 and p >= 1 draw nothing. */
bool
vwire_rng_chance(struct vwire_rng *rng, double p)
{
	if (p <= 0.0)
		return false;
	if (p >= 1.0)
		return true;
	/* 53 random bits: a uniform double in [0, 1) */
	return (double)(vwire_rng_next(rng) >> 11) * 0x1.0p-53 < p;
}

/* Uniform in [0, bound), bound > 0; the modulo bias is below 2^-32 here. */
uint64_t
vwire_rng_below(struct vwire_rng *rng, uint64_t bound)
{
	return vwire_rng_next(rng) % bound;
}

static bool
vwire_probability_ok(double p)
{
	return p >= 0.0 && p <= 1.0;	/* false for NaN too */
}

int
vwire_faults_check(const struct vwire_faults *f)
{
	if (!vwire_probability_ok(f->drop) ||
	    !vwire_probability_ok(f->duplicate) ||
	    !vwire_probability_ok(f->reorder) ||
	    !vwire_probability_ok(f->corrupt))
		return -EINVAL;
	if (f->reorder_window > VWIRE_REORDER_WINDOW_MAX)
		return -EINVAL;
	if (f->reorder > 0.0 && f->reorder_window == 0)
		return -EINVAL;
	if (f->bn.rate_bps != 0 &&
	    (f->bn.queue_bytes == 0 || f->bn.mark_min > f->bn.mark_max ||
	     !vwire_probability_ok(f->bn.mark_prob)))
		return -EINVAL;
	return 0;
}

/* Put checked faults into effect on the tx side, reseeding every stream. */
void
vwire_tx_apply_faults(struct vwire_tx *tx, const struct vwire_faults *f)
{
	tx->faults = *f;
	if (tx->faults.reorder_hold_us == 0)
		tx->faults.reorder_hold_us = VWIRE_REORDER_HOLD_US_DEFAULT;
	tx->delay_tsc = vwire_us_to_tsc(f->delay_us);
	tx->refuse_left = f->refuse_tx_calls;
	/* with all of them off no frame draws a random number, so the
	 * burst path in vwire_tx_burst sends exactly what the per-frame
	 * path would */
	tx->faults_active = f->drop > 0.0 || f->duplicate > 0.0 ||
			    f->corrupt > 0.0 || f->reorder > 0.0 || f->delay_us != 0 ||
			    f->bn.rate_bps != 0;
	tx->bn_depart_tsc = 0;
	tx->bn_tsc_per_kib = f->bn.rate_bps != 0 ?
			     rte_get_timer_hz() * 8 * 1024 / f->bn.rate_bps : 0;
	tx->bn_hist_width = f->bn.queue_bytes / VWIRE_BN_HIST + 1;
	for (int s = 0; s < VWIRE_STREAM_MAX; s++)
		vwire_rng_seed(&tx->rng[s], f->seed, (enum vwire_stream)s);
}

/* True when nobody else can see m's data, so flipping a bit is private. */
static bool
vwire_mbuf_exclusive(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

static void
vwire_flip_bit(struct rte_mbuf *m, uint64_t bit)
{
	uint32_t off = (uint32_t)(bit / 8);

	while (off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	*rte_pktmbuf_mtod_offset(m, uint8_t *, off) ^= (uint8_t)(1u << (bit % 8));
}

/*
 * Flip one random bit of m beyond the Ethernet header, so that it is the
 * receiver's integrity checks (ICRC, IPv4 checksum) that must notice, not
 * its MAC filter.  Returns the frame to send (a private copy if m was
 * shared), or NULL (m freed) when no copy could be made.  Draws from the
 * corrupt stream only when there is a bit to flip.
 */
struct rte_mbuf *
vwire_corrupt(struct vwire_tx *tx, struct rte_mbuf *m, struct rte_mempool *pool)
{
	uint64_t first_bit = m->pkt_len > RTE_ETHER_HDR_LEN ?
			     RTE_ETHER_HDR_LEN * 8 : 0;
	uint64_t nbits = (uint64_t)m->pkt_len * 8 - first_bit;
	uint64_t bit;

	if (nbits == 0)
		return m;
	bit = first_bit + vwire_rng_below(&tx->rng[VWIRE_STREAM_CORRUPT], nbits);
	if (!vwire_mbuf_exclusive(m)) {
		struct rte_mbuf *copy = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (copy == NULL)
			return NULL;
		m = copy;
	}
	vwire_flip_bit(m, bit);
	vwire_count(&tx->corrupted, 1);
	if (tx->faults.on_fault != NULL)
		tx->faults.on_fault(tx->faults.on_fault_arg, VWIRE_FAULT_CORRUPT, m, bit);
	return m;
}

/*
 * The IP header of an Ethernet frame (one optional 802.1Q tag) in its
 * first segment, or NULL (not IP, too short).  A switch reads this much.
 */
static uint8_t *
vwire_l3(struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t off = RTE_ETHER_HDR_LEN;
	uint16_t type;

	if (m->data_len < RTE_ETHER_HDR_LEN + 4 + 40)
		return NULL;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		type = (uint16_t)(f[16] << 8 | f[17]);
		off += 4;
	}
	if ((type == RTE_ETHER_TYPE_IPV4 && (f[off] >> 4) == 4) ||
	    (type == RTE_ETHER_TYPE_IPV6 && (f[off] >> 4) == 6))
		return f + off;
	return NULL;
}

/* An ECN-capable transport (ECT(0) or ECT(1)), RFC 3168 5. */
static bool
vwire_ecn_capable(struct rte_mbuf *m)
{
	const uint8_t *ip = vwire_l3(m);
	uint8_t ecn;

	if (ip == NULL)
		return false;
	ecn = (ip[0] >> 4) == 4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
	return ecn == 1 || ecn == 2;
}

/* Mark m's IP header CE (lib/wire: the IPv4 checksum follows). */
static bool
vwire_mark_ce(struct rte_mbuf *m)
{
	uint8_t *ip = vwire_l3(m);

	return ip != NULL && roce_ip_mark_ce(ip);
}

/* RED's marking probability for a backlog of q bytes (vwire.h). */
static double
vwire_mark_chance(const struct vwire_bottleneck *bn, uint64_t q)
{
	if (q < bn->mark_min)
		return 0.0;
	if (q >= bn->mark_max)
		return 1.0;
	return bn->mark_prob * (double)(q - bn->mark_min) /
	       (double)(bn->mark_max - bn->mark_min);
}

/*
 * The bottleneck of a direction (vwire.h): admit, mark or drop m, which
 * arrives at now, and say when it leaves the queue.  NULL: dropped (m
 * freed), or its marked copy could not be made.
 */
struct rte_mbuf *
vwire_bottleneck(struct vwire_tx *tx, struct rte_mbuf *m, struct rte_mempool *pool,
		 uint64_t now, uint64_t *depart)
{
	const struct vwire_bottleneck *bn = &tx->faults.bn;
	uint64_t ahead = tx->bn_depart_tsc > now ? tx->bn_depart_tsc - now : 0;
	uint64_t q = (ahead << 10) / tx->bn_tsc_per_kib;	/* bytes queued */
	unsigned int b = (unsigned int)RTE_MIN(q / tx->bn_hist_width,
					       (uint64_t)VWIRE_BN_HIST - 1);

	vwire_count(&tx->bn_hist[b], 1);
	if (q > tx->bn_backlog_max)
		__atomic_store_n(&tx->bn_backlog_max, q, __ATOMIC_RELAXED);
	if (q + m->pkt_len > bn->queue_bytes) {
		if (tx->faults.on_fault != NULL)
			tx->faults.on_fault(tx->faults.on_fault_arg, VWIRE_FAULT_DROP, m, 0);
		vwire_count(&tx->bn_dropped, 1);
		vwire_count(&tx->dropped, 1);
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (vwire_rng_chance(&tx->rng[VWIRE_STREAM_MARK], vwire_mark_chance(bn, q)) &&
	    vwire_ecn_capable(m)) {
		if (!vwire_mbuf_exclusive(m)) {
			struct rte_mbuf *copy = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (copy == NULL) {
				vwire_count(&tx->dropped, 1);
				return NULL;
			}
			m = copy;
		}
		if (vwire_mark_ce(m))
			vwire_count(&tx->bn_marked, 1);
	}
	tx->bn_depart_tsc = RTE_MAX(tx->bn_depart_tsc, now) +
			    (((uint64_t)m->pkt_len * tx->bn_tsc_per_kib) >> 10);
	*depart = tx->bn_depart_tsc;
	return m;
}
