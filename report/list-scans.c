// SPDX-License-Identifier: GPL-2.0-or-later
/* --list-scans; see list-scans.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "list-scans.h"
#include "log.h"
#include "output.h"
#include "print.h"
#include "select.h"

/* A scan without a summary starts at its first sample. */
static uint64_t scan_start(const struct scan_record *s)
{
	return s->has_summary ? s->start_ns : s->first_ns;
}

static int by_start(const void *a, const void *b)
{
	const struct scan_record *x = *(const struct scan_record *const *)a;
	const struct scan_record *y = *(const struct scan_record *const *)b;
	uint64_t sx = scan_start(x), sy = scan_start(y);

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return strcmp(x->id, y->id);
}

static void print_one(const struct scan_record *s)
{
	uint64_t max = s->has_summary ? s->max_ns : s->seen_max_ns;

	print_open_object(NULL);
	print_string("scan_id", "%s", s->id);
	print_string("hostname", " %-12.12s", s->hostname);
	print_string("machine_id", NULL, s->machine_id);
	print_string("boot_id", " %.8s", s->boot_id);
	if (scan_start(s) == UINT64_MAX) {
		print_null("start_ns", " %-27s");
	} else {
		char t[64];

		print_time("start_ns", NULL, scan_start(s));
		print_text(" %-27s", format_time(scan_start(s), t, sizeof(t)));
	}
	print_bool("summary", NULL, s->has_summary);
	if (s->has_summary) {
		char dur[64];

		print_duration("duration_ns", NULL, s->duration_ns);
		print_text(" %-14s", format_duration(s->duration_ns, dur, sizeof(dur)));
		print_string("status", " %-12s", s->status);
	} else {
		print_null("duration_ns", " %-14s");
		print_null("status", NULL);
		print_text(" %-12s", "no-summary");
	}
	print_u64("samples", " %9" PRIu64, s->has_summary ? s->samples : s->seen);
	if (s->has_summary && s->samples == 0)
		print_latency("max_latency_ns", " %10s", 0);
	else
		print_latency("max_latency_ns", " %10s", max);
	/* The time sampled, "-" when not recorded. */
	if (s->has_summary && s->sampled_known)
		print_duration("sampled_ns", " %10s\n", s->sampled_ns);
	else
		print_null("sampled_ns", " %10s\n");
	print_close_object();
}

int list_scans(struct journal_set *set, struct report_options *o)
{
	struct report_data d;
	struct scan_record **order = NULL;
	struct read_result res = { 0 };
	size_t n = 0;
	int r;

	o->all = true;
	r = journal_select(set, o);
	if (r == -EIO)
		log_msg("no journal file could be read");
	if (r == -ENOENT) {
		log_msg("no hwlat scans in the journal%s", o->have_boot ? " for this boot" : "");
		return r;
	}
	if (r < 0)
		return r;
	report_data_init(&d, o);
	r = journal_read(set, o, &(struct journal_handlers){ collect_sample, collect_summary },
			 &d, &res);
	if (r < 0)
		goto out;
	collect_finish(&d);
	order = calloc(d.n_scans ? d.n_scans : 1, sizeof(*order));
	if (!order) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < d.n_scans; i++)
		if (d.scans[i].chosen)
			order[n++] = &d.scans[i];
	if (n == 0) {
		char filters[512];

		log_msg("no hwlat scans match (%s)", describe_filters(o, filters, sizeof(filters)));
		r = -ENOENT;
		goto out;
	}
	qsort(order, n, sizeof(*order), by_start);

	print_start(stdout, o->mode == OUTPUT_JSON);
	print_open_array("scans");
	print_text("%-32s %-12s %-8s %-27s %-14s %-12s %9s %10s %10s\n", "SCAN ID", "HOST",
		   "BOOT", "START", "DURATION", "STATUS", "SAMPLES", "MAX", "SAMPLED");
	for (size_t i = 0; i < n; i++)
		print_one(order[i]);
	print_close_array();
	r = print_end();
	if (r < 0)
		log_error_errno(r, "cannot write the output");
out:
	if (r == -ENOMEM)
		log_msg("out of memory");
	free(order);
	report_data_done(&d);
	read_result_done(&res);
	return r;
}
