/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The journal vocabulary shared by hwlat-scan (writer) and hwlat-report
 * (reader). docs/interfaces.md describes every field.
 */
#pragma once

/* One entry per window the module reported. */
#define HWLAT_SAMPLE_MESSAGE_ID "18debb1199484fcc965913f03f96d36e"
/* One entry per scan, written last. */
#define HWLAT_SUMMARY_MESSAGE_ID "4ffb84af0b5d43dab64f8c6cd40251d6"
/*
 * One entry per skip record of the module's stream: windows a CPU could not
 * be sampled in (HWLAT_CPU, HWLAT_SKIPPED_WINDOWS of them from
 * HWLAT_TIMESTAMP_NS on).
 */
#define HWLAT_SKIP_MESSAGE_ID "ab639cbb95654a4d8de1256da3c0ca68"

#define HWLAT_F_SCAN_ID "HWLAT_SCAN_ID"
#define HWLAT_F_SEQ "HWLAT_SEQ"
#define HWLAT_F_CPU "HWLAT_CPU"
#define HWLAT_F_INNER_NS "HWLAT_INNER_NS"
#define HWLAT_F_OUTER_NS "HWLAT_OUTER_NS"
#define HWLAT_F_LATENCY_NS "HWLAT_LATENCY_NS"
#define HWLAT_F_COUNT "HWLAT_COUNT"
#define HWLAT_F_NMI_COUNT "HWLAT_NMI_COUNT"
#define HWLAT_F_NMI_NS "HWLAT_NMI_NS"
#define HWLAT_F_SMI_COUNT "HWLAT_SMI_COUNT"
#define HWLAT_F_SMI_NS "HWLAT_SMI_NS"
#define HWLAT_F_TIMESTAMP_NS "HWLAT_TIMESTAMP_NS"
#define HWLAT_F_THRESHOLD_NS "HWLAT_THRESHOLD_NS"

#define HWLAT_F_STATUS "HWLAT_STATUS"
#define HWLAT_F_WIDTH_NS "HWLAT_WIDTH_NS"
#define HWLAT_F_WINDOW_NS "HWLAT_WINDOW_NS"
#define HWLAT_F_HARDLIMIT_NS "HWLAT_HARDLIMIT_NS"
#define HWLAT_F_MODE "HWLAT_MODE"
#define HWLAT_F_CPUS "HWLAT_CPUS"
#define HWLAT_F_KERNEL "HWLAT_KERNEL"
#define HWLAT_F_CPU_MODEL "HWLAT_CPU_MODEL"
#define HWLAT_F_CLOCK "HWLAT_CLOCK"
#define HWLAT_F_START_NS "HWLAT_START_NS"
#define HWLAT_F_DURATION_NS "HWLAT_DURATION_NS"
#define HWLAT_F_SAMPLES "HWLAT_SAMPLES"
#define HWLAT_F_MAX_NS "HWLAT_MAX_NS"
#define HWLAT_F_DROPPED "HWLAT_DROPPED"
#define HWLAT_F_SMI_TOTAL "HWLAT_SMI_TOTAL"
#define HWLAT_F_NMI_TOTAL "HWLAT_NMI_TOTAL"
#define HWLAT_F_FLOOR_NS "HWLAT_FLOOR_NS"
#define HWLAT_F_SMI_METHOD "HWLAT_SMI_METHOD"
#define HWLAT_F_SMI_UNAVAILABLE "HWLAT_SMI_UNAVAILABLE"
#define HWLAT_F_HYPERVISOR "HWLAT_HYPERVISOR"
#define HWLAT_F_CLOCKSOURCE "HWLAT_CLOCKSOURCE"
#define HWLAT_F_TSC_STABLE "HWLAT_TSC_STABLE"
#define HWLAT_F_CPUS_EXCLUDED "HWLAT_CPUS_EXCLUDED"

/* The value of a count or time that cannot be known: never 0. */
#define HWLAT_UNAVAILABLE "unavailable"

/* HWLAT_SMI_METHOD: how HWLAT_SMI_TOTAL counts each SMI once. */
#define HWLAT_SMI_METHOD_SUM "sum"                 /* one sampler at a time */
#define HWLAT_SMI_METHOD_MAX_PER_CPU "max-per-cpu" /* per-cpu mode */

/* HWLAT_HYPERVISOR on bare metal. */
#define HWLAT_HYPERVISOR_NONE "none"

/*
 * Whose SMIs the SMI counts are: the machine's own ("host", bare metal),
 * or, under a hypervisor, what the hypervisor counts for the guest
 * ("guest": KVM emulates MSR_SMI_COUNT with the SMIs it injects, never the
 * host's); "unknown" when the hypervisor is.
 */
#define HWLAT_F_SMI_SCOPE "HWLAT_SMI_SCOPE"
#define HWLAT_SMI_SCOPE_HOST "host"
#define HWLAT_SMI_SCOPE_GUEST "guest"
#define HWLAT_SMI_SCOPE_UNKNOWN "unknown"
#define HWLAT_F_SKIPPED_LINES "HWLAT_SKIPPED_LINES"

/*
 * Under kernel lockdown debugfs refuses the setting files: where the scan's
 * settings came from, and the
 * requested settings that were not in force (only when some were not).
 */
#define HWLAT_F_SETTINGS_SOURCE "HWLAT_SETTINGS_SOURCE"
#define HWLAT_F_SETTINGS_NOT_APPLIED "HWLAT_SETTINGS_NOT_APPLIED"
#define HWLAT_SETTINGS_SOURCE_DEBUGFS "debugfs"
#define HWLAT_SETTINGS_SOURCE_PARAMETERS "module-parameters"

/*
 * Who sampled, in every sample and summary: our module, or the
 * kernel's hwlat tracer (tracefs; its settings are then tracefs's).
 */
#define HWLAT_F_BACKEND "HWLAT_BACKEND"
#define HWLAT_BACKEND_MODULE "module"
#define HWLAT_BACKEND_TRACER "tracer"
#define HWLAT_SETTINGS_SOURCE_TRACEFS "tracefs"

#define HWLAT_STATUS_COMPLETED "completed"
#define HWLAT_STATUS_INTERRUPTED "interrupted"
#define HWLAT_STATUS_FAILED "failed"

/*
 * Machine identity in every summary, to tell fleets apart: what the machine says
 * about itself (DMI strings: untrusted bytes), its CPU microcode revision
 * and online CPU count. "unavailable" where a file is missing or empty.
 */
#define HWLAT_F_SYS_VENDOR "HWLAT_SYS_VENDOR"
#define HWLAT_F_PRODUCT_NAME "HWLAT_PRODUCT_NAME"
#define HWLAT_F_BOARD_VENDOR "HWLAT_BOARD_VENDOR"
#define HWLAT_F_BOARD_NAME "HWLAT_BOARD_NAME"
#define HWLAT_F_BIOS_VENDOR "HWLAT_BIOS_VENDOR"
#define HWLAT_F_BIOS_VERSION "HWLAT_BIOS_VERSION"
#define HWLAT_F_BIOS_DATE "HWLAT_BIOS_DATE"
#define HWLAT_F_MICROCODE "HWLAT_MICROCODE"
#define HWLAT_F_CPU_COUNT "HWLAT_CPU_COUNT"

/*
 * In every summary of the module backend, so that rates are per time
 * sampled rather than per wall-clock time: the time the
 * CPUs actually sampled (the sum of the widths), in total and per CPU
 * ("0:450123456 1:449876543", ascending CPUs); "unavailable" with the
 * tracer or an older module.
 */
#define HWLAT_F_SAMPLED_NS "HWLAT_SAMPLED_NS"
#define HWLAT_F_SAMPLED_CPU_NS "HWLAT_SAMPLED_CPU_NS"

/*
 * In every summary of the module backend: the windows the module could not
 * get onto a CPU in (a task of the samplers' priority or above held it), in
 * total and per CPU ("1:37 2:4", ascending CPUs, only CPUs that skipped);
 * "unavailable" with the tracer or an older module.
 */
#define HWLAT_F_SKIPPED_WINDOWS "HWLAT_SKIPPED_WINDOWS"
#define HWLAT_F_SKIPPED_CPU_WINDOWS "HWLAT_SKIPPED_CPU_WINDOWS"

/*
 * hwlat-scan --monitor: one summary per interval (docs/interfaces.md section
 * 2, "Monitor interval"), with the same HWLAT_SCAN_ID as the monitor's
 * sample and skip entries; samples past the interval's budget are folded
 * into it (a count and a histogram) instead of being journaled.
 */
#define HWLAT_INTERVAL_MESSAGE_ID "6d3e4f6fa03a4b40b324b6fdfbf15053"
/*
 * "1" on the monitor's sample and skip entries (never on a scan's): the
 * report's default choice, the newest scan, passes them by.
 */
#define HWLAT_F_MONITOR "HWLAT_MONITOR"
#define HWLAT_F_INTERVAL "HWLAT_INTERVAL"
#define HWLAT_F_INTERVAL_END "HWLAT_INTERVAL_END"
#define HWLAT_F_GAP_WINDOWS "HWLAT_GAP_WINDOWS"
#define HWLAT_F_GAPS "HWLAT_GAPS"
#define HWLAT_F_GAP_HISTOGRAM "HWLAT_GAP_HISTOGRAM"
#define HWLAT_F_UNEXPLAINED_WINDOWS "HWLAT_UNEXPLAINED_WINDOWS"
#define HWLAT_F_SMI_CPU "HWLAT_SMI_CPU"
#define HWLAT_F_SAMPLE_BUDGET "HWLAT_SAMPLE_BUDGET"
#define HWLAT_F_JOURNALED "HWLAT_JOURNALED"
#define HWLAT_F_FOLDED "HWLAT_FOLDED"
#define HWLAT_F_FOLDED_HISTOGRAM "HWLAT_FOLDED_HISTOGRAM"
#define HWLAT_F_FOLDED_SKIP_RECORDS "HWLAT_FOLDED_SKIP_RECORDS"
#define HWLAT_F_PAUSED_NS "HWLAT_PAUSED_NS"
#define HWLAT_F_PAUSED_SCAN_NS "HWLAT_PAUSED_SCAN_NS"
#define HWLAT_F_PAUSED_DETECTOR_NS "HWLAT_PAUSED_DETECTOR_NS"
#define HWLAT_F_PAUSES "HWLAT_PAUSES"
/* HWLAT_SMI_METHOD of an interval: the MSR read on one housekeeping CPU. */
#define HWLAT_SMI_METHOD_MSR "msr"
/* HWLAT_INTERVAL_END: why the interval ended. */
#define HWLAT_INTERVAL_END_TIME "interval"
#define HWLAT_INTERVAL_END_RELOAD "reload"
#define HWLAT_INTERVAL_END_STOP "stop"
