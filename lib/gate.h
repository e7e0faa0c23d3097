/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --fail-if conditions, shared by hwlat-scan and hwlat-report: parsing
 * "p99 > 20us", evaluating it over the facts of a scan or a selection, and
 * saying the outcome in one line ("FAIL: p99 = 31.2 us > 20 us").
 *
 * A condition is FACT OP VALUE with optional blanks between the parts:
 *   FACT   max, pN (any percentile from 0 to 100: p50, p99, p99.99),
 *          smi (SMIs taken), smi-rate (SMIs per hour sampled: counted over
 *          the time they were counted in, the widths; docs/interfaces.md 4;
 *          the estimate alone), rate(>SIZE), rate(smi), rate(nmi),
 *          rate(unexplained) (windows with a gap above SIZE, SMIs, NMIs,
 *          unexplained windows per time sampled, decided on the one-sided
 *          95 % upper bound, rate.h),
 *          nmi (NMIs taken), unexplained (reported windows with neither an
 *          SMI nor an NMI), dropped (windows lost), samples (windows
 *          reported)
 *   OP     >  >=  <  <=  ==
 *   VALUE  latencies: a time span, bare number in us ("20us", "1.5ms");
 *          smi-rate: a number, optionally followed by "/h" ("2.5/h");
 *          rate(...): a number above 0 and a unit, /s /min /h or /d
 *          ("0.5/h"), with > or >= only;
 *          the others: a whole number.
 * Several conditions can be given in one string, separated by commas.
 * Latencies are those of the reported windows (samples): with none, max
 * and percentiles are judged as 0 and shown as "none".
 * A condition that holds fails the gate; so does one whose fact cannot be
 * known (an unavailable SMI count, an unknown or zero time sampled): a
 * gate never passes on what was not measured.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rate.h"
#include "stats.h"

enum gate_fact {
	GATE_MAX,
	GATE_PERCENTILE,
	GATE_SMI,
	GATE_SMI_RATE,
	GATE_NMI,
	GATE_UNEXPLAINED,
	GATE_DROPPED,
	GATE_SAMPLES,
	GATE_RATE,
};

enum gate_op { GATE_GT, GATE_GE, GATE_LT, GATE_LE, GATE_EQ };

#define GATE_MAX_CONDITIONS 32
#define GATE_TEXT_MAX 96

struct gate {
	enum gate_fact fact;
	double percentile;         /* GATE_PERCENTILE */
	char name[24];             /* "max", "p99.9", "smi-rate" ... */
	enum gate_op op;
	uint64_t limit;            /* ns for latencies, a count otherwise */
	double rate_limit;         /* GATE_SMI_RATE, GATE_RATE: per hour */
	enum rate_event event;     /* GATE_RATE */
	uint64_t size_ns;          /* GATE_RATE of RATE_GAPS_ABOVE */
	const char *unit;          /* GATE_RATE: the limit's unit ("/h") */
	double unit_per_hour;      /* how many of that unit make an hour */
	char text[GATE_TEXT_MAX];  /* the condition as written, trimmed */
};

struct gate_list {
	struct gate g[GATE_MAX_CONDITIONS];
	size_t n;
};

/*
 * Appends the conditions of s (one, or several separated by commas) to
 * list. On error nothing is appended, why says what is wrong (naming the
 * condition) and -EINVAL or -E2BIG (too many conditions) is returned.
 */
int gate_parse(const char *s, struct gate_list *list, char *why, size_t why_size);

/* What the conditions are evaluated over. */
struct gate_facts {
	const struct stats *stats; /* latencies, samples, NMIs, unexplained */
	uint64_t smi;
	bool smi_known;
	const char *smi_why;       /* why SMIs are not known (NULL: generic) */
	uint64_t dropped;
	/* The time sampled, summed over the CPUs (rates of windows, NMIs). */
	uint64_t sampled_ns;
	bool sampled_known;        /* also of smi_sampled_ns */
	const char *sampled_why;   /* why it is not known */
	uint64_t smi_sampled_ns;   /* smi-rate, rate(smi): the time smi was counted in */
	const char *smi_note;      /* said after smi and smi-rate: whose SMIs (NULL: none) */
	/* rate(>SIZE): windows are reported above the threshold only, so a
	 * size below the largest threshold in force is not counted whole. */
	uint64_t threshold_ns;
	bool threshold_known;
	const char *threshold_why; /* why it is not known */
};

struct gate_result {
	bool known;   /* the fact could be determined */
	bool failed;  /* the condition holds, or its fact is unknown */
	uint64_t value; /* ns or count */
	double rate;    /* GATE_SMI_RATE, GATE_RATE: per hour, the estimate */
	struct rate r;  /* GATE_RATE: with its bounds */
	uint64_t sampled_needed_ns; /* GATE_RATE failed: the time sampled that
				     * would pass with no further event */
};

void gate_eval(const struct gate *g, const struct gate_facts *f, struct gate_result *ret);
/* Evaluates every condition; returns how many failed. */
size_t gate_eval_all(const struct gate_list *l, const struct gate_facts *f,
		     struct gate_result *ret);

/*
 * One line without a newline: "FAIL: p99 = 31.2 us > 20 us",
 * "pass: smi = 0, not > 0", "FAIL: smi unknown (...) > 0: cannot be
 * evaluated". Returns buf.
 */
char *gate_describe(const struct gate *g, const struct gate_facts *f,
		    const struct gate_result *r, char *buf, size_t size);

/*
 * The sizes of the rate(>SIZE) conditions, counted from now on by s
 * (stats_add_size()); 0 or -E2BIG.
 */
int gate_count_sizes(const struct gate_list *l, struct stats *s);

/* Whether the condition's value is a latency (ns). */
bool gate_is_latency(const struct gate *g);
const char *gate_op_name(enum gate_op op);

/*
 * A percentile "99.9": digits with at most one '.', from 0 to 100 and at
 * most 6 decimals. 0, -EINVAL (malformed) or -ERANGE (above 100).
 */
int parse_percentile(const char *s, double *ret);
/* "99.9", "50": the shortest form that reads back as p. Returns buf. */
char *format_percentile(double p, char *buf, size_t size);
/* A latency exactly, in the largest unit that keeps it readable:
 * "850 ns", "20 us", "20.001 us", "1.5 ms", "2.25 s". Returns buf. */
char *format_latency_exact(uint64_t ns, char *buf, size_t size);
