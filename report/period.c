// SPDX-License-Identifier: GPL-2.0-or-later
/* The dominant period of events; see period.h. */
#include <stdlib.h>
#include <string.h>

#include "period.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts t and keeps the first window of each event; returns the events. */
static size_t merge_events(uint64_t *t, size_t n, uint64_t merge_ns)
{
	size_t m = 0;

	if (n == 0)
		return 0;
	qsort(t, n, sizeof(*t), cmp_u64);
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

int period_find(uint64_t *t, size_t n, uint64_t merge_ns, struct period_result *ret)
{
	size_t events = merge_events(t, n, merge_ns);
	uint64_t best = 0, best_p = 0;

	memset(ret, 0, sizeof(*ret));
	ret->events = events;
	ret->intervals = events > 0 ? events - 1 : 0;
	/* Two thirds, rounded up. */
	ret->needed = (2 * ret->intervals + 2) / 3;
	if (events < PERIOD_MIN_EVENTS)
		return 0;
	for (size_t i = 1; i < events; i++) {
		uint64_t p = t[i] - t[i - 1], sum_k, got;
		unsigned __int128 sum_d;

		got = explains(t, events, p, &sum_d, &sum_k);
		if (got > best || (got == best && p > best_p)) {
			best = got;
			best_p = p;
		}
	}
	if (best < ret->needed) {
		ret->explained = best;
		return 0;
	}
	{
		unsigned __int128 sum_d;
		uint64_t sum_k;

		ret->explained = explains(t, events, best_p, &sum_d, &sum_k);
		ret->period_ns = (uint64_t)((sum_d + sum_k / 2) / sum_k);
	}
	return 0;
}
