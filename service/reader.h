/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading a backend's stream of lines (the module's `stream`, the tracer's
 * trace_pipe) into the scan's tally: for the scan's duration, waking for
 * signals and the progress line; after the backend stopped, what is left;
 * before it starts, what is buffered from before the scan.
 */
#pragma once

#include <signal.h>
#include <stdint.h>

#include "progress.h"
#include "stream.h"
#include "tally.h"

/* How the sampling part of a scan ended. */
typedef enum sample_end {
	END_COMPLETED,
	END_SIGNAL,
	END_EOF, /* someone else stopped the detector */
	END_ERROR,
} sample_end;

typedef struct scan_reader {
	line_reader lr;
	scan_tally *tally;
	line_parser parse; /* the backend's, called with backend */
	void *backend;
	progress progress;
} scan_reader;

/* A reader of lines parsed by parse(backend, ...) into t. */
void reader_init(scan_reader *rd, scan_tally *t, line_parser parse, void *backend);

/*
 * Reads fd until the deadline (CLOCK_MONOTONIC), a signal on sig_fd
 * (logged), EOF or an error (logged), redrawing the progress line.
 */
sample_end reader_sample(scan_reader *rd, int fd, int sig_fd, uint64_t deadline);

/*
 * Reads what fd holds now, without waiting. Returns 0, 1 at EOF, or a
 * negative errno (logged).
 */
int reader_read_buffered(scan_reader *rd, int fd);

/*
 * The same, but returns 0 once the deadline (CLOCK_MONOTONIC) passed, with
 * lines still in fd: a reader that must get back to other work while the
 * lines come faster than it can take them (the monitor's journal).
 */
int reader_read_until(scan_reader *rd, int fd, uint64_t deadline);

/*
 * Reads fd until EOF, for a stream that ends once its backend stopped;
 * -ETIMEDOUT (logged) if it has not ended by the deadline.
 */
int reader_drain(scan_reader *rd, int fd, uint64_t deadline);

/*
 * Discards what fd holds from before the scan, including a partial line:
 * counted in the tally's `discarded` and said. Returns what
 * reader_read_buffered() returns.
 */
int reader_discard(scan_reader *rd, int fd);

/*
 * Blocks every signal whose default action would end the scan (other than
 * those a fault raises) and returns a signalfd that reports them, or a
 * negative errno (logged); *old gets the previous mask unless NULL.
 */
int reader_signalfd(sigset_t *old);
