/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One emitter per output: the report, text or JSON through the printer
 * (output.c); the raw samples as CSV (csv.c); the figures as OpenMetrics
 * (metrics.c); the SVG of --svg (svg.c), written after the report. A run
 * selects the entries, reads them with what its emitter asked for,
 * collects them, and hands the result to the emitter.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "collect.h"

/* What the report found that decides the exit status. */
struct report_verdict {
	bool exceeded;	     /* a latency above --hardlimit */
	bool has_data;	     /* the selection holds data to judge --fail-if on */
	size_t gates_failed; /* --fail-if conditions that hold */
};

struct emitter {
	/* Before the journal is read: what the walk keeps, or writes as it goes. */
	void (*prepare)(struct report_data *d);
	/* The output from what was collected; 0 or a negative errno (said). */
	int (*emit)(struct report_data *d, struct report_verdict *v);
};

extern const struct emitter report_emitter;	 /* output.c */
extern const struct emitter csv_emitter;	 /* csv.c */
extern const struct emitter openmetrics_emitter; /* metrics.c */
extern const struct emitter svg_emitter;	 /* svg.c */
