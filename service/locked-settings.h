/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A detector whose setting files debugfs refuses (kernel lockdown refuses
 * every debugfs file with a write bit, docs/interfaces.md section 1): the
 * scan runs with the settings the module was loaded with, read back from
 * its parameters, and says what was refused, which requested settings are
 * not in force, and the modprobe.d line that would put them in force.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "detector.h"
#include "module.h"
#include "scan-config.h"

#define LOCKED_MODPROBE_CONF "/etc/modprobe.d/hwlat.conf"

typedef struct locked_settings {
	module_params params;
	char refused[16]; /* the setting file debugfs refused */
	int refused_errno;
	/* "" when every requested setting is in force; else which are not. */
	char not_applied[1024];
} locked_settings;

/*
 * Reads the module's parameters after debugfs refused to open the setting
 * file refused with err (a negative errno), and logs what was refused and
 * that the scan uses the settings in force. Returns 0, or a negative errno
 * (logged) when the parameters cannot be read.
 */
int locked_settings_read(const detector *d, const char *refused, int err,
			 locked_settings *ret);

/*
 * Compares the settings the configuration asks for (want: the settings in
 * force with the configured ones put in) with those in force. Logs each
 * difference, fills l->not_applied, and gives the modprobe.d line with the
 * requested values. Returns 0 when the module samples (enabled=1), or
 * -ENOTCONN when it was loaded with enabled=0 and so cannot be started
 * (logged with the same advice).
 */
int locked_settings_compare(locked_settings *l, const scan_config *cfg,
			    const detector_settings *want);

/*
 * "options hwlat_detector enabled=1 ..." with the configured settings of
 * want (threshold, width and window together when either is set, mode,
 * cpus). Returns buf.
 */
char *locked_modprobe_line(const scan_config *cfg, const detector_settings *want,
			   char *buf, size_t size);
