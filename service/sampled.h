/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The time a scan actually sampled (docs/interfaces.md, debugfs
 * `sampled` and HWLAT_SAMPLED_NS, HWLAT_SAMPLED_CPU_NS): the module's
 * per-CPU sums of its widths, read and checked, and their journal forms.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detector.h"
#include "parse.h"

#define SAMPLED_FILE "sampled"
/* Far above the longest file: 1024 CPUs of "1023 <20 digits>\n". */
#define SAMPLED_FILE_MAX 65536

typedef struct sampled_time {
	cpu_set_bits listed;             /* CPUs that completed a width */
	uint64_t ns[HWLAT_MAX_CPUS];     /* their sums, 0 for the others */
	uint64_t total_ns;
} sampled_time;

/*
 * Parses the content of `sampled`: "<cpu> <ns>\n" lines in strictly
 * ascending CPU order, nothing else (empty: no CPU sampled). Returns 0 or
 * -EBADMSG after logging "<path> line <n>: ..." for the first bad line.
 */
int sampled_parse(const char *text, size_t len, const char *path, sampled_time *ret);

/*
 * Reads and parses <detector>/sampled. -ENOENT without the file (a module
 * older than it; not logged), -EBADMSG when malformed, another negative
 * errno when unreadable (both logged, naming the file).
 */
int sampled_read(detector *d, sampled_time *ret);

/*
 * *end minus *start per CPU (a detector that kept sampling: its sums since
 * it was loaded). -ERANGE, logged, when a CPU's sum went down.
 */
int sampled_since(sampled_time *end, const sampled_time *start, const char *path);

/*
 * The time a scan's SMI total (smi-total.h, by method) was counted in, for
 * smi-rate (docs/interfaces.md section 4): with "sum" one CPU samples at a
 * time, the sum over CPUs; with "max-per-cpu" all sample at once and each
 * SMI counts once, the longest one CPU sampled.
 */
uint64_t sampled_smi_ns(const sampled_time *t, const char *method);

/*
 * HWLAT_SAMPLED_CPU_NS: "<cpu>:<ns>" per listed CPU, ascending, separated
 * by one space; "" when none. Returns a malloc'ed string or NULL.
 */
char *sampled_format_cpus(const sampled_time *t);
