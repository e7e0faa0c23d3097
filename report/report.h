/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Types shared by the parts of hwlat-report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gate.h"
#include "macro.h"
#include "parse.h"
#include "stats.h"

#define ID128_LEN 32
#define HOSTNAME_MAX 64
#define REPORT_PERCENTILES_MAX 16

enum group_by {
	GROUP_NONE, GROUP_CPU, GROUP_SCAN, GROUP_BOOT, GROUP_HOST,
	GROUP_FIRMWARE, /* BIOS vendor, version and date */
	GROUP_PRODUCT,  /* system vendor and product */
};
enum output_mode { OUTPUT_TEXT, OUTPUT_JSON, OUTPUT_CSV, OUTPUT_OPENMETRICS };

struct report_options {
	char **files;
	size_t n_files;
	const char *directory;
	bool have_scan;
	char scan_id[ID128_LEN + 1];
	bool all;
	bool have_boot;
	char boot_id[ID128_LEN + 1]; /* empty: the newest boot with hwlat entries */
	bool have_since, have_until;
	uint64_t since_ns, until_ns;
	const char *since_arg, *until_arg;
	bool have_cpus;
	cpu_set_bits cpus;
	const char *cpus_arg;
	enum group_by by;
	bool histogram;
	uint64_t bucket_ns; /* 0: log2 buckets */
	size_t entries;     /* linear buckets before the overflow bucket */
	enum output_mode mode;
	const char *svg_path;
	bool have_hardlimit;
	uint64_t hardlimit_ns;
	bool color;
	/* --percentiles (default 50, 90, 99, 99.9) */
	double percentiles[REPORT_PERCENTILES_MAX];
	size_t n_percentiles;
	struct gate_list gates;   /* --fail-if */
	bool list_scans;
	bool have_boot_offset;    /* --boot -1: resolved into boot_id */
	int64_t boot_offset;
	/* --compare A B: the selections as given (report/compare.h). */
	const char *compare[2];
	/* A side of --compare: only scans of this host (host name or machine
	 * ID), firmware (BIOS version, or "vendor version (date)") or product
	 * (product name, or "vendor product"); NULL: any. */
	const char *host, *firmware, *product;
};

/* One sample entry (MESSAGE_ID HWLAT_SAMPLE_MESSAGE_ID). */
struct sample_entry {
	char scan_id[ID128_LEN + 1];
	char boot_id[ID128_LEN + 1];
	char machine_id[ID128_LEN + 1];
	char hostname[HOSTNAME_MAX + 1];
	uint64_t seq, cpu, inner_ns, outer_ns, latency_ns, count;
	uint64_t nmi_count, nmi_ns, smi_count, smi_ns, timestamp_ns, threshold_ns;
	/* HWLAT_SMI_COUNT/HWLAT_SMI_NS were numbers (not "unavailable" or missing). */
	bool smi_count_known, smi_ns_known;
	/* HWLAT_NMI_NS was a number (the kernel tracer may not know it). */
	bool nmi_ns_known;
};

/* A window that took an SMI: only a known, non-zero count says so. */
static inline bool sample_has_smi(const struct sample_entry *x)
{
	return x->smi_count_known && x->smi_count > 0;
}

/* Neither an SMI nor an NMI explains the window. */
static inline bool sample_unexplained(const struct sample_entry *x)
{
	return !sample_has_smi(x) && x->nmi_count == 0;
}

/* One CPU's time sampled in a scan. */
struct cpu_ns {
	uint32_t cpu;
	uint64_t ns;
};

/* What is known about one scan: its summary entry, if any, and what its
 * samples showed. */
struct scan_record {
	char id[ID128_LEN + 1];
	char boot_id[ID128_LEN + 1];
	char machine_id[ID128_LEN + 1];
	char hostname[HOSTNAME_MAX + 1];
	bool has_summary;
	char status[16];
	char mode[32];
	char cpus[128];
	char kernel[128];
	char cpu_model[128];
	char clock[32];
	uint64_t threshold_ns, width_ns, window_ns, hardlimit_ns;
	uint64_t start_ns, duration_ns, samples, max_ns, dropped;
	uint64_t smi_total, nmi_total, floor_ns;
	bool smi_total_known;   /* HWLAT_SMI_TOTAL was a number */
	bool floor_known;       /* HWLAT_FLOOR_NS was a number */
	char backend[16];       /* HWLAT_BACKEND; empty: not recorded */
	char smi_method[16];    /* HWLAT_SMI_METHOD; empty: not recorded */
	char smi_unavailable[256];
	char hypervisor[32];    /* HWLAT_HYPERVISOR; empty: not recorded */
	char smi_scope[16];     /* HWLAT_SMI_SCOPE; empty: not recorded */
	char clocksource[32];
	char tsc_stable[8];
	bool has_cpus_excluded;
	char cpus_excluded[128];
	/* Machine identity: empty when the summary did not record
	 * it (written before the fields existed), else the value or
	 * "unavailable". */
	char sys_vendor[256], product_name[256];
	char board_vendor[256], board_name[256];
	char bios_vendor[256], bios_version[256], bios_date[256];
	char microcode[128];
	char cpu_count_text[24];  /* as recorded; parsed below */
	bool cpu_count_known;
	uint64_t cpu_count;
	/* Time sampled: HWLAT_SAMPLED_NS as recorded (empty:
	 * not recorded), known when it was a number; HWLAT_SAMPLED_CPU_NS
	 * (checked: its figures add up to the total) points into the entry
	 * while the summary handler runs, into sampled_cpu after. */
	char sampled_text[24];
	bool sampled_known, has_sampled_cpu;
	uint64_t sampled_ns;
	const char *sampled_cpu_text;
	struct cpu_ns *sampled_cpu; /* owned by struct report_data */
	size_t n_sampled_cpu;
	/* Windows skipped: HWLAT_SKIPPED_WINDOWS as recorded (empty: not
	 * recorded), known when a number; HWLAT_SKIPPED_CPU_WINDOWS is
	 * checked, and kept as recorded in skipped_cpu (empty: none). */
	char skipped_text[24];
	bool skipped_known, has_skipped_cpu;
	uint64_t skipped_windows;
	const char *skipped_cpu_text;
	char skipped_cpu[512];
	/* The times of the matched samples (for the period), and their SMI
	 * and NMI windows. */
	uint64_t *times;
	size_t n_times, cap_times;
	uint64_t smi_windows, nmi_windows;
	bool smi_windows_unknown;
	/* For the rates: matched windows above the threshold, and the SMIs
	 * (of the known counts) and NMIs they took. */
	uint64_t over_threshold, smis, nmis;
	/* From the sample entries read (before --cpu/--since/--until). */
	uint64_t seen, max_seq, sample_threshold_ns, seen_max_ns;
	uint64_t first_ns, last_ns;
	/* Samples that passed every filter, and those neither SMI nor NMI explain. */
	uint64_t matched, unexplained;
	bool chosen;
};

/* lib/stats.c counts windows of either tool; this adds a report sample. */
static inline int stats_add(struct stats *s, const struct sample_entry *x,
			    uint64_t hardlimit_ns)
{
	const struct stats_window w = {
		.latency_ns = x->latency_ns,
		.count = x->count,
		.nmi_count = x->nmi_count,
		.smi_count_known = x->smi_count_known,
		.smi_count = x->smi_count,
		.smi_ns_known = x->smi_ns_known,
		.smi_ns = x->smi_ns,
	};

	return stats_add_window(s, &w, hardlimit_ns);
}
