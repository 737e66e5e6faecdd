/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point (Zhu et al., SIGCOMM 2015), the arithmetic alone:
 * pure C on a free-running clock (TSC cycles, hz per second), so its unit
 * test drives it with hand-picked instants.  tp_cc_dcqcn.c plugs it into
 * the transport's congestion-control seam.
 *
 * Rates in bit/s.  Rc is the current rate (the pacer's), Rt the target.
 * - CNP: alpha's current period is marked; unless a cut happened less than
 *   rp_rate_reduce_monitor_period ago: Rt := Rc, Rc := Rc - Rc * alpha /
 *   2^rp_gd (at most rp_min_dec_fac % of Rc, not below rp_min_rate; the
 *   first CNP sets rp_rate_to_set_on_first_cnp instead when nonzero); the
 *   timer, the byte counter and their event counts T, B restart.
 * - alpha, every rp_dce_tcp_rtt: alpha := (alpha * g + m * 1023 * (1024 -
 *   g)) >> 10, m = 1 when a CNP came in that period (g = rp_dce_tcp_g).
 * - increase, each rp_time_reset after a cut (T += 1) and each
 *   rp_byte_reset bytes sent (B += 1), with F = rp_threshold: fast
 *   recovery while T < F and B < F (Rt unchanged); hyper increase when
 *   both are >= F: Rt += rp_hai_rate * (min(T, B) - F + 1); else additive:
 *   Rt += rp_ai_rate; then Rc := (Rt + Rc + 1) / 2 (both capped at the line
 *   rate; at the line rate the timer stops).
 */
#ifndef TP_DCQCN_H
#define TP_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_cc_params.h"

#define TP_DCQCN_NEVER UINT64_MAX

struct tp_dcqcn {
	const struct tp_cc_params *p;
	uint64_t rc;			/* current rate, bit/s */
	uint64_t rt;			/* target rate */
	uint64_t max_rate;		/* line rate */
	uint64_t min_rate;
	uint32_t alpha;			/* 1/1024 units, <= 1023 */
	bool cnp_in_period;		/* a CNP since alpha's last update */
	bool cut_once;			/* a CNP has cut the rate */
	uint32_t t_cnt;			/* timer events since the last cut */
	uint32_t b_cnt;			/* byte-counter events since the last cut */
	uint64_t bytes;			/* sent since the last byte event */
	uint64_t alpha_due;		/* next alpha update */
	uint64_t inc_due;		/* next timer increase, or NEVER */
	uint64_t cut_ok;		/* no cut before this */
	uint64_t alpha_tsc, inc_tsc, monitor_tsc;
	uint64_t cnps;			/* CNPs handled */
	uint64_t cuts;			/* rate cuts */
};

void tp_dcqcn_init(struct tp_dcqcn *d, const struct tp_cc_params *p,
		   uint64_t hz, uint64_t now);
/* Time passes: alpha's periods and the increase timer up to now. */
void tp_dcqcn_advance(struct tp_dcqcn *d, uint64_t now);
/* A CNP for this QP arrived at now.  True when it cut the rate. */
bool tp_dcqcn_cnp(struct tp_dcqcn *d, uint64_t now);
/* bytes (frames, headers included) left at the current rate. */
void tp_dcqcn_sent(struct tp_dcqcn *d, uint32_t bytes);

#endif /* TP_DCQCN_H */
