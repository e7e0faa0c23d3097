// SPDX-License-Identifier: GPL-2.0-or-later
/* --fail-if in the report; see gates.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attribution.h"
#include "coverage.h"
#include "gates.h"
#include "hwlat-journal.h"
#include "platform-notes.h"
#include "output.h"
#include "print.h"

/* A clean scan (a summary, no sample matched) that covers the selection:
 * the report already keeps only those that ran in --since/--until; its
 * HWLAT_CPUS must meet --cpu. */
static bool clean_scan_covers(const struct scan_record *s, const struct report_options *o)
{
	cpu_set_bits sampled;

	if (!s->has_summary)
		return false;
	if (!o->have_cpus)
		return true;
	if (parse_cpulist(s->cpus, &sampled) < 0)
		return false; /* "unknown": nothing is known */
	for (size_t i = 0; i < HWLAT_MAX_CPUS / 64; i++)
		if (sampled.bits[i] & o->cpus.bits[i])
			return true;
	return false;
}

bool selection_has_data(const struct report_data *d)
{
	if (d->all.n > 0)
		return true;
	for (size_t i = 0; i < d->n_scans; i++)
		if (d->scans[i].chosen && clean_scan_covers(&d->scans[i], d->o))
			return true;
	return false;
}

/* The part of [start, end) inside --since/--until (both inclusive there). */
static uint64_t overlap_ns(const struct report_options *o, uint64_t start, uint64_t end)
{
	if (o->have_since && start < o->since_ns)
		start = o->since_ns;
	if (o->have_until && end > o->until_ns)
		end = o->until_ns;
	return end > start ? end - start : 0;
}

bool scanned_duration(const struct report_data *d, uint64_t *ret, char *why, size_t why_size)
{
	bool known = true;

	*ret = 0;
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (!s->chosen)
			continue;
		if (!s->has_summary) {
			known = false;
			snprintf(why, why_size, "scan %s has no summary: its duration is not known",
				 s->id);
			continue;
		}
		*ret += overlap_ns(d->o, s->start_ns, s->start_ns + s->duration_ns);
	}
	if (known && *ret == 0) {
		known = false;
		snprintf(why, why_size, "the chosen scans cover no scan time");
	}
	return known;
}

void gates_facts(const struct report_data *d, struct gate_facts *f, struct gates_why *why)
{
	struct coverage c;

	memset(f, 0, sizeof(*f));
	f->stats = &d->all;
	f->smi = d->all.smi_total;
	/* Counts that could not be known are never taken for 0. */
	f->smi_known = d->all.smi_unknown_windows == 0;
	if (!f->smi_known) {
		snprintf(why->smi, sizeof(why->smi), "%" PRIu64 " window%s could not count SMIs",
			 d->all.smi_unknown_windows, d->all.smi_unknown_windows == 1 ? "" : "s");
		f->smi_why = why->smi;
	}
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (!s->chosen)
			continue;
		if (s->has_summary && !s->smi_total_known && f->smi_known) {
			f->smi_known = false;
			snprintf(why->smi, sizeof(why->smi), "scan %s: %s", s->id, s->smi_unavailable);
			f->smi_why = why->smi;
		}
		f->dropped += scan_dropped(s);
		if (strcmp(scan_smi_scope(s), HWLAT_SMI_SCOPE_GUEST) == 0)
			f->smi_note = smi_scope_note(HWLAT_SMI_SCOPE_GUEST);
	}
	/*
	 * smi-rate: the SMIs of the windows over the time the windows sampled,
	 * as the coverage figures (docs/interfaces.md section 4). Per-cpu mode
	 * counts a broadcast SMI once per sampling CPU and sums their times:
	 * the ratio is the machine's rate in every mode. 0 ns is unknown too
	 * (lib/gate.c).
	 */
	coverage_compute(d, NULL, -1, &c);
	f->sampled_known = c.known;
	f->sampled_ns = f->smi_sampled_ns = c.ns;
	if (!c.known) {
		snprintf(why->sampled, sizeof(why->sampled), "time sampled of %s", c.why);
		f->sampled_why = why->sampled;
	}
	/* rate(>SIZE): the largest threshold of the chosen scans. */
	f->threshold_known = c.threshold_known;
	f->threshold_ns = c.threshold_max_ns;
	if (!c.threshold_known) {
		snprintf(why->threshold, sizeof(why->threshold), "%s", c.threshold_why);
		f->threshold_why = why->threshold;
	}
}

/*
 * A rate condition in JSON: the limit, the estimate and the bound it is
 * decided on (per hour; null when unknown), the events and the time
 * sampled, and, failed, the time sampled that would pass with no further
 * event.
 */
static void print_rate_result(const struct gate *g, const struct gate_result *r)
{
	print_double("limit_per_hour", NULL, g->rate_limit);
	if (g->event == RATE_GAPS_ABOVE)
		print_latency("above_ns", NULL, g->size_ns);
	if (!r->known) {
		print_null("value_per_hour", NULL);
		print_null("upper_bound_per_hour", NULL);
		print_null("events", NULL);
		print_null("sampled_ns", NULL);
		print_null("sampled_needed_ns", NULL);
		return;
	}
	print_double("value_per_hour", NULL, r->rate);
	print_double("upper_bound_per_hour", NULL, r->r.upper_per_hour);
	print_u64("events", NULL, r->r.events);
	print_latency("sampled_ns", NULL, r->r.sampled_ns);
	if (r->failed)
		print_latency("sampled_needed_ns", NULL, r->sampled_needed_ns);
	else
		print_null("sampled_needed_ns", NULL);
}

static void print_one(const struct gate *g, const struct gate_facts *f,
		      const struct gate_result *r)
{
	char line[640];

	print_open_object(NULL);
	print_string("condition", NULL, g->text);
	print_string("fact", NULL, g->name);
	print_string("operator", NULL, gate_op_name(g->op));
	if (gate_is_latency(g)) {
		print_latency("limit_ns", NULL, g->limit);
		if (r->known)
			print_latency("value_ns", NULL, r->value);
		else
			print_null("value_ns", NULL);
	} else if (g->fact == GATE_RATE) {
		print_rate_result(g, r);
	} else if (g->fact == GATE_SMI_RATE) {
		print_double("limit_per_hour", NULL, g->rate_limit);
		if (r->known)
			print_double("value_per_hour", NULL, r->rate);
		else
			print_null("value_per_hour", NULL);
	} else {
		print_u64("limit", NULL, g->limit);
		if (r->known)
			print_u64("value", NULL, r->value);
		else
			print_null("value", NULL);
	}
	print_bool("known", NULL, r->known);
	print_bool("failed", NULL, r->failed);
	print_string(NULL, "  %s\n", gate_describe(g, f, r, line, sizeof(line)));
	print_close_object();
}

size_t print_gates(const struct report_data *d, bool has_data)
{
	const struct gate_list *l = &d->o->gates;
	struct gate_result res[GATE_MAX_CONDITIONS];
	struct gate_facts f;
	struct gates_why why;
	size_t failed;

	if (!has_data) {
		print_null("gates", NULL);
		print_text("\nGates:        not evaluated: the selection holds no data\n");
		return 0;
	}
	gates_facts(d, &f, &why);
	failed = gate_eval_all(l, &f, res);
	print_open_object("gates");
	print_u64("failed", "\nGates:        %" PRIu64, failed);
	print_u64("conditions", " of %" PRIu64 " --fail-if conditions hold\n", l->n);
	print_open_array("results");
	for (size_t i = 0; i < l->n; i++)
		print_one(&l->g[i], &f, &res[i]);
	print_close_array();
	print_close_object();
	return failed;
}
