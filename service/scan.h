/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One scan: what the command line asks of it, how it ends, and run_scan(),
 * which drives a backend (backend.h) through it.
 *
 * run_scan() and the backends return a verdict (>= 0) or a negative errno;
 * only main() turns them into exit statuses. The errnos that name why a
 * scan did not run are chosen where that is decided:
 *   -EINVAL  a setting is refused before anything is touched (status 2)
 *   -EBUSY   another scan or another user holds the detector (status 3)
 *   -ENODEV  no detector: no debugfs, no module, no hwlat tracer (status 4)
 * and any other negative errno is a scan that failed (status 5); where a
 * call's own errno could be one of those three, the failure is -EIO once
 * its cause is logged.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scan-config.h"

/* What the command line sets besides the configuration. */
typedef struct scan_options {
	const char *config_path;
	bool config_explicit;
	const char *detector_dir; /* tests: a fake detector directory */
	const char *tracefs_dir;  /* tests: a fake tracefs */
	const char *journal_export;
	const char *platform_root;
	bool quiet;
	bool unit; /* run by hwlat-scan.service (--unit) */
	bool monitor; /* hwlat-scan --monitor (monitor.h) */
	const char *msr_dir; /* tests: a fake /dev/cpu (smi-msr.h) */
	struct {
		const char *key;
		const char *value;
	} overrides[64];
	size_t n_overrides;
} scan_options;

/* How a scan that ran is judged. */
typedef enum scan_verdict {
	SCAN_PASSED,
	SCAN_HARDLIMIT,	  /* the max latency is above hardlimit */
	SCAN_FAIL_IF,	  /* a fail_if condition holds */
	SCAN_NOT_APPLIED, /* scanned, but with the module's settings, not the requested ones */
} scan_verdict;

/* Time allowed for the stream to reach EOF after enable=0, beyond a window. */
#define DRAIN_GRACE_NS (2 * NSEC_PER_SEC)
/* Beyond the drain, for restoring the settings and writing the summary. */
#define FINISH_MARGIN_NS (30 * NSEC_PER_SEC)

/*
 * The configuration: the file and its drop-ins, then the command line's
 * options, checked (width against window, the CPUs online). All or
 * nothing; -EINVAL or -ERANGE (said) when anything is wrong.
 */
int scan_load_config(const scan_options *o, scan_config *c);

/* Runs one scan with the signals of sig_fd ending it; a verdict or -errno. */
int run_scan(const scan_options *o, const scan_config *cfg, int sig_fd);

/*
 * Under --unit: the unit's TimeoutStartSec= covers the default duration
 * only; tells systemd how long this scan will take from now (it extends
 * the start timeout to at least that, NotifyAccess=main).
 */
void scan_extend_timeout(const scan_options *o, uint64_t duration_ns, uint64_t window_us);
