// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Proves lib/gate.c, the --fail-if conditions of hwlat-scan and
 * hwlat-report: every operator at limit - 1, limit and limit + 1 (ns for
 * latencies, counts, SMIs per hour); the line each outcome prints; a fact
 * that cannot be known fails; and every malformed condition is refused
 * with a message naming it, leaving the list as it was. Prints TAP.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
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
		.sampled_known = true,
	};
	struct gate_facts g = {
		/* A figure beside sampled_known false is not used. */
		.stats = st, .smi = 1, .smi_known = true, .sampled_known = false,
		.sampled_ns = 3600 * NSEC_PER_SEC,
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
	g.sampled_ns = 0;
	g.sampled_why = "stale reason";
	expect("smi-rate > 10", &g, true,
	       "FAIL: smi-rate unknown (no time sampled to divide by), cannot tell whether > 10/h");
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
			  "smi, smi-rate, nmi, unexplained, dropped or samples)");
	refuse("p99.1234567 > 1", "condition 'p99.1234567 > 1': unknown fact 'p99.1234567' (expected "
				  "max, pN (p50, p99.9 ...), smi, smi-rate, nmi, unexplained, "
				  "dropped or samples)");
	refuse("> 5", "condition '> 5' names no fact (expected max, pN (p50, p99.9 ...), smi, "
		      "smi-rate, nmi, unexplained, dropped or samples)");
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
				       "dropped or samples)");
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
		.sampled_ns = 5400 * NSEC_PER_SEC, .sampled_known = true,
	};
	operators(&f);
	unknown(&st);
	no_window();
	parsing();
	stats_done(&st);
	printf("1..%u\n", test_n);
	return failed ? 1 : 0;
}
