/* SPDX-License-Identifier: BSD-3-Clause */
/* Selective repeat's PSN window (tp_sr_window.h). */
#include <string.h>

#include "roce_psn.h"
#include "tp_sr_window.h"

_Static_assert((TP_SR_WINDOW & (TP_SR_WINDOW - 1)) == 0 && TP_SR_WINDOW <= ROCE_PSN_HALF,
	       "TP_SR_WINDOW: a power of two, at most half the PSN space");

static inline uint32_t
slot(uint32_t psn)
{
	return psn & (TP_SR_WINDOW - 1);
}

static inline bool
bit_get(const struct tp_sr_win *w, uint32_t psn)
{
	uint32_t s = slot(psn);

	return (w->bits[s / 64] >> (s % 64)) & 1;
}

static inline void
bit_set(struct tp_sr_win *w, uint32_t psn)
{
	uint32_t s = slot(psn);

	w->bits[s / 64] |= 1ull << (s % 64);
}

static inline void
bit_clear(struct tp_sr_win *w, uint32_t psn)
{
	uint32_t s = slot(psn);

	w->bits[s / 64] &= ~(1ull << (s % 64));
}

/* psn's offset from base when inside the window, else -1 */
static inline int32_t
offset(const struct tp_sr_win *w, uint32_t psn)
{
	int32_t d = roce_psn_diff(psn, w->base);

	return d >= 0 && (uint32_t)d < TP_SR_WINDOW ? d : -1;
}

void
tp_sr_win_init(struct tp_sr_win *w, uint32_t base)
{
	memset(w, 0, sizeof(*w));
	w->base = base & ROCE_PSN_MASK;
}

enum tp_sr_mark
tp_sr_win_mark(struct tp_sr_win *w, uint32_t psn)
{
	int32_t d = roce_psn_diff(psn, w->base);

	if (d < 0)
		return TP_SR_DUP;
	if ((uint32_t)d >= TP_SR_WINDOW)
		return TP_SR_OUTSIDE;
	if (bit_get(w, psn))
		return TP_SR_DUP;
	bit_set(w, psn);
	return TP_SR_NEW;
}

bool
tp_sr_win_has(const struct tp_sr_win *w, uint32_t psn)
{
	int32_t d = roce_psn_diff(psn, w->base);

	/* everything before base was had */
	return d < 0 || ((uint32_t)d < TP_SR_WINDOW && bit_get(w, psn));
}

uint32_t
tp_sr_win_advance(struct tp_sr_win *w)
{
	uint32_t n = 0;

	/* a slot base leaves stands for base + TP_SR_WINDOW next: cleared */
	while (n < TP_SR_WINDOW && bit_get(w, w->base)) {
		bit_clear(w, w->base);
		w->base = roce_psn_add(w->base, 1);
		n++;
	}
	return n;
}

bool
tp_sr_win_ack_to(struct tp_sr_win *w, uint32_t psn)
{
	int32_t d = roce_psn_diff(psn, w->base);

	if (d < 0 || (uint32_t)d > TP_SR_WINDOW)
		return false;
	if ((uint32_t)d == TP_SR_WINDOW) {
		memset(w->bits, 0, sizeof(w->bits));
		w->base = psn & ROCE_PSN_MASK;
		return true;
	}
	while (w->base != (psn & ROCE_PSN_MASK)) {
		bit_clear(w, w->base);
		w->base = roce_psn_add(w->base, 1);
	}
	return true;
}

uint64_t
tp_sr_win_sack(const struct tp_sr_win *w)
{
	uint64_t sack = 0;

	for (uint32_t i = 0; i < 64 && i + 1 < TP_SR_WINDOW; i++)
		if (bit_get(w, roce_psn_add(w->base, i + 1)))
			sack |= 1ull << i;
	return sack;
}

void
tp_sr_win_apply_sack(struct tp_sr_win *w, uint32_t sack_base, uint64_t sack)
{
	/* sack_base itself is missing at the peer: what it has starts after */
	for (uint32_t i = 0; i < 64; i++)
		if (sack >> i & 1)
			(void)tp_sr_win_mark(w, roce_psn_add(sack_base, i + 1));
}

bool
tp_sr_win_next_hole(const struct tp_sr_win *w, uint32_t from, uint32_t limit,
		    uint32_t *hole)
{
	int32_t d;

	if (roce_psn_before(from, w->base))
		from = w->base;
	d = roce_psn_diff(limit, from);
	for (int32_t i = 0; i < d; i++) {
		uint32_t p = roce_psn_add(from, (uint32_t)i);

		if (offset(w, p) < 0)
			return false;	/* beyond the window: not known */
		if (!bit_get(w, p)) {
			*hole = p;
			return true;
		}
	}
	return false;
}
