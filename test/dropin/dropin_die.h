/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_die.h - the failure report of test/dropin's programs: "FAIL: "
 * and the message on stdout (which dropin_test.py shows), exit status 1.
 */
#ifndef DROCE_DROPIN_DIE_H
#define DROCE_DROPIN_DIE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(1);
}

#endif /* DROCE_DROPIN_DIE_H */
