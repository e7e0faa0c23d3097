/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Edges of service/detector.c that mutants showed untested
 * (tests/mutation): a mode file with a bare name is read as that name, one
 * with several bare names (no brackets) or an unclosed bracket is refused,
 * so is a name of 16 bytes, which does not fit mode[16] with its NUL; a
 * mode file that exists but cannot be read fails the read with its errno
 * (only a missing one means "no mode");
 * detector_change
 * writes mode and cpus only when both the detector and the wanted settings
 * have them, so a detector without those files is never given one; the
 * octal escapes of /proc/self/mounts are undone exactly (three digits,
 * the first 0-3, the others 0-7), anything else is kept as it is. On a
 * fake detector directory of regular files; TAP output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detector.h"
#include "unit-test.h"

static char dir[] = "/tmp/hwlat-test-det-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (!text)
		return;
	f = fopen(path, "we");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

static bool exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
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

	if (detector_open(&d, dir) < 0) {
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
	snprintf(path, sizeof(path), "%s/mode", dir);
	if (mkdir(path, 0755) < 0 || detector_open(&d, dir) < 0) {
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
	if (detector_open(&d, dir) < 0 || detector_read_settings(&d, &cur) < 0) {
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

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	put("threshold", "10\n");
	put("width", "100000\n");
	put("window", "200000\n");
	test_mode_file();
	test_mode_unreadable();
	test_change_without_files();
	test_unescape();

	for (const char *const *n = (const char *const[]){ "threshold", "width", "window",
							  "mode", "cpus", NULL }; *n; n++)
		put(*n, NULL);
	rmdir(dir);
	return tap_finish();
}
