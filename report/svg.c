// SPDX-License-Identifier: GPL-2.0-or-later
/* --svg: histogram and latency over time; see svg.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution.h"
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

static void draw_histogram(FILE *f, const struct report_data *d,
			   const struct limit limits[N_LIMITS], const struct bucket *b, int n)
{
	uint64_t hardlimit = limits[LIMIT_HARDLIMIT].ns, largest = 1;
	double bw, ymax;
	char l1[32], l2[32], buf[128];

	text(f, LEFT, HIST_TOP - 26, "start", "font-size=\"16\" font-weight=\"bold\"",
	     d->o->bucket_ns ? "Latency histogram (linear buckets, log count scale)" :
			       "Latency histogram (log2 buckets, log count scale)");
	fprintf(
	    f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n",
	    LEFT, HIST_TOP, PLOT_W, HIST_H, C_AXIS);
	if (n <= 0) {
		text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H / 2.0, "middle", NULL,
		     "no samples");
		return;
	}
	for (int i = 0; i < n; i++)
		if (b[i].count > largest)
			largest = b[i].count;
	ymax = draw_count_grid(f, largest);
	bw = (double)PLOT_W / n;
	for (int i = 0; i < n; i++) {
		double h = log10((double)b[i].count + 1) / ymax * HIST_H;
		double x = LEFT + i * bw;
		bool over = hardlimit && b[i].high_ns > hardlimit + 1;

		if (b[i].count > 0)
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>\n",
				x + bw * 0.1, HIST_TOP + HIST_H - h, bw * 0.8, h,
				over ? C_OVER : C_BAR);
		if (b[i].count > 0 && bw >= 24) {
			snprintf(buf, sizeof(buf), "%" PRIu64, b[i].count);
			text(f, x + bw / 2, HIST_TOP + HIST_H - h - 4, "middle", "font-size=\"10\"",
			     buf);
		}
		/* Label every bucket edge that fits. */
		if (bw >= 40 || i % (int)ceil(40 / bw) == 0) {
			lat(b[i].low_ns, l1);
			text(f, x, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"", l1);
		}
	}
	if (b[n - 1].high_ns != UINT64_MAX)
		text(f, LEFT + PLOT_W, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"",
		     lat(b[n - 1].high_ns, l2));
	text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H + 36, "middle", "font-size=\"12\"",
	     "latency (bucket lower bounds)");
	snprintf(buf, sizeof(buf), "font-size=\"12\" transform=\"rotate(-90 20 %d)\"",
		 HIST_TOP + HIST_H / 2);
	text(f, 20, HIST_TOP + HIST_H / 2.0, "middle", buf, "samples");

	/* Vertical, where the limit falls among the buckets. */
	for (int i = 0; i < N_LIMITS; i++) {
		const struct limit *l = &limits[i];
		double x = l->ns ? hist_x(b, n, bw, l->ns) : -1;

		if (x < 0)
			continue;
		fprintf(
		    f,
		    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" " LIMIT_STROKE
		    "/>\n",
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

static void draw_timeline(FILE *f, const struct report_data *d,
			  const struct limit limits[N_LIMITS], uint64_t t0, uint64_t t1)
{
	uint64_t threshold = limits[LIMIT_THRESHOLD].ns, hardlimit = limits[LIMIT_HARDLIMIT].ns;
	const struct timeline *tl = &d->timeline;
	uint64_t vmin = d->all.n ? d->all.min_ns : 1000, vmax = d->all.n ? d->all.max_ns : 1000;
	double lo, hi, span;
	char buf[128], l1[32];

	text(f, LEFT, TIME_TOP - 14, "start", "font-size=\"16\" font-weight=\"bold\"",
	     "Latency over time (largest per time bin, log scale)");
	fprintf(
	    f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n",
	    LEFT, TIME_TOP, PLOT_W, TIME_H, C_AXIS);
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
	snprintf(buf, sizeof(buf), "font-size=\"12\" transform=\"rotate(-90 20 %d)\"",
		 TIME_TOP + TIME_H / 2);
	text(f, 20, TIME_TOP + TIME_H / 2.0, "middle", buf, "latency");

	/* Horizontal, at the limit's height, labelled right of the plot. */
	for (int i = 0; i < N_LIMITS; i++) {
		const struct limit *l = &limits[i];
		double y;

		if (!l->ns)
			continue;
		y = time_y(lo, hi, l->ns);
		fprintf(
		    f,
		    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" " LIMIT_STROKE
		    "/>\n",
		    LEFT, y, LEFT + PLOT_W, y, l->color);
		limit_label(f, l, LEFT + PLOT_W + 6, y + 4, "start");
	}
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
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s, %" PRIu64
			" samples</title></circle>\n",
			x, time_y(lo, hi, b->max_ns),
			hardlimit && b->max_ns > hardlimit ? C_OVER : C_BAR, lat(b->max_ns, l1),
			b->count);
	}
}

static int write_svg(FILE *f, const struct report_data *d)
{
	_cleanup_free_ struct bucket *b = NULL;
	uint64_t threshold = 0, hardlimit = d->o->hardlimit_ns;
	uint64_t t0 = d->first_ns, t1 = d->last_ns;
	struct limit limits[N_LIMITS];
	size_t n_scans = 0, line = 0;
	char buf[1024], l1[32], l2[32], smi[512], cause[512];
	struct attribution a;
	int n;

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
			if (s->start_ns < t0)
				t0 = s->start_ns;
			if (s->start_ns + s->duration_ns > t1 || t1 == 0)
				t1 = s->start_ns + s->duration_ns;
		}
	}
	if (t0 > t1)
		t0 = t1;
	limits[LIMIT_THRESHOLD] = (struct limit){ "threshold", threshold, C_THRESH };
	limits[LIMIT_HARDLIMIT] = (struct limit){ "hardlimit", hardlimit, C_HARD };

	n = stats_buckets(&d->all, &b);
	if (n < 0)
		return n;

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 "
		"0 %d %d\" "
		"font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, H, W, H);
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
			 exceeded   ? "max exceeds"
			 : d->all.n ? "max is within"
				    : "no sample, nothing exceeds",
			 lat(d->o->hardlimit_ns, l1));
		text(f, LEFT, 60, "start",
		     exceeded ? "font-size=\"18\" font-weight=\"bold\" fill=\"" C_OVER "\"" :
				"font-size=\"18\" font-weight=\"bold\" fill=\"#2ca02c\"", buf);
	}
	draw_histogram(f, d, limits, b, n);
	draw_timeline(f, d, limits, t0, t1);

	/* The attribution, worded as in the text report. */
	attribution_compute(d, &a);
	snprintf(buf, sizeof(buf), "SMIs: %s; NMIs: %" PRIu64 " windows; unexplained: %" PRIu64
		 " windows (neither SMI nor NMI)", attribution_smi_text(&a, smi, sizeof(smi)),
		 d->all.nmi_windows, d->all.unexplained_windows);
	text(f, LEFT, TIME_TOP + TIME_H + 64 + 18 * (double)line++, "start",
	     "font-size=\"12\" font-weight=\"bold\"", buf);
	if (attribution_cause_text(&a, d->all.unexplained_windows, cause, sizeof(cause))) {
		snprintf(buf, sizeof(buf), "Likely cause of the unexplained windows: %s", cause);
		text(f, LEFT, TIME_TOP + TIME_H + 64 + 18 * (double)line++, "start",
		     "font-size=\"12\" font-weight=\"bold\"", buf);
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
		text(f, LEFT, TIME_TOP + TIME_H + 64 + 18 * (double)line++, "start",
		     s->has_summary ? "font-size=\"12\"" :
				      "font-size=\"12\" fill=\"" C_OVER "\"", buf);
		shown++;
		if (shown == 4 && n_scans > 4) {
			snprintf(buf, sizeof(buf), "... and %zu more scans", n_scans - 4);
			text(f, LEFT, TIME_TOP + TIME_H + 64 + 18 * (double)line, "start",
			     "font-size=\"12\"", buf);
		}
	}
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

static int write_compare(FILE *f, const void *userdata)
{
	const struct pair *p = userdata;
	_cleanup_free_ struct bucket *ba = NULL;
	_cleanup_free_ struct bucket *bb = NULL;
	_cleanup_free_ struct bucket *both = NULL;
	const struct report_data *side[2] = { p->a, p->b };
	const struct bucket *mine[2];
	int n[2], nb, r;
	uint64_t largest = 1;
	double bw, ymax;
	char buf[1200], l1[32], l2[32];
	struct stats merged;

	stats_init(&merged, 0, 0);
	r = stats_merge(&merged, &p->a->all);
	if (r >= 0)
		r = stats_merge(&merged, &p->b->all);
	if (r >= 0)
		r = nb = stats_buckets(&merged, &both);
	stats_done(&merged);
	if (r < 0)
		return r;
	n[0] = stats_buckets(&p->a->all, &ba);
	if (n[0] < 0)
		return n[0];
	n[1] = stats_buckets(&p->b->all, &bb);
	if (n[1] < 0)
		return n[1];
	mine[0] = ba;
	mine[1] = bb;

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 "
		"0 %d %d\" "
		"font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, HIST_TOP + HIST_H + 160, W, HIST_TOP + HIST_H + 160);
	text(f, LEFT, 32, "start", "font-size=\"20\" font-weight=\"bold\"",
	     "hwlat comparison: latency histograms of A and B overlaid");
	for (int i = 0; i < 2; i++) {
		const struct stats *st = &side[i]->all;
		char style[80];

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
	fprintf(
	    f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n",
	    LEFT, HIST_TOP, PLOT_W, HIST_H, C_AXIS);
	if (nb <= 0) {
		text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H / 2.0, "middle", NULL, "no samples");
		fputs("</svg>\n", f);
		return 0;
	}
	for (int i = 0; i < nb; i++)
		if (both[i].count > largest)
			largest = both[i].count;
	ymax = draw_count_grid(f, largest);
	bw = (double)PLOT_W / nb;
	for (int i = 0; i < nb; i++) {
		double x = LEFT + i * bw;

		for (int s = 0; s < 2; s++) {
			uint64_t c = count_at(mine[s], n[s], both[i].low_ns);
			double h = log10((double)c + 1) / ymax * HIST_H;

			if (c > 0)
				fprintf(
				    f,
				    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				    "fill=\"%s\" fill-opacity=\"0.5\"><title>%s: %" PRIu64
				    " samples from %s</title></rect>\n",
				    x + bw * 0.1, HIST_TOP + HIST_H - h, bw * 0.8, h, s ? C_B : C_A,
				    s ? "B" : "A", c, lat(both[i].low_ns, l1));
		}
		if (bw >= 40 || i % (int)ceil(40 / bw) == 0)
			text(f, x, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"",
			     lat(both[i].low_ns, l1));
	}
	if (both[nb - 1].high_ns != UINT64_MAX)
		text(f, LEFT + PLOT_W, HIST_TOP + HIST_H + 16, "middle", "font-size=\"10\"",
		     lat(both[nb - 1].high_ns, l2));
	text(f, LEFT + PLOT_W / 2.0, HIST_TOP + HIST_H + 36, "middle", "font-size=\"12\"",
	     "latency (log2 bucket lower bounds; log count scale)");
	snprintf(buf, sizeof(buf), "font-size=\"12\" transform=\"rotate(-90 20 %d)\"",
		 HIST_TOP + HIST_H / 2);
	text(f, 20, HIST_TOP + HIST_H / 2.0, "middle", buf, "samples");
	fputs("</svg>\n", f);
	return 0;
}

static int write_report(FILE *f, const void *userdata)
{
	return write_svg(f, userdata);
}

static int write_file(const char *path, int (*write)(FILE *f, const void *userdata),
		      const void *userdata)
{
	char tmp[4096];
	FILE *f;
	int r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp)) {
		log_msg("--svg path too long: %s", path);
		return -ENAMETOOLONG;
	}
	{
		int fd = mkstemp(tmp);

		/* The user knows the path asked for, not our temporary name. */
		if (fd < 0) {
			r = -errno;
			log_error_errno(r, "cannot write SVG %s", path);
			return r;
		}
		f = fdopen(fd, "w");
		if (!f) {
			r = -errno;
			close(fd);
			unlink(tmp);
			log_error_errno(r, "cannot write SVG %s", path);
			return r;
		}
	}
	r = write(f, userdata);
	if (fflush(f) != 0 && r >= 0)
		r = errno > 0 ? -errno : -EIO; /* ENOSPC says more than EIO */
	if (ferror(f) && r >= 0)
		r = -EIO;
	if (fchmod(fileno(f), 0644) < 0 && r >= 0)
		r = -errno;
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		log_error_errno(r, "cannot write SVG %s", path);
		return r;
	}
	return 0;
}

int svg_write(const char *path, const struct report_data *d)
{
	return write_file(path, write_report, d);
}

int svg_write_compare(const char *path, const struct report_data *a,
		      const struct report_data *b)
{
	return write_file(path, write_compare, &(struct pair){ a, b });
}
