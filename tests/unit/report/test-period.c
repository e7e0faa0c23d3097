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

/*
 * The definition of period.h, written out the slow way: every interval a
 * candidate; d explained by P when 20 |d - k P| <= P for a k in 1..8; the
 * most explained wins, the longer on a tie. For comparing period_find
 * with on random sequences.
 */
static uint64_t by_definition(const uint64_t *ev, size_t events, uint64_t *ret_period)
{
	uint64_t best = 0, best_p = 0, sum_k = 0;
	unsigned __int128 sum_d = 0;

	for (size_t c = 1; c < events; c++) {
		uint64_t p = ev[c] - ev[c - 1], got = 0;

		for (size_t i = 1; i < events; i++)
			for (uint64_t k = 1; k <= 8; k++) {
				uint64_t d = ev[i] - ev[i - 1], kp = k * p;

				if (p > 0 && 20 * (d > kp ? d - kp : kp - d) <= p) {
					got++;
					break;
				}
			}
		if (got > best || (got == best && p > best_p)) {
			best = got;
			best_p = p;
		}
	}
	for (size_t i = 1; i < events; i++)
		for (uint64_t k = 1; k <= 8 && best_p > 0; k++) {
			uint64_t d = ev[i] - ev[i - 1], kp = k * best_p;

			if (20 * (d > kp ? d - kp : kp - d) <= best_p) {
				sum_d += d;
				sum_k += k;
				break;
			}
		}
	*ret_period = sum_k ? (uint64_t)((sum_d + sum_k / 2) / sum_k) : 0;
	return best;
}

static uint64_t seed = 88172645463325252ULL;

static uint64_t next_random(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/*
 * Random sequences, most of them near a period with missed events and
 * intervals at or just past the 5 % edges, and small intervals where
 * P / 20 rounds: period_find must agree with the definition on all.
 */
static bool agrees_with_definition(int rounds)
{
	for (int round = 0; round < rounds; round++) {
		uint64_t t[40], ev[40], period, want_p;
		uint64_t base = 1 + next_random() % (round % 2 ? 40 : 200000);
		size_t n = 4 + next_random() % 36;
		struct period_result r;
		uint64_t want;

		t[0] = T0;
		for (size_t i = 1; i < n; i++) {
			uint64_t k = 1 + next_random() % 9, d = k * base;
			uint64_t edge = base * k / 20;

			switch (next_random() % 5) {
			case 0:
				d += edge;
				break;
			case 1:
				d = d > edge + 1 ? d - edge - 1 : d;
				break;
			case 2:
				d += next_random() % (base + 1);
				break;
			default:
				break;
			}
			t[i] = t[i - 1] + d;
		}
		for (size_t i = 0; i < n; i++)
			ev[i] = t[i];
		want = by_definition(ev, n, &want_p);
		/* One round in three out of order: period_find sorts. */
		if (round % 3 == 0) {
			size_t a = next_random() % n;
			uint64_t x = t[a];

			t[a] = t[n - 1];
			t[n - 1] = x;
		}
		period_find(t, n, 0, &r);
		period = want >= (2 * (n - 1) + 2) / 3 ? want_p : 0;
		if (r.events != n || r.explained != want || r.period_ns != period) {
			printf("# round %d: %zu events, base %" PRIu64 ": got %" PRIu64
			       " explained, period %" PRIu64 "; definition %" PRIu64 ", %" PRIu64 "\n",
			       round, n, base, r.explained, r.period_ns, want, period);
			return false;
		}
	}
	return true;
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
	{
		/* Every 180 s, in order but for the last two: sorted first, so
		 * 3 intervals of 180 s (unsorted, they would be 180, 360 and
		 * minus 180 s). */
		static const uint64_t last[] = { 0, 180, 540, 360 };

		r = run(last, NULL, 4);
		ok(is(r, 4, 3, 2, 180 * S), "out of order only at the end: sorted, 180 s");
	}
	{
		/* Four events at one time (nothing merges them with merge_ns
		 * 0): intervals of 0 explain nothing, and no candidate of 0 is
		 * divided by. */
		uint64_t same[] = { T0, T0, T0, T0 };

		period_find(same, 4, 0, &r);
		ok(is(r, 4, 0, 2, 0), "four events at one time: no period, nothing explained");
	}
	ok(agrees_with_definition(20000),
	   "20000 random sequences: the same explained count and period as the definition");
	{
		/* A million windows, one every 2 s, every third missed (the
		 * report keeps up to a million window times). */
		static uint64_t big[1000000];
		size_t n = 0;

		for (uint64_t i = 0; n < 1000000; i++)
			if (i % 3 != 2)
				big[n++] = T0 + i * 2 * S;
		period_find(big, n, S, &r);
		ok(is(r, 1000000, 999999, 666666, 2 * S),
		   "a million windows, every 2 s but each third missed: 2 s, all explained");
	}
	return tap_finish();
}
