// SPDX-License-Identifier: GPL-2.0-or-later
/* Points in time for --since/--until; see when.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "parse.h"
#include "when.h"

/* journalctl spells minutes "min"; parse_time_span knows "m". */
static int parse_relative(const char *s, uint64_t *ret_ns)
{
	static const struct {
		const char *from, *to;
	} words[] = {
		{ "min", "m" }, { "minutes", "m" }, { "sec", "s" }, { "seconds", "s" },
		{ "hours", "h" }, { "hour", "h" }, { "days", "d" }, { "day", "d" },
		{ "msec", "ms" }, { "usec", "us" },
	};
	char buf[64];
	size_t len = strlen(s);

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t wl = strlen(words[i].from);

		if (len > wl && strcmp(buf + len - wl, words[i].from) == 0 &&
		    (buf[len - wl - 1] == ' ' || (buf[len - wl - 1] >= '0' &&
						  buf[len - wl - 1] <= '9'))) {
			strcpy(buf + len - wl, words[i].to);
			break;
		}
	}
	/* A bare number is in seconds, as for journalctl. */
	return parse_time_span(buf, NSEC_PER_SEC, ret_ns);
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

static int parse_date(const char *s, uint64_t *ret_ns)
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
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_isdst = -1;
	t = zone[0] ? timegm(&tm) : mktime(&tm);
	if (t == (time_t)-1 || t < 0)
		return -ERANGE;
	*ret_ns = (uint64_t)t * NSEC_PER_SEC;
	return 0;
}

int parse_when(const char *s, uint64_t now_ns, uint64_t *ret_ns)
{
	uint64_t v;
	int r;

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
	if (s[0] == '-' || s[0] == '+') {
		r = parse_relative(s + 1, &v);
		if (r < 0)
			return r;
		if (s[0] == '-') {
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
	return parse_date(s, ret_ns);
}
