/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The end of a scan (service/scan-end.c), TAP output. Proves that
 * print_summary() fails when stdout had a write error, also when its last
 * flush succeeds, and prints the first line as users read it otherwise.
 */
#include <stdlib.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "scan-end.h"
#include "unit-test.h"


/*
 * print_summary() into a file with stdout's error flag set (an earlier
 * write failed) or clear; returns its result, the file's first line in
 * first.
 */
static int summary_to_file(bool earlier_error, char *first, size_t size)
{
	static const smi_tally tally;
	smi_total total = { .method = HWLAT_SMI_METHOD_SUM };
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .status = HWLAT_STATUS_COMPLETED,
		.duration_ns = 2 * NSEC_PER_SEC, .threshold_ns = 10000, .width_ns = 500000000,
		.window_ns = 1000000000, .mode = "round-robin", .cpus = "0-1",
		.hypervisor = "none", .clocksource = "tsc", .tsc_stable = "yes",
		.floor_unavailable = true,
	};
	char path[] = "/tmp/hwlat-test-statics-XXXXXX";
	int fd = mkstemp(path), saved, r;
	FILE *f;

	snprintf(total.reason, sizeof(total.reason), "not counted");
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (fd < 0 || saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		printf("Bail out! stdout to %s: %s\n", path, strerror(errno));
		exit(1);
	}
	clearerr(stdout);
	if (earlier_error)
		(void)fgetc(stdout); /* stdout cannot be read: sets its error flag */
	r = print_summary(&sum, 0, &tally, &total);
	clearerr(stdout);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	f = fdopen(fd, "r");
	first[0] = '\0';
	if (f) {
		rewind(f);
		if (!fgets(first, (int)size, f))
			first[0] = '\0';
		fclose(f);
	}
	unlink(path);
	return r;
}

/*
 * A summary whose stdout had a write error before the final flush is not
 * printed: the scan says "cannot print the summary on standard output"
 * even though the last flush went through.
 */
static void test_print_summary_error(void)
{
	static const char want[] = "hwlat-scan: scan 0123456789abcdef0123456789abcdef completed "
				   "after 2.000 s (threshold 10.0 us, width 500.00 ms, window 1000.00 ms, "
				   "mode round-robin, CPUs 0-1)\n";
	char first[512];
	int r;

	r = summary_to_file(false, first, sizeof(first));
	ok(r == 0 && strcmp(first, want) == 0, "a summary printed without error: 0 (r=%d)", r);
	if (strcmp(first, want) != 0)
		printf("#   got: %s", first);
	r = summary_to_file(true, first, sizeof(first));
	ok(r < 0 && strcmp(first, want) == 0,
	   "stdout's error flag set before the last flush, which succeeds: an error (r=%d)", r);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_print_summary_error();
	return tap_finish();
}
