/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --compare A B: two selections side by side (scans, samples, time
 * scanned, max, percentiles, SMIs and their rate per hour scanned, NMI and
 * unexplained windows) through the text/JSON printer, with whether they
 * differ by more than chance (significance.h), and --svg draws both
 * histograms overlaid. Each side is the common options plus its terms
 * (scan:, boot:, since:, until:, cpu: choose entries as the options of the
 * same name; host:, firmware:, product: choose scans once their summaries
 * are read).
 */
#pragma once

#include "files.h"
#include "report.h"

/* The significance level of the verdicts. */
#define COMPARE_ALPHA 0.05

/*
 * Reads both sides, prints the comparison to stdout and writes --svg.
 * Returns 0, -ENOENT when a side matches nothing (said on stderr), or
 * another negative errno (said on stderr).
 */
int compare_run(struct journal_set *set, struct report_options sides[2]);
