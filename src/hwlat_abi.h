/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat_detector's contract with its users, in one place: the sampling
 * modes and their names, the defaults and the safety bounds of the
 * settings (docs/interfaces.md section 1, docs/design.md "Safety bounds").
 * The module (src/hwlat.h) and the tools (hwlat-scan, hwlat-report)
 * include this same file, so a bound or a name changes everywhere at once.
 *
 * Macros and one enum only, no kernel or libc type: it compiles in both
 * worlds. Each number is written once, bare (FOO_NUM), so that messages can
 * spell it with __stringify()/STRINGIFY(); FOO is the same number as an
 * unsigned 64-bit constant, for arithmetic.
 */
#ifndef _HWLAT_ABI_H
#define _HWLAT_ABI_H

#define HWLAT_U64_(n)	n##ULL
#define HWLAT_U64(n)	HWLAT_U64_(n)

/* How the samplers are placed on the CPUs. */
enum hwlat_mode {
	HWLAT_MODE_NONE,
	HWLAT_MODE_ROUND_ROBIN,
	HWLAT_MODE_PER_CPU,
	HWLAT_MODE_STOP_MACHINE,
	HWLAT_MODE_NR,
};

/* The names the debugfs file "mode" and the parameter mode= take. */
#define HWLAT_MODE_NONE_NAME		"none"
#define HWLAT_MODE_ROUND_ROBIN_NAME	"round-robin"
#define HWLAT_MODE_PER_CPU_NAME		"per-cpu"
#define HWLAT_MODE_STOP_MACHINE_NAME	"stop-machine"

/* An initializer of a name table indexed by enum hwlat_mode. */
#define HWLAT_MODE_NAMES {						\
	[HWLAT_MODE_NONE] = HWLAT_MODE_NONE_NAME,			\
	[HWLAT_MODE_ROUND_ROBIN] = HWLAT_MODE_ROUND_ROBIN_NAME,		\
	[HWLAT_MODE_PER_CPU] = HWLAT_MODE_PER_CPU_NAME,			\
	[HWLAT_MODE_STOP_MACHINE] = HWLAT_MODE_STOP_MACHINE_NAME,	\
}

/* The names for a message: "none, round-robin, per-cpu or stop-machine". */
#define HWLAT_MODE_LIST							\
	HWLAT_MODE_NONE_NAME ", " HWLAT_MODE_ROUND_ROBIN_NAME ", "	\
	HWLAT_MODE_PER_CPU_NAME " or " HWLAT_MODE_STOP_MACHINE_NAME

/* Defaults, in microseconds (the 2009 module's values). */
#define HWLAT_DEFAULT_THRESHOLD_US_NUM	10
#define HWLAT_DEFAULT_THRESHOLD_US	HWLAT_U64(HWLAT_DEFAULT_THRESHOLD_US_NUM)
#define HWLAT_DEFAULT_WIDTH_US_NUM	500000
#define HWLAT_DEFAULT_WIDTH_US		HWLAT_U64(HWLAT_DEFAULT_WIDTH_US_NUM)
#define HWLAT_DEFAULT_WINDOW_US_NUM	1000000
#define HWLAT_DEFAULT_WINDOW_US		HWLAT_U64(HWLAT_DEFAULT_WINDOW_US_NUM)

/* Safety bounds, in microseconds and percent; docs/design.md explains them. */
#define HWLAT_MIN_THRESHOLD_US_NUM	1
#define HWLAT_MIN_THRESHOLD_US		HWLAT_U64(HWLAT_MIN_THRESHOLD_US_NUM)
#define HWLAT_MAX_THRESHOLD_US_NUM	1000000
#define HWLAT_MAX_THRESHOLD_US		HWLAT_U64(HWLAT_MAX_THRESHOLD_US_NUM)
#define HWLAT_MIN_WIDTH_US_NUM		1
#define HWLAT_MIN_WIDTH_US		HWLAT_U64(HWLAT_MIN_WIDTH_US_NUM)
/* Interrupts off for 1 s (HWLAT_MAX_WIDTH_S_NUM) at the most. */
#define HWLAT_MAX_WIDTH_US_NUM		1000000
#define HWLAT_MAX_WIDTH_US		HWLAT_U64(HWLAT_MAX_WIDTH_US_NUM)
#define HWLAT_MAX_WIDTH_S_NUM		1
/* 10 minutes (HWLAT_MAX_WINDOW_MIN_NUM). */
#define HWLAT_MAX_WINDOW_US_NUM		600000000
#define HWLAT_MAX_WINDOW_US		HWLAT_U64(HWLAT_MAX_WINDOW_US_NUM)
#define HWLAT_MAX_WINDOW_MIN_NUM	10
/* The shortest sleep between two widths: window - width. */
#define HWLAT_MIN_SLEEP_US_NUM		1000
#define HWLAT_MIN_SLEEP_US		HWLAT_U64(HWLAT_MIN_SLEEP_US_NUM)
#define HWLAT_MAX_DUTY_PERCENT_NUM	95
#define HWLAT_MAX_DUTY_PERCENT		HWLAT_U64(HWLAT_MAX_DUTY_PERCENT_NUM)
/* per-cpu mode keeps every CPU busy at once: half of each CPU's time. */
#define HWLAT_PER_CPU_MAX_DUTY_PERCENT_NUM	50
#define HWLAT_PER_CPU_MAX_DUTY_PERCENT	HWLAT_U64(HWLAT_PER_CPU_MAX_DUTY_PERCENT_NUM)
/* stop-machine freezes the whole machine: short (10 ms) and rare. */
#define HWLAT_STOP_MACHINE_MAX_WIDTH_US_NUM	10000
#define HWLAT_STOP_MACHINE_MAX_WIDTH_US	HWLAT_U64(HWLAT_STOP_MACHINE_MAX_WIDTH_US_NUM)
#define HWLAT_STOP_MACHINE_MAX_WIDTH_MS_NUM	10
#define HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT_NUM	10
#define HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT	\
	HWLAT_U64(HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT_NUM)

#endif /* _HWLAT_ABI_H */
