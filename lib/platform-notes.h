/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a scan's platform means for its figures, said the same way by
 * hwlat-scan and hwlat-report: whose SMIs the SMI counts are (a guest's
 * own under a hypervisor, HWLAT_SMI_SCOPE), and whether the clocksource
 * the samplers read is a slow one (docs/design.md, "Clock").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * HWLAT_SMI_SCOPE of a scan on hypervisor (HWLAT_HYPERVISOR: "none" on
 * bare metal, a name, or "unknown"): "host", "guest" or "unknown".
 */
const char *smi_scope_of(const char *hypervisor);

/* The note on SMI counts of scope "guest"; NULL for any other scope. */
const char *smi_scope_note(const char *scope);

/*
 * Whether the clocksource reads the TSC (the TSC itself, or a hypervisor's
 * clock computed from it: kvm-clock, Hyper-V's TSC page, Xen's): as cheap
 * as a read gets. false for the others (hpet, acpi_pm, jiffies ...) and for
 * an unknown one ("unknown", empty).
 */
bool clocksource_reads_tsc(const char *clocksource);

/*
 * The warning about a clocksource that does not read the TSC, in buf (no
 * newline); NULL (buf untouched) when there is none to give: it reads the
 * TSC, or it is not known.
 */
const char *clocksource_warning(const char *clocksource, char *buf, size_t size);
