/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rates per hour sampled with their confidence, shared by hwlat-report's
 * figures, its OpenMetrics and the rate gates of both tools (gate.h).
 *
 * Events counted in a time sampled (the widths, HWLAT_SAMPLED_NS) are
 * taken as a Poisson count. Every rate comes with two statements, both at
 * RATE_CONFIDENCE (docs/interfaces.md section 3, "Rates"):
 * - the interval, two-sided (Garwood: each end at 97.5 %), where the rate
 *   lies;
 * - the upper bound, one-sided, what the rate is below: said alone when
 *   nothing was seen ("fewer than 0.967 per hour, 95 %", where the
 *   interval's lower end is 0 anyway), and the bound a rate gate decides
 *   on, so that a gate passes only when the data shows the rate below
 *   its limit at 95 %.
 * A rate over an unknown or zero time sampled is not computed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RATE_CONFIDENCE 0.95
/* As printed: "95 %". */
#define RATE_CONFIDENCE_TEXT "95 %"

enum rate_event {
	RATE_GAPS_ABOVE,  /* windows whose largest gap exceeds a size */
	RATE_SMIS,        /* SMIs counted */
	RATE_NMIS,        /* NMIs taken */
	RATE_UNEXPLAINED, /* windows neither an SMI nor an NMI explains */
};

struct rate {
	uint64_t events;
	uint64_t sampled_ns;
	double per_hour;                    /* the estimate */
	double low_per_hour, high_per_hour; /* the two-sided interval */
	double upper_per_hour;              /* the one-sided upper bound */
};

/* Fills r; false (r zeroed but for events and sampled_ns) when sampled_ns is 0. */
bool rate_compute(uint64_t events, uint64_t sampled_ns, struct rate *r);

/*
 * The total time sampled at which the upper bound of r's events, with no
 * further event, falls to limit_per_hour (> 0); 0 when it already has.
 */
uint64_t rate_sampled_needed_ns(const struct rate *r, double limit_per_hour);

/* The key of an event in JSON and OpenMetrics ("gaps_above", "smis", ...). */
const char *rate_event_key(enum rate_event e);

/*
 * The events counted, for a sentence: "no SMI", "1 SMI", "12 SMIs"; "no
 * gap above 20 us", "3 windows above 20 us" (above: "20 us",
 * "the threshold"; RATE_GAPS_ABOVE only). Returns buf.
 */
char *rate_events_text(enum rate_event e, const char *above, uint64_t n, char *buf,
		       size_t size);

/* One rate of a report: what was counted, and its figures when known. */
struct rate_figure {
	enum rate_event event;
	uint64_t above_ns;  /* RATE_GAPS_ABOVE: the size; 0: each scan's threshold */
	bool known;         /* the events could all be counted, over a time above 0 */
	char why[160];      /* !known: why not */
	struct rate r;
};

/*
 * The whole statement: "no gap above 20 us in 3.1 h sampled: fewer than
 * 0.967 per hour, 95 %"; "12 SMIs in 3.1 h sampled: 3.87 per hour (2 to
 * 6.77, 95 %)"; unknown: "SMIs: unknown (<why>)". Returns buf.
 */
char *rate_sentence(const struct rate_figure *f, char *buf, size_t size);

/*
 * How a figure is rounded for a human: a bound away from the estimate (an
 * upper bound up, a lower bound down), so that what is shown is still a
 * bound and never looks within a limit it is not within; the rest to the
 * nearest.
 */
enum rate_round { ROUND_NEAREST, ROUND_UP, ROUND_DOWN };

/* A rate or bound for a human: 3 significant digits, whole from 1000 to
 * 10^7, rounded as said. Returns buf. */
char *format_rate(double v, enum rate_round how, char *buf, size_t size);
/* A time sampled for a sentence: "45 s", "12.5 min", "3.1 h". Returns buf. */
char *format_sampled(uint64_t ns, enum rate_round how, char *buf, size_t size);
