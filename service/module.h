/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loading and unloading the hwlat_detector module with modprobe, and the
 * marker that tells the unit's ExecStopPost whether its ExecStartPre loaded
 * it. The environment variables HWLAT_MODPROBE, HWLAT_SYS_MODULE and
 * HWLAT_RUN_DIR replace /sbin/modprobe, /sys/module and /run/hwlat (tests).
 */
#pragma once

#include <stdbool.h>

#define MODULE_NAME "hwlat_detector"
#define MODULE_MARKER "loaded-by-scan"

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
