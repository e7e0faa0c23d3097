// SPDX-License-Identifier: GPL-2.0-or-later
/* The dominant period of events; see period.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "period.h"

/* Moves a[root] down to its place in the max-heap a[0..n-1]. */
static void sift_down(uint64_t *a, size_t root, size_t n)
{
	uint64_t x = a[root];

	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			break;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[child] <= x)
			break;
		a[root] = a[child];
		root = child;
	}
	a[root] = x;
}

/*
 * Sorts in place: a heap sort, as glibc's qsort() is a merge sort that
 * allocates a second copy of the array (8 MB for a million times). A
 * scan's windows reach the journal in time order, so times are most often
 * sorted already and cost one pass.
 */
static void sort_u64(uint64_t *a, size_t n)
{
	size_t i;

	for (i = 1; i < n && a[i] >= a[i - 1]; i++)
		;
	if (i >= n)
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (size_t end = n; end-- > 1;) {
		uint64_t top = a[0];

		a[0] = a[end];
		a[end] = top;
		sift_down(a, 0, end);
	}
}

/* Sorts t and keeps the first window of each event; returns the events. */
static size_t merge_events(uint64_t *t, size_t n, uint64_t merge_ns)
{
	size_t m = 0;

	if (n == 0)
		return 0;
	sort_u64(t, n);
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

/*
 * How many of the intervals p explains; their sums into *sum_d, *sum_k.
 * The intervals are their distinct values d[0..m-1] and how often each
 * occurs, count[].
 */
static uint64_t explains(const uint64_t *d, const uint64_t *count, size_t m, uint64_t p,
			 unsigned __int128 *sum_d, uint64_t *sum_k)
{
	uint64_t n = 0;

	*sum_d = 0;
	*sum_k = 0;
	for (size_t j = 0; j < m; j++) {
		uint64_t k = multiple(d[j], p);

		if (k) {
			n += count[j];
			*sum_d += (unsigned __int128)d[j] * count[j];
			*sum_k += k * count[j];
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
 * For every candidate d[c] (the distinct intervals, ascending), how many of
 * the intervals it explains, into explained[c]; count[j] intervals are
 * d[j] long. Both ends of each range grow with the interval, so for each k
 * two cursors walk the candidates once and each range adds count[j] to a
 * difference array: n log n for the sort, not the n^2 of trying every
 * candidate on every interval.
 */
static void count_explained(const uint64_t *d, const uint64_t *count, size_t m,
			    int64_t *explained)
{
	memset(explained, 0, (m + 1) * sizeof(*explained));
	for (uint64_t k = 1; k <= PERIOD_MAX_MULTIPLE; k++) {
		size_t lo = 0, hi = 0;

		for (size_t j = 0; j < m; j++) {
			uint64_t low = range_low(d[j], k), high = range_high(d[j], k);

			/* Ends at d[j] itself at the latest: low <= d[j]. */
			while (d[lo] < low)
				lo++;
			while (hi < m && d[hi] <= high)
				hi++;
			if (lo < hi) {
				explained[lo] += (int64_t)count[j];
				explained[hi] -= (int64_t)count[j];
			}
		}
	}
	for (size_t c = 1; c < m; c++)
		explained[c] += explained[c - 1];
}

/*
 * Turns the events t[0..events-1] into the distinct intervals between
 * them, ascending, in t[0..*ret_m-1], and how often each occurs into a new
 * *ret_count. Returns 0 or -ENOMEM.
 */
static int distinct_intervals(uint64_t *t, size_t events, size_t *ret_m, uint64_t **ret_count)
{
	size_t n = events - 1, m = 0;
	uint64_t *count;

	for (size_t i = 0; i < n; i++)
		t[i] = t[i + 1] - t[i];
	sort_u64(t, n);
	for (size_t i = 0; i < n; i++)
		m += i == 0 || t[i] != t[i - 1];
	count = malloc(m * sizeof(*count));
	if (!count)
		return -ENOMEM;
	m = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || t[i] != t[m - 1]) {
			t[m] = t[i];
			count[m++] = 0;
		}
		count[m - 1]++;
	}
	*ret_m = m;
	*ret_count = count;
	return 0;
}

/* The candidate d[c] explaining the most intervals, the longer on a tie. */
static uint64_t best_candidate(const uint64_t *d, size_t m, const int64_t *explained)
{
	int64_t best = 0;
	uint64_t best_p = 0;

	for (size_t c = 0; c < m; c++)
		if (explained[c] >= best && explained[c] > 0) {
			best = explained[c];
			best_p = d[c];
		}
	return best_p;
}

int period_find(uint64_t *t, size_t n, uint64_t merge_ns, struct period_result *ret)
{
	size_t events = merge_events(t, n, merge_ns), m = 0;
	uint64_t best_p, sum_k, *count = NULL;
	int64_t *explained = NULL;
	unsigned __int128 sum_d;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->events = events;
	ret->intervals = events > 0 ? events - 1 : 0;
	/* Two thirds, rounded up. */
	ret->needed = (2 * ret->intervals + 2) / 3;
	if (events < PERIOD_MIN_EVENTS)
		return 0;
	/* In place, to keep the memory of a million windows down. */
	r = distinct_intervals(t, events, &m, &count);
	if (r < 0)
		return r;
	explained = malloc((m + 1) * sizeof(*explained));
	if (!explained) {
		r = -ENOMEM;
		goto out;
	}
	count_explained(t, count, m, explained);
	best_p = best_candidate(t, m, explained);
	ret->explained = explains(t, count, m, best_p, &sum_d, &sum_k);
	if (ret->explained >= ret->needed)
		ret->period_ns = (uint64_t)((sum_d + sum_k / 2) / sum_k);
out:
	free(count);
	free(explained);
	return r;
}
