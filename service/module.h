/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loading and unloading the hwlat_detector module with modprobe, and the
 * marker that tells the unit's ExecStopPost whether its ExecStartPre loaded
 * it. The environment variables HWLAT_MODPROBE, HWLAT_SYS_MODULE and
 * HWLAT_RUN_DIR replace /sbin/modprobe, /sys/module and /run/hwlat (tests).
 */
#pragma once

#include <stdbool.h>

#include "detector.h"

#define MODULE_NAME "hwlat_detector"
#define MODULE_MARKER "loaded-by-scan"
/* Where the marker and the scan's lock (scan-lock.h) live. */
#define MODULE_RUN_DIR "/run/hwlat"
/* The kernel's /dev/cpu/N/msr driver: the monitor's SMI counts. */
#define MSR_MODULE_NAME "msr"

/* MODULE_RUN_DIR, or $HWLAT_RUN_DIR (tests). */
const char *module_run_dir(void);

/* Loads the msr module (a no-op where it is built in); 0 or a negative errno. */
int module_load_msr(void);

bool module_is_loaded(void);

/*
 * Loads the module unless it is loaded; *ret_loaded tells whether this call
 * loaded it. When the module is not installed for the running kernel, says
 * how to install it and returns -ENOENT.
 */
int module_load(bool *ret_loaded);
int module_unload(void);

/* Writes or removes <run dir>/loaded-by-scan. */
int module_marker_write(void);
/* Removes the marker; returns 1 if it existed, 0 if not. */
int module_marker_take(void);

/*
 * The module's parameters in <sys module dir>/hwlat_detector/parameters
 * (0444, docs/interfaces.md section 1): the settings in force, readable
 * where debugfs refuses the setting files (kernel lockdown).
 */
typedef struct module_params {
	bool enabled;
	bool allow_high_duty;
	detector_settings settings; /* has_mode and has_cpus always set */
} module_params;

/*
 * Reads them; -ENOENT when the module shows no parameters (not loaded, or
 * built before they were readable), another negative errno (logged,
 * naming the file) when one cannot be read or parsed.
 */
int module_read_params(module_params *ret);

/*
 * Whether the module was loaded with allow_high_duty=1. *ret_known is
 * false when it has no such parameter (not loaded, or a module without
 * per-mode bounds).
 */
bool module_allow_high_duty(bool *ret_known);
