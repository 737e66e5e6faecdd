/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PSN window of selective repeat (lib/transport README, "Selective
 * repeat between droce peers", the design): which PSNs of
 * [base, base + TP_SR_WINDOW) arrived (responder) or were selectively
 * acknowledged (requester).  Bit i of the ring stands for the PSN that is
 * i modulo TP_SR_WINDOW, valid only inside the window, so marking is O(1)
 * and moving the base clears only what it passes.  TP_SR_WINDOW divides
 * 2^24: the ring index is the same after the PSN space wraps.  Pure C
 * (unit test tp_sr_window, no EAL).
 */
#ifndef TP_SR_WINDOW_H
#define TP_SR_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define TP_SR_WINDOW 256u		/* PSNs; a power of two <= 2^23 */

struct tp_sr_win {
	uint32_t base;			/* the oldest PSN not yet had */
	uint64_t bits[TP_SR_WINDOW / 64];
};

enum tp_sr_mark {
	TP_SR_NEW,			/* inside the window, first time */
	TP_SR_DUP,			/* had already, or before base */
	TP_SR_OUTSIDE,			/* at or beyond base + TP_SR_WINDOW */
};

void tp_sr_win_init(struct tp_sr_win *w, uint32_t base);
/* psn arrived (responder) / was acknowledged selectively (requester) */
enum tp_sr_mark tp_sr_win_mark(struct tp_sr_win *w, uint32_t psn);
bool tp_sr_win_has(const struct tp_sr_win *w, uint32_t psn);
/* base moves over the run of PSNs had from it; how many it moved */
uint32_t tp_sr_win_advance(struct tp_sr_win *w);
/* base moves to psn (a cumulative ACK; at most TP_SR_WINDOW ahead, and
 * never back); false when psn is outside that range */
bool tp_sr_win_ack_to(struct tp_sr_win *w, uint32_t psn);
/*
 * The selective ACK: bit i set when base + 1 + i was had (i < 64); 0
 * when nothing after base arrived.  (base itself is the hole a SACK is
 * sent for: its PSN is the cumulative ACK's.)
 */
uint64_t tp_sr_win_sack(const struct tp_sr_win *w);
/* the requester applies a peer's SACK against its window of base */
void tp_sr_win_apply_sack(struct tp_sr_win *w, uint32_t sack_base, uint64_t sack);
/*
 * The first PSN not had in [from, limit) (the holes a requester resends:
 * up to its highest selectively acknowledged PSN); false when none.
 */
bool tp_sr_win_next_hole(const struct tp_sr_win *w, uint32_t from, uint32_t limit,
			 uint32_t *hole);

#endif /* TP_SR_WINDOW_H */
