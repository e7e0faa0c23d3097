// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proves lib/rate.c, how a rate with its confidence reads: the rounding
 * that keeps a printed bound a bound (up for an upper end, down for a lower
 * one, never past a value already on a step), the switch to whole numbers
 * from 1000 and back to exponents at 10^7, the time sampled in s, min or h,
 * the sentence for no event, one, many and unknown, and the time sampled
 * that would bring a bound under a limit (0 when it already is, "never"
 * past 500 years). The bounds are Garwood's: ln 20 = 2.995732 events for
 * none at 95 % one-sided, ln 40 = 3.688879 two-sided (mpmath:
 * tests/unit/lib/poisson-reference.py). Prints TAP.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "rate.h"
#include "../tap.h"

#define HOUR_NS (3600 * NSEC_PER_SEC)

static void eq_str(const char *got, const char *want, const char *what)
{
	ok(strcmp(got, want) == 0, "%s: '%s'", what, want);
	if (strcmp(got, want) != 0)
		printf("#   got '%s'\n", got);
}

static const struct {
	double v;
	enum rate_round how;
	const char *want, *what;
} roundings[] = {
	{ 0.96636, ROUND_UP, "0.967", "an upper bound goes up at its 3rd digit" },
	{ 0.96636, ROUND_NEAREST, "0.966", "an estimate to the nearest" },
	{ 0.12110, ROUND_DOWN, "0.121", "a lower bound goes down" },
	{ 0.12190, ROUND_DOWN, "0.121", "a lower bound goes down, never to the nearest" },
	{ 2.0, ROUND_UP, "2", "a value on a step stays (not 2.01)" },
	{ 0.3, ROUND_DOWN, "0.3", "0.3 on a step stays (not 0.299)" },
	{ 999.2, ROUND_UP, "1000", "999.2 up: 1000, whole from there" },
	{ 2995.73, ROUND_UP, "2996", "whole numbers from 1000, up" },
	{ 2995.73, ROUND_DOWN, "2995", "whole numbers from 1000, down" },
	{ 9999999.2, ROUND_UP, "1e+07", "10^7 and above: 3 digits again" },
	{ 10784636.0, ROUND_UP, "1.08e+07", "ln 20 per 1 ms, per hour" },
	{ 0.0000123456, ROUND_UP, "1.24e-05", "small rates keep 3 digits" },
	{ 0, ROUND_UP, "0", "0 stays 0" },
};

static void rounding(void)
{
	char buf[32];

	for (size_t i = 0; i < ELEMENTSOF(roundings); i++)
		eq_str(format_rate(roundings[i].v, roundings[i].how, buf, sizeof(buf)),
		       roundings[i].want, roundings[i].what);
	eq_str(format_sampled(1, ROUND_NEAREST, buf, sizeof(buf)), "1e-09 s", "1 ns sampled");
	eq_str(format_sampled(1000000, ROUND_NEAREST, buf, sizeof(buf)), "0.001 s", "1 ms sampled");
	eq_str(format_sampled(59 * NSEC_PER_SEC, ROUND_NEAREST, buf, sizeof(buf)), "59 s",
	       "below a minute in s");
	eq_str(format_sampled(60 * NSEC_PER_SEC, ROUND_NEAREST, buf, sizeof(buf)), "1 min",
	       "a minute in min");
	eq_str(format_sampled(HOUR_NS - 1, ROUND_UP, buf, sizeof(buf)), "60 min",
	       "1 ns short of an hour, rounded up: 60 min");
	eq_str(format_sampled(11160 * NSEC_PER_SEC, ROUND_NEAREST, buf, sizeof(buf)), "3.1 h",
	       "3.1 h");
	eq_str(format_sampled(1000 * HOUR_NS, ROUND_NEAREST, buf, sizeof(buf)), "1000 h",
	       "1000 h stays in hours");
}

static void sentences(void)
{
	struct rate_figure f = { .event = RATE_GAPS_ABOVE, .above_ns = 20000 };
	char buf[320];

	ok(!rate_compute(3, 0, &f.r) && f.r.events == 3 && f.r.per_hour == 0,
	   "nothing sampled: no rate computed, the count kept");
	f.known = rate_compute(0, 11160 * NSEC_PER_SEC, &f.r);
	eq_str(rate_sentence(&f, buf, sizeof(buf)),
	       "no gap above 20 us in 3.1 h sampled: fewer than 0.967 per hour, 95 %",
	       "no event: the one-sided bound alone");
	f.above_ns = 0;
	eq_str(rate_sentence(&f, buf, sizeof(buf)),
	       "no gap above the threshold in 3.1 h sampled: fewer than 0.967 per hour, 95 %",
	       "the scans' thresholds differ: 'the threshold'");
	f.event = RATE_SMIS;
	f.known = rate_compute(1, HOUR_NS, &f.r);
	/* 1 event: 0.025318 to 5.571643 (mpmath). */
	eq_str(rate_sentence(&f, buf, sizeof(buf)),
	       "1 SMI in 1 h sampled: 1 per hour (0.0253 to 5.58, 95 %)", "one event");
	f.event = RATE_UNEXPLAINED;
	f.known = rate_compute(10, HOUR_NS / 4, &f.r);
	/* 10 events: 4.795389 to 18.390356, over 0.25 h. */
	eq_str(rate_sentence(&f, buf, sizeof(buf)),
	       "10 unexplained windows in 15 min sampled: 40 per hour (19.1 to 73.6, 95 %)",
	       "many events, the interval rounded outwards");
	f.known = false;
	snprintf(f.why, sizeof(f.why), "some windows could not count SMIs");
	eq_str(rate_sentence(&f, buf, sizeof(buf)),
	       "unexplained windows: unknown (some windows could not count SMIs)", "unknown, why");
	f.event = RATE_GAPS_ABOVE;
	f.above_ns = 1500;
	f.why[0] = '\0';
	eq_str(rate_sentence(&f, buf, sizeof(buf)), "gaps above 1.5 us: unknown (not counted)",
	       "unknown without a reason");
	eq_str(rate_event_key(RATE_NMIS), "nmis", "the JSON key of NMIs");
	eq_str(rate_events_text(RATE_GAPS_ABOVE, "20 us", 1, buf, sizeof(buf)),
	       "1 window above 20 us", "one window above a size");
}

static void needed(void)
{
	struct rate r;
	uint64_t ns;

	rate_compute(0, 11160 * NSEC_PER_SEC, &r);
	ok(rate_sampled_needed_ns(&r, 1) == 0, "bound already under the limit: nothing more needed");
	/* ln 20 h for 1/h: 2.995732273553991 h = 10784636184794.4 ns, rounded up. */
	ns = rate_sampled_needed_ns(&r, 0.5);
	ok(ns == 21569272369589ULL, "0.5/h with no event needs 2 ln 20 h, 21569272369589 ns");
	if (ns != 21569272369589ULL)
		printf("#   got %llu\n", (unsigned long long)ns);
	rate_compute(1000000, HOUR_NS, &r);
	ok(rate_sampled_needed_ns(&r, 1e-6) == UINT64_MAX,
	   "a million events under 1e-6/h: never (UINT64_MAX, said as past 500 years)");
}

int main(void)
{
	rounding();
	sentences();
	needed();
	return tap_finish();
}
