/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Edges of hwlat-scan's units that mutants showed untested
 * (tests/mutation), each pinned by the value a user or a caller sees:
 * - detector: a closed detector closes nothing when closed again; a cpus
 *   write that fails makes detector_change fail; a short write is -EIO;
 *   a number file holding no number is -EBADMSG and says what it read;
 *   the lock is 0 when taken, -EWOULDBLOCK while another detector holds it;
 * - identity: a microcode revision that fits the buffer exactly is kept;
 * - journal entries: the 65th field and a field that does not fit with
 *   its NUL are refused; a value with a newline is exported in the
 *   binary-safe form; an unreachable journal reports socket()'s errno;
 * - locked settings: "0,1" and "0-1" are the same CPUs, an unchanged
 *   threshold is not "not in force", the lockdown note in the refusal;
 *   CPUs in force that do not parse (a module loaded without cpus=) are
 *   compared as text, not as a CPU set never read; reading the module's
 *   parameters after a refusal returns 0 and records them;
 * - module: loaded means /sys/module/hwlat_detector exists; a loaded
 *   module is neither loaded again nor marked as loaded by the scan; a
 *   failed "modprobe --remove" is -EIO with its status on stderr;
 * - progress: wanted on a terminal; "1 sample" and "2 samples"; "0s left"
 *   at and after the end of the duration;
 * - configuration: drop-ins are *.conf only, a dangling one is an error,
 *   so is a drop-in directory that is a file (named),
 *   the printed configuration, the mode "none", an openmetrics_file path
 *   one byte too long for the file name with its ".tmp" suffix;
 * - SMI tally: a sample of a CPU beyond HWLAT_MAX_CPUS changes nothing;
 * - module parameters without a mode file are an error naming the file;
 * - debugfs is available when /proc/filesystems lists it ("nodev\tdebugfs");
 * - platform: the hypervisor ID is all 12 bytes of CPUID leaf 0x40000000
 *   (EBX, ECX, EDX), the last four included; the platform's hypervisor is
 *   its name, "none" without the CPUID hypervisor bit, "unknown" without
 *   CPUID (the case this host's hardware shows).
 * TAP output.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detector.h"
#include "identity.h"
#include "journal-entry.h"
#include "locked-settings.h"
#include "platform.h"
#include "module.h"
#include "progress.h"
#include "scan-config.h"
#include "smi-total.h"
#include "unit-test.h"

static char dir[] = "/tmp/hwlat-test-svc-XXXXXX";

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Writes text to dir/name, making the directories on the way. */
static void put(const char *name, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			bail(path);
		*p = '/';
	}
	if (write_file_len(path, text, strlen(text)) < 0)
		bail(path);
}

static const char *at(const char *name)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Runs f() with stderr going to a file; returns what it wrote (static). */
static const char *stderr_of(void (*f)(void *), void *arg)
{
	static char text[8192];
	int saved = dup(STDERR_FILENO), fd;
	ssize_t n;

	fflush(stderr);
	fd = open(at("stderr"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || saved < 0)
		bail("stderr file");
	dup2(fd, STDERR_FILENO);
	f(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	return text;
}

struct read_number {
	detector *d;
	const char *name;
	int r;
	uint64_t v;
};

static void read_number(void *arg)
{
	struct read_number *x = arg;

	x->r = detector_read_u64(x->d, x->name, &x->v);
}

static void test_detector(void)
{
	detector d = { .dir_fd = -1 };
	detector_settings cur, want;
	char link_path[1024];
	const char *err;
	int r;

	put("det/threshold", "10\n");
	put("det/width", "100000\n");
	put("det/window", "200000\n");
	/* Reading /dev/full gives NULs (cpus ""), writing it ENOSPC. */
	snprintf(link_path, sizeof(link_path), "%s", at("det/cpus"));
	if (symlink("/dev/full", link_path) < 0)
		bail("symlink");
	if (detector_open(&d, at("det")) < 0 || detector_read_settings(&d, &cur) < 0) {
		ok(false, "fake detector with cpus -> /dev/full opens and reads");
		return;
	}
	want = cur;
	snprintf(want.cpus, sizeof(want.cpus), "0");
	r = detector_change(&d, &cur, &want);
	ok(r == -ENOSPC, "a cpus write that fails fails detector_change: r=%d (want %d)", r,
	   -ENOSPC);

	/* The scan's lock: 0 when taken, -EWOULDBLOCK while another holds it. */
	{
		detector other = { .dir_fd = -1 };
		int r1, r2, r3 = 1;

		r1 = detector_lock(&d);
		r2 = detector_open(&other, at("det"));
		if (r2 == 0)
			r2 = detector_lock(&other);
		if (r2 == -EWOULDBLOCK) {
			detector_close(&d);
			r3 = detector_lock(&other);
			if (detector_open(&d, at("det")) < 0)
				bail("detector_open");
		}
		detector_close(&other);
		ok(r1 == 0 && r2 == -EWOULDBLOCK && r3 == 0,
		   "detector_lock: 0 (r=%d), -EWOULDBLOCK while another holds it (r=%d), 0 once "
		   "it is closed (r=%d)", r1, r2, r3);
	}

	/* A number file that holds no number: -EBADMSG, the file and its text said. */
	put("det/floor", "12x\n");
	{
		struct read_number x = { .d = &d, .name = "floor", .r = 1, .v = 7 };
		char want_err[1200];

		err = stderr_of(read_number, &x);
		snprintf(want_err, sizeof(want_err),
			 "hwlat-scan: %s/floor: expected a number, read '12x'\n", at("det"));
		ok(x.r == -EBADMSG && x.v == 7 && strcmp(err, want_err) == 0,
		   "floor '12x': -EBADMSG (r=%d), value untouched, 'expected a number, read "
		   "'12x'' said", x.r);
		if (strcmp(err, want_err) != 0)
			printf("#   got: '%s'\n", err);
	}

	/* fd 0 must survive a second close of a closed detector. */
	if (fcntl(STDIN_FILENO, F_GETFD) < 0) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd != STDIN_FILENO)
			bail("fd 0");
	}
	detector_close(&d);
	detector_close(&d);
	ok(d.dir_fd == -1 && fcntl(STDIN_FILENO, F_GETFD) >= 0,
	   "closing a closed detector again closes nothing (dir_fd %d, fd 0 open)", d.dir_fd);
}

/*
 * A write that the kernel takes only in part is an error: RLIMIT_FSIZE of
 * 2 bytes lets write() put 2 of the 5 bytes of "1000\n" and return 2.
 */
static void test_short_write(void)
{
	detector d = { .dir_fd = -1 };
	struct rlimit saved, small;
	char got[64] = "";
	int r, fd;
	ssize_t n;

	put("short/threshold", "10\n");
	if (detector_open(&d, at("short")) < 0) {
		ok(false, "fake detector for the short write opens");
		return;
	}
	if (getrlimit(RLIMIT_FSIZE, &saved) < 0)
		bail("getrlimit");
	small = saved;
	small.rlim_cur = 2;
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &small) < 0)
		bail("setrlimit");
	r = detector_write(&d, "threshold", "1000");
	if (setrlimit(RLIMIT_FSIZE, &saved) < 0)
		bail("setrlimit back");
	signal(SIGXFSZ, SIG_DFL);
	fd = open(at("short/threshold"), O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	ok(r == -EIO && strcmp(got, "10") == 0,
	   "a write of 1000 cut after 2 bytes is -EIO: r=%d (want %d), file '%s'", r, -EIO, got);
	detector_close(&d);
}

static void test_microcode_fit(void)
{
	char buf[6];

	/* "0xb4" and the room for a ',' before a next value: 6 bytes. */
	cpuinfo_microcode("microcode\t: 0xb4\n", buf, sizeof(buf));
	ok(strcmp(buf, "0xb4") == 0, "microcode 0xb4 into 6 bytes: '%s' (want '0xb4')", buf);

	/* A second revision is added whole or not at all: ",0xb5" needs 5 more bytes. */
	char two[10];
	const char *info = "microcode\t: 0xb4\nmicrocode\t: 0xb5\n";

	cpuinfo_microcode(info, two, 9);
	ok(strcmp(two, "0xb4") == 0, "microcode 0xb4 and 0xb5 into 9 bytes: '%s' (want '0xb4')",
	   two);
	cpuinfo_microcode(info, two, 10);
	ok(strcmp(two, "0xb4,0xb5") == 0,
	   "microcode 0xb4 and 0xb5 into 10 bytes: '%s' (want '0xb4,0xb5')", two);
}

static void test_entry_limits(void)
{
	static journal_entry e;
	static char big[ENTRY_POOL_SIZE];
	int r = 0;

	journal_entry_init(&e);
	for (int i = 0; i < ENTRY_MAX_FIELDS && r >= 0; i++)
		r = journal_entry_add(&e, "F%d=x", i);
	ok(r == 0 && e.n == ENTRY_MAX_FIELDS, "%d fields fit", ENTRY_MAX_FIELDS);
	r = journal_entry_add(&e, "ONE_MORE=x");
	ok(r == -E2BIG && e.n == ENTRY_MAX_FIELDS, "field %d is refused: r=%d (want %d)",
	   ENTRY_MAX_FIELDS + 1, r, -E2BIG);

	/* Each field takes its length and a NUL: after 16374 + 1 and 2 + 1
	 * bytes, 6 are left, enough for a 5-byte field, not a 6-byte one. */
	journal_entry_init(&e);
	memset(big, 'x', ENTRY_POOL_SIZE - 10);
	big[ENTRY_POOL_SIZE - 10] = '\0';
	r = journal_entry_add(&e, "%s", big);
	if (r >= 0)
		r = journal_entry_add(&e, "ab");
	ok(r == 0 && e.used == ENTRY_POOL_SIZE - 6, "two fields use %d bytes of the pool (used %zu)",
	   ENTRY_POOL_SIZE - 6, e.used);
	r = journal_entry_add(&e, "C=1234");
	ok(r == -E2BIG && e.n == 2, "a 6-byte field with its NUL does not fit in 6: r=%d", r);
	r = journal_entry_add(&e, "C=123");
	ok(r == 0 && e.n == 3 && e.used == ENTRY_POOL_SIZE,
	   "a 5-byte field fills the pool exactly: r=%d", r);
}

static void test_export_newline(void)
{
	static journal_entry e;
	static const char want[] = "MESSAGE\n\x09\0\0\0\0\0\0\0two\nlines\nX=1\n\n";
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	int r;

	if (!f)
		bail("open_memstream");
	journal_entry_init(&e);
	journal_entry_add(&e, "MESSAGE=two\nlines");
	journal_entry_add(&e, "X=1");
	r = journal_entry_send(&e, f);
	fclose(f);
	ok(r == 0 && size >= sizeof(want) - 1 &&
	   memcmp(text + size - (sizeof(want) - 1), want, sizeof(want) - 1) == 0,
	   "a value with a newline is exported as NAME, newline, 64-bit length, value, newline (r=%d)", r);
	free(text);
}

static void test_journal_socket_errno(void)
{
	struct rlimit old, low;
	int fd = dup(STDIN_FILENO), r;

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &old) < 0)
		bail("dup/getrlimit");
	close(fd);
	/* The lowest free descriptor is at the limit: socket() gets EMFILE. */
	low = old;
	low.rlim_cur = (rlim_t)fd;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		bail("setrlimit");
	r = journal_check_socket();
	setrlimit(RLIMIT_NOFILE, &old);
	ok(r == -EMFILE, "no descriptor left: journal_check_socket() = %d (want %d, socket()'s)",
	   r, -EMFILE);
}

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

static void unload_module(void *arg)
{
	*(int *)arg = module_unload();
}

static void test_module(void)
{
	bool loaded = true;
	const char *err;
	int r;

	setenv("HWLAT_SYS_MODULE", at("sys-module"), 1);
	setenv("HWLAT_MODPROBE", at("no-such-modprobe"), 1);
	ok(!module_is_loaded(), "no %s/hwlat_detector: not loaded", at("sys-module"));
	put("sys-module/hwlat_detector/parameters/enabled", "Y\n");
	ok(module_is_loaded(), "%s/hwlat_detector exists: loaded", at("sys-module"));
	/* Loaded already: modprobe (missing here) is not run, nothing to unload. */
	r = module_load(&loaded);
	ok(r == 0 && !loaded, "module_load of a loaded module: 0 and not loaded by us (r=%d)", r);
	/*
	 * A module tool that fails to remove the module (status 3): -EIO,
	 * which --unload-module and the scan's cleanup turn into a failure,
	 * and the status said; not 0 as if the module were gone.
	 */
	put("modprobe-fails", "#!/bin/sh\nexit 3\n");
	if (chmod(at("modprobe-fails"), 0755) < 0)
		bail("chmod");
	setenv("HWLAT_MODPROBE", at("modprobe-fails"), 1);
	err = stderr_of(unload_module, &r);
	ok(r == -EIO && strcmp(err, "hwlat-scan: modprobe --remove hwlat_detector failed "
			       "(status 3)\n") == 0,
	   "a failed modprobe --remove: -EIO (r=%d) and its status on stderr", r);
	if (strcmp(err, "hwlat-scan: modprobe --remove hwlat_detector failed (status 3)\n") != 0)
		printf("#   got: %s", err);
	unsetenv("HWLAT_SYS_MODULE");
	unsetenv("HWLAT_MODPROBE");
}

static void show_progress(void *arg)
{
	progress *p = arg;

	progress_update(p, 1500 * NSEC_PER_MSEC, 1, 25000);
	progress_update(p, 2500 * NSEC_PER_MSEC, 2, 31000);
	progress_stop(p);
}

static void show_progress_late(void *arg)
{
	progress *p = arg;

	progress_update(p, 10 * NSEC_PER_SEC, 1, 25000);
	progress_update(p, 12 * NSEC_PER_SEC, 1, 25000);
	progress_stop(p);
}

static void test_progress(void)
{
	static const char late[] =
		"\rhwlat-scan: 10s elapsed, 0s left, 1 sample, max 25.0 us\033[K"
		"\rhwlat-scan: 12s elapsed, 0s left, 1 sample, max 25.0 us\033[K\r\033[K";
	progress p;
	int master, slave, saved;
	const char *err;
	bool on_tty;

	progress_start(&p, true, 0, 10 * NSEC_PER_SEC);
	err = stderr_of(show_progress, &p);
	ok(strcmp(err, "\rhwlat-scan: 1s elapsed, 9s left, 1 sample, max 25.0 us\033[K"
		       "\rhwlat-scan: 2s elapsed, 8s left, 2 samples, max 31.0 us\033[K\r\033[K") == 0,
	   "progress lines: '1 sample', then '2 samples', then cleared");

	/* At the end of the duration and past it (a late wakeup): 0s left, not 1s. */
	progress_start(&p, true, 0, 10 * NSEC_PER_SEC);
	err = stderr_of(show_progress_late, &p);
	ok(strcmp(err, late) == 0, "progress at and past the end of the duration: '0s left'");
	if (strcmp(err, late) != 0)
		printf("#   got: %s\n", err + 1);

	unsetenv("INVOCATION_ID");
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0) {
		ok(true, "# SKIP no pseudo-terminal");
		return;
	}
	saved = dup(STDERR_FILENO);
	dup2(slave, STDERR_FILENO);
	on_tty = progress_wanted(false, false);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(slave);
	close(master);
	ok(on_tty, "stderr a terminal, not quiet, not a unit: progress wanted");
}

struct long_path {
	int r;
	char value[4096];
	scan_config c;
};

static void set_long_path(void *arg)
{
	struct long_path *x = arg;

	config_init(&x->c);
	x->r = config_set(&x->c, "openmetrics_file", x->value, "t.conf:9");
}

/* openmetrics_file takes 4087 bytes and refuses 4088 (room for ".tmp"). */
static void test_long_openmetrics_path(void)
{
	static struct long_path x;
	static char want[8192];
	const char *err;

	memset(x.value, 'a', 4088);
	x.value[0] = '/';
	x.value[4088] = '\0';
	snprintf(want, sizeof(want),
		 "hwlat-scan: t.conf:9: invalid value '%s' for 'openmetrics_file': path too long\n",
		 x.value);
	err = stderr_of(set_long_path, &x);
	ok(x.r == -ERANGE && strcmp(x.c.openmetrics_file, "") == 0 && strcmp(err, want) == 0,
	   "an openmetrics_file path of 4088 bytes is refused: r=%d (want %d), '%.50s...%.39s'",
	   x.r, -ERANGE, err, strlen(err) > 40 ? err + strlen(err) - 40 : "");
	x.value[4087] = '\0';
	err = stderr_of(set_long_path, &x);
	ok(x.r == 0 && strcmp(x.c.openmetrics_file, x.value) == 0 && strcmp(err, "") == 0,
	   "an openmetrics_file path of 4087 bytes is taken whole: r=%d, %zu bytes", x.r,
	   strlen(x.c.openmetrics_file));
}

static void test_smi_tally_bound(void)
{
	static smi_tally t, zero;
	hwlat_sample s = { .seq = 1, .cpu = HWLAT_MAX_CPUS, .smi_count_known = true,
			   .smi_count = 5 };

	smi_tally_add(&t, &s);
	ok(memcmp(&t, &zero, sizeof(t)) == 0,
	   "a sample of CPU %u (beyond the last) adds nothing: seen[0] %llx, unknown %llu",
	   HWLAT_MAX_CPUS, (unsigned long long)t.seen.bits[0],
	   (unsigned long long)t.unknown_windows);
}

struct params_read {
	int r;
	module_params p;
};

static void read_params(void *arg)
{
	struct params_read *x = arg;

	x->r = module_read_params(&x->p);
}

static void test_params_no_mode(void)
{
	static struct params_read x;
	char want[2048];
	const char *err;

	put("pm/hwlat_detector/parameters/enabled", "1\n");
	put("pm/hwlat_detector/parameters/threshold", "20\n");
	put("pm/hwlat_detector/parameters/width", "500000\n");
	put("pm/hwlat_detector/parameters/window", "1000000\n");
	put("pm/hwlat_detector/parameters/cpus", "0-1\n");
	setenv("HWLAT_SYS_MODULE", at("pm"), 1);
	err = stderr_of(read_params, &x);
	unsetenv("HWLAT_SYS_MODULE");
	snprintf(want, sizeof(want),
		 "hwlat-scan: cannot read %s/hwlat_detector/parameters/mode: "
		 "No such file or directory\n", at("pm"));
	ok(x.r == -ENOENT && strcmp(err, want) == 0,
	   "module parameters without mode: r=%d (want %d), '%.*s'", x.r, -ENOENT,
	   (int)strcspn(err, "\n"), err);
}

/* debugfs_available() with text as /proc/filesystems, in a child of its own. */
static int debugfs_with(const char *text)
{
	pid_t pid;
	int status;

	put("filesystems", text);
	pid = fork();
	if (pid < 0)
		bail("fork");
	if (pid == 0) {
		int r;

		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(at("filesystems"), "/proc/filesystems", NULL, MS_BIND, NULL) < 0)
			_exit(77);
		r = debugfs_available();
		_exit(r == 1 ? 1 : r == 0 ? 0 : 78);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_debugfs_available(void)
{
	int yes = debugfs_with("nodev\tsysfs\nnodev\tdebugfs\n\text4\n");
	int no = debugfs_with("nodev\tsysfs\nnodev\tdebugfsx\n\text4\n");

	if (yes == 77 || no == 77) {
		ok(true, "debugfs_available # SKIP no mount namespace to stand in /proc/filesystems");
		return;
	}
	ok(yes == 1 && no == 0,
	   "debugfs listed in /proc/filesystems: available (%d, want 1); not listed: not (%d, want 0)",
	   yes, no);
}

struct load_config {
	const char *path;
	scan_config c;
	int r;
};

static void load_config(void *arg)
{
	struct load_config *x = arg;

	config_init(&x->c);
	x->r = config_load(&x->c, x->path, true);
}

static void test_config(void)
{
	static scan_config c;
	char *text = NULL, gone[1024];
	size_t size = 0;
	FILE *f;
	int r;

	config_init(&c);
	r = config_set(&c, "duration", "90s", "t.conf:1");
	if (r >= 0)
		r = config_set(&c, "mode", "none", "t.conf:2");
	if (r >= 0)
		r = config_set(&c, "cpus", "0,1", "t.conf:3");
	if (r >= 0)
		r = config_set(&c, "fail_if", "max > 1ms, smi > 0", "t.conf:4");
	ok(r == 0 && c.duration_ns == 90 * NSEC_PER_SEC && strcmp(c.mode, "none") == 0,
	   "duration 90s, mode none, cpus and two fail_if conditions are taken (r=%d)", r);
	f = open_memstream(&text, &size);
	if (!f)
		bail("open_memstream");
	config_print(&c, f);
	fclose(f);
	ok(strcmp(text, "# duration: from t.conf:1\nduration = 90s\n"
			"# threshold: not set, the detector's current threshold is kept\n"
			"# width: not set, the detector's current width is kept\n"
			"# window: not set, the detector's current window is kept\n"
			"# mode: from t.conf:2\nmode = none\n"
			"# cpus: from t.conf:3\ncpus = 0-1\n"
			"# hardlimit: not set, no hard limit\n"
			"# fail_if: from t.conf:4\nfail_if = max > 1ms, smi > 0\n"
			"# openmetrics_file: not set, no metrics file is written\n"
			"# backend: not set, the hwlat_detector module samples (backend = module)\n") == 0,
	   "the printed configuration");
	free(text);

	/* Drop-ins: only NAME.conf, not hidden, not other names. */
	put("conf1/scan.conf", "threshold = 10us\n");
	put("conf1/scan.conf.d/10-a.conf", "threshold = 20us\n");
	put("conf1/scan.conf.d/notes.txt", "not a setting\n");
	put("conf1/scan.conf.d/.hidden.conf", "not a setting\n");
	put("conf1/scan.conf.d/.conf", "not a setting\n");
	config_init(&c);
	r = config_load(&c, at("conf1/scan.conf"), true);
	ok(r == 0 && c.threshold_ns == 20 * NSEC_PER_USEC,
	   "drop-in 10-a.conf read, notes.txt, .hidden.conf and .conf not (r=%d)", r);
	/* A drop-in listed but gone (dangling link) is an error. */
	put("conf2/scan.conf", "threshold = 10us\n");
	put("conf2/scan.conf.d/10-a.conf", "width = 20us\n");
	snprintf(gone, sizeof(gone), "%s", at("conf2/scan.conf.d/20-gone.conf"));
	if (symlink(at("nowhere"), gone) < 0)
		bail("symlink");
	config_init(&c);
	r = config_load(&c, at("conf2/scan.conf"), true);
	ok(r == -ENOENT && !c.set[CONFIG_THRESHOLD],
	   "a dangling drop-in fails the load with -ENOENT, nothing taken (r=%d)", r);
	/* A drop-in "directory" that is a file: the error, named, not a crash. */
	put("conf3/scan.conf", "threshold = 10us\n");
	put("conf3/scan.conf.d", "not a directory\n");
	{
		static struct load_config x;
		char want_err[1200], path[1024];
		const char *err;

		snprintf(path, sizeof(path), "%s", at("conf3/scan.conf"));
		x.path = path;
		snprintf(want_err, sizeof(want_err), "hwlat-scan: cannot read the drop-in "
			 "directory %s: Not a directory\n", at("conf3/scan.conf.d"));
		err = stderr_of(load_config, &x);
		ok(x.r == -ENOTDIR && strcmp(err, want_err) == 0,
		   "a drop-in directory that is a file: -ENOTDIR (r=%d), said", x.r);
		if (strcmp(err, want_err) != 0)
			printf("#   got: '%s'\n", err);
	}
}

/*
 * cpuid_hypervisor_id() fills all 12 bytes: EBX, ECX and EDX of leaf
 * 0x40000000, as the instruction gives them to this process (the same
 * signature HWLAT_HYPERVISOR is made of). Filled over two different
 * patterns, so that no byte can keep what was there before. Skipped on
 * bare metal (no hypervisor bit) and off x86.
 */
/*
 * platform_read()'s hypervisor field says what CPUID says: the vendor
 * name under a hypervisor, "none" on a CPU without the hypervisor bit,
 * "unknown" without CPUID. Which case a host shows is its hardware's:
 * "none" is checked only on bare metal.
 */
static void test_platform_hypervisor(void)
{
	static platform p;
	char id[HYPERVISOR_ID_LEN], want[HYPERVISOR_ID_LEN + 8];
	int r = cpuid_hypervisor_id(id);

	if (r > 0)
		hypervisor_name(id, want, sizeof(want));
	else
		snprintf(want, sizeof(want), "%s", r == 0 ? "none" : "unknown");
	platform_read(at("no-platform-root"), &p);
	ok(strcmp(p.hypervisor, want) == 0, "the hypervisor of this host is '%s' (CPUID says %s)",
	   p.hypervisor, r > 0 ? "a hypervisor" : r == 0 ? "no hypervisor" : "no CPUID");
}

static void test_hypervisor_id(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char id[HYPERVISOR_ID_LEN], want[HYPERVISOR_ID_LEN];
	unsigned a, b, c, d;
	int r1, r2;
	bool same1, same2;

	memset(id, 'Z', sizeof(id));
	r1 = cpuid_hypervisor_id(id);
	if (r1 == 0) {
		ok(true, "hypervisor ID # SKIP no hypervisor (CPUID.1:ECX bit 31 clear)");
		return;
	}
	__cpuid(0x40000000, a, b, c, d);
	(void)a;
	memcpy(want, &b, 4);
	memcpy(want + 4, &c, 4);
	memcpy(want + 8, &d, 4);
	same1 = memcmp(id, want, sizeof(id)) == 0;
	memset(id, 0, sizeof(id));
	r2 = cpuid_hypervisor_id(id);
	same2 = memcmp(id, want, sizeof(id)) == 0;
	ok(r1 == 1 && r2 == 1 && same1 && same2,
	   "the hypervisor ID is the 12 bytes of CPUID leaf 0x40000000 '%.12s' (r=%d/%d, "
	   "over 'Z's: %s, over NULs: %s)", want, r1, r2, same1 ? "same" : "differs",
	   same2 ? "same" : "differs");
#else
	ok(true, "hypervisor ID # SKIP not x86");
#endif
}

int main(void)
{
	if (!mkdtemp(dir))
		bail("mkdtemp");
	test_detector();
	test_short_write();
	test_microcode_fit();
	test_entry_limits();
	test_export_newline();
	test_journal_socket_errno();
	test_locked_compare();
	test_lockdown_note();
	test_locked_read();
	test_module();
	test_progress();
	test_config();
	test_long_openmetrics_path();
	test_smi_tally_bound();
	test_params_no_mode();
	test_debugfs_available();
	test_hypervisor_id();
	test_platform_hypervisor();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", dir);
	}
	return tap_finish();
}
