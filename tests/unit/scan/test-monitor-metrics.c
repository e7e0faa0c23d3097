/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proves the monitor's Prometheus file (service/monitor-metrics.c) word
 * for word: the names of docs/interfaces.md section 6, counters after two
 * intervals, cumulative buckets with the labels the alert rules name,
 * hwlat_smis_total absent until SMIs were ever counted, the gauges of the
 * last interval only once one closed; and the file of a new process.
 */
#include <string.h>

#include "monitor-metrics.h"
#include "unit-test.h"

static char *render(const monitor_totals *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		bail("open_memstream");
	if (monitor_metrics_write(f, t) < 0)
		ok(false, "monitor_metrics_write failed");
	fclose(f);
	return buf;
}

/* Two windows (30 us, 700 us), 5.5 s sampled, 3 SMIs, over two intervals. */
static void two_intervals(monitor_totals *t)
{
	monitor_interval a, b;
	hwlat_sample w1 = { .seq = 1, .inner_ns = 30000, .count = 2 };
	hwlat_sample w2 = { .seq = 2, .cpu = 1, .outer_ns = 700000, .count = 1, .nmi_count = 1 };

	monitor_totals_init(t, 1764750000500000000ULL);
	t->threshold_ns = 10000;
	monitor_interval_start(&a, 1, 1764750001000000000ULL, 10000, 100);
	monitor_interval_sample(&a, &w1);
	a.sampled.v[0] = a.sampled.total = 3000000000ULL;
	a.sampled.listed.bits[0] = 1;
	a.smi_known = true;
	a.smis = 3;
	a.duration_ns = 600000000000ULL;
	monitor_totals_close(t, &a);
	monitor_interval_start(&b, 2, 1764750601000000000ULL, 10000, 100);
	monitor_interval_sample(&b, &w2);
	b.sampled.v[1] = b.sampled.total = 2500000000ULL;
	b.sampled.listed.bits[0] = 2;
	b.smi_known = true;
	b.duration_ns = 599000000000ULL;
	monitor_totals_close(t, &b);
}

static const char want_two[] =
	"# HELP hwlat_monitor_start_time_seconds Start of the monitor process, seconds since the epoch.\n"
	"# TYPE hwlat_monitor_start_time_seconds gauge\n"
	"hwlat_monitor_start_time_seconds 1764750000.5\n"
	"# HELP hwlat_monitor_last_interval_timestamp_seconds End of the last interval written, seconds since the epoch.\n"
	"# TYPE hwlat_monitor_last_interval_timestamp_seconds gauge\n"
	"hwlat_monitor_last_interval_timestamp_seconds 1764751200\n"
	"# HELP hwlat_monitor_paused 1 while a one-shot scan holds the detector or the detector is away.\n"
	"# TYPE hwlat_monitor_paused gauge\n"
	"hwlat_monitor_paused 0\n"
	"# HELP hwlat_sampled_seconds_total Time sampled with interrupts off, all CPUs, since the monitor started.\n"
	"# TYPE hwlat_sampled_seconds_total counter\n"
	"hwlat_sampled_seconds_total 5.5\n"
	"# HELP hwlat_cpu_sampled_seconds_total Time each CPU sampled with interrupts off since the monitor started.\n"
	"# TYPE hwlat_cpu_sampled_seconds_total counter\n"
	"hwlat_cpu_sampled_seconds_total{cpu=\"0\"} 3\n"
	"hwlat_cpu_sampled_seconds_total{cpu=\"1\"} 2.5\n"
	"# HELP hwlat_gaps_total Gaps above the threshold (every one, journaled or folded).\n"
	"# TYPE hwlat_gaps_total counter\n"
	"hwlat_gaps_total 3\n"
	"# HELP hwlat_gap_seconds Largest gap above the threshold of each window that had one, seconds.\n"
	"# TYPE hwlat_gap_seconds histogram\n"
	"hwlat_gap_seconds_bucket{le=\"1e-06\"} 0\n"
	"hwlat_gap_seconds_bucket{le=\"2e-06\"} 0\n"
	"hwlat_gap_seconds_bucket{le=\"5e-06\"} 0\n"
	"hwlat_gap_seconds_bucket{le=\"1e-05\"} 0\n"
	"hwlat_gap_seconds_bucket{le=\"2e-05\"} 0\n"
	"hwlat_gap_seconds_bucket{le=\"5e-05\"} 1\n"
	"hwlat_gap_seconds_bucket{le=\"0.0001\"} 1\n"
	"hwlat_gap_seconds_bucket{le=\"0.0002\"} 1\n"
	"hwlat_gap_seconds_bucket{le=\"0.0005\"} 1\n"
	"hwlat_gap_seconds_bucket{le=\"0.001\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.002\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.005\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.01\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.02\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.05\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.1\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.2\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"0.5\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"1\"} 2\n"
	"hwlat_gap_seconds_bucket{le=\"+Inf\"} 2\n"
	"hwlat_gap_seconds_sum 0.00073\n"
	"hwlat_gap_seconds_count 2\n"
	"# HELP hwlat_smis_total SMIs counted (MSR_SMI_COUNT on a housekeeping CPU) since the monitor started.\n"
	"# TYPE hwlat_smis_total counter\n"
	"hwlat_smis_total 3\n"
	"# HELP hwlat_smis_available 1 when SMIs could be counted in the last interval, else 0.\n"
	"# TYPE hwlat_smis_available gauge\n"
	"hwlat_smis_available 1\n"
	"# HELP hwlat_nmis_total NMIs taken in sampled windows.\n"
	"# TYPE hwlat_nmis_total counter\n"
	"hwlat_nmis_total 1\n"
	"# HELP hwlat_unexplained_windows_total Windows with a gap above the threshold that no NMI or SMI explains.\n"
	"# TYPE hwlat_unexplained_windows_total counter\n"
	"hwlat_unexplained_windows_total 1\n"
	"# HELP hwlat_dropped_windows_total Windows lost to a full stream buffer.\n"
	"# TYPE hwlat_dropped_windows_total counter\n"
	"hwlat_dropped_windows_total 0\n"
	"# HELP hwlat_skipped_windows_total Windows the module could not get onto a CPU in.\n"
	"# TYPE hwlat_skipped_windows_total counter\n"
	"hwlat_skipped_windows_total 0\n"
	"# HELP hwlat_interval_latency_max_seconds Largest gap of the last interval (0 when none).\n"
	"# TYPE hwlat_interval_latency_max_seconds gauge\n"
	"hwlat_interval_latency_max_seconds 0.0007\n"
	"# HELP hwlat_threshold_seconds The monitor's threshold.\n"
	"# TYPE hwlat_threshold_seconds gauge\n"
	"hwlat_threshold_seconds 0.00001\n";

int main(void)
{
	monitor_totals t;
	char *text;

	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	two_intervals(&t);
	text = render(&t);
	ok(strcmp(text, want_two) == 0, "after two intervals: the whole file, word for word");
	if (strcmp(text, want_two) != 0)
		printf("# got:\n%s", text);
	free(text);

	/* A new process, paused at once: no interval closed, no SMI counted. */
	monitor_totals_init(&t, 1764760000000000000ULL);
	t.threshold_ns = 20000;
	t.paused = true;
	text = render(&t);
	ok(strstr(text, "hwlat_monitor_start_time_seconds 1764760000\n") &&
		   strstr(text, "hwlat_sampled_seconds_total 0\n") &&
		   strstr(text, "hwlat_gaps_total 0\n") &&
		   strstr(text, "hwlat_gap_seconds_bucket{le=\"+Inf\"} 0\n") &&
		   strstr(text, "hwlat_monitor_paused 1\n") &&
		   strstr(text, "hwlat_smis_available 0\n") &&
		   strstr(text, "hwlat_threshold_seconds 0.00002\n"),
	   "a new process: counters from 0, its own start time, paused 1, threshold 20 us");
	ok(!strstr(text, "hwlat_smis_total") &&
		   !strstr(text, "\nhwlat_monitor_last_interval_timestamp_seconds ") &&
		   !strstr(text, "hwlat_interval_latency_max_seconds") &&
		   !strstr(text, "hwlat_cpu_sampled_seconds_total{"),
	   "before any interval closed and any SMI was counted: no hwlat_smis_total (never 0 for "
	   "unknown), no last-interval gauges, no per-CPU series");
	free(text);

	put("dir/.keep", "");
	two_intervals(&t);
	ok(monitor_metrics_write_file(at("dir/m.prom"), &t) == 0, "written atomically to a file");
	{
		char buf[8192] = "";
		FILE *f = fopen(at("dir/m.prom"), "re");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = '\0';
		ok(strcmp(buf, want_two) == 0, "the file holds the same text");
	}
	ok(monitor_metrics_write_file(at("missing/m.prom"), &t) == -ENOENT,
	   "a missing directory: -ENOENT, nothing written");
	scratch_done();
	return tap_finish();
}
