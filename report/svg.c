// SPDX-License-Identifier: GPL-2.0-or-later
/* --svg: histogram and latency over time; see svg.h. The SVG emitter (emit.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution.h"
#include "emit.h"
#include "escape.h"
#include "log.h"
#include "print.h"
#include "svg.h"

#define W 1100
#define H 920
#define LEFT 90
#define RIGHT 120
#define PLOT_W (W - LEFT - RIGHT)
#define HIST_TOP 120
#define HIST_H 250
#define TIME_TOP (HIST_TOP + HIST_H + 100)
#define TIME_H 250

#define C_BAR "#3b7dd8"
#define C_OVER "#d62728"
#define C_THRESH "#e69500"
#define C_HARD "#d62728"
#define C_AXIS "#333333"
#define C_GRID "#dddddd"

static void xml_text(FILE *f, const char *s)
{
	escape_write(f, s, ESCAPE_XML);
}

static void text(FILE *f, double x, double y, const char *anchor, const char *style,
		 const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" %s>", x, y, anchor,
		style ? style : "");
	xml_text(f, s);
	fputs("</text>\n", f);
}

static char *lat(uint64_t ns, char *buf)
{
	return format_latency(ns, buf, 32);
}

/* The dashed lines both plots draw at the threshold and the hardlimit. */
enum { LIMIT_THRESHOLD, LIMIT_HARDLIMIT, N_LIMITS };

struct limit {
	const char *name;
	uint64_t ns; /* 0: none, not drawn */
	const char *color;
};

#define LIMIT_STROKE "stroke-width=\"2\" stroke-dasharray=\"6 4\""

/* "threshold 10.0 us" at (x, y) in the limit's colour. */
static void limit_label(FILE *f, const struct limit *l, double x, double y, const char *anchor)
{
	char style[64], label[64], l1[32];

	snprintf(style, sizeof(style), "font-size=\"11\" fill=\"%s\"", l->color);
	snprintf(label, sizeof(label), "%s %s", l->name, lat(l->ns, l1));
	text(f, x, y, anchor, style, label);
}

/* Where latency v falls on the histogram's x axis, or -1 outside it. */
static double hist_x(const struct bucket *b, int n, double bw, uint64_t v)
{
	for (int i = 0; i < n; i++) {
		double frac;

		if (v < b[i].low_ns || (b[i].high_ns != UINT64_MAX && v >= b[i].high_ns))
			continue;
		if (b[i].high_ns == UINT64_MAX)
			frac = 0;
		else if (b[i].low_ns > 0 && b[i].high_ns == 2 * b[i].low_ns)
			frac = log2((double)v / (double)b[i].low_ns);
		else
			frac = (double)(v - b[i].low_ns) / (double)(b[i].high_ns - b[i].low_ns);
		return LEFT + (i + frac) * bw;
	}
	return -1;
}

/*
 * The histogram's log-scale count axis up to @largest: grid lines with their
 * labels at powers of ten. Returns the axis top, log10(count + 1) units.
 */
static double draw_count_grid(FILE *f, uint64_t largest)
{
	double ymax = log10((double)largest + 1) * 1.1;
	char buf[24];

	for (uint64_t c = 1; (double)c <= (double)largest * 10 && log10((double)c + 1) <= ymax;
	     c *= 10) {
		double y = HIST_TOP + HIST_H - log10((double)c + 1) / ymax * HIST_H;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			LEFT, y, LEFT + PLOT_W, y, C_GRID);
		snprintf(buf, sizeof(buf), "%" PRIu64, c);
		text(f, LEFT - 6, y + 4, "end", "font-size=\"11\"", buf);
	}
	return ymax;
}

/* The document's start: the prolog, the SVG element of w x h, a white background. */
static void svg_begin(FILE *f, int w, int h)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		w, h, w, h);
}

/* A plot's frame; for a histogram of no bucket, "no samples" in it. */
static void plot_frame(FILE *f, int top, int h)
{
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n",
		LEFT, top, PLOT_W, h, C_AXIS);
}

/* A plot's y axis title, turned to read upwards left of it. */
static void y_title(FILE *f, int top, int h, const char *title)
{
	char style[96];

	snprintf(style, sizeof(style), "font-size=\"12\" transform=\"rotate(-90 20 %d)\"",
		 top + h / 2);
	text(f, 20, top + h / 2.0, "middle", style, title);
}

/* The bars of histogram bucket i at x, bw wide, on a count axis up to ymax. */
typedef void (*bars_fn)(FILE *f, int i, double x, double bw, double ymax, const void *arg);

/*
 * The histogram's count grid, each bucket's bars (drawn by bars) with its
 * lower bound below it where the label fits, the last upper bound, and the
 * axis titles. Returns the width of a bucket.
 */
static double draw_buckets(FILE *f, const struct bucket *b, int n, bars_fn bars, const void *arg,
			   const char *x_title)
{
	double bw = (double)PLOT_W / n, ymax;
	uint64_t largest = 1;
	char l1[32];

	for (int i = 0; i < n; i++)
		if (b[i].count > largest)
			largest = b[i].count;
	ymax = draw_count_grid(f, largest);
	for (int i = 0; i < n; i++) {
		double x = LEFT + i * bw;

		bars(f, i, x, bw, ymax, arg);
		/* Label every bucket edge that fits. */
		if (bw >= 40 || i % (int)ceil(40 / bw) == 0)
			text(f, x, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"",
			     lat(b[i].low_ns, l1));
	}
	if (b[n - 1].high_ns != UINT64_MAX)
		text(f, LEFT + PLOT_W, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"",
		     lat(b[n - 1].high_ns, l1));
	text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H + 36, "middle", "font-size=\"12\"", x_title);
	y_title(f, HIST_TOP, HIST_H, "samples");
	return bw;
}

/* What the report's histogram draws a bucket with: its buckets and the hardlimit. */
struct report_bars {
	const struct bucket *b;
	uint64_t hardlimit;
};

/* One bar, red where the bucket holds latencies above the hardlimit, its count on top. */
static void report_bar(FILE *f, int i, double x, double bw, double ymax, const void *arg)
{
	const struct report_bars *rb = arg;
	const struct bucket *b = &rb->b[i];
	double h = log10((double)b->count + 1) / ymax * HIST_H;
	bool over = rb->hardlimit && b->high_ns > rb->hardlimit + 1;
	char buf[32];

	if (b->count > 0)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			x + bw * 0.1, HIST_TOP + HIST_H - h, bw * 0.8, h, over ? C_OVER : C_BAR);
	if (b->count > 0 && bw >= 24) {
		snprintf(buf, sizeof(buf), "%" PRIu64, b->count);
		text(f, x + bw / 2, HIST_TOP + HIST_H - h - 4, "middle", "font-size=\"10\"", buf);
	}
}

static void draw_histogram(FILE *f, const struct report_data *d,
			   const struct limit limits[N_LIMITS], const struct bucket *b, int n)
{
	const struct report_bars rb = { b, limits[LIMIT_HARDLIMIT].ns };
	double bw;

	text(f, LEFT, HIST_TOP - 26, "start", "font-size=\"16\" font-weight=\"bold\"",
	     d->o->bucket_ns ? "Latency histogram (linear buckets, log count scale)" :
			       "Latency histogram (log2 buckets, log count scale)");
	plot_frame(f, HIST_TOP, HIST_H);
	if (n <= 0) {
		text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H / 2.0, "middle", NULL,
		     "no samples");
		return;
	}
	bw = draw_buckets(f, b, n, report_bar, &rb, "latency (bucket lower bounds)");
	/* Vertical, where the limit falls among the buckets. */
	for (int i = 0; i < N_LIMITS; i++) {
		const struct limit *l = &limits[i];
		double x = l->ns ? hist_x(b, n, bw, l->ns) : -1;

		if (x < 0)
			continue;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" " LIMIT_STROKE "/>\n",
			x, HIST_TOP, x, HIST_TOP + HIST_H, l->color);
		limit_label(f, l, x, HIST_TOP - 6, "middle");
	}
}

#define MAX_DECADE 19

/* 10^e exactly, for 0 <= e <= MAX_DECADE. */
static uint64_t power_of_ten(double e)
{
	uint64_t v = 1;

	for (int i = 0; i < (int)e && i < MAX_DECADE; i++)
		v *= 10;
	return v;
}

static double time_y(double lo, double hi, uint64_t v)
{
	double l = log10(v > 0 ? (double)v : 1);

	if (l < lo)
		l = lo;
	if (l > hi)
		l = hi;
	return TIME_TOP + TIME_H - (l - lo) / (hi - lo) * TIME_H;
}

/* The latency axis from 10^lo to 10^hi ns, the time axis from t0 to t1, their titles. */
static void timeline_axes(FILE *f, double lo, double hi, uint64_t t0, uint64_t t1, double span)
{
	char buf[128], l1[32];

	for (double e = lo; e <= hi; e++) {
		double y = TIME_TOP + TIME_H - (e - lo) / (hi - lo) * TIME_H;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			LEFT, y, LEFT + PLOT_W, y, C_GRID);
		text(f, LEFT - 6, y + 4, "end", "font-size=\"11\"", lat(power_of_ten(e), l1));
	}
	for (int i = 0; i <= 5; i++) {
		uint64_t t = t0 + (uint64_t)(span * i / 5);
		double x = LEFT + PLOT_W * i / 5.0;
		time_t sec = (time_t)(t / 1000000000ULL);
		struct tm tm;

		if (localtime_r(&sec, &tm) && strftime(buf, sizeof(buf), "%H:%M:%S", &tm))
			text(f, x, TIME_TOP + TIME_H + 16, "middle", "font-size=\"11\"", buf);
	}
	snprintf(buf, sizeof(buf), "time (from %s, span %s)",
		 format_time(t0, (char[64]){ 0 }, 64), format_duration(t1 - t0, l1, sizeof(l1)));
	text(f, LEFT + PLOT_W / 2.0, TIME_TOP + TIME_H + 36, "middle", "font-size=\"12\"", buf);
	y_title(f, TIME_TOP, TIME_H, "latency");
}

/* Each time bin's largest latency as a point, red above the hardlimit. */
static void timeline_points(FILE *f, const struct timeline *tl, double lo, double hi,
			    uint64_t t0, uint64_t t1, double span, uint64_t hardlimit)
{
	char l1[32];

	if (!tl->any)
		return;
	for (uint64_t k = tl->kmin; k <= tl->kmax; k++) {
		const struct timeline_bin *b = timeline_bin(tl, k);
		uint64_t mid = k * tl->width_ns + tl->width_ns / 2;
		double x;

		if (b->count == 0)
			continue;
		if (mid < t0)
			mid = t0;
		if (mid > t1)
			mid = t1;
		x = LEFT + (double)(mid - t0) / span * PLOT_W;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s, %" PRIu64 " samples</title></circle>\n",
			x, time_y(lo, hi, b->max_ns), hardlimit && b->max_ns > hardlimit ? C_OVER : C_BAR,
			lat(b->max_ns, l1), b->count);
	}
}

static void draw_timeline(FILE *f, const struct report_data *d,
			  const struct limit limits[N_LIMITS], uint64_t t0, uint64_t t1)
{
	uint64_t threshold = limits[LIMIT_THRESHOLD].ns, hardlimit = limits[LIMIT_HARDLIMIT].ns;
	uint64_t vmin = d->all.n ? d->all.min_ns : 1000, vmax = d->all.n ? d->all.max_ns : 1000;
	double lo, hi, span;

	text(f, LEFT, TIME_TOP - 14, "start", "font-size=\"16\" font-weight=\"bold\"",
	     "Latency over time (largest per time bin, log scale)");
	plot_frame(f, TIME_TOP, TIME_H);
	if (threshold && threshold < vmin)
		vmin = threshold;
	if (hardlimit && hardlimit > vmax)
		vmax = hardlimit;
	lo = floor(log10(vmin > 0 ? (double)vmin : 1));
	hi = ceil(log10((double)vmax + 1));
	/* 10^19 ns is the largest power of ten a uint64_t holds (10^20 would
	 * overflow the label's conversion); anything above is drawn at the top. */
	if (hi > MAX_DECADE)
		hi = MAX_DECADE;
	if (lo > MAX_DECADE - 1)
		lo = MAX_DECADE - 1;
	if (hi <= lo)
		hi = lo + 1;
	span = t1 > t0 ? (double)(t1 - t0) : 1;
	timeline_axes(f, lo, hi, t0, t1, span);

	/* Horizontal, at the limit's height, labelled right of the plot. */
	for (int i = 0; i < N_LIMITS; i++) {
		const struct limit *l = &limits[i];
		double y;

		if (!l->ns)
			continue;
		y = time_y(lo, hi, l->ns);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" " LIMIT_STROKE "/>\n",
			LEFT, y, LEFT + PLOT_W, y, l->color);
		limit_label(f, l, LEFT + PLOT_W + 6, y + 4, "start");
	}
	timeline_points(f, &d->timeline, lo, hi, t0, t1, span, hardlimit);
}

/*
 * The limits both plots draw: the lowest threshold of the chosen scans and
 * --hardlimit, else the first scan's; and the time the scans covered
 * (their summaries' too, beyond their samples). Returns how many scans.
 */
static size_t svg_scope(const struct report_data *d, struct limit limits[N_LIMITS],
			uint64_t *t0, uint64_t *t1)
{
	uint64_t threshold = 0, hardlimit = d->o->hardlimit_ns;
	size_t n_scans = 0;

	*t0 = d->first_ns;
	*t1 = d->last_ns;
	for (size_t i = 0; i < d->n_scans; i++) {
		const struct scan_record *s = &d->scans[i];
		uint64_t th = s->has_summary ? s->threshold_ns : s->sample_threshold_ns;

		if (!s->chosen)
			continue;
		n_scans++;
		if (th && (!threshold || th < threshold))
			threshold = th;
		if (!hardlimit && s->hardlimit_ns)
			hardlimit = s->hardlimit_ns;
		if (s->has_summary) {
			if (s->start_ns < *t0)
				*t0 = s->start_ns;
			if (s->start_ns + s->duration_ns > *t1 || *t1 == 0)
				*t1 = s->start_ns + s->duration_ns;
		}
	}
	if (*t0 > *t1)
		*t0 = *t1;
	limits[LIMIT_THRESHOLD] = (struct limit){ "threshold", threshold, C_THRESH };
	limits[LIMIT_HARDLIMIT] = (struct limit){ "hardlimit", hardlimit, C_HARD };
	return n_scans;
}

/* The title: scans, samples, max and p99; and the --hardlimit verdict. */
static void draw_title(FILE *f, const struct report_data *d, size_t n_scans)
{
	char buf[1024], l1[32], l2[32];

	if (d->all.n == 0) /* no max or p99 of nothing */
		snprintf(buf, sizeof(buf), "hwlat report: %zu scan%s, 0 samples", n_scans,
			 n_scans == 1 ? "" : "s");
	else
		snprintf(buf, sizeof(buf),
			 "hwlat report: %zu scan%s, %" PRIu64 " samples, max %s, p99 %s", n_scans,
			 n_scans == 1 ? "" : "s", d->all.n, lat(d->all.max_ns, l1),
			 lat(stats_percentile(&d->all, 99), l2));
	text(f, LEFT, 32, "start", "font-size=\"20\" font-weight=\"bold\"", buf);
	if (d->o->have_hardlimit) {
		bool exceeded = d->all.max_ns > d->o->hardlimit_ns;

		snprintf(buf, sizeof(buf), "%s: %s the hardlimit %s", exceeded ? "FAIL" : "PASS",
			 exceeded ? "max exceeds" : d->all.n ? "max is within" : "no sample, nothing exceeds",
			 lat(d->o->hardlimit_ns, l1));
		text(f, LEFT, 60, "start",
		     exceeded ? "font-size=\"18\" font-weight=\"bold\" fill=\"" C_OVER "\"" :
				"font-size=\"18\" font-weight=\"bold\" fill=\"#2ca02c\"", buf);
	}
}

/* One line of the notes below the plots. */
static void note(FILE *f, size_t *line, const char *style, const char *s)
{
	text(f, LEFT, TIME_TOP + TIME_H + 64 + 18 * (double)(*line)++, "start", style, s);
}

/* The attribution, worded as in the text report, then the first four scans. */
static void draw_notes(FILE *f, const struct report_data *d, size_t n_scans)
{
	char buf[1024], smi[512], cause[512];
	struct attribution a;
	size_t line = 0;

	attribution_compute(d, &a);
	snprintf(buf, sizeof(buf), "SMIs: %s; NMIs: %" PRIu64 " windows; unexplained: %" PRIu64
		 " windows (neither SMI nor NMI)", attribution_smi_text(&a, smi, sizeof(smi)),
		 d->all.nmi_windows, d->all.unexplained_windows);
	note(f, &line, "font-size=\"12\" font-weight=\"bold\"", buf);
	if (attribution_cause_text(&a, d->all.unexplained_windows, cause, sizeof(cause))) {
		snprintf(buf, sizeof(buf), "Likely cause of the unexplained windows: %s", cause);
		note(f, &line, "font-size=\"12\" font-weight=\"bold\"", buf);
	}
	for (size_t i = 0, shown = 0; i < d->n_scans && shown < 4; i++) {
		const struct scan_record *s = &d->scans[i];

		if (!s->chosen)
			continue;
		snprintf(buf, sizeof(buf), "scan %s on %s: %s%s%s%s%s", s->id,
			 s->hostname[0] ? s->hostname : "?",
			 s->has_summary ? s->status : "NO SUMMARY (crash or power loss?)",
			 s->has_summary && s->kernel[0] ? ", kernel " : "",
			 s->has_summary ? s->kernel : "",
			 s->hypervisor[0] ? ", hypervisor " : "", s->hypervisor);
		if (s->clocksource[0])
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 ", clocksource %s, TSC stable %s", s->clocksource,
				 s->tsc_stable[0] ? s->tsc_stable : "not recorded");
		note(f, &line, s->has_summary ? "font-size=\"12\"" :
						"font-size=\"12\" fill=\"" C_OVER "\"", buf);
		shown++;
		if (shown == 4 && n_scans > 4) {
			snprintf(buf, sizeof(buf), "... and %zu more scans", n_scans - 4);
			note(f, &line, "font-size=\"12\"", buf);
		}
	}
}

static int write_svg(FILE *f, const void *userdata)
{
	const struct report_data *d = userdata;
	_cleanup_free_ struct bucket *b = NULL;
	struct limit limits[N_LIMITS];
	uint64_t t0, t1;
	size_t n_scans = svg_scope(d, limits, &t0, &t1);
	int n = stats_buckets(&d->all, &b);

	if (n < 0)
		return n;
	svg_begin(f, W, H);
	draw_title(f, d, n_scans);
	draw_histogram(f, d, limits, b, n);
	draw_timeline(f, d, limits, t0, t1);
	draw_notes(f, d, n_scans);
	fputs("</svg>\n", f);
	return 0;
}

/* The two histograms of --compare, overlaid, on the buckets of both. */
struct pair {
	const struct report_data *a, *b;
};

#define C_A "#3b7dd8"
#define C_B "#e66100"

/* The count of the bucket of b that starts at low_ns (0 when none). */
static uint64_t count_at(const struct bucket *b, int n, uint64_t low_ns)
{
	for (int i = 0; i < n; i++)
		if (b[i].low_ns == low_ns)
			return b[i].count;
	return 0;
}

/* The buckets of both sides and of each; *n_both, or a negative errno. */
struct compare_bars {
	struct bucket *both, *side[2];
	int n_both, n[2];
};

static int compare_buckets(const struct pair *p, struct compare_bars *cb)
{
	struct stats merged;
	int r;

	stats_init(&merged, 0, 0);
	r = stats_merge(&merged, &p->a->all);
	if (r >= 0)
		r = stats_merge(&merged, &p->b->all);
	if (r >= 0)
		r = cb->n_both = stats_buckets(&merged, &cb->both);
	stats_done(&merged);
	if (r >= 0)
		r = cb->n[0] = stats_buckets(&p->a->all, &cb->side[0]);
	if (r >= 0)
		r = cb->n[1] = stats_buckets(&p->b->all, &cb->side[1]);
	return r;
}

/* Both sides' bars of bucket i, half transparent, A blue and B orange. */
static void compare_bar(FILE *f, int i, double x, double bw, double ymax, const void *arg)
{
	const struct compare_bars *cb = arg;
	char l1[32];

	for (int s = 0; s < 2; s++) {
		uint64_t c = count_at(cb->side[s], cb->n[s], cb->both[i].low_ns);
		double h = log10((double)c + 1) / ymax * HIST_H;

		if (c > 0)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				   "fill=\"%s\" fill-opacity=\"0.5\"><title>%s: %" PRIu64
				   " samples from %s</title></rect>\n",
				x + bw * 0.1, HIST_TOP + HIST_H - h, bw * 0.8, h, s ? C_B : C_A,
				s ? "B" : "A", c, lat(cb->both[i].low_ns, l1));
	}
}

/* Each side's selection, samples, max and p99, by its colour. */
static void compare_legend(FILE *f, const struct pair *p)
{
	const struct report_data *side[2] = { p->a, p->b };
	char buf[1200], l1[32], l2[32], style[80];

	for (int i = 0; i < 2; i++) {
		const struct stats *st = &side[i]->all;

		if (st->n)
			snprintf(buf, sizeof(buf), "%s: %s: %" PRIu64 " samples, max %s, p99 %s",
				 i ? "B" : "A", side[i]->o->compare[i], st->n, lat(st->max_ns, l1),
				 lat(stats_percentile(st, 99), l2));
		else
			snprintf(buf, sizeof(buf), "%s: %s: 0 samples", i ? "B" : "A",
				 side[i]->o->compare[i]);
		snprintf(style, sizeof(style), "font-size=\"13\" fill=\"%s\"", i ? C_B : C_A);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\" "
			   "fill-opacity=\"0.5\"/>\n", LEFT, 46 + 20 * i, i ? C_B : C_A);
		text(f, LEFT + 18, 57 + 20 * i, "start", style, buf);
	}
}

static int write_compare(FILE *f, const void *userdata)
{
	const struct pair *p = userdata;
	struct compare_bars cb = { 0 };
	int r = compare_buckets(p, &cb);

	if (r >= 0) {
		svg_begin(f, W, HIST_TOP + HIST_H + 160);
		text(f, LEFT, 32, "start", "font-size=\"20\" font-weight=\"bold\"",
		     "hwlat comparison: latency histograms of A and B overlaid");
		compare_legend(f, p);
		plot_frame(f, HIST_TOP, HIST_H);
		if (cb.n_both <= 0)
			text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H / 2.0, "middle", NULL,
			     "no samples");
		else
			draw_buckets(f, cb.both, cb.n_both, compare_bar, &cb,
				     "latency (log2 bucket lower bounds; log count scale)");
		fputs("</svg>\n", f);
		r = 0;
	}
	free(cb.both);
	free(cb.side[0]);
	free(cb.side[1]);
	return r;
}

/*
 * Writes the SVG to a temporary file and renames it to path once whole:
 * path is either complete or untouched. The user knows the path asked
 * for, not our temporary name: every message names path.
 */
static int write_file(const char *path, int (*write)(FILE *f, const void *userdata),
		      const void *userdata)
{
	char tmp[4096];
	FILE *f;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp)) {
		log_msg("--svg path too long: %s", path);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		return log_error_errno(-errno, "cannot write SVG %s", path);
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
	} else {
		r = write(f, userdata);
		if (fflush(f) != 0 && r >= 0)
			r = errno > 0 ? -errno : -EIO; /* ENOSPC says more than EIO */
		if (ferror(f) && r >= 0)
			r = -EIO;
		if (fchmod(fileno(f), 0644) < 0 && r >= 0)
			r = -errno;
		if (fclose(f) != 0 && r >= 0)
			r = -errno;
	}
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return log_error_errno(r, "cannot write SVG %s", path);
	}
	return 0;
}

int svg_write(const char *path, const struct report_data *d)
{
	return write_file(path, write_svg, d);
}

int svg_write_compare(const char *path, const struct report_data *a,
		      const struct report_data *b)
{
	return write_file(path, write_compare, &(struct pair){ a, b });
}

/* --svg FILE after the report; svg_write() names the cause of a failure. */
static void svg_prepare(struct report_data *d)
{
	(void)d;
}

static int svg_emit(struct report_data *d, struct report_verdict *v)
{
	(void)v;
	return svg_write(d->o->svg_path, d) < 0 ? -EIO : 0;
}

const struct emitter svg_emitter = { svg_prepare, svg_emit };
