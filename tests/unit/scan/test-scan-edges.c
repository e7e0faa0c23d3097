/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of hwlat-scan's edges (issues 13 and 17), TAP output. Proves
 * that: poll() timeouts towards any allowed deadline stay in 0..max and
 * never end the wait early; the line reader skips a too long, NUL-holding
 * or cut last line, reports it once and keeps every other line; a stream
 * line of exactly STREAM_LINE_MAX bytes parses and harms nothing of its
 * caller; the summary
 * of a scan whose max equals the hard limit passes (PRIORITY 6, no "exceeds"),
 * 1 ns above fails (PRIORITY 4), a failed scan is PRIORITY 3 (err); the hard
 * limit takes nanoseconds; a duration of 1 ms is the shortest; "2-2" is CPU
 * 2; a config file may start with a UTF-8 BOM, a directory is "Is a
 * directory"; drop-ins apply in lexical order; spans print exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deadline.h"
#include "hwlat-journal.h"
#include "journal-entry.h"
#include "parse.h"
#include "progress.h"
#include "scan-config.h"
#include "stream.h"
#include "unit-test.h"

static const char *field_or_missing(const journal_entry *e, const char *name, char *buf,
				    size_t size)
{
	const char *v = entry_field(e, name, buf, size);

	return v ? v : "(missing)";
}

static void test_poll_timeout(void)
{
	const uint64_t day = 86400 * NSEC_PER_SEC, now = 1000 * NSEC_PER_SEC;
	static const struct {
		uint64_t left_ns;
		int max_ms, want;
	} cases[] = {
		{ 0, POLL_MAX_WAIT_MS, 0 },
		{ 1, POLL_MAX_WAIT_MS, 1 }, /* rounded up: never early */
		{ NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 1 },
		{ NSEC_PER_MSEC + 1, POLL_MAX_WAIT_MS, 2 },
		{ 59999 * NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 59999 },
		{ 60001 * NSEC_PER_MSEC, POLL_MAX_WAIT_MS, 60000 },
		{ 25 * day, POLL_MAX_WAIT_MS, 60000 },   /* > INT_MAX ms */
		{ 50 * day, POLL_MAX_WAIT_MS, 60000 },   /* > UINT32_MAX ms */
		{ 366 * day, POLL_MAX_WAIT_MS, 60000 },
		{ 5 * NSEC_PER_SEC, 1000, 1000 },        /* progress: each second */
		{ 500 * NSEC_PER_MSEC, 1000, 500 },
		{ 5 * NSEC_PER_SEC, 0, 5000 },           /* bad max: the default */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = poll_timeout_ms(now, now + cases[i].left_ns, cases[i].max_ms);

		ok(got == cases[i].want, "poll timeout for %" PRIu64 " ns left, max %d ms: %d (want %d)",
		   cases[i].left_ns, cases[i].max_ms, got, cases[i].want);
	}
	ok(poll_timeout_ms(now + 1, now, POLL_MAX_WAIT_MS) == 0, "poll timeout after the deadline: 0");
}

struct seen {
	char lines[8][64];
	int n;
	char bad[8][64];
	line_problem why[8];
	int n_bad;
};

static int collect(const char *line, void *userdata)
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
		r = line_reader_read(lr, p[0], collect, s);
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
	r = line_reader_read(&lr, -1, collect, &s);
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

static void test_summary_verdict(void)
{
	static journal_entry e;
	static const struct {
		const char *status;
		uint64_t limit;
		const char *prio;
		bool over;
	} cases[] = {
		{ HWLAT_STATUS_COMPLETED, 212399, "4", true },   /* limit - 1 */
		{ HWLAT_STATUS_COMPLETED, 212400, "6", false },  /* limit == max passes */
		{ HWLAT_STATUS_COMPLETED, 212401, "6", false },  /* limit + 1 */
		{ HWLAT_STATUS_COMPLETED, 0, "6", false },       /* no limit */
		{ HWLAT_STATUS_INTERRUPTED, 212400, "5", false },
		{ HWLAT_STATUS_INTERRUPTED, 212399, "4", true },
		{ HWLAT_STATUS_FAILED, 212399, "3", true },      /* failed: err first */
		{ HWLAT_STATUS_FAILED, 0, "3", false },
	};
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .threshold_ns = 10000,
		.width_ns = 500000000, .window_ns = 1000000000, .mode = "round-robin",
		.cpus = "0-1", .kernel = "6.1.0-test", .cpu_model = "Test CPU",
		.clock = "tsc", .duration_ns = 1500000000, .samples = 2, .max_ns = 212400,
		.skipped_lines = 0,
	};
	char buf[512], prio[16];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *msg;

		sum.status = cases[i].status;
		sum.hardlimit_ns = cases[i].limit;
		journal_entry_summary(&e, &sum);
		snprintf(prio, sizeof(prio), "%.15s", field_or_missing(&e, "PRIORITY", buf, sizeof(buf)));
		msg = field_or_missing(&e, "MESSAGE", buf, sizeof(buf));
		ok(strcmp(prio, cases[i].prio) == 0 &&
		   (strstr(msg, ", exceeds hard limit 212.4 us") != NULL) == cases[i].over,
		   "summary %s, max 212400 ns, hard limit %" PRIu64 " ns: PRIORITY=%s (want %s), '%s'",
		   cases[i].status, cases[i].limit, prio, cases[i].prio, msg);
	}
	sum.status = HWLAT_STATUS_FAILED;
	sum.hardlimit_ns = 0;
	sum.skipped_lines = 3;
	journal_entry_summary(&e, &sum);
	ok(strcmp(field_or_missing(&e, HWLAT_F_SKIPPED_LINES, buf, sizeof(buf)), "3") == 0 &&
	   strstr(field_or_missing(&e, "MESSAGE", buf, sizeof(buf)), ", 3 unreadable stream lines skipped"),
	   "summary: HWLAT_SKIPPED_LINES=3, said in MESSAGE");
}

static void test_config_edges(void)
{
	static const struct {
		const char *key, *value;
		int r;
		uint64_t ns;
	} cases[] = {
		{ "hardlimit", "1500ns", 0, 1500 },
		{ "hardlimit", "1ns", 0, 1 },
		{ "hardlimit", "0ns", -ERANGE, 0 },
		{ "hardlimit", "100", 0, 100000 }, /* bare number: us */
		{ "duration", "1ms", 0, NSEC_PER_MSEC },
		{ "duration", "999999ns", -ERANGE, 0 },
		{ "duration", "500us", -ERANGE, 0 },
		{ "duration", "366d", 0, 366 * 86400 * NSEC_PER_SEC },
		{ "duration", "366d1ns", -EINVAL, 0 },
	};
	scan_config c;
	cpu_set_bits m;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got;

		config_init(&c);
		r = config_set(&c, cases[i].key, cases[i].value, "test");
		got = strcmp(cases[i].key, "hardlimit") == 0 ? c.hardlimit_ns : c.duration_ns;
		ok(r == cases[i].r && (r < 0 || got == cases[i].ns),
		   "config %s = %s: r=%d (want %d), %" PRIu64 " ns", cases[i].key, cases[i].value,
		   r, cases[i].r, got);
	}
	config_init(&c);
	r = config_set(&c, "cpus", "2-2", "test");
	ok(r == 0 && strcmp(c.cpus, "2") == 0 && parse_cpulist("2-2", &m) == 0 &&
	   cpu_set_has(&m, 2) && !cpu_set_has(&m, 1) && !cpu_set_has(&m, 3),
	   "cpus 2-2 is CPU 2 alone (\"%s\")", c.cpus);
}

static void test_config_files(void)
{
	char dir[] = "/tmp/hwlat-test-edges-XXXXXX", path[256], dropins[300], p[400];
	scan_config c, before;
	char span[32];
	int r;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/scan.conf", dir);
	write_file_len(path, "\xef\xbb\xbfthreshold = 20\n", 18);
	config_init(&c);
	r = config_load(&c, path, true);
	ok(r == 0 && c.threshold_ns == 20000, "a UTF-8 BOM before the first key is skipped (r=%d)", r);
	write_file_len(path, "threshold = 20\n\xef\xbb\xbfwidth = 1\n", 30);
	config_init(&c);
	ok(config_load(&c, path, true) < 0, "a BOM on a later line is not skipped");

	config_init(&c);
	before = c;
	r = config_load(&c, dir, true);
	ok(r == -EISDIR && memcmp(&c, &before, sizeof(c)) == 0, "a directory as config file: -EISDIR (r=%d)", r);

	write_file_len(path, "threshold = 20\nwidth = 300ms\n", 29);
	snprintf(dropins, sizeof(dropins), "%s%s", path, CONFIG_DROPIN_SUFFIX);
	mkdir(dropins, 0755);
	snprintf(p, sizeof(p), "%s/b.conf", dropins);
	write_file_len(p, "threshold = 40\n", 15);
	snprintf(p, sizeof(p), "%s/a.conf", dropins);
	write_file_len(p, "threshold = 30\nwidth = 200ms\n", 29);
	snprintf(p, sizeof(p), "%s/c.conf.disabled", dropins);
	write_file_len(p, "threshold = 50\n", 15);
	config_init(&c);
	r = config_load(&c, path, true);
	ok(r == 0 && c.threshold_ns == 40000 && c.width_ns == 200 * NSEC_PER_MSEC &&
	   strstr(c.origin[CONFIG_THRESHOLD], "/b.conf:1") && strstr(c.origin[CONFIG_WIDTH], "/a.conf:2"),
	   "drop-ins a.conf then b.conf after the file, later wins, origins kept (%s, %s)",
	   c.origin[CONFIG_THRESHOLD], c.origin[CONFIG_WIDTH]);
	snprintf(p, sizeof(p), "%s/d.conf", dropins);
	write_file_len(p, "mode = fast\n", 12);
	config_init(&c);
	before = c;
	r = config_load(&c, path, true);
	ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0, "a bad drop-in: nothing applied (r=%d)", r);

	ok(strcmp(format_span_exact(90 * NSEC_PER_SEC, span, sizeof(span)), "90s") == 0 &&
	   strcmp(format_span_exact(120 * NSEC_PER_SEC, span, sizeof(span)), "2m") == 0 &&
	   strcmp(format_span_exact(1500, span, sizeof(span)), "1500ns") == 0 &&
	   strcmp(format_span_exact(366 * 86400 * NSEC_PER_SEC, span, sizeof(span)), "366d") == 0 &&
	   strcmp(format_span_exact(500 * NSEC_PER_MSEC, span, sizeof(span)), "500ms") == 0,
	   "spans print in the largest exact unit");
	ok(strcmp(format_seconds(59, span, sizeof(span)), "59s") == 0 &&
	   strcmp(format_seconds(125, span, sizeof(span)), "2m 05s") == 0 &&
	   strcmp(format_seconds(3605, span, sizeof(span)), "1h 00m 05s") == 0 &&
	   strcmp(format_seconds(366 * 86400 + 1, span, sizeof(span)), "366d 00h 00m 01s") == 0,
	   "progress times: 59s, 2m 05s, 1h 00m 05s, 366d 00h 00m 01s");

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p) != 0)
		ok(false, "cleanup of %s", dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_poll_timeout();
	test_line_reader_skips();
	test_stream_line_max();
	test_summary_verdict();
	test_config_edges();
	test_config_files();
	return tap_finish();
}
