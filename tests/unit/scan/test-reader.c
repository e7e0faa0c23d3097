/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reading of a backend's stream (service/reader.c), TAP output. Proves
 * that:
 * - reader_read_buffered() says 1 when the stream has ended (the detector
 *   was disabled: a locked scan then fails with "the detector's stream ended
 *   before the scan did"), 0 when it holds nothing more for now, and takes
 *   every line before the end;
 * - reader_read_until() with its deadline passed takes one read's worth of
 *   lines and returns 0 with the rest still in the stream (the monitor must
 *   get back to its loop during a storm), and loses none of them;
 * - reader_discard() counts what was buffered before the scan, counts none
 *   of it as a sample, and the line after it is the scan's first sample,
 *   journaled.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "reader.h"
#include "unit-test.h"

static void put_lines(int fd, const char *text)
{
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		printf("Bail out! write: %s\n", strerror(errno));
		exit(1);
	}
}

static void make_pipe(int fds[2])
{
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) {
		printf("Bail out! pipe2: %s\n", strerror(errno));
		exit(1);
	}
}

static int parse(void *backend, const char *line, hwlat_sample *ret)
{
	(void)backend;
	return stream_parse_line(line, ret);
}

static void test_read_buffered(void)
{
	static scan_tally t;
	scan_reader rd;
	int fds[2], r;

	make_pipe(fds);
	reader_init(&rd, &t, parse, NULL);
	/* Windows from before a locked scan: counted as discarded, not journaled. */
	t.discard = true;
	put_lines(fds[1], "1 0 1.000000000 5 30 20 1 0 0 0\n2 0 1.000000000 5 30 20 1 0 0 0\n");
	r = reader_read_buffered(&rd, fds[0]);
	ok(r == 0 && t.discarded == 2, "two lines, the stream still open: 0 (r=%d), both taken "
	   "(%llu)", r, (unsigned long long)t.discarded);
	r = reader_read_buffered(&rd, fds[0]);
	ok(r == 0 && t.discarded == 2, "nothing more, the stream still open: 0 (r=%d)", r);
	put_lines(fds[1], "3 0 1.000000000 5 30 20 1 0 0 0\n");
	close(fds[1]);
	r = reader_read_buffered(&rd, fds[0]);
	ok(r == 1 && t.discarded == 3, "a last line, then the end of the stream: 1 (r=%d), the "
	   "line taken first (%llu)", r, (unsigned long long)t.discarded);
	close(fds[0]);
}

static void test_read_until(void)
{
	static scan_tally t;
	scan_reader rd;
	int fds[2], r;
	unsigned long long first;

	make_pipe(fds);
	reader_init(&rd, &t, parse, NULL);
	t.discard = true;
	/* 400 lines of 32 bytes: more than one read of the 4096-byte buffer. */
	for (int i = 0; i < 400; i++)
		put_lines(fds[1], "1 0 1.000000000 5 30 20 1 0 0 0\n");
	r = reader_read_until(&rd, fds[0], 0);
	first = (unsigned long long)t.discarded;
	ok(r == 0 && first > 0 && first < 400,
	   "a deadline already passed: 0 (r=%d) after one read, %llu of 400 lines taken", r, first);
	r = reader_read_buffered(&rd, fds[0]);
	ok(r == 0 && t.discarded == 400, "the rest waited in the stream: all 400 taken (%llu)",
	   (unsigned long long)t.discarded);
	close(fds[0]);
	close(fds[1]);
}

static void test_discard(void)
{
	static scan_tally t;
	scan_reader rd;
	char path[] = "/tmp/hwlat-test-reader-XXXXXX";
	int fds[2], fd = mkstemp(path), r;

	if (fd < 0) {
		printf("Bail out! mkstemp: %s\n", strerror(errno));
		exit(1);
	}
	tally_init(&t, "0123456789abcdef0123456789abcdef", false, fdopen(fd, "w"));
	t.backend = "module";
	make_pipe(fds);
	reader_init(&rd, &t, parse, NULL);
	/* Two windows and a malformed line, all from before the scan. */
	put_lines(fds[1], "1 0 1.000000000 5 30 20 1 0 0 0\n2 0 1.000000000 5 30 20 1 0 0 0\nx\n");
	r = reader_discard(&rd, fds[0]);
	ok(r == 0 && t.discarded == 3 && t.samples == 0 && t.skipped_lines == 0 && !t.discard,
	   "discard: 0 (r=%d), three lines discarded (%llu), none a sample or a skipped line, "
	   "discarding over", r, (unsigned long long)t.discarded);
	/* The scan's first window: under module parameters its number is no gap. */
	put_lines(fds[1], "7 1 2.000000000 9 40 20 1 0 0 0\n");
	r = reader_read_buffered(&rd, fds[0]);
	fflush(t.export);
	ok(r == 0 && t.samples == 1 && t.last_seq == 7 && t.max_ns == 40 && t.seq_gaps == 0 &&
	   lseek(fd, 0, SEEK_END) > 0,
	   "after it, the next line is the scan's first sample, journaled (r=%d, samples %llu, "
	   "seq %llu)", r, (unsigned long long)t.samples, (unsigned long long)t.last_seq);
	close(fds[0]);
	close(fds[1]);
	fclose(t.export);
	tally_done(&t);
	unlink(path);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_read_buffered();
	test_read_until();
	test_discard();
	return tap_finish();
}
