/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dominant period of a sequence of events, which points at a periodic
 * firmware source such as an ECC-scrubbing SMI every three minutes.
 *
 * The events are the times of the reported windows of one machine, in
 * increasing order. Windows less than merge_ns (the scan's window) after
 * the first window of an event belong to it: a broadcast SMI shows on
 * every sampling CPU. Between consecutive events lie the intervals.
 *
 * The detector samples only part of the time (width out of window), so an
 * event of a periodic source is missed now and then: an interval is then
 * 2, 3... times the period. A candidate period P explains an interval d
 * when d is within P / 20 (5 %) of k * P for a whole k from 1 to
 * PERIOD_MAX_MULTIPLE. Every interval is a candidate; the one explaining
 * the most intervals wins, the longer one on a tie (half a period
 * explains all a period does, with doubled k). The period reported is
 * the sum of the intervals it explains divided by the sum of their k,
 * rounded to the nanosecond.
 *
 * A period is dominant only with at least PERIOD_MIN_EVENTS events and
 * when it explains at least two thirds of the intervals (rounded up), so
 * a few stray events do not hide it and random events do not make one.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define PERIOD_MIN_EVENTS 4
#define PERIOD_MAX_MULTIPLE 8

struct period_result {
	uint64_t events;     /* after merging */
	uint64_t intervals;  /* events - 1, or 0 */
	uint64_t explained;  /* intervals the period explains (0: none found) */
	uint64_t needed;     /* explained intervals a dominant period needs */
	uint64_t period_ns;  /* 0: no dominant period */
};

/*
 * Finds the dominant period of the times t[0..n-1], which it uses as its
 * scratch: sorted in place, the merged events written over them and, with
 * PERIOD_MIN_EVENTS events or more, the intervals between them. Returns 0
 * with *ret filled (period_ns 0 when there is none), or -ENOMEM.
 */
int period_find(uint64_t *t, size_t n, uint64_t merge_ns, struct period_result *ret);
