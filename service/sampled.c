/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The time a scan sampled, for smi-rate (sampled.h). */
#include <string.h>

#include "hwlat-journal.h"
#include "sampled.h"

uint64_t sampled_smi_ns(const sampled_time *t, const char *method)
{
	uint64_t max = 0;

	if (strcmp(method, HWLAT_SMI_METHOD_MAX_PER_CPU) != 0)
		return t->total;
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++)
		if (t->v[cpu] > max)
			max = t->v[cpu];
	return max;
}
