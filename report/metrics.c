// SPDX-License-Identifier: GPL-2.0-or-later
/* hwlat-report --openmetrics; see metrics.h. The OpenMetrics emitter (emit.h). */
#include <string.h>

#include "attribution.h"
#include "coverage.h"
#include "emit.h"
#include "gates.h"
#include "log.h"
#include "metrics.h"
#include "openmetrics.h"

/* When a scan began: its summary's start, else its first matched sample. */
static uint64_t scan_begin(const struct scan_record *s)
{
	return s->has_summary ? s->start_ns : s->first_ns;
}

/* The newest chosen scan, or NULL. */
static const struct scan_record *newest_scan(const struct report_data *d)
{
	const struct scan_record *newest = NULL;

	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];

		if (s->chosen && (!newest || scan_begin(s) >= scan_begin(newest)))
			newest = s;
	}
	return newest;
}

int metrics_write(const struct report_data *d, FILE *f)
{
	const struct scan_record *last = newest_scan(d);
	struct openmetrics_facts x = {
		.all = &d->all,
		.cpu = d->cpu,
		.percentiles = d->o->percentiles,
		.n_percentiles = d->o->n_percentiles,
	};
	struct attribution a;
	struct gate_facts g;
	struct gates_why gwhy;
	char why[160];
	uint64_t cpu_ns[HWLAT_MAX_CPUS];
	struct rate_figure figures[COVERAGE_RATES_MAX];
	struct coverage c;

	attribution_compute(d, &a);
	gates_facts(d, &g, &gwhy);
	x.scans = a.scans;
	x.smi_known = attribution_smi_known(&a);
	x.smi_total = a.smi_total;
	x.dropped = g.dropped;
	x.duration_known = scanned_duration(d, &x.duration_ns, why, sizeof(why));
	coverage_compute(d, NULL, -1, &c);
	if (c.known && c.ns > 0) {
		x.rates = figures;
		x.n_rates = coverage_rates(&c, &d->all, figures);
	}
	x.sampled_known = c.known && coverage_cpus(d, cpu_ns);
	x.sampled_ns = c.ns;
	x.cpu_sampled_ns = cpu_ns;
	x.skipped_known = a.scans > 0 && a.skipped_scans_known == a.scans;
	x.skipped_windows = a.skipped_windows;
	x.smi_scope = a.smi_scope;
	if (last) {
		x.have_threshold = last->has_summary || last->sample_threshold_ns > 0;
		x.threshold_ns = last->has_summary ? last->threshold_ns : last->sample_threshold_ns;
		x.have_last = last->has_summary || last->last_ns > 0;
		x.last_end_ns = last->has_summary ? last->start_ns + last->duration_ns :
						    last->last_ns;
		x.last_status = last->has_summary ? last->status : NULL;
	}
	return openmetrics_write(f, &x);
}

/* The metrics show no period: no window time is kept. */
static void metrics_prepare(struct report_data *d)
{
	(void)d;
}

static int metrics_emit(struct report_data *d, struct report_verdict *v)
{
	int r = metrics_write(d, stdout);

	(void)v;
	if (r < 0)
		log_error_errno(r, "cannot write the output");
	return r;
}

const struct emitter openmetrics_emitter = { metrics_prepare, metrics_emit };
