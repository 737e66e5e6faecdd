/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point (lib/transport tp_dcqcn.c) against values
 * computed by hand from its equations (tp_dcqcn.h), on a clock of
 * 1,000,000 units per second (one unit per microsecond), mlx5's defaults:
 * Rc0 = 100 Gb/s, alpha 1023, g 1019, gd 11, T 300 us, B 32767 bytes,
 * F 1, AI 5 Mb/s, HAI 50 Mb/s, alpha period 1 us, one cut per 4 us.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tp_dcqcn.h"

#define HZ 1000000ull
#define MBPS 1000000ull

static void
test_defaults_are_mlx5s(void **state)
{
	struct tp_cc_params p;

	(void)state;
	tp_cc_params_default(&p);
	assert_int_equal(p.rp_time_reset, 300);
	assert_int_equal(p.rp_byte_reset, 32767);
	assert_int_equal(p.rp_ai_rate, 5);
	assert_int_equal(p.rp_hai_rate, 50);
	assert_int_equal(p.rp_gd, 11);
	assert_int_equal(p.rp_min_dec_fac, 50);
	assert_int_equal(p.rp_initial_alpha_value, 1023);
	assert_int_equal(p.rp_dce_tcp_g, 1019);
	assert_int_equal(p.rp_dce_tcp_rtt, 1);
	assert_int_equal(p.rp_rate_reduce_monitor_period, 4);
	assert_int_equal(p.np_cnp_dscp, 48);
	assert_int_equal(p.np_cnp_prio, 6);
	/* set by name, bounds checked */
	assert_int_equal(tp_cc_param_set(&p, "rp_ai_rate", 7), 0);
	assert_int_equal(p.rp_ai_rate, 7);
	assert_int_equal(tp_cc_param_set(&p, "rp_gd", 0), -ERANGE);
	assert_int_equal(tp_cc_param_set(&p, "np_cnp_dscp", 64), -ERANGE);
	assert_int_equal(tp_cc_param_set(&p, "rp_no_such", 1), -ENOENT);
	assert_string_equal(tp_cc_param_name(TP_CC_PARAM_rp_gd), "rp_gd");
	assert_int_equal(tp_cc_param_get(&p, TP_CC_PARAM_rp_ai_rate), 7);
}

/*
 * CNPs at 0, 2 and 4 us, then the timer at 304 us, one byte-counter
 * period, the timer at 604 us:
 * - t=0: Rt = 100e9; Rc = 100e9 - (100e9 * 1023 >> 11) = 50,048,828,125.
 * - alpha at t=1 (CNP in the period): (1023*1019 + 1023*5) >> 10 = 1023;
 *   t=2 (none): 1023*1019 >> 10 = 1018.
 * - t=2: within 4 us of the cut: ignored (alpha marked).
 * - alpha t=3 (marked): (1018*1019 + 5115) >> 10 = 1018; t=4: 1013.
 * - t=4: Rt = 50,048,828,125; Rc -= Rc * 1013 >> 11: 25,293,231,011.
 * - t=304 (T=1, B=0, F=1): additive: Rt = 50,053,828,125,
 *   Rc = (Rt + Rc + 1) / 2 = 37,673,529,568.
 * - 32,767 bytes (B=1): hyper, i = 1: Rt = 50,103,828,125, Rc = 43,888,678,847.
 * - t=604 (T=2, B=1): hyper, i = min(2,1) - 1 + 1 = 1: Rt = 50,153,828,125,
 *   Rc = 47,021,253,486.
 */
static void
test_cnp_cut_alpha_and_increase(void **state)
{
	struct tp_cc_params p;
	struct tp_dcqcn d;

	(void)state;
	tp_cc_params_default(&p);
	tp_dcqcn_init(&d, &p, HZ, 0);
	assert_int_equal(d.rc, 100000 * MBPS);

	assert_true(tp_dcqcn_cnp(&d, 0));
	assert_int_equal(d.rc, 50048828125ull);
	assert_int_equal(d.rt, 100000000000ull);

	assert_false(tp_dcqcn_cnp(&d, 2));
	assert_int_equal(d.alpha, 1018);
	assert_int_equal(d.rc, 50048828125ull);

	assert_true(tp_dcqcn_cnp(&d, 4));
	assert_int_equal(d.alpha, 1013);
	assert_int_equal(d.rt, 50048828125ull);
	assert_int_equal(d.rc, 25293231011ull);
	assert_int_equal(d.cnps, 3);
	assert_int_equal(d.cuts, 2);

	tp_dcqcn_advance(&d, 303);
	assert_int_equal(d.rc, 25293231011ull);
	tp_dcqcn_advance(&d, 304);
	assert_int_equal(d.rt, 50053828125ull);
	assert_int_equal(d.rc, 37673529568ull);

	tp_dcqcn_sent(&d, 32766);
	assert_int_equal(d.rc, 37673529568ull);
	tp_dcqcn_sent(&d, 1);
	assert_int_equal(d.rt, 50103828125ull);
	assert_int_equal(d.rc, 43888678847ull);

	tp_dcqcn_advance(&d, 604);
	assert_int_equal(d.rt, 50153828125ull);
	assert_int_equal(d.rc, 47021253486ull);

	/* alpha without CNPs: 1013 at t=4, 1019/1024 per us, down to 0 */
	assert_int_equal(d.alpha, 0);

	/* a long idle time: back at the line rate, the timer stopped */
	tp_dcqcn_advance(&d, 10 * HZ);
	assert_int_equal(d.rc, 100000 * MBPS);
	assert_int_equal(d.rt, 100000 * MBPS);
	assert_int_equal(d.inc_due, TP_DCQCN_NEVER);
}

/* Fast recovery with F = 5: the target stays, Rc halves the distance. */
static void
test_fast_recovery(void **state)
{
	struct tp_cc_params p;
	struct tp_dcqcn d;

	(void)state;
	tp_cc_params_default(&p);
	p.rp_threshold = 5;
	p.rp_max_rate = 1000;		/* 1 Gb/s */
	tp_dcqcn_init(&d, &p, HZ, 0);
	assert_true(tp_dcqcn_cnp(&d, 0));
	/* 1e9 - (1e9 * 1023 >> 11) = 1e9 - 499,511,718 */
	assert_int_equal(d.rc, 500488282ull);
	tp_dcqcn_advance(&d, 300);		/* T=1 < 5: (1e9 + Rc + 1) / 2 */
	assert_int_equal(d.rt, 1000000000ull);
	assert_int_equal(d.rc, 750244141ull);
	tp_dcqcn_advance(&d, 600);		/* T=2 */
	assert_int_equal(d.rc, 875122071ull);
}

/* rp_min_dec_fac caps a cut; rp_min_rate floors the rate; first-CNP rate. */
static void
test_cut_bounds(void **state)
{
	struct tp_cc_params p;
	struct tp_dcqcn d;
	uint64_t t = 0;

	(void)state;
	tp_cc_params_default(&p);
	p.rp_min_dec_fac = 10;
	tp_dcqcn_init(&d, &p, HZ, 0);
	assert_true(tp_dcqcn_cnp(&d, 0));
	assert_int_equal(d.rc, 90000 * MBPS);	/* at most 10 % */

	tp_cc_params_default(&p);
	p.rp_rate_to_set_on_first_cnp = 1000;
	tp_dcqcn_init(&d, &p, HZ, 0);
	assert_true(tp_dcqcn_cnp(&d, 0));
	assert_int_equal(d.rc, 1000 * MBPS);
	assert_true(tp_dcqcn_cnp(&d, 4));
	/* alpha: t=1 marked 1023, t=2..4: 1018, 1013, 1008 */
	assert_int_equal(d.alpha, 1008);
	assert_int_equal(d.rc, 1000 * MBPS - ((1000 * MBPS * 1008) >> 11));

	tp_cc_params_default(&p);
	tp_dcqcn_init(&d, &p, HZ, 0);
	for (int i = 0; i < 40; i++, t += 4)
		tp_dcqcn_cnp(&d, t);
	assert_int_equal(d.rc, 1 * MBPS);	/* rp_min_rate */
	assert_int_equal(d.cuts, 40);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_mlx5s),
		cmocka_unit_test(test_cnp_cut_alpha_and_increase),
		cmocka_unit_test(test_fast_recovery),
		cmocka_unit_test(test_cut_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
