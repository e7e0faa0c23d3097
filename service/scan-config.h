/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scan configuration: values from the config file, overridden by the
 * command line, each validated when it is set, and the checks that tie
 * width and window together (the module's safety bounds).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gate.h"
#include "parse.h"

#ifdef HWLAT_CONFIG_PATH
#define CONFIG_DEFAULT_PATH HWLAT_CONFIG_PATH
#else
#define CONFIG_DEFAULT_PATH "/etc/hwlat/hwlat-scan.conf"
#endif
/* Drop-ins: "<config file>.d/NAME.conf", read in lexical order after it. */
#define CONFIG_DROPIN_SUFFIX ".d"
#define CONFIG_DEFAULT_DURATION_NS (120 * NSEC_PER_SEC)

/*
 * The monitor's defaults: 9 ms of every 1 s window, one CPU at a time,
 * keeps it within 1 % of one CPU with interrupts off: a width ends at its
 * first look past its length, so a gap across its end lengthens it
 * (docs/design.md, "The monitor").
 */
#define CONFIG_MONITOR_DEFAULT_INTERVAL_NS (600 * NSEC_PER_SEC)
#define CONFIG_MONITOR_DEFAULT_THRESHOLD_NS (10 * NSEC_PER_USEC)
#define CONFIG_MONITOR_DEFAULT_WIDTH_NS (9 * NSEC_PER_MSEC)
#define CONFIG_MONITOR_DEFAULT_WINDOW_NS (1 * NSEC_PER_SEC)
#define CONFIG_MONITOR_DEFAULT_MODE "round-robin"
#define CONFIG_MONITOR_DEFAULT_SAMPLE_BUDGET 100
#define CONFIG_MONITOR_DEFAULT_OPENMETRICS_FILE \
	"/var/lib/prometheus/node-exporter/hwlat-monitor.prom"
/* An interval from 1 s (tests) to a day; budgets up to a million entries. */
#define CONFIG_MONITOR_MIN_INTERVAL_NS NSEC_PER_SEC
#define CONFIG_MONITOR_MAX_INTERVAL_NS (86400 * NSEC_PER_SEC)
#define CONFIG_MONITOR_MAX_SAMPLE_BUDGET 1000000

/* The scan's own bound (366 days); the module's are in src/hwlat_abi.h. */
#define CONFIG_MAX_DURATION_NS (366 * 86400 * NSEC_PER_SEC)

/*
 * Who samples: our module, the kernel's hwlat tracer (where the module
 * cannot be loaded: Secure Boot without an enrolled key, a kernel DKMS
 * cannot build for), or either.
 */
typedef enum backend_kind {
	BACKEND_MODULE,
	BACKEND_TRACER,
	BACKEND_AUTO,
} backend_kind;

/* "module", "tracer", "auto". */
const char *backend_name(backend_kind b);

typedef enum config_key {
	CONFIG_DURATION,
	CONFIG_THRESHOLD,
	CONFIG_WIDTH,
	CONFIG_WINDOW,
	CONFIG_MODE,
	CONFIG_CPUS,
	CONFIG_HARDLIMIT,
	CONFIG_FAIL_IF,
	CONFIG_OPENMETRICS_FILE,
	CONFIG_BACKEND,
	/* hwlat-scan --monitor (monitor.h), after the scan's keys. */
	CONFIG_MONITOR_INTERVAL,
	CONFIG_MONITOR_THRESHOLD,
	CONFIG_MONITOR_WIDTH,
	CONFIG_MONITOR_WINDOW,
	CONFIG_MONITOR_MODE,
	CONFIG_MONITOR_CPUS,
	CONFIG_MONITOR_SAMPLE_BUDGET,
	CONFIG_MONITOR_OPENMETRICS_FILE,
	_CONFIG_KEY_MAX,
} config_key;

typedef struct scan_config {
	uint64_t duration_ns;
	uint64_t threshold_ns;
	uint64_t width_ns;
	uint64_t window_ns;
	uint64_t hardlimit_ns; /* 0: none */
	char mode[16];
	char cpus[4096]; /* canonical cpulist */
	struct gate_list gates; /* fail_if: conditions that fail the scan */
	char openmetrics_file[4096]; /* absolute path; "" when not set */
	backend_kind backend; /* BACKEND_MODULE unless set */
	/* The monitor's own keys (defaults: CONFIG_MONITOR_DEFAULT_*). */
	struct monitor_keys {
		uint64_t interval_ns;
		uint64_t threshold_ns;
		uint64_t width_ns;
		uint64_t window_ns;
		char mode[16];
		char cpus[4096]; /* "" while not set: the detector's CPUs are kept */
		uint64_t sample_budget;
		char openmetrics_file[4096];
	} monitor;
	bool set[_CONFIG_KEY_MAX];
	/* Where each set key came from: "command line" or "FILE:LINE". */
	char origin[_CONFIG_KEY_MAX][4096 + 16];
} scan_config;

void config_init(scan_config *c);

const char *config_key_name(config_key k);
/* Returns the key, or -EINVAL for a name that is not a key. */
int config_key_from_name(const char *name);

/*
 * Validates value for key and stores it. On error prints one message naming
 * origin ("command line", "FILE:LINE"), the key and the value, and returns
 * -EINVAL or -ERANGE with c unchanged.
 */
int config_set(scan_config *c, const char *key, const char *value,
	       const char *origin);

/*
 * Reads "key = value" lines ('#' starts a comment line) into c. A missing
 * file is fine unless must_exist. Either all keys of the file are applied or,
 * on the first error (printed), none and a negative errno is returned.
 */
int config_load_file(scan_config *c, const char *path, bool must_exist);

/*
 * Loads path (as config_load_file) and then every "*.conf" file in
 * "<path>.d/" in lexical (byte) order; a key in a later file overrides an
 * earlier one. A missing drop-in directory is fine. All or nothing: on the
 * first error (printed, naming the file and line) c is unchanged.
 */
int config_load(scan_config *c, const char *path, bool must_exist);

/*
 * Prints the configuration as a valid config file: each key with the file
 * and line (or "command line", "default") it came from, keys that are not
 * set as comments.
 */
void config_print(const scan_config *c, FILE *f);

/*
 * A time span in the largest unit that holds it exactly ("2m", "1500ns",
 * "500ms"), as parse_time_span() reads it back. Returns buf.
 */
char *format_span_exact(uint64_t ns, char *buf, size_t size);

/*
 * Checks width against window with the module's bounds. cur_width_ns and
 * cur_window_ns stand in for the values the configuration does not set
 * (the detector's current settings). Prints what is wrong.
 */
int config_check_bounds(const scan_config *c, uint64_t cur_width_ns,
			uint64_t cur_window_ns);

/*
 * Checks width against window with the bounds of the mode the scan will
 * run in (docs/interfaces.md section 1): per-cpu at most 50 %, stop-machine
 * at most 10 ms and 10 %, none unless allow_high_duty. cur_mode (NULL: a
 * detector without modes) and the cur_ values stand in for what the
 * configuration does not set. Prints which bound is broken and how to
 * fix it; returns -ERANGE then.
 */
int config_check_mode_bounds(const scan_config *c, const char *cur_mode,
			     uint64_t cur_width_ns, uint64_t cur_window_ns,
			     bool allow_high_duty);

/* Checks that every CPU in the configured cpulist is online. */
int config_check_cpus_online(const scan_config *c, const char *online_path);
