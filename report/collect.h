/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Gathering the chosen entries: the scans they belong to, and streaming
 * statistics overall, per CPU and per --by group.
 */
#pragma once

#include <stdio.h>

#include "report.h"
#include "select.h"
#include "stats.h"
#include "timeline.h"

struct group {
	char key[ID128_LEN + 1];      /* CPU number, scan, boot or machine ID */
	char label[HOSTNAME_MAX + 1]; /* host name for --by host */
	/* --by firmware/product: the first scan of the group (its identity). */
	size_t scan_index;
	uint64_t n_scans; /* scans with matching samples merged into it */
	struct stats st;
};

struct report_data {
	const struct report_options *o;
	struct scan_record *scans;
	size_t n_scans, cap_scans, last_scan;
	struct stats all;
	struct stats *cpu[HWLAT_MAX_CPUS];
	struct group **groups;
	size_t n_groups, last_group;
	struct timeline timeline;
	uint64_t first_ns, last_ns; /* time range of the matched samples */
	FILE *csv;                  /* --csv: rows go here as they are read */
	uint64_t csv_rows;
	int write_error;            /* --csv: why a row could not be written */
	const struct read_result *read; /* what the walk met (malformed, corrupt) */
	const char *no_match_reason;    /* collect_finish() chose nothing: why */
	bool keep_times;                /* the output shows periods: keep the times */
	size_t n_times;                 /* times kept in the scans (coverage.h) */
	bool times_full;                /* COVERAGE_MAX_TIMES reached: no period */
};

void report_data_init(struct report_data *d, const struct report_options *o);
void report_data_done(struct report_data *d);
int collect_sample(const struct sample_entry *x, void *userdata);
int collect_summary(const struct scan_record *s, void *userdata);
/*
 * Marks the scans to report; returns how many. A scan without a matching
 * sample counts only when it is known to have covered the selection: it
 * ran in the --since/--until range (by its summary) and sampled a --cpu
 * CPU (its summary's CPU list); otherwise nothing is known about the
 * selection and d->no_match_reason says why.
 */
size_t collect_finish(struct report_data *d);
/*
 * --by firmware/product: merges the per-scan groups into one group per
 * identity (BIOS vendor, version and date; system vendor and product), in
 * the order of their first scan, once every summary was read. Nothing to
 * do for the other --by. Returns 0 or -ENOMEM.
 */
int collect_regroup(struct report_data *d);
/* Whether scan s belongs to group g (by its key; --by firmware/product:
 * by its identity, after collect_regroup()). */
bool collect_group_has_scan(const struct report_data *d, const struct group *g,
			    const struct scan_record *s);
/* Human name of a --by value ("cpu", "scan", ...). */
const char *group_by_name(enum group_by by);
/* The --by value of a name; -EINVAL when there is none. */
int group_by_from_name(const char *name, enum group_by *ret);
/* Whether the statistics are grouped per scan, boot, host, firmware or
 * product (the "groups" table). */
bool group_by_has_groups(enum group_by by);
