/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of service/tracer.c: a cpulist as the kernel's
 * tracing_cpumask and back (groups of 32 bits, most significant first,
 * separated by commas), and the trace_pipe line parser at its edges:
 * padding, the NMI fields, lost-event lines, other tracers' lines, and
 * lines that name the hwlat format but break it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"
#include "unit-test.h"

static void test_cpumask(void)
{
	static const struct {
		const char *list, *mask;
	} cases[] = {
		{ "0", "1" },
		{ "1", "2" },
		{ "0-3,6", "4f" },
		{ "31", "80000000" },
		{ "32", "1,00000000" },
		{ "0,63", "80000000,00000001" },
		{ "64", "1,00000000,00000000" },
		{ "1023", "80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000,"
			  "00000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000" },
	};
	char buf[1024], back[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = cpumask_from_cpulist(cases[i].list, buf, sizeof(buf));
		int r2 = cpulist_from_cpumask(cases[i].mask, back, sizeof(back));

		ok(r == 0 && strcmp(buf, cases[i].mask) == 0 && r2 == 0 &&
			   strcmp(back, cases[i].list) == 0,
		   "cpus %s <-> tracing_cpumask %s (got %d '%s', %d '%s')", cases[i].list,
		   cases[i].mask, r, r == 0 ? buf : "", r2, r2 == 0 ? back : "");
	}
	ok(cpulist_from_cpumask("ff", back, sizeof(back)) == 0 && strcmp(back, "0-7") == 0,
	   "mask ff is CPUs 0-7");
	ok(cpulist_from_cpumask("FF,0000000F", back, sizeof(back)) == 0 &&
		   strcmp(back, "0-3,32-39") == 0,
	   "upper-case hex and a group comma: FF,0000000F is 0-3,32-39 (got %s)", back);
	ok(cpulist_from_cpumask("0", back, sizeof(back)) == -EINVAL, "an empty mask is refused");
	ok(cpulist_from_cpumask("", back, sizeof(back)) == -EINVAL, "no mask is refused");
	ok(cpulist_from_cpumask("3g", back, sizeof(back)) == -EINVAL, "a non-hex digit is refused");
	ok(cpumask_from_cpulist("0-3,6", buf, 2) == -ENOBUFS, "a buffer too small for 4f is -ENOBUFS");
}

static void test_parse(void)
{
	hwlat_sample s;
	uint64_t lost = 0;
	int r;

	r = tracer_parse_line("  <...>-77 [003] d..2. 55.000001: #12345 inner/outer(us): 9999/0 "
			      "ts:4294967296.999999999 count:42",
			      &s, &lost);
	ok(r == TRACER_LINE_SAMPLE && s.seq == 12345 && s.cpu == 3 && s.inner_ns == 9999000 &&
		   s.outer_ns == 0 && s.timestamp_ns == UINT64_C(4294967296999999999) &&
		   s.count == 42 && s.nmi_count == 0 && s.nmi_ns == 0 && !s.nmi_ns_unavailable &&
		   !s.smi_count_known && !s.smi_ns_known,
	   "an unpadded line: seq, cpu, us as ns, ts, count; no NMIs; SMIs unknown");
	/* A task name with brackets and a '#': the last ones before the marker count. */
	r = tracer_parse_line(" a[9]#b-1 [002] d.... 1.0: #3     inner/outer(us):    1/2     "
			      "ts:1.000000000 count:1 nmi-total:0 nmi-count:1",
			      &s, &lost);
	ok(r == TRACER_LINE_SAMPLE && s.cpu == 2 && s.seq == 3 && s.nmi_count == 1 &&
		   s.nmi_ns == 0 && !s.nmi_ns_unavailable,
	   "brackets and '#' in the task name; nmi-total 0 is a known 0");
	/* Kernels before 5.7 wrote no count: a line means at least one gap. */
	r = tracer_parse_line("  <...>-9 [001] d... 2.0: #7 inner/outer(us): 12/13 ts:5.000000001",
			      &s, &lost);
	ok(r == TRACER_LINE_SAMPLE && s.seq == 7 && s.cpu == 1 && s.count == 1 &&
		   s.inner_ns == 12000 && s.outer_ns == 13000,
	   "a line without count (before 5.7): count 1, the rest as ever (r=%d)", r);
	r = tracer_parse_line("  <...>-9 [001] d... 2.0: #8 inner/outer(us): 1/2 ts:5.000000001 "
			      "nmi-total:4 nmi-count:1",
			      &s, &lost);
	ok(r == TRACER_LINE_SAMPLE && s.count == 1 && s.nmi_count == 1 && s.nmi_ns == 4000,
	   "without count, with the NMI fields (r=%d)", r);
	/* As 5.10-rt writes them: seven flags (lazy preemption, migrate-disable). */
	r = tracer_parse_line("           <...>-317     [000] dn.....    46.965357: #11    "
			      "inner/outer(us): 3860/4054  ts:1796515243.555616170 count:177 "
			      "nmi-total:219 nmi-count:1",
			      &s, &lost);
	ok(r == TRACER_LINE_SAMPLE && s.seq == 11 && s.cpu == 0 && s.inner_ns == 3860000 &&
		   s.outer_ns == 4054000 && s.count == 177 && s.nmi_count == 1 &&
		   s.nmi_ns == 219000,
	   "a 5.10-rt line with seven flag characters (r=%d)", r);
	lost = 0;
	ok(tracer_parse_line("CPU:12 [LOST 18446744073709551615 EVENTS]", &s, &lost) ==
			   TRACER_LINE_LOST &&
		   lost == UINT64_MAX,
	   "a lost-events line gives its count");
	ok(tracer_parse_line("CPU:1 [LOST 3 EVENTS] x", &s, &lost) == TRACER_LINE_OTHER,
	   "a lost-events line with more after it is another line");
	ok(tracer_parse_line("# tracer: hwlat", &s, &lost) == TRACER_LINE_OTHER,
	   "a header line is another tracer's line");
	ok(tracer_parse_line("", &s, &lost) == TRACER_LINE_OTHER, "an empty line is no sample");

	static const char *const bad[] = {
		"x [000] d. 1.0: #0 inner/outer(us): 1/2 ts:1.000000000 count:1",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.00000000 count:1",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:x",
		"x [000] d. 1.0: #1 inner/outer(us): 1-2 ts:1.000000000 count:1",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1 nmi-total:5",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1 junk",
		"x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1 .000000000 count:1",
		"x [abc] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1",
		"x d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1",
		"x [000] d. 1.0: 1 inner/outer(us): 1/2 ts:1.000000000 count:1",
		"x [1024] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(tracer_parse_line(bad[i], &s, &lost) == -EINVAL, "malformed: '%s'", bad[i]);
	ok(tracer_parse_line("x [000] d. 1.0: #1 inner/outer(us): 18446744073709552/2 "
			     "ts:1.000000000 count:1",
			     &s, &lost) == -ERANGE,
	   "microseconds beyond 64 bits of ns are -ERANGE");
	ok(tracer_parse_line("x [000] d. 1.0: #1 inner/outer(us): 1/2 "
			     "ts:18446744074.000000000 count:1",
			     &s, &lost) == -ERANGE,
	   "a timestamp beyond 64 bits of ns is -ERANGE");
	ok(tracer_parse_line("x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1 "
			     "nmi-total:3 nmi-count:18446744073709551616",
			     &s, &lost) == -ERANGE,
	   "an nmi-count beyond 64 bits after nmi-total is -ERANGE");
	ok(tracer_parse_line("x [000] d. 1.0: #1 inner/outer(us): 1/2 ts:1.000000000 count:1 "
			     "nmi-count:18446744073709551616",
			     &s, &lost) == -ERANGE,
	   "an nmi-count beyond 64 bits alone is -ERANGE");
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_cpumask();
	test_parse();
	return tap_finish();
}
