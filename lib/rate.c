// SPDX-License-Identifier: GPL-2.0-or-later
/* Rates per hour sampled with their confidence; see rate.h. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "macro.h"
#include "parse.h"
#include "poisson.h"
#include "rate.h"

#define NSEC_PER_HOUR (3600.0 * NSEC_PER_SEC)

static const struct {
	const char *key, *none, *one, *many;
} events[] = {
	/* A window is above a size when its largest gap is: it counts once. */
	[RATE_GAPS_ABOVE] = { "gaps_above", "no gap above %s", "1 window above %s",
			      "%s windows above %s" },
	[RATE_SMIS] = { "smis", "no SMI", "1 SMI", "%s SMIs" },
	[RATE_NMIS] = { "nmis", "no NMI", "1 NMI", "%s NMIs" },
	[RATE_UNEXPLAINED] = { "unexplained_windows", "no unexplained window",
			       "1 unexplained window", "%s unexplained windows" },
};

bool rate_compute(uint64_t events_seen, uint64_t sampled_ns, struct rate *r)
{
	double hours = (double)sampled_ns / NSEC_PER_HOUR;
	/* The two-sided interval puts half of what it leaves out on each side. */
	double two_sided = (1 + RATE_CONFIDENCE) / 2;

	memset(r, 0, sizeof(*r));
	r->events = events_seen;
	r->sampled_ns = sampled_ns;
	if (sampled_ns == 0)
		return false;
	r->per_hour = (double)events_seen / hours;
	r->low_per_hour = poisson_lower_bound(events_seen, two_sided) / hours;
	r->high_per_hour = poisson_upper_bound(events_seen, two_sided) / hours;
	r->upper_per_hour = poisson_upper_bound(events_seen, RATE_CONFIDENCE) / hours;
	return true;
}

uint64_t rate_sampled_needed_ns(const struct rate *r, double limit_per_hour)
{
	double bound = poisson_upper_bound(r->events, RATE_CONFIDENCE);
	double needed = ceil(bound / limit_per_hour * NSEC_PER_HOUR);

	if (needed >= 18e18)
		return UINT64_MAX;
	return (uint64_t)needed > r->sampled_ns ? (uint64_t)needed : 0;
}

const char *rate_event_key(enum rate_event e)
{
	return (size_t)e < ELEMENTSOF(events) ? events[e].key : "?";
}

char *rate_events_text(enum rate_event e, const char *above, uint64_t n, char *buf,
		       size_t size)
{
	char count[24];

	if ((size_t)e >= ELEMENTSOF(events)) {
		snprintf(buf, size, "?");
		return buf;
	}
	snprintf(count, sizeof(count), "%" PRIu64, n);
	/* The formats are the table's: the size comes after the count. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (e != RATE_GAPS_ABOVE)
		snprintf(buf, size, n == 0 ? events[e].none : n == 1 ? events[e].one : events[e].many,
			 count);
	else if (n == 0)
		snprintf(buf, size, events[e].none, above);
	else if (n == 1)
		snprintf(buf, size, events[e].one, above);
	else
		snprintf(buf, size, events[e].many, count, above);
#pragma GCC diagnostic pop
	return buf;
}

/* Whole numbers from 1000 to 10^7, 3 significant digits elsewhere. */
static bool shown_whole(double v)
{
	return v >= 1000 && v < 1e7;
}

char *format_rate(double v, enum rate_round how, char *buf, size_t size)
{
	double scale, q;

	if (v > 0 && isfinite(v) && how != ROUND_NEAREST) {
		scale = shown_whole(v) ? 1 : pow(10, floor(log10(v)) - 2);
		q = v / scale;
		/* A value already on a step (2.0 read as 200.00000000000003) stays. */
		q = how == ROUND_UP ? ceil(q - 1e-9) : floor(q + 1e-9);
		v = q * scale;
	}
	snprintf(buf, size, shown_whole(v) ? "%.0f" : "%.3g", v);
	return buf;
}

char *format_sampled(uint64_t ns, enum rate_round how, char *buf, size_t size)
{
	char num[32];

	if (ns < 60 * NSEC_PER_SEC)
		snprintf(buf, size, "%s s", format_rate((double)ns / NSEC_PER_SEC, how, num,
							sizeof(num)));
	else if (ns < 3600 * NSEC_PER_SEC)
		snprintf(buf, size, "%s min",
			 format_rate((double)ns / (60.0 * NSEC_PER_SEC), how, num, sizeof(num)));
	else
		snprintf(buf, size, "%s h",
			 format_rate((double)ns / NSEC_PER_HOUR, how, num, sizeof(num)));
	return buf;
}

/* What a figure counts above: its size, or each scan's threshold. */
static char *above_text(const struct rate_figure *f, char *buf, size_t size)
{
	if (f->above_ns)
		return format_latency_exact(f->above_ns, buf, size);
	snprintf(buf, size, "the threshold");
	return buf;
}

char *rate_sentence(const struct rate_figure *f, char *buf, size_t size)
{
	char above[48], what[96], when[32], a[32], b[32], c[32];
	const struct rate *r = &f->r;

	above_text(f, above, sizeof(above));
	if (!f->known) {
		/* The plural without a count: "SMIs", "gaps above 20 us". */
		if (f->event == RATE_GAPS_ABOVE)
			snprintf(what, sizeof(what), "gaps above %s", above);
		else
			snprintf(what, sizeof(what), "%s", f->event == RATE_SMIS ? "SMIs" :
				 f->event == RATE_NMIS ? "NMIs" : "unexplained windows");
		snprintf(buf, size, "%s: unknown (%s)", what, f->why[0] ? f->why : "not counted");
		return buf;
	}
	rate_events_text(f->event, above, r->events, what, sizeof(what));
	format_sampled(r->sampled_ns, ROUND_NEAREST, when, sizeof(when));
	if (r->events == 0)
		snprintf(buf, size, "%s in %s sampled: fewer than %s per hour, %s", what, when,
			 format_rate(r->upper_per_hour, ROUND_UP, a, sizeof(a)), RATE_CONFIDENCE_TEXT);
	else
		snprintf(buf, size, "%s in %s sampled: %s per hour (%s to %s, %s)", what, when,
			 format_rate(r->per_hour, ROUND_NEAREST, a, sizeof(a)),
			 format_rate(r->low_per_hour, ROUND_DOWN, b, sizeof(b)),
			 format_rate(r->high_per_hour, ROUND_UP, c, sizeof(c)), RATE_CONFIDENCE_TEXT);
	return buf;
}
