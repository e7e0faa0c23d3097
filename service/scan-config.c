/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Config file, command-line values and their validation for hwlat-scan. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "scan-config.h"
#include "util.h"

static const char *const key_names[_CONFIG_KEY_MAX] = {
	[CONFIG_DURATION] = "duration",
	[CONFIG_THRESHOLD] = "threshold",
	[CONFIG_WIDTH] = "width",
	[CONFIG_WINDOW] = "window",
	[CONFIG_MODE] = "mode",
	[CONFIG_CPUS] = "cpus",
	[CONFIG_HARDLIMIT] = "hardlimit",
	[CONFIG_FAIL_IF] = "fail_if",
};

static const char *const mode_names[] = {
	"none", "round-robin", "per-cpu", "stop-machine",
};

void config_init(scan_config *c)
{
	memset(c, 0, sizeof(*c));
	c->duration_ns = CONFIG_DEFAULT_DURATION_NS;
}

const char *config_key_name(config_key k)
{
	if (k < 0 || k >= _CONFIG_KEY_MAX)
		return NULL;
	return key_names[k];
}

int config_key_from_name(const char *name)
{
	int k;

	for (k = 0; k < _CONFIG_KEY_MAX; k++)
		if (strcmp(name, key_names[k]) == 0)
			return k;
	return -EINVAL;
}

static int bad_value(const char *origin, const char *key, const char *value,
		     int r, const char *why)
{
	log_msg("%s: invalid value '%s' for '%s': %s", origin, value, key, why);
	return r;
}

/* A detector setting: a time span in whole microseconds, > 0. */
static int parse_us_setting(const char *origin, const char *key,
			    const char *value, uint64_t *ret_ns)
{
	uint64_t ns;
	int r;

	r = parse_time_span(value, NSEC_PER_USEC, &ns);
	if (r == -ERANGE)
		return bad_value(origin, key, value, r, "too large");
	if (r < 0)
		return bad_value(origin, key, value, r,
				 "expected a time span such as 500000 (us), 500ms or 0.5s");
	if (ns == 0)
		return bad_value(origin, key, value, -ERANGE, "must be greater than 0");
	if (ns % NSEC_PER_USEC)
		return bad_value(origin, key, value, -EINVAL,
				 "the detector works in whole microseconds");
	if (ns / NSEC_PER_USEC > UINT32_MAX)
		return bad_value(origin, key, value, -ERANGE, "too large");
	*ret_ns = ns;
	return 0;
}

int config_set(scan_config *c, const char *key, const char *value,
	       const char *origin)
{
	int k = config_key_from_name(key);
	uint64_t ns;
	int r;

	if (k < 0) {
		log_msg("%s: unknown key '%s' (known: duration, threshold, width, window, mode, cpus, hardlimit, fail_if)",
			origin, key);
		return -EINVAL;
	}

	switch (k) {
	case CONFIG_DURATION:
		r = parse_time_span(value, NSEC_PER_SEC, &ns);
		if (r < 0)
			return bad_value(origin, key, value, r,
					 "expected a duration such as 120 (seconds), 90s, 10m or 1h");
		if (ns < NSEC_PER_MSEC)
			return bad_value(origin, key, value, -ERANGE,
					 "must be at least 1ms");
		if (ns > CONFIG_MAX_DURATION_NS)
			return bad_value(origin, key, value, -ERANGE,
					 "must be at most 366d");
		c->duration_ns = ns;
		break;
	case CONFIG_THRESHOLD:
		r = parse_us_setting(origin, key, value, &ns);
		if (r < 0)
			return r;
		if (ns > CONFIG_MAX_THRESHOLD_NS)
			return bad_value(origin, key, value, -ERANGE,
					 "the detector allows at most 1s (1000000 us)");
		c->threshold_ns = ns;
		break;
	case CONFIG_WIDTH:
		r = parse_us_setting(origin, key, value, &ns);
		if (r < 0)
			return r;
		if (ns > CONFIG_MAX_WIDTH_NS)
			return bad_value(origin, key, value, -ERANGE,
					 "the detector allows at most 1s (1000000 us)");
		c->width_ns = ns;
		break;
	case CONFIG_WINDOW:
		r = parse_us_setting(origin, key, value, &ns);
		if (r < 0)
			return r;
		if (ns > CONFIG_MAX_WINDOW_NS)
			return bad_value(origin, key, value, -ERANGE,
					 "the detector allows at most 10m (600000000 us)");
		c->window_ns = ns;
		break;
	case CONFIG_HARDLIMIT:
		r = parse_us_setting(origin, key, value, &ns);
		if (r < 0)
			return r;
		c->hardlimit_ns = ns;
		break;
	case CONFIG_FAIL_IF: {
		char why[256];

		/* Appends: the caller clears the list when a later source
		 * replaces it. */
		if (gate_parse(value, &c->gates, why, sizeof(why)) < 0)
			return bad_value(origin, key, value, -EINVAL, why);
		break;
	}
	case CONFIG_MODE: {
		size_t i;

		for (i = 0; i < ELEMENTSOF(mode_names); i++)
			if (strcmp(value, mode_names[i]) == 0)
				break;
		if (i == ELEMENTSOF(mode_names))
			return bad_value(origin, key, value, -EINVAL,
					 "expected none, round-robin, per-cpu or stop-machine");
		snprintf(c->mode, sizeof(c->mode), "%s", value);
		break;
	}
	case CONFIG_CPUS: {
		cpu_set_bits m, back;
		char buf[sizeof(c->cpus)];

		r = parse_cpulist(value, &m);
		if (r == -ERANGE)
			return bad_value(origin, key, value, r,
					 "CPU numbers must be below 1024");
		if (r < 0)
			return bad_value(origin, key, value, r,
					 "expected a cpulist such as 0-3,6");
		format_cpulist(&m, buf, sizeof(buf));
		if (parse_cpulist(buf, &back) < 0 ||
		    memcmp(&m, &back, sizeof(m)) != 0)
			return bad_value(origin, key, value, -ERANGE,
					 "cpulist too long");
		snprintf(c->cpus, sizeof(c->cpus), "%s", buf);
		break;
	}
	}

	c->set[k] = true;
	return 0;
}

int config_load_file(scan_config *c, const char *path, bool must_exist)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	bool seen[_CONFIG_KEY_MAX] = {};
	size_t cap = 0;
	unsigned lineno = 0;
	scan_config tmp = *c;
	ssize_t n;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return log_errno(-errno, "cannot read config file %s", path);
	}

	while ((n = getline(&line, &cap, f)) >= 0) {
		char origin[4096 + 16], *eq, *key, *value;
		int k, r;

		lineno++;
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		if (memchr(line, '\0', (size_t)n)) {
			log_msg("%s: line contains a NUL byte", origin);
			return -EINVAL;
		}
		strip(line);
		if (line[0] == '\0' || line[0] == '#')
			continue;

		eq = strchr(line, '=');
		if (!eq) {
			log_msg("%s: expected 'key = value', got '%s'", origin, line);
			return -EINVAL;
		}
		*eq = '\0';
		key = strip(line);
		value = strip(eq + 1);
		if (key[0] == '\0') {
			log_msg("%s: missing key before '='", origin);
			return -EINVAL;
		}
		k = config_key_from_name(key);
		if (k >= 0 && seen[k]) {
			log_msg("%s: key '%s' given twice", origin, key);
			return -EINVAL;
		}
		r = config_set(&tmp, key, value, origin);
		if (r < 0)
			return r;
		seen[k] = true;
	}
	if (ferror(f))
		return log_errno(-EIO, "cannot read config file %s", path);

	*c = tmp;
	return 0;
}

int config_check_bounds(const scan_config *c, uint64_t cur_width_ns,
			uint64_t cur_window_ns)
{
	uint64_t width = c->set[CONFIG_WIDTH] ? c->width_ns : cur_width_ns;
	uint64_t window = c->set[CONFIG_WINDOW] ? c->window_ns : cur_window_ns;
	const char *wsrc = c->set[CONFIG_WIDTH] ? "" : " (current)";
	const char *Wsrc = c->set[CONFIG_WINDOW] ? "" : " (current)";

	if (width >= window) {
		log_msg("width %llu us%s must be smaller than window %llu us%s",
			(unsigned long long)(width / NSEC_PER_USEC), wsrc,
			(unsigned long long)(window / NSEC_PER_USEC), Wsrc);
		return -EINVAL;
	}
	if (width > CONFIG_MAX_WIDTH_NS) {
		log_msg("width %llu us%s exceeds the detector's limit of 1000000 us",
			(unsigned long long)(width / NSEC_PER_USEC), wsrc);
		return -ERANGE;
	}
	if (window - width < CONFIG_MIN_IDLE_NS) {
		log_msg("window %llu us%s minus width %llu us%s must leave at least 1000 us",
			(unsigned long long)(window / NSEC_PER_USEC), Wsrc,
			(unsigned long long)(width / NSEC_PER_USEC), wsrc);
		return -ERANGE;
	}
	if ((unsigned __int128)width * 100 >
	    (unsigned __int128)window * CONFIG_MAX_WIDTH_PERCENT) {
		log_msg("width %llu us%s must be at most 95%% of window %llu us%s",
			(unsigned long long)(width / NSEC_PER_USEC), wsrc,
			(unsigned long long)(window / NSEC_PER_USEC), Wsrc);
		return -ERANGE;
	}
	return 0;
}

int config_check_cpus_online(const scan_config *c, const char *online_path)
{
	_cleanup_fclose_ FILE *f = NULL;
	char buf[4096];
	cpu_set_bits want, online;
	unsigned cpu;

	if (!c->set[CONFIG_CPUS])
		return 0;
	if (parse_cpulist(c->cpus, &want) < 0)
		return -EINVAL;

	f = fopen(online_path, "re");
	if (!f || !fgets(buf, sizeof(buf), f))
		return 0; /* cannot tell: the detector will judge */
	if (parse_cpulist(strip(buf), &online) < 0)
		return 0;

	for (cpu = 0; cpu < HWLAT_MAX_CPUS; cpu++)
		if (cpu_set_has(&want, cpu) && !cpu_set_has(&online, cpu)) {
			log_msg("invalid value '%s' for 'cpus': CPU %u is not online (online: %s)",
				c->cpus, cpu, buf);
			return -EINVAL;
		}
	return 0;
}
