/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-QP timers in the owning engine's timing wheel (tp_wheel.c), keyed
 * to the TSC: the retransmit (local ACK) timer, 4.096 us x 2^timeout
 * (IBTA 9.7.6.1.3; timeout 0 = infinite), and the RNR timer from the
 * NAK's 5-bit code (IBTA table 45).  Arming and disarming are O(1); a
 * round expires what is due (tp_timer_expire), which marks the QP ready
 * and runs its timeout.  Also the engine's scheduling state as a whole
 * (struct tp_sched: ready list, wheel) and its own scheduling gaps.
 *
 * Gaps.  An engine runs in rounds; between two rounds it sees nothing:
 * responses wait in its receive queue and its timers cannot fire.  With a
 * transport lcore the gap is the OS's (the thread was descheduled: 0.5 to
 * 1.8 s were measured on a 2-core machine with CPU hogs); in
 * run-to-completion the engine runs only inside the application's verbs
 * calls, so the gap is the application's (it computed, slept or was
 * descheduled), and it is treated the same way: the engine did not run.
 * A round measures the time since the round before it when timers were
 * armed across it (work in flight; an idle engine's gaps cost nothing and
 * are not counted): sched_gaps counts those of TP_SCHED_GAP_MIN_US or more,
 * sched_gap_max_us keeps the longest.
 *
 * The rule (tp_timer_expire): a retransmit timer that a round finds
 * expired after a gap g, with g >= TP_SCHED_GAP_MIN_US and g >= T / 4 (T
 * the QP's local ACK timeout), expired while its own engine was not
 * running: the peer's answer, if it came, is still queued behind the
 * frames of the gap (a round takes one burst before its timers), or the
 * peer was descheduled with us.  It is not charged (no retry, no
 * retransmit_timeouts; retransmit_timeouts_in_gap counts it) and the
 * timer is re-armed for a full T from now, time for the engine to take
 * what waited.  The T / 4 bound: a gap that short is jitter against the
 * timeout and the peer had most of T seen by a running engine; the 1 ms
 * floor is a scheduler time slice, so an application polling normally
 * with a tiny timeout (timeout 1 to 8: 8 us to 1 ms) keeps its timeouts
 * exact.  A QP is re-armed so at most once between two charged retries
 * (or progress): a dead peer is still found by an application that calls
 * in only every few seconds, in at most twice as many expiries.
 */
#include <errno.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "tp_private.h"

/* RNR NAK timer field -> microseconds (IBTA 1.4 vol 1, table 45). */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * The wheel: ticks of at most 4.096 us (the retransmit timer's unit),
 * 16,384 slots (about 67 ms per revolution at that tick; longer timers
 * wait in their slot for their own revolution).
 */
#define TP_WHEEL_SLOTS 16384
#define TP_WHEEL_TICK_US_NUM 4096	/* 4.096 us = 4096 / 10^6 ms */

/* The shortest gap between rounds that counts as the engine's own (above). */
#define TP_SCHED_GAP_MIN_US 1000

enum tp_timer_tag {
	TP_TIMER_RETRANS,
	TP_TIMER_RNR,
	TP_TIMER_PACE,
};

uint64_t
tp_rnr_timer_us(uint8_t code)
{
	return rnr_timer_us[code & 31];
}

static uint64_t
us_to_tsc(const struct tp_dev *dev, uint64_t us)
{
	return us * dev->tsc_hz / 1000000;
}

/* The largest shift whose tick (2^shift TSC cycles) is at most 4.096 us. */
static unsigned int
wheel_shift(uint64_t tsc_hz)
{
	uint64_t tick = tsc_hz * TP_WHEEL_TICK_US_NUM / 1000000000;
	unsigned int shift = 0;

	while (shift < 32 && (UINT64_C(2) << shift) <= tick)
		shift++;
	return shift;
}

int
tp_sched_init(struct tp_dev *dev, struct tp_sched *sc)
{
	TAILQ_INIT(&sc->ready);
	sc->nready = 0;
	sc->db = NULL;
	sc->round_tsc = rte_get_timer_cycles();
	sc->gap_tsc = 0;
	sc->slots = rte_zmalloc("droce_wheel", TP_WHEEL_SLOTS * sizeof(*sc->slots),
				RTE_CACHE_LINE_SIZE);
	if (sc->slots == NULL)
		return -ENOMEM;
	return tp_wheel_init(&sc->wheel, sc->slots, TP_WHEEL_SLOTS,
			     wheel_shift(dev->tsc_hz), rte_get_timer_cycles());
}

void
tp_sched_fini(struct tp_sched *sc)
{
	rte_free(sc->slots);
	sc->slots = NULL;
}

/* qp goes away: off its engine's ready list and wheel. */
void
tp_sched_forget(struct tp_qp *qp)
{
	struct tp_sched *sc = tp_qp_sched(qp);

	tp_wheel_cancel(&sc->wheel, &qp->retrans_tmr);
	tp_wheel_cancel(&sc->wheel, &qp->rnr_tmr);
	tp_wheel_cancel(&sc->wheel, &qp->cc.pace_tmr);
	if (qp->ready) {
		TAILQ_REMOVE(&sc->ready, qp, ready_link);
		sc->nready--;
		qp->ready = false;
	}
}

/* The local ACK timeout, 4.096 us x 2^timeout (IBTA 9.7.6.1.3), in TSC cycles. */
uint64_t
tp_timer_retrans_tsc(const struct tp_dev *dev, uint8_t timeout)
{
	uint64_t us = (UINT64_C(4096) << timeout) / 1000;

	return us_to_tsc(dev, us > 0 ? us : 1);
}

void
tp_timer_arm_retrans(struct tp_qp *qp)
{
	if (qp->attr.timeout == 0) {	/* infinite: never times out */
		tp_timer_disarm_retrans(qp);
		return;
	}
	qp->retrans_due = rte_get_timer_cycles() + qp->retrans_tsc;
	/*
	 * A restart of an armed timer (every response that makes progress)
	 * leaves the wheel timer at its earlier deadline: when it fires,
	 * tp_timer_expire moves it on to retrans_due.  One relink per
	 * timeout period instead of one per response.
	 */
	if (tp_wheel_armed(&qp->retrans_tmr) && qp->retrans_tmr.deadline <= qp->retrans_due)
		return;
	qp->retrans_tmr.tag = TP_TIMER_RETRANS;
	tp_wheel_arm(&tp_qp_sched(qp)->wheel, &qp->retrans_tmr, qp->retrans_due);
}

void
tp_timer_disarm_retrans(struct tp_qp *qp)
{
	tp_wheel_cancel(&tp_qp_sched(qp)->wheel, &qp->retrans_tmr);
}

bool
tp_timer_retrans_armed(const struct tp_qp *qp)
{
	return tp_wheel_armed(&qp->retrans_tmr);
}

void
tp_timer_arm_rnr(struct tp_qp *qp, uint8_t rnr_code)
{
	qp->rnr_tmr.tag = TP_TIMER_RNR;
	tp_wheel_arm(&tp_qp_sched(qp)->wheel, &qp->rnr_tmr,
		     rte_get_timer_cycles() + us_to_tsc(qp->dev, tp_rnr_timer_us(rnr_code)));
}

void
tp_timer_disarm_rnr(struct tp_qp *qp)
{
	tp_wheel_cancel(&tp_qp_sched(qp)->wheel, &qp->rnr_tmr);
}

void
tp_timer_arm_pace(struct tp_qp *qp, uint64_t deadline)
{
	qp->cc.pace_tmr.tag = TP_TIMER_PACE;
	tp_wheel_arm(&tp_qp_sched(qp)->wheel, &qp->cc.pace_tmr, deadline);
}

/* The RNR wait is over: resend from the NAKed PSN. */
static void
rnr_expired(struct tp_qp *qp)
{
	qp->req.wait_rnr = false;
	if (tp_qp_can_send(qp)) {
		tp_req_rewind(qp);
		tp_timer_arm_retrans(qp);
	}
}

/* A round at now: the engine's gap since the last one (the rule above). */
void
tp_sched_round(struct tp_engine *eng, uint64_t now)
{
	struct tp_sched *sc = &eng->sched;
	uint64_t gap = now - sc->round_tsc;
	uint64_t us;

	sc->round_tsc = now;
	sc->gap_tsc = 0;
	if (sc->wheel.armed == 0)
		return;			/* nothing waited for this round */
	sc->gap_tsc = gap;
	us = gap * 1000000 / eng->dev->tsc_hz;
	if (us >= TP_SCHED_GAP_MIN_US)
		tp_count(eng, TP_CNT_SCHED_GAPS);
	if (us > eng->counters[TP_CNT_SCHED_GAP_MAX_US])
		eng->counters[TP_CNT_SCHED_GAP_MAX_US] = us;
}

/* qp's retransmit timer expired in its engine's gap: not the peer's delay. */
static bool
expired_in_gap(const struct tp_sched *sc, const struct tp_qp *qp)
{
	return !qp->comp.gap_rearmed && sc->gap_tsc >= qp->retrans_tsc / 4 &&
	       sc->gap_tsc >= us_to_tsc(qp->dev, TP_SCHED_GAP_MIN_US);
}

/* The engine's timers due at now: each marks its QP ready and runs. */
void
tp_timer_expire(struct tp_sched *sc, uint64_t now)
{
	struct tp_wheel_list due;
	struct tp_wheel_timer *t;

	if (tp_wheel_expire(&sc->wheel, now, &due) == 0)
		return;
	while ((t = tp_wheel_pop(&sc->wheel, &due)) != NULL) {
		struct tp_qp *qp;

		if (t->tag == TP_TIMER_RNR) {
			qp = container_of(t, struct tp_qp, rnr_tmr);
			rnr_expired(qp);
		} else if (t->tag == TP_TIMER_PACE) {
			/* the pacer lets it send again */
			qp = container_of(t, struct tp_qp, cc.pace_tmr);
		} else {
			qp = container_of(t, struct tp_qp, retrans_tmr);
			if (now < qp->retrans_due) {
				/* restarted since it was armed: not yet */
				tp_wheel_arm(&sc->wheel, t, qp->retrans_due);
				continue;
			}
			if (expired_in_gap(sc, qp)) {
				tp_count(qp->eng, TP_CNT_TIMEOUTS_IN_GAP);
				qp->comp.gap_rearmed = true;
				tp_timer_arm_retrans(qp);
				continue;
			}
			tp_comp_timeout(qp);
		}
		tp_qp_ready(qp);
	}
}
