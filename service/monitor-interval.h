/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's accounting, pure (no file, no clock): one interval's
 * figures (windows, gaps and their histogram, the sample entries it may
 * still journal and those it folds, time sampled and paused, SMIs) and the
 * counters since the monitor started, which grow by each closed interval
 * (docs/interfaces.md section 6).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sampled.h"
#include "stream.h"

/* Gap buckets: 1-2-5 per decade from 1 us to 1 s, then +Inf. */
#define GAP_BUCKETS 19

typedef struct gap_histogram {
	uint64_t count[GAP_BUCKETS + 1]; /* per bucket, not cumulative; last: above 1 s */
	uint64_t n;
	uint64_t sum_ns;
} gap_histogram;

/* Upper bound of bucket i (< GAP_BUCKETS) in ns, and as Prometheus's le label. */
uint64_t gap_bucket_ns(unsigned i);
const char *gap_bucket_label(unsigned i);

void gap_histogram_add(gap_histogram *h, uint64_t ns);
void gap_histogram_merge(gap_histogram *dst, const gap_histogram *src);
/* "le:count" pairs of the non-empty buckets ("0.00002:3 +Inf:1"); "" when empty. */
char *gap_histogram_format(const gap_histogram *h, char *buf, size_t size);

/* Why the monitor did not sample for a while. */
typedef enum pause_reason {
	PAUSE_SCAN,     /* a one-shot scan took the detector */
	PAUSE_DETECTOR, /* the detector went away (module unloaded) or was stopped */
	_PAUSE_REASON_MAX,
} pause_reason;

const char *pause_reason_name(pause_reason r); /* "scan", "detector" */

typedef struct monitor_interval {
	uint64_t number;       /* 1, 2, ... since the monitor started */
	uint64_t start_ns;     /* CLOCK_REALTIME */
	uint64_t duration_ns;  /* set when it closes */
	uint64_t threshold_ns;
	uint64_t budget;       /* sample entries it may journal */
	uint64_t windows;      /* windows reported (sample lines) */
	uint64_t gap_windows;  /* of which with a gap above the threshold */
	uint64_t gaps;         /* gaps above the threshold: the windows' counts */
	uint64_t max_ns;       /* largest gap above the threshold; 0: none */
	gap_histogram hist;    /* the largest gap of each gap window */
	uint64_t nmis;
	uint64_t unexplained;  /* gap windows without an NMI or a known SMI */
	uint64_t journaled;    /* sample and skip entries written */
	uint64_t folded;       /* sample entries not written: past the budget */
	gap_histogram folded_hist;
	uint64_t folded_skip_records;
	sampled_time sampled;  /* ns per CPU */
	cpu_values skipped;    /* windows per CPU */
	uint64_t dropped;      /* windows lost to a full stream buffer */
	uint64_t paused_ns[_PAUSE_REASON_MAX];
	uint64_t pauses[_PAUSE_REASON_MAX];
	bool smi_known;        /* the MSR delta over the whole interval */
	uint64_t smis;
} monitor_interval;

void monitor_interval_start(monitor_interval *iv, uint64_t number, uint64_t start_ns,
			    uint64_t threshold_ns, uint64_t budget);

/*
 * One line of the stream, a window or a skip record: counted, and true
 * when its entry still fits in the budget (the caller journals it), false
 * when it is folded into the interval's summary.
 */
bool monitor_interval_sample(monitor_interval *iv, const hwlat_sample *s);

/* A sample whose entry could not be journaled after all: folded instead. */
void monitor_interval_unjournal(monitor_interval *iv, const hwlat_sample *s);

/*
 * The growth of the module's per-CPU totals file (`sampled` or `skipped`)
 * from *last to *now into *into, *last becoming *now. A CPU whose value
 * went down was reset (enable=1 by someone else): its value since is the
 * growth. Returns the CPUs that went down (0 normally).
 */
unsigned cpu_values_accumulate(cpu_values *into, cpu_values *last, const cpu_values *now);

/* The counters since the monitor started (Prometheus's counters). */
typedef struct monitor_totals {
	uint64_t start_ns; /* the process's start, CLOCK_REALTIME */
	uint64_t intervals; /* closed */
	sampled_time sampled;
	uint64_t gaps;
	gap_histogram hist;
	bool smi_ever_known;
	bool smi_available; /* in the last interval */
	uint64_t smis;
	uint64_t nmis;
	uint64_t unexplained;
	uint64_t dropped;
	uint64_t skipped;
	/* Of the last interval closed. */
	uint64_t last_end_ns;
	uint64_t last_max_ns;
	/* Gauges of now. */
	uint64_t threshold_ns;
	bool paused;
} monitor_totals;

/* All counters 0 from start_ns: a new process. */
void monitor_totals_init(monitor_totals *t, uint64_t start_ns);

/*
 * Adds an interval's counts (time sampled, gaps, the histogram, SMIs,
 * NMIs, unexplained, dropped and skipped windows) and its SMI
 * availability: a closed interval, or the one in progress for the
 * metrics file's figures until now.
 */
void monitor_totals_add(monitor_totals *t, const monitor_interval *iv);

/* Adds a closed interval: its counts, and it is the last one. */
void monitor_totals_close(monitor_totals *t, const monitor_interval *iv);
