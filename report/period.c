// SPDX-License-Identifier: GPL-2.0-or-later
/* The dominant period of events; see period.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "period.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A scan's windows reach the journal in time order, so t is most often
 * sorted already: then qsort(), its time and its buffer of n more times
 * (glibc's merge sort) are saved.
 */
static void sort_times(uint64_t *t, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (t[i] < t[i - 1]) {
			qsort(t, n, sizeof(*t), cmp_u64);
			return;
		}
}

/* Sorts t and keeps the first window of each event; returns the events. */
static size_t merge_events(uint64_t *t, size_t n, uint64_t merge_ns)
{
	size_t m = 0;

	if (n == 0)
		return 0;
	sort_times(t, n);
	for (size_t i = 1; i < n; i++)
		if (t[i] - t[m] >= merge_ns)
			t[++m] = t[i];
	return m + 1;
}

/* The multiple of p that explains d, or 0. */
static uint64_t multiple(uint64_t d, uint64_t p)
{
	uint64_t k, near, off;

	if (p == 0)
		return 0;
	k = d / p;
	if (d - k * p > p / 2) /* the nearer multiple */
		k++;
	if (k < 1 || k > PERIOD_MAX_MULTIPLE)
		return 0;
	near = k * p;
	off = d > near ? d - near : near - d;
	return off <= p / 20 ? k : 0;
}

/* How many of the intervals p explains; their sums into *sum_d, *sum_k. */
static uint64_t explains(const uint64_t *t, size_t events, uint64_t p,
			 unsigned __int128 *sum_d, uint64_t *sum_k)
{
	uint64_t n = 0;

	*sum_d = 0;
	*sum_k = 0;
	for (size_t i = 1; i < events; i++) {
		uint64_t d = t[i] - t[i - 1], k = multiple(d, p);

		if (k) {
			n++;
			*sum_d += d;
			*sum_k += k;
		}
	}
	return n;
}

/*
 * The candidates that explain an interval d with multiple k form one range:
 * |d - k * P| <= P / 20 holds, for whole numbers, exactly when it holds
 * for reals, so P runs from ceil(20d / (20k + 1)) to floor(20d / (20k - 1)).
 * Within it k is also the nearer multiple that multiple() picks, and the
 * ranges of one d for k and k + 1 never meet (20k + 1 < 20k + 19), so no
 * interval counts twice for a candidate.
 */
static uint64_t range_low(uint64_t d, uint64_t k)
{
	unsigned __int128 num = (unsigned __int128)20 * d, den = 20 * k + 1;
	uint64_t p = (uint64_t)((num + den - 1) / den);

	return p ? p : 1; /* a period of 0 explains nothing */
}

static uint64_t range_high(uint64_t d, uint64_t k)
{
	return (uint64_t)((unsigned __int128)20 * d / (20 * k - 1));
}

/*
 * For every distinct candidate p[c] (ascending), how many of the intervals
 * d[] (ascending) it explains, into explained[c]. Both ends of each range
 * grow with d, so for each k two cursors walk the candidates once and each
 * range adds one to a difference array: n log n for the sorts, not the n^2
 * of trying every candidate on every interval.
 */
static void count_explained(const uint64_t *d, size_t n, const uint64_t *p, size_t m,
			    int64_t *explained)
{
	memset(explained, 0, (m + 1) * sizeof(*explained));
	for (uint64_t k = 1; k <= PERIOD_MAX_MULTIPLE; k++) {
		size_t lo = 0, hi = 0;

		for (size_t i = 0; i < n; i++) {
			uint64_t low = range_low(d[i], k), high = range_high(d[i], k);

			/* Ends at d itself at the latest: low <= d. */
			while (p[lo] < low)
				lo++;
			while (hi < m && p[hi] <= high)
				hi++;
			if (lo < hi) {
				explained[lo]++;
				explained[hi]--;
			}
		}
	}
	for (size_t c = 1; c < m; c++)
		explained[c] += explained[c - 1];
}

/* The candidate explaining the most intervals, the longer on a tie; or 0. */
static int best_candidate(const uint64_t *t, size_t events, uint64_t *ret_p)
{
	size_t n = events - 1, m = 0;
	uint64_t *d = malloc(n * sizeof(*d)), *p = malloc(n * sizeof(*p));
	int64_t *explained = malloc((n + 1) * sizeof(*explained)), best = 0;
	int r = -ENOMEM;

	if (!d || !p || !explained)
		goto out;
	for (size_t i = 0; i < n; i++)
		d[i] = t[i + 1] - t[i];
	qsort(d, n, sizeof(*d), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || d[i] != p[m - 1])
			p[m++] = d[i];
	count_explained(d, n, p, m, explained);
	*ret_p = 0;
	for (size_t c = 0; c < m; c++)
		if (explained[c] >= best && explained[c] > 0) {
			best = explained[c];
			*ret_p = p[c];
		}
	r = 0;
out:
	free(d);
	free(p);
	free(explained);
	return r;
}

int period_find(uint64_t *t, size_t n, uint64_t merge_ns, struct period_result *ret)
{
	size_t events = merge_events(t, n, merge_ns);
	uint64_t best_p, sum_k;
	unsigned __int128 sum_d;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->events = events;
	ret->intervals = events > 0 ? events - 1 : 0;
	/* Two thirds, rounded up. */
	ret->needed = (2 * ret->intervals + 2) / 3;
	if (events < PERIOD_MIN_EVENTS)
		return 0;
	r = best_candidate(t, events, &best_p);
	if (r < 0)
		return r;
	ret->explained = explains(t, events, best_p, &sum_d, &sum_k);
	if (ret->explained >= ret->needed)
		ret->period_ns = (uint64_t)((sum_d + sum_k / 2) / sum_k);
	return 0;
}
