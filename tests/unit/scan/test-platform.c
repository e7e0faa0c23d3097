/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The platform facts of the summary (service/platform.c), TAP output.
 * Proves that a CPUID vendor id maps to the documented names; TSC
 * stability follows the documented rule; the platform files are read below
 * a root that tests can fake; the hypervisor ID is all 12 bytes of CPUID
 * leaf 0x40000000 (EBX, ECX, EDX), the last four included; the platform's
 * hypervisor is its name, "none" without the CPUID hypervisor bit,
 * "unknown" without CPUID, for each answer CPUID could give (this host
 * gives one).
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "unit-test.h"

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
	put_below(root, "proc/cpuinfo",
	    "processor\t: 0\nmodel name\t: Fake CPU @ 1.0GHz\n"
	    "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n"
	    "processor\t: 1\nmodel name\t: Other\nflags\t\t: fpu\n");
	put_below(root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
	put_below(root, "sys/devices/system/clocksource/clocksource0/available_clocksource",
	    "tsc hpet acpi_pm \n");
	platform_read(root, &p);
	ok(strcmp(p.cpu_model, "Fake CPU @ 1.0GHz") == 0 && strcmp(p.clocksource, "tsc") == 0 &&
		   strcmp(p.tsc_stable, "yes") == 0,
	   "fake root: model '%s', clocksource '%s', TSC stable %s", p.cpu_model, p.clocksource,
	   p.tsc_stable);

	put_below(root, "sys/devices/system/clocksource/clocksource0/current_clocksource",
	    "kvm-clock\n");
	put_below(root, "sys/devices/system/clocksource/clocksource0/available_clocksource",
	    "kvm-clock hpet acpi_pm\n");
	platform_read(root, &p);
	ok(strcmp(p.clocksource, "kvm-clock") == 0 && strcmp(p.tsc_stable, "no") == 0,
	   "TSC marked unstable (not available): clocksource '%s', TSC stable %s",
	   p.clocksource, p.tsc_stable);

	/* Readable but empty (a blank line): no name, so "unknown" rather than "". */
	put_below(root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "\n");
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

/*
 * cpuid_hypervisor_id() fills all 12 bytes: EBX, ECX and EDX of leaf
 * 0x40000000, as the instruction gives them to this process (the same
 * signature HWLAT_HYPERVISOR is made of). Filled over two different
 * patterns, so that no byte can keep what was there before. Skipped on
 * bare metal (no hypervisor bit) and off x86.
 */
/*
 * platform_read()'s hypervisor field says what CPUID says: the vendor
 * name under a hypervisor, "none" on a CPU without the hypervisor bit,
 * "unknown" without CPUID. Which case a host shows is its hardware's:
 * "none" is checked only on bare metal.
 */
static void test_platform_hypervisor(void)
{
	static platform p;
	char id[HYPERVISOR_ID_LEN], want[HYPERVISOR_ID_LEN + 8];
	int r = cpuid_hypervisor_id(id);

	if (r > 0)
		hypervisor_name(id, want, sizeof(want));
	else
		snprintf(want, sizeof(want), "%s", r == 0 ? "none" : "unknown");
	platform_read(at("no-platform-root"), &p);
	ok(strcmp(p.hypervisor, want) == 0, "the hypervisor of this host is '%s' (CPUID says %s)",
	   p.hypervisor, r > 0 ? "a hypervisor" : r == 0 ? "no hypervisor" : "no CPUID");
}

/*
 * What the summary says for each answer of CPUID, which this host cannot
 * be made to give: the name of a hypervisor, "none" on bare metal,
 * "unknown" without CPUID.
 */
static void test_hypervisor_of(void)
{
	static const char kvm[HYPERVISOR_ID_LEN] = "KVMKVMKVM\0\0";
	static const struct {
		int r;
		const char *want;
	} cases[] = { { 1, "kvm" }, { 0, "none" }, { -EOPNOTSUPP, "unknown" } };
	char buf[HYPERVISOR_ID_LEN + 8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hypervisor_of(cases[i].r, kvm, buf, sizeof(buf));
		ok(strcmp(buf, cases[i].want) == 0, "CPUID result %d: hypervisor '%s' (got '%s')",
		   cases[i].r, cases[i].want, buf);
	}
}

static void test_hypervisor_id(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char id[HYPERVISOR_ID_LEN], want[HYPERVISOR_ID_LEN];
	unsigned a, b, c, d;
	int r1, r2;
	bool same1, same2;

	memset(id, 'Z', sizeof(id));
	r1 = cpuid_hypervisor_id(id);
	if (r1 == 0) {
		ok(true, "hypervisor ID # SKIP no hypervisor (CPUID.1:ECX bit 31 clear)");
		return;
	}
	__cpuid(0x40000000, a, b, c, d);
	(void)a;
	memcpy(want, &b, 4);
	memcpy(want + 4, &c, 4);
	memcpy(want + 8, &d, 4);
	same1 = memcmp(id, want, sizeof(id)) == 0;
	memset(id, 0, sizeof(id));
	r2 = cpuid_hypervisor_id(id);
	same2 = memcmp(id, want, sizeof(id)) == 0;
	ok(r1 == 1 && r2 == 1 && same1 && same2,
	   "the hypervisor ID is the 12 bytes of CPUID leaf 0x40000000 '%.12s' (r=%d/%d, "
	   "over 'Z's: %s, over NULs: %s)", want, r1, r2, same1 ? "same" : "differs",
	   same2 ? "same" : "differs");
#else
	ok(true, "hypervisor ID # SKIP not x86");
#endif
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_hypervisor_name();
	test_tsc_stable();
	test_platform_read();
	test_platform_hypervisor();
	test_hypervisor_of();
	test_hypervisor_id();
	return tap_finish();
}
