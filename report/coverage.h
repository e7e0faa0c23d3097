/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coverage and rates: the time the CPUs actually sampled
 * (HWLAT_SAMPLED_NS, HWLAT_SAMPLED_CPU_NS: the sum of the widths, not wall
 * time) per scan, per group and per CPU, the rates per hour sampled, and
 * the dominant period of a machine's events (period.h).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "period.h"
#include "rate.h"

/* The times of matched windows kept for the periods (8 bytes each): past
 * this many in a selection no period is computed, and memory stays bounded. */
#define COVERAGE_MAX_TIMES 1000000

/*
 * A summary's pair of per-CPU totals fields: HWLAT_SAMPLED_NS and
 * HWLAT_SAMPLED_CPU_NS, or HWLAT_SKIPPED_WINDOWS and
 * HWLAT_SKIPPED_CPU_WINDOWS: what each problem is called.
 */
struct cpu_pairs_kind {
	const char *malformed;	     /* the list is not CPU:N pairs ... */
	const char *no_sum;	     /* its figures do not add up to the total */
	const char *total_bad;	     /* the total is neither a number nor unavailable */
	const char *missing;	     /* a total without a list */
	const char *without_total;   /* a list without a total */
	const char *not_unavailable; /* a total unavailable, the list not */
};

extern const struct cpu_pairs_kind cpu_pairs_sampled, cpu_pairs_skipped;

/*
 * Checks a list ("0:450 1:449", ascending CPUs below 1024, single spaces)
 * against its total; fills out (HWLAT_MAX_CPUS entries) when not NULL.
 * Returns NULL and *ret_n, or the field and what is wrong ("(...)").
 */
const char *cpu_pairs_parse(const struct cpu_pairs_kind *k, const char *text, uint64_t total,
			    struct cpu_ns *out, size_t *ret_n);

/*
 * Checks a summary's pair as recorded (total_text empty: not recorded,
 * has_list: the list was there), setting *known and *total (0 when not
 * known); returns NULL or the field and what is wrong.
 */
const char *cpu_pairs_problem(const struct cpu_pairs_kind *k, const char *total_text,
			      bool has_list, const char *list, bool *known, uint64_t *total);

/* Checks a summary's two pairs (entry_problem()). */
const char *sampled_problem(struct scan_record *s);

/* What a scan, a group, a CPU or the selection covered. */
struct coverage {
	bool known;            /* every scan in it has its time sampled */
	uint64_t ns;           /* the time sampled (summed over CPUs) */
	char why[200];         /* !known: why (the first scan without) */
	uint64_t samples, smi_windows, nmi_windows, unexplained;
	bool smi_known;        /* every window could count SMIs */
	/* For the rates: windows above their scan's threshold, SMIs (of the
	 * windows' counts), NMIs; the thresholds of the scans (known when
	 * each scan has one, from its summary or its samples). */
	uint64_t over_threshold, smis, nmis;
	bool threshold_known;
	uint64_t threshold_min_ns, threshold_max_ns;
	char threshold_why[160];
	/* The dominant period: computed only for the events of one machine,
	 * when the times were kept (COVERAGE_MAX_TIMES); else why not. */
	bool period_computed;
	const char *period_why;
	struct period_result period;
};

/* A chosen scan's time sampled in the selection (--cpu; cpu >= 0: that
 * CPU only); false with why when it is not known. */
bool scan_sampled(const struct scan_record *s, const struct report_options *o, int cpu,
		  uint64_t *ret, char *why, size_t why_size);

/* Which scans a figure covers: all chosen ones (g NULL, cpu < 0), a
 * group's, or, per CPU, every chosen scan's time on that CPU. No period. */
void coverage_compute(const struct report_data *d, const struct group *g, int cpu,
		      struct coverage *ret);
/* The period of the selection (g NULL) or of a group into c; 0 or -ENOMEM.
 * A CPU has none: its events of several scans are no one sequence. */
int coverage_period(const struct report_data *d, const struct group *g, struct coverage *c);
/* One scan's coverage of the selection and its period. */
int coverage_scan(const struct report_data *d, const struct scan_record *s, struct coverage *ret);

/* Every chosen scan's time sampled per CPU (of the selection) into ns;
 * false when a scan lacks it. */
bool coverage_cpus(const struct report_data *d, uint64_t ns[HWLAT_MAX_CPUS]);
/* Most rates of a figure: 4 kinds, and one per --fail-if size. */
#define COVERAGE_RATES_MAX (4 + STATS_SIZES_MAX)

/*
 * The rates of a figure whose time sampled is known and above 0: windows
 * above the threshold (its size when the scans share one), SMIs, NMIs,
 * unexplained windows, then, when st is not NULL, the windows above each
 * size st counts (the --fail-if rate(>SIZE) sizes), unknown below the
 * largest threshold. Returns how many it put into out.
 */
size_t coverage_rates(const struct coverage *c, const struct stats *st,
		      struct rate_figure out[COVERAGE_RATES_MAX]);
/* Events per hour sampled (count / (ns / 3600 s)). */
double per_hour(uint64_t count, uint64_t ns);
