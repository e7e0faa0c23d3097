/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of hwlat-scan's SMI and platform parts (issue 12), TAP output.
 * Proves that: the stream line with smi_ns and the old one without parse,
 * "-" is unavailable (never 0) and nothing else may be "-"; unavailable
 * counts become the word "unavailable" in the journal; the module's `smi`
 * file decides availability (an absent file, an old module, too); the
 * machine SMI total is the largest per-CPU total in per-cpu mode and the
 * sum in every other mode, at exact values; the scan's SMI line lists
 * every CPU; a CPUID vendor id maps to the documented names; TSC stability
 * follows the documented rule; and the platform files are read below a
 * root that tests can fake.
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
#include "platform.h"
#include "smi-total.h"
#include "stream.h"
#include "unit-test.h"

static bool field_is(const journal_entry *e, const char *name, const char *want)
{
	char buf[512];
	const char *v = entry_field(e, name, buf, sizeof(buf));

	if (!want)
		return v == NULL;
	return v && strcmp(v, want) == 0;
}

static void test_stream_lines(void)
{
	static const char *const bad[] = {
		/* 8 and 11 space-separated fields (valid: 9 and 10) */
		"1 0 1700000000.000000001 212400 1000 1 0 0",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 5 6",
		/* "-" only for smi_count and smi_ns */
		"1 0 1700000000.000000001 212400 1000 1 - 0 1 5",
		"1 0 1700000000.000000001 212400 1000 1 0 - 1 5",
		"1 - 1700000000.000000001 212400 1000 1 0 0 1 5",
		"1 0 1700000000.000000001 - 1000 1 0 0 1 5",
		/* not "-": signs, doubled, empty */
		"1 0 1700000000.000000001 212400 1000 1 0 0 -1 5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 -- 5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 -5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 ",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1  5",
		"1 0 1700000000.000000001 212400 1000 1 0 0 1 x",
	};
	hwlat_sample s, untouched;
	int r;

	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3 210000", &s);
	ok(r == 0 && s.seq == 17 && s.cpu == 3 && s.inner_ns == 212400 && s.count == 2 &&
		   s.nmi_count == 1 && s.nmi_ns == 5000 && s.smi_count_known && s.smi_count == 3 &&
		   s.smi_ns_known && s.smi_ns == 210000,
	   "line with smi_ns: smi_count 3, smi_ns 210000 (r=%d)", r);

	r = stream_parse_line("17 3 1700000000.000000001 212400 1000 2 1 5000 3", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 3 && !s.smi_ns_known && s.smi_ns == 0,
	   "old line without smi_ns: smi_count 3, smi_ns unavailable (r=%d)", r);

	r = stream_parse_line("18 1 1700000000.000000002 30000 0 1 0 0 - -", &s);
	ok(r == 0 && s.seq == 18 && !s.smi_count_known && !s.smi_ns_known &&
		   s.smi_count == 0 && s.smi_ns == 0,
	   "\"- -\": smi_count and smi_ns unavailable (r=%d)", r);

	r = stream_parse_line("19 1 1700000000.000000002 30000 0 1 0 0 -", &s);
	ok(r == 0 && !s.smi_count_known && !s.smi_ns_known,
	   "old line with \"-\": both unavailable (r=%d)", r);

	r = stream_parse_line("20 0 1700000000.000000002 30000 0 1 0 0 0 0", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 0 && s.smi_ns_known && s.smi_ns == 0,
	   "\"0 0\" is a known zero, not unavailable (r=%d)", r);

	r = stream_parse_line("21 0 1700000000.000000002 30000 0 1 0 0 2 -", &s);
	ok(r == 0 && s.smi_count_known && s.smi_count == 2 && !s.smi_ns_known,
	   "smi_count known, smi_ns \"-\" (r=%d)", r);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0x5a, sizeof(s));
		untouched = s;
		r = stream_parse_line(bad[i], &s);
		ok(r < 0 && memcmp(&s, &untouched, sizeof(s)) == 0,
		   "malformed line refused (r=%d): \"%s\"", r, bad[i]);
	}
}

static void test_sample_entry(void)
{
	static journal_entry e;
	hwlat_sample s = { .seq = 1, .cpu = 2, .inner_ns = 212400, .count = 1 };
	int r;

	r = journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(r == 0 && field_is(&e, HWLAT_F_SMI_COUNT, "unavailable") &&
		   field_is(&e, HWLAT_F_SMI_NS, "unavailable"),
	   "unavailable SMI count and time are the word 'unavailable' in the journal");
	ok(field_is(&e, "MESSAGE", "hardware latency 212.4 us on CPU 2"),
	   "no '(SMI)' in MESSAGE when SMIs are unavailable");

	s.smi_count_known = s.smi_ns_known = true;
	s.smi_count = 2;
	s.smi_ns = 212400;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(field_is(&e, HWLAT_F_SMI_COUNT, "2") && field_is(&e, HWLAT_F_SMI_NS, "212400") &&
		   field_is(&e, "MESSAGE", "hardware latency 212.4 us on CPU 2 (SMI)"),
	   "known SMI count 2 and time 212400 ns, MESSAGE says (SMI)");

	s.smi_count = 0;
	s.smi_ns = 0;
	journal_entry_sample(&e, "0123456789abcdef0123456789abcdef", 10000, &s);
	ok(field_is(&e, HWLAT_F_SMI_COUNT, "0") && field_is(&e, HWLAT_F_SMI_NS, "0"),
	   "a known zero stays 0");
}

static void test_summary_entry(void)
{
	static journal_entry e;
	scan_summary sum = {
		.scan_id = "0123456789abcdef0123456789abcdef", .status = HWLAT_STATUS_COMPLETED,
		.mode = "per-cpu", .cpus = "0-1", .kernel = "k", .cpu_model = "m", .clock = "c",
		.smi_method = HWLAT_SMI_METHOD_MAX_PER_CPU,
		.smi_unavailable = "not an Intel CPU",
		.hypervisor = "kvm", .clocksource = "kvm-clock", .tsc_stable = "no",
	};
	int r;

	r = journal_entry_summary(&e, &sum);
	ok(r == 0 && field_is(&e, HWLAT_F_SMI_TOTAL, "unavailable") &&
		   field_is(&e, HWLAT_F_SMI_UNAVAILABLE, "not an Intel CPU") &&
		   field_is(&e, HWLAT_F_SMI_METHOD, "max-per-cpu"),
	   "summary: SMI total unavailable with its reason and method");
	ok(field_is(&e, HWLAT_F_HYPERVISOR, "kvm") &&
		   field_is(&e, HWLAT_F_CLOCKSOURCE, "kvm-clock") &&
		   field_is(&e, HWLAT_F_TSC_STABLE, "no"),
	   "summary: hypervisor, clocksource, TSC stability");
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, NULL), "no HWLAT_CPUS_EXCLUDED without the file");

	sum.smi_total_known = true;
	sum.smi_total = 5;
	sum.cpus_excluded = "";
	journal_entry_summary(&e, &sum);
	ok(field_is(&e, HWLAT_F_SMI_TOTAL, "5") && field_is(&e, HWLAT_F_SMI_UNAVAILABLE, NULL),
	   "summary: known total 5, no HWLAT_SMI_UNAVAILABLE");
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, ""), "HWLAT_CPUS_EXCLUDED empty when none left out");
	sum.cpus_excluded = "2-3";
	journal_entry_summary(&e, &sum);
	ok(field_is(&e, HWLAT_F_CPUS_EXCLUDED, "2-3"), "HWLAT_CPUS_EXCLUDED=2-3");
}

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

static void test_hypervisor_name(void)
{
	static const struct {
		const char id[HYPERVISOR_ID_LEN];
		const char *name;
	} cases[] = {
		{ "KVMKVMKVM\0\0\0", "kvm" },
		{ "Microsoft Hv", "microsoft" },
		{ "VMwareVMware", "vmware" },
		{ "XenVMMXenVMM", "xen" },
		{ "TCGTCGTCGTCG", "tcg" },
		{ "KVMKVMKVMKVM", "KVMKVMKVMKVM" },
		{ "bhyve bhyve ", "bhyve bhyve" },
		{ "ACRNACRNACRN", "ACRNACRNACRN" },
		{ "AB\x01\x7f()\0\0\0\0\0\0", "AB?" "?()" },
		/* 0x20 and 0x7e are the ends of the printable range: kept as they are. */
		{ "a~ ~\x1f\x20z\0\0\0\0\0", "a~ ~? z" },
		{ "\0\0\0\0\0\0\0\0\0\0\0\0", "unknown" },
		{ "            ", "unknown" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = hypervisor_name(cases[i].id, buf, sizeof(buf));

		ok(strcmp(got, cases[i].name) == 0, "hypervisor id %zu -> '%s' (want '%s')", i, got,
		   cases[i].name);
	}
}

static void test_tsc_stable(void)
{
	static const struct {
		const char *available, *flags, *want;
	} cases[] = {
		{ "tsc hpet acpi_pm", "fpu tsc constant_tsc nonstop_tsc", "yes" },
		{ "kvm-clock tsc", "nonstop_tsc x constant_tsc", "yes" },
		{ "hpet acpi_pm", "fpu tsc constant_tsc nonstop_tsc", "no" },
		{ "tsc_early hpet", "constant_tsc nonstop_tsc", "no" },
		{ "tsc hpet", "fpu tsc constant_tsc", "no" },
		{ "tsc hpet", "fpu tsc nonstop_tsc", "no" },
		{ "tsc hpet", "constant_tsc_x nonstop_tsc", "no" },
		{ "tsc", "", "no" },
		{ NULL, "constant_tsc nonstop_tsc", "unknown" },
		{ "tsc", NULL, "unknown" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = tsc_stable(cases[i].available, cases[i].flags);

		ok(strcmp(got, cases[i].want) == 0, "tsc_stable('%s', '%s') = %s (want %s)",
		   cases[i].available ? cases[i].available : "(unreadable)",
		   cases[i].flags ? cases[i].flags : "(unreadable)", got, cases[i].want);
	}
}

static void put(const char *root, const char *path, const char *text)
{
	char full[512], dir[512], *slash;
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	snprintf(dir, sizeof(dir), "%s", full);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(full, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The real machine's CPUID hypervisor bit, as the kernel shows it. */
static bool host_has_hypervisor_flag(void)
{
	char flags[8192] = "";
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[8192];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0) {
			snprintf(flags, sizeof(flags), " %s", strchr(line, ':') + 1);
			break;
		}
	fclose(f);
	return strstr(flags, " hypervisor ") || strstr(flags, " hypervisor\n");
}

static void test_platform_read(void)
{
	char root[] = "/tmp/hwlat-test-platform-XXXXXX";
	char cmd[600];
	platform p;

	if (!mkdtemp(root)) {
		ok(false, "mkdtemp");
		return;
	}
	put(root, "proc/cpuinfo",
	    "processor\t: 0\nmodel name\t: Fake CPU @ 1.0GHz\n"
	    "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n"
	    "processor\t: 1\nmodel name\t: Other\nflags\t\t: fpu\n");
	put(root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
	put(root, "sys/devices/system/clocksource/clocksource0/available_clocksource",
	    "tsc hpet acpi_pm \n");
	platform_read(root, &p);
	ok(strcmp(p.cpu_model, "Fake CPU @ 1.0GHz") == 0 && strcmp(p.clocksource, "tsc") == 0 &&
		   strcmp(p.tsc_stable, "yes") == 0,
	   "fake root: model '%s', clocksource '%s', TSC stable %s", p.cpu_model, p.clocksource,
	   p.tsc_stable);

	put(root, "sys/devices/system/clocksource/clocksource0/current_clocksource",
	    "kvm-clock\n");
	put(root, "sys/devices/system/clocksource/clocksource0/available_clocksource",
	    "kvm-clock hpet acpi_pm\n");
	platform_read(root, &p);
	ok(strcmp(p.clocksource, "kvm-clock") == 0 && strcmp(p.tsc_stable, "no") == 0,
	   "TSC marked unstable (not available): clocksource '%s', TSC stable %s",
	   p.clocksource, p.tsc_stable);

	/* Readable but empty (a blank line): no name, so "unknown" rather than "". */
	put(root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "\n");
	platform_read(root, &p);
	ok(strcmp(p.clocksource, "unknown") == 0, "empty current_clocksource: clocksource '%s'",
	   p.clocksource);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ok(false, "cleanup of %s", root);
	platform_read(root, &p);
	ok(strcmp(p.cpu_model, "unknown") == 0 && strcmp(p.clocksource, "unknown") == 0 &&
		   strcmp(p.tsc_stable, "unknown") == 0,
	   "nothing readable: model, clocksource and TSC stability unknown");

#if defined(__x86_64__) || defined(__i386__)
	/* CPUID cannot be faked: the real one agrees with the kernel's flag. */
	ok(host_has_hypervisor_flag() == (strcmp(p.hypervisor, "none") != 0) &&
		   p.hypervisor[0] != '\0' && strcmp(p.hypervisor, "unknown") != 0,
	   "hypervisor from CPUID '%s' agrees with /proc/cpuinfo's hypervisor flag (%s)",
	   p.hypervisor, host_has_hypervisor_flag() ? "set" : "clear");
#else
	ok(strcmp(p.hypervisor, "unknown") == 0, "no CPUID here: hypervisor '%s' (want unknown)",
	   p.hypervisor);
#endif
}

int main(void)
{
	test_stream_lines();
	test_sample_entry();
	test_summary_entry();
	test_smi_source();
	test_smi_total();
	test_hypervisor_name();
	test_tsc_stable();
	test_platform_read();
	return tap_finish();
}
