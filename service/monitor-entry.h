/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The monitor's interval summary as a journal entry (docs/interfaces.md
 * section 2, "Monitor interval"): a pure mapping from a closed interval
 * and the settings it ran with to fields.
 */
#pragma once

#include "journal-entry.h"
#include "monitor-interval.h"

/* What the interval ran with, beside its own figures. */
typedef struct interval_context {
	const char *scan_id; /* the monitor's: that of its sample entries */
	uint64_t width_ns;
	uint64_t window_ns;
	const char *mode;
	const char *cpus;
	int smi_cpu;		     /* the CPU whose MSR_SMI_COUNT was read; -1: none */
	const char *smi_unavailable; /* why, when the interval's SMIs are unknown */
	const char *end;	     /* HWLAT_INTERVAL_END_* */
} interval_context;

int journal_entry_interval(journal_entry *e, const monitor_interval *iv,
			   const interval_context *c);
