/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time for hwlat-scan's loops: a clock in nanoseconds and the poll() timeout
 * towards a deadline, clamped so that no duration the configuration allows
 * (up to 366 days) can overflow poll()'s int milliseconds.
 */
#pragma once

#include <stdint.h>
#include <time.h>

/* Longest single poll() wait; the loop re-checks its deadline after it. */
#define POLL_MAX_WAIT_MS 60000

uint64_t now_ns(clockid_t clock);

/*
 * Milliseconds to wait from now until deadline (both CLOCK_MONOTONIC ns),
 * rounded up so that the wait never ends before the deadline, and at most
 * max_ms (1 <= max_ms <= POLL_MAX_WAIT_MS); 0 when the deadline has passed.
 */
int poll_timeout_ms(uint64_t now, uint64_t deadline, int max_ms);
