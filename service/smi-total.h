/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMI accounting of a scan (docs/interfaces.md section 2): whether the
 * module can count SMIs (its debugfs `smi` file), the per-CPU totals of the
 * windows, and the machine total that counts each SMI once, by the method
 * the mode calls for. Pure functions: no file is read here.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "parse.h"
#include "stream.h"

#define SMI_REASON_MAX 256

/* Why SMIs are unavailable when the module has no `smi` file. */
#define SMI_REASON_OLD_MODULE                                               \
	"the hwlat_detector module is too old to say whether it can count " \
	"SMIs (no smi file); rebuild it (dkms autoinstall)"

typedef struct smi_source {
	bool available;
	char reason[SMI_REASON_MAX]; /* when not available */
} smi_source;

/*
 * From the content of the module's `smi` file (NULL: no such file):
 * "MSR_SMI_COUNT" is available, "unavailable: <reason>" gives the reason,
 * anything else is unavailable with a reason quoting it. Trailing white
 * space is ignored.
 */
void smi_source_parse(const char *text, smi_source *ret);

/* A module that cannot count SMIs makes every sample's SMI fields unknown. */
void smi_source_apply(const smi_source *src, hwlat_sample *s);

typedef struct smi_tally {
	uint64_t per_cpu[HWLAT_MAX_CPUS]; /* sum of the known smi_count */
	cpu_set_bits seen;                /* CPUs with a known smi_count */
	uint64_t unknown_windows;         /* windows whose smi_count was "-" */
} smi_tally;

void smi_tally_add(smi_tally *t, const hwlat_sample *s);

/* HWLAT_SMI_METHOD_MAX_PER_CPU for "per-cpu", HWLAT_SMI_METHOD_SUM otherwise. */
const char *smi_method(const char *mode);

typedef struct smi_total {
	bool known;
	uint64_t total;
	const char *method;
	char reason[SMI_REASON_MAX + 64]; /* when not known */
} smi_total;

/* The machine total of a scan in mode: each SMI counted once. */
void smi_total_compute(const smi_tally *t, const smi_source *src, const char *mode,
		       smi_total *ret);

/*
 * Writes "machine total 5 (max-per-cpu); per CPU 0: 5, 1: 5" or
 * "unavailable (<reason>)" to f. The per-CPU list holds the CPUs of the
 * cpulist cpus (when it parses) and every CPU that took an SMI.
 */
void smi_print(FILE *f, const smi_tally *t, const smi_total *total, const char *cpus);
