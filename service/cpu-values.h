/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module's per-CPU totals files, `sampled` (ns sampled) and `skipped`
 * (windows not sampled): "<cpu> <value>\n" lines in strictly ascending CPU
 * order, read and checked, the scan's part of them, and their journal form
 * "<cpu>:<value> ..." (docs/interfaces.md).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detector.h"
#include "parse.h"

/* Far above the longest file: 1024 CPUs of "1023 <20 digits>\n". */
#define CPU_VALUES_FILE_MAX 65536

/* One of the files, and the words its messages use. */
typedef struct cpu_values_file {
	const char *name; /* in the detector's directory */
	const char *unit; /* of a value: "ns", "windows" */
	const char *verb; /* what a CPU did: "sampled", "skipped" */
	const char *what; /* what is unknown without it: "the time sampled" */
} cpu_values_file;

extern const cpu_values_file cpu_values_sampled; /* `sampled` */
extern const cpu_values_file cpu_values_skipped; /* `skipped` */

typedef struct cpu_values {
	cpu_set_bits listed;	     /* CPUs with a line */
	uint64_t v[HWLAT_MAX_CPUS]; /* their values, 0 for the others */
	uint64_t total;
} cpu_values;

/*
 * Parses the content of file f: its lines, nothing else (empty: no CPU).
 * Returns 0 or -EBADMSG after logging "<path> line <n>: ..." for the first
 * bad line; *ret is untouched then.
 */
int cpu_values_parse(const cpu_values_file *f, const char *text, size_t len, const char *path,
		     cpu_values *ret);

/*
 * Reads and parses <detector>/<f->name>. -ENOENT without the file (a
 * module older than it; not logged), -EBADMSG when malformed, another
 * negative errno when unreadable (both logged, naming the file).
 */
int cpu_values_read(detector *d, const cpu_values_file *f, cpu_values *ret);

/*
 * *end minus *start per CPU (a detector that kept sampling: its totals
 * since it was loaded); a CPU whose value did not grow is no longer
 * listed. -ERANGE, logged, when a CPU's value went down.
 */
int cpu_values_since(const cpu_values_file *f, cpu_values *end, const cpu_values *start,
		     const char *path);

/*
 * "<cpu>:<value>" per listed CPU, ascending, separated by one space; ""
 * when none. Returns a malloc'ed string or NULL.
 */
char *cpu_values_format(const cpu_values *t);
