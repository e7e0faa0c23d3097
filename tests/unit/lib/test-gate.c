// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proves lib/gate.c, the --fail-if conditions of hwlat-scan and
 * hwlat-report: every operator at limit - 1, limit and limit + 1 (ns for
 * latencies, counts, SMIs per hour); the line each outcome prints; a fact
 * that cannot be known fails; the rate conditions, decided on the 95 %
 * upper bound (against mpmath's values), each unit, the time sampled that
 * would pass, the edges of the count and of the time sampled, and why a
 * rate is unknown; and every malformed condition is refused with a message
 * naming it, leaving the list as it was. Prints TAP.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "macro.h"
#include "parse.h"

static unsigned test_n, failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	test_n++;
	printf("%sok %u - ", cond ? "" : "not ", test_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		failed++;
}

static void eq_str(const char *got, const char *want, const char *what)
{
	ok(strcmp(got, want) == 0, "%s: '%s'", what, want);
	if (strcmp(got, want) != 0)
		printf("#   got '%s'\n", got);
}

/* Evaluates one condition over f; returns the line it prints. */
static const char *judge(const char *cond, const struct gate_facts *f, bool *ret_failed)
{
	static char line[320];
	struct gate_list l = { .n = 0 };
	struct gate_result r;
	char why[256];

	if (gate_parse(cond, &l, why, sizeof(why)) < 0 || l.n != 1) {
		snprintf(line, sizeof(line), "PARSE ERROR: %s", why);
		*ret_failed = false;
		return line;
	}
	gate_eval(&l.g[0], f, &r);
	*ret_failed = r.failed;
	return gate_describe(&l.g[0], f, &r, line, sizeof(line));
}

static void expect(const char *cond, const struct gate_facts *f, bool want_failed,
		   const char *want_line)
{
	bool got;
	const char *line = judge(cond, f, &got);

	ok(got == want_failed && strcmp(line, want_line) == 0, "'%s' -> %s", cond, want_line);
	if (got != want_failed || strcmp(line, want_line) != 0)
		printf("#   got %s: '%s'\n", got ? "failed" : "passed", line);
}

static void operators(const struct gate_facts *f)
{
	/* max is 20000 ns: the limit at max - 1, max and max + 1. */
	expect("max > 19999ns", f, true, "FAIL: max = 20 us > 19.999 us");
	expect("max > 20us", f, false, "pass: max = 20 us, not > 20 us");
	expect("max>=20us", f, true, "FAIL: max = 20 us >= 20 us");
	expect("max >= 20001ns", f, false, "pass: max = 20 us, not >= 20.001 us");
	expect("max < 20001ns", f, true, "FAIL: max = 20 us < 20.001 us");
	expect("max < 20us", f, false, "pass: max = 20 us, not < 20 us");
	expect("max <= 20", f, true, "FAIL: max = 20 us <= 20 us");
	expect("max <= 19999ns", f, false, "pass: max = 20 us, not <= 19.999 us");
	expect("max == 20000ns", f, true, "FAIL: max = 20 us == 20 us");
	expect("max == 0.02ms", f, true, "FAIL: max = 20 us == 20 us");
	expect("max == 19999ns", f, false, "pass: max = 20 us, not == 19.999 us");
	/* Counts. */
	expect("smi > 2", f, true, "FAIL: smi = 3 > 2");
	expect("smi > 3", f, false, "pass: smi = 3, not > 3");
	expect("nmi >= 1", f, true, "FAIL: nmi = 1 >= 1");
	expect("nmi >= 2", f, false, "pass: nmi = 1, not >= 2");
	expect("unexplained == 1", f, true, "FAIL: unexplained = 1 == 1");
	expect("dropped > 6", f, true, "FAIL: dropped = 7 > 6");
	expect("dropped > 7", f, false, "pass: dropped = 7, not > 7");
	expect("samples < 4", f, true, "FAIL: samples = 3 < 4");
	expect("samples < 3", f, false, "pass: samples = 3, not < 3");
	/* 3 SMIs in 1.5 h sampled: 2 per hour. */
	expect("smi-rate > 1.999", f, true,
	       "FAIL: smi-rate = 2/h > 1.999/h (3 SMIs in 5400 s of time sampled)");
	expect("smi-rate > 2/h", f, false,
	       "pass: smi-rate = 2/h, not > 2/h (3 SMIs in 5400 s of time sampled)");
	expect("smi-rate >= 2", f, true,
	       "FAIL: smi-rate = 2/h >= 2/h (3 SMIs in 5400 s of time sampled)");
	/* Percentiles of 1000, 5000, 20000 ns: p0 = min, p50 = 5000's bucket. */
	expect("p0 == 1us", f, true, "FAIL: p0 = 1 us == 1 us");
	expect("p100 >= 20us", f, true, "FAIL: p100 = 20 us >= 20 us");
	/* 5000 ns lies in the bucket [4992, 5024): read back as its middle. */
	expect("p50 > 5.007us", f, false, "pass: p50 = 5.007 us, not > 5.007 us");
	expect("p50 > 5.006us", f, true, "FAIL: p50 = 5.007 us > 5.006 us");
	expect("p99.9 > 19.999us", f, true, "FAIL: p99.9 = 20 us > 19.999 us");
}

static void unknown(struct stats *st)
{
	struct gate_facts f = {
		.stats = st, .smi = 0, .smi_known = false, .sampled_ns = 3600 * NSEC_PER_SEC,
		.smi_sampled_ns = 3600 * NSEC_PER_SEC, .sampled_known = true,
	};
	struct gate_facts g = {
		/* A figure beside sampled_known false is not used. */
		.stats = st, .smi = 1, .smi_known = true, .sampled_known = false,
		.sampled_ns = 3600 * NSEC_PER_SEC, .smi_sampled_ns = 3600 * NSEC_PER_SEC,
		.sampled_why = "time sampled of scan x: none (tracer or old module)",
	};

	expect("smi > 0", &f, true,
	       "FAIL: smi unknown (SMI counts are unavailable), cannot tell whether > 0");
	expect("smi < 1000", &f, true,
	       "FAIL: smi unknown (SMI counts are unavailable), cannot tell whether < 1000");
	expect("unexplained > 0", &f, true,
	       "FAIL: unexplained unknown (SMI counts are unavailable), cannot tell whether > 0");
	expect("smi-rate > 10", &g, true,
	       "FAIL: smi-rate unknown (time sampled of scan x: none (tracer or old module)), "
	       "cannot tell whether > 10/h");
	expect("max > 1s", &f, false, "pass: max = 20 us, not > 1 s");
	/* Unknown SMIs make the rate unknown, however long the scan. */
	expect("smi-rate > 10", &f, true,
	       "FAIL: smi-rate unknown (SMI counts are unavailable), cannot tell whether > 10/h");
	/* No time sampled and no reason given: the generic one, never "(null)". */
	g.sampled_why = NULL;
	expect("smi-rate > 10", &g, true,
	       "FAIL: smi-rate unknown (no time sampled to divide by), cannot tell whether > 10/h");
	/* A known but zero time sampled: a reason left over does not apply. */
	g.sampled_known = true;
	g.sampled_ns = g.smi_sampled_ns = 0;
	g.sampled_why = "stale reason";
	expect("smi-rate > 10", &g, true,
	       "FAIL: smi-rate unknown (no time sampled to divide by), cannot tell whether > 10/h");
}

/*
 * Rate conditions: decided on the one-sided 95 % upper bound. The bounds
 * are mpmath's (tests/unit/lib/poisson-reference.py: 2.995732 events for
 * none, 4.743865 for 1, 6.295794 for 2, 7.753657 for 3, 1001646.42 for a
 * million), shown rounded up; the time that would pass is the bound over
 * the limit, rounded up. st holds windows of 1, 5 and 20 us (the first 3
 * SMIs, the second 1 NMI, the third unexplained), sampled 3.1 h; the SMIs
 * were counted in 1.55 h (max-per-cpu's time). same_facts: the conditions
 * over those facts as rates() starts with them.
 */
static const struct {
	const char *cond;
	bool failed;
	const char *line;
} same_facts[] = {
	/* The 20 us window is not above 20 us: none, 2.995732 / 3.1 h. */
	{ "rate(>20us) > 1/h", false,
	  "pass: rate(>20us) = 0/h, not > 1/h at 95 %: "
	  "fewer than 0.967/h (no gap above 20 us in 3.1 h sampled)" },
	{ "rate(>20us) > 0.967/h", false,
	  "pass: rate(>20us) = 0/h, not > 0.967/h at "
	  "95 %: fewer than 0.967/h (no gap above 20 us in 3.1 h sampled)" },
	{ "rate(>20us) >= 0.966/h", true,
	  "FAIL: rate(>20us) = 0/h, not shown < 0.966/h "
	  "at 95 %: fewer than 0.967/h (no gap above 20 us in 3.1 h sampled); 4.22 s more "
	  "sampled with no further event would pass" },
	{ "rate(>20us) > 0.9/h", true,
	  "FAIL: rate(>20us) = 0/h, not shown <= 0.9/h at "
	  "95 %: fewer than 0.967/h (no gap above 20 us in 3.1 h sampled); 13.8 min more "
	  "sampled with no further event would pass" },
	/* One window above 19.999 us: 4.743865 / 3.1 h. */
	{ "rate(>19.999us) >= 1.6/h", false,
	  "pass: rate(>19.999us) = 0.323/h, not >= "
	  "1.6/h at 95 %: fewer than 1.54/h (1 window above 19.999 us in 3.1 h sampled)" },
	/* Two above 4 us, per minute: 6.295794 / 186 min. */
	{ "rate(>4us) > 0.034/min", false,
	  "pass: rate(>4us) = 0.0108/min, not > "
	  "0.034/min at 95 %: fewer than 0.0339/min (2 windows above 4 us in 3.1 h sampled)" },
	/* 3 SMIs over their own 1.55 h: 7.753657 / 1.55 h is 5.0024/h. */
	{ "rate(smi) > 5/h", true,
	  "FAIL: rate(smi) = 1.94/h, not shown <= 5/h at 95 %: "
	  "fewer than 5.01/h (3 SMIs in 1.55 h sampled); 2.64 s more sampled with no further "
	  "event would pass" },
	{ "rate(smi) > 5.01/h", false,
	  "pass: rate(smi) = 1.94/h, not > 5.01/h at 95 %: "
	  "fewer than 5.01/h (3 SMIs in 1.55 h sampled)" },
	/* 1 NMI per day: 4.743865 / 3.1 h is 36.73/d; 1/d needs 113.85 h. */
	{ "rate(nmi) > 1/d", true,
	  "FAIL: rate(nmi) = 7.74/d, not shown <= 1/d at 95 %: "
	  "fewer than 36.8/d (1 NMI in 3.1 h sampled); 111 h more sampled with no further "
	  "event would pass" },
	{ "rate(unexplained) > 100/s", false,
	  "pass: rate(unexplained) = 8.96e-05/s, not "
	  "> 100/s at 95 %: fewer than 0.000426/s (1 unexplained window in 3.1 h sampled)" },
};

static void rates(struct stats *st)
{
	struct gate_facts f = {
		.stats = st, .smi = 3, .smi_known = true, .sampled_known = true,
		.sampled_ns = 11160 * NSEC_PER_SEC, .smi_sampled_ns = 5580 * NSEC_PER_SEC,
		.threshold_ns = 1000, .threshold_known = true,
	};

	for (size_t i = 0; i < ELEMENTSOF(same_facts); i++)
		expect(same_facts[i].cond, &f, same_facts[i].failed, same_facts[i].line);
	/* The size at the threshold is counted whole; below it, not. */
	f.threshold_ns = 20000;
	expect("rate(>20us) > 1/h", &f, false, "pass: rate(>20us) = 0/h, not > 1/h at 95 %: "
	       "fewer than 0.967/h (no gap above 20 us in 3.1 h sampled)");
	expect("rate(>19.999us) > 1/h", &f, true, "FAIL: rate(>19.999us) unknown (gaps above "
	       "19.999 us are not all reported: the threshold is 20 us), cannot tell whether > 1/h");
	f.threshold_known = false;
	f.threshold_why = "scan x: its threshold is not known";
	expect("rate(>1ms) > 1/h", &f, true, "FAIL: rate(>1ms) unknown (scan x: its threshold is "
	       "not known), cannot tell whether > 1/h");
	/* NMIs need no threshold, nor SMI counts. */
	expect("rate(nmi) > 100/h", &f, false, "pass: rate(nmi) = 0.323/h, not > 100/h at 95 %: "
	       "fewer than 1.54/h (1 NMI in 3.1 h sampled)");
	f.threshold_known = true;
	f.threshold_ns = 1000;
	expect("rate(>2ms) > 1/h", &f, true, "FAIL: rate(>2ms) unknown (the windows above 2 ms "
	       "were not counted), cannot tell whether > 1/h");
	f.smi_known = false;
	f.smi_why = "1 window could not count SMIs";
	expect("rate(smi) > 100/h", &f, true, "FAIL: rate(smi) unknown (1 window could not count "
	       "SMIs), cannot tell whether > 100/h");
	expect("rate(unexplained) > 100/h", &f, true, "FAIL: rate(unexplained) unknown (1 window "
	       "could not count SMIs), cannot tell whether > 100/h");
	expect("rate(nmi) > 100/h", &f, false, "pass: rate(nmi) = 0.323/h, not > 100/h at 95 %: "
	       "fewer than 1.54/h (1 NMI in 3.1 h sampled)");
	f.smi_known = true;
	f.sampled_known = false;
	f.sampled_why = "time sampled of scan x: none (tracer or old module)";
	expect("rate(>20us) > 100/h", &f, true, "FAIL: rate(>20us) unknown (time sampled of scan x: "
	       "none (tracer or old module)), cannot tell whether > 100/h");
	f.sampled_known = true;
	f.sampled_ns = 0;
	expect("rate(nmi) > 100/h", &f, true, "FAIL: rate(nmi) unknown (no time sampled to divide "
	       "by), cannot tell whether > 100/h");
	/* Whose SMIs, after the rate of SMIs. */
	f.smi_note = "SMIs counted in this guest only";
	expect("rate(smi) > 5.01/h", &f, false, "pass: rate(smi) = 1.94/h, not > 5.01/h at 95 %: "
	       "fewer than 5.01/h (3 SMIs in 1.55 h sampled); SMIs counted in this guest only");
}

/* The edges of the time sampled and of the count. */
static void rate_edges(void)
{
	struct stats none;
	struct gate_facts f = {
		.stats = &none, .smi_known = true, .sampled_known = true, .sampled_ns = 1,
		.smi_sampled_ns = 1, .threshold_ns = 1000, .threshold_known = true,
	};
	struct gate_list l = { .n = 0 };
	struct gate_result r;
	char why[256];

	stats_init(&none, 0, 0);
	expect("rate(nmi) > 1/h", &f, true, "FAIL: rate(nmi) = 0/h, not shown <= 1/h at 95 %: "
	       "fewer than 1.08e+13/h (no NMI in 1e-09 s sampled); 3 h more sampled with no "
	       "further event would pass");
	f.sampled_ns = 1000000000000000000ULL; /* 31.7 years */
	expect("rate(nmi) > 0.0000108/h", &f, false, "pass: rate(nmi) = 0/h, not > 1.08e-05/h at "
	       "95 %: fewer than 1.08e-05/h (no NMI in 277778 h sampled)");
	/* A million SMIs in 1000 h: the bound 1001.646/h, shown 1002. */
	f.smi = 1000000;
	f.smi_sampled_ns = 1000 * 3600 * NSEC_PER_SEC;
	expect("rate(smi) > 1002/h", &f, false, "pass: rate(smi) = 1000/h, not > 1002/h at 95 %: "
	       "fewer than 1002/h (1000000 SMIs in 1000 h sampled)");
	expect("rate(smi) > 1001/h", &f, true, "FAIL: rate(smi) = 1000/h, not shown <= 1001/h at "
	       "95 %: fewer than 1002/h (1000000 SMIs in 1000 h sampled); 38.8 min more sampled "
	       "with no further event would pass");
	/* What JSON gets: the figures unrounded. */
	gate_parse("rate(smi) > 1001/h", &l, why, sizeof(why));
	gate_eval(&l.g[0], &f, &r);
	/* mpmath: 1001646.4227676168 / 1001 h is 3602324797166255 ns (within the
	 * 0.5 ns a double holds there). */
	ok(r.known && r.failed && r.r.events == 1000000 && r.rate == 1000 &&
	   r.r.upper_per_hour > 1001.6464 && r.r.upper_per_hour < 1001.6465 &&
	   r.sampled_needed_ns >= 3602324797166254ULL && r.sampled_needed_ns <= 3602324797166256ULL,
	   "gate_result of a rate: events, the estimate, the bound 1001.6464/h and the time "
	   "sampled that would pass, 1000.6458 h");
	if (!(r.sampled_needed_ns >= 3602324797166254ULL && r.sampled_needed_ns <= 3602324797166256ULL))
		printf("#   got needed %llu, bound %.10g\n", (unsigned long long)r.sampled_needed_ns,
		       r.r.upper_per_hour);
	stats_done(&none);
}

/* A scan that reported no window: no latency to show, judged as 0. */
static void no_window(void)
{
	struct stats empty;
	struct gate_facts f = { .stats = &empty, .smi_known = true, .sampled_known = true,
				.sampled_ns = NSEC_PER_SEC };

	stats_init(&empty, 0, 0);
	expect("max > 1us", &f, false, "pass: max = none (no window reported), not > 1 us");
	expect("p99 >= 0", &f, true, "FAIL: p99 = none (no window reported) >= 0 ns");
	expect("samples < 1", &f, true, "FAIL: samples = 0 < 1");
	stats_done(&empty);
}

static void refuse(const char *cond, const char *want_why)
{
	struct gate_list l = { .n = 0 };
	char why[256] = "";
	int r;

	gate_parse("max > 1ms", &l, why, sizeof(why));
	r = gate_parse(cond, &l, why, sizeof(why));
	ok(r < 0 && l.n == 1 && strcmp(why, want_why) == 0, "refused '%s': %s", cond, want_why);
	if (!(r < 0 && l.n == 1 && strcmp(why, want_why) == 0))
		printf("#   got r=%d n=%zu why '%s'\n", r, l.n, why);
}

/* The rate conditions: parsed into per hour, or refused naming what was wrong. */
static void rate_parsing(void)
{
	struct gate_list l = { .n = 0 };
	char why[256];

	ok(gate_parse("rate( > 0.02ms ) >= 0.5/min, rate(smi)>2/d, rate(unexplained) > 1/s", &l,
		      why, sizeof(why)) == 0 && l.n == 3 && l.g[0].fact == GATE_RATE &&
	   l.g[0].event == RATE_GAPS_ABOVE && l.g[0].size_ns == 20000 &&
	   strcmp(l.g[0].name, "rate(>20us)") == 0 && l.g[0].op == GATE_GE &&
	   l.g[0].rate_limit == 30 && strcmp(l.g[0].unit, "/min") == 0 &&
	   l.g[1].event == RATE_SMIS && strcmp(l.g[1].name, "rate(smi)") == 0 &&
	   l.g[1].rate_limit == 2.0 / 24 && l.g[2].event == RATE_UNEXPLAINED &&
	   l.g[2].rate_limit == 3600,
	   "rate conditions: blanks inside, the size's name without them, limits per hour");
	refuse("rate(smi) > 1", "condition 'rate(smi) > 1': invalid rate '1' (expected a number and "
				"a unit, /s /min /h or /d, such as 1/h or 0.5/min)");
	refuse("rate(smi) > 1/week", "condition 'rate(smi) > 1/week': invalid rate '1/week' "
				     "(expected a number and a unit, /s /min /h or /d, such as 1/h "
				     "or 0.5/min)");
	refuse("rate(smi) > -1/h", "condition 'rate(smi) > -1/h': invalid rate '-1/h' (expected a "
				   "number and a unit, /s /min /h or /d, such as 1/h or 0.5/min)");
	refuse("rate(smi) > 1e3/h", "condition 'rate(smi) > 1e3/h': invalid rate '1e3/h' (expected "
				    "a number and a unit, /s /min /h or /d, such as 1/h or 0.5/min)");
	refuse("rate(smi) > 0/h", "condition 'rate(smi) > 0/h': a rate limit must be above 0 (no "
				  "time sampled shows a rate of 0; 'smi > 0' fails on any)");
	refuse("rate(>20us) > 0.0/h", "condition 'rate(>20us) > 0.0/h': a rate limit must be above 0 "
				      "(no time sampled shows a rate of 0; 'max > SIZE' fails on any)");
	refuse("rate(smi) < 1/h", "condition 'rate(smi) < 1/h': a rate takes > or >= (the condition "
				  "passes only when the data shows the rate below the limit, 95 %)");
	refuse("rate(nmi) == 1/h", "condition 'rate(nmi) == 1/h': a rate takes > or >= (the "
				   "condition passes only when the data shows the rate below the "
				   "limit, 95 %)");
	refuse("rate(foo) > 1/h", "condition 'rate(foo) > 1/h': unknown rate 'rate(foo)' (expected "
				  "rate(>SIZE) for windows with a gap above a size such as "
				  "rate(>20us), rate(smi), rate(nmi) or rate(unexplained))");
	refuse("rate(smi > 1/h", "condition 'rate(smi > 1/h': 'rate(smi' has no ')' (expected "
				 "rate(>SIZE) for windows with a gap above a size such as "
				 "rate(>20us), rate(smi), rate(nmi) or rate(unexplained))");
	refuse("rate(>) > 1/h", "condition 'rate(>) > 1/h': invalid size '' in rate(>) (expected a "
				"time span such as 20us or 1.5ms; a bare number is in us)");
	refuse("rate(>20 parsecs) > 1/h", "condition 'rate(>20 parsecs) > 1/h': invalid size "
					  "'20 parsecs' in rate(>20 parsecs) (expected a time span "
					  "such as 20us or 1.5ms; a bare number is in us)");
	refuse("rate(smi)", "condition 'rate(smi)' has no operator (expected FACT OP VALUE with OP "
			    "one of > >= < <= ==, e.g. 'p99 > 20us')");
}

static void parsing(void)
{
	struct gate_list l = { .n = 0 };
	char why[256];
	char buf[64];

	ok(gate_parse(" p99.99 <= 1.5ms , smi-rate==0.5/h,samples>0 ", &l, why, sizeof(why)) == 0 &&
	   l.n == 3 && l.g[0].fact == GATE_PERCENTILE && l.g[0].percentile == 99.99 &&
	   l.g[0].op == GATE_LE && l.g[0].limit == 1500000 && strcmp(l.g[0].name, "p99.99") == 0 &&
	   strcmp(l.g[0].text, "p99.99 <= 1.5ms") == 0 && l.g[1].fact == GATE_SMI_RATE &&
	   l.g[1].rate_limit == 0.5 && l.g[1].op == GATE_EQ && l.g[2].fact == GATE_SAMPLES,
	   "a list of three conditions with blanks, units and /h");
	refuse("p99 >> 20us", "condition 'p99 >> 20us': unknown operator (expected > >= < <= ==)");
	refuse("p99 = 20us", "condition 'p99 = 20us' has no operator (expected FACT OP VALUE with OP "
			     "one of > >= < <= ==, e.g. 'p99 > 20us')");
	refuse("p100.1 > 1", "condition 'p100.1 > 1': percentile 'p100.1' is above 100");
	refuse("p-1 > 1", "condition 'p-1 > 1': unknown fact 'p-1' (expected max, pN (p50, p99.9 ...), "
			  "smi, smi-rate, nmi, unexplained, dropped, samples or rate(...))");
	refuse("p99.1234567 > 1", "condition 'p99.1234567 > 1': unknown fact 'p99.1234567' (expected "
				  "max, pN (p50, p99.9 ...), smi, smi-rate, nmi, unexplained, "
				  "dropped, samples or rate(...))");
	refuse("> 5", "condition '> 5' names no fact (expected max, pN (p50, p99.9 ...), smi, "
		      "smi-rate, nmi, unexplained, dropped, samples or rate(...))");
	refuse("x", "condition 'x' has no operator (expected FACT OP VALUE with OP one of > >= < <= "
		    "==, e.g. 'p99 > 20us')");
	refuse("smi >", "condition 'smi >' has no value after '>'");
	refuse("smi > -1", "condition 'smi > -1': invalid count '-1' for smi (expected a whole number)");
	refuse("smi > 1.5", "condition 'smi > 1.5': invalid count '1.5' for smi (expected a whole "
			    "number)");
	refuse("max > 20 parsecs", "condition 'max > 20 parsecs': invalid latency '20 parsecs' "
				   "(expected a time span such as 20us or 1.5ms; a bare number is "
				   "in us)");
	refuse("smi-rate > 1/min", "condition 'smi-rate > 1/min': invalid rate '1/min' (expected "
				   "SMIs per hour such as 10 or 2.5/h)");
	refuse("max > 1ms,", "empty condition (expected FACT OP VALUE, e.g. 'p99 > 20us')");
	refuse("max > 1ms, bogus > 1", "condition 'bogus > 1': unknown fact 'bogus' (expected max, "
				       "pN (p50, p99.9 ...), smi, smi-rate, nmi, unexplained, "
				       "dropped, samples or rate(...))");
	eq_str(format_latency_exact(999, buf, sizeof(buf)), "999 ns", "exact latency below 1 us");
	eq_str(format_latency_exact(1000, buf, sizeof(buf)), "1 us", "exact latency 1 us");
	eq_str(format_latency_exact(31200, buf, sizeof(buf)), "31.2 us", "exact latency 31.2 us");
	eq_str(format_latency_exact(1500001, buf, sizeof(buf)), "1.500001 ms",
	       "exact latency keeps every ns");
	eq_str(format_latency_exact(2250000000ULL, buf, sizeof(buf)), "2.25 s", "exact latency in s");
}

int main(void)
{
	static const uint64_t lat[] = { 1000, 5000, 20000 };
	struct stats st;
	struct gate_facts f;

	stats_init(&st, 0, 0);
	/* As the tools do for the rate(>SIZE) conditions they were given. */
	stats_add_size(&st, 20000);
	stats_add_size(&st, 19999);
	stats_add_size(&st, 4000);
	for (size_t i = 0; i < 3; i++) {
		struct stats_window w = {
			.latency_ns = lat[i], .count = 1, .nmi_count = i == 1 ? 1 : 0,
			.smi_count_known = true, .smi_count = i == 0 ? 3 : 0,
			.smi_ns_known = true,
		};

		stats_add_window(&st, &w, 0);
	}
	f = (struct gate_facts){
		.stats = &st, .smi = 3, .smi_known = true, .dropped = 7,
		.sampled_ns = 5400 * NSEC_PER_SEC, .smi_sampled_ns = 5400 * NSEC_PER_SEC,
		.sampled_known = true,
	};
	operators(&f);
	unknown(&st);
	rates(&st);
	rate_edges();
	no_window();
	parsing();
	rate_parsing();
	stats_done(&st);
	printf("1..%u\n", test_n);
	return failed ? 1 : 0;
}
