/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The poll() timeouts of hwlat-scan (service/deadline.c), TAP output.
 * Proves that a timeout towards any allowed deadline stays in 0..max and
 * never ends the wait early.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deadline.h"
#include "unit-test.h"

static void test_poll_timeout(void)
{
	const uint64_t day = 86400 * NSEC_PER_SEC, now = 1000 * NSEC_PER_SEC;
	static const struct {
		uint64_t left_ns;
		int max_ms, want;
	} cases[] = {
		{ 0, POLL_MAX_WAIT_MS, 0 },
		{ 1, POLL_MAX_WAIT_MS, 1 }, /* rounded up: never early */
		{ NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 1 },
		{ NSEC_PER_MSEC + 1, POLL_MAX_WAIT_MS, 2 },
		{ 59999 * NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 59999 },
		{ 60001 * NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 60000 },
		{ 25 * day, POLL_MAX_WAIT_MS, 60000 },   /* > INT_MAX ms */
		{ 50 * day, POLL_MAX_WAIT_MS, 60000 },   /* > UINT32_MAX ms */
		{ 366 * day, POLL_MAX_WAIT_MS, 60000 },
		{ 5 * NSEC_PER_SEC, 1000, 1000 },        /* progress: each second */
		{ 500 * NSEC_PER_MSEC, 1000, 500 },
		{ 5 * NSEC_PER_SEC, 0, 5000 },           /* bad max: the default */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = poll_timeout_ms(now, now + cases[i].left_ns, cases[i].max_ms);

		ok(got == cases[i].want, "poll timeout for %" PRIu64 " ns left, max %d ms: %d (want %d)",
		   cases[i].left_ns, cases[i].max_ms, got, cases[i].want);
	}
	ok(poll_timeout_ms(now + 1, now, POLL_MAX_WAIT_MS) == 0, "poll timeout after the deadline: 0");
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_poll_timeout();
	return tap_finish();
}
