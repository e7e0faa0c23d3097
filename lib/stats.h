/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming latency statistics in constant memory.
 *
 * Every latency goes into a log-linear histogram: values below 128 ns are
 * counted exactly, and every power of two above is split into 128 equal
 * sub-buckets, so a bucket is never wider than 1/128 of its lower bound.
 * Percentiles are read back as the middle of the bucket holding the wanted
 * rank (nearest-rank definition), clamped to the exact minimum and maximum:
 * the relative error is at most 1/256 (0.4 %). Count, minimum, maximum and
 * mean are exact. Rows of 128 counters are allocated only when a value
 * falls into them, so memory depends on the range of latencies seen, never
 * on how many samples were read.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define STATS_SUB_BITS 7
#define STATS_SUB (1U << STATS_SUB_BITS)
/* Row 0 holds 0..127 exactly; row r >= 1 holds [2^(r+6), 2^(r+7)). */
#define STATS_ROWS (64 - STATS_SUB_BITS + 1)
/* Most linear buckets (--entries); beyond them values go to the overflow. */
#define STATS_LINEAR_MAX 100000
#define STATS_LINEAR_DEFAULT 100
/* Most sizes whose windows above are counted exactly (a gate's rate(>SIZE)). */
#define STATS_SIZES_MAX 32

/* What the statistics need of one reported window. hwlat-report and
 * hwlat-scan each fill it from their own sample type. */
struct stats_window {
	uint64_t latency_ns;
	uint64_t count;     /* HWLAT_COUNT: windows over the threshold */
	uint64_t nmi_count;
	/* Unavailable SMI figures are never 0: they are counted apart. */
	bool smi_count_known;
	uint64_t smi_count;
	bool smi_ns_known;
	uint64_t smi_ns;
};

struct stats {
	uint64_t n;
	uint64_t min_ns, max_ns;
	unsigned __int128 sum_ns;
	uint64_t over_threshold;   /* windows with HWLAT_COUNT > 0 */
	uint64_t over_hardlimit;   /* latency strictly above --hardlimit */
	uint64_t smi_windows, nmi_windows, unexplained_windows;
	uint64_t smi_total, nmi_total;     /* smi_total: of the known counts */
	uint64_t smi_unknown_windows;      /* HWLAT_SMI_COUNT unavailable */
	uint64_t smi_ns;                   /* of the known HWLAT_SMI_NS */
	uint64_t smi_ns_unknown_windows;   /* HWLAT_SMI_NS unavailable */
	/* Windows whose latency is strictly above size_ns[i], exactly (the
	 * histogram's buckets would blur the edge). */
	uint64_t size_ns[STATS_SIZES_MAX], above[STATS_SIZES_MAX];
	size_t n_sizes;
	uint64_t *rows[STATS_ROWS];
	/* Optional linear histogram (bucket_ns > 0). */
	uint64_t bucket_ns;
	uint64_t *linear;
	size_t n_linear, linear_max;
	uint64_t linear_overflow;
};

/* bucket_ns > 0: also count linear buckets, at most entries of them. */
void stats_init(struct stats *s, uint64_t bucket_ns, size_t entries);
void stats_done(struct stats *s);
/*
 * Counts from now on the windows strictly above size_ns (once per size).
 * 0, or -E2BIG past STATS_SIZES_MAX sizes.
 */
int stats_add_size(struct stats *s, uint64_t size_ns);
/* The windows above size_ns; false when that size is not counted. */
bool stats_windows_above(const struct stats *s, uint64_t size_ns, uint64_t *ret);
/* Returns -ENOMEM when a histogram row cannot be allocated. */
int stats_add_window(struct stats *s, const struct stats_window *x,
		     uint64_t hardlimit_ns);
/*
 * Adds everything src counted into dst, as if dst had seen src's windows
 * too (both initialised with the same bucket_ns and entries). Returns
 * -ENOMEM when a row cannot be allocated (dst is then partly merged).
 * Every counter of struct stats must be added here; the sizes counted
 * above are dst's (src's counts of the same sizes are added).
 */
int stats_merge(struct stats *dst, const struct stats *src);
/* p in [0, 100]; returns 0 when empty. */
uint64_t stats_percentile(const struct stats *s, double p);
uint64_t stats_mean(const struct stats *s);

/* One histogram bucket for display: values in [low_ns, high_ns). */
struct bucket {
	uint64_t low_ns, high_ns, count;
	bool overflow; /* the linear histogram's "everything above" bucket */
};

/*
 * Buckets for display, from the first to the last non-empty one: log2
 * buckets ([0,2), [2,4), [4,8) ...) when s->bucket_ns is 0, else linear
 * buckets of s->bucket_ns plus an overflow bucket when needed. *ret is
 * malloc'ed; returns the number of buckets or -ENOMEM.
 */
int stats_buckets(const struct stats *s, struct bucket **ret);
