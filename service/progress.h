/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The progress line of an interactive scan: once a second on stderr (a
 * terminal), "hwlat-scan: 1m 05s elapsed, 8m 55s left, 3 samples, max
 * 212.4 us". Off under systemd and when stderr is not a terminal.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How often the line is redrawn, and so the longest poll() wait. */
#define PROGRESS_INTERVAL_MS 1000

typedef struct progress {
	bool on;
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	uint64_t duration_ns;
	uint64_t next_ns; /* next redraw */
} progress;

/*
 * Whether a scan shows progress: not --quiet, not run by systemd (--unit or
 * $INVOCATION_ID set), and stderr is a terminal.
 */
bool progress_wanted(bool quiet, bool unit);

void progress_start(progress *p, bool on, uint64_t start_ns, uint64_t duration_ns);
/* Redraws the line when a second has passed since the last redraw. */
void progress_update(progress *p, uint64_t now, uint64_t samples, uint64_t max_ns);
/* Removes the line (before the summary). */
void progress_stop(progress *p);

/* "45s", "2m 05s", "1h 00m 05s", "3d 04h 00m 05s": whole seconds. */
char *format_seconds(uint64_t s, char *buf, size_t size);
