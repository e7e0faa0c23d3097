/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor's interval summary entry; see monitor-entry.h. */
#include <inttypes.h>

#include "hwlat-journal.h"
#include "macro.h"
#include "monitor-entry.h"
#include "parse.h"

/* "20.31 ms" or "none". */
static const char *max_text(const monitor_interval *iv, char *buf, size_t size)
{
	return iv->gap_windows ? format_latency(iv->max_ns, buf, size) : "none";
}

static int add_message(journal_entry *e, const monitor_interval *iv)
{
	char max[32], thr[32], smis[32] = HWLAT_UNAVAILABLE;
	uint64_t paused = iv->paused_ns[PAUSE_SCAN] + iv->paused_ns[PAUSE_DETECTOR];

	if (iv->smi_known)
		snprintf(smis, sizeof(smis), "%" PRIu64, iv->smis);
	return journal_entry_add(
		e,
		"MESSAGE=hardware latency monitor, interval %" PRIu64 ": %" PRIu64
		" gaps above %s in %" PRIu64 " windows, max %s, %" PRIu64 ".%03" PRIu64
		" s sampled, %" PRIu64 ".%03" PRIu64 " s paused, SMIs %s, %" PRIu64 " folded",
		iv->number, iv->gaps, format_latency(iv->threshold_ns, thr, sizeof(thr)),
		iv->gap_windows, max_text(iv, max, sizeof(max)),
		(uint64_t)(iv->sampled.total / NSEC_PER_SEC),
		(uint64_t)(iv->sampled.total % NSEC_PER_SEC / NSEC_PER_MSEC),
		(uint64_t)(paused / NSEC_PER_SEC), (uint64_t)(paused % NSEC_PER_SEC / NSEC_PER_MSEC),
		smis, iv->folded);
}

int journal_entry_interval(journal_entry *e, const monitor_interval *iv,
			   const interval_context *c)
{
	char hist[GAP_BUCKETS * 32], folded[GAP_BUCKETS * 32];
	const struct entry_field fields[] = {
		/* Gaps are worth a notice; a quiet interval is information. */
		{ "PRIORITY", .num = iv->gap_windows ? 5 : 6 },
		{ "SYSLOG_IDENTIFIER", .str = "hwlat-scan" },
		{ HWLAT_F_SCAN_ID, .str = c->scan_id },
		{ HWLAT_F_INTERVAL, .num = iv->number },
		{ HWLAT_F_INTERVAL_END, .str = c->end },
		{ HWLAT_F_START_NS, .num = iv->start_ns },
		{ HWLAT_F_DURATION_NS, .num = iv->duration_ns },
		{ HWLAT_F_THRESHOLD_NS, .num = iv->threshold_ns },
		{ HWLAT_F_WIDTH_NS, .num = c->width_ns },
		{ HWLAT_F_WINDOW_NS, .num = c->window_ns },
		{ HWLAT_F_MODE, .str = c->mode },
		{ HWLAT_F_CPUS, .str = c->cpus },
		{ HWLAT_F_SAMPLES, .num = iv->windows },
		{ HWLAT_F_GAP_WINDOWS, .num = iv->gap_windows },
		{ HWLAT_F_GAPS, .num = iv->gaps },
		{ HWLAT_F_MAX_NS, .num = iv->max_ns },
		{ HWLAT_F_GAP_HISTOGRAM, .str = gap_histogram_format(&iv->hist, hist, sizeof(hist)) },
		{ HWLAT_F_NMI_TOTAL, .num = iv->nmis },
		{ HWLAT_F_UNEXPLAINED_WINDOWS, .num = iv->unexplained },
		{ HWLAT_F_SMI_TOTAL, unless_known(iv->smi_known), iv->smis },
		{ HWLAT_F_SMI_METHOD, .str = HWLAT_SMI_METHOD_MSR },
		{ c->smi_cpu >= 0 ? HWLAT_F_SMI_CPU : NULL, .num = (uint64_t)c->smi_cpu },
		{ iv->smi_known ? NULL : HWLAT_F_SMI_UNAVAILABLE,
		  .str = c->smi_unavailable ? c->smi_unavailable : "unknown" },
		{ HWLAT_F_DROPPED, .num = iv->dropped },
		{ HWLAT_F_SAMPLE_BUDGET, .num = iv->budget },
		{ HWLAT_F_JOURNALED, .num = iv->journaled },
		{ HWLAT_F_FOLDED, .num = iv->folded },
		{ HWLAT_F_FOLDED_HISTOGRAM,
		  .str = gap_histogram_format(&iv->folded_hist, folded, sizeof(folded)) },
		{ HWLAT_F_FOLDED_SKIP_RECORDS, .num = iv->folded_skip_records },
		{ HWLAT_F_PAUSED_NS,
		  .num = iv->paused_ns[PAUSE_SCAN] + iv->paused_ns[PAUSE_DETECTOR] },
		{ HWLAT_F_PAUSED_SCAN_NS, .num = iv->paused_ns[PAUSE_SCAN] },
		{ HWLAT_F_PAUSED_DETECTOR_NS, .num = iv->paused_ns[PAUSE_DETECTOR] },
		{ HWLAT_F_PAUSES, .num = iv->pauses[PAUSE_SCAN] + iv->pauses[PAUSE_DETECTOR] },
		{ HWLAT_F_BACKEND, .str = HWLAT_BACKEND_MODULE },
	};
	int r;

	journal_entry_init(e);
	r = journal_entry_add(e, "MESSAGE_ID=%s", HWLAT_INTERVAL_MESSAGE_ID);
	if (r >= 0)
		r = add_message(e, iv);
	if (r >= 0)
		r = journal_entry_add_fields(e, fields, ELEMENTSOF(fields));
	if (r >= 0)
		r = journal_entry_add_cpu_values(e, HWLAT_F_SAMPLED_NS, HWLAT_F_SAMPLED_CPU_NS,
						 &iv->sampled);
	if (r >= 0)
		r = journal_entry_add_cpu_values(e, HWLAT_F_SKIPPED_WINDOWS,
						 HWLAT_F_SKIPPED_CPU_WINDOWS, &iv->skipped);
	return r < 0 ? r : 0;
}
