/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dominant period of report/period.c on made sequences of events whose
 * periods were worked out by hand: a perfect period, one with events
 * missed between widths, one with stray events, random events, too few
 * events, the two-thirds rule at its edge, and windows of several CPUs
 * merged into one event. TAP.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "period.h"
#include "../tap.h"

#define S UINT64_C(1000000000)
#define MS UINT64_C(1000000)
#define T0 (UINT64_C(1764750000) * S)

/* Runs period_find on seconds after T0 (plus extra ns each); one window (1 s) merges. */
static struct period_result run(const uint64_t *sec, const uint64_t *extra_ns, size_t n)
{
	uint64_t t[64];
	struct period_result r;

	for (size_t i = 0; i < n; i++)
		t[i] = T0 + sec[i] * S + (extra_ns ? extra_ns[i] : 0);
	period_find(t, n, S, &r);
	return r;
}

static bool is(struct period_result r, uint64_t events, uint64_t explained, uint64_t needed,
	       uint64_t period_ns)
{
	if (r.events == events && r.intervals == (events ? events - 1 : 0) &&
	    r.explained == explained && r.needed == needed && r.period_ns == period_ns)
		return true;
	printf("# got events %" PRIu64 " intervals %" PRIu64 " explained %" PRIu64
	       " needed %" PRIu64 " period %" PRIu64 "\n", r.events, r.intervals, r.explained,
	       r.needed, r.period_ns);
	return false;
}

int main(void)
{
	/* Every 180 s, 6 events: 5 intervals of 180 s, needed ceil(10/3) = 4. */
	static const uint64_t perfect[] = { 0, 180, 360, 540, 720, 900 };
	/* Missed between widths: intervals 180, 360, 180, 540, 180, 360 (k 1 2 1 3 1 2). */
	static const uint64_t missed[] = { 0, 180, 540, 720, 1260, 1440, 1800 };
	/* Jitter within the window: intervals 180.2, 179.9, 360.3, 179.6 s: sum
	 * 900 s over k = 5 gives exactly 180 s. */
	static const uint64_t jit_s[] = { 0, 180, 360, 720, 900 };
	static const uint64_t jit_ns[] = { 0, 200 * MS, 100 * MS, 400 * MS, 0 };
	/* Every 180 s with two stray events (at 250 s and 1000 s): 15
	 * intervals, 180, 70, 110, 180, 180, 180, 100, 80, then 7 of 180: 11
	 * explained by 180 s, needed ceil(30/3) = 10. */
	static const uint64_t noise[] = { 0, 180, 250, 360, 540, 720, 900, 1000, 1080,
					  1260, 1440, 1620, 1800, 1980, 2160, 2340 };
	/* Random: intervals 37, 123, 71, 254, 19, 166, 88: none is within 5 %
	 * of a whole multiple (k <= 8) of another (nearest: 2 * 37 = 74 for
	 * 71, 1.85 allowed; 2 * 88 = 176 for 166, 4.4 allowed), so each
	 * explains itself only: 1 of 7, 5 needed. */
	static const uint64_t random[] = { 0, 37, 160, 231, 485, 504, 670, 758 };
	static const uint64_t four[] = { 0, 180, 360, 540 };
	static const uint64_t three[] = { 0, 180, 360 };
	/* 7 events, 6 intervals, 4 needed: 180 180 180 180 then two strays. */
	static const uint64_t edge_in[] = { 0, 180, 360, 540, 720, 790, 1000 };
	/* One fewer explained: 180 180 180 then 3 strays: 3 of 6. */
	static const uint64_t edge_out[] = { 0, 180, 360, 540, 610, 830, 1000 };
	/* A broadcast SMI on 4 CPUs: windows 0.1 s apart merge into one event. */
	static const uint64_t cpus_s[] = { 0, 0, 0, 180, 180, 360, 360, 360, 540, 720 };
	static const uint64_t cpus_ns[] = { 0, 300 * MS, 999 * MS, 0, 500 * MS, 0, 100 * MS,
					    200 * MS, 0, 0 };
	struct period_result r;
	uint64_t one[1] = { T0 };

	r = run(perfect, NULL, 6);
	ok(is(r, 6, 5, 4, 180 * S), "a perfect 180 s period: 5 of 5 intervals");
	r = run(missed, NULL, 7);
	ok(is(r, 7, 6, 4, 180 * S), "events missed between widths (2x, 3x): still 180 s, 6 of 6");
	r = run(jit_s, jit_ns, 5);
	ok(is(r, 5, 4, 3, 180 * S), "jitter within the window: the mean, 180 s exactly");
	r = run(noise, NULL, 16);
	ok(is(r, 16, 11, 10, 180 * S), "two stray events: 180 s, 11 of 15 intervals (10 needed)");
	r = run(random, NULL, 8);
	ok(is(r, 8, 1, 5, 0), "random events: no dominant period (1 of 7, 5 needed)");
	r = run(four, NULL, 4);
	ok(is(r, 4, 3, 2, 180 * S), "exactly the minimum of 4 events: 180 s");
	r = run(three, NULL, 3);
	ok(is(r, 3, 0, 2, 0), "one event below the minimum: none, nothing counted");
	r = run(edge_in, NULL, 7);
	ok(is(r, 7, 4, 4, 180 * S), "two thirds exactly (4 of 6): a period");
	r = run(edge_out, NULL, 7);
	ok(is(r, 7, 3, 4, 0), "one interval short of two thirds (3 of 6): none");
	r = run(cpus_s, cpus_ns, 10);
	ok(is(r, 5, 4, 3, 180 * S), "windows of several CPUs within one window: one event each");
	{
		/* 1210 s is 6 * 200 s + 10 s, 5 % of 200 s exactly: explained,
		 * and the period is 1810 s / 9 = 201.111111111 s; 1 ns more is not. */
		static const uint64_t tol[] = { 0, 200, 400, 600, 1810 };
		static const uint64_t tol_ns[] = { 0, 0, 0, 0, 1 };
		/* 8 * 200 s explained (2200 s / 11), 9 * 200 s not. */
		static const uint64_t k8[] = { 0, 200, 400, 600, 2200 };
		static const uint64_t k9[] = { 0, 200, 400, 600, 2400 };

		r = run(tol, NULL, 5);
		ok(is(r, 5, 4, 3, UINT64_C(201111111111)), "5 %% off a multiple: explained");
		r = run(tol, tol_ns, 5);
		ok(is(r, 5, 3, 3, 200 * S), "1 ns beyond 5 %%: not explained");
		r = run(k8, NULL, 5);
		ok(is(r, 5, 4, 3, 200 * S), "8 periods in one interval: explained");
		r = run(k9, NULL, 5);
		ok(is(r, 5, 3, 3, 200 * S), "9 periods in one interval: not explained");
	}
	period_find(NULL, 0, S, &r);
	ok(is(r, 0, 0, 0, 0), "no event: none");
	period_find(one, 1, S, &r);
	ok(is(r, 1, 0, 0, 0), "one event: no interval");
	{
		uint64_t edge[] = { T0 + S, T0, T0 + S - 1 };

		period_find(edge, 3, S, &r);
		ok(r.events == 2 && edge[0] == T0 && edge[1] == T0 + S,
		   "sorted; a window 1 ns short of one window later merges, one window later does not");
	}
	return tap_finish();
}
