/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SMI counts of a scan (service/smi-total.c), TAP output. Proves that
 * the module's `smi` file decides availability (an absent file, an old
 * module, too); the machine SMI total is the largest per-CPU total in
 * per-cpu mode and the sum in every other mode, at exact values; the
 * scan's SMI line lists every CPU; a sample of a CPU beyond HWLAT_MAX_CPUS
 * changes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smi-total.h"
#include "stream.h"
#include "unit-test.h"

static void test_smi_source(void)
{
	static const struct {
		const char *text;
		bool available;
		const char *reason;
	} cases[] = {
		{ "MSR_SMI_COUNT\n", true, "" },
		{ "MSR_SMI_COUNT", true, "" },
		{ "unavailable: not an Intel CPU\n", false, "not an Intel CPU" },
		{ "unavailable: MSR_SMI_COUNT cannot be read (a hypervisor may hide it)\n", false,
		  "MSR_SMI_COUNT cannot be read (a hypervisor may hide it)" },
		{ NULL, false, SMI_REASON_OLD_MODULE },
		{ "", false, "the module's smi file says ''" },
		{ "unavailable: \n", false, "the module's smi file says 'unavailable:'" },
		{ "msr_smi_count", false, "the module's smi file says 'msr_smi_count'" },
	};
	smi_source src;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		smi_source_parse(cases[i].text, &src);
		ok(src.available == cases[i].available && strcmp(src.reason, cases[i].reason) == 0,
		   "smi file %s%.*s%s: available %d, reason '%s'", cases[i].text ? "'" : "",
		   cases[i].text ? (int)strcspn(cases[i].text, "\n") : 6,
		   cases[i].text ? cases[i].text : "absent", cases[i].text ? "'" : "",
		   src.available, src.reason);
	}
}

static hwlat_sample smi_sample(unsigned cpu, uint64_t smis)
{
	return (hwlat_sample){ .seq = 1, .cpu = cpu, .smi_count_known = true,
			       .smi_count = smis, .smi_ns_known = true };
}

/* Adds windows (cpu, smis) to a fresh tally and computes the total. */
static void total_of(smi_tally *t, const smi_source *src, const char *mode,
		     const unsigned (*w)[2], size_t n, smi_total *ret)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		hwlat_sample s = smi_sample(w[i][0], w[i][1]);

		smi_source_apply(src, &s);
		smi_tally_add(t, &s);
	}
	smi_total_compute(t, src, mode, ret);
}

static char *print_to_string(const smi_tally *t, const smi_total *total, const char *cpus)
{
	static char out[1024];
	FILE *f = fmemopen(out, sizeof(out), "w");

	smi_print(f, t, total, cpus);
	fclose(f);
	return out;
}

static void test_smi_total(void)
{
	/* A broadcast SMI seen by both samplers of per-cpu mode, 5 times. */
	static const unsigned per_cpu_equal[][2] = { { 0, 2 }, { 1, 2 }, { 0, 3 }, { 1, 3 } };
	static const unsigned per_cpu_unequal[][2] = { { 0, 3 }, { 1, 4 }, { 1, 1 } };
	/* One sampler at a time: every window's SMIs are distinct SMIs. */
	static const unsigned round_robin[][2] = { { 0, 1 }, { 1, 2 }, { 0, 3 }, { 1, 4 } };
	static smi_tally t;
	smi_source avail = { .available = true }, none;
	smi_total tot;
	hwlat_sample dash;

	smi_source_parse("unavailable: not an Intel CPU", &none);

	total_of(&t, &avail, "per-cpu", per_cpu_equal, 4, &tot);
	ok(tot.known && tot.total == 5 && strcmp(tot.method, "max-per-cpu") == 0,
	   "per-cpu, 5 broadcast SMIs on each of 2 CPUs: total %" PRIu64 " (%s), not 10",
	   tot.total, tot.method);
	ok(strcmp(print_to_string(&t, &tot, "0-1"),
		  "machine total 5 (max-per-cpu); per CPU 0: 5, 1: 5") == 0,
	   "scan prints: %s", print_to_string(&t, &tot, "0-1"));

	total_of(&t, &avail, "per-cpu", per_cpu_unequal, 3, &tot);
	ok(tot.known && tot.total == 5, "per-cpu, per-CPU totals 3 and 5: total %" PRIu64,
	   tot.total);

	for (size_t m = 0; m < 4; m++) {
		static const char *const modes[] = { "round-robin", "stop-machine", "none",
						     "unknown" };

		total_of(&t, &avail, modes[m], round_robin, 4, &tot);
		ok(tot.known && tot.total == 10 && strcmp(tot.method, "sum") == 0,
		   "%s: windows with 1+2+3+4 SMIs: total %" PRIu64 " (%s)", modes[m], tot.total,
		   tot.method);
	}
	ok(strcmp(print_to_string(&t, &tot, "0-2"),
		  "machine total 10 (sum); per CPU 0: 4, 1: 6, 2: 0") == 0,
	   "a CPU of the list without SMIs shows 0: %s", print_to_string(&t, &tot, "0-2"));
	ok(strcmp(print_to_string(&t, &tot, "unknown"),
		  "machine total 10 (sum); per CPU 0: 4, 1: 6") == 0,
	   "without a cpulist, the CPUs seen: %s", print_to_string(&t, &tot, "unknown"));

	total_of(&t, &avail, "round-robin", round_robin, 0, &tot);
	ok(tot.known && tot.total == 0 &&
		   strcmp(print_to_string(&t, &tot, "unknown"),
			  "machine total 0 (sum); per CPU none sampled") == 0,
	   "no windows, SMIs countable: a known 0: %s", print_to_string(&t, &tot, "unknown"));

	total_of(&t, &none, "per-cpu", per_cpu_equal, 4, &tot);
	ok(!tot.known && tot.total == 0 && strcmp(tot.reason, "not an Intel CPU") == 0 &&
		   t.unknown_windows == 4,
	   "module cannot count: every window unavailable, total unavailable (%s)", tot.reason);
	ok(strcmp(print_to_string(&t, &tot, "0-1"), "unavailable (not an Intel CPU)") == 0,
	   "scan prints: %s", print_to_string(&t, &tot, "0-1"));

	total_of(&t, &avail, "round-robin", round_robin, 4, &tot);
	dash = smi_sample(1, 0);
	dash.smi_count_known = false;
	smi_tally_add(&t, &dash);
	smi_total_compute(&t, &avail, "round-robin", &tot);
	ok(!tot.known && strcmp(tot.reason, "1 window could not count SMIs") == 0,
	   "one '-' window makes the total unavailable: %s", tot.reason);
}

static void test_smi_tally_bound(void)
{
	static smi_tally t, zero;
	hwlat_sample s = { .seq = 1, .cpu = HWLAT_MAX_CPUS, .smi_count_known = true,
			   .smi_count = 5 };

	smi_tally_add(&t, &s);
	ok(memcmp(&t, &zero, sizeof(t)) == 0,
	   "a sample of CPU %u (beyond the last) adds nothing: seen[0] %llx, unknown %llu",
	   HWLAT_MAX_CPUS, (unsigned long long)t.seen.bits[0],
	   (unsigned long long)t.unknown_windows);
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_smi_source();
	test_smi_total();
	test_smi_tally_bound();
	return tap_finish();
}
