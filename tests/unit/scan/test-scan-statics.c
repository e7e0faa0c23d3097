/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan's own (static) functions, tested directly: this file includes
 * service/hwlat-scan.c with its main() renamed, so each case calls the
 * function the program runs, not a copy. TAP output. Proves that:
 * - read_buffered() says 1 when the stream has ended (the detector was
 *   disabled: a locked scan then fails with "the detector's stream ended
 *   before the scan did"), 0 when it holds nothing more for now, and takes
 *   every line before the end;
 * - print_summary() fails when stdout had a write error, also when its
 *   last flush succeeds.
 */
#define main hwlat_scan_main
#include "hwlat-scan.c"
#undef main

#include "unit-test.h"

static void put_lines(int fd, const char *text)
{
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		printf("Bail out! write: %s\n", strerror(errno));
		exit(1);
	}
}

static void test_read_buffered(void)
{
	static scan s;
	line_reader lr = {};
	int fds[2], r;

	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) {
		printf("Bail out! pipe2: %s\n", strerror(errno));
		exit(1);
	}
	/* Windows from before a locked scan: counted as discarded, not journaled. */
	s.discard = true;
	put_lines(fds[1], "1 0 1.000000000 5 30 20 1 0 0 0\n2 0 1.000000000 5 30 20 1 0 0 0\n");
	r = read_buffered(&s, &lr, fds[0]);
	ok(r == 0 && s.discarded == 2, "two lines, the stream still open: 0 (r=%d), both taken "
	   "(%llu)", r, (unsigned long long)s.discarded);
	r = read_buffered(&s, &lr, fds[0]);
	ok(r == 0 && s.discarded == 2, "nothing more, the stream still open: 0 (r=%d)", r);
	put_lines(fds[1], "3 0 1.000000000 5 30 20 1 0 0 0\n");
	close(fds[1]);
	r = read_buffered(&s, &lr, fds[0]);
	ok(r == 1 && s.discarded == 3, "a last line, then the end of the stream: 1 (r=%d), the "
	   "line taken first (%llu)", r, (unsigned long long)s.discarded);
	close(fds[0]);
}

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
	test_read_buffered();
	test_print_summary_error();
	return tap_finish();
}
