// SPDX-License-Identifier: GPL-2.0-or-later
/* Latency over time in constant memory; see timeline.h. */
#include <string.h>

#include "timeline.h"

#define INITIAL_WIDTH_NS 1000000ULL /* 1 ms */

void timeline_init(struct timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->width_ns = INITIAL_WIDTH_NS;
}

const struct timeline_bin *timeline_bin(const struct timeline *t, uint64_t k)
{
	return &t->bins[k % TIMELINE_BINS];
}

static void merge(struct timeline_bin *dst, const struct timeline_bin *src)
{
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->count += src->count;
}

/* Doubles the bin width, merging bins 2k and 2k+1. */
static void coarsen(struct timeline *t)
{
	struct timeline_bin old[TIMELINE_BINS];

	memcpy(old, t->bins, sizeof(old));
	memset(t->bins, 0, sizeof(t->bins));
	for (uint64_t k = t->kmin; k <= t->kmax; k++)
		merge(&t->bins[(k / 2) % TIMELINE_BINS], &old[k % TIMELINE_BINS]);
	t->kmin /= 2;
	t->kmax /= 2;
	t->width_ns *= 2;
}

void timeline_add(struct timeline *t, uint64_t time_ns, uint64_t latency_ns)
{
	uint64_t k = time_ns / t->width_ns;
	struct timeline_bin *b;

	if (!t->any) {
		t->kmin = t->kmax = k;
		t->any = true;
	}
	for (;;) {
		uint64_t lo = k < t->kmin ? k : t->kmin;
		uint64_t hi = k > t->kmax ? k : t->kmax;

		if (hi - lo < TIMELINE_BINS)
			break;
		coarsen(t);
		k = time_ns / t->width_ns;
	}
	/* Bins entering the window may hold stale counts from before. */
	while (k < t->kmin) {
		t->kmin--;
		memset(&t->bins[t->kmin % TIMELINE_BINS], 0, sizeof(*b));
	}
	while (k > t->kmax) {
		t->kmax++;
		memset(&t->bins[t->kmax % TIMELINE_BINS], 0, sizeof(*b));
	}
	b = &t->bins[k % TIMELINE_BINS];
	if (latency_ns > b->max_ns)
		b->max_ns = latency_ns;
	b->count++;
}
