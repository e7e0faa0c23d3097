/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The windows bpftrace and perf print for the trace event
 * hwlat_detector:sample, read back from their output, and their comparison
 * with the stream's windows: the pure part of trace-tools, kept apart so
 * that the host's unit tests (tests/kernel/unit/test-trace-compare.c) can
 * show that a missing, extra, doubled or altered window is reported.
 */
#ifndef HWLAT_TRACE_COMPARE_H
#define HWLAT_TRACE_COMPARE_H

#include <stddef.h>

#include "lab.h"

/* The most windows one run compares (about 30 are expected). */
#define TRACE_WMAX 1024

static inline uint64_t window_ns(const struct stream_line *w)
{
	return w->sec * 1000000000ull + w->nsec;
}

/*
 * bpftrace's program: three printf()s per event, as bpftrace before 0.18
 * formats at most six arguments. Each line carries seq, which joins them.
 * `args->` is taken by bookworm's 0.17, trixie's 0.23 and sid's 0.27 alike.
 */
static const char bt_prog[] =
	"tracepoint:hwlat_detector:sample {\n"
	"  printf(\"hwlat-a %llu %u %lld %u %llu %llu\\n\", args->seq, args->cpu, args->sec,\n"
	"         args->nsec, args->inner_ns, args->outer_ns);\n"
	"  printf(\"hwlat-b %llu %llu %llu %llu %llu %llu\\n\", args->seq, args->count,\n"
	"         args->nmi_count, args->nmi_ns, args->smi_count, args->smi_ns);\n"
	"  printf(\"hwlat-c %llu %u\\n\", args->seq, args->smi_known);\n"
	"}\n";

/* bpftrace's three lines of one event, joined by seq. */
struct bt_event {
	struct stream_line w;
	bool have_b, have_c;
};

/* The latest event with @seq still missing line @part ('b' or 'c'). */
static inline struct bt_event *bt_find(struct bt_event *ev, size_t n, uint64_t seq, char part)
{
	while (n-- > 0)
		if (ev[n].w.seq == seq && !(part == 'b' ? ev[n].have_b : ev[n].have_c))
			return &ev[n];
	return NULL;
}

/* One line of bpftrace's output into the events ev[*n]: false when it is none of ours. */
static inline bool bt_line(const char *line, struct bt_event *ev, size_t *n)
{
	struct stream_line *w = &ev[*n].w;
	struct bt_event *e;
	uint64_t seq, v[5];
	unsigned int known;

	if (*n < TRACE_WMAX &&
	    sscanf(line, "hwlat-a %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			 " %" SCNu64, &w->seq, &w->cpu, &w->sec, &w->nsec, &w->inner_ns,
		   &w->outer_ns) == 6) {
		ev[*n].have_b = ev[*n].have_c = false;
		++*n;
		return true;
	}
	if (sscanf(line, "hwlat-b %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			 " %" SCNu64, &seq, &v[0], &v[1], &v[2], &v[3], &v[4]) == 6) {
		e = bt_find(ev, *n, seq, 'b');
		if (e) {
			e->w.count = v[0], e->w.nmi_count = v[1], e->w.nmi_ns = v[2];
			e->w.smi_count = v[3], e->w.smi_ns = v[4];
			e->have_b = true;
		}
		return e != NULL;
	}
	if (sscanf(line, "hwlat-c %" SCNu64 " %u", &seq, &known) == 2) {
		e = bt_find(ev, *n, seq, 'c');
		if (e) {
			e->w.smi_known = known != 0;
			e->have_c = true;
		}
		return e != NULL;
	}
	return false;
}

/*
 * bpftrace's windows dated at or after t0 (CLOCK_REALTIME ns) from its
 * output f into w (TRACE_WMAX); *odd counts the lines that are neither a
 * window's nor bpftrace's own (its "Attaching" banner, the empty lines it
 * ends with), and the windows that lack a line.
 */
static inline size_t bt_windows(FILE *f, uint64_t t0, struct stream_line *w, size_t *odd)
{
	static struct bt_event ev[TRACE_WMAX];
	char line[512];
	size_t n = 0, k = 0;

	*odd = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!bt_line(line, ev, &n) && strncmp(line, "Attaching ", 10) != 0 &&
		    strcmp(line, "\n") != 0)
			++*odd;
	for (size_t i = 0; i < n; i++) {
		if (window_ns(&ev[i].w) < t0)
			continue;
		if (!ev[i].have_b || !ev[i].have_c) {
			++*odd;
			continue;
		}
		w[k++] = ev[i].w;
	}
	return k;
}

/* perf script's windows dated at or after t0 from its output f into w (TRACE_WMAX). */
static inline size_t perf_windows(FILE *f, uint64_t t0, struct stream_line *w, size_t *lines)
{
	char line[1024];
	size_t n = 0;

	*lines = 0;
	while (f && fgets(line, sizeof(line), f)) {
		++*lines;
		if (n < TRACE_WMAX && trace_window(line, &w[n]) && window_ns(&w[n]) >= t0)
			n++;
	}
	return n;
}

static inline int window_by_seq(const void *a, const void *b)
{
	const struct stream_line *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The first field in which two windows of the same seq differ, in @why. */
static inline void window_field_diff(const struct stream_line *s, const struct stream_line *t,
				     char *why, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
		{ "cpu", offsetof(struct stream_line, cpu) },
		{ "sec", offsetof(struct stream_line, sec) },
		{ "nsec", offsetof(struct stream_line, nsec) },
		{ "inner_ns", offsetof(struct stream_line, inner_ns) },
		{ "outer_ns", offsetof(struct stream_line, outer_ns) },
		{ "count", offsetof(struct stream_line, count) },
		{ "nmi_count", offsetof(struct stream_line, nmi_count) },
		{ "nmi_ns", offsetof(struct stream_line, nmi_ns) },
		{ "smi_count", offsetof(struct stream_line, smi_count) },
		{ "smi_ns", offsetof(struct stream_line, smi_ns) },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint64_t a = *(const uint64_t *)((const char *)s + f[i].off);
		uint64_t b = *(const uint64_t *)((const char *)t + f[i].off);

		if (a != b) {
			snprintf(why, len, "seq %" PRIu64 ": %s is %" PRIu64 ", the stream's %" PRIu64,
				 s->seq, f[i].name, b, a);
			return;
		}
	}
	snprintf(why, len, "seq %" PRIu64 ": smi_known is %d, the stream's %d", s->seq,
		 t->smi_known, s->smi_known);
}

/*
 * Whether a tool's windows tw (sorted by seq) are the stream's st (in seq
 * order), one for one and field for field. When not, the first difference
 * goes into @why as a user reads it: a window of the stream the tool did not
 * see, one the stream did not report, one seen twice, or a field that
 * differs; *agree is how many windows agree before it.
 */
static inline bool windows_match(const struct stream_line *st, size_t ns,
				 const struct stream_line *tw, size_t nt, char *why, size_t len,
				 size_t *agree)
{
	size_t i = 0, j = 0;

	snprintf(why, len, "none");
	for (; i < ns && j < nt; i++, j++) {
		*agree = i;
		if (j > 0 && tw[j].seq == tw[j - 1].seq) {
			snprintf(why, len, "seq %" PRIu64 " seen twice", tw[j].seq);
			return false;
		}
		if (st[i].seq < tw[j].seq) {
			snprintf(why, len, "seq %" PRIu64 " (cpu %" PRIu64 ") of the stream not seen",
				 st[i].seq, st[i].cpu);
			return false;
		}
		if (st[i].seq > tw[j].seq) {
			snprintf(why, len, "seq %" PRIu64 " (cpu %" PRIu64 ") is not in the stream",
				 tw[j].seq, tw[j].cpu);
			return false;
		}
		if (!same_window(&st[i], &tw[j])) {
			window_field_diff(&st[i], &tw[j], why, len);
			return false;
		}
	}
	*agree = i;
	if (i < ns)
		snprintf(why, len, "seq %" PRIu64 " (cpu %" PRIu64 ") of the stream not seen",
			 st[i].seq, st[i].cpu);
	else if (j > 0 && j < nt && tw[j].seq == tw[j - 1].seq)
		snprintf(why, len, "seq %" PRIu64 " seen twice", tw[j].seq);
	else if (j < nt)
		snprintf(why, len, "seq %" PRIu64 " (cpu %" PRIu64 ") is not in the stream",
			 tw[j].seq, tw[j].cpu);
	return i == ns && j == nt;
}

#endif /* HWLAT_TRACE_COMPARE_H */
