/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's Prometheus file (node-exporter's textfile format; the
 * names are docs/interfaces.md section 6): counters since the monitor
 * started, the gap histogram, and gauges of the last interval. Pure: it
 * writes what monitor_totals holds to a FILE.
 */
#pragma once

#include <stdio.h>

#include "monitor-interval.h"

/* Writes the families; 0 or a negative errno (the write's). */
int monitor_metrics_write(FILE *f, const monitor_totals *t);

/* The same into path, atomically (openmetrics_write_file_with()). */
int monitor_metrics_write_file(const char *path, const monitor_totals *t);
