/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor's Prometheus file; see monitor-metrics.h. */
#include <errno.h>
#include <inttypes.h>

#include "monitor-metrics.h"
#include "openmetrics.h"

static void one_u64(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	openmetrics_family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void one_seconds(FILE *f, const char *name, const char *type, const char *help,
			uint64_t ns)
{
	char buf[32];

	openmetrics_family(f, name, type, help);
	fprintf(f, "%s %s\n", name, openmetrics_seconds(ns, buf, sizeof(buf)));
}

/* Cumulative buckets, as Prometheus wants them. */
static void histogram(FILE *f, const gap_histogram *h)
{
	uint64_t cum = 0;
	char buf[32];

	openmetrics_family(f, "hwlat_gap_seconds", "histogram",
			   "Largest gap above the threshold of each window that had one, seconds.");
	for (unsigned i = 0; i <= GAP_BUCKETS; i++) {
		cum += h->count[i];
		fprintf(f, "hwlat_gap_seconds_bucket{le=\"%s\"} %" PRIu64 "\n", gap_bucket_label(i),
			cum);
	}
	fprintf(f, "hwlat_gap_seconds_sum %s\nhwlat_gap_seconds_count %" PRIu64 "\n",
		openmetrics_seconds(h->sum_ns, buf, sizeof(buf)), h->n);
}

static void per_cpu_sampled(FILE *f, const sampled_time *s)
{
	char buf[32];

	openmetrics_family(f, "hwlat_cpu_sampled_seconds_total", "counter",
			   "Time each CPU sampled with interrupts off since the monitor started.");
	for (unsigned c = 0; c < HWLAT_MAX_CPUS; c++)
		if (cpu_set_has(&s->listed, c))
			fprintf(f, "hwlat_cpu_sampled_seconds_total{cpu=\"%u\"} %s\n", c,
				openmetrics_seconds(s->v[c], buf, sizeof(buf)));
}

int monitor_metrics_write(FILE *f, const monitor_totals *t)
{
	one_seconds(f, "hwlat_monitor_start_time_seconds", "gauge",
		    "Start of the monitor process, seconds since the epoch.", t->start_ns);
	if (t->intervals)
		one_seconds(f, "hwlat_monitor_last_interval_timestamp_seconds", "gauge",
			    "End of the last interval written, seconds since the epoch.",
			    t->last_end_ns);
	one_u64(f, "hwlat_monitor_paused", "gauge",
		"1 while a one-shot scan holds the detector or the detector is away.", t->paused);
	one_seconds(f, "hwlat_sampled_seconds_total", "counter",
		    "Time sampled with interrupts off, all CPUs, since the monitor started.",
		    t->sampled.total);
	per_cpu_sampled(f, &t->sampled);
	one_u64(f, "hwlat_gaps_total", "counter",
		"Gaps above the threshold (every one, journaled or folded).", t->gaps);
	histogram(f, &t->hist);
	if (t->smi_ever_known)
		one_u64(f, "hwlat_smis_total", "counter",
			"SMIs counted (MSR_SMI_COUNT on a housekeeping CPU) since the monitor "
			"started.", t->smis);
	one_u64(f, "hwlat_smis_available", "gauge",
		"1 when SMIs could be counted in the last interval, else 0.", t->smi_available);
	one_u64(f, "hwlat_nmis_total", "counter", "NMIs taken in sampled windows.", t->nmis);
	one_u64(f, "hwlat_unexplained_windows_total", "counter",
		"Windows with a gap above the threshold that no NMI or SMI explains.",
		t->unexplained);
	one_u64(f, "hwlat_dropped_windows_total", "counter",
		"Windows lost to a full stream buffer.", t->dropped);
	one_u64(f, "hwlat_skipped_windows_total", "counter",
		"Windows the module could not get onto a CPU in.", t->skipped);
	if (t->intervals)
		one_seconds(f, "hwlat_interval_latency_max_seconds", "gauge",
			    "Largest gap of the last interval (0 when none).", t->last_max_ns);
	one_seconds(f, "hwlat_threshold_seconds", "gauge", "The monitor's threshold.",
		    t->threshold_ns);
	if (fflush(f) != 0)
		return errno > 0 ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

static int write_totals(FILE *f, const void *t)
{
	return monitor_metrics_write(f, t);
}

int monitor_metrics_write_file(const char *path, const monitor_totals *t)
{
	return openmetrics_write_file_with(path, write_totals, t, false);
}
