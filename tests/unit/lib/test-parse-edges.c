/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The edges of lib/parse.c that tests/unit/scan/test-scan-units leaves
 * open (found by tests/mutation): every function refuses NULL and empty
 * buffers without touching anything, a trailing tab is refused like a
 * trailing blank, format_cpulist never leaves a cut element when the
 * buffer is exactly one byte short, format_latency rounds half up in
 * milliseconds as it does in microseconds, and a time span takes 18
 * fraction digits but not 19. TAP output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "../tap.h"

#define SENTINEL UINT64_C(0xdeadbeef)

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
	test_null_arguments();
	test_time_span_edges();
	test_cpulist_cut();
	test_latency_rounding();
	return tap_finish();
}
