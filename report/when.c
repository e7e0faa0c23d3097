// SPDX-License-Identifier: GPL-2.0-or-later
/* Points in time for --since/--until; see when.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "parse.h"
#include "when.h"

static const struct {
	const char *name;
	uint64_t ns;
} span_units[] = {
	{ "nsec", 1 }, { "ns", 1 },
	{ "usec", NSEC_PER_USEC }, { "us", NSEC_PER_USEC }, { "\xc2\xb5s", NSEC_PER_USEC },
	{ "msec", NSEC_PER_MSEC }, { "ms", NSEC_PER_MSEC },
	{ "seconds", NSEC_PER_SEC }, { "second", NSEC_PER_SEC }, { "sec", NSEC_PER_SEC },
	{ "s", NSEC_PER_SEC },
	{ "minutes", 60 * NSEC_PER_SEC }, { "minute", 60 * NSEC_PER_SEC },
	{ "min", 60 * NSEC_PER_SEC }, { "m", 60 * NSEC_PER_SEC },
	{ "hours", 3600 * NSEC_PER_SEC }, { "hour", 3600 * NSEC_PER_SEC },
	{ "hr", 3600 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
	{ "days", 86400 * NSEC_PER_SEC }, { "day", 86400 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
	{ "weeks", 604800 * NSEC_PER_SEC }, { "week", 604800 * NSEC_PER_SEC },
	{ "w", 604800 * NSEC_PER_SEC },
	{ "months", 2629800 * NSEC_PER_SEC }, { "month", 2629800 * NSEC_PER_SEC },
	{ "M", 2629800 * NSEC_PER_SEC },
	{ "years", 31557600 * NSEC_PER_SEC }, { "year", 31557600 * NSEC_PER_SEC },
	{ "y", 31557600 * NSEC_PER_SEC },
};

/* The unit spelled by the len letters at s; 0 when none is. */
static uint64_t unit_ns(const char *s, size_t len)
{
	for (size_t i = 0; i < ELEMENTSOF(span_units); i++)
		if (strlen(span_units[i].name) == len && strncmp(s, span_units[i].name, len) == 0)
			return span_units[i].ns;
	return 0;
}

static bool is_unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (unsigned char)c >= 0x80;
}

/*
 * A time span of systemd.time(7): "1h 30min", "2days", "1.5h", "90"
 * (a bare number is in seconds, and only alone).
 */
static int parse_span(const char *s, uint64_t *ret_ns)
{
	unsigned __int128 total = 0;
	unsigned parts = 0;

	for (;;) {
		uint64_t whole = 0, frac = 0, frac_div = 1, unit;
		const char *u;
		bool digits = false;

		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		for (; *s >= '0' && *s <= '9'; s++, digits = true) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -ERANGE;
			whole = whole * 10 + (uint64_t)(*s - '0');
		}
		if (*s == '.') {
			for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
				if (frac_div < NSEC_PER_SEC) {
					frac = frac * 10 + (uint64_t)(*s - '0');
					frac_div *= 10;
				}
		}
		if (!digits)
			return -EINVAL;
		while (*s == ' ')
			s++;
		for (u = s; is_unit_char(*s); s++)
			;
		if (s == u) {
			/* A bare number: seconds, and nothing may follow. */
			if (parts > 0 || *s != '\0')
				return -EINVAL;
			unit = NSEC_PER_SEC;
		} else {
			unit = unit_ns(u, (size_t)(s - u));
			if (unit == 0)
				return -EINVAL;
		}
		total +=
		    (unsigned __int128)whole * unit + (unsigned __int128)frac * unit / frac_div;
		if (total > UINT64_MAX)
			return -ERANGE;
		parts++;
	}
	if (parts == 0)
		return -EINVAL;
	*ret_ns = (uint64_t)total;
	return 0;
}

/* "-1h", "+1h", "1h ago", "1h left": 1 past, 2 future, 0 not relative;
 * span gets the span's text. */
static int relative_direction(const char *s, char *span, size_t size)
{
	size_t len = strlen(s);

	if (len >= size)
		return 0;
	if (s[0] == '-' || s[0] == '+') {
		strcpy(span, s + 1);
		return s[0] == '-' ? 1 : 2;
	}
	if (len > 4 && strcmp(s + len - 4, " ago") == 0) {
		memcpy(span, s, len - 4);
		span[len - 4] = '\0';
		return 1;
	}
	if (len > 5 && strcmp(s + len - 5, " left") == 0) {
		memcpy(span, s, len - 5);
		span[len - 5] = '\0';
		return 2;
	}
	return 0;
}

static int midnight(uint64_t now_ns, int day_offset, uint64_t *ret_ns)
{
	time_t t = (time_t)(now_ns / NSEC_PER_SEC);
	struct tm tm;
	time_t m;

	if (!localtime_r(&t, &tm))
		return -EINVAL;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_mday += day_offset;
	tm.tm_isdst = -1;
	m = mktime(&tm);
	if (m == (time_t)-1 || m < 0)
		return -ERANGE;
	*ret_ns = (uint64_t)m * NSEC_PER_SEC;
	return 0;
}

static bool is_leap(int year)
{
	return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

static int parse_date(const char *s, uint64_t *ret_ns, char *why, size_t why_size)
{
	struct tm tm = { 0 };
	char zone[8] = "";
	int n = 0, fields;
	time_t t;

	fields = sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n);
	if (fields != 3 || n != 10)
		return -EINVAL;
	s += n;
	if (*s == ' ' || *s == 'T') {
		int m = 0;

		if (sscanf(s + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2 || m != 5)
			return -EINVAL;
		s += 1 + m;
		if (*s == ':') {
			if (sscanf(s + 1, "%2d%n", &tm.tm_sec, &m) != 1 || m != 2)
				return -EINVAL;
			s += 1 + m;
		}
	}
	if (strcmp(s, " UTC") == 0)
		strcpy(zone, "UTC");
	else if (*s != '\0')
		return -EINVAL;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
		return -ERANGE;
	/* mktime() would take 2023-02-31 for 2023-03-03. */
	if (tm.tm_mday > days_in_month(tm.tm_year, tm.tm_mon)) {
		snprintf(why, why_size, "no such day: %04d-%02d has %d days", tm.tm_year,
			 tm.tm_mon, days_in_month(tm.tm_year, tm.tm_mon));
		return -EINVAL;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	t = zone[0] ? timegm(&tm) : mktime(&tm);
	if (t == (time_t)-1 || t < 0)
		return -ERANGE;
	*ret_ns = (uint64_t)t * NSEC_PER_SEC;
	return 0;
}

int parse_when(const char *s, uint64_t now_ns, uint64_t *ret_ns, char *why, size_t why_size)
{
	char span[64];
	uint64_t v;
	int dir, r;

	why[0] = '\0';
	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret_ns = now_ns;
		return 0;
	}
	if (strcmp(s, "today") == 0)
		return midnight(now_ns, 0, ret_ns);
	if (strcmp(s, "yesterday") == 0)
		return midnight(now_ns, -1, ret_ns);
	if (strcmp(s, "tomorrow") == 0)
		return midnight(now_ns, 1, ret_ns);
	if (s[0] == '@') {
		r = parse_time_span(s + 1, NSEC_PER_SEC, &v);
		if (r < 0)
			return r;
		*ret_ns = v;
		return 0;
	}
	dir = relative_direction(s, span, sizeof(span));
	if (dir == 0)
		return parse_date(s, ret_ns, why, why_size);
	r = parse_span(span, &v);
	if (r == -EINVAL)
		snprintf(why, why_size, "'%s' is not a time span (such as 1h, 30min, "
			 "\"1h 30min\" or 2days)", span);
	if (r < 0)
		return r;
	if (dir == 1) {
		if (v > now_ns)
			return -ERANGE;
		*ret_ns = now_ns - v;
	} else {
		if (v > UINT64_MAX - now_ns)
			return -ERANGE;
		*ret_ns = now_ns + v;
	}
	return 0;
}
