/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --fail-if in the report: the facts of the selection (lib/gate.h) and
 * every condition's outcome through the text/JSON printer.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"

/*
 * Whether the selection holds data a gate can judge: a matched sample, or
 * a chosen clean scan (a summary, no sample) that ran in --since/--until
 * and sampled one of the --cpu CPUs (its HWLAT_CPUS).
 */
bool selection_has_data(const struct report_data *d);

/* Why a fact of gate_facts is not known; the facts point into it. */
struct gates_why {
	char sampled[256], smi[320], threshold[160];
};

/*
 * The facts of the selection (lib/gate.h): statistics, SMI windows,
 * dropped windows, the time sampled (coverage_compute(); unknown when a
 * chosen scan lacks it or --since/--until cut one, and when 0), the
 * largest threshold; why a fact is unknown goes into why.
 */
void gates_facts(const struct report_data *d, struct gate_facts *f, struct gates_why *why);

/*
 * The scan durations of the chosen scans clipped to --since/--until (the
 * "scanned" time of --compare and OpenMetrics); false with why when a scan
 * has no summary or the sum is 0.
 */
bool scanned_duration(const struct report_data *d, uint64_t *ret, char *why, size_t why_size);

/*
 * Evaluates the --fail-if conditions and prints them ("gates" in JSON);
 * with no data prints that they were not evaluated. Returns how many
 * failed.
 */
size_t print_gates(const struct report_data *d, bool has_data);
