/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tp_run.h - who runs a run-to-completion engine: the runner token.
 *
 * In run-to-completion the device's engine (its QPs, CQ rings, timers and
 * link queue) has exactly one runner at a time: an application thread
 * inside a verbs call, or the device's progress thread (tp_adaptive.c),
 * which runs it while no application thread is in droce.  The token is
 * one word, odd while held and incremented at each take and each give, so
 * its value also tells the progress thread whether an application thread
 * came in since it last looked.  It is taken once per call (a post of a
 * list of work requests takes it once), not per work request, and is
 * re-entrant for its holder (a control call's function may make another).
 * Without a progress thread nobody else takes it: an uncontended
 * compare-and-swap per call.  A dedicated transport lcore does not use it
 * (tp_lcore.c: the rings are the hand-off there).
 */
#ifndef TP_RUN_H
#define TP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

struct tp_dev;
struct tp_adaptive;

struct tp_run {
	uint32_t word;		/* odd: held */
	uint32_t want;		/* an application thread waits for the token */
	uintptr_t holder;	/* tp_run_self() of the holder, 0: none */
	uint32_t depth;		/* the holder's nesting */
	/* 1 while the progress thread sleeps on an idle engine (its futex) */
	uint32_t idle;
	struct tp_adaptive *pt;	/* the progress thread, or NULL */
} __rte_cache_aligned;

/* One byte per thread: its address names the thread (tp_adaptive.c). */
extern __thread char tp_run_me;

static inline uintptr_t
tp_run_self(void)
{
	return (uintptr_t)&tp_run_me;
}

/* Contended take (the progress thread holds it): wait for its give. */
void tp_run_take_slow(struct tp_run *r);
/* The application left droce: wake the progress thread asleep on an idle
 * engine (one system call per sleep, none while it polls or naps). */
void tp_run_kick(struct tp_run *r);

static inline void
tp_run_take(struct tp_run *r)
{
	uintptr_t me = tp_run_self();
	uint32_t w;

	if (__atomic_load_n(&r->holder, __ATOMIC_RELAXED) == me) {
		r->depth++;
		return;
	}
	w = __atomic_load_n(&r->word, __ATOMIC_RELAXED);
	if (unlikely((w & 1) != 0 ||
		     !__atomic_compare_exchange_n(&r->word, &w, w + 1, false,
						  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		tp_run_take_slow(r);
	__atomic_store_n(&r->holder, me, __ATOMIC_RELAXED);
	r->depth = 1;
}

static inline void
tp_run_give(struct tp_run *r)
{
	if (--r->depth != 0)
		return;
	__atomic_store_n(&r->holder, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->word, __atomic_load_n(&r->word, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELEASE);
	if (unlikely(__atomic_load_n(&r->idle, __ATOMIC_RELAXED) != 0))
		tp_run_kick(r);
}

#endif /* TP_RUN_H */
