/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict parsers and small formatters shared by hwlat-scan and hwlat-report
 * (lib/parse.h documents the contract). Parsers never accept a sign, leading
 * white space or trailing junk, check every multiplication and addition for
 * overflow, and leave *ret untouched on failure.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "parse.h"

int parse_digits(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*p = s;
	*ret = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v;
	int r;

	if (!s || !ret)
		return -EINVAL;
	r = parse_digits(&s, &v);
	if (r < 0)
		return r;
	if (*s != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

static const struct {
	const char *suffix;
	uint64_t ns;
} time_units[] = {
	{ "ns", 1 },
	{ "us", NSEC_PER_USEC },
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
};

int parse_time_span(const char *s, uint64_t default_unit_ns, uint64_t *ret_ns)
{
	unsigned __int128 total, frac_scaled;
	uint64_t whole, unit = default_unit_ns, frac = 0, frac_div = 1;
	const char *p = s;
	int r;

	if (!s || !ret_ns || default_unit_ns == 0)
		return -EINVAL;

	r = parse_digits(&p, &whole);
	if (r < 0)
		return r;

	if (*p == '.') {
		unsigned digits = 0;

		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			/* More than 18 fraction digits cannot be exact. */
			if (++digits > 18)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_div *= 10;
		}
	}

	/* One optional run of blanks between the number and its unit. */
	while (*p == ' ' || *p == '\t')
		p++;

	if (*p != '\0') {
		size_t i;
		bool found = false;

		for (i = 0; i < ELEMENTSOF(time_units); i++)
			if (strcmp(p, time_units[i].suffix) == 0) {
				unit = time_units[i].ns;
				found = true;
				break;
			}
		if (!found)
			return -EINVAL;
	} else if (p > s && (p[-1] == ' ' || p[-1] == '\t')) {
		return -EINVAL; /* trailing blanks without a unit */
	}

	total = (unsigned __int128)whole * unit;
	frac_scaled = (unsigned __int128)frac * unit;
	if (frac_scaled % frac_div != 0)
		return -EINVAL; /* finer than a nanosecond */
	total += frac_scaled / frac_div;
	if (total > UINT64_MAX)
		return -ERANGE;

	*ret_ns = (uint64_t)total;
	return 0;
}

static void cpu_set_add(cpu_set_bits *m, unsigned cpu)
{
	m->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

bool cpu_set_has(const cpu_set_bits *m, unsigned cpu)
{
	if (!m || cpu >= HWLAT_MAX_CPUS)
		return false;
	return m->bits[cpu / 64] & (UINT64_C(1) << (cpu % 64));
}

int parse_cpulist(const char *s, cpu_set_bits *ret_mask)
{
	cpu_set_bits m = {};
	const char *p = s;
	int r;

	if (!s || !ret_mask || *s == '\0')
		return -EINVAL;

	for (;;) {
		uint64_t first, last, cpu;

		r = parse_digits(&p, &first);
		if (r < 0)
			return r == -ERANGE ? -ERANGE : -EINVAL;
		last = first;
		if (*p == '-') {
			p++;
			r = parse_digits(&p, &last);
			if (r < 0)
				return r == -ERANGE ? -ERANGE : -EINVAL;
			if (last < first)
				return -EINVAL;
		}
		if (last >= HWLAT_MAX_CPUS)
			return -ERANGE;
		for (cpu = first; cpu <= last; cpu++)
			cpu_set_add(&m, (unsigned)cpu);

		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}

	*ret_mask = m;
	return 0;
}

char *format_cpulist(const cpu_set_bits *m, char *buf, size_t size)
{
	size_t len = 0;
	unsigned cpu = 0;

	if (!buf || size == 0)
		return buf;
	buf[0] = '\0';
	if (!m)
		return buf;

	while (cpu < HWLAT_MAX_CPUS) {
		unsigned first, last;
		int n;

		if (!cpu_set_has(m, cpu)) {
			cpu++;
			continue;
		}
		first = cpu;
		while (cpu + 1 < HWLAT_MAX_CPUS && cpu_set_has(m, cpu + 1))
			cpu++;
		last = cpu;
		cpu++;

		if (first == last)
			n = snprintf(buf + len, size - len, "%s%u",
				     len ? "," : "", first);
		else
			n = snprintf(buf + len, size - len, "%s%u-%u",
				     len ? "," : "", first, last);
		if (n < 0 || (size_t)n >= size - len) {
			/* Never leave half a number: cut back to the last comma. */
			buf[len] = '\0';
			return buf;
		}
		len += (size_t)n;
	}
	return buf;
}

char *format_latency(uint64_t ns, char *buf, size_t size)
{
	uint64_t tenths_us, hundredths_ms;

	if (!buf || size == 0)
		return buf;

	if (ns < NSEC_PER_USEC) {
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
		return buf;
	}

	tenths_us = ns / 100 + (ns % 100 >= 50);
	if (tenths_us < 10000) {
		snprintf(buf, size, "%llu.%llu us",
			 (unsigned long long)(tenths_us / 10),
			 (unsigned long long)(tenths_us % 10));
		return buf;
	}

	hundredths_ms = ns / 10000 + (ns % 10000 >= 5000);
	snprintf(buf, size, "%llu.%02llu ms",
		 (unsigned long long)(hundredths_ms / 100),
		 (unsigned long long)(hundredths_ms % 100));
	return buf;
}

char *strip(char *s)
{
	char *start, *end;

	if (!s)
		return s;
	for (start = s; isspace((unsigned char)*start); start++)
		;
	end = start + strlen(start);
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	if (start != s)
		memmove(s, start, (size_t)(end - start) + 1);
	return s;
}
