/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TAP output for the C unit tests: ok() prints one numbered line per check,
 * tap_finish() the plan and the exit status for main(). Header-only: each
 * test program is one translation unit.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned n_tests, n_failed;

static void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	n_tests++;
	if (!cond)
		n_failed++;
	printf("%s %u - ", cond ? "ok" : "not ok", n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Prints the TAP plan and returns the exit status for main(). */
static inline int tap_finish(void)
{
	printf("1..%u\n", n_tests);
	if (n_failed)
		printf("# %u of %u failed\n", n_failed, n_tests);
	return n_failed ? 1 : 0;
}
