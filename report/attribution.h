/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What explains the windows of the chosen scans (docs/interfaces.md
 * section 2): the machine SMI total of each scan, by its own method, added
 * over the scans; why SMIs are unavailable; and the likely cause of the
 * windows neither SMI nor NMI explains. The wording is made here once, for
 * the text/JSON report and the SVG alike.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect.h"

#define LIKELY_CAUSE_HOST_PREEMPTION "host preemption (likely)"

struct attribution {
	/* The scans' HWLAT_SMI_TOTAL, added over the scans that know it. */
	uint64_t smi_total;
	size_t scans_known, scans_unavailable;
	const char *smi_method; /* shared by the scans that know it, "mixed", or
				   NULL: not recorded */
	const char *smi_reason; /* of the first scan without a total */
	/* Unexplained windows of scans that ran under a hypervisor. */
	uint64_t hv_unexplained;
	size_t hv_scans, scans;
	const char *hypervisor; /* the one hypervisor, or NULL when several */
	/* Whose SMIs (HWLAT_SMI_SCOPE_*) the scans shared, or "mixed". */
	const char *smi_scope;
	/* The windows the module could not sample, in scans that say. */
	uint64_t skipped_windows;
	size_t skipped_scans_known;
};

/* HWLAT_SMI_SCOPE of a scan, or what its hypervisor says (older summaries). */
const char *scan_smi_scope(const struct scan_record *s);

/* The scan recorded a hypervisor (not "none", "unknown" or nothing). */
bool scan_under_hypervisor(const struct scan_record *s);

/* "7 (max-per-cpu)", "7 (method not recorded)" or "unavailable (<why>)". */
char *scan_smi_text(const struct scan_record *s, char *buf, size_t size);

void attribution_compute(const struct report_data *d, struct attribution *ret);

/* Whether the machine total is known for every chosen scan. */
bool attribution_smi_known(const struct attribution *a);

/*
 * "7 (machine total, max-per-cpu)", "unavailable (not an Intel CPU)", or for
 * scans of which only some know it "7 in 2 scans (sum); unavailable in 1
 * (<why>)". Returns buf.
 */
char *attribution_smi_text(const struct attribution *a, char *buf, size_t size);

/*
 * "host preemption (likely); the scan ran under kvm" (or "...; 3 of them
 * in scans under kvm" when not all are), or NULL when no unexplained
 * window comes from a scan under a hypervisor.
 */
const char *attribution_cause_text(const struct attribution *a, uint64_t unexplained,
				   char *buf, size_t size);
