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

#define FACTS_EXPECTED \
	"expected max, pN (p50, p99.9 ...), smi, smi-rate, nmi, unexplained, dropped or samples"

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
	char *op = NULL, *value;
	size_t len = 0, oplen = 0;
	char name[GATE_TEXT_MAX];
	int r;

	memset(g, 0, sizeof(*g));
	snprintf(g->text, sizeof(g->text), "%s", s);
	for (char *p = s; *p && !op; p++)
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
	r = parse_fact(name, g);
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

void gate_eval(const struct gate *g, const struct gate_facts *f, struct gate_result *ret)
{
	const struct stats *st = f->stats;

	memset(ret, 0, sizeof(*ret));
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
		ret->known = f->smi_known && f->sampled_known && f->sampled_ns > 0;
		if (ret->known)
			ret->rate = (double)((long double)f->smi * NSEC_PER_HOUR /
					     f->sampled_ns);
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

static char *format_value(const struct gate *g, uint64_t v, double rate, char *buf,
			  size_t size)
{
	if (gate_is_latency(g))
		return format_latency_exact(v, buf, size);
	if (g->fact == GATE_SMI_RATE)
		snprintf(buf, size, "%.6g/h", rate);
	else
		snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

static const char *unknown_why(const struct gate *g, const struct gate_facts *f)
{
	if (!f->smi_known)
		return f->smi_why && f->smi_why[0] ? f->smi_why : "SMI counts are unavailable";
	if (g->fact == GATE_SMI_RATE && !f->sampled_known && f->sampled_why)
		return f->sampled_why;
	return "no time sampled to divide by";
}

char *gate_describe(const struct gate *g, const struct gate_facts *f,
		    const struct gate_result *r, char *buf, size_t size)
{
	char value[48], limit[48], extra[320] = "";

	format_value(g, g->limit, g->rate_limit, limit, sizeof(limit));
	if (!r->known) {
		snprintf(buf, size, "FAIL: %s unknown (%s), cannot tell whether %s %s",
			 g->name, unknown_why(g, f), gate_op_name(g->op), limit);
		return buf;
	}
	format_value(g, r->value, r->rate, value, sizeof(value));
	/* No window reported: no latency to show (judged as 0). */
	if (gate_is_latency(g) && f->stats->n == 0)
		snprintf(value, sizeof(value), "none (no window reported)");
	if (g->fact == GATE_SMI_RATE) {
		char d[48];

		snprintf(extra, sizeof(extra), " (%" PRIu64 " SMIs in %s of time sampled)",
			 f->smi, format_latency_exact(f->sampled_ns, d, sizeof(d)));
	}
	if ((g->fact == GATE_SMI || g->fact == GATE_SMI_RATE) && f->smi_note)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "; %s", f->smi_note);
	if (r->failed)
		snprintf(buf, size, "FAIL: %s = %s %s %s%s", g->name, value,
			 gate_op_name(g->op), limit, extra);
	else
		snprintf(buf, size, "pass: %s = %s, not %s %s%s", g->name, value,
			 gate_op_name(g->op), limit, extra);
	return buf;
}
