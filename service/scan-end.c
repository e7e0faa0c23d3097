/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of every scan; see scan-end.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "hwlat-journal.h"
#include "log.h"
#include "macro.h"
#include "openmetrics.h"
#include "platform-notes.h"
#include "scan-end.h"

void summary_machine(const scan_options *o, machine_facts *m, scan_summary *sum)
{
	uname(&m->u);
	platform_read(o->platform_root, &m->plat);
	identity_read(o->platform_root, &m->ident);
	sum->kernel = m->u.release;
	sum->cpu_model = m->plat.cpu_model;
	sum->hypervisor = m->plat.hypervisor;
	sum->smi_scope = m->plat.smi_scope;
	sum->clocksource = m->plat.clocksource;
	sum->tsc_stable = m->plat.tsc_stable;
	sum->identity = &m->ident;
}

/* A DMI string as the terminal may show it: control bytes as '?'. */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* "hwlat-scan: machine: ...": the identity in the summary. */
static void print_identity(const machine_identity *id)
{
	char a[IDENTITY_STR_MAX], b[IDENTITY_STR_MAX], c[IDENTITY_STR_MAX];

	if (!id)
		return;
	printf("hwlat-scan: machine: %s", printable(id->sys_vendor, a, sizeof(a)));
	printf(" %s, board", printable(id->product_name, a, sizeof(a)));
	printf(" %s %s", printable(id->board_vendor, a, sizeof(a)),
	       printable(id->board_name, b, sizeof(b)));
	printf(", BIOS %s %s %s", printable(id->bios_vendor, a, sizeof(a)),
	       printable(id->bios_version, b, sizeof(b)), printable(id->bios_date, c, sizeof(c)));
	printf(", microcode %s", printable(id->microcode, a, sizeof(a)));
	if (id->cpu_count_known)
		printf(", %llu CPUs\n", (unsigned long long)id->cpu_count);
	else
		printf(", CPU count unavailable\n");
}

/* "hwlat-scan: time sampled 0.900 s on 2 CPUs". */
static void print_sampled(const sampled_time *t)
{
	unsigned int n = 0;

	if (!t) {
		printf("hwlat-scan: time sampled unavailable\n");
		return;
	}
	for (unsigned int cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++)
		n += cpu_set_has(&t->listed, cpu);
	printf("hwlat-scan: time sampled %llu.%03llu s on %u CPU%s\n",
	       (unsigned long long)(t->total / NSEC_PER_SEC),
	       (unsigned long long)(t->total % NSEC_PER_SEC / NSEC_PER_MSEC), n,
	       n == 1 ? "" : "s");
}

/* "hwlat-scan: windows skipped: 37 (CPU 1: 37) ...", when some were. */
static void print_skipped(const cpu_values *t)
{
	if (!t || !t->total)
		return;
	printf("hwlat-scan: windows skipped: %llu (", (unsigned long long)t->total);
	for (unsigned int cpu = 0, first = 1; cpu < HWLAT_MAX_CPUS; cpu++) {
		if (!cpu_set_has(&t->listed, cpu))
			continue;
		printf("%sCPU %u: %llu", first ? "" : ", ", cpu, (unsigned long long)t->v[cpu]);
		first = 0;
	}
	printf("): the sampler could not get onto those CPUs in time (a task of its priority or above held them)\n");
}

/* What the platform means for the figures: whose SMIs, a slow clock. */
static void print_platform_notes(const scan_summary *sum)
{
	const char *note = smi_scope_note(sum->smi_scope);
	char warning[512];

	if (note)
		printf("hwlat-scan: note: %s\n", note);
	if (clocksource_warning(sum->clocksource, warning, sizeof(warning)))
		printf("hwlat-scan: warning: %s\n", warning);
}

/* The settings, the counts and the machine, then what is worth a line of its own. */
static void print_figures(const scan_summary *sum, uint64_t seq_gaps, const smi_tally *smi,
			  const smi_total *smi_total)
{
	char a[32], b[32], c[32], floor[32] = HWLAT_UNAVAILABLE;

	if (!sum->floor_unavailable)
		snprintf(floor, sizeof(floor), "%llu ns", (unsigned long long)sum->floor_ns);
	printf("hwlat-scan: scan %s %s after %llu.%03llu s (threshold %s, width %s, window %s, mode %s, CPUs %s)\n",
	       sum->scan_id, sum->status,
	       (unsigned long long)(sum->duration_ns / NSEC_PER_SEC),
	       (unsigned long long)(sum->duration_ns % NSEC_PER_SEC / NSEC_PER_MSEC),
	       format_latency(sum->threshold_ns, a, sizeof(a)),
	       format_latency(sum->width_ns, b, sizeof(b)),
	       format_latency(sum->window_ns, c, sizeof(c)), sum->mode, sum->cpus);
	printf("hwlat-scan: %llu samples, max latency %s, %llu dropped (%llu seen as sequence gaps), %llu NMIs, detection floor %s\n",
	       (unsigned long long)sum->samples,
	       sum->samples ? format_latency(sum->max_ns, a, sizeof(a)) : "-",
	       (unsigned long long)sum->dropped, (unsigned long long)seq_gaps,
	       (unsigned long long)sum->nmi_total, floor);
	if (sum->backend && strcmp(sum->backend, HWLAT_BACKEND_TRACER) == 0)
		printf("hwlat-scan: backend tracer: the kernel's hwlat tracer sampled (no SMI counts, no detection floor)\n");
	fputs("hwlat-scan: SMIs: ", stdout);
	smi_print(stdout, smi, smi_total, sum->cpus);
	printf("\nhwlat-scan: platform: hypervisor %s, clocksource %s, TSC stable %s",
	       sum->hypervisor, sum->clocksource, sum->tsc_stable);
	if (sum->cpus_excluded && sum->cpus_excluded[0])
		printf(", CPUs left out of the default set %s", sum->cpus_excluded);
	putchar('\n');
	print_identity(sum->identity);
}

int print_summary(const scan_summary *sum, uint64_t seq_gaps, const smi_tally *smi,
		  const smi_total *smi_total)
{
	char a[32], b[32];

	print_figures(sum, seq_gaps, smi, smi_total);
	if (sum->settings_not_applied)
		printf("hwlat-scan: settings from the module's parameters (debugfs refused writes); not in force: %s\n",
		       sum->settings_not_applied);
	else if (sum->settings_source &&
		 strcmp(sum->settings_source, HWLAT_SETTINGS_SOURCE_PARAMETERS) == 0)
		printf("hwlat-scan: settings from the module's parameters (debugfs refused writes)\n");
	print_sampled(sum->sampled);
	print_skipped(sum->skipped);
	print_platform_notes(sum);
	if (sum->skipped_lines)
		printf("hwlat-scan: %llu unreadable stream lines skipped\n",
		       (unsigned long long)sum->skipped_lines);
	if (sum->hardlimit_ns && sum->max_ns > sum->hardlimit_ns)
		printf("hwlat-scan: max latency %s exceeds the hard limit %s\n",
		       format_latency(sum->max_ns, a, sizeof(a)),
		       format_latency(sum->hardlimit_ns, b, sizeof(b)));
	if (fflush(stdout) != 0 || ferror(stdout))
		return -(errno ? errno : EIO);
	return 0;
}

/*
 * Evaluates the fail_if conditions over the scan; says each outcome (the
 * failed ones on stderr, the others with the summary). Returns how many
 * failed.
 */
static size_t check_gates(const scan_config *cfg, const scan_tally *t,
			  const scan_summary *sum, bool quiet)
{
	struct gate_result res[GATE_MAX_CONDITIONS];
	struct gate_facts f = {
		.stats = &t->stats,
		.smi = sum->smi_total,
		.smi_known = sum->smi_total_known,
		.smi_why = sum->smi_unavailable,
		.dropped = sum->dropped,
		/* Rates per hour sampled: windows and NMIs over every CPU's time,
		 * SMIs over the time the SMI total was counted in. */
		.sampled_ns = sum->sampled ? sum->sampled->total : 0,
		.smi_sampled_ns = sum->sampled ? sampled_smi_ns(sum->sampled, sum->smi_method) : 0,
		.sampled_known = sum->sampled != NULL,
		.sampled_why = "the time sampled is unavailable (said above)",
		.smi_note = smi_scope_note(sum->smi_scope),
		/* One threshold for the whole scan: the one in force. */
		.threshold_ns = sum->threshold_ns,
		.threshold_known = true,
	};
	size_t failed = gate_eval_all(&cfg->gates, &f, res);
	char line[640];

	for (size_t i = 0; i < cfg->gates.n; i++) {
		gate_describe(&cfg->gates.g[i], &f, &res[i], line, sizeof(line));
		if (res[i].failed)
			log_msg("%s", line);
		else if (!quiet)
			printf("hwlat-scan: %s\n", line);
	}
	fflush(stdout);
	return failed;
}

/* openmetrics_file: the scan's figures for Prometheus. */
static int write_metrics(const char *path, const scan_tally *t, const scan_summary *sum)
{
	static const double percentiles[] = { 50, 90, 99, 99.9 };
	const struct openmetrics_facts x = {
		.all = &t->stats,
		.cpu = t->cpu_stats,
		.percentiles = percentiles,
		.n_percentiles = ELEMENTSOF(percentiles),
		.scans = 1,
		.smi_known = sum->smi_total_known,
		.smi_total = sum->smi_total,
		.dropped = sum->dropped,
		.duration_known = true,
		.duration_ns = sum->duration_ns,
		.sampled_known = sum->sampled != NULL,
		.sampled_ns = sum->sampled ? sum->sampled->total : 0,
		.cpu_sampled_ns = sum->sampled ? sum->sampled->v : NULL,
		.skipped_known = sum->skipped != NULL,
		.skipped_windows = sum->skipped ? sum->skipped->total : 0,
		.smi_scope = sum->smi_scope,
		.have_threshold = true,
		.threshold_ns = sum->threshold_ns,
		.have_last = true,
		.last_end_ns = sum->start_ns + sum->duration_ns,
		.last_status = sum->status,
	};
	int r = openmetrics_write_file(path, &x);

	if (r < 0)
		return log_error_errno(r, "cannot write the OpenMetrics file %s", path);
	return 0;
}

/* The verdict of a scan that ended: failed (-EIO), or judged by its figures. */
static int judge(const scan_options *o, const scan_config *cfg, const scan_tally *t,
		 const scan_summary *sum, sample_end end)
{
	int v;

	if (end == END_ERROR || end == END_EOF)
		return -EIO;
	/* A latency equal to the hard limit passes: only above it fails. */
	v = cfg->hardlimit_ns && t->max_ns > cfg->hardlimit_ns ? SCAN_HARDLIMIT : SCAN_PASSED;
	/* The conditions are said even when the hard limit decided. */
	if (cfg->gates.n > 0 && check_gates(cfg, t, sum, o->quiet) > 0 && v == SCAN_PASSED)
		v = SCAN_FAIL_IF;
	/* Figures of other settings than asked for never pass as they were. */
	if (v == SCAN_PASSED && sum->settings_not_applied)
		v = SCAN_NOT_APPLIED;
	return v;
}

int scan_finish(const scan_options *o, const scan_config *cfg, scan_tally *t,
		scan_summary *sum, sample_end end, const smi_total *smi_total)
{
	int r;

	sum->status = end == END_COMPLETED ? HWLAT_STATUS_COMPLETED :
		      end == END_SIGNAL	   ? HWLAT_STATUS_INTERRUPTED :
					     HWLAT_STATUS_FAILED;
	r = journal_entry_summary(&t->entry, sum);
	if (r >= 0)
		r = journal_entry_send(&t->entry, t->export);
	if (r < 0) {
		log_error_errno(r, "cannot write the summary to the journal");
		end = END_ERROR;
	}
	if (!o->quiet) {
		r = print_summary(sum, t->seq_gaps, &t->smi, smi_total);
		if (r < 0)
			log_error_errno(r, "cannot print the summary on standard output (it is in the journal)");
	}
	/* A failed scan is not judged: its figures are incomplete. */
	r = judge(o, cfg, t, sum, end);
	/* Also for a failed scan: its status is what monitoring must see. */
	if (cfg->openmetrics_file[0] && write_metrics(cfg->openmetrics_file, t, sum) < 0)
		r = -EIO;
	return r;
}
