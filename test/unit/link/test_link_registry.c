/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/link's registry: drivers linked whole are found by name before
 * main(), names are unique, malformed drivers are refused, the table is
 * bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "droce_link.h"

static int
fake_open(const struct droce_link_params *params, struct droce_link **out)
{
	(void)params;
	*out = NULL;
	return -ENODEV;
}

/* The ethdev driver registered itself from its constructor. */
static void
test_ethdev_registered(void **state)
{
	const struct droce_link_driver *drv = droce_link_driver_find("ethdev");

	(void)state;
	assert_non_null(drv);
	assert_string_equal(drv->name, "ethdev");
	assert_non_null(drv->open);
	assert_non_null(drv->stats);
	assert_null(droce_link_driver_find("no-such-driver"));
	assert_null(droce_link_driver_find(NULL));
}

static void
test_register_refused(void **state)
{
	static const struct droce_link_driver dup = { .name = "ethdev", .open = fake_open };
	static const struct droce_link_driver no_open = { .name = "x" };
	static const struct droce_link_driver no_name = { .open = fake_open };

	(void)state;
	assert_int_equal(droce_link_driver_register(NULL), -EINVAL);
	assert_int_equal(droce_link_driver_register(&no_open), -EINVAL);
	assert_int_equal(droce_link_driver_register(&no_name), -EINVAL);
	assert_int_equal(droce_link_driver_register(&dup), -EEXIST);
	assert_null(droce_link_driver_find("x"));
}

/* Registered drivers are found; past the table's size: -ENOSPC. */
static void
test_register_until_full(void **state)
{
	static char names[16][8];
	static struct droce_link_driver drv[16];
	unsigned int added = 0;
	int rc = 0;

	(void)state;
	for (unsigned int i = 0; i < 16 && rc == 0; i++) {
		snprintf(names[i], sizeof(names[i]), "fake%u", i);
		drv[i] = (struct droce_link_driver){ .name = names[i], .open = fake_open };
		rc = droce_link_driver_register(&drv[i]);
		if (rc == 0)
			added++;
	}
	assert_int_equal(rc, -ENOSPC);
	/* 8 slots, one taken by "ethdev" */
	assert_int_equal(added, 7);
	for (unsigned int i = 0; i < added; i++)
		assert_ptr_equal(droce_link_driver_find(names[i]), &drv[i]);
	assert_null(droce_link_driver_find(names[added]));
	assert_non_null(droce_link_driver_find("ethdev"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ethdev_registered),
		cmocka_unit_test(test_register_refused),
		cmocka_unit_test(test_register_until_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
