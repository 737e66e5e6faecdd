/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hashed timing wheel (Varghese & Lauck's scheme 6) over a free-running
 * 64-bit clock (the engine's TSC): nslots lists, a timer in the slot of
 * its deadline's tick (deadline >> shift), arming and cancelling O(1).
 * Expiry visits the slots of the ticks that passed since the last call
 * and takes the timers whose deadline is due; a timer more than one
 * revolution ahead stays in its slot until its own revolution comes.
 * A timer never fires before its deadline, and at most one tick after
 * the first expiry call at or past it.  Pure C, one owner thread, no
 * allocation: the caller provides the slot array.
 */
#ifndef TP_WHEEL_H
#define TP_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

struct tp_wheel_timer {
	struct tp_wheel_timer *next;
	struct tp_wheel_timer **pprev;	/* NULL: not armed */
	uint64_t deadline;
	uint32_t tag;			/* the owner's: which of its timers */
};

/* Timers taken by tp_wheel_expire, in expiry order. */
struct tp_wheel_list {
	struct tp_wheel_timer *head;
};

struct tp_wheel {
	struct tp_wheel_timer **slot;	/* nslots list heads */
	uint64_t mask;			/* nslots - 1 */
	unsigned int shift;		/* a tick is 2^shift clock units */
	uint64_t tick;			/* the oldest tick not yet wholly expired */
	uint32_t armed;			/* in the slots or on an expiry list */
};

/* slots: nslots (a power of two) NULL-initialised heads.  0 or -EINVAL. */
int tp_wheel_init(struct tp_wheel *w, struct tp_wheel_timer **slots,
		  uint32_t nslots, unsigned int shift, uint64_t now);
/* Arm (or move) t to fire at deadline. */
void tp_wheel_arm(struct tp_wheel *w, struct tp_wheel_timer *t, uint64_t deadline);
/* Disarm t; also takes it off a tp_wheel_list it waits on.  No-op if idle. */
void tp_wheel_cancel(struct tp_wheel *w, struct tp_wheel_timer *t);
/*
 * Move every timer due at now (deadline <= now) to out, earlier ticks
 * first; how many.  Pop them all (or cancel them) before the next call.
 */
uint32_t tp_wheel_expire(struct tp_wheel *w, uint64_t now, struct tp_wheel_list *out);
/* The first timer of l, taken off it (no longer armed), or NULL. */
struct tp_wheel_timer *tp_wheel_pop(struct tp_wheel *w, struct tp_wheel_list *l);

static inline bool
tp_wheel_armed(const struct tp_wheel_timer *t)
{
	return t->pprev != NULL;
}

#endif /* TP_WHEEL_H */
