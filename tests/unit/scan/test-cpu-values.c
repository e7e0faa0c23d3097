/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-CPU totals files (service/cpu-values.c: `sampled`, `skipped`),
 * TAP output. Proves that: `skipped` parses like `sampled` and its
 * messages speak of windows; and, for the time sampled: a valid
 * `sampled` text gives each CPU's figure and their sum, and a malformed
 * one leaves the result untouched; under module parameters the scan's part
 * is each CPU's growth, a CPU that did not grow is not listed, and a CPU
 * whose figure went down makes it unknown; the journal fields are
 * "unavailable" without a figure, 0 and empty for none, and the list of
 * 1024 CPUs with 20-digit figures fits in a summary entry; smi-rate
 * divides by the sum over CPUs (method sum) or the longest CPU's time
 * (max-per-cpu).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "journal-entry.h"
#include "sampled.h"
#include "unit-test.h"

static sampled_time t, u;

static bool cpus_are(const sampled_time *s, const char *want)
{
	char *got = cpu_values_format(s);
	bool same = got && strcmp(got, want) == 0;

	if (!same)
		printf("# got '%s', want '%s'\n", got ? got : "(null)", want);
	free(got);
	return same;
}

static void test_parse(void)
{
	static const char text[] = "0 450123456\n1 449876543\n";
	int r;

	r = cpu_values_parse(&cpu_values_sampled, text, sizeof(text) - 1, "x/sampled", &t);
	ok(r == 0 && t.total == 899999999 && t.v[0] == 450123456 && t.v[1] == 449876543 &&
		   cpus_are(&t, "0:450123456 1:449876543"),
	   "two CPUs: their figures and the sum 899999999");
	r = cpu_values_parse(&cpu_values_sampled, "", 0, "x/sampled", &t);
	ok(r == 0 && t.total == 0 && cpus_are(&t, ""), "an empty file: 0 and no CPU");
	t.total = 77;
	r = cpu_values_parse(&cpu_values_sampled, "2 5\n1 6\n", 8, "x/sampled", &t);
	ok(r == -EBADMSG && t.total == 77, "a malformed file: -EBADMSG, the result untouched");
	/* The length, not a NUL, ends the text: what comes after is no line. */
	r = cpu_values_parse(&cpu_values_sampled, "4 9\n5 1\n", 4, "x/sampled", &t);
	ok(r == 0 && t.total == 9 && cpus_are(&t, "4:9"), "only len bytes are parsed");
}

/* `skipped`: the same lines, windows in the messages. */
static void test_skipped(void)
{
	int r;

	r = cpu_values_parse(&cpu_values_skipped, "1 3\n5 2\n", 8, "x/skipped", &t);
	ok(r == 0 && t.total == 5 && t.v[1] == 3 && t.v[5] == 2 && cpus_are(&t, "1:3 5:2"),
	   "skipped: two CPUs, 5 windows");
	t.total = 77;
	r = cpu_values_parse(&cpu_values_skipped, "1 x\n", 4, "x/skipped", &t);
	ok(r == -EBADMSG && t.total == 77, "skipped: a malformed line, the result untouched");
	cpu_values_parse(&cpu_values_skipped, "1 3\n", 4, "x/skipped", &u);
	cpu_values_parse(&cpu_values_skipped, "1 2\n", 4, "x/skipped", &t);
	r = cpu_values_since(&cpu_values_skipped, &t, &u, "x/skipped");
	ok(r == -ERANGE, "skipped: a CPU's count went down: -ERANGE");
}

static void test_since(void)
{
	int r;

	cpu_values_parse(&cpu_values_sampled, "0 100\n1 200\n3 7\n", 16, "x/sampled", &u);
	cpu_values_parse(&cpu_values_sampled, "0 350\n1 200\n2 50\n3 7\n", 21, "x/sampled", &t);
	r = cpu_values_since(&cpu_values_sampled, &t, &u, "x/sampled");
	ok(r == 0 && t.total == 300 && cpus_are(&t, "0:250 2:50"),
	   "locked: the growth per CPU (0: 250, 2: 50), CPUs that did not grow left out");
	cpu_values_parse(&cpu_values_sampled, "0 100\n1 200\n", 12, "x/sampled", &u);
	cpu_values_parse(&cpu_values_sampled, "0 350\n1 199\n", 12, "x/sampled", &t);
	r = cpu_values_since(&cpu_values_sampled, &t, &u, "x/sampled");
	ok(r == -ERANGE && t.v[1] == 199, "locked: a CPU's figure went down: -ERANGE, unchanged");
}

static void test_entry(void)
{
	static journal_entry e;
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .status = HWLAT_STATUS_COMPLETED,
		.mode = "per-cpu", .cpus = "0-1023", .kernel = "k", .cpu_model = "m", .clock = "c",
		.smi_method = HWLAT_SMI_METHOD_MAX_PER_CPU, .smi_unavailable = "x",
	};
	char want_last[64];
	int r;

	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SAMPLED_NS, "unavailable") &&
		   field_is(&e, HWLAT_F_SAMPLED_CPU_NS, "unavailable"),
	   "no figure: both fields 'unavailable'");

	memset(&t, 0, sizeof(t));
	sum.sampled = &t;
	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SAMPLED_NS, "0") &&
		   field_is(&e, HWLAT_F_SAMPLED_CPU_NS, ""),
	   "no CPU sampled: HWLAT_SAMPLED_NS=0, HWLAT_SAMPLED_CPU_NS empty");

	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++) {
		t.listed.bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
		t.v[cpu] = UINT64_C(10000000000000000000) + cpu;
	}
	t.total = UINT64_MAX;
	r = journal_entry_summary(&e, &sum);
	snprintf(want_last, sizeof(want_last), " 1023:%" PRIu64, t.v[1023]);
	{
		static char buf[32768];
		const char *v = entry_field(&e, HWLAT_F_SAMPLED_CPU_NS, buf, sizeof(buf));

		ok(r == 0 && v && strncmp(v, "0:10000000000000000000 1:10000000000000000001 ", 46) == 0 &&
			   strlen(v) == 1024 * 20 + 2986 + 1024 + 1023 &&
			   strcmp(v + strlen(v) - strlen(want_last), want_last) == 0 &&
			   field_is(&e, HWLAT_F_SAMPLED_NS, "18446744073709551615"),
		   "1024 CPUs with 20-digit figures fit in the summary entry (%zu bytes)",
		   v ? strlen(v) : 0);
	}
}

/* smi-rate's time (docs/interfaces.md section 4): as the SMI total counts. */
static void test_smi_ns(void)
{
	cpu_values_parse(&cpu_values_sampled, "0 100\n3 700\n5 300\n", 18, "x/sampled", &t);
	ok(sampled_smi_ns(&t, HWLAT_SMI_METHOD_SUM) == 1100,
	   "method sum (one sampler at a time): the sum over CPUs, 1100");
	ok(sampled_smi_ns(&t, HWLAT_SMI_METHOD_MAX_PER_CPU) == 700,
	   "method max-per-cpu (all at once, each SMI once): the longest CPU, 700 of CPU 3");
	cpu_values_parse(&cpu_values_sampled, "", 0, "x/sampled", &t);
	ok(sampled_smi_ns(&t, HWLAT_SMI_METHOD_MAX_PER_CPU) == 0 &&
		   sampled_smi_ns(&t, HWLAT_SMI_METHOD_SUM) == 0,
	   "no width completed: 0 with either method");
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_parse();
	test_since();
	test_skipped();
	test_entry();
	test_smi_ns();
	return tap_finish();
}
