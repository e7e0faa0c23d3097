// SPDX-License-Identifier: GPL-2.0-or-later
/* The Prometheus text file; see openmetrics.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "macro.h"
#include "openmetrics.h"

static const char *const statuses[] = { "completed", "interrupted", "failed", "no-summary" };

char *openmetrics_seconds(uint64_t ns, char *buf, size_t size)
{
	uint64_t frac = ns % NSEC_PER_SEC;
	int digits = 9;

	if (frac == 0) {
		snprintf(buf, size, "%" PRIu64, (uint64_t)(ns / NSEC_PER_SEC));
		return buf;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64, (uint64_t)(ns / NSEC_PER_SEC), digits, frac);
	return buf;
}

void openmetrics_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gauge_u64(FILE *f, const char *name, const char *help, uint64_t v)
{
	openmetrics_family(f, name, "gauge", help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void gauge_seconds(FILE *f, const char *name, const char *help, uint64_t ns)
{
	char buf[32];

	openmetrics_family(f, name, "gauge", help);
	fprintf(f, "%s %s\n", name, openmetrics_seconds(ns, buf, sizeof(buf)));
}

static void latency_summary(FILE *f, const struct openmetrics_facts *x)
{
	const struct stats *st = x->all;
	char buf[32], sum[48];

	openmetrics_family(f, "hwlat_latency_seconds", "summary",
	       "Latency of the reported windows: percentiles within 0.4 %, sum and count.");
	for (size_t i = 0; st->n > 0 && i < x->n_percentiles; i++)
		fprintf(f, "hwlat_latency_seconds{quantile=\"%.10g\"} %s\n",
			x->percentiles[i] / 100.0,
			openmetrics_seconds(stats_percentile(st, x->percentiles[i]), buf, sizeof(buf)));
	/* sum_ns may exceed 64 bits only with forged entries: saturate. */
	openmetrics_seconds(st->sum_ns > UINT64_MAX ? UINT64_MAX : (uint64_t)st->sum_ns, sum,
			    sizeof(sum));
	fprintf(f, "hwlat_latency_seconds_sum %s\nhwlat_latency_seconds_count %" PRIu64 "\n",
		sum, st->n);
}

/* One per-CPU family: value(stats) for each CPU with windows, where known. */
static void per_cpu(FILE *f, const struct openmetrics_facts *x, const char *name,
		    const char *help, bool is_seconds,
		    bool (*value)(const struct stats *st, uint64_t *ret))
{
	char buf[32];

	openmetrics_family(f, name, "gauge", help);
	for (unsigned c = 0; x->cpu && c < HWLAT_MAX_CPUS; c++) {
		uint64_t v;

		if (!x->cpu[c] || x->cpu[c]->n == 0 || !value(x->cpu[c], &v))
			continue;
		if (is_seconds)
			fprintf(f, "%s{cpu=\"%u\"} %s\n", name, c,
				openmetrics_seconds(v, buf, sizeof(buf)));
		else
			fprintf(f, "%s{cpu=\"%u\"} %" PRIu64 "\n", name, c, v);
	}
}

static bool cpu_samples(const struct stats *st, uint64_t *ret)
{
	*ret = st->n;
	return true;
}

static bool cpu_max(const struct stats *st, uint64_t *ret)
{
	*ret = st->max_ns;
	return true;
}

static bool cpu_smis(const struct stats *st, uint64_t *ret)
{
	*ret = st->smi_total;
	return st->smi_unknown_windows == 0; /* never 0 for unknown */
}

static bool cpu_unexplained(const struct stats *st, uint64_t *ret)
{
	*ret = st->unexplained_windows;
	return true;
}

static void last_scan(FILE *f, const struct openmetrics_facts *x)
{
	const char *status = x->last_status ? x->last_status : "no-summary";
	char buf[32];

	if (x->have_threshold)
		gauge_seconds(f, "hwlat_threshold_seconds", "Threshold of the newest scan.",
			      x->threshold_ns);
	if (!x->have_last)
		return;
	openmetrics_family(f, "hwlat_last_scan_timestamp_seconds", "gauge",
	       "End of the newest scan (its last sample when it has no summary), "
	       "seconds since the epoch.");
	fprintf(f, "hwlat_last_scan_timestamp_seconds %s\n",
		openmetrics_seconds(x->last_end_ns, buf, sizeof(buf)));
	openmetrics_family(f, "hwlat_last_scan_status", "gauge",
	       "Status of the newest scan: 1 for its status, 0 for the others.");
	for (size_t i = 0; i < ELEMENTSOF(statuses); i++)
		fprintf(f, "hwlat_last_scan_status{status=\"%s\"} %d\n", statuses[i],
			strcmp(status, statuses[i]) == 0);
}

/*
 * The rates per second sampled (Prometheus's base unit), each with its
 * estimate, the ends of its two-sided interval and its one-sided upper
 * bound; the size of a gaps_above rate in seconds, "threshold" for each
 * scan's own.
 */
static void rates(FILE *f, const struct openmetrics_facts *x)
{
	static const char *const bounds[] = { "estimate", "interval_low", "interval_high",
					      "upper_bound" };
	char above[48];

	if (x->n_rates == 0)
		return;
	openmetrics_family(f, "hwlat_rate_per_second", "gauge",
			   "Events per second sampled, exact Poisson at 95 %: the estimate, the "
			   "two-sided interval, the one-sided upper bound.");
	for (size_t i = 0; i < x->n_rates; i++) {
		const struct rate_figure *r = &x->rates[i];
		const double v[] = { r->r.per_hour, r->r.low_per_hour, r->r.high_per_hour,
				     r->r.upper_per_hour };

		if (!r->known)
			continue;
		above[0] = '\0';
		if (r->event == RATE_GAPS_ABOVE && r->above_ns)
			snprintf(above, sizeof(above), ",above=\"%s\"",
				 openmetrics_seconds(r->above_ns, (char[32]){ 0 }, 32));
		else if (r->event == RATE_GAPS_ABOVE)
			snprintf(above, sizeof(above), ",above=\"threshold\"");
		for (size_t b = 0; b < ELEMENTSOF(bounds); b++)
			fprintf(f, "hwlat_rate_per_second{event=\"%s\"%s,bound=\"%s\"} %.9g\n",
				rate_event_key(r->event), above, bounds[b], v[b] / 3600);
	}
}

int openmetrics_write(FILE *f, const struct openmetrics_facts *x)
{
	const struct stats *st = x->all;

	gauge_u64(f, "hwlat_scans", "Scans the figures cover.", x->scans);
	gauge_u64(f, "hwlat_samples", "Windows the detector reported (a gap over the "
		  "threshold, an NMI or an SMI).", st->n);
	if (st->n > 0)
		gauge_seconds(f, "hwlat_latency_max_seconds",
			      "Largest latency of the reported windows.", st->max_ns);
	latency_summary(f, x);
	if (x->smi_known)
		gauge_u64(f, "hwlat_smis", "SMIs, each counted once (machine total).",
			  x->smi_total);
	gauge_u64(f, "hwlat_smis_available", "1 when SMIs could be counted; 0 when not "
		  "(hwlat_smis is then absent).", x->smi_known);
	if (x->smi_scope && (strcmp(x->smi_scope, HWLAT_SMI_SCOPE_GUEST) == 0 ||
			     strcmp(x->smi_scope, HWLAT_SMI_SCOPE_HOST) == 0))
		gauge_u64(f, "hwlat_smis_guest", "1 when the SMI counts are a guest's (under a "
			  "hypervisor: the host's own SMIs are not in them); 0 on bare metal.",
			  strcmp(x->smi_scope, HWLAT_SMI_SCOPE_GUEST) == 0);
	gauge_u64(f, "hwlat_nmis", "NMIs taken by the sampling CPUs in the reported windows.",
		  st->nmi_total);
	gauge_u64(f, "hwlat_unexplained_windows",
		  "Reported windows that neither an SMI nor an NMI explains.",
		  st->unexplained_windows);
	gauge_u64(f, "hwlat_dropped_windows", "Windows lost to a full stream buffer.",
		  x->dropped);
	if (x->skipped_known)
		gauge_u64(f, "hwlat_skipped_windows", "Windows the module could not get onto a "
			  "CPU in (a task of the samplers' priority or above held it).",
			  x->skipped_windows);
	if (x->duration_known)
		gauge_seconds(f, "hwlat_scan_duration_seconds",
			      "Wall-clock time the scans ran (not the time spent sampling).",
			      x->duration_ns);
	if (x->sampled_known)
		gauge_seconds(f, "hwlat_sampled_seconds",
			      "Time the CPUs sampled (the sum of the widths over the CPUs).",
			      x->sampled_ns);
	rates(f, x);
	last_scan(f, x);
	if (x->sampled_known && x->cpu_sampled_ns) {
		char buf[32];

		openmetrics_family(f, "hwlat_cpu_sampled_seconds", "gauge", "Time sampled per CPU.");
		for (unsigned c = 0; c < HWLAT_MAX_CPUS; c++)
			if (x->cpu_sampled_ns[c])
				fprintf(f, "hwlat_cpu_sampled_seconds{cpu=\"%u\"} %s\n", c,
					openmetrics_seconds(x->cpu_sampled_ns[c], buf, sizeof(buf)));
	}
	per_cpu(f, x, "hwlat_cpu_samples", "Windows reported per CPU.", false, cpu_samples);
	per_cpu(f, x, "hwlat_cpu_latency_max_seconds", "Largest latency per CPU.", true,
		cpu_max);
	per_cpu(f, x, "hwlat_cpu_smis", "SMIs the CPU counted while sampling (a broadcast "
		"SMI counts on every sampling CPU); absent where unavailable.", false, cpu_smis);
	per_cpu(f, x, "hwlat_cpu_unexplained_windows", "Unexplained windows per CPU.", false,
		cpu_unexplained);
	if (fflush(f) != 0)
		return errno > 0 ? -errno : -EIO;
	return ferror(f) ? -EIO : 0;
}

static int write_facts(FILE *f, const void *x)
{
	return openmetrics_write(f, x);
}

int openmetrics_write_file(const char *path, const struct openmetrics_facts *x)
{
	return openmetrics_write_file_with(path, write_facts, x, true);
}

int openmetrics_write_file_with(const char *path, openmetrics_writer write, const void *data,
				bool sync)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + 8);
	FILE *f = NULL;
	int fd, r;

	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".XXXXXX", 8);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	/* node-exporter reads it as another user. */
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
		r = -errno;
		close(fd);
		goto fail;
	}
	r = write(f, data);
	if (r >= 0 && sync && fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && r >= 0)
		r = errno > 0 ? -errno : -EIO;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r >= 0) {
		free(tmp);
		return 0;
	}
fail:
	unlink(tmp);
	free(tmp);
	return r;
}
