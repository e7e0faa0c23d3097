/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The time a scan actually sampled (docs/interfaces.md, debugfs
 * `sampled` and HWLAT_SAMPLED_NS, HWLAT_SAMPLED_CPU_NS): the module's
 * per-CPU sums of its widths in ns, a file of cpu-values.h.
 */
#pragma once

#include <stdint.h>

#include "cpu-values.h"

typedef cpu_values sampled_time;

/*
 * The time a scan's SMI total (smi-total.h, by method) was counted in, for
 * smi-rate (docs/interfaces.md section 4): with "sum" one CPU samples at a
 * time, the sum over CPUs; with "max-per-cpu" all sample at once and each
 * SMI counts once, the longest one CPU sampled.
 */
uint64_t sampled_smi_ns(const sampled_time *t, const char *method);
