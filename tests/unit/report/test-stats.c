// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proves the streaming statistics of hwlat-report (lib/stats.c,
 * report/timeline.c) against exact computation: percentiles within 1/256
 * relative error (the method's bound, well inside the 1 % promised) for
 * several distributions including values below 128 ns and up to 100 s; exact
 * count, min, max and mean; log2 and linear bucket counts equal to direct
 * counting; memory that does not grow with the number of samples; and a
 * timeline whose per-bin maxima stay exact while its bins merge. Prints TAP.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "timeline.h"

static unsigned test_n, failed;

static void ok(int cond, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#include <stdarg.h>
static void ok(int cond, const char *name, const char *fmt, ...)
{
	va_list ap;

	test_n++;
	printf("%sok %u - %s\n", cond ? "" : "not ", test_n, name);
	if (!cond) {
		failed++;
		printf("#   ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)((long double)p / 100.0L * (long double)n);

	if ((long double)rank < (long double)p / 100.0L * (long double)n)
		rank++;
	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

static void check_distribution(const char *name, uint64_t (*gen)(void), size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v));
	static const double ps[] = { 1, 25, 50, 90, 99, 99.9, 99.99 };
	struct sample_entry x = { 0 };
	struct stats s;
	unsigned __int128 sum = 0;
	double worst = 0;
	char title[128];

	stats_init(&s, 0, 0);
	for (size_t i = 0; i < n; i++) {
		v[i] = gen();
		x.latency_ns = v[i];
		sum += v[i];
		if (stats_add(&s, &x, 0) < 0) {
			ok(0, "stats_add", "ENOMEM");
			free(v);
			return;
		}
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact_percentile(v, n, ps[i]);
		uint64_t got = stats_percentile(&s, ps[i]);
		double err = want ? (double)(got > want ? got - want : want - got) / (double)want :
				    (double)got;

		if (err > worst)
			worst = err;
		if (err > 1.0 / 256) {
			snprintf(title, sizeof(title), "%s: p%g within 1/256", name, ps[i]);
			ok(0, title, "got %" PRIu64 ", exact %" PRIu64, got, want);
		}
	}
	snprintf(title, sizeof(title), "%s: all percentiles within 1/256 (worst %.5f)", name, worst);
	ok(worst <= 1.0 / 256, title, "worst relative error %f", worst);
	snprintf(title, sizeof(title), "%s: exact count, min, max, mean", name);
	ok(s.n == n && s.min_ns == v[0] && s.max_ns == v[n - 1] &&
		   stats_mean(&s) == (uint64_t)((sum + n / 2) / n),
	   title, "n %" PRIu64 " min %" PRIu64 "/%" PRIu64 " max %" PRIu64 "/%" PRIu64,
	   s.n, s.min_ns, v[0], s.max_ns, v[n - 1]);
	stats_done(&s);
	free(v);
}

static uint64_t gen_small(void)
{
	return rnd() % 300; /* exact region and first rows */
}

static uint64_t gen_wide(void)
{
	/* log-uniform from 1 ns to about 100 s */
	return 1 + (rnd() >> (64 - 37)) / (1 + (rnd() % (1ULL << (rnd() % 36))));
}

static uint64_t gen_cluster(void)
{
	return 20000 + rnd() % 2000 + ((rnd() % 1000) == 0 ? 5000000 : 0);
}

/*
 * stats_merge (--by firmware/product): two halves merged equal
 * one statistics of every window, counter by counter and bucket by bucket,
 * also when only the second half reached a row or a linear bucket, and
 * for the first linear bucket (index 0) of both halves.
 */
static void check_merge(void)
{
	struct stats all, a, b;
	struct sample_entry x = { 0 };
	int good = 1;

	stats_init(&all, 1000, 500);
	stats_init(&a, 1000, 500);
	stats_init(&b, 1000, 500);
	for (int i = 0; i < 20000; i++) {
		x.latency_ns = i < 10000 ? rnd() % 50000 : rnd() % 5000000;
		x.count = i % 3 != 0;
		x.nmi_count = i % 7 == 0;
		x.smi_count_known = i % 5 != 0;
		x.smi_count = i % 11 == 0 ? 2 : 0;
		x.smi_ns_known = i % 13 != 0;
		x.smi_ns = x.smi_count ? 40000 : 0;
		stats_add(&all, &x, 2000000);
		stats_add(i < 10000 ? &a : &b, &x, 2000000);
	}
	/* The second half in the first linear bucket too (not by chance). */
	x.latency_ns = 500;
	stats_add(&all, &x, 2000000);
	stats_add(&b, &x, 2000000);
	ok(stats_merge(&a, &b) == 0, "stats_merge succeeds", "-");
	for (size_t r = 0; r < STATS_ROWS; r++)
		for (size_t i = 0; good && all.rows[r] && i < STATS_SUB; i++)
			good = a.rows[r] && a.rows[r][i] == all.rows[r][i];
	for (size_t i = 0; good && i < all.n_linear; i++)
		good = i < a.n_linear && a.linear[i] == all.linear[i];
	ok(good && a.n_linear == all.n_linear && a.linear_overflow == all.linear_overflow,
	   "merged rows and linear buckets equal one pass", "n_linear %zu/%zu overflow %" PRIu64
	   "/%" PRIu64, a.n_linear, all.n_linear, a.linear_overflow, all.linear_overflow);
	ok(a.n == all.n && a.sum_ns == all.sum_ns && a.min_ns == all.min_ns &&
		   a.max_ns == all.max_ns && a.over_threshold == all.over_threshold &&
		   a.over_hardlimit == all.over_hardlimit && a.smi_windows == all.smi_windows &&
		   a.nmi_windows == all.nmi_windows &&
		   a.unexplained_windows == all.unexplained_windows &&
		   a.smi_total == all.smi_total && a.nmi_total == all.nmi_total &&
		   a.smi_unknown_windows == all.smi_unknown_windows && a.smi_ns == all.smi_ns &&
		   a.smi_ns_unknown_windows == all.smi_ns_unknown_windows,
	   "merged counters equal one pass", "n %" PRIu64 "/%" PRIu64 " over_hardlimit %" PRIu64
	   "/%" PRIu64, a.n, all.n, a.over_hardlimit, all.over_hardlimit);
	ok(stats_percentile(&a, 99) == stats_percentile(&all, 99) &&
		   stats_percentile(&a, 50) == stats_percentile(&all, 50),
	   "merged percentiles equal one pass", "p99 %" PRIu64 "/%" PRIu64,
	   stats_percentile(&a, 99), stats_percentile(&all, 99));
	/* Into an empty one: min comes from src. */
	stats_done(&b);
	stats_init(&b, 1000, 500);
	ok(stats_merge(&b, &all) == 0 && b.min_ns == all.min_ns && b.n == all.n,
	   "merge into an empty statistics keeps src's minimum", "min %" PRIu64 "/%" PRIu64,
	   b.min_ns, all.min_ns);
	stats_done(&all);
	stats_done(&a);
	stats_done(&b);
}

int main(void)
{
	struct sample_entry x = { 0 };
	struct stats s;
	struct bucket *b = NULL;
	uint64_t want_log2[64] = { 0 }, want_lin[200] = { 0 };
	size_t rows_before;
	int n;

	check_distribution("small values", gen_small, 100000);
	check_distribution("1 ns .. 100 s", gen_wide, 200000);
	check_distribution("cluster + outliers", gen_cluster, 200000);
	check_merge();

	/* Bucket counts against direct counting. */
	stats_init(&s, 10000, 1000);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = rnd() % 2000000;

		x.latency_ns = v;
		stats_add(&s, &x, 0);
		want_log2[v < 2 ? 0 : 63 - __builtin_clzll(v)]++;
		want_lin[v / 10000]++;
	}
	n = stats_buckets(&s, &b);
	{
		int good = n > 0;

		for (int i = 0; good && i < n; i++)
			good = b[i].count == want_lin[b[i].low_ns / 10000] &&
			       b[i].high_ns - b[i].low_ns == 10000;
		ok(good, "linear buckets equal direct counts", "n %d", n);
	}
	free(b);
	s.bucket_ns = 0;
	n = stats_buckets(&s, &b);
	{
		int good = n > 0;

		for (int i = 0; good && i < n; i++) {
			unsigned e = b[i].low_ns < 2 ? 0 : 63 - (unsigned)__builtin_clzll(b[i].low_ns);

			good = b[i].count == want_log2[e];
		}
		ok(good, "log2 buckets equal direct counts", "n %d", n);
	}
	free(b);

	/* Memory: a million more samples in the same range allocate nothing. */
	rows_before = 0;
	for (size_t r = 0; r < STATS_ROWS; r++)
		rows_before += s.rows[r] != NULL;
	for (int i = 0; i < 1000000; i++) {
		x.latency_ns = rnd() % 2000000;
		stats_add(&s, &x, 0);
	}
	{
		size_t rows_after = 0;

		for (size_t r = 0; r < STATS_ROWS; r++)
			rows_after += s.rows[r] != NULL;
		ok(rows_after == rows_before && s.n_linear <= 256,
		   "memory stays constant as samples grow",
		   "rows %zu -> %zu, linear %zu", rows_before, rows_after, s.n_linear);
	}
	stats_done(&s);

	/* Timeline: 100000 samples over 10 days keep the exact max per bin. */
	{
		static struct timeline t;
		uint64_t t0 = 1700000000ULL * 1000000000ULL, big_at = 0, maxseen = 0;
		int found = 0;

		timeline_init(&t);
		for (uint64_t i = 0; i < 100000; i++) {
			uint64_t when = t0 + i * 8640000000ULL, lat = 10000 + i % 977;

			if (i == 54321) {
				lat = 99999999;
				big_at = when;
			}
			timeline_add(&t, when, lat);
		}
		for (uint64_t k = t.kmin; k <= t.kmax; k++) {
			const struct timeline_bin *bin = timeline_bin(&t, k);

			if (bin->max_ns > maxseen)
				maxseen = bin->max_ns;
			if (bin->max_ns == 99999999 && big_at / t.width_ns == k)
				found = 1;
		}
		ok(t.kmax - t.kmin < TIMELINE_BINS && found && maxseen == 99999999,
		   "timeline keeps the exact maximum in the right bin",
		   "bins %" PRIu64 " found %d", t.kmax - t.kmin + 1, found);
	}
	printf("1..%u\n", test_n);
	return failed ? 1 : 0;
}
