/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proves the monitor's accounting (service/monitor-interval.c) against
 * values worked out by hand: the gap buckets at their edges (le is
 * inclusive), one interval's counts, what it journals within its budget and
 * what it folds, a sample journald did not take, the growth of the
 * module's per-CPU totals (a reset included), and the counters across two
 * intervals and a new process (all 0 again, a new start time).
 */
#include <string.h>

#include "macro.h"
#include "monitor-interval.h"
#include "unit-test.h"

static hwlat_sample window(uint64_t seq, unsigned cpu, uint64_t lat_ns, uint64_t count,
			   uint64_t nmis, bool smi_known, uint64_t smis)
{
	return (hwlat_sample){ .seq = seq, .cpu = cpu, .inner_ns = lat_ns, .outer_ns = lat_ns / 2,
			       .count = count, .nmi_count = nmis, .smi_count_known = smi_known,
			       .smi_count = smis };
}

static void test_buckets(void)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} cases[] = {
		{ 0, "1e-06:1" },	     { 1000, "1e-06:1" },   { 1001, "2e-06:1" },
		{ 100000, "0.0001:1" },	     { 100001, "0.0002:1" }, { 999999999, "1:1" },
		{ 1000000000, "1:1" },	     { 1000000001, "+Inf:1" },
	};
	char buf[512];

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		gap_histogram h = {};

		gap_histogram_add(&h, cases[i].ns);
		gap_histogram_format(&h, buf, sizeof(buf));
		ok(strcmp(buf, cases[i].want) == 0 && h.n == 1 && h.sum_ns == cases[i].ns,
		   "a gap of %llu ns goes into %s (got '%s')", (unsigned long long)cases[i].ns,
		   cases[i].want, buf);
	}
	ok(gap_bucket_ns(6) == 100000 && strcmp(gap_bucket_label(6), "0.0001") == 0 &&
		   strcmp(gap_bucket_label(GAP_BUCKETS), "+Inf") == 0 &&
		   gap_bucket_ns(GAP_BUCKETS - 1) == 1000000000,
	   "19 buckets from 1 us to 1 s: the seventh is le=\"0.0001\" (100 us), then +Inf");
}

/* Budget 2: two entries, then everything folded, skip records too. */
static void test_interval(void)
{
	monitor_interval iv;
	hwlat_sample w[] = {
		window(1, 0, 20000, 1, 0, true, 0),	/* unexplained */
		window(2, 1, 150000, 3, 1, true, 0),	/* an NMI */
		window(3, 0, 9000, 0, 2, true, 0),	/* NMIs, no gap: no histogram */
		window(4, 1, 5000000, 1, 0, true, 1),	/* an SMI */
		{ .seq = 5, .cpu = 1, .skipped_windows = 4 },
	};
	bool kept[ELEMENTSOF(w)];
	char hist[512], folded[512];

	monitor_interval_start(&iv, 7, 1764750000000000000ULL, 10000, 2);
	for (size_t i = 0; i < ELEMENTSOF(w); i++)
		kept[i] = monitor_interval_sample(&iv, &w[i]);
	gap_histogram_format(&iv.hist, hist, sizeof(hist));
	gap_histogram_format(&iv.folded_hist, folded, sizeof(folded));
	ok(kept[0] && kept[1] && !kept[2] && !kept[3] && !kept[4],
	   "budget 2: the first two lines are journaled, the rest folded");
	ok(iv.number == 7 && iv.windows == 4 && iv.gap_windows == 3 && iv.gaps == 5 &&
		   iv.max_ns == 5000000 && iv.nmis == 3 && iv.unexplained == 1,
	   "4 windows, 3 with gaps (5 gaps), max 5 ms, 3 NMIs, 1 unexplained (got %llu %llu %llu "
	   "%llu %llu %llu)",
	   (unsigned long long)iv.windows, (unsigned long long)iv.gap_windows,
	   (unsigned long long)iv.gaps, (unsigned long long)iv.max_ns,
	   (unsigned long long)iv.nmis, (unsigned long long)iv.unexplained);
	ok(strcmp(hist, "2e-05:1 0.0002:1 0.005:1") == 0,
	   "the histogram holds every gap window, folded or not: '%s'", hist);
	ok(iv.journaled == 2 && iv.folded == 2 && iv.folded_skip_records == 1 &&
		   strcmp(folded, "0.005:1") == 0,
	   "2 journaled, 2 windows folded (one with a gap: '%s'), 1 skip record folded", folded);
	monitor_interval_unjournal(&iv, &w[0]);
	gap_histogram_format(&iv.folded_hist, folded, sizeof(folded));
	ok(iv.journaled == 1 && iv.folded == 3 && strcmp(folded, "2e-05:1 0.005:1") == 0 &&
		   iv.gap_windows == 3,
	   "an entry journald refused is folded instead, counted once: '%s'", folded);
}

static void test_accumulate(void)
{
	cpu_values into = {}, last = {}, now = {};
	unsigned reset;

	last.v[0] = 100;
	last.v[1] = 50;
	now.v[0] = 350;
	now.v[1] = 20;
	reset = cpu_values_accumulate(&into, &last, &now);
	ok(reset == 1 && into.v[0] == 250 && into.v[1] == 20 && into.total == 270 &&
		   cpu_set_has(&into.listed, 0) && cpu_set_has(&into.listed, 1) &&
		   last.v[0] == 350 && last.v[1] == 20,
	   "growth 250 on CPU 0; CPU 1 went down (a reset): its 20 since count, reset = 1");
	now.v[0] = 350;
	reset = cpu_values_accumulate(&into, &last, &now);
	ok(reset == 0 && into.total == 270, "no growth adds nothing");
}

/* Two intervals, then a new process: every counter from 0 again. */
static void test_totals(void)
{
	monitor_totals t;
	monitor_interval a, b;
	hwlat_sample w1 = window(1, 0, 30000, 2, 0, true, 0);
	hwlat_sample w2 = window(2, 1, 700000, 1, 1, true, 0);

	monitor_totals_init(&t, 1764750000500000000ULL);
	monitor_interval_start(&a, 1, 1764750001000000000ULL, 10000, 100);
	monitor_interval_sample(&a, &w1);
	a.sampled.v[0] = 3000000000ULL;
	a.sampled.total = 3000000000ULL;
	a.sampled.listed.bits[0] = 1;
	a.smi_known = true;
	a.smis = 3;
	a.dropped = 1;
	a.duration_ns = 600000000000ULL;
	monitor_totals_close(&t, &a);
	monitor_interval_start(&b, 2, 1764750601000000000ULL, 10000, 100);
	monitor_interval_sample(&b, &w2);
	b.sampled.v[1] = 2500000000ULL;
	b.sampled.total = 2500000000ULL;
	b.sampled.listed.bits[0] = 2;
	b.skipped.total = 4;
	b.smi_known = false;
	b.duration_ns = 599000000000ULL;
	monitor_totals_close(&t, &b);
	ok(t.intervals == 2 && t.sampled.total == 5500000000ULL && t.sampled.v[0] == 3000000000ULL &&
		   t.sampled.v[1] == 2500000000ULL && t.gaps == 3 && t.hist.n == 2 &&
		   t.nmis == 1 && t.unexplained == 1 && t.dropped == 1 && t.skipped == 4,
	   "two intervals: 5.5 s sampled (3 + 2.5), 3 gaps in 2 windows, 1 NMI, 1 unexplained, "
	   "1 dropped, 4 skipped");
	ok(t.smi_ever_known && t.smis == 3 && !t.smi_available,
	   "SMIs: the 3 of the first interval; the second could not count them: available 0, "
	   "the counter kept");
	ok(t.last_end_ns == 1764751200000000000ULL && t.last_max_ns == 700000,
	   "the last interval ended at its start + duration, its max 700 us");
	monitor_totals_init(&t, 1764760000000000000ULL);
	ok(t.start_ns == 1764760000000000000ULL && t.intervals == 0 && t.sampled.total == 0 &&
		   t.gaps == 0 && t.hist.n == 0 && !t.smi_ever_known && t.smis == 0 &&
		   t.nmis == 0 && t.last_end_ns == 0,
	   "a new process starts every counter from 0, with its own start time");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_buckets();
	test_interval();
	test_accumulate();
	test_totals();
	return tap_finish();
}
