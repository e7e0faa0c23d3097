/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The edges of lib/stats.c and lib/openmetrics.c that tests/mutation
 * showed untested: a percentile read from the exact row 0 and from row 1
 * (values 128..255, still 1 ns wide), the nearest rank counted from the
 * first window; the power-of-two histogram up to its last bucket, the one
 * of values at or above 2^63; and the whole OpenMetrics text, byte for
 * byte, of a scan with windows on two CPUs (a CPU with a stats block but
 * no window prints nothing, an unknown SMI count leaves the CPU out of
 * hwlat_cpu_smis) and of an empty one without a last scan; a linear
 * histogram that cannot be allocated is -ENOMEM, nothing counted. TAP output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "openmetrics.h"
#include "stats.h"
#include "../tap.h"

static void add(struct stats *s, uint64_t ns, bool smi_known, uint64_t smi, uint64_t nmi)
{
	struct stats_window w = {
		.latency_ns = ns, .count = 1, .nmi_count = nmi,
		.smi_count_known = smi_known, .smi_count = smi,
		.smi_ns_known = smi_known,
	};

	if (stats_add_window(s, &w, 0) < 0) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
}

static void test_percentiles(void)
{
	struct stats s;

	/* 5 ns is in row 0, 200 ns in row 1: both exact. */
	stats_init(&s, 0, 0);
	add(&s, 5, true, 0, 0);
	add(&s, 200, true, 0, 0);
	ok(stats_percentile(&s, 50) == 5, "p50 of 5 and 200 ns = 5 ns (row 0), got %" PRIu64,
	   stats_percentile(&s, 50));
	ok(stats_percentile(&s, 99) == 200, "p99 of 5 and 200 ns = 200 ns (row 1), got %" PRIu64,
	   stats_percentile(&s, 99));
	ok(stats_percentile(&s, 50.1) == 200, "p50.1 of 5 and 200 ns = 200 ns, got %" PRIu64,
	   stats_percentile(&s, 50.1));
	stats_done(&s);
}

static void test_log2_buckets(void)
{
	struct bucket *b = NULL;
	struct stats s;
	int n;

	/* 1000 ns is in [512, 1024), 2^63 in the last bucket [2^63, max]. */
	stats_init(&s, 0, 0);
	add(&s, 1000, true, 0, 0);
	add(&s, UINT64_C(1) << 63, true, 0, 0);
	n = stats_buckets(&s, &b);
	ok(n == 55, "buckets of 1000 ns and 2^63 ns: 55 (2^9 .. 2^63), got %d", n);
	if (n == 55) {
		ok(b[0].low_ns == 512 && b[0].high_ns == 1024 && b[0].count == 1,
		   "first bucket [512, 1024) holds 1");
		ok(b[1].count == 0 && b[53].count == 0, "the buckets between are empty");
		ok(b[54].low_ns == UINT64_C(1) << 63 && b[54].high_ns == UINT64_MAX &&
		   b[54].count == 1, "last bucket [2^63, 2^64-1] holds 1");
	}
	free(b);
	stats_done(&s);

	/* Two neighbouring buckets: both shown, the upper one too. */
	stats_init(&s, 0, 0);
	add(&s, 100, true, 0, 0);
	add(&s, 130, true, 0, 0);
	n = stats_buckets(&s, &b);
	ok(n == 2 && b[0].low_ns == 64 && b[0].high_ns == 128 && b[0].count == 1 &&
	   b[1].low_ns == 128 && b[1].high_ns == 256 && b[1].count == 1,
	   "100 and 130 ns: buckets [64, 128) and [128, 256), 1 each (got %d)", n);
	free(b);
	stats_done(&s);
}

static char *write_text(const struct openmetrics_facts *x, int *ret)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		printf("Bail out! open_memstream failed\n");
		exit(1);
	}
	*ret = openmetrics_write(f, x);
	fclose(f);
	return text;
}

static void same_text(const char *got, const char *want, const char *what)
{
	ok(strcmp(got, want) == 0, "%s", what);
	if (strcmp(got, want) != 0) {
		size_t i = 0;

		while (got[i] && got[i] == want[i])
			i++;
		printf("#   differs at byte %zu: got '%.60s'\n#   want '%.60s'\n", i, got + i,
		       want + i);
	}
}

#define HELP_GAUGE(name, help) "# HELP " name " " help "\n# TYPE " name " gauge\n"

static const char per_cpu_families[] =
	HELP_GAUGE("hwlat_cpu_samples", "Windows reported per CPU.")
	"%s"
	HELP_GAUGE("hwlat_cpu_latency_max_seconds", "Largest latency per CPU.")
	"%s"
	HELP_GAUGE("hwlat_cpu_smis", "SMIs the CPU counted while sampling (a broadcast SMI "
		   "counts on every sampling CPU); absent where unavailable.")
	"%s"
	HELP_GAUGE("hwlat_cpu_unexplained_windows", "Unexplained windows per CPU.")
	"%s";

static void test_openmetrics_full(void)
{
	static const double percentiles[] = { 50, 99 };
	static struct stats *cpu[HWLAT_MAX_CPUS];
	struct stats all, c0, c1, c2;
	char want[8192], tail[2048];
	char *text;
	int r;

	stats_init(&all, 0, 0);
	stats_init(&c0, 0, 0);
	stats_init(&c1, 0, 0);
	stats_init(&c2, 0, 0);
	/* CPU 0: an SMI window; CPU 2: an unexplained one and an NMI one,
	 * both without SMI counts; CPU 1: a stats block but no window. */
	add(&all, 1000, true, 1, 0);
	add(&c0, 1000, true, 1, 0);
	add(&all, 1500, false, 0, 0);
	add(&c2, 1500, false, 0, 0);
	add(&all, 2500, false, 0, 1);
	add(&c2, 2500, false, 0, 1);
	cpu[0] = &c0;
	cpu[1] = &c1;
	cpu[2] = &c2;
	snprintf(tail, sizeof(tail), per_cpu_families,
		 "hwlat_cpu_samples{cpu=\"0\"} 1\nhwlat_cpu_samples{cpu=\"2\"} 2\n",
		 "hwlat_cpu_latency_max_seconds{cpu=\"0\"} 0.000001\n"
		 "hwlat_cpu_latency_max_seconds{cpu=\"2\"} 0.0000025\n",
		 "hwlat_cpu_smis{cpu=\"0\"} 1\n",
		 "hwlat_cpu_unexplained_windows{cpu=\"0\"} 0\n"
		 "hwlat_cpu_unexplained_windows{cpu=\"2\"} 1\n");
	snprintf(want, sizeof(want), "%s%s",
		 HELP_GAUGE("hwlat_scans", "Scans the figures cover.")
		 "hwlat_scans 1\n"
		 HELP_GAUGE("hwlat_samples", "Windows the detector reported (a gap over the "
			    "threshold, an NMI or an SMI).")
		 "hwlat_samples 3\n"
		 HELP_GAUGE("hwlat_latency_max_seconds", "Largest latency of the reported windows.")
		 "hwlat_latency_max_seconds 0.0000025\n"
		 "# HELP hwlat_latency_seconds Latency of the reported windows: percentiles within "
		 "0.4 %, sum and count.\n# TYPE hwlat_latency_seconds summary\n"
		 /* 1500 ns lies in the bucket [1496, 1504): its middle. */
		 "hwlat_latency_seconds{quantile=\"0.5\"} 0.000001499\n"
		 "hwlat_latency_seconds{quantile=\"0.99\"} 0.0000025\n"
		 "hwlat_latency_seconds_sum 0.000005\n"
		 "hwlat_latency_seconds_count 3\n"
		 HELP_GAUGE("hwlat_smis", "SMIs, each counted once (machine total).")
		 "hwlat_smis 1\n"
		 HELP_GAUGE("hwlat_smis_available", "1 when SMIs could be counted; 0 when not "
			    "(hwlat_smis is then absent).")
		 "hwlat_smis_available 1\n"
		 HELP_GAUGE("hwlat_nmis", "NMIs taken by the sampling CPUs in the reported windows.")
		 "hwlat_nmis 1\n"
		 HELP_GAUGE("hwlat_unexplained_windows",
			    "Reported windows that neither an SMI nor an NMI explains.")
		 "hwlat_unexplained_windows 1\n"
		 HELP_GAUGE("hwlat_dropped_windows", "Windows lost to a full stream buffer.")
		 "hwlat_dropped_windows 4\n"
		 HELP_GAUGE("hwlat_scan_duration_seconds",
			    "Wall-clock time the scans ran (not the time spent sampling).")
		 "hwlat_scan_duration_seconds 90.5\n"
		 HELP_GAUGE("hwlat_threshold_seconds", "Threshold of the newest scan.")
		 "hwlat_threshold_seconds 0.00001\n"
		 HELP_GAUGE("hwlat_last_scan_timestamp_seconds", "End of the newest scan (its last "
			    "sample when it has no summary), seconds since the epoch.")
		 "hwlat_last_scan_timestamp_seconds 1764750060.5\n"
		 HELP_GAUGE("hwlat_last_scan_status", "Status of the newest scan: 1 for its status, "
			    "0 for the others.")
		 "hwlat_last_scan_status{status=\"completed\"} 0\n"
		 "hwlat_last_scan_status{status=\"interrupted\"} 1\n"
		 "hwlat_last_scan_status{status=\"failed\"} 0\n"
		 "hwlat_last_scan_status{status=\"no-summary\"} 0\n",
		 tail);
	text = write_text(&(struct openmetrics_facts){
		.all = &all, .cpu = cpu, .percentiles = percentiles, .n_percentiles = 2,
		.scans = 1, .smi_known = true, .smi_total = 1, .dropped = 4,
		.duration_known = true, .duration_ns = 90500000000ULL,
		.have_threshold = true, .threshold_ns = 10000,
		.have_last = true, .last_end_ns = 1764750060500000000ULL,
		.last_status = "interrupted",
	}, &r);
	ok(r == 0, "openmetrics_write returns 0 (got %d)", r);
	same_text(text, want, "the whole text of a scan with windows on CPUs 0 and 2");
	free(text);
	stats_done(&all);
	stats_done(&c0);
	stats_done(&c1);
	stats_done(&c2);
}

static void test_openmetrics_empty(void)
{
	struct stats all;
	char want[4096], tail[2048];
	char *text;
	int r;

	stats_init(&all, 0, 0);
	snprintf(tail, sizeof(tail), per_cpu_families, "", "", "", "");
	snprintf(want, sizeof(want), "%s%s",
		 HELP_GAUGE("hwlat_scans", "Scans the figures cover.")
		 "hwlat_scans 0\n"
		 HELP_GAUGE("hwlat_samples", "Windows the detector reported (a gap over the "
			    "threshold, an NMI or an SMI).")
		 "hwlat_samples 0\n"
		 "# HELP hwlat_latency_seconds Latency of the reported windows: percentiles within "
		 "0.4 %, sum and count.\n# TYPE hwlat_latency_seconds summary\n"
		 "hwlat_latency_seconds_sum 0\n"
		 "hwlat_latency_seconds_count 0\n"
		 HELP_GAUGE("hwlat_smis_available", "1 when SMIs could be counted; 0 when not "
			    "(hwlat_smis is then absent).")
		 "hwlat_smis_available 0\n"
		 HELP_GAUGE("hwlat_nmis", "NMIs taken by the sampling CPUs in the reported windows.")
		 "hwlat_nmis 0\n"
		 HELP_GAUGE("hwlat_unexplained_windows",
			    "Reported windows that neither an SMI nor an NMI explains.")
		 "hwlat_unexplained_windows 0\n"
		 HELP_GAUGE("hwlat_dropped_windows", "Windows lost to a full stream buffer.")
		 "hwlat_dropped_windows 0\n",
		 tail);
	text = write_text(&(struct openmetrics_facts){ .all = &all }, &r);
	ok(r == 0, "openmetrics_write of nothing returns 0 (got %d)", r);
	same_text(text, want, "the whole text without windows, threshold or last scan");
	free(text);
	stats_done(&all);
}

/* The time sampled: exact seconds, per CPU that sampled,
 * after the duration and before the newest scan's figures; absent unknown. */
static void test_openmetrics_sampled(void)
{
	static uint64_t cpu_ns[HWLAT_MAX_CPUS];
	struct stats all;
	char *text;
	int r;

	stats_init(&all, 0, 0);
	cpu_ns[0] = UINT64_C(450000000000);
	cpu_ns[3] = UINT64_C(450123456789);
	cpu_ns[HWLAT_MAX_CPUS - 1] = 1;
	text = write_text(&(struct openmetrics_facts){ .all = &all, .duration_known = true,
						      .duration_ns = UINT64_C(1800000000000),
						      .sampled_known = true,
						      .sampled_ns = UINT64_C(900123456790),
						      .cpu_sampled_ns = cpu_ns,
						      .have_threshold = true,
						      .threshold_ns = 10000 }, &r);
	ok(r == 0 && strstr(text, "hwlat_scan_duration_seconds 1800\n"
			    HELP_GAUGE("hwlat_sampled_seconds", "Time the CPUs sampled (the sum "
				       "of the widths over the CPUs).")
			    "hwlat_sampled_seconds 900.12345679\n"
			    HELP_GAUGE("hwlat_threshold_seconds", "Threshold of the newest scan.")),
	   "hwlat_sampled_seconds: exact seconds after the duration");
	ok(strstr(text, "hwlat_last_scan_timestamp") == NULL &&
	   strstr(text, "hwlat_threshold_seconds 0.00001\n"
		  HELP_GAUGE("hwlat_cpu_sampled_seconds", "Time sampled per CPU.")
		  "hwlat_cpu_sampled_seconds{cpu=\"0\"} 450\n"
		  "hwlat_cpu_sampled_seconds{cpu=\"3\"} 450.123456789\n"
		  "hwlat_cpu_sampled_seconds{cpu=\"1023\"} 0.000000001\n"
		  HELP_GAUGE("hwlat_cpu_samples", "Windows reported per CPU.")),
	   "hwlat_cpu_sampled_seconds: each CPU that sampled, CPU 1023 too, none of 0");
	free(text);
	text = write_text(&(struct openmetrics_facts){ .all = &all, .sampled_known = true,
						      .sampled_ns = 5 }, &r);
	ok(strstr(text, "hwlat_sampled_seconds 0.000000005\n") &&
	   !strstr(text, "hwlat_cpu_sampled_seconds"), "no per-CPU figures: the total only");
	free(text);
	text = write_text(&(struct openmetrics_facts){ .all = &all, .sampled_ns = 5,
						      .cpu_sampled_ns = cpu_ns }, &r);
	ok(!strstr(text, "sampled"), "unknown: neither family");
	free(text);
	stats_done(&all);
}

/*
 * In a child whose address space cannot grow (RLIMIT_AS below its size):
 * the 1 KiB histogram row still comes from the heap's free space, the
 * 800 KB linear histogram cannot be had. Exits 0 when stats_add_window()
 * said -ENOMEM with the row allocated and nothing counted, 2 when the row
 * itself failed (the case is not reached), 1 otherwise.
 */
static int linear_nomem_child(void)
{
	struct rlimit lim = { 0, 0 };
	struct stats s;
	struct stats_window w = { .latency_ns = 99999, .count = 1 };
	size_t rows = 0;
	void *warm = malloc(64 * 1024);
	int r;

	free(warm); /* heap space for the row */
	stats_init(&s, 1, STATS_LINEAR_MAX);
	if (getrlimit(RLIMIT_AS, &lim) < 0)
		return 1;
	lim.rlim_cur = 0;
	if (setrlimit(RLIMIT_AS, &lim) < 0)
		return 1;
	r = stats_add_window(&s, &w, 0);
	for (size_t i = 0; i < STATS_ROWS; i++)
		rows += s.rows[i] != NULL;
	if (rows == 0)
		return 2;
	return r == -ENOMEM && s.n == 0 && s.n_linear == 0 && !s.linear ? 0 : 1;
}

/*
 * The linear histogram (hwlat-report --bucket) that cannot be allocated:
 * -ENOMEM, the window not counted, not a write through a null pointer.
 */
static void test_linear_nomem(void)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("Bail out! fork\n");
		exit(1);
	}
	if (pid == 0)
		_exit(linear_nomem_child());
	if (waitpid(pid, &status, 0) < 0) {
		printf("Bail out! waitpid\n");
		exit(1);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		ok(true, "# SKIP no heap space left for a histogram row under RLIMIT_AS");
		return;
	}
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a linear histogram that cannot be allocated: -ENOMEM, nothing counted (child %s %d)",
	   WIFEXITED(status) ? "exit" : "signal",
	   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

int main(void)
{
	test_percentiles();
	test_log2_buckets();
	test_openmetrics_full();
	test_openmetrics_empty();
	test_openmetrics_sampled();
	test_linear_nomem();
	return tap_finish();
}
