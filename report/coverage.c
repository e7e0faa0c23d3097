// SPDX-License-Identifier: GPL-2.0-or-later
/* Coverage, rates and periods; see coverage.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "gate.h"
#include "hwlat-journal.h"
#include "parse.h"

#define PAIRS_KIND(total, list, unit)                                                       \
	{                                                                                    \
		.malformed = list " (not CPU:" unit " pairs in ascending CPUs below 1024)",  \
		.no_sum = list " (does not add up to " total ")",                           \
		.total_bad = total " (neither a number nor unavailable)",                    \
		.missing = list " (missing)",                                                \
		.without_total = list " (without " total ")",                                \
		.not_unavailable = list " (not unavailable as " total ")",                   \
	}

const struct cpu_pairs_kind cpu_pairs_sampled =
	PAIRS_KIND(HWLAT_F_SAMPLED_NS, HWLAT_F_SAMPLED_CPU_NS, "NS");
const struct cpu_pairs_kind cpu_pairs_skipped =
	PAIRS_KIND(HWLAT_F_SKIPPED_WINDOWS, HWLAT_F_SKIPPED_CPU_WINDOWS, "WINDOWS");

const char *cpu_pairs_parse(const struct cpu_pairs_kind *k, const char *text, uint64_t total,
			    struct cpu_ns *out, size_t *ret_n)
{
	const char *p = text;
	uint64_t sum = 0, next = 0; /* the lowest CPU the next pair may name */
	size_t n = 0;

	/* hwlat-scan writes an empty list when no CPU has a figure. */
	while (*p != '\0') {
		uint64_t cpu, v;

		if (parse_digits(&p, &cpu) < 0 || *p != ':')
			return k->malformed;
		p++;
		if (parse_digits(&p, &v) < 0)
			return k->malformed;
		if (cpu >= HWLAT_MAX_CPUS || cpu < next)
			return k->malformed;
		next = cpu + 1;
		if (sum > UINT64_MAX - v)
			return k->no_sum;
		sum += v;
		if (out) {
			out[n].cpu = (uint32_t)cpu;
			out[n].ns = v;
		}
		n++;
		if (*p == ' ' && p[1] != '\0')
			p++;
		else if (*p != '\0')
			return k->malformed;
	}
	if (sum != total)
		return k->no_sum;
	*ret_n = n;
	return NULL;
}

const char *cpu_pairs_problem(const struct cpu_pairs_kind *k, const char *total_text,
			      bool has_list, const char *list, bool *known, uint64_t *total)
{
	bool have_total = total_text[0] != '\0';
	size_t n;

	*known = false;
	*total = 0;
	if (have_total && strcmp(total_text, HWLAT_UNAVAILABLE) != 0) {
		if (parse_u64(total_text, total) < 0)
			return k->total_bad;
		*known = true;
	}
	if (!has_list)
		return *known ? k->missing : NULL;
	if (!have_total)
		return k->without_total;
	if (!*known)
		return strcmp(list, HWLAT_UNAVAILABLE) == 0 ? NULL : k->not_unavailable;
	return cpu_pairs_parse(k, list, *total, NULL, &n);
}

const char *sampled_problem(struct scan_record *s)
{
	const char *why;

	why = cpu_pairs_problem(&cpu_pairs_sampled, s->sampled_text, s->has_sampled_cpu,
				s->sampled_cpu_text, &s->sampled_known, &s->sampled_ns);
	if (!why)
		why = cpu_pairs_problem(&cpu_pairs_skipped, s->skipped_text, s->has_skipped_cpu,
					s->skipped_cpu_text, &s->skipped_known,
					&s->skipped_windows);
	return why;
}

bool scan_sampled(const struct scan_record *s, const struct report_options *o, int cpu,
		  uint64_t *ret, char *why, size_t why_size)
{
	uint64_t sum = 0;

	/* Short enough for a line of 80 columns after 14 of indent. */
	if (!s->has_summary) {
		snprintf(why, why_size, "scan %s: no summary", s->id);
		return false;
	}
	if (!s->sampled_text[0]) {
		snprintf(why, why_size, "scan %s: not recorded (old summary)", s->id);
		return false;
	}
	if (!s->sampled_known) {
		snprintf(why, why_size, "scan %s: none (tracer or old module)", s->id);
		return false;
	}
	if ((o->have_since && s->start_ns < o->since_ns) ||
	    (o->have_until && s->start_ns + s->duration_ns > o->until_ns)) {
		snprintf(why, why_size, "scan %s: ran beyond --since/--until", s->id);
		return false;
	}
	if (cpu < 0 && !o->have_cpus) {
		*ret = s->sampled_ns;
		return true;
	}
	for (size_t i = 0; i < s->n_sampled_cpu; i++) {
		const struct cpu_ns *c = &s->sampled_cpu[i];

		if ((cpu < 0 || c->cpu == (unsigned)cpu) &&
		    (!o->have_cpus || cpu_set_has(&o->cpus, c->cpu)))
			sum += c->ns;
	}
	*ret = sum;
	return true;
}

/* One rate: its events over the figure's time, when they are known. */
static void rate_of(const struct coverage *c, enum rate_event e, uint64_t above_ns, bool known,
		    uint64_t events, struct rate_figure *f)
{
	memset(f, 0, sizeof(*f));
	f->event = e;
	f->above_ns = above_ns;
	f->known = known && rate_compute(events, c->ns, &f->r);
}

/* Windows above a --fail-if size: counted whole from the largest threshold up. */
static void size_rate(const struct coverage *c, const struct stats *st, size_t i,
		      struct rate_figure *f)
{
	char a[48], b[48];

	rate_of(c, RATE_GAPS_ABOVE, st->size_ns[i],
		c->threshold_known && st->size_ns[i] >= c->threshold_max_ns, st->above[i], f);
	if (!c->threshold_known)
		snprintf(f->why, sizeof(f->why), "%s", c->threshold_why);
	else if (!f->known)
		snprintf(f->why, sizeof(f->why), "gaps above %s are not all reported: the "
			 "threshold is %s", format_latency_exact(st->size_ns[i], a, sizeof(a)),
			 format_latency_exact(c->threshold_max_ns, b, sizeof(b)));
}

size_t coverage_rates(const struct coverage *c, const struct stats *st,
		      struct rate_figure out[COVERAGE_RATES_MAX])
{
	/* The threshold's size when the scans share one, else each scan's. */
	uint64_t threshold = c->threshold_known && c->threshold_min_ns == c->threshold_max_ns ?
				     c->threshold_max_ns : 0;
	size_t n = 0;

	rate_of(c, RATE_GAPS_ABOVE, threshold, true, c->over_threshold, &out[n++]);
	rate_of(c, RATE_SMIS, 0, c->smi_known, c->smis, &out[n]);
	if (!c->smi_known)
		snprintf(out[n].why, sizeof(out[n].why), "some windows could not count SMIs");
	n++;
	rate_of(c, RATE_NMIS, 0, true, c->nmis, &out[n++]);
	/* Without SMI counts, SMI windows would look unexplained. */
	rate_of(c, RATE_UNEXPLAINED, 0, c->smi_known, c->unexplained, &out[n]);
	if (!c->smi_known)
		snprintf(out[n].why, sizeof(out[n].why), "some windows could not count SMIs");
	n++;
	/* A --fail-if size that is the shared threshold is the first rate again. */
	for (size_t i = 0; st && i < st->n_sizes; i++)
		if (st->size_ns[i] != threshold)
			size_rate(c, st, i, &out[n++]);
	return n;
}

double per_hour(uint64_t count, uint64_t ns)
{
	return (double)count * 3600e9 / (double)ns;
}

/* The window that merges a scan's windows into events (period.h); 1 s,
 * hwlat's default, without a summary. */
static uint64_t merge_window(const struct scan_record *s)
{
	return s->has_summary && s->window_ns > 0 ? s->window_ns : NSEC_PER_SEC;
}

/* The period of the times of the scans in the figure, when they are one
 * machine's. */
static int find_period(const struct report_data *d, const struct group *g,
		       const struct scan_record *one, struct coverage *c)
{
	const struct scan_record *first = NULL;
	uint64_t *t, merge = 0;
	size_t n = 0, k = 0;
	int r;

	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (one ? s != one : !s->chosen || (g && !collect_group_has_scan(d, g, s)))
			continue;
		if (first && strcmp(first->machine_id, s->machine_id) != 0) {
			c->period_why = "the events of several machines";
			return 0;
		}
		if (!first)
			first = s;
		n += s->n_times;
		if (merge_window(s) > merge)
			merge = merge_window(s);
	}
	if (!d->keep_times) {
		c->period_why = "not computed for this output";
		return 0;
	}
	if (d->times_full) {
		c->period_why = "over 1000000 windows (their times are not kept)";
		return 0;
	}
	t = malloc((n ? n : 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (one ? s != one : !s->chosen || (g && !collect_group_has_scan(d, g, s)))
			continue;
		if (s->n_times)
			memcpy(t + k, s->times, s->n_times * sizeof(*t));
		k += s->n_times;
	}
	r = period_find(t, n, merge, &c->period);
	free(t);
	c->period_computed = r >= 0;
	return r;
}

static void counts_of(const struct stats *st, struct coverage *c)
{
	c->samples = st->n;
	c->smi_windows = st->smi_windows;
	c->smi_known = st->smi_unknown_windows == 0;
	c->nmi_windows = st->nmi_windows;
	c->unexplained = st->unexplained_windows;
	c->over_threshold = st->over_threshold;
	c->smis = st->smi_total;
	c->nmis = st->nmi_total;
}

/* A scan's threshold: its summary's, else its samples' (0: none known). */
static uint64_t scan_threshold(const struct scan_record *s)
{
	return s->has_summary ? s->threshold_ns : s->sample_threshold_ns;
}

/* Adds a scan's threshold to the figure's range, or why it has none. */
static void add_threshold(const struct scan_record *s, struct coverage *c)
{
	uint64_t t = scan_threshold(s);

	if (!c->threshold_known)
		return;
	if (t == 0) {
		c->threshold_known = false;
		snprintf(c->threshold_why, sizeof(c->threshold_why),
			 "scan %s: its threshold is not known", s->id);
		return;
	}
	if (c->threshold_min_ns == 0 || t < c->threshold_min_ns)
		c->threshold_min_ns = t;
	if (t > c->threshold_max_ns)
		c->threshold_max_ns = t;
}

void coverage_compute(const struct report_data *d, const struct group *g, int cpu,
		      struct coverage *ret)
{
	struct coverage *c = ret;

	memset(c, 0, sizeof(*c));
	c->known = c->threshold_known = true;
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];
		uint64_t ns;

		if (!s->chosen || (g && !collect_group_has_scan(d, g, s)))
			continue;
		add_threshold(s, c);
		if (!c->known)
			continue;
		if (scan_sampled(s, d->o, cpu, &ns, c->why, sizeof(c->why)))
			c->ns += ns;
		else
			c->known = false;
	}
	if (!c->known)
		c->ns = 0;
	if (g)
		counts_of(&g->st, c);
	else if (cpu >= 0 && d->cpu[cpu])
		counts_of(d->cpu[cpu], c);
	else if (cpu < 0)
		counts_of(&d->all, c);
}

int coverage_period(const struct report_data *d, const struct group *g, struct coverage *c)
{
	return find_period(d, g, NULL, c);
}

int coverage_scan(const struct report_data *d, const struct scan_record *s, struct coverage *ret)
{
	struct coverage *c = ret;

	memset(c, 0, sizeof(*c));
	c->known = scan_sampled(s, d->o, -1, &c->ns, c->why, sizeof(c->why));
	if (!c->known)
		c->ns = 0;
	c->threshold_known = true;
	add_threshold(s, c);
	c->samples = s->matched;
	c->smi_windows = s->smi_windows;
	c->smi_known = !s->smi_windows_unknown;
	c->nmi_windows = s->nmi_windows;
	c->unexplained = s->unexplained;
	c->over_threshold = s->over_threshold;
	c->smis = s->smis;
	c->nmis = s->nmis;
	return find_period(d, NULL, s, c);
}

bool coverage_cpus(const struct report_data *d, uint64_t ns[HWLAT_MAX_CPUS])
{
	char why[200];

	memset(ns, 0, HWLAT_MAX_CPUS * sizeof(*ns));
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];
		uint64_t total;

		if (!s->chosen)
			continue;
		if (!scan_sampled(s, d->o, -1, &total, why, sizeof(why)))
			return false;
		for (size_t k = 0; k < s->n_sampled_cpu; k++)
			if (!d->o->have_cpus || cpu_set_has(&d->o->cpus, s->sampled_cpu[k].cpu))
				ns[s->sampled_cpu[k].cpu] += s->sampled_cpu[k].ns;
	}
	return true;
}
