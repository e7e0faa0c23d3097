/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module's `stream` file: one line per reported window
 * (docs/interfaces.md, "The stream line format"), parsed strictly, and a
 * reader that splits what read() returns into whole lines.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hwlat_sample {
	uint64_t seq;
	unsigned cpu;
	uint64_t timestamp_ns; /* CLOCK_REALTIME, ns since the epoch */
	uint64_t inner_ns;
	uint64_t outer_ns;
	uint64_t count;
	uint64_t nmi_count;
	uint64_t nmi_ns;
	/* The kernel tracer on a kernel without an NMI-safe clock: unknown. */
	bool nmi_ns_unavailable;
	/* "-" in the stream (or no smi_ns field): cannot be known, never 0. */
	bool smi_count_known;
	uint64_t smi_count;
	bool smi_ns_known;
	uint64_t smi_ns;
	/*
	 * Not 0: no window but a skip record, the windows this CPU could not
	 * be sampled in from timestamp_ns on; the other figures are 0.
	 */
	uint64_t skipped_windows;
} hwlat_sample;

/* The word of a skip record: "<seq> <cpu> <sec>.<nsec> skipped <windows>". */
#define STREAM_SKIPPED "skipped"

static inline uint64_t hwlat_sample_latency_ns(const hwlat_sample *s)
{
	return s->inner_ns > s->outer_ns ? s->inner_ns : s->outer_ns;
}

/*
 * Parses one line without its trailing newline: the line with smi_ns (10
 * space-separated fields; "11 fields" when sec and nsec count as two), or
 * the old one without smi_ns (then unavailable); smi_count and smi_ns
 * may be "-" (unavailable); or a skip record (5 fields, skipped_windows
 * at least 1). Returns 0, or -EINVAL (wrong number of fields, not decimal,
 * nsec not 9 digits, seq 0, a fourth word other than "skipped" in a skip
 * record) or -ERANGE.
 */
int stream_parse_line(const char *line, hwlat_sample *ret);

#define STREAM_LINE_MAX 512

/* What the line reader could not turn into a line (it skips it). */
typedef enum line_problem {
	LINE_TOO_LONG,   /* longer than STREAM_LINE_MAX: skipped up to its '\n' */
	LINE_HAS_NUL,    /* a NUL byte inside the line */
	LINE_CUT_AT_EOF, /* the stream ended in the middle of a line */
} line_problem;

/*
 * Called for each skipped line with the first bytes of it (not
 * NUL-terminated, possibly binary): at most STREAM_LINE_MAX of them.
 */
typedef void (*bad_line_cb)(line_problem why, const char *text, size_t len,
			    void *userdata);

typedef struct line_reader {
	char buf[8 * STREAM_LINE_MAX];
	size_t len;
	bool discarding; /* inside a too long line, until its '\n' */
	bad_line_cb on_bad; /* optional */
} line_reader;

/*
 * Reads once from fd and calls cb for every complete line (NUL-terminated,
 * without '\n'). A line that is too long, holds a NUL byte or is cut by the
 * end of the stream is skipped and passed to lr->on_bad; reading goes on
 * with the next line. Returns the number of bytes read (0 at EOF), -EAGAIN
 * when nothing is ready, a negative errno from read(), or the first negative
 * value cb returned (the remaining lines of that read are then dropped).
 */
typedef int (*line_cb)(const char *line, void *userdata);
long line_reader_read(line_reader *lr, int fd, line_cb cb, void *userdata);
