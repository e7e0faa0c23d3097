// SPDX-License-Identifier: GPL-2.0-or-later
/* The report through the text/JSON printer; see output.h. The report's emitter (emit.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribution.h"
#include "coverage.h"
#include "emit.h"
#include "escape.h"
#include "gates.h"
#include "histogram.h"
#include "hwlat-journal.h"
#include "log.h"
#include "output.h"
#include "platform-notes.h"
#include "print.h"

/* The --percentiles list: in JSON "p99_9_latency_ns" each; in text, when
 * text is set, "p50 1.2 us, p99.9 3.4 us". */
static void print_percentiles(const struct report_options *o, const struct stats *st, bool text)
{
	for (size_t i = 0; i < o->n_percentiles; i++) {
		char name[24], key[48], label[48];

		format_percentile(o->percentiles[i], name, sizeof(name));
		snprintf(key, sizeof(key), "p%s_latency_ns", name);
		for (char *c = key; *c; c++)
			if (*c == '.')
				*c = '_';
		snprintf(label, sizeof(label), "%sp%s %%s", i ? ", " : "", name);
		if (st->n == 0) /* no percentile of nothing: null, not 0 */
			print_null(key, text ? label : NULL);
		else
			print_latency(key, text ? label : NULL,
				      stats_percentile(st, o->percentiles[i]));
	}
}

char *describe_filters(const struct report_options *o, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...)                                                        \
	do {                                                            \
		if (n < size)                                           \
			n += (size_t)snprintf(buf + n, size - n, "%s", \
					      n ? ", " : "");           \
		if (n < size)                                           \
			n += (size_t)snprintf(buf + n, size - n,        \
					      __VA_ARGS__);             \
	} while (0)
	if (o->have_scan)
		ADD("scan %s", o->scan_id);
	if (o->all)
		ADD("all scans");
	if (o->have_boot)
		ADD("boot %s", o->boot_id[0] ? o->boot_id : "(newest)");
	if (o->have_since)
		ADD("since %s", o->since_arg);
	if (o->have_until)
		ADD("until %s", o->until_arg);
	if (o->have_cpus)
		ADD("cpus %s", o->cpus_arg);
#undef ADD
	if (n == 0)
		snprintf(buf, size, "newest scan");
	return buf;
}

static void print_filters(const struct report_options *o)
{
	char buf[512];

	print_open_object("filters");
	if (o->have_scan)
		print_string("scan_id", NULL, o->scan_id);
	print_bool("all", NULL, o->all);
	if (o->have_boot)
		print_string("boot_id", NULL, o->boot_id);
	if (o->have_since)
		print_time("since_ns", NULL, o->since_ns);
	if (o->have_until)
		print_time("until_ns", NULL, o->until_ns);
	if (o->have_cpus)
		print_string("cpus", NULL, o->cpus_arg);
	print_string("by", NULL, group_by_name(o->by));
	print_close_object();
	print_text("Selection:    %s\n", describe_filters(o, buf, sizeof(buf)));
}

/*
 * A count that may be unknown: JSON gets the number or the string
 * "unavailable", text gets either through fmt's %s. Never 0 for unknown.
 */
static void print_maybe(const char *key, const char *fmt, bool known, uint64_t v)
{
	char num[24];

	if (known && print_is_json()) {
		size_t len = strlen(key);

		/* Nanoseconds are strings in JSON (print_latency), counts numbers. */
		if (len > 3 && strcmp(key + len - 3, "_ns") == 0)
			print_latency(key, NULL, v);
		else
			print_u64(key, NULL, v);
		return;
	}
	snprintf(num, sizeof(num), "%" PRIu64, v);
	print_string(key, fmt, known ? num : HWLAT_UNAVAILABLE);
}

/* A recorded string, or JSON null and fmt with "not recorded". */
static void print_recorded(const char *key, const char *fmt, const char *value)
{
	if (value[0])
		print_string(key, fmt, value);
	else if (print_is_json())
		print_null(key, NULL);
	else
		print_string(NULL, fmt, "not recorded");
}

/*
 * Whose SMIs the scan counted (older summaries do not say: from the
 * hypervisor), and a clocksource that does not read the TSC.
 */
static void print_scan_notes(const struct scan_record *s)
{
	const char *scope = s->smi_scope[0] ? s->smi_scope : smi_scope_of(s->hypervisor);
	const char *note = smi_scope_note(scope);
	char warning[512];

	print_string("smi_scope", NULL, scope);
	if (note)
		print_text("  note:       %s\n", note);
	if (clocksource_warning(s->clocksource, warning, sizeof(warning)))
		print_string("clocksource_warning", "  warning:    %s\n", warning);
	else
		print_null("clocksource_warning", NULL);
}

/* The windows the module could not sample: "37 (1:37)"; unknown: null. */
static void print_scan_skipped(const struct scan_record *s)
{
	if (!s->skipped_known) {
		print_null("skipped_windows", NULL);
		print_null("skipped_cpu_windows", NULL);
		return;
	}
	print_u64("skipped_windows", NULL, s->skipped_windows);
	print_string("skipped_cpu_windows", NULL, s->skipped_cpu);
	if (s->skipped_windows)
		print_text("  skipped:    %" PRIu64 " windows (CPU:windows %s): the sampler could "
			   "not get onto those CPUs in time\n",
			   s->skipped_windows, s->skipped_cpu);
}

static void print_scan_platform(const struct scan_record *s)
{
	char smi[512];

	print_maybe("smi_total", NULL, s->smi_total_known, s->smi_total);
	if (s->smi_method[0])
		print_string("smi_method", NULL, s->smi_method);
	else
		print_null("smi_method", NULL);
	if (s->smi_total_known)
		print_null("smi_unavailable_reason", NULL);
	else
		print_string("smi_unavailable_reason", NULL, s->smi_unavailable);
	print_text("  SMIs:       %s", scan_smi_text(s, smi, sizeof(smi)));
	print_u64("nmi_total", ", %" PRIu64 " NMIs\n", s->nmi_total);
	if (!s->hypervisor[0] && !s->clocksource[0] && !s->tsc_stable[0])
		print_text("  platform:   not recorded");
	print_recorded("hypervisor", s->hypervisor[0] ? "  platform:   hypervisor %s" : NULL,
		       s->hypervisor);
	print_recorded("clocksource", s->clocksource[0] ? ", clocksource %s" : NULL,
		       s->clocksource);
	print_recorded("tsc_stable", s->tsc_stable[0] ? ", TSC stable %s" : NULL, s->tsc_stable);
	if (s->has_cpus_excluded)
		print_string("cpus_excluded", ", CPUs left out of the default set %s",
			     s->cpus_excluded[0] ? s->cpus_excluded : "none");
	else
		print_null("cpus_excluded", NULL);
	print_text("\n");
	print_scan_notes(s);
}

/* Whether the summary recorded the machine identity (older ones did not). */
static bool scan_has_identity(const struct scan_record *s)
{
	return s->sys_vendor[0] || s->product_name[0] || s->board_vendor[0] ||
	       s->board_name[0] || s->bios_vendor[0] || s->bios_version[0] ||
	       s->bios_date[0] || s->microcode[0] || s->cpu_count_text[0];
}

/* The machine identity: JSON strings (null: not recorded), two text lines. */
static void print_scan_identity(const struct scan_record *s)
{
	bool has = scan_has_identity(s);

	if (!has)
		print_text("  identity:   not recorded\n");
	print_recorded("sys_vendor", has ? "  system:     %s" : NULL, s->sys_vendor);
	print_recorded("product_name", has ? " %s" : NULL, s->product_name);
	print_recorded("board_vendor", has ? ", board %s" : NULL, s->board_vendor);
	print_recorded("board_name", has ? " %s\n" : NULL, s->board_name);
	print_recorded("bios_vendor", has ? "  firmware:   %s" : NULL, s->bios_vendor);
	print_recorded("bios_version", has ? " %s" : NULL, s->bios_version);
	print_recorded("bios_date", has ? " (%s)" : NULL, s->bios_date);
	print_recorded("microcode", has ? ", microcode %s" : NULL, s->microcode);
	if (s->cpu_count_known)
		print_u64("cpu_count", ", %" PRIu64 " CPUs\n", s->cpu_count);
	else if (s->cpu_count_text[0])
		print_string("cpu_count", ", CPU count %s\n", HWLAT_UNAVAILABLE);
	else
		print_recorded("cpu_count", has ? ", CPU count %s\n" : NULL, "");
}

void print_journal(const struct read_result *res)
{
	static const struct read_result none;

	if (!res)
		res = &none;
	print_open_object("journal");
	print_u64("files", NULL, res->files);
	print_u64("files_read", NULL, res->files_read);
	print_u64("malformed_entries_skipped", NULL, res->malformed);
	print_u64("corrupt_entries_skipped", NULL, res->corrupt);
	if (res->malformed > 0)
		print_text("Warning:      %" PRIu64 " malformed hwlat entr%s skipped (named on "
			   "stderr)\n", res->malformed, res->malformed == 1 ? "y" : "ies");
	print_open_array("problems");
	for (size_t i = 0; i < res->n_problems; i++) {
		const struct file_problem *p = &res->problems[i];

		print_open_object(NULL);
		print_string("path", "Warning:      journal %s", p->path);
		print_string("error", p->opened ? " is corrupt (%s):" : " not read (%s)\n",
			     strerror(-p->error));
		print_bool("opened", NULL, p->opened);
		print_u64("entries_read", p->opened ? " %" PRIu64 " hwlat entries read, the "
						      "rest lost\n" : NULL, p->entries);
		print_close_object();
	}
	print_close_array();
	print_close_object();
}

uint64_t scan_dropped(const struct scan_record *s)
{
	if (s->has_summary)
		return s->dropped;
	return s->max_seq > s->seen ? s->max_seq - s->seen : 0;
}


/* The rates per hour sampled: JSON only (the tables' text is their own
 * columns); null when the time sampled is unknown or 0. */
static void print_rates_json(const struct coverage *c)
{
	if (!c->known || c->ns == 0) {
		print_null("per_hour_sampled", NULL);
		return;
	}
	print_open_object("per_hour_sampled");
	print_double("samples", NULL, per_hour(c->samples, c->ns));
	if (c->smi_known)
		print_double("smi_windows", NULL, per_hour(c->smi_windows, c->ns));
	else
		print_null("smi_windows", NULL);
	print_double("nmi_windows", NULL, per_hour(c->nmi_windows, c->ns));
	print_double("unexplained_windows", NULL, per_hour(c->unexplained, c->ns));
	print_close_object();
}

/* One rate as a JSON object; its statement on a text line after indent. */
static void print_rate(const struct rate_figure *f, int indent)
{
	char line[320];

	print_open_object(NULL);
	print_string("event", NULL, rate_event_key(f->event));
	if (f->event == RATE_GAPS_ABOVE && f->above_ns)
		print_latency("above_ns", NULL, f->above_ns);
	else if (f->event == RATE_GAPS_ABOVE)
		print_null("above_ns", NULL); /* each scan's threshold */
	print_bool("known", NULL, f->known);
	if (f->known) {
		print_null("unknown_reason", NULL);
		print_u64("count", NULL, f->r.events);
		print_double("per_hour", NULL, f->r.per_hour);
		print_double("interval_low_per_hour", NULL, f->r.low_per_hour);
		print_double("interval_high_per_hour", NULL, f->r.high_per_hour);
		print_double("upper_bound_per_hour", NULL, f->r.upper_per_hour);
	} else {
		print_string("unknown_reason", NULL, f->why);
		print_null("count", NULL);
		print_null("per_hour", NULL);
		print_null("interval_low_per_hour", NULL);
		print_null("interval_high_per_hour", NULL);
		print_null("upper_bound_per_hour", NULL);
	}
	rate_sentence(f, line, sizeof(line));
	/* Within 80 columns: past them, the figures go on a line of their own. */
	if (indent + strlen(line) > 80 && strstr(line, "sampled: "))
		print_text("%*s%.*s\n%*s%s\n", indent, "",
			   (int)(strstr(line, "sampled: ") - line + 8), line, indent + 2, "",
			   strstr(line, "sampled: ") + 9);
	else
		print_text("%*s%s\n", indent, "", line);
	print_close_object();
}

/*
 * The rates with their confidence (rate.h): JSON "rates", null when the
 * time sampled is unknown or 0; text under label when it is set.
 */
static void print_rates(const struct coverage *c, const struct stats *st, const char *label)
{
	struct rate_figure f[COVERAGE_RATES_MAX];
	size_t n;

	if (!c->known || c->ns == 0) {
		print_null("rates", NULL);
		if (label)
			print_text("%snot computed: %s\n", label, c->known ? "nothing was sampled" :
				   "the time sampled is unknown");
		return;
	}
	n = coverage_rates(c, st, f);
	print_open_object("rates");
	print_double("confidence", NULL, RATE_CONFIDENCE);
	if (label)
		print_text("%sper hour sampled; %s: intervals two-sided, bounds one-sided\n", label,
			   RATE_CONFIDENCE_TEXT);
	print_open_array("events");
	for (size_t i = 0; i < n; i++) {
		if (label)
			print_rate(&f[i], (int)strlen(label));
		else if (print_is_json())
			print_rate(&f[i], 0);
	}
	print_close_array();
	print_close_object();
}

/* "180.000 s" */
static char *format_period(uint64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " s", (uint64_t)(ns / NSEC_PER_SEC),
		 (uint64_t)(ns % NSEC_PER_SEC / NSEC_PER_MSEC));
	return buf;
}

/* The period as an object (null: not computed); fmt, when set, gets the
 * text ("180.000 s, 9 of 10 intervals between 11 events"). */
static void print_period(const struct coverage *c, const char *fmt)
{
	const struct period_result *p = &c->period;
	char text[160], num[32];

	if (!c->period_computed) {
		char why[160];

		snprintf(why, sizeof(why), "not computed: %s", c->period_why);
		print_null("period", NULL);
		if (fmt)
			print_string(NULL, fmt, why);
		return;
	}
	if (p->period_ns)
		snprintf(text, sizeof(text), "%s, %" PRIu64 " of %" PRIu64 " intervals between %"
			 PRIu64 " events", format_period(p->period_ns, num, sizeof(num)),
			 p->explained, p->intervals, p->events);
	else if (p->events < PERIOD_MIN_EVENTS)
		snprintf(text, sizeof(text), "none: %" PRIu64 " event%s, %d needed", p->events,
			 p->events == 1 ? "" : "s", PERIOD_MIN_EVENTS);
	else
		snprintf(text, sizeof(text), "none: at most %" PRIu64 " of %" PRIu64
			 " intervals agree, %" PRIu64 " needed (%" PRIu64 " events)", p->explained,
			 p->intervals, p->needed, p->events);
	print_open_object("period");
	print_u64("events", NULL, p->events);
	print_u64("intervals", NULL, p->intervals);
	print_u64("explained_intervals", NULL, p->explained);
	print_u64("needed_intervals", NULL, p->needed);
	if (p->period_ns)
		print_latency("period_ns", NULL, p->period_ns);
	else
		print_null("period_ns", NULL);
	print_close_object();
	if (fmt)
		print_string(NULL, fmt, text);
}

/*
 * The time sampled, the rates and the period of a scan or the selection:
 * "<label>15min 0s", "<rlabel>32 samples, 4 SMI windows, ..." (per hour
 * sampled; no line when unknown) and "<plabel>180.000 s, ...".
 */
static void print_coverage(const struct coverage *c, const struct stats *st, const char *label,
			   const char *rlabel, const char *ratelabel, const char *plabel)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "%s%%s", label);
	if (c->known) {
		print_duration("sampled_ns", fmt, c->ns);
		print_null("sampled_unavailable_reason", NULL);
	} else {
		print_null("sampled_ns", NULL);
		print_text("%sunavailable\n%*s", label, (int)strlen(label), "");
		print_string("sampled_unavailable_reason", "%s", c->why);
	}
	print_rates_json(c);
	print_text("\n");
	if (c->known && c->ns > 0) {
		print_text("%s", rlabel);
		print_double(NULL, "%s samples", per_hour(c->samples, c->ns));
		if (c->smi_known)
			print_double(NULL, ", %s SMI windows", per_hour(c->smi_windows, c->ns));
		else
			print_text(", SMI windows unavailable");
		print_double(NULL, ", %s NMI windows", per_hour(c->nmi_windows, c->ns));
		print_double(NULL, ", %s unexplained\n", per_hour(c->unexplained, c->ns));
	}
	print_rates(c, st, ratelabel);
	snprintf(fmt, sizeof(fmt), "%s%%s\n", plabel);
	print_period(c, fmt);
}

static void print_scan(const struct scan_record *s, const struct coverage *c, bool corrupt)
{
	print_open_object(NULL);
	print_string("scan_id", "\nScan %s", s->id);
	print_bool("summary", NULL, s->has_summary);
	if (s->has_summary)
		print_string("status", " (%s)\n", s->status);
	else {
		print_null("status", NULL);
		if (corrupt)
			print_text(" NO SUMMARY READ: it may be in a corrupt or unreadable\n"
				   "  journal file (named above), or the scan never finished; the\n"
				   "  figures below come from the samples read only\n");
		else
			print_text(
			    " NO SUMMARY: the scan never finished (crash, power loss or\n"
			    "  still running); the figures below come from its samples only\n");
	}
	print_string("hostname", "  host:       %s", s->hostname);
	print_string("machine_id", " (machine %s", s->machine_id);
	print_string("boot_id", ", boot %.8s)\n", s->boot_id);

	if (s->has_summary) {
		print_time("start_ns", "  started:    %s", s->start_ns);
		print_duration("duration_ns", ", scanned for %s\n", s->duration_ns);
		print_latency("threshold_ns", "  config:     threshold %s", s->threshold_ns);
		print_latency("width_ns", ", width %s", s->width_ns);
		print_latency("window_ns", ", window %s\n", s->window_ns);
		print_string("mode", "              mode %s", s->mode);
		print_string("cpus", ", cpus %s\n", s->cpus);
		if (s->hardlimit_ns)
			print_latency("hardlimit_ns", "  hardlimit:  %s (at scan time)\n",
				      s->hardlimit_ns);
		else
			print_null("hardlimit_ns", NULL);
		print_string("kernel", "  machine:    kernel %s", s->kernel);
		print_string("clock", ", clock %s\n", s->clock);
		print_string("cpu_model", "  cpu model:  %s\n", s->cpu_model);
		print_u64("samples", "  scan wrote: %" PRIu64 " samples", s->samples);
		print_latency("max_latency_ns", ", max %s", s->max_ns);
		print_u64("dropped_windows", ", %" PRIu64 " dropped", s->dropped);
		if (s->floor_known)
			print_latency("floor_ns", ", floor %s\n", s->floor_ns);
		else
			print_null("floor_ns", ", floor unavailable\n");
		/* Who sampled; older summaries do not say (the module). */
		if (s->backend[0])
			print_string("backend", "  backend:    %s\n", s->backend);
		else
			print_null("backend", NULL);
		print_scan_platform(s);
		print_scan_skipped(s);
		print_scan_identity(s);
	} else {
		if (s->first_ns <= s->last_ns) {
			print_time("first_sample_ns", "  samples:    from %s", s->first_ns);
			print_time("last_sample_ns", " to %s\n", s->last_ns);
		}
		if (s->sample_threshold_ns)
			print_latency("threshold_ns", "  config:     threshold %s (from samples)\n",
				      s->sample_threshold_ns);
		print_u64("dropped_windows",
			  "  dropped:    %" PRIu64 " windows (gaps in the sequence numbers)\n",
			  scan_dropped(s));
	}
	print_u64("samples_read", "  read:       %" PRIu64 " samples", s->seen);
	print_u64("samples_matched", ", %" PRIu64 " match the selection\n", s->matched);
	print_coverage(c, NULL, "  sampled:    ", "  per hour:   ", "  rates:      ",
		       "  period:     ");
	print_close_object();
}

/*
 * Whose SMIs: "guest" scans get the note; and the windows the module could
 * not sample, where any scan says so.
 */
static void print_attribution_scope(const struct attribution *a)
{
	bool some_guest = a->smi_scope && (strcmp(a->smi_scope, HWLAT_SMI_SCOPE_GUEST) == 0 ||
					  strcmp(a->smi_scope, "mixed") == 0);

	if (a->smi_scope)
		print_string("smi_scope", NULL, a->smi_scope);
	else
		print_null("smi_scope", NULL);
	if (some_guest)
		print_text("              note: %s%s\n",
			   strcmp(a->smi_scope, "mixed") == 0 ? "in some scans, " : "",
			   smi_scope_note(HWLAT_SMI_SCOPE_GUEST));
	if (!a->skipped_scans_known) {
		print_null("skipped_windows", NULL);
		return;
	}
	print_u64("skipped_windows", NULL, a->skipped_windows);
	if (a->skipped_windows)
		print_text("              skipped: %" PRIu64 " windows the sampler could not get "
			   "onto their CPU in (per CPU: each scan's \"skipped\")\n",
			   a->skipped_windows);
}

/* SMIs, NMIs and the unexplained windows with their likely cause. */
static void print_attribution(const struct stats *st, const struct attribution *a)
{
	bool windows_known = st->smi_unknown_windows == 0;
	char buf[512], lat[32];
	const char *cause;

	print_open_object("attribution");
	print_text("Attribution:  SMIs: %s", attribution_smi_text(a, buf, sizeof(buf)));
	print_maybe("smi_total", NULL, attribution_smi_known(a), a->smi_total);
	if (a->smi_method)
		print_string("smi_method", NULL, a->smi_method);
	else
		print_null("smi_method", NULL);
	if (a->scans_unavailable > 0)
		print_string("smi_unavailable_reason", NULL, a->smi_reason);
	else
		print_null("smi_unavailable_reason", NULL);
	print_u64("smi_scans_unavailable", NULL, a->scans_unavailable);
	/* Windows and time only where some counts were known. */
	print_maybe("smi_windows", NULL, windows_known || st->smi_unknown_windows < st->n,
		    st->smi_windows);
	print_u64("smi_unavailable_windows", NULL, st->smi_unknown_windows);
	print_maybe("smi_ns", NULL, st->smi_ns_unknown_windows == 0, st->smi_ns);
	print_text("\n");
	if (st->smi_unknown_windows < st->n || st->n == 0) {
		print_text("              windows with SMIs: %s%" PRIu64, windows_known ? "" : ">=",
			   st->smi_windows);
		if (!windows_known)
			print_text(" (%" PRIu64 " unavailable)", st->smi_unknown_windows);
		if (st->smi_ns_unknown_windows == 0)
			print_text(", SMI time %s\n", format_latency(st->smi_ns, lat, sizeof(lat)));
		else
			print_text(", SMI time unavailable\n");
	}
	print_attribution_scope(a);
	print_u64("nmi_windows", "              NMIs: %" PRIu64 " windows", st->nmi_windows);
	print_u64("nmi_total", " (%" PRIu64 " NMIs)\n", st->nmi_total);
	print_u64("unexplained_windows",
		  "              unexplained: %" PRIu64 " windows (neither SMI nor NMI)\n",
		  st->unexplained_windows);
	cause = attribution_cause_text(a, st->unexplained_windows, buf, sizeof(buf));
	if (cause) {
		print_string("likely_cause", NULL, LIKELY_CAUSE_HOST_PREEMPTION);
		print_text("              likely cause: %s\n", cause);
	} else {
		print_null("likely_cause", NULL);
	}
	print_u64("likely_cause_windows", NULL, a->hv_unexplained);
	if (a->hv_scans && a->hypervisor)
		print_string("hypervisor", NULL, a->hypervisor);
	else
		print_null("hypervisor", NULL);
	print_close_object();
}

/* A statistic of no sample is unknown, not 0: null in JSON, "-" as text. */
static void print_stat(const struct stats *st, const char *key, const char *fmt, uint64_t ns)
{
	if (st->n == 0)
		print_null(key, fmt);
	else
		print_latency(key, fmt, ns);
}

static void print_stats_body(const struct report_options *o, const struct stats *st,
			     const struct attribution *a)
{
	print_u64("samples", "Samples:      %" PRIu64, st->n);
	print_u64("over_threshold", " (%" PRIu64 " with gaps over the threshold)\n",
		  st->over_threshold);
	print_stat(st, "min_latency_ns", "Latency:      min %s", st->min_ns);
	print_stat(st, "mean_latency_ns", ", mean %s", stats_mean(st));
	print_stat(st, "max_latency_ns", ", max %s\n", st->max_ns);
	print_open_object("percentiles");
	print_text("Percentiles:  ");
	print_percentiles(o, st, true);
	print_stat(st, "max_latency_ns", "\n", st->max_ns);
	print_close_object();
	print_attribution(st, a);
}

/*
 * The SMI column: per CPU the SMIs that CPU counted (its total); in a
 * group row the windows with SMIs, since adding CPUs' counts would count a
 * broadcast SMI once per CPU. ">=N" when some counts were unavailable,
 * "unavailable" when all were.
 */
static void print_row_smis(const struct stats *st, bool per_cpu)
{
	bool all_unknown = st->n > 0 && st->smi_unknown_windows == st->n;
	uint64_t shown = per_cpu ? st->smi_total : st->smi_windows;
	char buf[32];

	snprintf(buf, sizeof(buf), "%s%" PRIu64, st->smi_unknown_windows ? ">=" : "", shown);
	print_maybe("smi_windows", NULL, !all_unknown, st->smi_windows);
	if (per_cpu) {
		print_maybe("smi_total", NULL, !all_unknown, st->smi_total);
		print_maybe("smi_ns", NULL, st->smi_ns_unknown_windows == 0, st->smi_ns);
	}
	print_u64("smi_unavailable_windows", NULL, st->smi_unknown_windows);
	print_text(" %11s", all_unknown ? HWLAT_UNAVAILABLE : buf);
}

static void print_row(const struct report_options *o, const struct stats *st,
		      const struct coverage *c, bool per_cpu)
{
	print_u64("samples", " %9" PRIu64, st->n);
	print_latency("max_latency_ns", " %10s", st->max_ns);
	print_latency("mean_latency_ns", " %10s", stats_mean(st));
	/* The tables keep one p99 column whatever --percentiles chose. */
	print_latency(NULL, " %10s", stats_percentile(st, 99));
	print_percentiles(o, st, false);
	print_row_smis(st, per_cpu);
	print_u64("nmi_windows", " %6" PRIu64, st->nmi_windows);
	print_u64("unexplained_windows", " %8" PRIu64 "\n", st->unexplained_windows);
	/* Coverage: JSON here, text in the coverage table (print_cov_row()). */
	if (c->known)
		print_latency("sampled_ns", NULL, c->ns);
	else
		print_null("sampled_ns", NULL);
	print_rates_json(c);
	print_rates(c, st, NULL);
	if (!per_cpu)
		print_period(c, NULL);
}

#define COV_HEADER "    sampled  samples/h   SMI w./h   NMI w./h  unexpl./h%s\n"

/* One row of a coverage table (text only): "-" where unknown. */
static void print_cov_row(const struct coverage *c, bool period)
{
	bool rates = c->known && c->ns > 0;
	char buf[32];

	if (c->known)
		print_duration(NULL, " %10s", c->ns);
	else
		print_null(NULL, " %10s");
	if (rates) {
		print_double(NULL, " %10s", per_hour(c->samples, c->ns));
		if (c->smi_known)
			print_double(NULL, " %10s", per_hour(c->smi_windows, c->ns));
		else
			print_null(NULL, " %10s");
		print_double(NULL, " %10s", per_hour(c->nmi_windows, c->ns));
		print_double(NULL, " %10s", per_hour(c->unexplained, c->ns));
	} else {
		for (int i = 0; i < 4; i++)
			print_null(NULL, " %10s");
	}
	if (period)
		print_text(" %12s", !c->period_computed ? "-"
				    : c->period.period_ns
					? format_period(c->period.period_ns, buf, sizeof(buf))
					: "none");
	print_text("\n");
}

/* After a coverage table: why a "-" (once). */
static void print_cov_notes(const char *why, const char *period_why)
{
	if (why)
		print_string(NULL, "  -: time sampled unavailable:\n     %s\n", why);
	if (period_why)
		print_string(NULL, "  period -: %s\n", period_why);
}

#define ROW_HEADER "   samples        max       mean        p99 %11s    NMI unexpl.\n"

static void print_cpu_table(const struct report_data *d)
{
	struct coverage c;
	char why[sizeof(c.why)] = "";

	print_open_array("cpus");
	print_text("\nPer CPU:\n  CPU" ROW_HEADER, "SMIs");
	for (size_t i = 0; i < HWLAT_MAX_CPUS; i++) {
		if (!d->cpu[i])
			continue;
		coverage_compute(d, NULL, (int)i, &c);
		print_open_object(NULL);
		print_u64("cpu", "%5" PRIu64, i);
		print_row(d->o, d->cpu[i], &c, true);
		print_close_object();
	}
	print_close_array();
	print_text("\nCoverage per CPU (time sampled, rates per hour sampled):\n  CPU" COV_HEADER,
		   "");
	for (size_t i = 0; i < HWLAT_MAX_CPUS; i++) {
		if (!d->cpu[i])
			continue;
		coverage_compute(d, NULL, (int)i, &c);
		print_u64(NULL, "%5" PRIu64, i);
		print_cov_row(&c, false);
		if (!c.known && !why[0])
			snprintf(why, sizeof(why), "%s", c.why);
	}
	print_cov_notes(why[0] ? why : NULL, NULL);
}

static const char *group_key_name(enum group_by by)
{
	return by == GROUP_SCAN ? "scan_id" : by == GROUP_BOOT ? "boot_id" : "machine_id";
}

static bool group_by_identity(enum group_by by)
{
	return by == GROUP_FIRMWARE || by == GROUP_PRODUCT;
}

char *scan_identity_label(const struct scan_record *s, enum group_by by, char *buf, size_t size)
{
	if (by == GROUP_FIRMWARE && (s->bios_vendor[0] || s->bios_version[0] || s->bios_date[0]))
		snprintf(buf, size, "%s %s (%s)", s->bios_vendor, s->bios_version, s->bios_date);
	else if (by == GROUP_PRODUCT && (s->sys_vendor[0] || s->product_name[0]))
		snprintf(buf, size, "%s %s", s->sys_vendor, s->product_name);
	else
		snprintf(buf, size, "not recorded");
	return buf;
}

/* The raw label of a --by firmware/product group; unescaped: print it escaped. */
static char *identity_label(const struct report_data *d, const struct group *g, char *buf,
			    size_t size)
{
	return scan_identity_label(&d->scans[g->scan_index], d->o->by, buf, size);
}

/* The JSON keys of a group (when keys) and, as text, its label. */
static void print_group_key(const struct report_data *d, const struct group *g, bool keys)
{
	const struct scan_record *s = &d->scans[g->scan_index];
	char label[1024];

#define K(key) (keys ? (key) : NULL)

	if (d->o->by == GROUP_HOST) {
		char cut[80];

		print_string(K(group_key_name(d->o->by)), NULL, g->key);
		/* Escaped first, then cut between characters (not bytes). */
		escape_text(g->label, cut, sizeof(cut));
		cut[utf8_cut(cut, strlen(cut), 12)] = '\0';
		print_string(K("hostname"), NULL, g->label);
		print_text("%-12s", cut);
	} else if (d->o->by == GROUP_FIRMWARE) {
		/* The whole label on its own line: versions differ at the end. */
		print_string(NULL, "%s", identity_label(d, g, label, sizeof(label)));
		print_u64(K("scans"), ": %" PRIu64 " scan(s)\n", g->n_scans);
		print_recorded(K("bios_vendor"), NULL, s->bios_vendor);
		print_recorded(K("bios_version"), NULL, s->bios_version);
		print_recorded(K("bios_date"), NULL, s->bios_date);
		print_text("%-12s", "");
	} else if (d->o->by == GROUP_PRODUCT) {
		print_string(NULL, "%s", identity_label(d, g, label, sizeof(label)));
		print_u64(K("scans"), ": %" PRIu64 " scan(s)\n", g->n_scans);
		print_recorded(K("sys_vendor"), NULL, s->sys_vendor);
		print_recorded(K("product_name"), NULL, s->product_name);
		print_text("%-12s", "");
	} else {
		print_string(K(group_key_name(d->o->by)), NULL, g->key);
		print_text("%-12.12s", g->key);
	}
#undef K
}

static int print_group_table(const struct report_data *d)
{
	const char *by = group_by_name(d->o->by), *why = NULL, *period_why = NULL;
	struct coverage *c = calloc(d->n_groups ? d->n_groups : 1, sizeof(*c));
	int r = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_groups && r >= 0; i++) {
		coverage_compute(d, d->groups[i], -1, &c[i]);
		r = coverage_period(d, d->groups[i], &c[i]);
	}
	if (r < 0)
		goto out;
	print_open_array("groups");
	print_text("\nPer %s:\n%-12s" ROW_HEADER, by, by, "SMI windows");
	for (size_t i = 0; i < d->n_groups; i++) {
		const struct group *g = d->groups[i];

		print_open_object(NULL);
		print_group_key(d, g, true);
		print_row(d->o, &g->st, &c[i], false);
		print_close_object();
	}
	print_close_array();
	print_text("\nCoverage per %s (time sampled, rates per hour sampled):\n%-12s" COV_HEADER,
		   by, by, "       period");
	for (size_t i = 0; i < d->n_groups; i++) {
		print_group_key(d, d->groups[i], false);
		print_cov_row(&c[i], true);
		if (!c[i].known && !why)
			why = c[i].why;
		if (!c[i].period_computed && !period_why)
			period_why = c[i].period_why;
	}
	print_cov_notes(why, period_why);
out:
	free(c);
	return r;
}

static int print_histograms(const struct report_data *d)
{
	char title[400], label[320];
	int r = 0;

	if (d->o->by == GROUP_NONE)
		return print_histogram("histogram", "all samples", &d->all, d->o);

	print_open_array("histograms");
	if (d->o->by == GROUP_CPU) {
		for (size_t c = 0; c < HWLAT_MAX_CPUS && r >= 0; c++) {
			if (!d->cpu[c])
				continue;
			print_open_object(NULL);
			print_u64("cpu", NULL, c);
			snprintf(title, sizeof(title), "CPU %zu", c);
			r = print_histogram("histogram", title, d->cpu[c], d->o);
			print_close_object();
		}
	} else {
		for (size_t i = 0; i < d->n_groups && r >= 0; i++) {
			const struct group *g = d->groups[i];
			char raw[1024];

			print_open_object(NULL);
			if (group_by_identity(d->o->by)) {
				identity_label(d, g, raw, sizeof(raw));
				print_string("label", NULL, raw);
			} else {
				print_string(group_key_name(d->o->by), NULL, g->key);
			}
			snprintf(
			    title, sizeof(title), "%s %s", group_by_name(d->o->by),
			    d->o->by == GROUP_HOST ? escape_text(g->label, label, sizeof(label))
			    : group_by_identity(d->o->by) ? escape_text(raw, label, sizeof(label))
							  : g->key);
			r = print_histogram("histogram", title, &g->st, d->o);
			print_close_object();
		}
	}
	print_close_array();
	return r;
}

static void print_verdict(const struct report_data *d, bool exceeded)
{
	print_open_object("verdict");
	print_latency("hardlimit_ns", NULL, d->o->hardlimit_ns);
	print_bool("exceeded", NULL, exceeded);
	print_u64("samples_over_hardlimit", NULL, d->all.over_hardlimit);
	print_close_object();
	if (exceeded)
		print_text("\nVerdict: FAIL: max %s exceeds the hardlimit",
			   format_latency(d->all.max_ns, (char[32]){ 0 }, 32));
	else if (d->all.n == 0)
		print_text("\nVerdict: PASS: no sample, nothing exceeds the hardlimit");
	else
		print_text("\nVerdict: PASS: max %s is within the hardlimit",
			   format_latency(d->all.max_ns, (char[32]){ 0 }, 32));
	print_text(" %s (%" PRIu64 " of %" PRIu64 " samples above it)\n",
		   format_latency(d->o->hardlimit_ns, (char[32]){ 0 }, 32),
		   d->all.over_hardlimit, d->all.n);
}

/* What the chosen scans add up to, for the summary. */
struct chosen_totals {
	size_t n_scans, n_nosummary;
	uint64_t dropped, floor_ns; /* floor_ns: the largest any summary gave */
};

static void chosen_totals(const struct report_data *d, struct chosen_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (!s->chosen)
			continue;
		t->n_scans++;
		t->dropped += scan_dropped(s);
		if (!s->has_summary)
			t->n_nosummary++;
		if (s->has_summary && s->floor_known && s->floor_ns > t->floor_ns)
			t->floor_ns = s->floor_ns;
	}
}

/* Each chosen scan, with what it covered. */
static int print_scans(struct report_data *d)
{
	struct coverage c;
	int r;

	print_open_array("scans");
	for (size_t i = 0; i < d->n_scans; i++) {
		if (!d->scans[i].chosen)
			continue;
		r = coverage_scan(d, &d->scans[i], &c);
		if (r < 0)
			return r;
		print_scan(&d->scans[i], &c, d->read && d->read->n_problems > 0);
	}
	print_close_array();
	return 0;
}

/* The summary: the figures of the whole selection. */
static int print_selection(struct report_data *d, const struct attribution *a,
			 const struct chosen_totals *t)
{
	const struct report_options *o = d->o;
	struct coverage c;
	char buf[512];
	int r;

	print_open_object("summary");
	print_u64("scans", NULL, t->n_scans);
	print_u64("scans_without_summary", NULL, t->n_nosummary);
	print_text("\n");
	if (t->n_nosummary > 0)
		print_text("Warning:      %zu scan%s without a summary (flagged above)\n",
			   t->n_nosummary, t->n_nosummary == 1 ? "" : "s");
	if (d->all.n == 0)
		print_text("No samples match (%s): no window of the chosen scan%s had a\n"
			   "gap over its threshold, an NMI or an SMI.\n",
			   describe_filters(o, buf, sizeof(buf)), t->n_scans == 1 ? "" : "s");
	print_stats_body(o, &d->all, a);
	print_u64("dropped_windows", "Dropped:      %" PRIu64 " windows\n", t->dropped);
	if (t->floor_ns)
		print_latency("floor_ns", "Floor:        %s (detection floor: median "
					  "back-to-back clock read)\n", t->floor_ns);
	else
		print_null("floor_ns", "Floor:        %s (no scan summary gave one)\n");
	if (d->first_ns <= d->last_ns) {
		print_time("first_sample_ns", "Time:         %s", d->first_ns);
		print_time("last_sample_ns", " .. %s\n", d->last_ns);
	}
	coverage_compute(d, NULL, -1, &c);
	r = coverage_period(d, NULL, &c);
	if (r < 0)
		return r;
	print_coverage(&c, &d->all, "Sampled:      ", "Per hour:     ", "Rates:        ",
		       "Period:       ");
	print_close_object();
	return 0;
}

int print_report(struct report_data *d, bool *ret_exceeded)
{
	const struct report_options *o = d->o;
	bool exceeded = o->have_hardlimit && d->all.max_ns > o->hardlimit_ns;
	struct chosen_totals t;
	struct attribution a;
	int r;

	attribution_compute(d, &a);
	chosen_totals(d, &t);
	print_u64("schema_version", NULL, REPORT_SCHEMA_VERSION);
	print_text("hwlat report: %zu scan%s, %" PRIu64 " sample%s\n", t.n_scans,
		   t.n_scans == 1 ? "" : "s", d->all.n, d->all.n == 1 ? "" : "s");
	print_filters(o);
	print_journal(d->read);
	r = print_scans(d);
	if (r >= 0)
		r = print_selection(d, &a, &t);
	if (r < 0)
		return r;
	if (d->all.n > 0)
		print_cpu_table(d);
	if (d->all.n > 0 && group_by_has_groups(o->by)) {
		r = print_group_table(d);
		if (r < 0)
			return r;
	}
	if (d->all.n > 0 && (print_is_json() || o->histogram)) {
		r = print_histograms(d);
		if (r < 0)
			return r;
	}
	if (o->have_hardlimit)
		print_verdict(d, exceeded);
	*ret_exceeded = exceeded;
	return 0;
}

/* Only the report shows periods: it keeps the window times. */
static void report_prepare(struct report_data *d)
{
	d->keep_times = true;
}

static int report_emit(struct report_data *d, struct report_verdict *v)
{
	int r;

	print_start(stdout, d->o->mode == OUTPUT_JSON);
	r = print_report(d, &v->exceeded);
	if (r >= 0 && d->o->gates.n > 0) {
		/* A gate never passes on nothing: no data is exit 3, not 0. */
		v->has_data = selection_has_data(d);
		v->gates_failed = print_gates(d, v->has_data);
	}
	if (r >= 0)
		r = print_end();
	if (r < 0)
		log_error_errno(r, "cannot write the report");
	return r;
}

const struct emitter report_emitter = { report_prepare, report_emit };
