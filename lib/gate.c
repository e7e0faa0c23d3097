// SPDX-License-Identifier: GPL-2.0-or-later
/* --fail-if conditions; see gate.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "macro.h"
#include "parse.h"

#define NSEC_PER_HOUR (3600ULL * NSEC_PER_SEC)
#define PERCENTILE_DECIMALS 6

static const struct {
	const char *name;
	enum gate_fact fact;
} fact_names[] = {
	{ "max", GATE_MAX },
	{ "smi-rate", GATE_SMI_RATE },
	{ "smi", GATE_SMI },
	{ "nmi", GATE_NMI },
	{ "unexplained", GATE_UNEXPLAINED },
	{ "dropped", GATE_DROPPED },
	{ "samples", GATE_SAMPLES },
};

/* Longest first, so that ">=" is not read as ">". */
static const struct {
	const char *name;
	enum gate_op op;
} op_names[] = {
	{ ">=", GATE_GE }, { "<=", GATE_LE }, { "==", GATE_EQ },
	{ ">", GATE_GT },  { "<", GATE_LT },
};

#define FACTS_EXPECTED                                                                    \
	"expected max, pN (p50, p99.9 ...), smi, smi-rate, nmi, unexplained, dropped, samples " \
	"or rate(...)"
#define RATES_EXPECTED                                                                    \
	"expected rate(>SIZE) for windows with a gap above a size such as rate(>20us), "   \
	"rate(smi), rate(nmi) or rate(unexplained)"

static const struct {
	const char *name;
	enum rate_event event;
} rate_names[] = {
	{ "smi", RATE_SMIS },
	{ "nmi", RATE_NMIS },
	{ "unexplained", RATE_UNEXPLAINED },
};

/* The units of a rate limit, and how many of each make an hour. */
static const struct {
	const char *name;
	double per_hour;
} rate_units[] = {
	{ "/s", 3600 }, { "/min", 60 }, { "/h", 1 }, { "/d", 1.0 / 24 },
};

const char *gate_op_name(enum gate_op op)
{
	for (size_t i = 0; i < ELEMENTSOF(op_names); i++)
		if (op_names[i].op == op)
			return op_names[i].name;
	return "?";
}

bool gate_is_latency(const struct gate *g)
{
	return g->fact == GATE_MAX || g->fact == GATE_PERCENTILE;
}

/* Digits, at most one '.', no sign, no exponent; *ret_decimals counted. */
static int parse_decimal(const char *s, double *ret, unsigned *ret_decimals)
{
	unsigned digits = 0, decimals = 0;
	bool dot = false;
	char *end;
	double v;

	for (const char *p = s; *p; p++) {
		if (*p == '.' && !dot) {
			dot = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		digits++;
		if (dot)
			decimals++;
	}
	if (digits == 0 || (dot && decimals == 0) || s[0] == '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return -ERANGE;
	*ret = v;
	if (ret_decimals)
		*ret_decimals = decimals;
	return 0;
}

int parse_percentile(const char *s, double *ret)
{
	unsigned decimals;
	double v;
	int r;

	r = parse_decimal(s, &v, &decimals);
	if (r < 0)
		return -EINVAL;
	if (decimals > PERCENTILE_DECIMALS)
		return -EINVAL;
	if (v > 100)
		return -ERANGE;
	*ret = v;
	return 0;
}

char *format_percentile(double p, char *buf, size_t size)
{
	snprintf(buf, size, "%.*g", PERCENTILE_DECIMALS + 3, p);
	return buf;
}

char *format_latency_exact(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} units[] = {
		{ NSEC_PER_SEC, "s" }, { NSEC_PER_MSEC, "ms" }, { NSEC_PER_USEC, "us" },
	};
	char frac[16];

	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		uint64_t whole = ns / units[i].div, rest = ns % units[i].div;
		int width = i == 0 ? 9 : i == 1 ? 6 : 3;
		size_t n;

		if (whole == 0)
			continue;
		if (rest == 0) {
			snprintf(buf, size, "%" PRIu64 " %s", whole, units[i].unit);
			return buf;
		}
		snprintf(frac, sizeof(frac), "%0*" PRIu64, width, rest);
		n = strlen(frac);
		while (n > 0 && frac[n - 1] == '0')
			frac[--n] = '\0';
		snprintf(buf, size, "%" PRIu64 ".%s %s", whole, frac, units[i].unit);
		return buf;
	}
	snprintf(buf, size, "%" PRIu64 " ns", ns);
	return buf;
}

/* "rate(smi)", "rate(>20us)": what is inside the parentheses. */
static int parse_rate_fact(const char *name, struct gate *g, char *why, size_t why_size)
{
	char inner[GATE_TEXT_MAX], lat[48];
	size_t n = strlen(name);

	if (n < 6 || name[n - 1] != ')') {
		snprintf(why, why_size, "'%s' has no ')' (" RATES_EXPECTED ")", name);
		return -EINVAL;
	}
	snprintf(inner, sizeof(inner), "%.*s", (int)(n - 6), name + 5);
	strip(inner);
	g->fact = GATE_RATE;
	for (size_t i = 0; i < ELEMENTSOF(rate_names); i++)
		if (strcmp(inner, rate_names[i].name) == 0) {
			g->event = rate_names[i].event;
			snprintf(g->name, sizeof(g->name), "rate(%s)", rate_names[i].name);
			return 0;
		}
	if (inner[0] != '>') {
		snprintf(why, why_size, "unknown rate '%s' (" RATES_EXPECTED ")", name);
		return -EINVAL;
	}
	g->event = RATE_GAPS_ABOVE;
	if (parse_time_span(strip(inner + 1), NSEC_PER_USEC, &g->size_ns) < 0) {
		snprintf(why, why_size, "invalid size '%s' in %s (expected a time span such as "
			 "20us or 1.5ms; a bare number is in us)", strip(inner + 1), name);
		return -EINVAL;
	}
	snprintf(g->name, sizeof(g->name), "rate(>%s)",
		 format_latency_exact(g->size_ns, lat, sizeof(lat)));
	/* "rate(>20 us)" reads better without the blank in a condition's name. */
	for (char *src = g->name, *dst = g->name;; src++)
		if (*src != ' ' && !(*dst++ = *src))
			break;
	return 0;
}

static int parse_fact(const char *name, struct gate *g)
{
	for (size_t i = 0; i < ELEMENTSOF(fact_names); i++)
		if (strcmp(name, fact_names[i].name) == 0) {
			g->fact = fact_names[i].fact;
			snprintf(g->name, sizeof(g->name), "%s", fact_names[i].name);
			return 0;
		}
	if (name[0] == 'p') {
		char canon[16];
		int r = parse_percentile(name + 1, &g->percentile);

		if (r < 0)
			return r == -ERANGE ? -ERANGE : -EINVAL;
		g->fact = GATE_PERCENTILE;
		snprintf(g->name, sizeof(g->name), "p%s",
			 format_percentile(g->percentile, canon, sizeof(canon)));
		return 0;
	}
	return -EINVAL;
}

static int parse_limit(const char *value, struct gate *g, char *why, size_t why_size)
{
	int r;

	if (gate_is_latency(g)) {
		r = parse_time_span(value, NSEC_PER_USEC, &g->limit);
		if (r < 0)
			snprintf(why, why_size, "invalid latency '%s' (expected a time span "
				 "such as 20us or 1.5ms; a bare number is in us)", value);
		return r < 0 ? -EINVAL : 0;
	}
	if (g->fact == GATE_RATE) {
		char buf[GATE_TEXT_MAX];
		size_t n;

		snprintf(buf, sizeof(buf), "%s", value);
		for (size_t i = 0; i < ELEMENTSOF(rate_units); i++) {
			size_t u = strlen(rate_units[i].name);

			n = strlen(buf);
			if (n > u && strcmp(buf + n - u, rate_units[i].name) == 0) {
				buf[n - u] = '\0';
				g->unit = rate_units[i].name;
				g->unit_per_hour = rate_units[i].per_hour;
				break;
			}
		}
		if (!g->unit || parse_decimal(buf, &g->rate_limit, NULL) < 0) {
			snprintf(why, why_size, "invalid rate '%s' (expected a number and a unit, "
				 "/s /min /h or /d, such as 1/h or 0.5/min)", value);
			return -EINVAL;
		}
		if (g->rate_limit <= 0) {
			snprintf(why, why_size, "a rate limit must be above 0 (no time sampled "
				 "shows a rate of 0; %s fails on any)",
				 g->event == RATE_SMIS ? "'smi > 0'" : g->event == RATE_NMIS ?
				 "'nmi > 0'" : g->event == RATE_UNEXPLAINED ? "'unexplained > 0'" :
				 "'max > SIZE'");
			return -EINVAL;
		}
		g->rate_limit *= g->unit_per_hour;
		return 0;
	}
	if (g->fact == GATE_SMI_RATE) {
		char buf[GATE_TEXT_MAX];
		size_t n = strlen(value);

		snprintf(buf, sizeof(buf), "%s", value);
		if (n > 2 && strcmp(buf + n - 2, "/h") == 0)
			buf[n - 2] = '\0';
		if (parse_decimal(buf, &g->rate_limit, NULL) < 0) {
			snprintf(why, why_size, "invalid rate '%s' (expected SMIs per hour "
				 "such as 10 or 2.5/h)", value);
			return -EINVAL;
		}
		return 0;
	}
	if (parse_u64(value, &g->limit) < 0) {
		snprintf(why, why_size, "invalid count '%s' for %s (expected a whole number)",
			 value, g->name);
		return -EINVAL;
	}
	return 0;
}

/* One condition, s trimmed and at most GATE_TEXT_MAX - 1 long. */
static int parse_one(char *s, struct gate *g, char *why, size_t why_size)
{
	char *op = NULL, *value, *from = s;
	size_t len = 0, oplen = 0;
	char name[GATE_TEXT_MAX];
	int r;

	memset(g, 0, sizeof(*g));
	snprintf(g->text, sizeof(g->text), "%s", s);
	/* The operator of "rate(>20us) > 1/h" comes after the parentheses. */
	if (strncmp(s, "rate(", 5) == 0 && strchr(s, ')'))
		from = strchr(s, ')') + 1;
	for (char *p = from; *p && !op; p++)
		for (size_t i = 0; i < ELEMENTSOF(op_names); i++)
			if (strncmp(p, op_names[i].name, strlen(op_names[i].name)) == 0) {
				op = p;
				oplen = strlen(op_names[i].name);
				g->op = op_names[i].op;
				break;
			}
	if (!op) {
		snprintf(why, why_size, "condition '%s' has no operator (expected FACT OP VALUE "
			 "with OP one of > >= < <= ==, e.g. 'p99 > 20us')", s);
		return -EINVAL;
	}
	len = (size_t)(op - s);
	memcpy(name, s, len);
	name[len] = '\0';
	strip(name);
	value = strip(op + oplen);
	/* Messages quote g->text: stripping may have moved s. */
	s = g->text;
	if (name[0] == '\0') {
		snprintf(why, why_size, "condition '%s' names no fact (" FACTS_EXPECTED ")", s);
		return -EINVAL;
	}
	if (value[0] == '\0') {
		snprintf(why, why_size, "condition '%s' has no value after '%s'", s,
			 gate_op_name(g->op));
		return -EINVAL;
	}
	if (strchr("<>=!", value[0])) {
		snprintf(why, why_size, "condition '%s': unknown operator (expected > >= < <= ==)", s);
		return -EINVAL;
	}
	if (strncmp(name, "rate(", 5) == 0) {
		char detail[256];

		r = parse_rate_fact(name, g, detail, sizeof(detail));
		if (r < 0) {
			snprintf(why, why_size, "condition '%s': %s", s, detail);
			return r;
		}
		if (g->op != GATE_GT && g->op != GATE_GE) {
			snprintf(why, why_size, "condition '%s': a rate takes > or >= (the condition "
				 "passes only when the data shows the rate below the limit, %s)", s,
				 RATE_CONFIDENCE_TEXT);
			return -EINVAL;
		}
	} else {
		r = parse_fact(name, g);
	}
	if (r == -ERANGE) {
		snprintf(why, why_size, "condition '%s': percentile '%s' is above 100", s, name);
		return -EINVAL;
	}
	if (r < 0) {
		snprintf(why, why_size, "condition '%s': unknown fact '%s' (" FACTS_EXPECTED ")",
			 s, name);
		return -EINVAL;
	}
	r = parse_limit(value, g, why, why_size);
	if (r < 0) {
		char detail[256];

		snprintf(detail, sizeof(detail), "%s", why);
		snprintf(why, why_size, "condition '%s': %s", g->text, detail);
	}
	return r;
}

static int parse_list(char *rest, struct gate_list *list, char *why, size_t why_size)
{
	struct gate_list tmp = *list;
	char *part;

	do {
		part = rest;
		rest = strchr(rest, ',');
		if (rest)
			*rest++ = '\0';
		strip(part);
		if (part[0] == '\0') {
			snprintf(why, why_size, "empty condition (expected FACT OP VALUE, "
				 "e.g. 'p99 > 20us')");
			return -EINVAL;
		}
		if (strlen(part) >= GATE_TEXT_MAX) {
			snprintf(why, why_size, "condition '%.40s...' is too long", part);
			return -EINVAL;
		}
		if (tmp.n == GATE_MAX_CONDITIONS) {
			snprintf(why, why_size, "more than %d conditions", GATE_MAX_CONDITIONS);
			return -E2BIG;
		}
		if (parse_one(part, &tmp.g[tmp.n], why, why_size) < 0)
			return -EINVAL;
		tmp.n++;
	} while (rest);
	*list = tmp;
	return 0;
}

int gate_parse(const char *s, struct gate_list *list, char *why, size_t why_size)
{
	char *copy = strdup(s);
	int r;

	if (!copy) {
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	r = parse_list(copy, list, why, why_size);
	free(copy);
	return r;
}

/* Whether "v OP limit" holds, given the sign of v - limit (-1, 0 or 1). */
static bool op_holds(enum gate_op op, int sign)
{
	switch (op) {
	case GATE_GT:
		return sign > 0;
	case GATE_GE:
		return sign >= 0;
	case GATE_LT:
		return sign < 0;
	case GATE_LE:
		return sign <= 0;
	case GATE_EQ:
		return sign == 0;
	}
	return true;
}

static bool compare_u64(uint64_t v, enum gate_op op, uint64_t limit)
{
	return op_holds(op, (v > limit) - (v < limit));
}

static bool compare_double(double v, enum gate_op op, double limit)
{
	return op_holds(op, (v > limit) - (v < limit));
}

/*
 * The events and time of a rate condition, when both are known: windows
 * above a size need a size no smaller than every threshold in force
 * (smaller gaps were not reported), unexplained windows need the SMI
 * counts (else SMI windows would look unexplained), the time a number
 * above 0. SMIs are over the time they were counted in.
 */
static bool rate_facts(const struct gate *g, const struct gate_facts *f, uint64_t *events,
		       uint64_t *ns)
{
	const struct stats *st = f->stats;

	*ns = g->event == RATE_SMIS ? f->smi_sampled_ns : f->sampled_ns;
	if (!f->sampled_known || *ns == 0)
		return false;
	switch (g->event) {
	case RATE_GAPS_ABOVE:
		return f->threshold_known && g->size_ns >= f->threshold_ns &&
		       stats_windows_above(st, g->size_ns, events);
	case RATE_SMIS:
		*events = f->smi;
		return f->smi_known;
	case RATE_NMIS:
		*events = st->nmi_total;
		return true;
	case RATE_UNEXPLAINED:
		*events = st->unexplained_windows;
		return f->smi_known;
	}
	return false;
}

/* Holds unless the one-sided upper bound shows the rate within the limit. */
static void eval_rate(const struct gate *g, const struct gate_facts *f, struct gate_result *ret)
{
	uint64_t events = 0, ns = 0;

	ret->known = rate_facts(g, f, &events, &ns) && rate_compute(events, ns, &ret->r);
	if (!ret->known) {
		ret->failed = true;
		return;
	}
	ret->rate = ret->r.per_hour;
	if (g->op == GATE_GT)
		ret->failed = !(ret->r.upper_per_hour <= g->rate_limit);
	else
		ret->failed = !(ret->r.upper_per_hour < g->rate_limit);
	if (ret->failed)
		ret->sampled_needed_ns = rate_sampled_needed_ns(&ret->r, g->rate_limit);
}

int gate_count_sizes(const struct gate_list *l, struct stats *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->g[i].fact == GATE_RATE && l->g[i].event == RATE_GAPS_ABOVE) {
			int r = stats_add_size(s, l->g[i].size_ns);

			if (r < 0)
				return r;
		}
	return 0;
}

void gate_eval(const struct gate *g, const struct gate_facts *f, struct gate_result *ret)
{
	const struct stats *st = f->stats;

	memset(ret, 0, sizeof(*ret));
	if (g->fact == GATE_RATE) {
		eval_rate(g, f, ret);
		return;
	}
	ret->known = true;
	switch (g->fact) {
	case GATE_MAX:
		ret->value = st->n ? st->max_ns : 0;
		break;
	case GATE_PERCENTILE:
		ret->value = stats_percentile(st, g->percentile);
		break;
	case GATE_SMI:
		ret->known = f->smi_known;
		ret->value = f->smi;
		break;
	case GATE_SMI_RATE:
		ret->known = f->smi_known && f->sampled_known && f->smi_sampled_ns > 0;
		if (ret->known)
			ret->rate = (double)((long double)f->smi * NSEC_PER_HOUR /
					     f->smi_sampled_ns);
		break;
	case GATE_NMI:
		ret->value = st->nmi_total;
		break;
	case GATE_UNEXPLAINED:
		/* Without SMI counts, SMI windows would look unexplained. */
		ret->known = f->smi_known;
		ret->value = st->unexplained_windows;
		break;
	case GATE_DROPPED:
		ret->value = f->dropped;
		break;
	case GATE_SAMPLES:
		ret->value = st->n;
		break;
	case GATE_RATE:
		break;
	}
	if (!ret->known)
		ret->failed = true;
	else if (g->fact == GATE_SMI_RATE)
		ret->failed = compare_double(ret->rate, g->op, g->rate_limit);
	else
		ret->failed = compare_u64(ret->value, g->op, g->limit);
}

size_t gate_eval_all(const struct gate_list *l, const struct gate_facts *f,
		     struct gate_result *ret)
{
	size_t failed = 0;

	for (size_t i = 0; i < l->n; i++) {
		gate_eval(&l->g[i], f, &ret[i]);
		if (ret[i].failed)
			failed++;
	}
	return failed;
}

/* A rate condition's figure in its unit, rounded as said (rate.h). */
static char *format_value_rounded(const struct gate *g, uint64_t v, double rate,
				  enum rate_round how, char *buf, size_t size)
{
	char num[32];

	if (gate_is_latency(g))
		return format_latency_exact(v, buf, size);
	if (g->fact == GATE_SMI_RATE)
		snprintf(buf, size, "%.6g/h", rate);
	else if (g->fact == GATE_RATE)
		snprintf(buf, size, "%s%s",
			 format_rate(rate / g->unit_per_hour, how, num, sizeof(num)), g->unit);
	else
		snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

static char *format_value(const struct gate *g, uint64_t v, double rate, char *buf,
			  size_t size)
{
	return format_value_rounded(g, v, rate, ROUND_NEAREST, buf, size);
}

static const char *unknown_why(const struct gate *g, const struct gate_facts *f, char *buf,
			       size_t size)
{
	bool smis = g->fact != GATE_RATE || g->event == RATE_SMIS || g->event == RATE_UNEXPLAINED;
	char a[48], b[48];

	if (smis && !f->smi_known)
		return f->smi_why && f->smi_why[0] ? f->smi_why : "SMI counts are unavailable";
	if (g->fact == GATE_RATE && g->event == RATE_GAPS_ABOVE && f->sampled_known) {
		if (!f->threshold_known)
			return f->threshold_why ? f->threshold_why : "the threshold is not known";
		if (!stats_windows_above(f->stats, g->size_ns, &(uint64_t){ 0 })) {
			snprintf(buf, size, "the windows above %s were not counted",
				 format_latency_exact(g->size_ns, a, sizeof(a)));
			return buf;
		}
		if (g->size_ns < f->threshold_ns) {
			snprintf(buf, size, "gaps above %s are not all reported: the threshold is %s",
				 format_latency_exact(g->size_ns, a, sizeof(a)),
				 format_latency_exact(f->threshold_ns, b, sizeof(b)));
			return buf;
		}
	}
	if (!f->sampled_known && f->sampled_why)
		return f->sampled_why;
	return "no time sampled to divide by";
}

/* After a rate's outcome: its bound, its basis and, failed, how far to go. */
static void describe_rate(const struct gate *g, const struct gate_result *r, char *buf,
			  size_t size)
{
	char bound[48], above[48], what[96], when[32], more[32];
	size_t n;

	format_value_rounded(g, 0, r->r.upper_per_hour, ROUND_UP, bound, sizeof(bound));
	format_latency_exact(g->size_ns, above, sizeof(above));
	snprintf(buf, size, " at %s: fewer than %s (%s in %s sampled)", RATE_CONFIDENCE_TEXT, bound,
		 rate_events_text(g->event, above, r->r.events, what, sizeof(what)),
		 format_sampled(r->r.sampled_ns, ROUND_NEAREST, when, sizeof(when)));
	if (!r->failed)
		return;
	n = strlen(buf);
	if (r->sampled_needed_ns == UINT64_MAX)
		snprintf(buf + n, size - n, "; no time sampled within 500 years would pass");
	else
		snprintf(buf + n, size - n, "; %s more sampled with no further event would pass",
			 format_sampled(r->sampled_needed_ns - r->r.sampled_ns, ROUND_UP, more,
					sizeof(more)));
}

char *gate_describe(const struct gate *g, const struct gate_facts *f,
		    const struct gate_result *r, char *buf, size_t size)
{
	char value[48], limit[48], extra[400] = "", why[160];
	bool smi_fact = g->fact == GATE_SMI || g->fact == GATE_SMI_RATE ||
			(g->fact == GATE_RATE && g->event == RATE_SMIS);

	format_value(g, g->limit, g->rate_limit, limit, sizeof(limit));
	if (!r->known) {
		snprintf(buf, size, "FAIL: %s unknown (%s), cannot tell whether %s %s",
			 g->name, unknown_why(g, f, why, sizeof(why)), gate_op_name(g->op), limit);
		return buf;
	}
	format_value(g, r->value, r->rate, value, sizeof(value));
	/* No window reported: no latency to show (judged as 0). */
	if (gate_is_latency(g) && f->stats->n == 0)
		snprintf(value, sizeof(value), "none (no window reported)");
	if (g->fact == GATE_SMI_RATE) {
		char d[48];

		snprintf(extra, sizeof(extra), " (%" PRIu64 " SMIs in %s of time sampled)",
			 f->smi, format_latency_exact(f->smi_sampled_ns, d, sizeof(d)));
	}
	if (g->fact == GATE_RATE)
		describe_rate(g, r, extra, sizeof(extra));
	if (smi_fact && f->smi_note)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "; %s", f->smi_note);
	if (r->failed && g->fact == GATE_RATE)
		snprintf(buf, size, "FAIL: %s = %s, not shown %s %s%s", g->name, value,
			 g->op == GATE_GT ? "<=" : "<", limit, extra);
	else if (r->failed)
		snprintf(buf, size, "FAIL: %s = %s %s %s%s", g->name, value,
			 gate_op_name(g->op), limit, extra);
	else
		snprintf(buf, size, "pass: %s = %s, not %s %s%s", g->name, value,
			 gate_op_name(g->op), limit, extra);
	return buf;
}
