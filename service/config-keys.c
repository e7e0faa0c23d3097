/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of hwlat-scan's configuration as one table: each key's name, how
 * its value is read and checked, where it goes, and what holds while it is
 * not set. config_set(), the "known keys" message and --check-config
 * (config_print) all walk it; the tests take the key list from
 * --check-config to check that the man page, the config file and the bash
 * completion name every key.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hwlat_abi.h"
#include "log.h"
#include "macro.h"
#include "scan-config.h"

/* A time span: the unit of a bare number, what it must look like, its range. */
typedef struct span_rule {
	uint64_t unit_ns;
	const char *expected; /* a value that is no time span */
	const char *too_large; /* a span beyond 2^64 ns; NULL: say expected */
	uint64_t min_ns;       /* 1: any span "greater than 0" */
	uint64_t max_ns;       /* 0: no upper bound */
	bool detector;         /* a detector setting: whole us, below 2^32 us */
} span_rule;

typedef struct config_key_def config_key_def;

/* Reads value into the key's place in c; 0, or the message's errno (logged). */
typedef int (*config_parser)(const config_key_def *k, scan_config *c, const char *value,
			     const char *origin);
/* The key's value in c as the config file spells it; returns buf or a string of c. */
typedef const char *(*config_formatter)(const config_key_def *k, const scan_config *c,
					char *buf, size_t size);

struct config_key_def {
	const char *name;
	config_parser parse;
	config_formatter format;
	const span_rule *span;	   /* time spans */
	const char *const *names;  /* a name from a list: the names, NULL-terminated */
	size_t offset;		   /* where the value goes in scan_config */
	size_t size;		   /* its size, for strings */
	const char *unset;	   /* one-line help: what holds while it is not set */
};

#define FIELD(f) .offset = offsetof(scan_config, f), .size = sizeof(((scan_config *)0)->f)

static void *dest(const config_key_def *k, scan_config *c)
{
	return (char *)c + k->offset;
}

static const void *src(const config_key_def *k, const scan_config *c)
{
	return (const char *)c + k->offset;
}

static int bad_value(const config_key_def *k, const char *origin, const char *value, int r,
		     const char *why)
{
	log_msg("%s: invalid value '%s' for '%s': %s", origin, value, k->name, why);
	return r;
}

static int parse_span(const config_key_def *k, scan_config *c, const char *value,
		      const char *origin)
{
	const span_rule *s = k->span;
	char why[96], max[32];
	uint64_t ns;
	int r;

	r = parse_time_span(value, s->unit_ns, &ns);
	if (r == -ERANGE && s->too_large)
		return bad_value(k, origin, value, r, s->too_large);
	if (r < 0)
		return bad_value(k, origin, value, r, s->expected);
	if (ns < s->min_ns && s->min_ns == 1)
		return bad_value(k, origin, value, -ERANGE, "must be greater than 0");
	if (ns < s->min_ns) {
		snprintf(why, sizeof(why), "must be at least %s",
			 format_span_exact(s->min_ns, max, sizeof(max)));
		return bad_value(k, origin, value, -ERANGE, why);
	}
	if (s->detector && ns % NSEC_PER_USEC)
		return bad_value(k, origin, value, -EINVAL,
				 "the detector works in whole microseconds");
	if (s->detector && ns / NSEC_PER_USEC > UINT32_MAX)
		return bad_value(k, origin, value, -ERANGE, s->too_large);
	if (s->max_ns && ns > s->max_ns) {
		format_span_exact(s->max_ns, max, sizeof(max));
		if (s->detector)
			snprintf(why, sizeof(why), "the detector allows at most %s (%llu us)", max,
				 (unsigned long long)(s->max_ns / NSEC_PER_USEC));
		else
			snprintf(why, sizeof(why), "must be at most %s", max);
		return bad_value(k, origin, value, -ERANGE, why);
	}
	*(uint64_t *)dest(k, c) = ns;
	return 0;
}

static const char *format_span(const config_key_def *k, const scan_config *c, char *buf,
			       size_t size)
{
	return format_span_exact(*(const uint64_t *)src(k, c), buf, size);
}

/* "expected a, b or c" from a NULL-terminated list (size: room for all). */
static const char *expected_names(const char *const *names, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "expected");

	for (size_t i = 0; names[i]; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i == 0 ? " " : names[i + 1] ? ", " : " or ", names[i]);
	return buf;
}

/* The index of value in the key's names; -EINVAL (logged) when it is none. */
static int find_name(const config_key_def *k, const char *value, const char *origin)
{
	char why[128];

	for (int i = 0; k->names[i]; i++)
		if (strcmp(value, k->names[i]) == 0)
			return i;
	return bad_value(k, origin, value, -EINVAL, expected_names(k->names, why, sizeof(why)));
}

/* A name kept as the text (mode, as the detector's mode file takes it). */
static int parse_name(const config_key_def *k, scan_config *c, const char *value,
		      const char *origin)
{
	int i = find_name(k, value, origin);

	if (i < 0)
		return i;
	snprintf(dest(k, c), k->size, "%s", value);
	return 0;
}

static const char *format_string(const config_key_def *k, const scan_config *c, char *buf,
				 size_t size)
{
	(void)buf;
	(void)size;
	return src(k, c);
}

static int parse_backend(const config_key_def *k, scan_config *c, const char *value,
			 const char *origin)
{
	int i = find_name(k, value, origin);

	if (i < 0)
		return i;
	*(backend_kind *)dest(k, c) = (backend_kind)i;
	return 0;
}

static const char *format_backend(const config_key_def *k, const scan_config *c, char *buf,
				  size_t size)
{
	(void)k;
	(void)buf;
	(void)size;
	return backend_name(c->backend);
}

static int parse_cpus(const config_key_def *k, scan_config *c, const char *value,
		      const char *origin)
{
	cpu_set_bits m, back;
	char buf[sizeof(c->cpus)];
	int r;

	r = parse_cpulist(value, &m);
	if (r == -ERANGE)
		return bad_value(k, origin, value, r, "CPU numbers must be below 1024");
	if (r < 0)
		return bad_value(k, origin, value, r, "expected a cpulist such as 0-3,6");
	format_cpulist(&m, buf, sizeof(buf));
	if (parse_cpulist(buf, &back) < 0 || memcmp(&m, &back, sizeof(m)) != 0)
		return bad_value(k, origin, value, -ERANGE, "cpulist too long");
	snprintf(dest(k, c), k->size, "%s", buf);
	return 0;
}

/* Appends: the caller clears the list when a later source replaces it. */
static int parse_gates(const config_key_def *k, scan_config *c, const char *value,
		       const char *origin)
{
	char why[256];

	if (gate_parse(value, &c->gates, why, sizeof(why)) < 0)
		return bad_value(k, origin, value, -EINVAL, why);
	return 0;
}

/* The conditions as written, comma-separated as they parse (size: room for all). */
static const char *format_gates(const config_key_def *k, const scan_config *c, char *buf,
				size_t size)
{
	size_t len = 0;

	(void)k;
	buf[0] = '\0';
	for (size_t i = 0; i < c->gates.n; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
					c->gates.g[i].text);
	return buf;
}

/*
 * The unit's working directory is /: only an absolute path means one file;
 * a directory is no file to write.
 */
static int parse_path(const config_key_def *k, scan_config *c, const char *value,
		      const char *origin)
{
	size_t len = strlen(value);

	if (value[0] != '/' || value[len - 1] == '/')
		return bad_value(k, origin, value, -EINVAL,
				 "expected the absolute path of a file, e.g. "
				 "/var/lib/prometheus/node-exporter/hwlat.prom");
	/* Room for the temporary file's suffix. */
	if (len >= k->size - 8)
		return bad_value(k, origin, value, -ERANGE, "path too long");
	snprintf(dest(k, c), k->size, "%s", value);
	return 0;
}

/* A whole number from 0 to CONFIG_MONITOR_MAX_SAMPLE_BUDGET. */
static int parse_budget(const config_key_def *k, scan_config *c, const char *value,
			const char *origin)
{
	uint64_t v;

	if (parse_u64(value, &v) < 0)
		return bad_value(k, origin, value, -EINVAL, "expected a whole number such as 100");
	if (v > CONFIG_MONITOR_MAX_SAMPLE_BUDGET)
		return bad_value(k, origin, value, -ERANGE,
				 "must be at most " STRINGIFY(CONFIG_MONITOR_MAX_SAMPLE_BUDGET));
	*(uint64_t *)dest(k, c) = v;
	return 0;
}

static const char *format_u64(const config_key_def *k, const scan_config *c, char *buf,
			      size_t size)
{
	snprintf(buf, size, "%llu", (unsigned long long)*(const uint64_t *)src(k, c));
	return buf;
}

static const span_rule interval_rule = {
	.unit_ns = NSEC_PER_SEC,
	.expected = "expected a duration such as 600 (seconds), 10m or 1h",
	.min_ns = CONFIG_MONITOR_MIN_INTERVAL_NS,
	.max_ns = CONFIG_MONITOR_MAX_INTERVAL_NS,
};

static const span_rule duration_rule = {
	.unit_ns = NSEC_PER_SEC,
	.expected = "expected a duration such as 120 (seconds), 90s, 10m or 1h",
	.min_ns = NSEC_PER_MSEC,
	.max_ns = CONFIG_MAX_DURATION_NS,
};

/* The detector's settings: microseconds, up to the module's bound. */
#define DETECTOR_US_RULE(max_us)                                                     \
	{                                                                            \
		.unit_ns = NSEC_PER_USEC,                                            \
		.expected = "expected a time span such as 500000 (us), 500ms or 0.5s", \
		.too_large = "too large",                                            \
		.min_ns = 1,                                                         \
		.max_ns = (max_us) * NSEC_PER_USEC,                                  \
		.detector = true,                                                    \
	}

static const span_rule threshold_rule = DETECTOR_US_RULE(HWLAT_MAX_THRESHOLD_US);
static const span_rule width_rule = DETECTOR_US_RULE(HWLAT_MAX_WIDTH_US);
static const span_rule window_rule = DETECTOR_US_RULE(HWLAT_MAX_WINDOW_US);

/* The scanner's own limit: nanoseconds, not the detector's us. */
static const span_rule hardlimit_rule = {
	.unit_ns = NSEC_PER_USEC,
	.expected = "expected a time span such as 100 (us), 1500ns or 2ms",
	.too_large = "too large",
	.min_ns = 1,
};

static const char *const mode_names[HWLAT_MODE_NR + 1] = HWLAT_MODE_NAMES;
static const char *const backend_names[] = {
	[BACKEND_MODULE] = "module",
	[BACKEND_TRACER] = "tracer",
	[BACKEND_AUTO] = "auto",
	NULL,
};

static const config_key_def keys[_CONFIG_KEY_MAX] = {
	[CONFIG_DURATION] = { "duration", parse_span, format_span, &duration_rule,
			      FIELD(duration_ns) },
	[CONFIG_THRESHOLD] = { "threshold", parse_span, format_span, &threshold_rule,
			       FIELD(threshold_ns),
			       .unset = "the detector's current threshold is kept" },
	[CONFIG_WIDTH] = { "width", parse_span, format_span, &width_rule, FIELD(width_ns),
			   .unset = "the detector's current width is kept" },
	[CONFIG_WINDOW] = { "window", parse_span, format_span, &window_rule, FIELD(window_ns),
			    .unset = "the detector's current window is kept" },
	[CONFIG_MODE] = { "mode", parse_name, format_string, .names = mode_names, FIELD(mode),
			  .unset = "the detector's current mode is kept" },
	[CONFIG_CPUS] = { "cpus", parse_cpus, format_string, FIELD(cpus),
			  .unset = "the detector's current CPUs are kept" },
	[CONFIG_HARDLIMIT] = { "hardlimit", parse_span, format_span, &hardlimit_rule,
			       FIELD(hardlimit_ns), .unset = "no hard limit" },
	[CONFIG_FAIL_IF] = { "fail_if", parse_gates, format_gates, FIELD(gates),
			     .unset = "no condition" },
	[CONFIG_OPENMETRICS_FILE] = { "openmetrics_file", parse_path, format_string,
				      FIELD(openmetrics_file),
				      .unset = "no metrics file is written" },
	[CONFIG_BACKEND] = { "backend", parse_backend, format_backend, .names = backend_names,
			     FIELD(backend),
			     .unset = "the hwlat_detector module samples (backend = module)" },
	[CONFIG_MONITOR_INTERVAL] = { "monitor_interval", parse_span, format_span,
				      &interval_rule, FIELD(monitor.interval_ns) },
	[CONFIG_MONITOR_THRESHOLD] = { "monitor_threshold", parse_span, format_span,
				       &threshold_rule, FIELD(monitor.threshold_ns) },
	[CONFIG_MONITOR_WIDTH] = { "monitor_width", parse_span, format_span, &width_rule,
				   FIELD(monitor.width_ns) },
	[CONFIG_MONITOR_WINDOW] = { "monitor_window", parse_span, format_span, &window_rule,
				    FIELD(monitor.window_ns) },
	[CONFIG_MONITOR_MODE] = { "monitor_mode", parse_name, format_string, .names = mode_names,
				  FIELD(monitor.mode) },
	[CONFIG_MONITOR_CPUS] = { "monitor_cpus", parse_cpus, format_string,
				  FIELD(monitor.cpus),
				  .unset = "the detector's CPUs are kept (the housekeeping CPUs)" },
	[CONFIG_MONITOR_SAMPLE_BUDGET] = { "monitor_sample_budget", parse_budget, format_u64,
					   FIELD(monitor.sample_budget) },
	[CONFIG_MONITOR_OPENMETRICS_FILE] = { "monitor_openmetrics_file", parse_path,
					      format_string, FIELD(monitor.openmetrics_file) },
};

const char *backend_name(backend_kind b)
{
	return (size_t)b < ELEMENTSOF(backend_names) - 1 ? backend_names[b] : "unknown";
}

const char *config_key_name(config_key k)
{
	if (k < 0 || k >= _CONFIG_KEY_MAX)
		return NULL;
	return keys[k].name;
}

int config_key_from_name(const char *name)
{
	int k;

	for (k = 0; k < _CONFIG_KEY_MAX; k++)
		if (strcmp(name, keys[k].name) == 0)
			return k;
	return -EINVAL;
}

int config_set(scan_config *c, const char *key, const char *value, const char *origin)
{
	int k = config_key_from_name(key);
	char known[512];
	size_t len = 0;
	int r;

	if (k < 0) {
		for (int i = 0; i < _CONFIG_KEY_MAX; i++)
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
						i ? ", " : "", keys[i].name);
		log_msg("%s: unknown key '%s' (known: %s)", origin, key, known);
		return -EINVAL;
	}
	r = keys[k].parse(&keys[k], c, value, origin);
	if (r < 0)
		return r;
	c->set[k] = true;
	snprintf(c->origin[k], sizeof(c->origin[k]), "%s", origin);
	return 0;
}

void config_print(const scan_config *c, FILE *f)
{
	char buf[GATE_MAX_CONDITIONS * (GATE_TEXT_MAX + 2)];

	for (int k = 0; k < _CONFIG_KEY_MAX; k++) {
		const config_key_def *d = &keys[k];

		/* Only a key without a current setting to keep has a default. */
		if (!c->set[k] && d->unset) {
			fprintf(f, "# %s: not set, %s\n", d->name, d->unset);
			continue;
		}
		fprintf(f, "# %s: from %s\n%s = %s\n", d->name,
			c->set[k] ? c->origin[k] : "the default", d->name,
			d->format(d, c, buf, sizeof(buf)));
	}
}
