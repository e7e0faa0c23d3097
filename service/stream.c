/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsing the module's stream lines. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "stream.h"

/* Fields of a stream line: 10 (before smi_ns) or 11. */
enum {
	F_SEQ,
	F_CPU,
	F_TIME,
	F_INNER,
	F_OUTER,
	F_COUNT,
	F_NMI_COUNT,
	F_NMI_NS,
	F_SMI_COUNT,
	F_SMI_NS,
	N_FIELDS,
};

/*
 * Splits line at single spaces into at most N_FIELDS fields; returns their
 * number, or -EINVAL for an empty field (leading, trailing or double space)
 * or too many fields.
 */
static int split_fields(char *line, char *field[N_FIELDS])
{
	int n = 0;

	for (char *p = line;; p++) {
		char *sp = strchr(p, ' ');

		if (n == N_FIELDS || (sp ? sp == p : *p == '\0'))
			return -EINVAL;
		field[n++] = p;
		if (!sp)
			return n;
		*sp = '\0';
		p = sp;
	}
}

/* A decimal, or "-": unavailable (*known false, *ret untouched). */
static int parse_maybe(const char *s, bool *known, uint64_t *ret)
{
	if (strcmp(s, "-") == 0) {
		*known = false;
		return 0;
	}
	*known = true;
	return parse_u64(s, ret);
}

/* "<sec>.<nsec 9 digits>" into ns since the epoch. */
static int parse_timestamp(char *s, uint64_t *ret)
{
	char *dot = strchr(s, '.');
	uint64_t sec, nsec;
	int r;

	if (!dot || strlen(dot + 1) != 9)
		return -EINVAL;
	*dot = '\0';
	r = parse_u64(s, &sec);
	if (r >= 0)
		r = parse_u64(dot + 1, &nsec);
	if (r < 0)
		return r;
	if (sec > (UINT64_MAX - nsec) / NSEC_PER_SEC)
		return -ERANGE;
	*ret = sec * NSEC_PER_SEC + nsec;
	return 0;
}

/* The fields of a skip record: "<seq> <cpu> <time> skipped <windows>". */
enum {
	F_SKIP_WORD = F_INNER,
	F_SKIP_WINDOWS,
	N_SKIP_FIELDS,
};

/* The rest of a skip record, after seq, cpu and time. */
static int parse_skip(char *f[N_FIELDS], hwlat_sample *s)
{
	int r;

	if (strcmp(f[F_SKIP_WORD], STREAM_SKIPPED) != 0)
		return -EINVAL;
	r = parse_u64(f[F_SKIP_WINDOWS], &s->skipped_windows);
	if (r >= 0 && s->skipped_windows == 0)
		r = -EINVAL;
	return r;
}

/* The rest of a window's line, after seq, cpu and time (n fields in all). */
static int parse_window(char *f[N_FIELDS], int n, hwlat_sample *s)
{
	int r;

	r = parse_u64(f[F_INNER], &s->inner_ns);
	if (r >= 0)
		r = parse_u64(f[F_OUTER], &s->outer_ns);
	if (r >= 0)
		r = parse_u64(f[F_COUNT], &s->count);
	if (r >= 0)
		r = parse_u64(f[F_NMI_COUNT], &s->nmi_count);
	if (r >= 0)
		r = parse_u64(f[F_NMI_NS], &s->nmi_ns);
	if (r >= 0)
		r = parse_maybe(f[F_SMI_COUNT], &s->smi_count_known, &s->smi_count);
	/* The line of a module built before smi_ns existed ends at smi_count. */
	if (r >= 0 && n == N_FIELDS)
		r = parse_maybe(f[F_SMI_NS], &s->smi_ns_known, &s->smi_ns);
	return r;
}

int stream_parse_line(const char *line, hwlat_sample *ret)
{
	hwlat_sample s = {};
	char buf[STREAM_LINE_MAX + 1], *f[N_FIELDS];
	uint64_t cpu = 0;
	int n, r;

	if (!line || !ret || strlen(line) > STREAM_LINE_MAX)
		return -EINVAL;
	strcpy(buf, line);
	n = split_fields(buf, f);
	if (n < 0)
		return n;
	if (n != N_FIELDS && n != N_FIELDS - 1 && n != N_SKIP_FIELDS)
		return -EINVAL;

	r = parse_u64(f[F_SEQ], &s.seq);
	if (r >= 0)
		r = parse_u64(f[F_CPU], &cpu);
	if (r >= 0 && cpu >= HWLAT_MAX_CPUS)
		r = -ERANGE;
	if (r >= 0)
		r = parse_timestamp(f[F_TIME], &s.timestamp_ns);
	if (r >= 0)
		r = n == N_SKIP_FIELDS ? parse_skip(f, &s) : parse_window(f, n, &s);
	if (r < 0)
		return r;
	if (s.seq == 0)
		return -EINVAL;

	s.cpu = (unsigned)cpu;
	*ret = s;
	return 0;
}

static void bad_line(line_reader *lr, line_problem why, const char *text,
		     size_t len, void *userdata)
{
	if (lr->on_bad)
		lr->on_bad(why, text, len < STREAM_LINE_MAX ? len : STREAM_LINE_MAX,
			   userdata);
}

long line_reader_read(line_reader *lr, int fd, line_cb cb, void *userdata)
{
	size_t start = 0, i;
	ssize_t n;
	int r;

	n = read(fd, lr->buf + lr->len, sizeof(lr->buf) - lr->len);
	if (n < 0)
		return -errno;
	if (n == 0) {
		/* Said once: the partial line is gone, the next read is EOF. */
		if (lr->len && !lr->discarding)
			bad_line(lr, LINE_CUT_AT_EOF, lr->buf, lr->len, userdata);
		lr->len = 0;
		lr->discarding = false;
		return 0;
	}

	lr->len += (size_t)n;
	for (i = 0; i < lr->len; i++) {
		if (lr->buf[i] != '\n')
			continue;
		lr->buf[i] = '\0';
		if (lr->discarding) {
			lr->discarding = false; /* its end: reported already */
		} else if (i - start > STREAM_LINE_MAX) {
			bad_line(lr, LINE_TOO_LONG, lr->buf + start, i - start, userdata);
		} else if (memchr(lr->buf + start, '\0', i - start)) {
			bad_line(lr, LINE_HAS_NUL, lr->buf + start, i - start, userdata);
		} else {
			r = cb(lr->buf + start, userdata);
			if (r < 0) {
				lr->len = 0;
				return r;
			}
		}
		start = i + 1;
	}
	memmove(lr->buf, lr->buf + start, lr->len - start);
	lr->len -= start;
	if (lr->len > STREAM_LINE_MAX) {
		/* No '\n' yet and already too long: skip it up to its end. */
		if (!lr->discarding)
			bad_line(lr, LINE_TOO_LONG, lr->buf, lr->len, userdata);
		lr->discarding = true;
		lr->len = 0;
	}
	return n;
}
