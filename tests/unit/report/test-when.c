/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The points in time of --since/--until (report/when.c), at their edges:
 * the value each spelling gives, and which of "out of range" (-ERANGE)
 * and "expected ..." (-EINVAL, or the sentence in why) a user is told for
 * the ones refused. The days and dates are taken in fixed zones (TZ=UTC,
 * UTC-5, UTC+5 as POSIX strings, no tzdata needed), so the results are
 * exact. TAP output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "when.h"
#include "../tap.h"

#define S UINT64_C(1000000000)
/* 2023-11-14 22:13:20.5 UTC */
#define NOW (UINT64_C(1700000000) * S + S / 2)
#define UNSET UINT64_C(0xdeadbeef)

static void zone(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* s parses to want (r == 0) or is refused with r, leaving the result alone. */
static void is(const char *s, uint64_t now, int r, uint64_t want)
{
	char why[160] = "junk";
	uint64_t v = UNSET;
	int got = parse_when(s, now, &v, why, sizeof(why));

	if (r == 0)
		ok(got == 0 && v == want, "'%s' (TZ=%s) is %" PRIu64 " (got r=%d, %" PRIu64 ")", s,
		   getenv("TZ"), want, got, v);
	else
		ok(got == r && v == UNSET, "'%s' (TZ=%s) is refused with %s (got r=%d, %" PRIu64 ")",
		   s, getenv("TZ"), r == -ERANGE ? "-ERANGE" : "-EINVAL", got, v);
}

/* s is refused with -EINVAL and why says want ("" for the generic text). */
static void why_is(const char *s, const char *want)
{
	char why[160] = "junk";
	uint64_t v = UNSET;
	int got = parse_when(s, NOW, &v, why, sizeof(why));

	ok(got == -EINVAL && strcmp(why, want) == 0, "'%s': -EINVAL, why '%s' (got r=%d, '%s')", s,
	   want, got, why);
}

static void test_words(void)
{
	zone("UTC");
	is(NULL, NOW, -EINVAL, 0);
	is("", NOW, -EINVAL, 0);
	is("now", NOW, 0, NOW);
	is("today", NOW, 0, UINT64_C(1699920000) * S);
	is("yesterday", NOW, 0, UINT64_C(1699833600) * S);
	is("tomorrow", NOW, 0, UINT64_C(1700006400) * S);
	is("Today", NOW, -EINVAL, 0);
	/* 1970-01-01 00:00 in UTC-5 is 18000 s after the epoch. */
	zone("EST5");
	is("today", NOW, 0, UINT64_C(1699938000) * S);
	is("tomorrow", 0, 0, UINT64_C(18000) * S);
	is("today", 0, -ERANGE, 0);
	zone("UTC");
	is("today", 0, 0, 0);
	/* Summer time: midnight of 2023-07-01 in Central Europe is 22:00 UTC. */
	zone("CET-1CEST,M3.5.0,M10.5.0/3");
	is("today", UINT64_C(1688212800) * S, 0, UINT64_C(1688162400) * S);
}

static void test_epoch(void)
{
	zone("UTC");
	is("@1700000000", NOW, 0, UINT64_C(1700000000) * S);
	is("@1700000000.5", NOW, 0, UINT64_C(1700000000) * S + S / 2);
	is("@0", NOW, 0, 0);
	is("@", NOW, -EINVAL, 0);
	is("@soon", NOW, -EINVAL, 0);
}

static void test_relative(void)
{
	zone("UTC");
	is("-1h", NOW, 0, NOW - 3600 * S);
	is("+30min", NOW, 0, NOW + 1800 * S);
	is("1h 30min ago", NOW, 0, NOW - 5400 * S);
	is("2 days left", NOW, 0, NOW + 2 * 86400 * S);
	is("-1.5h", NOW, 0, NOW - 5400 * S);
	is("-.5h", NOW, 0, NOW - 1800 * S);
	is("-90", NOW, 0, NOW - 90 * S);
	is("-90 s", NOW, 0, NOW - 90 * S);
	is("1 ago", NOW, 0, NOW - S);
	is("1 left", NOW, 0, NOW + S);
	is("-1w 2d 3h 4m 5s 6ms 7us 8ns", NOW, 0,
	   NOW - (((UINT64_C(7) * 24 + 2 * 24 + 3) * 3600 + 4 * 60 + 5) * S + 6000000 + 7000 + 8));
	is("-1M", NOW, 0, NOW - UINT64_C(2629800) * S);
	is("-1y", NOW, 0, NOW - UINT64_C(31557600) * S);
	is("-1\xc2\xb5s", NOW, 0, NOW - 1000);
	is("-5nsec", NOW, 0, NOW - 5);
	is("-1.05h", NOW, 0, NOW - 3780 * S);
	/* Nine fraction digits count, the tenth no more. */
	is("-0.123456789h", NOW, 0, NOW - UINT64_C(444444440400));
	is("-0.1234567891h", NOW, 0, NOW - UINT64_C(444444440400));
	/* A bare number only alone. */
	is("-1h 30", NOW, -EINVAL, 0);
	is("-90 s 1", NOW, -EINVAL, 0);
	is("-90x", NOW, -EINVAL, 0);
	is("-h", NOW, -EINVAL, 0);
	is("-", NOW, -EINVAL, 0);
	is("- ", NOW, -EINVAL, 0);
	/* Back to the epoch exactly, not before it. */
	is("-1s", S, 0, 0);
	is("-1s", S - 1, -ERANGE, 0);
	/* The largest span and the first one too large, in digits and in sum. */
	is("+18446744073709551609ns", 0, 0, UINT64_C(18446744073709551609));
	is("+18446744073709551610ns", 0, -ERANGE, 0);
	is("+18446744073s 709551615ns", 0, 0, UINT64_MAX);
	is("+18446744073s 709551616ns", 0, -ERANGE, 0);
	is("+18446744073s 709551614ns", 1, 0, UINT64_MAX);
	is("+18446744073s 709551615ns", 1, -ERANGE, 0);
}

static void test_relative_length(void)
{
	char s[80];

	/* The span is copied into 64 bytes: 63 characters fit, 64 do not. */
	zone("UTC");
	snprintf(s, sizeof(s), "-%62s", "1s");
	ok(strlen(s) == 63, "a 63-character span");
	is(s, NOW, 0, NOW - S);
	snprintf(s, sizeof(s), "-%63s", "1s");
	is(s, NOW, -EINVAL, 0);
}

static void test_why(void)
{
	zone("UTC");
	why_is("-1x", "'1x' is not a time span (such as 1h, 30min, \"1h 30min\" or 2days)");
	why_is(" ago", "");
	why_is(" left", "");
	why_is("x ago", "'x' is not a time span (such as 1h, 30min, \"1h 30min\" or 2days)");
	why_is("2023-02-29", "no such day: 2023-02 has 28 days");
	why_is("2100-02-29", "no such day: 2100-02 has 28 days");
	why_is("2023-04-31", "no such day: 2023-04 has 30 days");
}

static void test_dates(void)
{
	zone("UTC");
	is("2023-11-14", NOW, 0, UINT64_C(1699920000) * S);
	is("2023-11-14 22:13", NOW, 0, UINT64_C(1699999980) * S);
	is("2023-11-14T22:13:20", NOW, 0, UINT64_C(1700000000) * S);
	is("2023-11-14 22:13:20 UTC", NOW, 0, UINT64_C(1700000000) * S);
	is("1970-01-01", NOW, 0, 0);
	is("1970-01-01 00:00:00 UTC", NOW, 0, 0);
	is("2024-02-29", NOW, 0, UINT64_C(1709164800) * S);
	is("2000-02-29", NOW, 0, UINT64_C(951782400) * S);
	is("2023-12-31 23:59:59", NOW, 0, UINT64_C(1704067199) * S);
	is("2023-12-31 23:59:60", NOW, 0, UINT64_C(1704067200) * S);
	zone("EST5");
	is("2023-11-14 22:13:20 UTC", NOW, 0, UINT64_C(1700000000) * S);
	is("2023-11-14 22:13:20", NOW, 0, UINT64_C(1700018000) * S);
	/* 1970-01-01 00:00 five hours east of UTC is before the epoch. */
	zone("XXX-5");
	is("1970-01-01", NOW, -ERANGE, 0);
	is("1970-01-01 05:00", NOW, 0, 0);
	zone("CET-1CEST,M3.5.0,M10.5.0/3");
	is("2023-07-01", NOW, 0, UINT64_C(1688162400) * S);
	/* 1969 is refused even where its last hours are after the epoch. */
	zone("XXX12");
	is("1969-12-31 13:00", NOW, -ERANGE, 0);
	is("1970-01-01 00:00", NOW, 0, UINT64_C(43200) * S);
	zone("UTC");
	is("2023-1-14", NOW, -EINVAL, 0);
	is("2023-11-14 2:13", NOW, -EINVAL, 0);
	is("2023-11-14 22:13:2", NOW, -EINVAL, 0);
	is("2023-11-14 22:13:20 PST", NOW, -EINVAL, 0);
	is("2023-11-14 22:13 UTC", NOW, 0, UINT64_C(1699999980) * S);
	is("2023-11-14x", NOW, -EINVAL, 0);
	is("1969-12-31", NOW, -ERANGE, 0);
	is("2023-00-01", NOW, -ERANGE, 0);
	is("2023-12-01", NOW, 0, UINT64_C(1701388800) * S);
	is("2023-13-01", NOW, -ERANGE, 0);
	is("2023-01-00", NOW, -ERANGE, 0);
	is("2023-01-31", NOW, 0, UINT64_C(1675123200) * S);
	is("2023-01-32", NOW, -ERANGE, 0);
	is("2023-01-01 23:00", NOW, 0, UINT64_C(1672614000) * S);
	is("2023-01-01 24:00", NOW, -ERANGE, 0);
	is("2023-01-01 00:59", NOW, 0, UINT64_C(1672534740) * S);
	is("2023-01-01 00:60", NOW, -ERANGE, 0);
	is("2023-01-01 00:00:61", NOW, -ERANGE, 0);
}

int main(void)
{
	test_words();
	test_epoch();
	test_relative();
	test_relative_length();
	test_why();
	test_dates();
	return tap_finish();
}
