/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --svg FILE: one self-contained SVG (no scripts, no external fonts or
 * images) with the latency histogram and the latency over time, threshold
 * and hardlimit drawn, and the scans it covers. Written to a temporary file
 * and renamed, so FILE is either complete or untouched.
 */
#pragma once

#include "collect.h"

int svg_write(const char *path, const struct report_data *d);
/*
 * --compare --svg FILE: the histograms of both sides overlaid (A blue, B
 * orange, half transparent) on the log2 buckets of both, with each side's
 * selection, samples, max and p99; written the same way.
 */
int svg_write_compare(const char *path, const struct report_data *a,
		      const struct report_data *b);
