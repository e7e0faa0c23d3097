/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan --monitor: the always-on monitor (docs/design.md, "The
 * monitor"). It drives the module backend (backend.h) as a scan does,
 * with the monitor_* settings, but keeps it sampling: once a tick it reads
 * what the stream holds and the module's totals, every monitor_interval it
 * journals an interval summary and rewrites its Prometheus file. It gives
 * the detector up to a one-shot scan (scan-lock.h) and when the module
 * goes away, and takes it back afterwards; SIGHUP reloads the
 * configuration; every other signal ends it, the detector restored.
 */
#pragma once

#include "scan.h"

/*
 * How often the monitor tests the scan lock and reads the stream (and
 * also at each interval's end and metrics write). Every wake costs: on
 * this project's lab host a bare 1 s poll() loop took 0.18 ms of CPU a
 * wake, and a tick's opens and reads as much again; 5 s keeps the tick
 * within the monitor's 1 s of CPU an hour. A waiting scan still gets the
 * detector within a tick, a window and the drain (SCAN_LOCK_WAIT_NS), and
 * round-robin's one window a second queues at most 5 lines meanwhile.
 */
#define MONITOR_TICK_NS (5 * NSEC_PER_SEC)
/*
 * How long one tick reads the stream at most. Lines that come faster than
 * they can be journaled (a storm with a large monitor_sample_budget) wait
 * in the stream, and once it is full the module counts them as dropped,
 * rather than the loop never getting back to its signals, its intervals
 * and the watchdog.
 */
#define MONITOR_READ_NS (NSEC_PER_SEC / 2)
/* How often the metrics file is rewritten, beside every interval's end. */
#define MONITOR_METRICS_PERIOD_NS (15 * NSEC_PER_SEC)
/* How long an entry waits for journald to take it (a journald restart). */
#define MONITOR_JOURNAL_PATIENCE_NS (30 * NSEC_PER_SEC)

/*
 * Runs until a signal other than SIGHUP: 0, or the negative errno (scan.h)
 * of a start that failed (nothing sampled) or a restore that failed.
 */
int monitor_run(const scan_options *o, const scan_config *cfg, int sig_fd);

/*
 * The scan configuration the monitor's keys make (threshold, width,
 * window, mode, cpus from monitor_*), checked against the module's bounds
 * for that mode (allow_high_duty: whether the module lifts them). -ERANGE
 * (said) when a bound is broken.
 */
int monitor_scan_config(const scan_config *cfg, bool allow_high_duty, scan_config *ret);
