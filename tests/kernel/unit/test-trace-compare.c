// SPDX-License-Identifier: GPL-2.0
/*
 * test-trace-compare: the guest test trace-tools judges bpftrace's and
 * perf's windows of the trace event against the stream's with
 * tests/kernel/guest/trace-compare.h. Here, on the host, against worked
 * examples: that a window missing from a tool, one the stream never
 * reported, one seen twice or one field off fails the comparison with the
 * message a failed run prints, and that the tools' output is read back
 * into exactly the windows it holds (bpftrace's three lines per event
 * joined by seq, perf script's lines, windows before the measured run left
 * out, anything else counted).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "../guest/trace-compare.h"

#define NS 1000000000ull

/* The stream of a measured run: three windows from 2 CPUs, SMIs not counted. */
static const struct stream_line stream[] = {
	{ 1, 0, 1700000000, 100, 12, 3, 1, 0, 0, 0, 0, false },
	{ 2, 1, 1700000000, 200000000, 7, 40, 2, 1, 5000, 0, 0, false },
	{ 3, 0, 1700000000, 400000000, 9, 0, 1, 0, 0, 0, 0, false },
};
#define N_STREAM (sizeof(stream) / sizeof(stream[0]))

static void check_match(const char *what, const struct stream_line *tw, size_t nt,
			bool want_match, const char *want_why, size_t want_agree)
{
	char why[160];
	size_t agree = 99;
	bool match = windows_match(stream, N_STREAM, tw, nt, why, sizeof(why), &agree);

	if (!ok(match == want_match && strcmp(why, want_why) == 0 && agree == want_agree, "%s",
		what))
		diag("match %d, \"%s\", %zu agree (want %d, \"%s\", %zu)", match, why, agree,
		     want_match, want_why, want_agree);
}

static void comparisons(void)
{
	struct stream_line t[8];

	memcpy(t, stream, sizeof(stream));
	check_match("the same windows match", t, 3, true, "none", 3);
	check_match("no window at all: the stream's first is not seen", t, 0, false,
		    "seq 1 (cpu 0) of the stream not seen", 0);
	check_match("the last window missing: it is named", t, 2, false,
		    "seq 3 (cpu 0) of the stream not seen", 2);

	t[1] = stream[2];
	check_match("a window missing in the middle: it is named", t, 2, false,
		    "seq 2 (cpu 1) of the stream not seen", 1);

	memcpy(t, stream, sizeof(stream));
	t[3] = stream[2];
	t[3].seq = 4, t[3].cpu = 1;
	check_match("an extra window after the stream's: it is named", t, 4, false,
		    "seq 4 (cpu 1) is not in the stream", 3);

	t[0].seq = 0;
	memcpy(&t[1], stream, sizeof(stream));
	check_match("an extra window before the stream's: it is named", t, 4, false,
		    "seq 0 (cpu 0) is not in the stream", 0);

	t[0] = stream[0], t[1] = stream[1], t[2] = stream[1], t[3] = stream[2];
	check_match("a window seen twice: it is named", t, 4, false, "seq 2 seen twice", 2);
	t[2] = stream[2];
	check_match("the last window seen twice: it is named", t, 4, false, "seq 3 seen twice",
		    3);

	memcpy(t, stream, sizeof(stream));
	t[1].inner_ns = 8;
	check_match("one gap off by 1 ns: the field and both values", t, 3, false,
		    "seq 2: inner_ns is 8, the stream's 7", 1);
	memcpy(t, stream, sizeof(stream));
	t[2].nsec += 1;
	check_match("the time off by 1 ns: the field and both values", t, 3, false,
		    "seq 3: nsec is 400000001, the stream's 400000000", 2);
	memcpy(t, stream, sizeof(stream));
	t[1].cpu = 0;
	check_match("another CPU: the field and both values", t, 3, false,
		    "seq 2: cpu is 0, the stream's 1", 1);
	memcpy(t, stream, sizeof(stream));
	t[1].nmi_ns = 0;
	check_match("NMI time lost: the field and both values", t, 3, false,
		    "seq 2: nmi_ns is 0, the stream's 5000", 1);
	memcpy(t, stream, sizeof(stream));
	t[0].smi_known = true;
	check_match("SMIs counted where the stream says \"-\": smi_known", t, 3, false,
		    "seq 1: smi_known is 1, the stream's 0", 0);
}

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

/* bpftrace's output of a run: a warm-up window, then two interleaved events. */
static const char bt_ok[] = "Attaching 1 probe...\n"
			    "hwlat-a 9 1 1699999999 5 1 2\n"
			    "hwlat-b 9 1 0 0 0 0\n"
			    "hwlat-c 9 0\n"
			    "hwlat-a 1 0 1700000000 100 12 3\n"
			    "hwlat-a 2 1 1700000000 200000000 7 40\n"
			    "hwlat-b 1 1 0 0 0 0\n"
			    "hwlat-b 2 2 1 5000 0 0\n"
			    "hwlat-c 2 0\n"
			    "hwlat-c 1 0\n"
			    "\n"
			    "\n";

/* bt_windows() on the text s, from the start of the measured run. */
static size_t bt_read(const char *s, struct stream_line *w, size_t *odd)
{
	FILE *f = text(s);
	size_t n;

	*odd = 99;
	n = bt_windows(f, 1700000000 * NS, w, odd);
	fclose(f);
	return n;
}

static void bpftrace_output(void)
{
	struct stream_line w[4];
	size_t odd, n;

	n = bt_read(bt_ok, w, &odd);
	if (!ok(n == 2 && odd == 0 && same_window(&w[0], &stream[0]) &&
			same_window(&w[1], &stream[1]),
		"bpftrace: two interleaved events joined by seq, the warm-up's left out, the banner and empty lines ignored"))
		diag("%zu windows, %zu odd", n, odd);

	n = bt_read("hwlat-a 1 0 1700000000 100 12 3\n"
		    "hwlat-b 1 1 0 0 0 0\n"
		    "hwlat-a 2 1 1700000000 200000000 7 40\n"
		    "hwlat-b 2 2 1 5000 0 0\n"
		    "hwlat-c 2 0\n",
		    w, &odd);
	if (!ok(n == 1 && odd == 1 && w[0].seq == 2,
		"bpftrace: an event lacking a line is no window and counts as odd"))
		diag("%zu windows, %zu odd", n, odd);

	n = bt_read("hwlat-a 1 0 1700000000 100 12 3\n"
		    "hwlat-b 1 1 0 0 0 0\n"
		    "hwlat-c 1 0\n"
		    "ERROR: something bpftrace said\n"
		    "hwlat-b 7 1 0 0 0 0\n",
		    w, &odd);
	if (!ok(n == 1 && odd == 2, "bpftrace: a line of its own and a line of no event count as odd"))
		diag("%zu windows, %zu odd", n, odd);
}

static void perf_output(void)
{
	struct stream_line w[4];
	size_t lines = 0, n;
	FILE *f = text(
		"   kworker/1:1  41 [001]  12.5: hwlat_detector:sample: seq=9 cpu=1 ts=1699999999.000000005 inner_ns=1 outer_ns=2 count=1 nmi_count=0 nmi_ns=0 smi_count=-1 smi_ns=-1\n"
		"  hwlatd/0  40 [000]  13.0: hwlat_detector:sample: seq=1 cpu=0 ts=1700000000.000000100 inner_ns=12 outer_ns=3 count=1 nmi_count=0 nmi_ns=0 smi_count=-1 smi_ns=-1\n"
		"  hwlatd/1  41 [001]  13.2: hwlat_detector:sample: seq=2 cpu=1 ts=1700000000.200000000 inner_ns=7 outer_ns=40 count=2 nmi_count=1 nmi_ns=5000 smi_count=-1 smi_ns=-1\n"
		"  hwlatd/1  41 [001]  13.3: hwlat_detector:sample: seq=3 cpu=1 ts=1700000000.300000000 inner_ns=7 outer_ns=40 count=2 nmi_count=1 nmi_ns=5000 smi_count=2 smi_ns=90000\n"
		"some other line\n");

	n = perf_windows(f, 1700000000 * NS, w, &lines);
	fclose(f);
	if (!ok(n == 3 && lines == 5 && same_window(&w[0], &stream[0]) &&
			same_window(&w[1], &stream[1]) && w[2].smi_known && w[2].smi_count == 2 &&
			w[2].smi_ns == 90000,
		"perf script: the event's lines after the start read back, SMI figures of -1 as not known"))
		diag("%zu windows of %zu lines", n, lines);
}

/*
 * The program's lines are the ones bt_windows() reads: run through a
 * printf() of the host with the fields of stream[1], they read back as it.
 */
static void bpftrace_program(void)
{
	const struct stream_line *w = &stream[1];
	char out[512], fmt[3][64];
	const char *p = bt_prog;
	struct stream_line got[2];
	size_t n, odd;

	for (int i = 0; i < 3; i++) {
		const char *q = strstr(p, "printf(\"");
		size_t len;

		if (!q)
			break;
		q += 8;
		len = strcspn(q, "\"");
		snprintf(fmt[i], sizeof(fmt[i]), "%.*s", (int)len, q);
		p = q + len;
	}
	/* The program's "\\n" is bpftrace's escape for a newline: a line each. */
	snprintf(out, sizeof(out), "hwlat-a %llu %u %lld %u %llu %llu\nhwlat-b %llu %llu %llu %llu %llu %llu\nhwlat-c %llu %u\n",
		 (unsigned long long)w->seq, (unsigned int)w->cpu, (long long)w->sec,
		 (unsigned int)w->nsec, (unsigned long long)w->inner_ns,
		 (unsigned long long)w->outer_ns, (unsigned long long)w->seq,
		 (unsigned long long)w->count, (unsigned long long)w->nmi_count,
		 (unsigned long long)w->nmi_ns, (unsigned long long)w->smi_count,
		 (unsigned long long)w->smi_ns, (unsigned long long)w->seq, w->smi_known);
	n = bt_read(out, got, &odd);
	if (!ok(strcmp(fmt[0], "hwlat-a %llu %u %lld %u %llu %llu\\n") == 0 &&
			strcmp(fmt[1], "hwlat-b %llu %llu %llu %llu %llu %llu\\n") == 0 &&
			strcmp(fmt[2], "hwlat-c %llu %u\\n") == 0 && n == 1 && odd == 0 &&
			same_window(&got[0], w),
		"the bpftrace program's three printf()s are the lines bt_windows() reads"))
		diag("formats \"%s\", \"%s\", \"%s\"; %zu windows, %zu odd", fmt[0], fmt[1], fmt[2],
		     n, odd);
}

int main(void)
{
	comparisons();
	bpftrace_output();
	perf_output();
	bpftrace_program();
	return tap_done();
}
