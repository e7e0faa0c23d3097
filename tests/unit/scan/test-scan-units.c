/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the pure parts of hwlat-scan, TAP output. Proves that:
 * lib/parse.c parses strictly (good values, junk, signs, overflow) and
 * leaves *ret untouched on failure, formats cpulists and latencies as
 * documented; a stream line is parsed exactly per docs/interfaces.md and
 * every malformed variant is refused; the line reader reassembles lines cut
 * across read() calls; config values, keys, files and the width/window
 * bounds are validated; a sample and a summary map to journal entries that
 * carry exactly the fields of docs/interfaces.md section 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan-config.h"
#include "detector.h"
#include "hwlat-journal.h"
#include "journal-entry.h"
#include "parse.h"
#include "stream.h"
#include "unit-test.h"

static int write_text(const char *path, const char *text)
{
	return write_file_len(path, text, strlen(text));
}

#define SENTINEL UINT64_C(0xdeadbeef)

static void test_parse_u64(void)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "42", 0, 42 },
		{ "007", 0, 7 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1a", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1.0", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = SENTINEL;
		int r = parse_u64(cases[i].s, &v);

		ok(r == cases[i].r && v == (r == 0 ? cases[i].v : SENTINEL),
		   "parse_u64(\"%s\") = %d, %" PRIu64 " (want %d, %" PRIu64 ")",
		   cases[i].s, r, v, cases[i].r, cases[i].v);
	}
}

static void test_parse_time_span(void)
{
	static const struct {
		const char *s;
		uint64_t unit;
		int r;
		uint64_t v;
	} cases[] = {
		{ "500", NSEC_PER_USEC, 0, 500000 },
		{ "500", NSEC_PER_SEC, 0, 500 * NSEC_PER_SEC },
		{ "1.5ms", NSEC_PER_USEC, 0, 1500000 },
		{ "1.5", NSEC_PER_SEC, 0, 1500000000 },
		{ "250000.0", NSEC_PER_USEC, 0, 250000000 },
		{ "7ns", NSEC_PER_SEC, 0, 7 },
		{ "7us", NSEC_PER_SEC, 0, 7000 },
		{ "2s", NSEC_PER_USEC, 0, 2 * NSEC_PER_SEC },
		{ "10 ms", NSEC_PER_USEC, 0, 10 * NSEC_PER_MSEC },
		{ "1m", NSEC_PER_USEC, 0, 60 * NSEC_PER_SEC },
		{ "1h", NSEC_PER_USEC, 0, 3600 * NSEC_PER_SEC },
		{ "1d", NSEC_PER_USEC, 0, 86400 * NSEC_PER_SEC },
		{ "0.000000001s", NSEC_PER_USEC, 0, 1 },
		{ "18446744073709551615ns", NSEC_PER_USEC, 0, UINT64_MAX },
		{ "18446744073709551616ns", NSEC_PER_USEC, -ERANGE, 0 },
		{ "213503d", NSEC_PER_USEC, 0, UINT64_C(213503) * 86400 * NSEC_PER_SEC },
		{ "213504d", NSEC_PER_USEC, -ERANGE, 0 },
		{ "18446744073709551615", NSEC_PER_USEC, -ERANGE, 0 },
		{ "0.5ns", NSEC_PER_USEC, -EINVAL, 0 },
		{ "1.", NSEC_PER_USEC, -EINVAL, 0 },
		{ ".5ms", NSEC_PER_USEC, -EINVAL, 0 },
		{ "5x", NSEC_PER_USEC, -EINVAL, 0 },
		{ "5 sec", NSEC_PER_USEC, -EINVAL, 0 },
		{ "ms", NSEC_PER_USEC, -EINVAL, 0 },
		{ "", NSEC_PER_USEC, -EINVAL, 0 },
		{ "1 ", NSEC_PER_USEC, -EINVAL, 0 },
		{ " 1", NSEC_PER_USEC, -EINVAL, 0 },
		{ "-1s", NSEC_PER_USEC, -EINVAL, 0 },
		{ "1ms5", NSEC_PER_USEC, -EINVAL, 0 },
		{ "1.0000000000000000001s", NSEC_PER_USEC, -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = SENTINEL;
		int r = parse_time_span(cases[i].s, cases[i].unit, &v);

		ok(r == cases[i].r && v == (r == 0 ? cases[i].v : SENTINEL),
		   "parse_time_span(\"%s\", %" PRIu64 ") = %d, %" PRIu64 " (want %d, %" PRIu64 ")",
		   cases[i].s, cases[i].unit, r, v, cases[i].r, cases[i].v);
	}
}

static void test_cpulist(void)
{
	static const struct {
		const char *s;
		int r;
		const char *canonical;
	} cases[] = {
		{ "0", 0, "0" },
		{ "0-3,6", 0, "0-3,6" },
		{ "6,0-3", 0, "0-3,6" },
		{ "1,2,3,5", 0, "1-3,5" },
		{ "0-1023", 0, "0-1023" },
		{ "1023", 0, "1023" },
		{ "1024", -ERANGE, NULL },
		{ "0-1024", -ERANGE, NULL },
		{ "99999999999999999999999", -ERANGE, NULL },
		{ "3-1", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ "1,,2", -EINVAL, NULL },
		{ "1,", -EINVAL, NULL },
		{ ",1", -EINVAL, NULL },
		{ "1-", -EINVAL, NULL },
		{ "a", -EINVAL, NULL },
		{ " 1", -EINVAL, NULL },
		{ "1 ", -EINVAL, NULL },
		{ "-1", -EINVAL, NULL },
	};
	cpu_set_bits m, untouched;
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		memset(&m, 0xa5, sizeof(m));
		untouched = m;
		r = parse_cpulist(cases[i].s, &m);
		if (cases[i].r == 0) {
			format_cpulist(&m, buf, sizeof(buf));
			ok(r == 0 && strcmp(buf, cases[i].canonical) == 0,
			   "parse_cpulist(\"%s\") = %d, formats as \"%s\" (want \"%s\")",
			   cases[i].s, r, r == 0 ? buf : "", cases[i].canonical);
		} else {
			ok(r == cases[i].r && memcmp(&m, &untouched, sizeof(m)) == 0,
			   "parse_cpulist(\"%s\") = %d (want %d), mask untouched",
			   cases[i].s, r, cases[i].r);
		}
	}

	parse_cpulist("0-3,6", &m);
	ok(cpu_set_has(&m, 3) && cpu_set_has(&m, 6) && !cpu_set_has(&m, 4) &&
	   !cpu_set_has(&m, 5000), "cpu_set_has on 0-3,6");

	parse_cpulist("0-3,6,10-12", &m);
	format_cpulist(&m, buf, 8);
	ok(strcmp(buf, "0-3,6") == 0,
	   "format_cpulist into 8 bytes cuts at a whole element: \"%s\"", buf);
	memset(&m, 0, sizeof(m));
	format_cpulist(&m, buf, sizeof(buf));
	ok(strcmp(buf, "") == 0, "empty set formats as \"\": \"%s\"", buf);
}

static void test_format_latency(void)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} cases[] = {
		{ 0, "0 ns" },
		{ 850, "850 ns" },
		{ 999, "999 ns" },
		{ 1000, "1.0 us" },
		{ 212400, "212.4 us" },
		{ 212449, "212.4 us" },
		{ 212450, "212.5 us" },
		{ 999949, "999.9 us" },
		{ 999960, "1.00 ms" },
		{ 20310000, "20.31 ms" },
		{ 1500000000, "1500.00 ms" },
		{ UINT64_MAX, "18446744073709.55 ms" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		format_latency(cases[i].ns, buf, sizeof(buf));
		ok(strcmp(buf, cases[i].s) == 0,
		   "format_latency(%" PRIu64 ") = \"%s\" (want \"%s\")",
		   cases[i].ns, buf, cases[i].s);
	}
}

static void test_strip(void)
{
	char a[] = " \t key = value \n", b[] = "   ", c[] = "x";

	ok(strcmp(strip(a), "key = value") == 0, "strip: \"%s\"", a);
	ok(strcmp(strip(b), "") == 0, "strip of blanks: \"%s\"", b);
	ok(strcmp(strip(c), "x") == 0, "strip of nothing: \"%s\"", c);
}

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

static void test_config(void)
{
	static const struct {
		const char *key, *value;
		bool good;
	} cases[] = {
		{ "duration", "60", true },
		{ "duration", "1.5h", true },
		{ "duration", "0", false },
		{ "duration", "367d", false },
		{ "duration", "soon", false },
		{ "threshold", "10", true },
		{ "threshold", "10us", true },
		{ "threshold", "0", false },
		{ "threshold", "1.5us", false },
		{ "threshold", "-3", false },
		{ "threshold", "1s", true },
		{ "threshold", "1000001", false },
		{ "width", "500000", true },
		{ "width", "1s", true },
		{ "width", "1000001", false },
		{ "window", "1000000", true },
		{ "window", "", false },
		{ "window", "10m", true },
		{ "window", "600000001", false },
		{ "mode", "per-cpu", true },
		{ "mode", "stop-machine", true },
		{ "mode", "fast", false },
		{ "cpus", "0-3,6", true },
		{ "cpus", "1024", false },
		{ "cpus", "", false },
		{ "hardlimit", "100", true },
		{ "hardlimit", "0", false },
		{ "colour", "blue", false },
	};
	scan_config c, before;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		config_init(&c);
		before = c;
		r = config_set(&c, cases[i].key, cases[i].value, "test");
		if (cases[i].good)
			ok(r == 0, "config %s = \"%s\" accepted (r=%d)",
			   cases[i].key, cases[i].value, r);
		else
			ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0,
			   "config %s = \"%s\" refused, config unchanged (r=%d)",
			   cases[i].key, cases[i].value, r);
	}

	config_init(&c);
	config_set(&c, "width", "0.5s", "test");
	config_set(&c, "cpus", "6,0-3", "test");
	ok(c.width_ns == 500 * NSEC_PER_MSEC && c.set[CONFIG_WIDTH] &&
	   strcmp(c.cpus, "0-3,6") == 0 && !c.set[CONFIG_WINDOW],
	   "config stores ns and canonical cpulist (%" PRIu64 ", \"%s\")",
	   c.width_ns, c.cpus);

	/* width against window: given, or the detector's current value. */
	config_init(&c);
	config_set(&c, "width", "1000000", "test");
	config_set(&c, "window", "1000000", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "width == window refused");
	config_set(&c, "width", "950000", "test");
	ok(config_check_bounds(&c, 0, 0) == 0, "width 95%% of window accepted");
	config_set(&c, "width", "950001", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "width above 95%% of window refused");
	config_init(&c);
	config_set(&c, "width", "9000", "test");
	config_set(&c, "window", "9999", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "window - width < 1 ms refused");
	config_init(&c);
	config_set(&c, "width", "600000", "test");
	ok(config_check_bounds(&c, 500 * NSEC_PER_MSEC, 600 * NSEC_PER_MSEC) < 0,
	   "width >= current window refused");
	ok(config_check_bounds(&c, 500 * NSEC_PER_MSEC, 1000 * NSEC_PER_MSEC) == 0,
	   "width < current window accepted");
}

static void test_config_file(void)
{
	char path[] = "/tmp/hwlat-test-config-XXXXXX";
	scan_config c, before;
	int fd, r;

	fd = mkstemp(path);
	if (fd < 0) {
		ok(false, "mkstemp: %s", strerror(errno));
		return;
	}
	close(fd);

	write_text(path, "# comment\n\n  duration = 30s \nthreshold=20\n"
			 "width = 300000\nwindow = 600000\nmode = per-cpu\n"
			 "cpus = 0\nhardlimit = 1ms\n");
	config_init(&c);
	r = config_load_file(&c, path, true);
	ok(r == 0 && c.duration_ns == 30 * NSEC_PER_SEC &&
	   c.threshold_ns == 20000 && c.width_ns == 300 * NSEC_PER_MSEC &&
	   c.window_ns == 600 * NSEC_PER_MSEC && strcmp(c.mode, "per-cpu") == 0 &&
	   strcmp(c.cpus, "0") == 0 && c.hardlimit_ns == NSEC_PER_MSEC,
	   "config file with every key loads (r=%d)", r);

	static const char *const bad[] = {
		"threshold = 20\nfoo = 1\n",
		"threshold = 20\nthreshold = 30\n",
		"threshold 20\n",
		" = 20\n",
		"threshold = 20\nwidth = abc\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(path, bad[i]);
		config_init(&c);
		before = c;
		r = config_load_file(&c, path, true);
		ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0,
		   "bad config file %zu refused, nothing applied (r=%d)", i, r);
	}

	unlink(path);
	config_init(&c);
	ok(config_load_file(&c, path, false) == 0,
	   "missing optional config file is fine");
	ok(config_load_file(&c, path, true) == -ENOENT,
	   "missing explicit config file is -ENOENT");
}

/* Returns the value of field name in e, or NULL. */
static void test_entries(void)
{
	static journal_entry e;
	static const char *const sample_fields[][2] = {
		{ "MESSAGE_ID", HWLAT_SAMPLE_MESSAGE_ID },
		{ "MESSAGE", "hardware latency 212.4 us on CPU 3 (SMI, NMI)" },
		{ "PRIORITY", "4" },
		{ HWLAT_F_SCAN_ID, "0123456789abcdef0123456789abcdef" },
		{ HWLAT_F_SEQ, "17" },
		{ HWLAT_F_CPU, "3" },
		{ HWLAT_F_INNER_NS, "1000" },
		{ HWLAT_F_OUTER_NS, "212400" },
		{ HWLAT_F_LATENCY_NS, "212400" },
		{ HWLAT_F_COUNT, "2" },
		{ HWLAT_F_NMI_COUNT, "1" },
		{ HWLAT_F_NMI_NS, "5000" },
		{ HWLAT_F_SMI_COUNT, "3" },
		{ HWLAT_F_TIMESTAMP_NS, "1700000000000000001" },
		{ HWLAT_F_THRESHOLD_NS, "10000" },
	};
	hwlat_sample s = {
		.seq = 17, .cpu = 3, .timestamp_ns = UINT64_C(1700000000000000001),
		.inner_ns = 1000, .outer_ns = 212400, .count = 2,
		.nmi_count = 1, .nmi_ns = 5000, .smi_count_known = true, .smi_count = 3,
	};
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef",
		.status = HWLAT_STATUS_INTERRUPTED, .threshold_ns = 10000,
		.width_ns = 500000000, .window_ns = 1000000000, .hardlimit_ns = 0,
		.mode = "round-robin", .cpus = "0-1", .kernel = "6.1.0-test",
		.cpu_model = "Test CPU", .clock = "tsc", .start_ns = 5,
		.duration_ns = 1500000000, .samples = 2, .max_ns = 212400,
		.dropped = 1, .smi_total = 3, .nmi_total = 1, .floor_ns = 45,
	};
	static const char *const summary_fields[] = {
		HWLAT_F_SCAN_ID, HWLAT_F_STATUS, HWLAT_F_THRESHOLD_NS,
		HWLAT_F_WIDTH_NS, HWLAT_F_WINDOW_NS, HWLAT_F_HARDLIMIT_NS,
		HWLAT_F_MODE, HWLAT_F_CPUS, HWLAT_F_KERNEL, HWLAT_F_CPU_MODEL,
		HWLAT_F_CLOCK, HWLAT_F_START_NS, HWLAT_F_DURATION_NS,
		HWLAT_F_SAMPLES, HWLAT_F_MAX_NS, HWLAT_F_DROPPED,
		HWLAT_F_SMI_TOTAL, HWLAT_F_NMI_TOTAL, HWLAT_F_FLOOR_NS,
	};
	char buf[256];
	const char *v;
	size_t i;
	int r;

	r = journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(r == 0, "sample entry builds (r=%d)", r);
	for (i = 0; i < sizeof(sample_fields) / sizeof(sample_fields[0]); i++) {
		v = entry_field(&e, sample_fields[i][0], buf, sizeof(buf));
		ok(v && strcmp(v, sample_fields[i][1]) == 0,
		   "sample %s=%s (want %s)", sample_fields[i][0], v ? v : "(missing)",
		   sample_fields[i][1]);
	}

	s.smi_count = 0;
	s.nmi_count = 0;
	s.outer_ns = 850;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	v = entry_field(&e, "MESSAGE", buf, sizeof(buf));
	ok(v && strcmp(v, "hardware latency 1.0 us on CPU 3") == 0,
	   "sample without attribution: MESSAGE=%s", v ? v : "(missing)");
	v = entry_field(&e, "PRIORITY", buf, sizeof(buf));
	ok(v && strcmp(v, "5") == 0, "sample under threshold is a notice: PRIORITY=%s",
	   v ? v : "(missing)");

	r = journal_entry_summary(&e, &sum);
	ok(r == 0, "summary entry builds (r=%d)", r);
	v = entry_field(&e, "MESSAGE_ID", buf, sizeof(buf));
	ok(v && strcmp(v, HWLAT_SUMMARY_MESSAGE_ID) == 0, "summary MESSAGE_ID=%s",
	   v ? v : "(missing)");
	for (i = 0; i < sizeof(summary_fields) / sizeof(summary_fields[0]); i++)
		ok(entry_field(&e, summary_fields[i], buf, sizeof(buf)) != NULL,
		   "summary has %s", summary_fields[i]);
	v = entry_field(&e, HWLAT_F_STATUS, buf, sizeof(buf));
	ok(v && strcmp(v, "interrupted") == 0, "summary HWLAT_STATUS=%s", v ? v : "");
	v = entry_field(&e, HWLAT_F_CPU_MODEL, buf, sizeof(buf));
	ok(v && strcmp(v, "Test CPU") == 0, "summary HWLAT_CPU_MODEL=%s", v ? v : "");
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

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_parse_u64();
	test_parse_time_span();
	test_cpulist();
	test_format_latency();
	test_strip();
	test_stream_line();
	test_line_reader();
	test_config();
	test_config_file();
	test_entries();
	test_detector_change();

	return tap_finish();
}
