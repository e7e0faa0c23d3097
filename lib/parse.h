/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parsing and formatting shared by hwlat-scan and hwlat-report. Every parser
 * returns 0 or a negative errno (-EINVAL for malformed input, -ERANGE for
 * out-of-range values) and leaves *ret untouched on failure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

/* Unsigned decimal integer, whole string, no sign, no junk. */
int parse_u64(const char *s, uint64_t *ret);

/*
 * The run of decimal digits at *p (at least one, at most UINT64_MAX), then
 * *p past them; -EINVAL without a digit, -ERANGE on overflow (*p unmoved).
 */
int parse_digits(const char **p, uint64_t *ret);

/*
 * A time span with an optional unit: ns, us, ms, s, m (minutes), h, d.
 * A bare number is taken in default_unit_ns (NSEC_PER_USEC for the
 * detector's microsecond settings, NSEC_PER_SEC for a scan duration).
 * Decimals are accepted ("1.5ms"). Result in nanoseconds.
 */
int parse_time_span(const char *s, uint64_t default_unit_ns, uint64_t *ret_ns);

/*
 * A cpulist such as "0-3,6,8-9". *ret_mask has bit n set for CPU n;
 * CPUs >= HWLAT_MAX_CPUS are -ERANGE. An empty string is -EINVAL.
 */
#define HWLAT_MAX_CPUS 1024
typedef struct cpu_set_bits {
	uint64_t bits[HWLAT_MAX_CPUS / 64];
} cpu_set_bits;
int parse_cpulist(const char *s, cpu_set_bits *ret_mask);
bool cpu_set_has(const cpu_set_bits *m, unsigned cpu);
/* Writes the canonical cpulist ("0-3,6") into buf; returns buf. */
char *format_cpulist(const cpu_set_bits *m, char *buf, size_t size);

/*
 * A latency for a human: picks ns, us or ms so that the number reads well
 * ("850 ns", "212.4 us", "20.31 ms"). Returns buf.
 */
char *format_latency(uint64_t ns, char *buf, size_t size);

/* Strips leading and trailing white space in place; returns s. */
char *strip(char *s);
