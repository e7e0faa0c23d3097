/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scanning with the module's load-time settings where debugfs refuses
 * writes (service/locked-settings.c), TAP output. Proves that "0,1" and
 * "0-1" are the same CPUs, an unchanged threshold is not "not in force",
 * CPUs in force that do not parse (a module loaded without cpus=) are
 * compared as text, not as a CPU set never read; the refusal names the
 * file and the lockdown; reading the module's parameters after a refusal
 * returns 0 and records them, saying the settings used.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detector.h"
#include "locked-settings.h"
#include "module.h"
#include "scan-config.h"
#include "unit-test.h"

/* Fills the stack below the caller with 0xff. */
static __attribute__((noinline)) void paint_stack(void)
{
	volatile unsigned char junk[65536];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xff;
}

static void test_locked_compare(void)
{
	static locked_settings l;
	static scan_config cfg;
	detector_settings want;
	int r;

	l.params.enabled = true;
	l.params.settings = (detector_settings){
		.threshold_us = 10, .width_us = 500, .window_us = 1000,
		.has_mode = true, .mode = "round-robin", .has_cpus = true, .cpus = "0-1",
	};
	config_init(&cfg);
	cfg.set[CONFIG_THRESHOLD] = cfg.set[CONFIG_CPUS] = true;
	snprintf(cfg.origin[CONFIG_THRESHOLD], sizeof(cfg.origin[0]), "command line");
	snprintf(cfg.origin[CONFIG_CPUS], sizeof(cfg.origin[0]), "command line");
	want = l.params.settings;
	snprintf(want.cpus, sizeof(want.cpus), "0,1");
	r = locked_settings_compare(&l, &cfg, &want);
	ok(r == 0 && strcmp(l.not_applied, "") == 0,
	   "threshold 10 us and CPUs 0,1 requested, 10 us and 0-1 in force: all applied ('%s')",
	   l.not_applied);
	want.threshold_us = 20;
	snprintf(want.cpus, sizeof(want.cpus), "0,2");
	r = locked_settings_compare(&l, &cfg, &want);
	ok(r == 0 && strcmp(l.not_applied, "threshold 20 us requested (command line), 10 us in "
			    "force; cpus 0,2 requested (command line), 0-1 in force") == 0,
	   "threshold 20 us and CPUs 0,2 requested: both named ('%s')", l.not_applied);

	/*
	 * The module loaded without cpus= shows "": that is no CPU list, so
	 * it is compared as text and all 1024 CPUs requested are not in
	 * force. The stack is painted with 0xff first, the bytes of a set of
	 * all 1024 CPUs, so that a set compared without being read (left as
	 * whatever the stack held) would pass as the same.
	 */
	cfg.set[CONFIG_THRESHOLD] = false;
	snprintf(want.cpus, sizeof(want.cpus), "0-1023");
	l.params.settings.cpus[0] = '\0';
	paint_stack();
	r = locked_settings_compare(&l, &cfg, &want);
	ok(r == 0 && strcmp(l.not_applied, "cpus 0-1023 requested (command line),  in force") == 0,
	   "CPUs 0-1023 requested, none named in force: named as not in force ('%s')",
	   l.not_applied);

	/* The modprobe line names exactly the keys requested. */
	{
		char line[4400];

		ok(strcmp(locked_modprobe_line(&cfg, &want, line, sizeof(line)),
			  "options hwlat_detector enabled=1 cpus=0-1023") == 0,
		   "cpus requested: the modprobe line sets cpus ('%s')", line);
		cfg.set[CONFIG_CPUS] = false;
		cfg.set[CONFIG_THRESHOLD] = true;
		ok(strcmp(locked_modprobe_line(&cfg, &want, line, sizeof(line)),
			  "options hwlat_detector enabled=1 threshold=20") == 0,
		   "threshold requested, cpus not: the modprobe line has no cpus ('%s')", line);
	}
}

struct refusal {
	const char *lockdown;
};

static void refuse(void *arg)
{
	const struct refusal *x = arg;
	static locked_settings l;
	detector d = { .dir_fd = -1 };
	pid_t pid = fork();
	int status;

	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		/* A private lockdown file, in a mount namespace of our own. */
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", "/sys/kernel/security", "tmpfs", 0, "size=64k") < 0)
			_exit(77);
		if (write_file_len("/sys/kernel/security/lockdown", x->lockdown,
				   strlen(x->lockdown)) < 0)
			_exit(78);
		snprintf(d.path, sizeof(d.path), "/fake/hwlat_detector");
		setenv("HWLAT_SYS_MODULE", at("no-sys-module"), 1);
		locked_settings_read(&d, "enable", -EACCES, &l);
		fflush(stderr);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

struct locked_read {
	locked_settings l;
	int r;
};

static void read_locked(void *arg)
{
	struct locked_read *x = arg;
	detector d = { .dir_fd = -1 };

	snprintf(d.path, sizeof(d.path), "/fake/hwlat_detector");
	x->r = locked_settings_read(&d, "enable", -EACCES, &x->l);
}

/*
 * The module's parameters read after debugfs refused "enable": 0 (its
 * documented success, not any other non-negative value), the refusal and
 * the parameters recorded, and the settings used said on stderr.
 */
static void test_locked_read(void)
{
	static const char using[] =
		"hwlat-scan: scanning with the settings the module was loaded with "
		"(/sys/module/hwlat_detector/parameters): enabled 1, threshold 20 us, "
		"width 100000 us, window 200000 us, mode round-robin, CPUs 0-1\n";
	static const char refusal[] =
		"hwlat-scan: cannot open /fake/hwlat_detector/enable for writing (Permission denied)";
	static struct locked_read x;
	const detector_settings *s = &x.l.params.settings;
	const char *err, *second;

	put("locked-sys/hwlat_detector/parameters/enabled", "1\n");
	put("locked-sys/hwlat_detector/parameters/threshold", "20\n");
	put("locked-sys/hwlat_detector/parameters/width", "100000\n");
	put("locked-sys/hwlat_detector/parameters/window", "200000\n");
	put("locked-sys/hwlat_detector/parameters/mode", "round-robin\n");
	put("locked-sys/hwlat_detector/parameters/cpus", "0-1\n");
	put("locked-sys/hwlat_detector/parameters/allow_high_duty", "Y\n");
	setenv("HWLAT_SYS_MODULE", at("locked-sys"), 1);
	x.r = -1;
	err = stderr_of(read_locked, &x);
	unsetenv("HWLAT_SYS_MODULE");
	/* The first line ends with the host's lockdown state: not pinned here. */
	second = strchr(err, '\n');
	second = second ? second + 1 : "";
	ok(x.r == 0 && strcmp(x.l.refused, "enable") == 0 && x.l.refused_errno == EACCES &&
	   x.l.params.enabled && x.l.params.allow_high_duty && s->threshold_us == 20 &&
	   s->width_us == 100000 && s->window_us == 200000 &&
	   strcmp(s->mode, "round-robin") == 0 && strcmp(s->cpus, "0-1") == 0 &&
	   strncmp(err, refusal, strlen(refusal)) == 0 && strcmp(second, using) == 0,
	   "locked_settings_read: 0 (r=%d), the refused file, its errno and the module's "
	   "parameters recorded, the settings used said", x.r);
	if (strcmp(second, using) != 0)
		printf("#   got: %s", err);
}

static void test_lockdown_note(void)
{
	static const struct {
		const char *lockdown, *note;
	} cases[] = {
		{ "none [integrity] confidentiality\n", ": the kernel is locked down (integrity)" },
		{ "[none] integrity confidentiality\n", "" },
		{ "none integrity\n", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct refusal x = { cases[i].lockdown };
		const char *err = stderr_of(refuse, &x);
		char want[512];

		if (strstr(err, "exit 77\n")) {
			ok(true, "# SKIP no mount namespace for a lockdown file");
			return;
		}
		snprintf(want, sizeof(want),
			 "hwlat-scan: cannot open /fake/hwlat_detector/enable for writing "
			 "(Permission denied)%s; hwlat-scan cannot change the detector's settings\n",
			 cases[i].note);
		ok(strncmp(err, want, strlen(want)) == 0 && strstr(err, "exit 0\n"),
		   "lockdown '%.*s': the refusal says '%s'", (int)strlen(cases[i].lockdown) - 1,
		   cases[i].lockdown, cases[i].note);
		if (strncmp(err, want, strlen(want)) != 0)
			printf("#   got: %s", err);
	}
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_locked_compare();
	test_lockdown_note();
	test_locked_read();
	scratch_done();
	return tap_finish();
}
