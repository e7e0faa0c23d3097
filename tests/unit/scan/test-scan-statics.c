/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan's own (static) functions, tested directly: this file includes
 * service/hwlat-scan.c with its main() renamed, so each case calls the
 * function the program runs, not a copy. TAP output. Proves that:
 * - read_buffered() says 1 when the stream has ended (the detector was
 *   disabled: a locked scan then fails with "the detector's stream ended
 *   before the scan did"), 0 when it holds nothing more for now, and takes
 *   every line before the end.
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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_read_buffered();
	return tap_finish();
}
