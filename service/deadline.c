/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Clock and poll() timeouts of hwlat-scan. */
#include "deadline.h"
#include "parse.h"

uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

int poll_timeout_ms(uint64_t now, uint64_t deadline, int max_ms)
{
	uint64_t ms;

	if (now >= deadline)
		return 0;
	/* Compared as uint64_t: the remaining time may not fit in an int. */
	ms = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	if (max_ms > POLL_MAX_WAIT_MS || max_ms < 1)
		max_ms = POLL_MAX_WAIT_MS;
	return ms < (uint64_t)max_ms ? (int)ms : max_ms;
}
