/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The report (text or JSON, through the printer) from the collected data. */
#pragma once

#include "collect.h"

/* The version of the --json document (docs/hwlat-report.schema.json). */
#define REPORT_SCHEMA_VERSION 1

/* Describes the active filters ("scan 0123..., cpus 0-1") into buf. */
char *describe_filters(const struct report_options *o, char *buf, size_t size);

/* Prints the whole report; *ret_exceeded tells whether --hardlimit was
 * exceeded. Returns 0 or a negative errno. */
int print_report(struct report_data *d, bool *ret_exceeded);
/* What could not be read ("journal"): skipped entries, corrupt or
 * unreadable files. */
void print_journal(const struct read_result *res);
/* The identity of a scan as --by firmware ("vendor version (date)") or
 * product ("vendor product") labels it, "not recorded" without one; raw
 * (print it escaped). Returns buf. */
char *scan_identity_label(const struct scan_record *s, enum group_by by, char *buf, size_t size);
/* Windows a scan lost: its summary's count, else the sequence gaps seen. */
uint64_t scan_dropped(const struct scan_record *s);
