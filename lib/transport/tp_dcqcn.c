/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point: the equations of tp_dcqcn.h.  Timers are
 * evaluated lazily: whoever asks (the pacer before a packet, a CNP) first
 * brings them up to its instant, so an idle QP costs nothing and the
 * results do not depend on when a round happened to run.
 */
#include "tp_dcqcn.h"

#define MBPS 1000000ull
/* safety bound on timer events processed at once (reached only after a
 * long idle time, when the rate is back at the line rate anyway) */
#define TP_DCQCN_MAX_EVENTS 4096

static uint64_t
us_tsc(uint64_t hz, uint32_t us)
{
	return hz * us / 1000000;
}

void
tp_dcqcn_init(struct tp_dcqcn *d, const struct tp_cc_params *p, uint64_t hz,
	      uint64_t now)
{
	*d = (struct tp_dcqcn){ .p = p };
	d->max_rate = (p->rp_max_rate != 0 ? p->rp_max_rate : 100000) * MBPS;
	d->min_rate = p->rp_min_rate * MBPS;
	d->rc = d->max_rate;
	d->rt = d->max_rate;
	d->alpha = p->rp_initial_alpha_value;
	d->alpha_tsc = us_tsc(hz, p->rp_dce_tcp_rtt);
	if (d->alpha_tsc == 0)
		d->alpha_tsc = 1;
	d->inc_tsc = us_tsc(hz, p->rp_time_reset);
	if (d->inc_tsc == 0)
		d->inc_tsc = 1;
	d->monitor_tsc = us_tsc(hz, p->rp_rate_reduce_monitor_period);
	d->alpha_due = now + d->alpha_tsc;
	d->inc_due = TP_DCQCN_NEVER;
	d->cut_ok = now;
}

static void
increase(struct tp_dcqcn *d)
{
	uint32_t f = d->p->rp_threshold;
	uint32_t lo = d->t_cnt < d->b_cnt ? d->t_cnt : d->b_cnt;
	uint32_t hi = d->t_cnt < d->b_cnt ? d->b_cnt : d->t_cnt;

	if (lo >= f)				/* hyper increase */
		d->rt += (uint64_t)d->p->rp_hai_rate * MBPS * (lo - f + 1);
	else if (hi >= f)			/* additive increase */
		d->rt += (uint64_t)d->p->rp_ai_rate * MBPS;
	/* else fast recovery: towards the target, which stays */
	if (d->rt > d->max_rate)
		d->rt = d->max_rate;
	d->rc = (d->rt + d->rc + 1) / 2;	/* rounded up: reaches Rt */
}

static bool
at_line_rate(const struct tp_dcqcn *d)
{
	return d->rc >= d->max_rate && d->rt >= d->max_rate;
}

static void
advance_alpha(struct tp_dcqcn *d, uint64_t now)
{
	uint32_t g = d->p->rp_dce_tcp_g;
	unsigned int n = 0;

	while (d->alpha_due <= now) {
		uint32_t mark = d->cnp_in_period ? 1023u * (1024 - g) : 0;

		if (d->alpha == 0 && mark == 0) {
			/* 0 stays 0 without CNPs: skip the rest at once */
			d->alpha_due += ((now - d->alpha_due) / d->alpha_tsc + 1) *
					d->alpha_tsc;
			break;
		}
		/* without CNPs each period lowers alpha by one at least, so
		 * this bound is only reached with g = 0 */
		d->alpha = ++n == TP_DCQCN_MAX_EVENTS ? 0 : (d->alpha * g + mark) >> 10;
		d->cnp_in_period = false;
		d->alpha_due += d->alpha_tsc;
	}
}

static void
advance_timer(struct tp_dcqcn *d, uint64_t now)
{
	unsigned int n = 0;

	while (d->inc_due <= now) {
		d->t_cnt++;
		increase(d);
		d->inc_due += d->inc_tsc;
		if (++n == TP_DCQCN_MAX_EVENTS)
			d->rc = d->rt = d->max_rate;
		if (at_line_rate(d))
			d->inc_due = TP_DCQCN_NEVER;
	}
}

void
tp_dcqcn_advance(struct tp_dcqcn *d, uint64_t now)
{
	advance_alpha(d, now);
	advance_timer(d, now);
}

bool
tp_dcqcn_cnp(struct tp_dcqcn *d, uint64_t now)
{
	const struct tp_cc_params *p = d->p;
	uint64_t cut;

	tp_dcqcn_advance(d, now);
	d->cnps++;
	d->cnp_in_period = true;
	if (now < d->cut_ok)
		return false;
	d->rt = d->rc;
	if (!d->cut_once && p->rp_rate_to_set_on_first_cnp != 0) {
		d->rc = (uint64_t)p->rp_rate_to_set_on_first_cnp * MBPS;
	} else {
		cut = (d->rc * d->alpha) >> p->rp_gd;
		if (cut > d->rc * p->rp_min_dec_fac / 100)
			cut = d->rc * p->rp_min_dec_fac / 100;
		d->rc -= cut;
	}
	if (d->rc < d->min_rate)
		d->rc = d->min_rate;
	if (d->rc > d->max_rate)
		d->rc = d->max_rate;
	d->cut_once = true;
	d->t_cnt = 0;
	d->b_cnt = 0;
	d->bytes = 0;
	d->inc_due = now + d->inc_tsc;
	d->cut_ok = now + d->monitor_tsc;
	d->cuts++;
	return true;
}

void
tp_dcqcn_sent(struct tp_dcqcn *d, uint32_t bytes)
{
	if (d->inc_due == TP_DCQCN_NEVER)
		return;			/* at the line rate: nothing to recover */
	d->bytes += bytes;
	while (d->bytes >= d->p->rp_byte_reset) {
		d->bytes -= d->p->rp_byte_reset;
		d->b_cnt++;
		increase(d);
		if (at_line_rate(d)) {
			d->inc_due = TP_DCQCN_NEVER;
			d->bytes = 0;
			return;
		}
	}
}
