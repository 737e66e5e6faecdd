/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 24-bit packet sequence numbers (IBTA 9.7.1).  PSNs wrap at 2^24 and are
 * compared in serial-number arithmetic: a is "after" b when the forward
 * distance from b to a is less than half the space (2^23).
 */
#ifndef ROCE_PSN_H
#define ROCE_PSN_H

#include <stdbool.h>
#include <stdint.h>

#define ROCE_PSN_MASK 0xffffffu
#define ROCE_PSN_HALF 0x800000u

static inline uint32_t
roce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* Signed distance a - b in [-2^23, 2^23). */
static inline int32_t
roce_psn_diff(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) & ROCE_PSN_MASK;

	return d >= ROCE_PSN_HALF ? (int32_t)d - (int32_t)(ROCE_PSN_MASK + 1) :
				    (int32_t)d;
}

static inline bool
roce_psn_before(uint32_t a, uint32_t b)
{
	return roce_psn_diff(a, b) < 0;
}

static inline bool
roce_psn_after(uint32_t a, uint32_t b)
{
	return roce_psn_diff(a, b) > 0;
}

/* True when psn lies in [first, first + count). */
static inline bool
roce_psn_in_window(uint32_t psn, uint32_t first, uint32_t count)
{
	return ((psn - first) & ROCE_PSN_MASK) < count;
}

#endif /* ROCE_PSN_H */
