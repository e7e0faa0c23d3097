// SPDX-License-Identifier: GPL-2.0-or-later
/* Attribution of the chosen scans' windows; see attribution.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attribution.h"
#include "hwlat-journal.h"
#include "platform-notes.h"

const char *scan_smi_scope(const struct scan_record *s)
{
	if (!s->has_summary)
		return HWLAT_SMI_SCOPE_UNKNOWN;
	return s->smi_scope[0] ? s->smi_scope : smi_scope_of(s->hypervisor);
}

bool scan_under_hypervisor(const struct scan_record *s)
{
	return s->has_summary && s->hypervisor[0] &&
	       strcmp(s->hypervisor, HWLAT_HYPERVISOR_NONE) != 0 &&
	       strcmp(s->hypervisor, "unknown") != 0;
}

/* Why a scan's SMI total is not known. */
static const char *scan_smi_reason(const struct scan_record *s)
{
	if (!s->has_summary)
		return "the scan wrote no summary";
	return s->smi_unavailable[0] ? s->smi_unavailable : "no reason recorded";
}

char *scan_smi_text(const struct scan_record *s, char *buf, size_t size)
{
	if (s->has_summary && s->smi_total_known)
		snprintf(buf, size, "%" PRIu64 " (%s)", s->smi_total,
			 s->smi_method[0] ? s->smi_method : "method not recorded");
	else
		snprintf(buf, size, "unavailable (%s)", scan_smi_reason(s));
	return buf;
}

/* The scope the scans share so far, or "mixed". */
static void attribution_add_scope(struct attribution *a, const char *scope)
{
	if (!a->smi_scope)
		a->smi_scope = scope;
	else if (strcmp(a->smi_scope, scope) != 0)
		a->smi_scope = "mixed";
}

void attribution_compute(const struct report_data *d, struct attribution *ret)
{
	bool several_hv = false;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (!s->chosen)
			continue;
		ret->scans++;
		attribution_add_scope(ret, scan_smi_scope(s));
		if (s->has_summary && s->skipped_known) {
			ret->skipped_windows += s->skipped_windows;
			ret->skipped_scans_known++;
		}
		if (s->has_summary && s->smi_total_known) {
			const char *m = s->smi_method[0] ? s->smi_method : NULL;

			if (ret->scans_known == 0)
				ret->smi_method = m;
			else if (!m || !ret->smi_method || strcmp(m, ret->smi_method) != 0)
				ret->smi_method = m || ret->smi_method ? "mixed" : NULL;
			ret->scans_known++;
			ret->smi_total += s->smi_total;
		} else {
			if (ret->scans_unavailable == 0)
				ret->smi_reason = scan_smi_reason(s);
			ret->scans_unavailable++;
		}
		if (scan_under_hypervisor(s)) {
			if (ret->hv_scans > 0 && strcmp(ret->hypervisor ? ret->hypervisor : "",
							s->hypervisor) != 0)
				several_hv = true;
			ret->hypervisor = s->hypervisor;
			ret->hv_scans++;
			ret->hv_unexplained += s->unexplained;
		}
	}
	if (several_hv)
		ret->hypervisor = NULL;
}

bool attribution_smi_known(const struct attribution *a)
{
	return a->scans_unavailable == 0;
}

char *attribution_smi_text(const struct attribution *a, char *buf, size_t size)
{
	const char *method = a->smi_method ? a->smi_method : "method not recorded";

	if (a->scans_known == 0)
		snprintf(buf, size, "unavailable (%s)", a->smi_reason);
	else if (a->scans_unavailable == 0 && a->scans_known == 1)
		snprintf(buf, size, "%" PRIu64 " (machine total, %s)", a->smi_total, method);
	else if (a->scans_unavailable == 0)
		snprintf(buf, size, "%" PRIu64 " (sum of the machine totals of %zu scans, %s)",
			 a->smi_total, a->scans_known,
			 strcmp(method, "mixed") == 0 ? "each by its method" : method);
	else
		snprintf(buf, size, "%" PRIu64 " in %zu scan%s (%s); unavailable in %zu (%s)",
			 a->smi_total, a->scans_known, a->scans_known == 1 ? "" : "s",
			 strcmp(method, "mixed") == 0 ? "each by its method" : method,
			 a->scans_unavailable, a->smi_reason);
	return buf;
}

const char *attribution_cause_text(const struct attribution *a, uint64_t unexplained,
				   char *buf, size_t size)
{
	const char *hv = a->hypervisor ? a->hypervisor : "hypervisors";

	if (a->hv_unexplained == 0)
		return NULL;
	if (a->hv_unexplained == unexplained && a->hv_scans == a->scans)
		snprintf(buf, size, LIKELY_CAUSE_HOST_PREEMPTION "; the scan%s ran under %s",
			 a->scans == 1 ? "" : "s", hv);
	else
		snprintf(buf, size, LIKELY_CAUSE_HOST_PREEMPTION " for %" PRIu64
			 " of them, in scans under %s", a->hv_unexplained, hv);
	return buf;
}
