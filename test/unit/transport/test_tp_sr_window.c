/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat's PSN window (lib/transport tp_sr_window.c): marks in
 * and out of order, duplicates, the window's edge, the base moving over
 * what arrived, the SACK bitmap both ways, holes, and all of it across the
 * 24-bit PSN wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "roce_psn.h"
#include "tp_sr_window.h"

static const uint32_t bases[] = { 0, 1000, ROCE_PSN_MASK - 5, ROCE_PSN_MASK - TP_SR_WINDOW + 3 };

#define P(base, i) roce_psn_add((base), (i))

static void
test_in_order(void **state)
{
	(void)state;
	for (unsigned int b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct tp_sr_win w;
		uint32_t base = bases[b];

		tp_sr_win_init(&w, base);
		for (uint32_t i = 0; i < 3 * TP_SR_WINDOW; i++) {
			assert_int_equal(tp_sr_win_mark(&w, P(base, i)), TP_SR_NEW);
			assert_int_equal(tp_sr_win_advance(&w), 1);
			assert_int_equal(w.base, P(base, i + 1));
			assert_int_equal(tp_sr_win_sack(&w), 0);
		}
	}
}

static void
test_out_of_order_then_fill(void **state)
{
	(void)state;
	for (unsigned int b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct tp_sr_win w;
		uint32_t base = bases[b], hole;

		tp_sr_win_init(&w, base);
		/* 0 and 3 lost: 1, 2, 4, 5 arrive */
		assert_int_equal(tp_sr_win_mark(&w, P(base, 1)), TP_SR_NEW);
		assert_int_equal(tp_sr_win_mark(&w, P(base, 2)), TP_SR_NEW);
		assert_int_equal(tp_sr_win_mark(&w, P(base, 4)), TP_SR_NEW);
		assert_int_equal(tp_sr_win_mark(&w, P(base, 5)), TP_SR_NEW);
		assert_int_equal(tp_sr_win_mark(&w, P(base, 4)), TP_SR_DUP);
		assert_int_equal(tp_sr_win_advance(&w), 0);
		assert_int_equal(w.base, base);
		/* SACK: bit i is base + 1 + i */
		assert_int_equal(tp_sr_win_sack(&w), 0x1bull);
		assert_true(tp_sr_win_next_hole(&w, base, P(base, 6), &hole));
		assert_int_equal(hole, base);
		assert_true(tp_sr_win_next_hole(&w, P(base, 1), P(base, 6), &hole));
		assert_int_equal(hole, P(base, 3));
		assert_false(tp_sr_win_next_hole(&w, P(base, 4), P(base, 6), &hole));
		/* 0 arrives: base moves over 0..2, stops at the hole 3 */
		assert_int_equal(tp_sr_win_mark(&w, base), TP_SR_NEW);
		assert_int_equal(tp_sr_win_advance(&w), 3);
		assert_int_equal(w.base, P(base, 3));
		assert_int_equal(tp_sr_win_sack(&w), 0x3ull);	/* 4, 5 */
		assert_int_equal(tp_sr_win_mark(&w, P(base, 1)), TP_SR_DUP);
		assert_true(tp_sr_win_has(&w, P(base, 2)));
		assert_false(tp_sr_win_has(&w, P(base, 3)));
		/* 3 arrives: base past 5 */
		assert_int_equal(tp_sr_win_mark(&w, P(base, 3)), TP_SR_NEW);
		assert_int_equal(tp_sr_win_advance(&w), 3);
		assert_int_equal(w.base, P(base, 6));
		assert_int_equal(tp_sr_win_sack(&w), 0);
		/* the slots left behind stand for the next lap, empty */
		for (uint32_t i = 0; i < TP_SR_WINDOW; i++)
			assert_false(tp_sr_win_has(&w, P(base, 6 + i)));
	}
}

static void
test_window_edge(void **state)
{
	struct tp_sr_win w;
	uint32_t base = ROCE_PSN_MASK - 10;

	(void)state;
	tp_sr_win_init(&w, base);
	assert_int_equal(tp_sr_win_mark(&w, P(base, TP_SR_WINDOW - 1)), TP_SR_NEW);
	assert_int_equal(tp_sr_win_mark(&w, P(base, TP_SR_WINDOW)), TP_SR_OUTSIDE);
	assert_int_equal(tp_sr_win_mark(&w, P(base, ROCE_PSN_HALF)), TP_SR_DUP);	/* before */
	assert_int_equal(tp_sr_win_mark(&w, roce_psn_add(base, ROCE_PSN_MASK)), TP_SR_DUP);
	/* the same slot one lap on is not confused with the marked one */
	assert_false(tp_sr_win_has(&w, P(base, 2 * TP_SR_WINDOW - 1)));
	/* everything but base: advance stops at once; then base fills all */
	for (uint32_t i = 1; i < TP_SR_WINDOW - 1; i++)
		assert_int_equal(tp_sr_win_mark(&w, P(base, i)), TP_SR_NEW);
	assert_int_equal(tp_sr_win_sack(&w), ~0ull);
	assert_int_equal(tp_sr_win_advance(&w), 0);
	assert_int_equal(tp_sr_win_mark(&w, base), TP_SR_NEW);
	assert_int_equal(tp_sr_win_advance(&w), TP_SR_WINDOW);
	assert_int_equal(w.base, P(base, TP_SR_WINDOW));
	for (uint32_t i = 0; i < TP_SR_WINDOW; i++)
		assert_false(tp_sr_win_has(&w, P(base, TP_SR_WINDOW + i)));
}

/* The requester's side: cumulative ACKs and the peer's SACKs. */
static void
test_requester_acks_and_sacks(void **state)
{
	(void)state;
	for (unsigned int b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		struct tp_sr_win w;
		uint32_t base = bases[b], hole, next;
		int holes = 0;

		tp_sr_win_init(&w, base);
		/* the peer has 10..19 and 30 but not base + 0..9, 20..29 */
		tp_sr_win_apply_sack(&w, P(base, 9), 0x3ffull | 1ull << 20);
		assert_false(tp_sr_win_has(&w, P(base, 9)));
		assert_true(tp_sr_win_has(&w, P(base, 10)));
		assert_true(tp_sr_win_has(&w, P(base, 30)));
		/* resend up to the highest acknowledged: 0..9, 20..29 */
		for (next = base; tp_sr_win_next_hole(&w, next, P(base, 31), &hole);
		     next = roce_psn_add(hole, 1)) {
			int32_t d = roce_psn_diff(hole, base);

			assert_true((d >= 0 && d <= 9) || (d >= 20 && d <= 29));
			holes++;
		}
		assert_int_equal(holes, 20);
		/* a cumulative ACK to 25: base there, 25..29 still holes */
		assert_true(tp_sr_win_ack_to(&w, P(base, 25)));
		assert_int_equal(w.base, P(base, 25));
		assert_true(tp_sr_win_has(&w, P(base, 24)));
		assert_true(tp_sr_win_next_hole(&w, base, P(base, 31), &hole));
		assert_int_equal(hole, P(base, 25));
		/* never back, never past the window */
		assert_false(tp_sr_win_ack_to(&w, P(base, 24)));
		assert_false(tp_sr_win_ack_to(&w, P(base, 25 + TP_SR_WINDOW + 1)));
		assert_true(tp_sr_win_ack_to(&w, P(base, 25 + TP_SR_WINDOW)));
		assert_int_equal(w.base, P(base, 25 + TP_SR_WINDOW));
		assert_false(tp_sr_win_has(&w, P(base, 25 + TP_SR_WINDOW + 5)));
		/* a hole beyond the window is not known: none reported */
		assert_false(tp_sr_win_next_hole(&w, P(base, 25 + 2 * TP_SR_WINDOW),
						 P(base, 30 + 2 * TP_SR_WINDOW), &hole));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_out_of_order_then_fill),
		cmocka_unit_test(test_window_edge),
		cmocka_unit_test(test_requester_acks_and_sacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
