/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Latency over time in constant memory: the largest latency (and the number
 * of samples) per time bin. There are at most TIMELINE_BINS bins; when the
 * samples span more, the bin width doubles and neighbouring bins merge, so
 * the maximum of every bin stays exact.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define TIMELINE_BINS 512

struct timeline_bin {
	uint64_t max_ns;
	uint64_t count;
};

struct timeline {
	uint64_t width_ns;
	uint64_t kmin, kmax; /* bin k covers [k * width_ns, (k + 1) * width_ns) */
	bool any;
	struct timeline_bin bins[TIMELINE_BINS]; /* bin k lives at k % TIMELINE_BINS */
};

void timeline_init(struct timeline *t);
void timeline_add(struct timeline *t, uint64_t time_ns, uint64_t latency_ns);
/* The bin for absolute index k (kmin <= k <= kmax). */
const struct timeline_bin *timeline_bin(const struct timeline *t, uint64_t k);
