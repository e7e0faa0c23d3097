/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's own hwlat tracer as a backend of hwlat-scan, for machines
 * that cannot load our module:
 * finding tracefs, saving, changing and restoring the tracer's state
 * (current_tracer, tracing_thresh, tracing_cpumask, hwlat_detector/width,
 * window and mode, tracing_on), and parsing the hwlat lines of trace_pipe
 * into the samples the module's stream gives. No journal and no policy
 * here: hwlat-scan.c drives it.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "detector.h"
#include "parse.h"
#include "stream.h"

#define TRACEFS_DEFAULT_MOUNT "/sys/kernel/tracing"
#define TRACEFS_DEBUGFS_MOUNT "/sys/kernel/debug/tracing"
#define TRACER_NAME "hwlat"
#define TRACER_IDLE "nop"
/* The threshold the tracer uses while tracing_thresh is 0 (us). */
#define TRACER_DEFAULT_THRESHOLD_US 10

typedef struct tracer {
	detector dir; /* the tracefs directory (detector.c reads and writes) */
} tracer;

typedef struct tracer_state {
	char current[64];      /* current_tracer */
	uint64_t threshold_us; /* tracing_thresh */
	uint64_t width_us;     /* hwlat_detector/width */
	uint64_t window_us;    /* hwlat_detector/window */
	bool has_mode;	       /* hwlat_detector/mode exists (5.14 and later) */
	char mode[16];
	char cpumask[1024]; /* tracing_cpumask as the kernel writes it */
	bool tracing_on;
} tracer_state;

/*
 * Opens dir, or without one the first of /sys/kernel/tracing and
 * /sys/kernel/debug/tracing that holds available_tracers. Returns 0,
 * or -ENOENT when there is no tracefs (logged, saying what to do).
 */
int tracer_open(tracer *t, const char *dir);
void tracer_close(tracer *t);

/*
 * Whether available_tracers lists hwlat: 1, 0, or a negative errno
 * (logged).
 */
int tracer_available(tracer *t);

/* An exclusive, non-blocking flock() on the tracefs directory; -EWOULDBLOCK. */
int tracer_lock(tracer *t);

/* Reads every file of tracer_state; logs and returns a negative errno. */
int tracer_read_state(tracer *t, tracer_state *ret);

/*
 * Writes each setting in which to differs from *state (tracing_thresh,
 * width and window in the order that keeps width <= window,
 * tracing_cpumask, mode), then current_tracer, then tracing_on, updating
 * *state after each write. current_tracer is written only once the others
 * are, and back to an idle tracer before them: the settings are the
 * hwlat tracer's own while it runs. Logs the failed write (file and value).
 */
int tracer_change(tracer *t, tracer_state *state, const tracer_state *to);

/* Writes tracing_on; updates state. */
int tracer_set_on(tracer *t, tracer_state *state, bool on);

/*
 * A cpulist ("0-3,6") as a tracing_cpumask ("4f", groups of 32 bits
 * separated by commas, most significant first) and back. Return 0 or
 * -EINVAL/-ERANGE/-ENOBUFS.
 */
int cpumask_from_cpulist(const char *cpulist, char *buf, size_t size);
int cpulist_from_cpumask(const char *mask, char *buf, size_t size);

/* What a trace_pipe line is. */
typedef enum tracer_line {
	TRACER_LINE_SAMPLE, /* an hwlat sample: *ret filled */
	TRACER_LINE_LOST,   /* "CPU:N [LOST M EVENTS]": *ret_lost = M */
	TRACER_LINE_OTHER,  /* another tracer's or event's line */
} tracer_line;

/*
 * Parses one trace_pipe line without its newline:
 *
 *   <comm>-<pid> [<cpu>] <flags> <secs>.<usecs>: #<seq> inner/outer(us): <inner>/<outer>
 *   ts:<sec>.<nsec> count:<count>[ nmi-total:<us>][ nmi-count:<n>]
 *
 * (one line; the kernel pads the numbers with spaces). inner, outer and
 * nmi-total are microseconds; the SMI fields are unavailable (the tracer
 * does not count SMIs), and so is nmi_ns when nmi-count comes without
 * nmi-total. Returns the kind, or -EINVAL for a line that names the hwlat
 * format (inner/outer) but does not parse, -ERANGE for a number too large.
 */
int tracer_parse_line(const char *line, hwlat_sample *ret, uint64_t *ret_lost);
