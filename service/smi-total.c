/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SMI accounting of a scan; see smi-total.h. */
#include <inttypes.h>
#include <string.h>

#include "hwlat-journal.h"
#include "smi-total.h"

void smi_source_parse(const char *text, smi_source *ret)
{
	static const char prefix[] = "unavailable: ";
	char buf[SMI_REASON_MAX];

	memset(ret, 0, sizeof(*ret));
	if (!text) {
		snprintf(ret->reason, sizeof(ret->reason), "%s", SMI_REASON_OLD_MODULE);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	strip(buf);
	if (strcmp(buf, "MSR_SMI_COUNT") == 0) {
		ret->available = true;
		return;
	}
	if (strncmp(buf, prefix, sizeof(prefix) - 1) == 0 && buf[sizeof(prefix) - 1])
		snprintf(ret->reason, sizeof(ret->reason), "%s", buf + sizeof(prefix) - 1);
	else
		snprintf(ret->reason, sizeof(ret->reason), "the module's smi file says '%.200s'",
			 buf);
}

void smi_source_apply(const smi_source *src, hwlat_sample *s)
{
	if (src->available)
		return;
	s->smi_count_known = false;
	s->smi_count = 0;
	s->smi_ns_known = false;
	s->smi_ns = 0;
}

void smi_tally_add(smi_tally *t, const hwlat_sample *s)
{
	if (!s->smi_count_known) {
		t->unknown_windows++;
		return;
	}
	if (s->cpu >= HWLAT_MAX_CPUS)
		return;
	t->per_cpu[s->cpu] += s->smi_count;
	t->seen.bits[s->cpu / 64] |= UINT64_C(1) << (s->cpu % 64);
}

const char *smi_method(const char *mode)
{
	/* Only per-cpu mode has several widths at once. */
	return mode && strcmp(mode, "per-cpu") == 0 ? HWLAT_SMI_METHOD_MAX_PER_CPU :
						       HWLAT_SMI_METHOD_SUM;
}

void smi_total_compute(const smi_tally *t, const smi_source *src, const char *mode,
		       smi_total *ret)
{
	bool max = strcmp(smi_method(mode), HWLAT_SMI_METHOD_MAX_PER_CPU) == 0;

	memset(ret, 0, sizeof(*ret));
	ret->method = smi_method(mode);
	if (!src->available) {
		snprintf(ret->reason, sizeof(ret->reason), "%s", src->reason);
		return;
	}
	if (t->unknown_windows > 0) {
		snprintf(ret->reason, sizeof(ret->reason), "%" PRIu64 " window%s could not count SMIs",
			 t->unknown_windows, t->unknown_windows == 1 ? "" : "s");
		return;
	}
	ret->known = true;
	for (size_t c = 0; c < HWLAT_MAX_CPUS; c++) {
		if (max && t->per_cpu[c] > ret->total)
			ret->total = t->per_cpu[c];
		else if (!max)
			ret->total += t->per_cpu[c];
	}
}

void smi_print(FILE *f, const smi_tally *t, const smi_total *total, const char *cpus)
{
	cpu_set_bits list = t->seen, named;
	const char *sep = "";

	if (!total->known) {
		fprintf(f, "unavailable (%s)", total->reason);
		return;
	}
	fprintf(f, "machine total %" PRIu64 " (%s); per CPU", total->total, total->method);
	if (cpus && parse_cpulist(cpus, &named) >= 0)
		for (size_t i = 0; i < HWLAT_MAX_CPUS / 64; i++)
			list.bits[i] |= named.bits[i];
	for (unsigned c = 0; c < HWLAT_MAX_CPUS; c++) {
		if (!cpu_set_has(&list, c))
			continue;
		fprintf(f, "%s %u: %" PRIu64, sep, c, t->per_cpu[c]);
		sep = ",";
	}
	if (!*sep)
		fputs(" none sampled", f);
}
