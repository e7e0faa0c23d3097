// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hwlat-report: reports the hardware latency samples hwlat-scan wrote to the
 * journal. Exit status: 0 report printed, 1 --hardlimit exceeded, 2 usage
 * error, 3 no hwlat entries match the selection (or it holds no data for
 * --fail-if), 4 the journal could not be read or the output not written,
 * 6 a --fail-if condition holds.
 *
 * A run selects the entries (select.c), reads them (select.c, collect.c),
 * collects the scans and statistics (collect.c) and hands the result to
 * the emitter of its output (emit.h); main() alone turns the result into
 * an exit status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "boots.h"
#include "collect.h"
#include "compare.h"
#include "emit.h"
#include "files.h"
#include "list-scans.h"
#include "log.h"
#include "options.h"
#include "output.h"
#include "select.h"

#define EXIT_HARDLIMIT 1
#define EXIT_USAGE 2
#define EXIT_NO_MATCH 3
#define EXIT_ERROR 4
#define EXIT_FAIL_IF 6

/* How a report that was printed is judged. */
enum report_result {
	REPORT_PASSED,
	REPORT_HARDLIMIT, /* a latency above --hardlimit */
	REPORT_FAIL_IF,	  /* a --fail-if condition holds */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The local journal gave nothing: say so when files were hidden from us. */
static bool local_permission_problem(const struct journal_set *set)
{
	char example[256];
	size_t n;

	if (!set->local)
		return false;
	n = journal_unreadable_local(example, sizeof(example));
	if (n == 0)
		return false;
	log_msg("cannot read %zu journal file%s (such as %s): permission denied", n,
		n == 1 ? "" : "s", example);
	journal_permission_hint();
	return true;
}

/* Select: the entries of the selection; -ENOENT (said) when the journal has none. */
static int select_entries(struct journal_set *set, struct report_options *o)
{
	char filters[512];
	int r = journal_select(set, o);

	if (r == -EIO)
		log_msg("no journal file could be read");
	if (r != -ENOENT)
		return r;
	if (local_permission_problem(set))
		return -EIO;
	log_msg("no hwlat samples match (%s): the journal holds no hwlat-scan entries%s",
		describe_filters(o, filters, sizeof(filters)), o->have_boot ? " for this boot" : "");
	return -ENOENT;
}

/* Read: every selected entry into d, as the emitter asked. */
static int read_entries(struct journal_set *set, const struct report_options *o,
			struct report_data *d, struct read_result *res)
{
	int r = journal_read(set, o, &(struct journal_handlers){ collect_sample, collect_summary },
			     d, res);

	if (r == -ENOMEM)
		log_msg("out of memory");
	else if (d->write_error < 0)
		log_error_errno(d->write_error, "cannot write the output");
	else if (r == -EIO)
		log_msg("no journal file could be read");
	return r;
}

/* Collect: the scans to report and their groups; -ENOENT (said) for none. */
static int collect_scans(struct report_data *d)
{
	char filters[512];
	size_t n = collect_finish(d);

	if (n > 0 && collect_regroup(d) < 0) {
		log_msg("out of memory");
		return -ENOMEM;
	}
	if (n == 0) {
		log_msg("no hwlat samples match (%s)%s%s",
			describe_filters(d->o, filters, sizeof(filters)),
			d->no_match_reason ? ": " : "", d->no_match_reason ? d->no_match_reason : "");
		return -ENOENT;
	}
	return 0;
}

/* What the emitted report found: a result, or -ENOENT for nothing to judge (said). */
static int judge(const struct report_options *o, const struct report_verdict *v)
{
	char filters[512];

	if (v->exceeded)
		return REPORT_HARDLIMIT;
	if (!v->has_data) {
		log_msg("no data to judge (%s): --fail-if not evaluated",
			describe_filters(o, filters, sizeof(filters)));
		return -ENOENT;
	}
	return v->gates_failed > 0 ? REPORT_FAIL_IF : REPORT_PASSED;
}

/* One selection, reported in o's output: select, read, collect, emit. */
static int run_set(struct journal_set *set, struct report_options *o)
{
	const struct emitter *e = o->mode == OUTPUT_CSV	  ? &csv_emitter :
				  o->mode == OUTPUT_OPENMETRICS ? &openmetrics_emitter :
								    &report_emitter;
	struct report_verdict v = { .has_data = true };
	struct read_result res = { 0 };
	struct report_data d;
	int r;

	r = select_entries(set, o);
	if (r < 0)
		return r;
	report_data_init(&d, o);
	d.read = &res;
	e->prepare(&d);
	r = read_entries(set, o, &d, &res);
	if (r >= 0)
		r = collect_scans(&d);
	if (r >= 0)
		r = e->emit(&d, &v);
	if (r >= 0 && o->svg_path)
		r = svg_emitter.emit(&d, &v);
	report_data_done(&d);
	read_result_done(&res);
	return r < 0 ? r : judge(o, &v);
}

/* A report of o, or with --compare of the two sides; a result or -errno. */
static int run(struct report_options *o, struct report_options sides[2])
{
	struct journal_set set;
	int r;

	/* Opening the journal failed (said): an error, whatever the cause. */
	if (journal_set_make(o, &set) < 0)
		return -EIO;
	if (o->compare[0]) {
		r = compare_run(&set, sides);
	} else {
		/* A boot offset beyond the journal's boots matches nothing (said). */
		r = o->have_boot_offset ? boot_resolve(&set, o->boot_offset, o->boot_id) : 0;
		if (r == -ERANGE)
			r = -ENOENT;
		if (r >= 0 && o->list_scans)
			r = list_scans(&set, o);
		else if (r >= 0)
			r = run_set(&set, o);
	}
	journal_set_done(&set);
	/* The comparison and the list print no verdict. */
	if ((o->compare[0] || o->list_scans) && r >= 0)
		r = REPORT_PASSED;
	return r;
}

/* The exit status of a result: a report's, or why there is none. */
static int exit_status(int r)
{
	static const int results[] = {
		[REPORT_PASSED] = EXIT_SUCCESS,
		[REPORT_HARDLIMIT] = EXIT_HARDLIMIT,
		[REPORT_FAIL_IF] = EXIT_FAIL_IF,
	};

	if (r == -ENOENT)
		return EXIT_NO_MATCH;
	return r < 0 ? EXIT_ERROR : results[r];
}

int main(int argc, char **argv)
{
	struct report_options o = { .entries = STATS_LINEAR_DEFAULT }, sides[2];
	char *side_bufs[2] = { NULL, NULL };
	int r;

	log_set_program("hwlat-report");
	r = report_options_parse(argc, argv, now_ns(), &o, sides, side_bufs);
	if (r == -ENOMEM)
		log_msg("out of memory");
	if (r > 0)
		r = exit_status(run(&o, sides));
	else
		r = r == 0 ? EXIT_SUCCESS : r == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
	free(side_bufs[0]);
	free(side_bufs[1]);
	free(o.files);
	return r;
}
