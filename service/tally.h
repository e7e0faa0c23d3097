/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-line accounting of a scan, whichever backend samples: each line
 * of the backend's stream, once the backend has parsed it, is counted
 * (samples, maximum, sequence gaps, SMIs, NMIs, the statistics for
 * fail_if and the metrics file) and journaled as one sample entry; a line
 * that is no sample is counted and named instead.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-id128.h>

#include "journal-entry.h"
#include "parse.h"
#include "smi-total.h"
#include "stats.h"
#include "stream.h"

/* Bad stream lines are each counted; only the first few are each logged. */
#define BAD_LINE_MESSAGES_MAX 10

/*
 * What a backend makes of one line: 0 and *ret for a sample, 1 for a line
 * that is none and that it has accounted for itself (lost events, another
 * tracer's line), a negative errno for a malformed line.
 */
typedef int (*line_parser)(void *backend, const char *line, hwlat_sample *ret);

/*
 * The monitor's say over the journal: called for each line once counted,
 * true to journal its entry, false to fold it (monitor-interval.h); and,
 * for an entry journald did not take within journal_patience_ns, unsent.
 */
typedef struct tally_journal_hooks {
	bool (*keep)(void *data, const hwlat_sample *s);
	void (*unsent)(void *data, const hwlat_sample *s);
	void *data;
} tally_journal_hooks;

typedef struct scan_tally {
	char scan_id[SD_ID128_STRING_MAX];
	const char *backend;   /* HWLAT_BACKEND_* of the sample entries */
	uint64_t threshold_ns; /* of the sample entries: the one in force */
	FILE *export;	       /* NULL: the journal */
	journal_entry entry;
	bool broken; /* a sample could not be counted or journaled: stop journaling */
	uint64_t samples;
	uint64_t max_ns;
	smi_source smi_src; /* what the backend says about counting SMIs */
	smi_tally smi;
	uint64_t nmi_total;
	bool seq_known; /* false until the first line: its number is no gap */
	uint64_t last_seq;
	uint64_t seq_gaps;
	struct stats stats; /* percentiles etc. for fail_if */
	/* Per CPU, for the metrics file only (NULL: no window of that CPU). */
	bool per_cpu;
	struct stats *cpu_stats[HWLAT_MAX_CPUS];
	uint64_t skipped_lines; /* malformed, too long, cut: counted, not journaled */
	uint64_t skipped_windows; /* the stream's skip records, added up */
	/* NULL hooks: every line is journaled, a failed send breaks the tally. */
	const tally_journal_hooks *hooks;
	uint64_t journal_patience_ns; /* retrying a send journald refused */
	/* Lines buffered before the scan started: counted here, nothing else. */
	bool discard;
	uint64_t discarded;
} scan_tally;

/* A tally for a scan with this id; per_cpu keeps the per-CPU statistics. */
void tally_init(scan_tally *t, const char *scan_id, bool per_cpu, FILE *export);
void tally_done(scan_tally *t);

/*
 * One complete line: parsed by parse (with backend), then counted and
 * journaled. Returns 0, or the negative errno of a sample that could not
 * be counted or journaled (logged; the tally is broken from then on).
 */
int tally_line(scan_tally *t, const char *line, line_parser parse, void *backend);

/* A line the line reader could not pass on (stream.h): counted and named. */
void tally_bad_line(scan_tally *t, line_problem why, const char *text, size_t len);

/*
 * A line that cannot be a sample: counted and named (the first
 * BAD_LINE_MESSAGES_MAX of them) as "skipping <what> in the detector's
 * stream: '<text>'".
 */
void tally_skip(scan_tally *t, const char *what, const char *text, size_t len);

/* For a message: printable ASCII as is, other bytes as \xNN, cut at 120. */
char *escape_text(const char *text, size_t len, char *buf, size_t size);
