/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The progress line of an interactive scan (service/progress.c), TAP
 * output. Proves that it is wanted on a terminal only; it says "1 sample"
 * and "2 samples", and "0s left" at and after the end of the duration.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progress.h"
#include "unit-test.h"

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

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_progress();
	scratch_done();
	return tap_finish();
}
