/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus text file of a scan or a selection of scans
 * (docs/interfaces.md section 5): one writer for hwlat-scan's
 * openmetrics_file and hwlat-report --openmetrics. Every family is a gauge
 * (a new scan replaces the values) except the latency summary.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parse.h"
#include "rate.h"
#include "stats.h"

/* What the file says; each tool fills it from its own data. */
struct openmetrics_facts {
	const struct stats *all;
	/* HWLAT_MAX_CPUS entries, NULL for a CPU without windows; or NULL. */
	struct stats *const *cpu;
	const double *percentiles; /* 0..100 */
	size_t n_percentiles;
	uint64_t scans;
	bool smi_known;            /* the machine total of every scan is known */
	uint64_t smi_total;
	uint64_t dropped;
	bool duration_known;
	uint64_t duration_ns;      /* wall-clock time scanned */
	/* Time sampled (HWLAT_SAMPLED_NS): known when every
	 * scan has it; per CPU HWLAT_MAX_CPUS entries (0: did not sample), or
	 * NULL. */
	bool sampled_known;
	uint64_t sampled_ns;
	const uint64_t *cpu_sampled_ns;
	/* Windows the module could not sample (HWLAT_SKIPPED_WINDOWS): known
	 * when every scan has it. */
	bool skipped_known;
	uint64_t skipped_windows;
	/* Whose SMIs (HWLAT_SMI_SCOPE_*) every scan counted; NULL: not one. */
	const char *smi_scope;
	/* The rates with their confidence (rate.h); the known ones are
	 * written. NULL: none (hwlat-scan). */
	const struct rate_figure *rates;
	size_t n_rates;
	bool have_threshold;
	uint64_t threshold_ns;     /* of the newest scan */
	bool have_last;
	uint64_t last_end_ns;      /* end of the newest scan, ns since the epoch */
	const char *last_status;   /* its HWLAT_STATUS; NULL: it has no summary */
};

/* Writes the families to f; returns 0 or a negative errno (the write's). */
int openmetrics_write(FILE *f, const struct openmetrics_facts *x);

/* A writer of a whole file's content: 0 or a negative errno. */
typedef int (*openmetrics_writer)(FILE *f, const void *data);

/*
 * What openmetrics_write_file() does, for any writer (the monitor's file):
 * write(f, data) into a temporary file, then rename it over path; with
 * sync, the data reaches the disk before the rename. A reader sees the old
 * file or the new one either way; sync only matters after a crash, and
 * costs a disk flush: the one-shot scan's file is its result, the
 * monitor's is rewritten every 15 s and at its start.
 */
int openmetrics_write_file_with(const char *path, openmetrics_writer write, const void *data,
				bool sync);

/* ns as exact decimal seconds: "0.0000305", "1764750060.5", "0". Returns buf. */
char *openmetrics_seconds(uint64_t ns, char *buf, size_t size);

/* A family's "# HELP" and "# TYPE" lines. */
void openmetrics_family(FILE *f, const char *name, const char *type, const char *help);

/*
 * Writes them to a temporary file next to path (path.XXXXXX, mode 0644)
 * and renames it over path: a reader sees the old file or the new one,
 * never half of one. Returns 0 or a negative errno (nothing is left
 * behind on failure).
 */
int openmetrics_write_file(const char *path, const struct openmetrics_facts *x);
