/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module's stream (service/stream.c), TAP output. Proves that a stream
 * line is parsed exactly per docs/interfaces.md and every malformed variant
 * is refused; the line with smi_ns and the old one without parse, "-" is
 * unavailable (never 0) and nothing else may be "-"; a line of exactly
 * STREAM_LINE_MAX bytes parses and harms nothing of its caller; the line
 * reader reassembles lines cut across read() calls, skips a too long,
 * NUL-holding or cut last line, reports it once and keeps every other line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "stream.h"
#include "unit-test.h"

static void test_stream_line(void)
{
	static const char *const bad[] = {
		"",
		"1 0 1700000000.000000001 212400 1000 1 0 0",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 7 8",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 ",
		" 1 0 1700000000.000000001 212400 1000 1 0 0 1",
		"1  0 1700000000.000000001 212400 1000 1 0 0 1",
		"1\t0 1700000000.000000001 212400 1000 1 0 0 1",
		"1 0 1700000000.00000001 212400 1000 1 0 0 1",
		"1 0 1700000000.0000000001 212400 1000 1 0 0 1",
		"1 0 1700000000 212400 1000 1 0 0 1",
		"0 0 1700000000.000000001 212400 1000 1 0 0 1",
		"1 1024 1700000000.000000001 212400 1000 1 0 0 1",
		"1 0 1700000000.000000001 -5 1000 1 0 0 1",
		"1 0 1700000000.000000001 212400 1000 1 0 0 x",
		"1 0 1700000000.000000001 99999999999999999999 1000 1 0 0 1",
		"1 0 18446744073.709551616 212400 1000 1 0 0 1",
	};
	hwlat_sample s, untouched;
	size_t i;
	int r;

	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3", &s);
	ok(r == 0 && s.seq == 17 && s.cpu == 3 &&
	   s.timestamp_ns == UINT64_C(1700000000000000001) &&
	   s.inner_ns == 212400 && s.outer_ns == 1000 && s.count == 2 &&
	   s.nmi_count == 1 && s.nmi_ns == 5000 && s.smi_count == 3 &&
	   hwlat_sample_latency_ns(&s) == 212400,
	   "stream line parses into every field (r=%d)", r);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0x5a, sizeof(s));
		untouched = s;
		r = stream_parse_line(bad[i], &s);
		ok(r < 0 && memcmp(&s, &untouched, sizeof(s)) == 0,
		   "malformed stream line refused (r=%d): \"%s\"", r, bad[i]);
	}
}

struct collected {
	char lines[8][128];
	int n;
};

static int collect(const char *line, void *userdata)
{
	struct collected *c = userdata;

	if (c->n < 8)
		snprintf(c->lines[c->n], sizeof(c->lines[0]), "%s", line);
	c->n++;
	return 0;
}

static void test_line_reader(void)
{
	static line_reader lr;
	struct collected c = {};
	int p[2];
	long r1, r2, r3, r4;

	if (pipe(p) < 0) {
		ok(false, "pipe: %s", strerror(errno));
		return;
	}
	/* One line and a half, then the rest: a line cut across reads. */
	r1 = write(p[1], "1 a\n2 b", 7);
	r1 = line_reader_read(&lr, p[0], collect, &c);
	r2 = write(p[1], "b\n3 c\n", 6);
	r2 = line_reader_read(&lr, p[0], collect, &c);
	r3 = write(p[1], "4 partial", 9);
	r3 = line_reader_read(&lr, p[0], collect, &c);
	close(p[1]);
	r4 = line_reader_read(&lr, p[0], collect, &c);
	close(p[0]);
	ok(r1 == 7 && r2 == 6 && r3 == 9 && c.n == 3 &&
	   strcmp(c.lines[0], "1 a") == 0 && strcmp(c.lines[1], "2 bb") == 0 &&
	   strcmp(c.lines[2], "3 c") == 0,
	   "line reader joins a cut line: %d lines \"%s\" \"%s\" \"%s\"",
	   c.n, c.lines[0], c.lines[1], c.lines[2]);
	/* A partial line at EOF: see test-scan-edges.c (skipped, reported). */
	ok(r4 == 0 && c.n == 3, "a partial line at EOF ends the stream (got %ld, %d lines)", r4, c.n);
}

static void test_stream_lines(void)
{
	static const char *const bad[] = {
		/* 8 and 11 space-separated fields (valid: 9 and 10) */
		"1 0 1700000000.000000001 212400 1000 1 0 0",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 5 6",
		/* "-" only for smi_count and smi_ns */
		"1 0 1700000000.000000001 212400 1000 1 - 0 1 5",
		"1 0 1700000000.000000001 212400 1000 1 0 - 1 5",
		"1 - 1700000000.000000001 212400 1000 1 0 0 1 5",
		"1 0 1700000000.000000001 - 1000 1 0 0 1 5",
		/* not "-": signs, doubled, empty */
		"1 0 1700000000.000000001 212400 1000 1 0 0 -1 5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 -- 5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 -5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 ",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1  5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 x",
	};
	hwlat_sample s, untouched;
	int r;

	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3 210000", &s);
	ok(r == 0 && s.seq == 17 && s.cpu == 3 && s.inner_ns == 212400 && s.count == 2 &&
		   s.nmi_count == 1 && s.nmi_ns == 5000 && s.smi_count_known && s.smi_count == 3 &&
		   s.smi_ns_known && s.smi_ns == 210000,
	   "line with smi_ns: smi_count 3, smi_ns 210000 (r=%d)", r);

	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 3 && !s.smi_ns_known && s.smi_ns == 0,
	   "old line without smi_ns: smi_count 3, smi_ns unavailable (r=%d)", r);

	r = stream_parse_line("18 1 1700000000.000000002 30000 0 1 0 0 - -", &s);
	ok(r == 0 && s.seq == 18 && !s.smi_count_known && !s.smi_ns_known &&
		   s.smi_count == 0 && s.smi_ns == 0,
	   "\"- -\": smi_count and smi_ns unavailable (r=%d)", r);

	r = stream_parse_line("19 1 1700000000.000000002 30000 0 1 0 0 -", &s);
	ok(r == 0 && !s.smi_count_known && !s.smi_ns_known,
	   "old line with \"-\": both unavailable (r=%d)", r);

	r = stream_parse_line("20 0 1700000000.000000002 30000 0 1 0 0 0 0", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 0 && s.smi_ns_known && s.smi_ns == 0,
	   "\"0 0\" is a known zero, not unavailable (r=%d)", r);

	r = stream_parse_line("21 0 1700000000.000000002 30000 0 1 0 0 2 -", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 2 && !s.smi_ns_known,
	   "smi_count known, smi_ns \"-\" (r=%d)", r);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0x5a, sizeof(s));
		untouched = s;
		r = stream_parse_line(bad[i], &s);
		ok(r < 0 && memcmp(&s, &untouched, sizeof(s)) == 0,
		   "malformed line refused (r=%d): \"%s\"", r, bad[i]);
	}
}

/*
 * The module's skip records ("<seq> <cpu> <time> skipped <windows>"): the
 * CPU, the first window's time and the count, no figure of a window; and
 * what is not one.
 */
static void test_skip_records(void)
{
	static const char *const bad[] = {
		"5 1 1700000000.000000001 skipped 0",	/* at least 1 window */
		"5 1 1700000000.000000001 skip 3",	/* the word */
		"5 1 1700000000.000000001 Skipped 3",
		"5 1 1700000000.000000001 skipped -3",
		"5 1 1700000000.000000001 skipped",	/* 4 fields */
		"5 1 1700000000.000000001 skipped 3 4", /* 6 fields */
		"0 1 1700000000.000000001 skipped 3",	/* seq 0 */
		"5 1024 1700000000.000000001 skipped 3", /* CPU 1024 */
		"5 1 1700000000.0001 skipped 3",	/* nsec not 9 digits */
		"5 1 1700000000.000000001 3 skipped",
	};
	hwlat_sample s, untouched;
	int r;

	memset(&s, 0x5a, sizeof(s));
	r = stream_parse_line("5 1 1700000000.000000001 skipped 3", &s);
	ok(r == 0 && s.seq == 5 && s.cpu == 1 && s.timestamp_ns == 1700000000000000001ULL &&
		   s.skipped_windows == 3 && s.inner_ns == 0 && s.outer_ns == 0 && s.count == 0 &&
		   !s.smi_count_known,
	   "skip record: CPU 1, 3 windows from 1700000000.000000001, no window's figures (r=%d)",
	   r);
	r = stream_parse_line("6 1023 1700000000.999999999 skipped 18446744073709551615", &s);
	ok(r == 0 && s.cpu == 1023 && s.skipped_windows == UINT64_MAX,
	   "skip record at the edges: CPU 1023, 2^64-1 windows (r=%d)", r);
	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3 210000", &s);
	ok(r == 0 && s.skipped_windows == 0, "a window's line is no skip record (r=%d)", r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0x5a, sizeof(s));
		untouched = s;
		r = stream_parse_line(bad[i], &s);
		ok(r < 0 && memcmp(&s, &untouched, sizeof(s)) == 0,
		   "malformed skip record refused (r=%d): \"%s\"", r, bad[i]);
	}
}

struct seen {
	char lines[8][64];
	int n;
	char bad[8][64];
	line_problem why[8];
	int n_bad;
};

static int collect_seen(const char *line, void *userdata)
{
	struct seen *s = userdata;

	if (s->n < 8)
		snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s", line);
	s->n++;
	return 0;
}

static void collect_bad(line_problem why, const char *text, size_t len, void *userdata)
{
	struct seen *s = userdata;

	if (s->n_bad < 8) {
		snprintf(s->bad[s->n_bad], sizeof(s->bad[0]), "%.*s", (int)(len < 20 ? len : 20), text);
		s->why[s->n_bad] = why;
	}
	s->n_bad++;
}

/* Writes text to a pipe, reads it all with lr; returns the last result. */
static long feed(line_reader *lr, const char *text, size_t len, bool close_after, struct seen *s)
{
	int p[2];
	long r = 0;

	if (pipe(p) < 0)
		return -errno;
	if (write(p[1], text, len) != (ssize_t)len)
		r = -EIO;
	if (close_after)
		close(p[1]);
	while (r >= 0) {
		r = line_reader_read(lr, p[0], collect_seen, s);
		if (r == 0 || !close_after)
			break;
	}
	close(p[0]);
	if (!close_after)
		close(p[1]);
	return r;
}

static void test_line_reader_skips(void)
{
	static line_reader lr;
	static char big[3000];
	struct seen s = {};
	long r;

	lr = (line_reader){ .on_bad = collect_bad };
	r = feed(&lr, "1 a\n2 b\0c\n3 c\n4 cut", 20, true, &s);
	ok(r == 0 && s.n == 2 && strcmp(s.lines[0], "1 a") == 0 && strcmp(s.lines[1], "3 c") == 0,
	   "NUL line skipped, the others kept (%d lines, r=%ld)", s.n, r);
	ok(s.n_bad == 2 && s.why[0] == LINE_HAS_NUL && s.why[1] == LINE_CUT_AT_EOF &&
	   strcmp(s.bad[1], "4 cut") == 0 && lr.len == 0,
	   "NUL line and cut last line reported once each (%d: %d, %d '%s')",
	   s.n_bad, s.why[0], s.why[1], s.bad[1]);
	r = line_reader_read(&lr, -1, collect_seen, &s);
	ok(r == -EBADF && s.n_bad == 2, "after EOF nothing is reported again");

	/* 513 bytes without a newline, then its end, then a good line. */
	memset(&s, 0, sizeof(s));
	lr = (line_reader){ .on_bad = collect_bad };
	memset(big, 'x', sizeof(big));
	big[STREAM_LINE_MAX] = 'y';
	r = feed(&lr, big, STREAM_LINE_MAX + 1, false, &s);
	ok(r == STREAM_LINE_MAX + 1 && s.n_bad == 1 && s.why[0] == LINE_TOO_LONG && lr.discarding,
	   "a line over %d bytes is reported as soon as it is too long", STREAM_LINE_MAX);
	r = feed(&lr, "zz\n5 e\n", 7, true, &s);
	ok(r == 0 && s.n == 1 && strcmp(s.lines[0], "5 e") == 0 && s.n_bad == 1,
	   "its rest is dropped up to its newline, once; the next line is kept (%d lines '%s', %d bad)",
	   s.n, s.lines[0], s.n_bad);

	/* Exactly STREAM_LINE_MAX bytes is a line; one more is too long. */
	memset(&s, 0, sizeof(s));
	lr = (line_reader){ .on_bad = collect_bad };
	big[STREAM_LINE_MAX] = '\n';
	big[2 * STREAM_LINE_MAX + 2] = '\n';
	r = feed(&lr, big, 2 * STREAM_LINE_MAX + 3, true, &s);
	ok(r == 0 && s.n == 1 && s.n_bad == 1 && s.why[0] == LINE_TOO_LONG,
	   "%d bytes is a line, %d too long (%d lines, %d bad)", STREAM_LINE_MAX,
	   STREAM_LINE_MAX + 1, s.n, s.n_bad);
}

/*
 * Calls stream_parse_line() with six values live across the call, which
 * the compiler keeps in the callee-saved registers (rbx, rbp, r12-r15 on
 * x86-64): a parser that writes past its own copy of the line overwrites
 * the registers it saved next to it, and the caller finds its values
 * changed. Returns whether they all came back.
 */
static __attribute__((noinline)) bool parse_keeps_caller(const char *line, hwlat_sample *s,
							  int *r, const uint64_t in[6])
{
	uint64_t a = in[0] * 3, b = in[1] * 3, c = in[2] * 3, d = in[3] * 3, e = in[4] * 3,
		 f = in[5] * 3;

	*r = stream_parse_line(line, s);
	return a == in[0] * 3 && b == in[1] * 3 && c == in[2] * 3 && d == in[3] * 3 &&
	       e == in[4] * 3 && f == in[5] * 3;
}

/*
 * A stream line of exactly STREAM_LINE_MAX bytes (the longest the line
 * reader passes on, leading zeros in its seq) parses to the sample it says,
 * leaves the caller's line as it was and everything of the caller intact:
 * the parser's copy has room for the line and its NUL.
 */
static void test_stream_line_max(void)
{
	static const char tail[] = "17 3 1700000000.000000001 212400 1000 2 1 5000 3 210000";
	static const uint64_t in[6] = { 0x1111111111111111, 0x2323232323232323,
					0x4545454545454545, 0x6767676767676767,
					0x0101010101010101, 0x7f7f7f7f7f7f7f7f };
	char line[STREAM_LINE_MAX + 1], copy[STREAM_LINE_MAX + 1];
	size_t pad = STREAM_LINE_MAX - strlen(tail);
	hwlat_sample s = {};
	bool kept;
	int r = -1;

	memset(line, '0', pad);
	memcpy(line + pad, tail, sizeof(tail));
	memcpy(copy, line, sizeof(line));
	kept = parse_keeps_caller(line, &s, &r, in);
	ok(strlen(line) == STREAM_LINE_MAX && r == 0 && s.seq == 17 && s.cpu == 3 &&
	   s.timestamp_ns == 1700000000000000001ULL && s.inner_ns == 212400 &&
	   s.outer_ns == 1000 && s.count == 2 && s.nmi_count == 1 && s.nmi_ns == 5000 &&
	   s.smi_count == 3 && s.smi_ns == 210000 && s.smi_count_known && s.smi_ns_known,
	   "a %d-byte stream line is sample 17 of CPU 3, inner 212400 ns (r=%d, seq %" PRIu64
	   ", cpu %u)", STREAM_LINE_MAX, r, s.seq, s.cpu);
	ok(kept && memcmp(line, copy, sizeof(line)) == 0,
	   "parsing it leaves the caller's line and registers as they were (registers %s)",
	   kept ? "kept" : "changed");
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_stream_line();
	test_line_reader();
	test_stream_lines();
	test_skip_records();
	test_line_reader_skips();
	test_stream_line_max();
	return tap_finish();
}
