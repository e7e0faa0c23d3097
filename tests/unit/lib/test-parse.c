/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/parse.c, TAP output. Proves that it parses strictly (good values,
 * junk, signs, overflow) and leaves *ret untouched on failure; that every
 * function refuses NULL and empty buffers without touching anything; a
 * trailing tab is refused like a trailing blank; a time span takes 18
 * fraction digits but not 19; cpulists format as documented and
 * format_cpulist never leaves a cut element when the buffer is exactly one
 * byte short; latencies read as documented, format_latency rounding half
 * up in milliseconds as in microseconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "../tap.h"

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

static void test_null_arguments(void)
{
	uint64_t v = SENTINEL;
	cpu_set_bits m = { .bits = { 1 } };
	char buf[8] = "XXXXXXX";

	ok(parse_u64(NULL, &v) == -EINVAL && v == SENTINEL, "parse_u64(NULL) = -EINVAL");
	ok(parse_u64("1", NULL) == -EINVAL, "parse_u64 without a result = -EINVAL");
	ok(parse_time_span(NULL, NSEC_PER_USEC, &v) == -EINVAL && v == SENTINEL,
	   "parse_time_span(NULL) = -EINVAL");
	ok(parse_time_span("1", NSEC_PER_USEC, NULL) == -EINVAL,
	   "parse_time_span without a result = -EINVAL");
	ok(parse_time_span("1", 0, &v) == -EINVAL && v == SENTINEL,
	   "parse_time_span with a default unit of 0 = -EINVAL");
	ok(parse_cpulist(NULL, &m) == -EINVAL && m.bits[0] == 1,
	   "parse_cpulist(NULL) = -EINVAL, mask untouched");
	ok(parse_cpulist("1", NULL) == -EINVAL, "parse_cpulist without a result = -EINVAL");
	ok(!cpu_set_has(NULL, 0), "cpu_set_has(NULL, 0) is false");

	ok(format_cpulist(&m, NULL, 8) == NULL, "format_cpulist into NULL returns NULL");
	ok(format_cpulist(&m, buf, 0) == buf && strcmp(buf, "XXXXXXX") == 0,
	   "format_cpulist into 0 bytes writes nothing: \"%s\"", buf);
	ok(format_cpulist(NULL, buf, sizeof(buf)) == buf && strcmp(buf, "") == 0,
	   "format_cpulist of NULL is \"\": \"%s\"", buf);
	strcpy(buf, "XXXXXXX");
	ok(format_latency(1, NULL, 8) == NULL, "format_latency into NULL returns NULL");
	ok(format_latency(1, buf, 0) == buf && strcmp(buf, "XXXXXXX") == 0,
	   "format_latency into 0 bytes writes nothing: \"%s\"", buf);
	ok(format_latency(1, buf, 1) == buf && strcmp(buf, "") == 0,
	   "format_latency into 1 byte is \"\": \"%s\"", buf);
	ok(strip(NULL) == NULL, "strip(NULL) = NULL");
}

static void test_time_span_edges(void)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} cases[] = {
		{ "5\t", -EINVAL, 0 },
		{ "5 \t", -EINVAL, 0 },
		{ "5\tms", 0, 5 * NSEC_PER_MSEC },
		{ "5 \tus", 0, 5 * NSEC_PER_USEC },
		/* 18 fraction digits are the most; 312500e-18 d is 27 ns. */
		{ "0.000000000000312500d", 0, 27 },
		{ "0.0000000000003125000d", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = SENTINEL;
		int r = parse_time_span(cases[i].s, NSEC_PER_USEC, &v);

		ok(r == cases[i].r && v == (r == 0 ? cases[i].v : SENTINEL),
		   "parse_time_span(\"%s\") = %d, %" PRIu64 " (want %d, %" PRIu64 ")",
		   cases[i].s, r, v, cases[i].r, r == 0 ? cases[i].v : SENTINEL);
	}
}

static void test_cpulist_cut(void)
{
	/* "0-3,6" needs 6 bytes; ",6" needs 3 after "0-3". */
	static const struct {
		size_t size;
		const char *s;
	} cases[] = {
		{ 6, "0-3,6" }, { 5, "0-3" }, { 4, "0-3" }, { 3, "" }, { 1, "" },
	};
	cpu_set_bits m;
	char buf[16];

	parse_cpulist("0-3,6", &m);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'X', sizeof(buf));
		format_cpulist(&m, buf, cases[i].size);
		ok(strcmp(buf, cases[i].s) == 0,
		   "format_cpulist(0-3,6) into %zu bytes = \"%s\" (want \"%s\")",
		   cases[i].size, buf, cases[i].s);
	}
	ok(cpu_set_has(&m, 6) && !cpu_set_has(&m, 1024) && !cpu_set_has(&m, 7),
	   "cpu_set_has: 6 yes, 7 and 1024 no");
	parse_cpulist("1023", &m);
	ok(cpu_set_has(&m, 1023) && !cpu_set_has(&m, 1022), "cpu_set_has: 1023 yes, 1022 no");
}

static void test_latency_rounding(void)
{
	static const struct {
		uint64_t ns;
		const char *s;
	} cases[] = {
		{ 10004999, "10.00 ms" },
		{ 10005000, "10.01 ms" },
		{ 1049, "1.0 us" },
		{ 1050, "1.1 us" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		format_latency(cases[i].ns, buf, sizeof(buf));
		ok(strcmp(buf, cases[i].s) == 0, "format_latency(%" PRIu64 ") = \"%s\" (want \"%s\")",
		   cases[i].ns, buf, cases[i].s);
	}
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
	test_null_arguments();
	test_time_span_edges();
	test_cpulist_cut();
	test_latency_rounding();
	return tap_finish();
}
