// SPDX-License-Identifier: GPL-2.0-or-later
/* What a scan's platform means for its figures; see platform-notes.h. */
#include <stdio.h>
#include <string.h>

#include "hwlat-journal.h"
#include "platform-notes.h"

const char *smi_scope_of(const char *hypervisor)
{
	if (!hypervisor || !hypervisor[0] || strcmp(hypervisor, "unknown") == 0)
		return HWLAT_SMI_SCOPE_UNKNOWN;
	return strcmp(hypervisor, HWLAT_HYPERVISOR_NONE) == 0 ? HWLAT_SMI_SCOPE_HOST :
								HWLAT_SMI_SCOPE_GUEST;
}

const char *smi_scope_note(const char *scope)
{
	if (!scope || strcmp(scope, HWLAT_SMI_SCOPE_GUEST) != 0)
		return NULL;
	return "SMIs counted in this guest only (the hypervisor's count of what it gave "
	       "the guest): the host's own SMIs are not in them and show as host preemption";
}

bool clocksource_reads_tsc(const char *clocksource)
{
	static const char *const tsc_based[] = {
		"tsc", "kvm-clock", "hyperv_clocksource_tsc_page", "xen",
	};

	for (size_t i = 0; clocksource && i < sizeof(tsc_based) / sizeof(tsc_based[0]); i++)
		if (strcmp(clocksource, tsc_based[i]) == 0)
			return true;
	return false;
}

const char *clocksource_warning(const char *clocksource, char *buf, size_t size)
{
	if (!clocksource || !clocksource[0] || strcmp(clocksource, "unknown") == 0 ||
	    clocksource_reads_tsc(clocksource))
		return NULL;
	snprintf(buf, size,
		 "clocksource %s does not read the TSC: each clock read costs more (the "
		 "detection floor), and CPUs sampling at once wait for each other's reads; "
		 "gaps near the floor may be the clock's own cost (if the TSC is sound, "
		 "boot with tsc=reliable)",
		 clocksource);
	return buf;
}
