// SPDX-License-Identifier: GPL-2.0-or-later
/* Gathering the chosen entries; see collect.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "coverage.h"
#include "csv.h"

/* Every condition may name a size: the sizes always fit. */
_Static_assert(GATE_MAX_CONDITIONS <= STATS_SIZES_MAX, "a stats counts every gate's size");

/* Statistics of the selection, a CPU or a group, counting the windows
 * above the sizes of the --fail-if rates (which always fit, above). */
static void stats_start(struct stats *st, const struct report_options *o)
{
	stats_init(st, o->bucket_ns, o->entries);
	(void)gate_count_sizes(&o->gates, st);
}

void report_data_init(struct report_data *d, const struct report_options *o)
{
	memset(d, 0, sizeof(*d));
	d->o = o;
	stats_start(&d->all, o);
	timeline_init(&d->timeline);
	d->first_ns = UINT64_MAX;
}

void report_data_done(struct report_data *d)
{
	stats_done(&d->all);
	for (size_t i = 0; i < HWLAT_MAX_CPUS; i++)
		if (d->cpu[i]) {
			stats_done(d->cpu[i]);
			free(d->cpu[i]);
		}
	for (size_t i = 0; i < d->n_groups; i++) {
		stats_done(&d->groups[i]->st);
		free(d->groups[i]);
	}
	free(d->groups);
	for (size_t i = 0; i < d->n_scans; i++) {
		free(d->scans[i].times);
		free(d->scans[i].sampled_cpu);
	}
	free(d->scans);
	memset(d, 0, sizeof(*d));
}

static const char *const group_names[] = {
	[GROUP_NONE] = "none",
	[GROUP_CPU] = "cpu",
	[GROUP_SCAN] = "scan",
	[GROUP_BOOT] = "boot",
	[GROUP_HOST] = "host",
	[GROUP_FIRMWARE] = "firmware",
	[GROUP_PRODUCT] = "product",
};

const char *group_by_name(enum group_by by)
{
	return (size_t)by < ELEMENTSOF(group_names) ? group_names[by] :
									    "none";
}

int group_by_from_name(const char *name, enum group_by *ret)
{
	/* "none" is the default, not a choice. */
	for (size_t i = GROUP_CPU; i < ELEMENTSOF(group_names); i++)
		if (strcmp(name, group_names[i]) == 0) {
			*ret = (enum group_by)i;
			return 0;
		}
	return -EINVAL;
}

bool group_by_has_groups(enum group_by by)
{
	return by != GROUP_NONE && by != GROUP_CPU;
}

/* Scans whose identity puts them in the same --by firmware/product group. */
static bool same_identity(enum group_by by, const struct scan_record *a,
			  const struct scan_record *b)
{
	if (by == GROUP_FIRMWARE)
		return strcmp(a->bios_vendor, b->bios_vendor) == 0 &&
		       strcmp(a->bios_version, b->bios_version) == 0 &&
		       strcmp(a->bios_date, b->bios_date) == 0;
	return strcmp(a->sys_vendor, b->sys_vendor) == 0 &&
	       strcmp(a->product_name, b->product_name) == 0;
}

static struct scan_record *find_scan(struct report_data *d, const char *id)
{
	struct scan_record *s;

	if (d->n_scans > 0 && strcmp(d->scans[d->last_scan].id, id) == 0)
		return &d->scans[d->last_scan];
	for (size_t i = 0; i < d->n_scans; i++)
		if (strcmp(d->scans[i].id, id) == 0) {
			d->last_scan = i;
			return &d->scans[i];
		}
	if (d->n_scans == d->cap_scans) {
		size_t cap = d->cap_scans ? d->cap_scans * 2 : 16;

		s = realloc(d->scans, cap * sizeof(*s));
		if (!s)
			return NULL;
		d->scans = s;
		d->cap_scans = cap;
	}
	s = &d->scans[d->n_scans];
	memset(s, 0, sizeof(*s));
	memcpy(s->id, id, sizeof(s->id));
	s->first_ns = UINT64_MAX;
	d->last_scan = d->n_scans++;
	return s;
}

static struct stats *cpu_stats(struct report_data *d, uint64_t cpu)
{
	if (!d->cpu[cpu]) {
		d->cpu[cpu] = malloc(sizeof(struct stats));
		if (!d->cpu[cpu])
			return NULL;
		stats_start(d->cpu[cpu], d->o);
	}
	return d->cpu[cpu];
}

static struct stats *group_stats(struct report_data *d, const struct scan_record *s)
{
	const char *key;
	struct group *g, **p;

	switch (d->o->by) {
	case GROUP_SCAN:
	case GROUP_FIRMWARE: /* per scan until collect_finish(): the summary */
	case GROUP_PRODUCT:  /* that names the machine comes last */
		key = s->id;
		break;
	case GROUP_BOOT:
		key = s->boot_id;
		break;
	case GROUP_HOST:
		key = s->machine_id;
		break;
	default:
		return NULL;
	}
	if (d->n_groups > 0 && strcmp(d->groups[d->last_group]->key, key) == 0)
		return &d->groups[d->last_group]->st;
	for (size_t i = 0; i < d->n_groups; i++)
		if (strcmp(d->groups[i]->key, key) == 0) {
			d->last_group = i;
			return &d->groups[i]->st;
		}
	p = realloc(d->groups, (d->n_groups + 1) * sizeof(*p));
	if (!p)
		return NULL;
	d->groups = p;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	snprintf(g->key, sizeof(g->key), "%s", key);
	snprintf(g->label, sizeof(g->label), "%s", s->hostname);
	stats_start(&g->st, d->o);
	d->last_group = d->n_groups;
	d->groups[d->n_groups++] = g;
	return &g->st;
}

static bool sample_passes(const struct report_options *o, const struct sample_entry *x)
{
	if (o->have_cpus && !cpu_set_has(&o->cpus, (unsigned)x->cpu))
		return false;
	if (o->have_since && x->timestamp_ns < o->since_ns)
		return false;
	if (o->have_until && x->timestamp_ns > o->until_ns)
		return false;
	return true;
}

/*
 * The time of a matched sample, for the period (coverage.h): 8 bytes a
 * window, up to COVERAGE_MAX_TIMES, and only for the outputs that show a
 * period (not CSV, OpenMetrics or --compare), as the walk's bound on
 * memory counts them.
 */
static int keep_time(struct report_data *d, struct scan_record *s, uint64_t t)
{
	if (!d->keep_times)
		return 0;
	if (d->n_times == COVERAGE_MAX_TIMES) {
		d->times_full = true;
		return 0;
	}
	if (s->n_times == s->cap_times) {
		size_t cap = s->cap_times ? s->cap_times * 2 : 64;
		uint64_t *p = realloc(s->times, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->times = p;
		s->cap_times = cap;
	}
	s->times[s->n_times++] = t;
	d->n_times++;
	return 0;
}

int collect_sample(const struct sample_entry *x, void *userdata)
{
	struct report_data *d = userdata;
	struct scan_record *s = find_scan(d, x->scan_id);
	struct stats *st;
	int r;

	if (!s)
		return -ENOMEM;
	if (s->seen == 0 && !s->has_summary) {
		memcpy(s->boot_id, x->boot_id, sizeof(s->boot_id));
		memcpy(s->machine_id, x->machine_id, sizeof(s->machine_id));
		memcpy(s->hostname, x->hostname, sizeof(s->hostname));
	}
	s->seen++;
	if (x->latency_ns > s->seen_max_ns)
		s->seen_max_ns = x->latency_ns;
	if (x->seq > s->max_seq)
		s->max_seq = x->seq;
	if (x->threshold_ns > 0)
		s->sample_threshold_ns = x->threshold_ns;

	if (!sample_passes(d->o, x))
		return 0;
	s->matched++;
	if (sample_unexplained(x))
		s->unexplained++;
	if (x->timestamp_ns < s->first_ns)
		s->first_ns = x->timestamp_ns;
	if (x->timestamp_ns > s->last_ns)
		s->last_ns = x->timestamp_ns;

	if (!x->smi_count_known)
		s->smi_windows_unknown = true;
	s->smi_windows += sample_has_smi(x);
	s->nmi_windows += x->nmi_count > 0;
	s->over_threshold += x->count > 0;
	s->smis += x->smi_count_known ? x->smi_count : 0;
	s->nmis += x->nmi_count;

	if (d->csv) {
		d->csv_rows++;
		r = csv_row(d->csv, x, d->csv_rows == 1);
		if (r < 0)
			d->write_error = r;
		return r;
	}

	if (x->timestamp_ns < d->first_ns)
		d->first_ns = x->timestamp_ns;
	if (x->timestamp_ns > d->last_ns)
		d->last_ns = x->timestamp_ns;
	timeline_add(&d->timeline, x->timestamp_ns, x->latency_ns);
	r = keep_time(d, s, x->timestamp_ns);
	if (r < 0)
		return r;

	r = stats_add(&d->all, x, d->o->hardlimit_ns);
	if (r < 0)
		return r;
	st = cpu_stats(d, x->cpu);
	if (!st)
		return -ENOMEM;
	r = stats_add(st, x, d->o->hardlimit_ns);
	if (r < 0)
		return r;
	if (group_by_has_groups(d->o->by)) {
		st = group_stats(d, s);
		if (!st)
			return -ENOMEM;
		r = stats_add(st, x, d->o->hardlimit_ns);
		if (r < 0)
			return r;
	}
	return 0;
}

int collect_summary(const struct scan_record *sum, void *userdata)
{
	struct report_data *d = userdata;
	struct scan_record *s = find_scan(d, sum->id);
	struct cpu_ns *cpus = NULL;
	size_t n_cpus = 0;
	struct scan_record keep;

	if (!s)
		return -ENOMEM;
	/* Checked by entry_problem(): it parses. */
	if (sum->sampled_known && sum->sampled_cpu_text) {
		cpus = malloc(HWLAT_MAX_CPUS * sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		if (cpu_pairs_parse(&cpu_pairs_sampled, sum->sampled_cpu_text, sum->sampled_ns,
				    cpus, &n_cpus)) {
			free(cpus);
			return -EINVAL;
		}
	}
	/* Keep what the samples showed; take everything else from the summary. */
	keep = *s;
	*s = *sum;
	s->seen = keep.seen;
	s->max_seq = keep.max_seq;
	s->seen_max_ns = keep.seen_max_ns;
	s->sample_threshold_ns = keep.sample_threshold_ns;
	s->first_ns = keep.first_ns;
	s->last_ns = keep.last_ns;
	s->matched = keep.matched;
	s->unexplained = keep.unexplained;
	s->times = keep.times;
	s->n_times = keep.n_times;
	s->cap_times = keep.cap_times;
	s->smi_windows = keep.smi_windows;
	s->smi_windows_unknown = keep.smi_windows_unknown;
	s->nmi_windows = keep.nmi_windows;
	s->over_threshold = keep.over_threshold;
	s->smis = keep.smis;
	s->nmis = keep.nmis;
	free(keep.sampled_cpu); /* a second summary of the scan replaces the first */
	s->sampled_cpu = cpus;
	s->n_sampled_cpu = n_cpus;
	s->sampled_cpu_text = NULL; /* the entry's, gone after this call */
	/* The list as recorded, to show it; cut (with "...") when very long. */
	if (sum->skipped_known && sum->skipped_cpu_text &&
	    snprintf(s->skipped_cpu, sizeof(s->skipped_cpu), "%s", sum->skipped_cpu_text) >=
		    (int)sizeof(s->skipped_cpu))
		memcpy(s->skipped_cpu + sizeof(s->skipped_cpu) - 4, "...", 4);
	s->skipped_cpu_text = NULL;
	if (s->boot_id[0] == '\0')
		memcpy(s->boot_id, keep.boot_id, sizeof(s->boot_id));
	if (s->machine_id[0] == '\0')
		memcpy(s->machine_id, keep.machine_id, sizeof(s->machine_id));
	if (s->hostname[0] == '\0')
		memcpy(s->hostname, keep.hostname, sizeof(s->hostname));
	return 0;
}

bool collect_group_has_scan(const struct report_data *d, const struct group *g,
			    const struct scan_record *s)
{
	switch (d->o->by) {
	case GROUP_SCAN:
		return strcmp(s->id, g->key) == 0;
	case GROUP_BOOT:
		return strcmp(s->boot_id, g->key) == 0;
	case GROUP_HOST:
		return strcmp(s->machine_id, g->key) == 0;
	case GROUP_FIRMWARE:
	case GROUP_PRODUCT:
		return same_identity(d->o->by, &d->scans[g->scan_index], s);
	default:
		return false;
	}
}

/* The scan's summary says it sampled one of the --cpu CPUs. */
static bool scan_sampled_cpus(const struct scan_record *s, const cpu_set_bits *want)
{
	cpu_set_bits sampled;

	if (!s->has_summary || parse_cpulist(s->cpus, &sampled) < 0)
		return false; /* "unknown", or no summary: nothing is known */
	for (size_t i = 0; i < HWLAT_MAX_CPUS / 64; i++)
		if (sampled.bits[i] & want->bits[i])
			return true;
	return false;
}

/* The index of the scan with this id (it exists: its samples made it). */
static size_t scan_index(const struct report_data *d, const char *id)
{
	for (size_t i = 0; i < d->n_scans; i++)
		if (strcmp(d->scans[i].id, id) == 0)
			return i;
	return 0;
}

int collect_regroup(struct report_data *d)
{
	size_t n = 0;

	if (d->o->by != GROUP_FIRMWARE && d->o->by != GROUP_PRODUCT)
		return 0;
	for (size_t i = 0; i < d->n_groups; i++) {
		struct group *g = d->groups[i];
		size_t k;

		g->scan_index = scan_index(d, g->key);
		g->n_scans = 1;
		for (k = 0; k < n; k++)
			if (same_identity(d->o->by, &d->scans[d->groups[k]->scan_index],
					  &d->scans[g->scan_index]))
				break;
		if (k == n) {
			d->groups[n++] = g;
			continue;
		}
		if (stats_merge(&d->groups[k]->st, &g->st) < 0) {
			/* Keep every group owned by the array: free all of them. */
			d->groups[n++] = g;
			for (size_t m = i + 1; m < d->n_groups; m++)
				d->groups[n++] = d->groups[m];
			d->n_groups = n;
			return -ENOMEM;
		}
		d->groups[k]->n_scans++;
		stats_done(&g->st);
		free(g);
	}
	d->n_groups = n;
	d->last_group = 0;
	return 0;
}

size_t collect_finish(struct report_data *d)
{
	const struct report_options *o = d->o;
	size_t n = 0, out_of_time = 0, other_cpus = 0;

	for (size_t i = 0; i < d->n_scans; i++) {
		struct scan_record *s = &d->scans[i];
		bool chosen = true;

		if ((o->have_since || o->have_until) && s->matched == 0) {
			/* Without samples in range, a scan counts when it ran then. */
			uint64_t end = s->start_ns + s->duration_ns;

			chosen = s->has_summary &&
				 (!o->have_since || end >= o->since_ns) &&
				 (!o->have_until || s->start_ns <= o->until_ns);
			if (!chosen)
				out_of_time++;
		}
		if (chosen && o->have_cpus && s->matched == 0) {
			/* Nothing found on CPUs the scan never sampled is no result. */
			chosen = scan_sampled_cpus(s, &o->cpus);
			if (!chosen)
				other_cpus++;
		}
		s->chosen = chosen;
		if (chosen)
			n++;
	}
	if (n == 0 && other_cpus > 0)
		d->no_match_reason = "no selected scan sampled these CPUs";
	else if (n == 0 && out_of_time > 0)
		d->no_match_reason = "no scan ran in that time";
	return n;
}
