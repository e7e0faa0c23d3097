/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The detector's debugfs directory (service/detector.c) on fake
 * directories of regular files, TAP output. Proves that a mode file with a
 * bare name is read as that name, one with several bare names or an
 * unclosed bracket is refused, so is a name of 16 bytes (mode[16] holds
 * 15 and the NUL); a mode file that exists but cannot be read fails the
 * read with its errno (only a missing one means "no mode");
 * detector_change writes width and window in an order that never breaks
 * width < window, writes mode and cpus only when both the detector and the
 * wanted settings have them, and fails when the cpus write fails; a short
 * write is -EIO; a number file holding no number is -EBADMSG and says what
 * it read; a closed detector closes nothing when closed again; the lock is
 * 0 when taken, -EWOULDBLOCK while another detector holds it; the octal
 * escapes of /proc/self/mounts are undone exactly (three digits, the first
 * 0-3, the others 0-7); debugfs is available when /proc/filesystems lists
 * it ("nodev\tdebugfs").
 */
#include <errno.h>
#include <inttypes.h>
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
#include "scan-config.h"
#include "unit-test.h"

static bool exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return access(path, F_OK) == 0;
}

static void test_mode_file(void)
{
	static const struct {
		const char *text;
		int r;
		const char *mode;
	} cases[] = {
		{ "round-robin\n", 0, "round-robin" },
		{ "none [per-cpu] stop-machine\n", 0, "per-cpu" },
		{ "none round-robin\n", -EBADMSG, NULL },
		{ "none [round-robin\n", -EBADMSG, NULL },
		{ "[]\n", -EBADMSG, NULL },
		/* mode[] holds 16 bytes: a name of 15 fits with its NUL, 16 does not. */
		{ "abcdefghijklmno\n", 0, "abcdefghijklmno" },
		{ "abcdefghijklmnop\n", -EBADMSG, NULL },
		{ "none [abcdefghijklmnop]\n", -EBADMSG, NULL },
	};
	detector d = { .dir_fd = -1 };

	if (detector_open(&d, scratch) < 0) {
		ok(false, "fake detector opens");
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		detector_settings s = {};
		int r;

		put("mode", cases[i].text);
		r = detector_read_settings(&d, &s);
		if (cases[i].r == 0)
			ok(r == 0 && s.has_mode && strcmp(s.mode, cases[i].mode) == 0,
			   "mode file '%.*s' reads as %s (r=%d, mode=%s)",
			   (int)strlen(cases[i].text) - 1, cases[i].text, cases[i].mode, r, s.mode);
		else
			ok(r == cases[i].r, "mode file '%.*s' is refused: r=%d (want %d)",
			   (int)strlen(cases[i].text) - 1, cases[i].text, r, cases[i].r);
	}
	detector_close(&d);
}

/* A mode that cannot be read (a directory: EISDIR) is an error, not "no mode". */
static void test_mode_unreadable(void)
{
	detector d = { .dir_fd = -1 };
	detector_settings s = {};
	char path[512];
	int r;

	put("mode", NULL);
	snprintf(path, sizeof(path), "%s/mode", scratch);
	if (mkdir(path, 0755) < 0 || detector_open(&d, scratch) < 0) {
		ok(false, "fake detector with a mode directory opens");
		return;
	}
	r = detector_read_settings(&d, &s);
	ok(r == -EISDIR, "a mode that cannot be read fails the read: r=%d (want %d), has_mode %d",
	   r, -EISDIR, s.has_mode);
	detector_close(&d);
	rmdir(path);
}

static void test_change_without_files(void)
{
	detector d = { .dir_fd = -1 };
	detector_settings cur, want;
	int r;

	put("mode", NULL);
	put("cpus", NULL);
	if (detector_open(&d, scratch) < 0 || detector_read_settings(&d, &cur) < 0) {
		ok(false, "fake detector without mode and cpus opens and reads");
		return;
	}
	ok(!cur.has_mode && !cur.has_cpus, "no mode or cpus file: has_mode and has_cpus false");
	want = cur;
	want.has_mode = true;
	snprintf(want.mode, sizeof(want.mode), "per-cpu");
	want.has_cpus = true;
	snprintf(want.cpus, sizeof(want.cpus), "0");
	want.threshold_us = 30;
	r = detector_change(&d, &cur, &want);
	ok(r == 0 && cur.threshold_us == 30 && !exists("mode") && !exists("cpus"),
	   "a detector without mode and cpus files is not given any (r=%d)", r);
	detector_close(&d);
}

static void test_unescape(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/sys/kernel/debug", "/sys/kernel/debug" },
		{ "/mnt/my\\040debug", "/mnt/my debug" },
		{ "a\\011b\\134c", "a\tb\\c" },
		{ "\\377", "\377" },
		{ "\\0401", " 1" },
		{ "x\\000y", "x" },
		{ "\\400", "\\400" },
		{ "\\/00", "\\/00" },
		{ "\\080", "\\080" },
		{ "\\0/0", "\\0/0" },
		{ "\\008", "\\008" },
		{ "\\00/", "\\00/" },
		{ "\\07", "\\07" },
		{ "end\\", "end\\" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		unescape_mount_path(buf);
		ok(strcmp(buf, cases[i].out) == 0, "mount path '%s' unescapes to '%s' (got '%s')",
		   cases[i].in, cases[i].out, buf);
	}
}

static int write_text(const char *path, const char *text)
{
	return write_file_len(path, text, strlen(text));
}

static void fake_file(const char *dir, const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rmdir(path);
	unlink(path);
	if (text)
		write_text(path, text);
	else
		mkdir(path, 0700); /* a directory: any write to it fails */
}

static void read_fake(const char *dir, const char *name, char *buf, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	strip(buf);
}

/*
 * Changes width and window from cur with the file broken made a directory
 * (every write to it fails), then reads the file probe into buf: returns
 * what detector_change returned.
 */
static int change_width_window(detector *d, detector_settings *cur, uint64_t width_us,
			       uint64_t window_us, const char *dir, const char *broken,
			       const char *probe, char *buf, size_t size)
{
	detector_settings want = *cur;
	int r;

	want.width_us = width_us;
	want.window_us = window_us;
	fake_file(dir, broken, NULL);
	r = detector_change(d, cur, &want);
	read_fake(dir, probe, buf, size);
	return r;
}

/*
 * detector_change orders width and window so that width < window holds
 * after every write: growing, the window goes first; shrinking, the width.
 * A write that fails (here: the file is a directory) shows the order, and
 * the returned state is what the detector holds.
 */
static void test_detector_change(void)
{
	char dir[] = "/tmp/hwlat-test-det-XXXXXX", buf[64];
	detector d = { .dir_fd = -1 };
	detector_settings cur, want;
	int r;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	fake_file(dir, "threshold", "10\n");
	fake_file(dir, "width", "100000\n");
	fake_file(dir, "window", "200000\n");
	fake_file(dir, "mode", "none [round-robin] per-cpu stop-machine\n");
	fake_file(dir, "cpus", "0-1\n");

	r = detector_open(&d, dir);
	ok(r == 0 && !d.on_debugfs, "fake detector opens (r=%d), not debugfs", r);
	r = detector_read_settings(&d, &cur);
	ok(r == 0 && cur.threshold_us == 10 && cur.width_us == 100000 &&
	   cur.window_us == 200000 && cur.has_mode &&
	   strcmp(cur.mode, "round-robin") == 0 && cur.has_cpus &&
	   strcmp(cur.cpus, "0-1") == 0,
	   "settings read, bracketed mode parsed (r=%d, mode=%s)", r, cur.mode);

	/* Growing with width unwritable: window must already be written. */
	r = change_width_window(&d, &cur, 300000, 600000, dir, "width", "window", buf, sizeof(buf));
	ok(r < 0 && strcmp(buf, "600000") == 0 && cur.window_us == 600000 &&
	   cur.width_us == 100000,
	   "growing: window written before width (r=%d, window=%s, state %" PRIu64 "/%" PRIu64 ")",
	   r, buf, cur.width_us, cur.window_us);

	/* Shrinking with window unwritable: width must already be written. */
	fake_file(dir, "width", "300000\n");
	cur.width_us = 300000;
	r = change_width_window(&d, &cur, 50000, 100000, dir, "window", "width", buf, sizeof(buf));
	ok(r < 0 && strcmp(buf, "50000") == 0 && cur.width_us == 50000 &&
	   cur.window_us == 600000,
	   "shrinking: width written before window (r=%d, width=%s)", r, buf);

	/* Unchanged settings are not written (their files are unwritable). */
	fake_file(dir, "window", "600000\n");
	want = cur;
	want.threshold_us = 20;
	want.width_us = 250000;
	snprintf(want.mode, sizeof(want.mode), "per-cpu");
	fake_file(dir, "cpus", NULL);
	r = detector_change(&d, &cur, &want);
	read_fake(dir, "mode", buf, sizeof(buf));
	ok(r == 0 && strcmp(buf, "per-cpu") == 0 && cur.threshold_us == 20 &&
	   cur.width_us == 250000 && strcmp(cur.mode, "per-cpu") == 0,
	   "only changed settings are written (r=%d, mode=%s)", r, buf);
	detector_close(&d);

	fake_file(dir, "cpus", "0\n");
	{
		const char *names[] = { "threshold", "width", "window", "mode", "cpus" };
		char path[512];
		size_t i;

		for (i = 0; i < 5; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
	}
	rmdir(dir);
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

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	/* The settings test_mode_file() and the next ones read besides mode. */
	put("threshold", "10\n");
	put("width", "100000\n");
	put("window", "200000\n");
	test_mode_file();
	test_mode_unreadable();
	test_change_without_files();
	test_unescape();
	test_detector_change();
	test_detector();
	test_short_write();
	test_debugfs_available();
	scratch_done();
	return tap_finish();
}
