/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The end of every scan, once the detector or tracer is restored, whichever
 * backend sampled: the summary entry, the printed summary, the fail_if
 * conditions, the metrics file and the verdict.
 */
#pragma once

#include <stdbool.h>
#include <sys/utsname.h>

#include "identity.h"
#include "journal-entry.h"
#include "platform.h"
#include "reader.h"
#include "scan.h"
#include "smi-total.h"
#include "tally.h"

/* What the summary says about the machine, whichever backend sampled. */
typedef struct machine_facts {
	struct utsname u;
	platform plat;
	machine_identity ident;
} machine_facts;

/* Reads the machine's facts into m and points sum's fields at them. */
void summary_machine(const scan_options *o, machine_facts *m, scan_summary *sum);

/*
 * Writes the summary entry (status from end), prints the summary unless
 * quiet, judges the fail_if conditions and writes the metrics file.
 * Returns the verdict, or -EIO for a scan that failed (said above).
 */
int scan_finish(const scan_options *o, const scan_config *cfg, scan_tally *t,
		scan_summary *sum, sample_end end, const smi_total *smi_total);

/*
 * Prints the summary on stdout; a negative errno when stdout cannot take it
 * (EPIPE, or an earlier write that failed).
 */
int print_summary(const scan_summary *sum, uint64_t seq_gaps, const smi_tally *smi,
		  const smi_total *smi_total);
