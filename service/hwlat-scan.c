/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan: runs one bounded hardware latency scan with the hwlat_detector
 * module (or the kernel's hwlat tracer) and writes every reported window to
 * the journal as it arrives, then one summary entry (docs/interfaces.md,
 * hwlat-scan(8)). This file is the command line: options, configuration,
 * the actions, and the one place that turns results into exit statuses;
 * scan-run.c runs the scan.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detector.h"
#include "log.h"
#include "macro.h"
#include "module.h"
#include "monitor.h"
#include "reader.h"
#include "scan-config.h"
#include "scan.h"

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION must be defined (config.h or -D)"
#endif

enum {
	EXIT_HARDLIMIT = 1,   /* max latency above --hardlimit */
	EXIT_USAGE = 2,       /* bad option, config key or value */
	EXIT_BUSY = 3,        /* another scan holds the detector, the tracer is in use */
	EXIT_NO_DETECTOR = 4, /* debugfs or module missing, load failed; no hwlat tracer */
	EXIT_FAILED = 5,      /* the scan itself failed */
	EXIT_FAIL_IF = 6,     /* a --fail-if condition holds */
	EXIT_NOT_APPLIED = 7, /* scanned, but not with every requested setting */
};

typedef enum action {
	ACTION_SCAN,
	ACTION_CHECK_CONFIG,
	ACTION_LOAD_MODULE,
	ACTION_UNLOAD_MODULE,
	ACTION_HELP,
	ACTION_VERSION,
} action;

static void help(void)
{
	printf("Usage: hwlat-scan [OPTIONS]\n"
	       "\n"
	       "Runs one bounded hardware latency scan with the hwlat_detector module\n"
	       "and writes every sample, then a summary, to the journal.\n"
	       "\n"
	       "  --duration=SPAN     how long to scan (default 120s; bare number: seconds)\n"
	       "  --threshold=SPAN    report gaps longer than this (bare number: us)\n"
	       "  --width=SPAN        sampling time per window (bare number: us)\n"
	       "  --window=SPAN       window period (bare number: us)\n"
	       "  --mode=MODE         none, round-robin, per-cpu or stop-machine\n"
	       "  --cpus=LIST         CPUs the samplers may use, e.g. 0-3,6\n"
	       "  --hardlimit=SPAN    exit with status 1 when the max latency exceeds it\n"
	       "                      (nanosecond precision: 1500ns)\n"
	       "  --fail-if=COND      exit with status 6 when COND holds, e.g. 'p99>20us',\n"
	       "                      'smi>0' (repeatable; replaces fail_if of the config;\n"
	       "                      FACT: max, pN, smi, smi-rate, nmi, unexplained,\n"
	       "                      dropped, samples, rate(>SIZE|smi|nmi|unexplained)\n"
	       "                      on its 95 %% upper bound: 'rate(>20us) > 1/h')\n"
	       "  --backend=BACKEND   module (the hwlat_detector module, default), tracer\n"
	       "                      (the kernel's hwlat tracer in tracefs) or auto (the\n"
	       "                      module when it loads, else the tracer)\n"
	       "  --openmetrics-file=PATH  after the scan, write its figures for Prometheus\n"
	       "                      to PATH (atomically; e.g. in node-exporter's textfile\n"
	       "                      directory /var/lib/prometheus/node-exporter/)\n"
	       "      --monitor       run as the always-on monitor (hwlat-monitor.service):\n"
	       "                      the monitor_* keys, an interval summary and the\n"
	       "                      monitor_openmetrics_file every monitor_interval,\n"
	       "                      until stopped; SIGHUP reloads the configuration\n"
	       "  --monitor-interval=SPAN, --monitor-threshold=SPAN, --monitor-width=SPAN,\n"
	       "  --monitor-window=SPAN, --monitor-mode=MODE, --monitor-cpus=LIST,\n"
	       "  --monitor-sample-budget=N, --monitor-openmetrics-file=PATH\n"
	       "                      the monitor's keys (default 10m, 10us, 9ms, 1s,\n"
	       "                      round-robin, the detector's CPUs, 100 sample entries\n"
	       "                      per interval, /var/lib/prometheus/node-exporter/\n"
	       "                      hwlat-monitor.prom)\n"
	       "  -C, --config=FILE   configuration file (default %s),\n"
	       "                      then FILE.d/*.conf\n"
	       "      --check-config  check the configuration, print the settings, touch\n"
	       "                      nothing; exit 0 when valid, 2 when not\n"
	       "  -q, --quiet         print no summary or progress\n"
	       "      --load-module   load the module, remember it in /run/hwlat (for the unit;\n"
	       "                      with --monitor: also the msr module, nothing remembered)\n"
	       "      --unload-module unload the module if --load-module loaded it\n"
	       "      --unit          run as hwlat-scan.service: the module is loaded by\n"
	       "                      ExecStartPre, the scan id is $INVOCATION_ID\n"
	       "  -h, --help          show this help\n"
	       "  -V, --version       show the version\n"
	       "\n"
	       "Exit status: 0 done, 1 hard limit exceeded, 2 invalid configuration,\n"
	       "3 another scan is running or the kernel's tracer is in use, 4 detector\n"
	       "(module or tracer) unavailable, 5 scan failed,\n"
	       "6 a --fail-if condition holds, 7 scanned with the module's settings, not\n"
	       "the requested ones (debugfs refused writes: kernel lockdown).\n"
	       "See hwlat-scan(8).\n",
	       CONFIG_DEFAULT_PATH);
}

enum {
	ARG_DURATION = 0x100,
	ARG_THRESHOLD,
	ARG_WIDTH,
	ARG_WINDOW,
	ARG_MODE,
	ARG_CPUS,
	ARG_HARDLIMIT,
	ARG_FAIL_IF, /* right after ARG_HARDLIMIT: keys in config_key order */
	ARG_OPENMETRICS_FILE,
	ARG_BACKEND,
	ARG_MONITOR_INTERVAL,
	ARG_MONITOR_THRESHOLD,
	ARG_MONITOR_WIDTH,
	ARG_MONITOR_WINDOW,
	ARG_MONITOR_MODE,
	ARG_MONITOR_CPUS,
	ARG_MONITOR_SAMPLE_BUDGET,
	ARG_MONITOR_OPENMETRICS_FILE, /* the last config key */
	ARG_LOAD,
	ARG_UNLOAD,
	ARG_UNIT,
	ARG_DETECTOR_DIR,
	ARG_TRACEFS_DIR,
	ARG_JOURNAL_EXPORT,
	ARG_PLATFORM_ROOT,
	ARG_CHECK_CONFIG,
	ARG_MONITOR,
	ARG_MSR_DIR,
};

static int parse_argv(int argc, char *argv[], scan_options *o, action *ret_action)
{
	static const struct option longopts[] = {
		{ "duration", required_argument, NULL, ARG_DURATION },
		{ "threshold", required_argument, NULL, ARG_THRESHOLD },
		{ "width", required_argument, NULL, ARG_WIDTH },
		{ "window", required_argument, NULL, ARG_WINDOW },
		{ "mode", required_argument, NULL, ARG_MODE },
		{ "cpus", required_argument, NULL, ARG_CPUS },
		{ "hardlimit", required_argument, NULL, ARG_HARDLIMIT },
		{ "fail-if", required_argument, NULL, ARG_FAIL_IF },
		{ "openmetrics-file", required_argument, NULL, ARG_OPENMETRICS_FILE },
		{ "backend", required_argument, NULL, ARG_BACKEND },
		{ "monitor-interval", required_argument, NULL, ARG_MONITOR_INTERVAL },
		{ "monitor-threshold", required_argument, NULL, ARG_MONITOR_THRESHOLD },
		{ "monitor-width", required_argument, NULL, ARG_MONITOR_WIDTH },
		{ "monitor-window", required_argument, NULL, ARG_MONITOR_WINDOW },
		{ "monitor-mode", required_argument, NULL, ARG_MONITOR_MODE },
		{ "monitor-cpus", required_argument, NULL, ARG_MONITOR_CPUS },
		{ "monitor-sample-budget", required_argument, NULL, ARG_MONITOR_SAMPLE_BUDGET },
		{ "monitor-openmetrics-file", required_argument, NULL, ARG_MONITOR_OPENMETRICS_FILE },
		{ "config", required_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "load-module", no_argument, NULL, ARG_LOAD },
		{ "unload-module", no_argument, NULL, ARG_UNLOAD },
		{ "unit", no_argument, NULL, ARG_UNIT },
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		{ "monitor", no_argument, NULL, ARG_MONITOR },
		/* For tests, documented in hwlat-scan(8), not in --help. */
		{ "detector-dir", required_argument, NULL, ARG_DETECTOR_DIR },
		{ "tracefs-dir", required_argument, NULL, ARG_TRACEFS_DIR },
		{ "journal-export", required_argument, NULL, ARG_JOURNAL_EXPORT },
		{ "platform-root", required_argument, NULL, ARG_PLATFORM_ROOT },
		{ "msr-dir", required_argument, NULL, ARG_MSR_DIR },
		{}
	};
	int c;

	*ret_action = ACTION_SCAN;
	o->config_path = CONFIG_DEFAULT_PATH;

	while ((c = getopt_long(argc, argv, "C:qhV", longopts, NULL)) >= 0) {
		switch (c) {
		case ARG_DURATION ... ARG_MONITOR_OPENMETRICS_FILE:
			if (o->n_overrides >= ELEMENTSOF(o->overrides)) {
				log_msg("too many options");
				return -E2BIG;
			}
			o->overrides[o->n_overrides].key =
				config_key_name((config_key)(c - ARG_DURATION));
			o->overrides[o->n_overrides].value = optarg;
			o->n_overrides++;
			break;
		case 'C':
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			*ret_action = ACTION_HELP;
			break;
		case 'V':
			*ret_action = ACTION_VERSION;
			break;
		case ARG_LOAD:
			*ret_action = ACTION_LOAD_MODULE;
			break;
		case ARG_UNLOAD:
			*ret_action = ACTION_UNLOAD_MODULE;
			break;
		case ARG_UNIT:
			o->unit = true;
			break;
		case ARG_CHECK_CONFIG:
			*ret_action = ACTION_CHECK_CONFIG;
			break;
		case ARG_DETECTOR_DIR:
			o->detector_dir = optarg;
			break;
		case ARG_TRACEFS_DIR:
			o->tracefs_dir = optarg;
			break;
		case ARG_JOURNAL_EXPORT:
			o->journal_export = optarg;
			break;
		case ARG_PLATFORM_ROOT:
			o->platform_root = optarg;
			break;
		case ARG_MONITOR:
			o->monitor = true;
			break;
		case ARG_MSR_DIR:
			o->msr_dir = optarg;
			break;
		default:
			log_msg("try 'hwlat-scan --help'");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_msg("unexpected argument '%s' (try 'hwlat-scan --help')",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/*
 * --load-module (the unit's ExecStartPre) follows the configured backend:
 * with tracer nothing is loaded; with auto a module that cannot be loaded
 * is no failure, the scan then uses the tracer.
 */
static int action_load_module(const scan_options *o, backend_kind backend)
{
	char mnt[4096];
	bool loaded;
	int r;

	if (backend == BACKEND_TRACER) {
		log_msg("backend tracer: not loading the %s module", MODULE_NAME);
		return 0;
	}

	/* With a (fake) detector directory, debugfs is not needed. */
	if (!o->detector_dir && debugfs_find(mnt, sizeof(mnt)) == -ENOENT) {
		if (debugfs_available() == 0) {
			debugfs_log_unavailable();
			return -ENODEV;
		}
		if (debugfs_mount() < 0)
			return -ENODEV;
	}
	r = module_load(&loaded);
	/* The monitor leaves the module loaded: a scan may run beside it. */
	if (o->monitor) {
		module_load_msr();
		return r < 0 ? -ENODEV : 0;
	}
	if (r < 0 && backend == BACKEND_AUTO) {
		log_msg("backend auto: the %s module cannot be loaded (said above); the scan will "
			"use the kernel's hwlat tracer", MODULE_NAME);
		return 0;
	}
	if (r < 0)
		return -ENODEV;
	r = loaded ? module_marker_write() : module_marker_take();
	return r < 0 ? -EIO : 0;
}

static int action_unload_module(void)
{
	int r = module_marker_take();

	if (r < 0)
		return -EIO;
	if (r == 0)
		return 0;
	return module_unload() < 0 ? -ENODEV : 0;
}

/* The backend of the configuration; module when it does not load (the scan says why). */
static backend_kind configured_backend(const scan_options *o)
{
	_cleanup_free_ scan_config *cfg = malloc(sizeof(*cfg));

	if (!cfg || scan_load_config(o, cfg) < 0)
		return BACKEND_MODULE;
	return cfg->backend;
}

static int check_config(const scan_config *cfg)
{
	config_print(cfg, stdout);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error_errno(-(errno ? errno : EIO), "cannot print the configuration");
		return -EIO;
	}
	return 0;
}

/* debugfs files are root's (0600) and modules need root: say so first. */
static bool is_root(void)
{
	if (geteuid() == 0)
		return true;
	log_msg("must be run as root (the detector's debugfs files and the kernel module are root's)");
	return false;
}

/* The exit status of a result: a verdict, or why the scan did not pass (scan.h). */
static int exit_status(int r)
{
	static const int verdicts[] = {
		[SCAN_PASSED] = 0,
		[SCAN_HARDLIMIT] = EXIT_HARDLIMIT,
		[SCAN_FAIL_IF] = EXIT_FAIL_IF,
		[SCAN_NOT_APPLIED] = EXIT_NOT_APPLIED,
	};

	switch (r) {
	case -EINVAL:
		return EXIT_USAGE;
	case -EBUSY:
		return EXIT_BUSY;
	case -ENODEV:
		return EXIT_NO_DETECTOR;
	}
	return r < 0 ? EXIT_FAILED : verdicts[r];
}

int main(int argc, char *argv[])
{
	_cleanup_close_ int sig_fd = -1;
	_cleanup_free_ scan_config *cfg = NULL;
	scan_options o = {};
	action act;

	log_set_program("hwlat-scan");
	/* A closed stdout or stderr is an EPIPE error, never a killed scan. */
	signal(SIGPIPE, SIG_IGN);

	if (parse_argv(argc, argv, &o, &act) < 0)
		return EXIT_USAGE;

	switch (act) {
	case ACTION_HELP:
		help();
		return 0;
	case ACTION_VERSION:
		printf("hwlat-scan %s\n", PACKAGE_VERSION);
		return 0;
	case ACTION_LOAD_MODULE:
		if (!is_root())
			return EXIT_NO_DETECTOR;
		return exit_status(action_load_module(&o, o.monitor ? BACKEND_MODULE :
								  configured_backend(&o)));
	case ACTION_UNLOAD_MODULE:
		if (!is_root())
			return EXIT_NO_DETECTOR;
		return exit_status(action_unload_module());
	case ACTION_SCAN:
	case ACTION_CHECK_CONFIG:
		break;
	}

	cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		log_msg("out of memory");
		return EXIT_FAILED;
	}
	if (scan_load_config(&o, cfg) < 0)
		return EXIT_USAGE;
	if (act == ACTION_CHECK_CONFIG)
		return exit_status(check_config(cfg));

	/* A fake detector (tests) is the caller's; the real one is root's. */
	if (!o.detector_dir && !is_root())
		return EXIT_NO_DETECTOR;

	sig_fd = reader_signalfd(NULL);
	if (sig_fd < 0)
		return EXIT_FAILED;

	if (o.monitor)
		return exit_status(monitor_run(&o, cfg, sig_fd));
	return exit_status(run_scan(&o, cfg, sig_fd));
}
