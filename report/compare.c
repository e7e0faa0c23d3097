// SPDX-License-Identifier: GPL-2.0-or-later
/* --compare; see compare.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "boots.h"
#include "collect.h"
#include "compare.h"
#include "coverage.h"
#include "gates.h"
#include "hwlat-journal.h"
#include "log.h"
#include "output.h"
#include "print.h"
#include "select.h"
#include "significance.h"
#include "svg.h"

#define NSEC_PER_HOUR (3600.0 * 1e9)

struct side {
	struct report_options *o;
	const char *name;        /* "A" or "B" */
	const char *terms;       /* as given */
	struct report_data d;
	size_t n_scans;
	struct gate_facts f;     /* SMIs, as --fail-if sees them */
	struct gates_why why;
	bool scanned_known;      /* scanned_duration() */
	uint64_t scanned_ns;
	char scanned_why[160];
	struct coverage cov;     /* time sampled */
	/* The time of the rates and the rate test: sampled when both sides
	 * know theirs, else scanned. */
	bool time_known;
	uint64_t time_ns;
	const char *time_why;
};

/* The scan belongs to the side by its host, firmware and product terms. */
static bool scan_matches(const struct report_options *o, const struct scan_record *s)
{
	char label[1024], id[ID128_LEN + 1];

	if (o->host && strcmp(s->hostname, o->host) != 0 &&
	    !(normalize_id128(o->host, id) == 0 && strcmp(id, s->machine_id) == 0))
		return false;
	if (o->firmware && strcmp(s->bios_version, o->firmware) != 0 &&
	    strcmp(scan_identity_label(s, GROUP_FIRMWARE, label, sizeof(label)), o->firmware) != 0)
		return false;
	if (o->product && strcmp(s->product_name, o->product) != 0 &&
	    strcmp(scan_identity_label(s, GROUP_PRODUCT, label, sizeof(label)), o->product) != 0)
		return false;
	return true;
}

static const struct scan_record *find_chosen(const struct report_data *d, const char *id)
{
	for (size_t i = 0; i < d->n_scans; i++)
		if (d->scans[i].chosen && strcmp(d->scans[i].id, id) == 0)
			return &d->scans[i];
	return NULL;
}

/*
 * Keeps the scans of the host, firmware and product terms; their per-scan
 * statistics (the side reads with --by scan then) become the side's. Returns
 * how many scans are chosen, or -ENOMEM.
 */
static int choose_scans(struct report_data *d)
{
	const struct report_options *o = d->o;
	size_t n = 0;

	for (size_t i = 0; i < d->n_scans; i++) {
		struct scan_record *s = &d->scans[i];

		if (s->chosen && !scan_matches(o, s))
			s->chosen = false;
		n += s->chosen;
	}
	if (o->by != GROUP_SCAN)
		return (int)n;
	stats_done(&d->all);
	stats_init(&d->all, o->bucket_ns, o->entries);
	d->first_ns = UINT64_MAX;
	d->last_ns = 0;
	for (size_t i = 0; i < d->n_groups; i++) {
		const struct scan_record *s = find_chosen(d, d->groups[i]->key);

		if (!s)
			continue;
		if (stats_merge(&d->all, &d->groups[i]->st) < 0)
			return -ENOMEM;
		if (s->matched > 0 && s->first_ns < d->first_ns)
			d->first_ns = s->first_ns;
		if (s->matched > 0 && s->last_ns > d->last_ns)
			d->last_ns = s->last_ns;
	}
	return (int)n;
}

/* Resolves the side's boot (an offset, or the newest with --boot alone). */
static int select_side(struct journal_set *set, struct side *x)
{
	struct report_options *o = x->o;
	int r;

	if (o->have_boot_offset) {
		r = boot_resolve(set, o->boot_offset, o->boot_id);
		if (r < 0)
			return r == -ERANGE ? -ENOENT : r;
	}
	r = journal_select(set, o);
	if (r == -EIO)
		log_msg("no journal file could be read");
	if (r == -ENOENT)
		log_msg("--compare %s '%s': the journal holds no hwlat-scan entries%s", x->name,
			x->terms, o->have_boot ? " for this boot" : "");
	return r;
}

/*
 * One walk serves both sides: it matches only what both share (the same
 * scan or boot; from the earlier since), and each entry goes to the sides
 * whose scan and boot it has (collect_sample() applies their since, until
 * and cpu).
 */
static void walk_options(const struct report_options *a, const struct report_options *b,
			 struct report_options *w)
{
	*w = *a;
	w->have_scan = a->have_scan && b->have_scan && strcmp(a->scan_id, b->scan_id) == 0;
	w->have_boot = a->have_boot && b->have_boot && strcmp(a->boot_id, b->boot_id) == 0;
	w->have_since = a->have_since && b->have_since;
	w->since_ns = a->since_ns < b->since_ns ? a->since_ns : b->since_ns;
}

static bool in_side(const struct report_options *o, const char *scan_id, const char *boot_id)
{
	return (!o->have_scan || strcmp(scan_id, o->scan_id) == 0) &&
	       (!o->have_boot || strcmp(boot_id, o->boot_id) == 0);
}

static int sample_both(const struct sample_entry *s, void *userdata)
{
	struct side *x = userdata;

	for (size_t i = 0; i < 2; i++)
		if (in_side(x[i].o, s->scan_id, s->boot_id)) {
			int r = collect_sample(s, &x[i].d);

			if (r < 0)
				return r;
		}
	return 0;
}

static int summary_both(const struct scan_record *s, void *userdata)
{
	struct side *x = userdata;

	for (size_t i = 0; i < 2; i++)
		if (in_side(x[i].o, s->id, s->boot_id)) {
			int r = collect_summary(s, &x[i].d);

			if (r < 0)
				return r;
		}
	return 0;
}

/* The side's scans, once the walk is done. */
static int finish_side(struct side *x)
{
	int n;

	n = collect_finish(&x->d) > 0 ? choose_scans(&x->d) : 0;
	if (n == -ENOMEM)
		log_msg("out of memory");
	if (n < 0)
		return n;
	if (n == 0) {
		log_msg("--compare %s '%s' matches no scan%s%s", x->name, x->terms,
			x->d.no_match_reason ? ": " : "",
			x->d.no_match_reason ? x->d.no_match_reason : "");
		return -ENOENT;
	}
	x->n_scans = (size_t)n;
	gates_facts(&x->d, &x->f, &x->why);
	x->scanned_known = scanned_duration(&x->d, &x->scanned_ns, x->scanned_why,
					    sizeof(x->scanned_why));
	coverage_compute(&x->d, NULL, -1, &x->cov);
	return 0;
}

/* Time sampled when every scan of both sides has it, else scan duration. */
static bool choose_time_basis(struct side x[2])
{
	bool sampled = x[0].cov.known && x[0].cov.ns > 0 && x[1].cov.known && x[1].cov.ns > 0;

	for (size_t i = 0; i < 2; i++) {
		x[i].time_known = sampled || x[i].scanned_known;
		x[i].time_ns = sampled ? x[i].cov.ns : x[i].scanned_ns;
		x[i].time_why = x[i].scanned_known ? NULL : x[i].scanned_why;
	}
	return sampled;
}

/* One row: a label, then the value of A and of B, each right-aligned. */
#define ROW "%-16s"
#define COL "%20s"
#define COL_U64 "%20" PRIu64

static void row_u64(const char *key, const char *label, uint64_t a, uint64_t b)
{
	print_open_object(key);
	print_text(ROW, label);
	print_u64("a", COL_U64, a);
	print_u64("b", COL_U64 "\n", b);
	print_close_object();
}

/* A latency of the side's samples; none (null, "-") without samples. */
static void cell_latency(const char *key, const char *fmt, const struct stats *st, double p)
{
	if (st->n == 0)
		print_null(key, fmt);
	else
		print_latency(key, fmt, p > 100 ? st->max_ns : stats_percentile(st, p));
}

static void row_latency(const char *key, const char *label, const struct side x[2], double p)
{
	print_open_object(key);
	print_text(ROW, label);
	cell_latency("a_ns", COL, &x[0].d.all, p);
	cell_latency("b_ns", COL "\n", &x[1].d.all, p);
	print_close_object();
}

static void row_scanned(const struct side x[2])
{
	print_open_object("scanned");
	print_text(ROW, "Scanned:");
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "b_ns" : "a_ns", *fmt = i ? COL "\n" : COL;

		if (x[i].scanned_known)
			print_duration(key, fmt, x[i].scanned_ns);
		else
			print_null(key, fmt);
	}
	print_close_object();
	print_open_object("sampled");
	print_text(ROW, "Sampled:");
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "b_ns" : "a_ns", *fmt = i ? COL "\n" : COL;

		if (x[i].cov.known)
			print_duration(key, fmt, x[i].cov.ns);
		else
			print_null(key, fmt);
	}
	print_close_object();
}

/* SMIs taken, as --fail-if smi counts them: "unavailable", never 0, when
 * some count could not be known. */
static void row_smis(const struct side x[2])
{
	print_open_object("smi_total");
	print_text(ROW, "SMIs:");
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "b" : "a", *fmt = i ? COL "\n" : COL;

		if (x[i].f.smi_known)
			print_u64(key, i ? COL_U64 "\n" : COL_U64, x[i].f.smi);
		else
			print_string(key, fmt, HWLAT_UNAVAILABLE);
	}
	print_close_object();
	print_open_object("smi_per_hour");
	print_text(ROW, "SMIs per hour:");
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "b" : "a", *fmt = i ? COL "\n" : COL;

		if (x[i].f.smi_known && x[i].time_known)
			print_double(key, fmt, (double)x[i].f.smi /
					       ((double)x[i].time_ns / NSEC_PER_HOUR));
		else
			print_null(key, fmt);
	}
	print_close_object();
}

/* The p-value (after fmt) and whether it is below alpha. */
static void print_verdict(bool computed, double p, const char *fmt)
{
	if (computed) {
		print_double("p_value", fmt, p);
		print_bool("significant", NULL, p < COMPARE_ALPHA);
		print_text(p < COMPARE_ALPHA ? ": significant at the 5 %% level\n" :
					      ": not significant at the 5 %% level\n");
	} else {
		print_null("p_value", NULL);
		print_null("significant", NULL);
	}
}

/* The rank test on the histograms' finest buckets (lib/stats.h): values
 * within 1/128 of each other rank as ties, values below 128 ns exactly. */
static void latency_test(const struct side x[2])
{
	const struct stats *a = &x[0].d.all, *b = &x[1].d.all;
	struct rank_test t;
	struct rank_result r;
	const char *why = NULL;

	rank_test_init(&t);
	for (size_t row = 0; row < STATS_ROWS; row++) {
		if (!a->rows[row] && !b->rows[row])
			continue;
		for (size_t k = 0; k < STATS_SUB; k++)
			rank_test_add(&t, a->rows[row] ? a->rows[row][k] : 0,
				      b->rows[row] ? b->rows[row][k] : 0);
	}
	if (rank_test_result(&t, &r) < 0)
		why = a->n == 0 ? "A has no samples" : "B has no samples";

	print_open_object("latency_test");
	print_string("method", NULL, "mann-whitney-u");
	print_text(
	    "\nLatency:        Mann-Whitney U rank test, two-sided, normal approximation\n"
	    "                with tie and continuity corrections, on the histogram buckets\n");
	print_bool("computed", NULL, !why);
	if (why) {
		print_string("not_computed_reason", "                not computed: %s\n", why);
		print_null("u_a", NULL);
		print_null("u_b", NULL);
		print_null("a_above_b", NULL);
		print_null("z", NULL);
	} else {
		print_null("not_computed_reason", NULL);
		print_double("u_a", "                U(A) %s", r.u_a);
		print_double("u_b", ", U(B) %s", r.u_b);
		print_double("a_above_b", ", share of pairs with A above B %s", r.a_above);
		print_double("z", "\n                z %s", r.z);
	}
	print_verdict(!why, r.p, ", p %s");
	print_close_object();
}

/* The exact conditional Poisson test of the SMI counts per time scanned. */
static void smi_rate_test(const struct side x[2])
{
	const char *why = NULL;
	char buf[400];
	double p = 1;

	for (size_t i = 0; i < 2 && !why; i++) {
		if (!x[i].f.smi_known) {
			snprintf(buf, sizeof(buf), "the SMI count of %s is unavailable (%s)",
				 x[i].name, x[i].f.smi_why ? x[i].f.smi_why : "unknown");
			why = buf;
		} else if (!x[i].time_known) {
			snprintf(buf, sizeof(buf), "the time %s scanned is unknown (%s)", x[i].name,
				 x[i].time_why ? x[i].time_why : "unknown");
			why = buf;
		}
	}
	if (!why && poisson_rates_test(x[0].f.smi, (double)x[0].time_ns, x[1].f.smi,
				       (double)x[1].time_ns, &p) < 0)
		why = "no time scanned";

	print_open_object("smi_rate_test");
	print_string("method", NULL, "poisson-conditional-exact");
	print_text("SMI rate:       exact conditional Poisson test, two-sided: A's share of\n"
		   "                the SMIs against its share of the time (binomial)\n");
	print_bool("computed", NULL, !why);
	if (why)
		print_string("not_computed_reason", "                not computed: %s\n", why);
	else
		print_null("not_computed_reason", NULL);
	print_verdict(!why, p, "                p %s");
	print_close_object();
}

static void print_compare(const struct side x[2], bool sampled, const struct read_result *res)
{
	const struct report_options *o = x[0].o;

	print_u64("schema_version", NULL, REPORT_SCHEMA_VERSION);
	print_text("hwlat comparison\n");
	print_journal(res);
	print_open_object("compare");
	print_open_object("selection");
	print_string("a", "A:              %s\n", o->compare[0]);
	print_string("b", "B:              %s\n", o->compare[1]);
	print_close_object();
	print_text("\n" ROW COL COL "\n", "", "A", "B");
	row_u64("scans", "Scans:", x[0].n_scans, x[1].n_scans);
	row_u64("samples", "Samples:", x[0].d.all.n, x[1].d.all.n);
	row_scanned(x);
	row_latency("max_latency", "Max:", x, 101);
	for (size_t i = 0; i < o->n_percentiles; i++) {
		char name[24], key[48], label[32];

		format_percentile(o->percentiles[i], name, sizeof(name));
		snprintf(key, sizeof(key), "p%s_latency", name);
		for (char *c = key; *c; c++)
			if (*c == '.')
				*c = '_';
		snprintf(label, sizeof(label), "p%s:", name);
		row_latency(key, label, x, o->percentiles[i]);
	}
	row_smis(x);
	row_u64("nmi_windows", "NMI windows:", x[0].d.all.nmi_windows, x[1].d.all.nmi_windows);
	row_u64("unexplained_windows", "Unexplained:", x[0].d.all.unexplained_windows,
		x[1].d.all.unexplained_windows);
	/* Which time the rates and the rate test divide by. */
	print_string("time_basis", "\nTime basis:     %s", sampled ? "sampled" : "scanned");
	print_text(sampled ? ": per hour sampled (every scan records its time sampled)\n" :
			     ": per hour scanned (wall clock: not every scan records its\n"
			     "                time sampled)\n");
	print_double("alpha", NULL, COMPARE_ALPHA);
	latency_test(x);
	smi_rate_test(x);
	print_close_object();
}

int compare_run(struct journal_set *set, struct report_options sides[2])
{
	struct side x[2] = {
		{ .o = &sides[0], .name = "A", .terms = sides[0].compare[0] },
		{ .o = &sides[1], .name = "B", .terms = sides[1].compare[1] },
	};
	struct read_result res = { 0 };
	struct report_options walk;
	int r = 0;

	for (size_t i = 0; i < 2 && r >= 0; i++)
		r = select_side(set, &x[i]);
	if (r < 0)
		return r;
	for (size_t i = 0; i < 2; i++) {
		report_data_init(&x[i].d, x[i].o);
		x[i].d.read = &res;
	}
	walk_options(x[0].o, x[1].o, &walk);
	r = journal_read(set, &walk, &(struct journal_handlers){ sample_both, summary_both }, x,
			 &res);
	if (r == -ENOMEM)
		log_msg("out of memory");
	else if (r == -EIO)
		log_msg("no journal file could be read");
	for (size_t i = 0; i < 2 && r >= 0; i++)
		r = finish_side(&x[i]);
	if (r >= 0) {
		bool sampled = choose_time_basis(x);

		print_start(stdout, sides[0].mode == OUTPUT_JSON);
		print_compare(x, sampled, &res);
		r = print_end();
		if (r < 0)
			log_error_errno(r, "cannot write the report");
	}
	/* svg_write_compare() names the cause. */
	if (r >= 0 && sides[0].svg_path &&
	    svg_write_compare(sides[0].svg_path, &x[0].d, &x[1].d) < 0)
		r = -EIO;
	for (size_t i = 0; i < 2; i++)
		report_data_done(&x[i].d);
	read_result_done(&res);
	return r;
}
