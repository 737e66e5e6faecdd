/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/transport's timing wheel (tp_wheel.c), no EAL: arm, cancel, re-arm,
 * expiry order, timers beyond one revolution, a clock that jumps past a
 * whole revolution, and cancelling a timer already taken for expiry.
 * Clock units are arbitrary here; shift 4 makes a tick 16 of them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tp_wheel.h"

#define NSLOTS 8
#define SHIFT 4
#define TICK (UINT64_C(1) << SHIFT)

static struct tp_wheel_timer *slots[NSLOTS];

static void
wheel_at(struct tp_wheel *w, uint64_t now)
{
	assert_int_equal(tp_wheel_init(w, slots, NSLOTS, SHIFT, now), 0);
}

/* Expire at now; the tags of what fired, in order, into tags[]; count. */
static unsigned int
fire(struct tp_wheel *w, uint64_t now, uint32_t *tags, unsigned int max)
{
	struct tp_wheel_list l;
	struct tp_wheel_timer *t;
	unsigned int n = 0;
	uint32_t taken = tp_wheel_expire(w, now, &l);

	while ((t = tp_wheel_pop(w, &l)) != NULL) {
		assert_false(tp_wheel_armed(t));
		assert_true(n < max);
		tags[n++] = t->tag;
	}
	assert_int_equal(taken, n);
	return n;
}

static void
test_init_rejects(void **state)
{
	struct tp_wheel w;

	(void)state;
	assert_int_equal(tp_wheel_init(&w, slots, 6, SHIFT, 0), -EINVAL);
	assert_int_equal(tp_wheel_init(&w, slots, 0, SHIFT, 0), -EINVAL);
	assert_int_equal(tp_wheel_init(&w, NULL, NSLOTS, SHIFT, 0), -EINVAL);
}

static void
test_arm_fires_at_deadline_not_before(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer t = { .tag = 7 };
	uint32_t tags[4];

	(void)state;
	wheel_at(&w, 1000);
	tp_wheel_arm(&w, &t, 1000 + 5 * TICK + 3);
	assert_true(tp_wheel_armed(&t));
	assert_int_equal(w.armed, 1);
	for (uint64_t now = 1000; now < 1000 + 5 * TICK + 3; now += 3)
		assert_int_equal(fire(&w, now, tags, 4), 0);
	assert_int_equal(fire(&w, 1000 + 5 * TICK + 2, tags, 4), 0);
	assert_int_equal(fire(&w, 1000 + 5 * TICK + 3, tags, 4), 1);
	assert_int_equal(tags[0], 7);
	assert_false(tp_wheel_armed(&t));
	assert_int_equal(w.armed, 0);
	assert_int_equal(fire(&w, 1000 + 100 * TICK, tags, 4), 0);
}

static void
test_cancel_and_rearm(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer a = { .tag = 1 }, b = { .tag = 2 }, c = { .tag = 3 };
	uint32_t tags[4];

	(void)state;
	wheel_at(&w, 0);
	/* three in one slot: cancel the middle one of its list */
	tp_wheel_arm(&w, &a, 2 * TICK);
	tp_wheel_arm(&w, &b, 2 * TICK + 1);
	tp_wheel_arm(&w, &c, 2 * TICK + 2);
	tp_wheel_cancel(&w, &b);
	assert_false(tp_wheel_armed(&b));
	tp_wheel_cancel(&w, &b);		/* twice: no-op */
	assert_int_equal(w.armed, 2);
	/* re-arm a later: moves, does not duplicate */
	tp_wheel_arm(&w, &a, 6 * TICK);
	tp_wheel_arm(&w, &a, 5 * TICK);
	assert_int_equal(w.armed, 2);
	assert_int_equal(fire(&w, 3 * TICK, tags, 4), 1);
	assert_int_equal(tags[0], 3);
	assert_int_equal(fire(&w, 5 * TICK - 1, tags, 4), 0);
	assert_int_equal(fire(&w, 5 * TICK, tags, 4), 1);
	assert_int_equal(tags[0], 1);
	assert_int_equal(w.armed, 0);
	/* re-arm after it fired */
	tp_wheel_arm(&w, &a, 7 * TICK);
	assert_int_equal(fire(&w, 7 * TICK, tags, 4), 1);
	assert_int_equal(tags[0], 1);
}

static void
test_expiry_order(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer t[5];
	/* armed out of order, deadlines in different ticks */
	const uint64_t when[5] = { 4 * TICK, 1 * TICK, 6 * TICK + 5, 2 * TICK, 3 * TICK };
	const uint32_t want[5] = { 1, 3, 4, 0, 2 };
	uint32_t tags[5];

	(void)state;
	wheel_at(&w, 0);
	for (uint32_t i = 0; i < 5; i++) {
		t[i] = (struct tp_wheel_timer){ .tag = i };
		tp_wheel_arm(&w, &t[i], when[i]);
	}
	/* one late call takes all, earliest tick first */
	assert_int_equal(fire(&w, 7 * TICK, tags, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(tags[i], want[i]);
}

static void
test_beyond_one_revolution(void **state)
{
	struct tp_wheel w;
	/* same slot as tick 1, three revolutions later */
	struct tp_wheel_timer near = { .tag = 1 }, far = { .tag = 2 };
	uint64_t far_at = (1 + 3 * NSLOTS) * TICK;
	uint32_t tags[2];

	(void)state;
	wheel_at(&w, 0);
	tp_wheel_arm(&w, &far, far_at);
	tp_wheel_arm(&w, &near, 1 * TICK);
	assert_int_equal(fire(&w, 1 * TICK, tags, 2), 1);
	assert_int_equal(tags[0], 1);
	/* every tick up to just before it: the far one stays */
	for (uint64_t now = 2 * TICK; now < far_at; now += TICK)
		assert_int_equal(fire(&w, now, tags, 2), 0);
	assert_true(tp_wheel_armed(&far));
	assert_int_equal(fire(&w, far_at, tags, 2), 1);
	assert_int_equal(tags[0], 2);
}

static void
test_clock_jumps_past_revolution(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer t[NSLOTS];
	uint32_t tags[NSLOTS];

	(void)state;
	wheel_at(&w, 0);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		t[i] = (struct tp_wheel_timer){ .tag = i };
		tp_wheel_arm(&w, &t[i], (i + 1) * TICK);
	}
	/* no call for ten revolutions: each slot visited once, all fire */
	assert_int_equal(fire(&w, 10 * NSLOTS * TICK, tags, NSLOTS), NSLOTS);
	assert_int_equal(w.armed, 0);
	/* the wheel goes on from there: a deadline in the past fires next call */
	tp_wheel_arm(&w, &t[0], 5 * TICK);
	assert_int_equal(fire(&w, 10 * NSLOTS * TICK, tags, NSLOTS), 1);
	assert_int_equal(tags[0], 0);
}

static void
test_wraparound_of_the_clock(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer a = { .tag = 1 }, b = { .tag = 2 };
	/* slot indices wrap from NSLOTS - 1 to 0 between a and b */
	uint64_t base = (UINT64_C(1) << 40) + (NSLOTS - 2) * TICK;
	uint32_t tags[2];

	(void)state;
	wheel_at(&w, base);
	tp_wheel_arm(&w, &a, base + 1 * TICK);
	tp_wheel_arm(&w, &b, base + 3 * TICK);
	assert_int_equal(fire(&w, base + 1 * TICK, tags, 2), 1);
	assert_int_equal(tags[0], 1);
	assert_int_equal(fire(&w, base + 3 * TICK - 1, tags, 2), 0);
	assert_int_equal(fire(&w, base + 3 * TICK, tags, 2), 1);
	assert_int_equal(tags[0], 2);
}

static void
test_cancel_while_waiting_to_fire(void **state)
{
	struct tp_wheel w;
	struct tp_wheel_timer a = { .tag = 1 }, b = { .tag = 2 }, c = { .tag = 3 };
	struct tp_wheel_list l;
	struct tp_wheel_timer *t;

	(void)state;
	wheel_at(&w, 0);
	tp_wheel_arm(&w, &a, 1 * TICK);
	tp_wheel_arm(&w, &b, 2 * TICK);
	tp_wheel_arm(&w, &c, 3 * TICK);
	assert_int_equal(tp_wheel_expire(&w, 3 * TICK, &l), 3);
	t = tp_wheel_pop(&w, &l);
	assert_ptr_equal(t, &a);
	/* a's handler cancels b (taken, not yet fired) and re-arms a */
	tp_wheel_cancel(&w, &b);
	tp_wheel_arm(&w, &a, 9 * TICK);
	assert_ptr_equal(tp_wheel_pop(&w, &l), &c);
	assert_null(tp_wheel_pop(&w, &l));
	assert_int_equal(w.armed, 1);
	assert_true(tp_wheel_armed(&a));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test(test_arm_fires_at_deadline_not_before),
		cmocka_unit_test(test_cancel_and_rearm),
		cmocka_unit_test(test_expiry_order),
		cmocka_unit_test(test_beyond_one_revolution),
		cmocka_unit_test(test_clock_jumps_past_revolution),
		cmocka_unit_test(test_wraparound_of_the_clock),
		cmocka_unit_test(test_cancel_while_waiting_to_fire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
