/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Facts about the machine a scan ran on, for the summary (docs/interfaces.md
 * section 2): CPU model, hypervisor (CPUID leaf 0x40000000), clocksource and
 * whether the TSC is stable. The files are read below a root directory
 * ("/" normally, a fake tree in tests); CPUID cannot be faked, so its one
 * read is kept apart from the pure mapping of a vendor id to a name.
 */
#pragma once

#include <stddef.h>

#define HYPERVISOR_ID_LEN 12
#define PLATFORM_ROOT_DEFAULT "/"

typedef struct platform {
	char cpu_model[256];
	char hypervisor[HYPERVISOR_ID_LEN + 8];
	char clocksource[64];
	const char *tsc_stable; /* "yes", "no" or "unknown" */
	/*
	 * HWLAT_SMI_SCOPE_*: the kernel's own view (the "hypervisor" CPU
	 * flag), or, without /proc/cpuinfo, what CPUID's hypervisor says.
	 */
	const char *smi_scope;
} platform;

/*
 * The name of a hypervisor from its 12-byte CPUID vendor id: kvm, microsoft,
 * vmware, xen, tcg, or the id's printable characters (NULs and trailing
 * blanks dropped, other bytes as '?'); "unknown" when nothing is left.
 * Returns buf.
 */
const char *hypervisor_name(const char id[HYPERVISOR_ID_LEN], char *buf, size_t size);

/*
 * Reads CPUID: returns 1 and the vendor id of leaf 0x40000000 when
 * CPUID.1:ECX bit 31 (hypervisor present) is set, 0 on bare metal,
 * -EOPNOTSUPP where there is no CPUID (not x86).
 */
int cpuid_hypervisor_id(char id[HYPERVISOR_ID_LEN]);

/*
 * The summary's hypervisor from what cpuid_hypervisor_id() returned (r)
 * and read (id): the id's name when r > 0, "none" when r is 0 (bare
 * metal), "unknown" when there is no CPUID. Returns buf.
 */
const char *hypervisor_of(int r, const char id[HYPERVISOR_ID_LEN], char *buf, size_t size);

/*
 * "yes" when "tsc" is a word of available_clocksource and cpuinfo_flags has
 * the words constant_tsc and nonstop_tsc, "no" otherwise, "unknown" when
 * either is NULL (its file could not be read).
 */
const char *tsc_stable(const char *available_clocksource, const char *cpuinfo_flags);

/* Fills every fact; what cannot be read is "unknown". */
void platform_read(const char *root, platform *ret);
