/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What samples for a scan: the hwlat_detector module (backend-module.c) or
 * the kernel's hwlat tracer (backend-tracer.c), each behind the same few
 * operations, which run_scan() (scan-run.c) calls in this order:
 *
 *   open        find the detector and take it for this scan
 *   prepare     read and save the state in force, check the configuration
 *               against it (nothing is changed yet)
 *   start       apply the configuration, start sampling, open the stream
 *   parse_line  one line of the stream (the tally counts it)
 *   stop        stop sampling
 *   drain       read what the stream still holds
 *   summarize   fill the backend's part of the summary
 *   restore     put back what prepare saved and open took
 *   free        release the rest, and the backend
 *
 * Each returns 0 or a negative errno (scan.h says which ones mean what),
 * having logged why. restore may be called at any point after open, and
 * again: it undoes each thing once.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "detector.h"
#include "journal-entry.h"
#include "reader.h"
#include "scan.h"
#include "tally.h"

/* start: the scan could not start (logged); its summary says "failed". */
#define BACKEND_START_FAILED 1

typedef struct scan_backend scan_backend;

typedef struct backend_ops {
	const char *name;	 /* HWLAT_BACKEND_* */
	const char *eof_message; /* when the stream ends before the scan does */
	int (*open)(scan_backend *b);
	int (*prepare)(scan_backend *b, scan_tally *t);
	/*
	 * 0 once sampling, with b->stream_fd open and t's threshold and
	 * seq_known set; BACKEND_START_FAILED when the change or the start
	 * failed (logged); a negative errno when it was refused before the
	 * scan could say anything (no summary).
	 */
	int (*start)(scan_backend *b, scan_reader *rd);
	/* A line_parser (tally.h). */
	int (*parse_line)(void *b, const char *line, hwlat_sample *ret);
	int (*stop)(scan_backend *b);
	/* 0, 1 when the stream ended where it should not have, or -errno. */
	int (*drain)(scan_backend *b, scan_reader *rd, uint64_t stopped_at);
	/* started: whether sampling began (start returned 0). */
	void (*summarize)(scan_backend *b, const scan_tally *t, bool started, scan_summary *sum);
	/* final: the scan's end, whose summary says when not all was restored. */
	int (*restore)(scan_backend *b, bool final);
	void (*free)(scan_backend *b);
} backend_ops;

/* What every backend holds; each backend's own state follows it. */
struct scan_backend {
	const backend_ops *ops;
	const scan_options *o;	/* set before open */
	const scan_config *cfg; /* set before prepare */
	const char *path;	/* the detector's directory, once open */
	int stream_fd;		/* the lines of samples, once started; -1 */
	uint64_t lock_wait_ns;	/* backend_lock()'s wait; set before open */
};

/* Each returns a new backend, or NULL (out of memory, logged). */
scan_backend *module_backend_new(void);
/*
 * The module's detector went away under the monitor (unloaded): there is
 * nothing left to restore, and restore then only closes what is open.
 */
void module_backend_forget(scan_backend *b);
scan_backend *tracer_backend_new(void);

/* A zeroed backend of size bytes (its own struct, scan_backend first) with ops. */
void *backend_new(size_t size, const backend_ops *ops);

/*
 * Takes d for this scan: -EBUSY while another scan holds it ("another
 * hwlat-scan is already <held> <path>"), -EIO when it cannot be locked.
 * With wait_ns (a scan that holds the scan lock, scan-lock.h), a held
 * detector is the monitor's, which gives it up: tries again every
 * BACKEND_LOCK_RETRY_US for that long first.
 */
#define BACKEND_LOCK_RETRY_US 50000
int backend_lock(detector *d, const char *held, uint64_t wait_ns);

/* Closes the stream, once. */
void backend_close_stream(scan_backend *b);

/* The settings in force into the summary (mode NULL: "unknown"). */
void backend_summary_settings(scan_summary *sum, uint64_t threshold_us, uint64_t width_us,
			      uint64_t window_us, const char *mode);
