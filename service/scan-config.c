/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Config file, command-line values and their validation for hwlat-scan. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scan-config.h"
#include "log.h"
#include "macro.h"

static const char *const key_names[_CONFIG_KEY_MAX] = {
	[CONFIG_DURATION] = "duration",
	[CONFIG_THRESHOLD] = "threshold",
	[CONFIG_WIDTH] = "width",
	[CONFIG_WINDOW] = "window",
	[CONFIG_MODE] = "mode",
	[CONFIG_CPUS] = "cpus",
	[CONFIG_HARDLIMIT] = "hardlimit",
	[CONFIG_FAIL_IF] = "fail_if",
	[CONFIG_OPENMETRICS_FILE] = "openmetrics_file",
	[CONFIG_BACKEND] = "backend",
};

static const char *const backend_names[] = {
	[BACKEND_MODULE] = "module",
	[BACKEND_TRACER] = "tracer",
	[BACKEND_AUTO] = "auto",
};

const char *backend_name(scan_backend b)
{
	return (size_t)b < ELEMENTSOF(backend_names) ? backend_names[b] : "unknown";
}

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
		log_msg("%s: unknown key '%s' (known: duration, threshold, width, window, mode, cpus, hardlimit, fail_if, openmetrics_file, backend)",
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
		/* The scanner's own limit: nanoseconds, not the detector's us. */
		r = parse_time_span(value, NSEC_PER_USEC, &ns);
		if (r == -ERANGE)
			return bad_value(origin, key, value, r, "too large");
		if (r < 0)
			return bad_value(origin, key, value, r,
					 "expected a time span such as 100 (us), 1500ns or 2ms");
		if (ns == 0)
			return bad_value(origin, key, value, -ERANGE, "must be greater than 0");
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
	case CONFIG_OPENMETRICS_FILE: {
		size_t len = strlen(value);

		/* The unit's working directory is /: only an absolute path means
		 * one file; a directory is no file to write. */
		if (value[0] != '/' || value[len - 1] == '/')
			return bad_value(origin, key, value, -EINVAL,
					 "expected the absolute path of a file, e.g. "
					 "/var/lib/prometheus/node-exporter/hwlat.prom");
		if (len >= sizeof(c->openmetrics_file) - 8)
			return bad_value(origin, key, value, -ERANGE, "path too long");
		snprintf(c->openmetrics_file, sizeof(c->openmetrics_file), "%s", value);
		break;
	}
	case CONFIG_BACKEND: {
		size_t i;

		for (i = 0; i < ELEMENTSOF(backend_names); i++)
			if (strcmp(value, backend_names[i]) == 0)
				break;
		if (i == ELEMENTSOF(backend_names))
			return bad_value(origin, key, value, -EINVAL,
					 "expected module, tracer or auto");
		c->backend = (scan_backend)i;
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
	snprintf(c->origin[k], sizeof(c->origin[k]), "%s", origin);
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

	struct stat st;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return log_error_errno(-errno, "cannot read config file %s", path);
	}
	/* fopen() opens a directory; only reading it fails. */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		return log_error_errno(-EISDIR, "cannot read config file %s", path);

	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		char origin[4096 + 16], *eq, *key, *value, *text = line;
		int k, r;

		lineno++;
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		if (memchr(line, '\0', (size_t)n)) {
			log_msg("%s: line contains a NUL byte", origin);
			return -EINVAL;
		}
		/* Editors on other systems start UTF-8 files with a BOM. */
		if (lineno == 1 && strncmp(text, "\xef\xbb\xbf", 3) == 0)
			text += 3;
		text = strip(text);
		if (text[0] == '\0' || text[0] == '#')
			continue;

		eq = strchr(text, '=');
		if (!eq) {
			log_msg("%s: expected 'key = value', got '%s'", origin, text);
			return -EINVAL;
		}
		*eq = '\0';
		key = strip(text);
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
		/* fail_if of a later file (a drop-in) replaces an earlier one's. */
		if (k == CONFIG_FAIL_IF)
			tmp.gates.n = 0;
		r = config_set(&tmp, key, value, origin);
		if (r < 0)
			return r;
		seen[k] = true;
		errno = 0;
	}
	if (ferror(f))
		return log_error_errno(errno > 0 ? -errno : -EIO, "cannot read config file %s", path);

	*c = tmp;
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dropin_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

/* The "*.conf" names in dir, sorted bytewise; *ret_n = 0 if dir is absent. */
static int list_dropins(const char *dir, char ***ret, size_t *ret_n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return log_error_errno(-errno, "cannot read the drop-in directory %s", dir);
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!is_dropin_name(de->d_name))
			continue;
		if (n == cap) {
			char **m = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof(*names));

			if (!m) {
				r = -ENOMEM;
				break;
			}
			names = m;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	if (r == 0 && errno != 0)
		r = log_error_errno(-errno, "cannot read the drop-in directory %s", dir);
	else if (r == -ENOMEM)
		log_msg("out of memory");
	closedir(d);
	if (r < 0) {
		while (n)
			free(names[--n]);
		free(names);
		return r;
	}
	if (n)
		qsort(names, n, sizeof(*names), compare_names);
	*ret = names;
	*ret_n = n;
	return 0;
}

int config_load(scan_config *c, const char *path, bool must_exist)
{
	_cleanup_free_ scan_config *tmp = malloc(sizeof(*tmp));
	char dir[4096], file[4096 + 256];
	char **names = NULL;
	size_t n = 0, i;
	int r;

	if (!tmp) {
		log_msg("out of memory");
		return -ENOMEM;
	}
	*tmp = *c;
	r = config_load_file(tmp, path, must_exist);
	if (r < 0)
		return r;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", path, CONFIG_DROPIN_SUFFIX) >= sizeof(dir)) {
		log_msg("config file name too long: %s", path);
		return -ENAMETOOLONG;
	}
	r = list_dropins(dir, &names, &n);
	for (i = 0; r >= 0 && i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
		r = config_load_file(tmp, file, true);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (r < 0)
		return r;
	*c = *tmp;
	return 0;
}

char *format_span_exact(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = {
		{ 86400 * NSEC_PER_SEC, "d" }, { 3600 * NSEC_PER_SEC, "h" },
		{ 60 * NSEC_PER_SEC, "m" }, { NSEC_PER_SEC, "s" },
		{ NSEC_PER_MSEC, "ms" }, { NSEC_PER_USEC, "us" },
	};
	size_t i;

	for (i = 0; i < ELEMENTSOF(units); i++)
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, size, "%llu%s",
				 (unsigned long long)(ns / units[i].ns), units[i].unit);
			return buf;
		}
	snprintf(buf, size, "%lluns", (unsigned long long)ns);
	return buf;
}

void config_print(const scan_config *c, FILE *f)
{
	static const char *const unset_why[_CONFIG_KEY_MAX] = {
		[CONFIG_THRESHOLD] = "the detector's current threshold is kept",
		[CONFIG_WIDTH] = "the detector's current width is kept",
		[CONFIG_WINDOW] = "the detector's current window is kept",
		[CONFIG_MODE] = "the detector's current mode is kept",
		[CONFIG_CPUS] = "the detector's current CPUs are kept",
		[CONFIG_HARDLIMIT] = "no hard limit",
		[CONFIG_FAIL_IF] = "no condition",
		[CONFIG_OPENMETRICS_FILE] = "no metrics file is written",
		[CONFIG_BACKEND] = "the hwlat_detector module samples (backend = module)",
	};
	const uint64_t *spans[_CONFIG_KEY_MAX] = {
		[CONFIG_DURATION] = &c->duration_ns,
		[CONFIG_THRESHOLD] = &c->threshold_ns,
		[CONFIG_WIDTH] = &c->width_ns,
		[CONFIG_WINDOW] = &c->window_ns,
		[CONFIG_HARDLIMIT] = &c->hardlimit_ns,
	};
	char buf[GATE_MAX_CONDITIONS * (GATE_TEXT_MAX + 2)];
	size_t i, len;
	int k;

	for (k = 0; k < _CONFIG_KEY_MAX; k++) {
		const char *value = buf;

		if (k == CONFIG_MODE) {
			value = c->mode;
		} else if (k == CONFIG_CPUS) {
			value = c->cpus;
		} else if (k == CONFIG_OPENMETRICS_FILE) {
			value = c->openmetrics_file;
		} else if (k == CONFIG_BACKEND) {
			value = backend_name(c->backend);
		} else if (k == CONFIG_FAIL_IF) {
			/* The conditions as written, comma-separated as they parse. */
			for (i = 0, len = 0, buf[0] = '\0'; i < c->gates.n; i++)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
							i ? ", " : "", c->gates.g[i].text);
		} else {
			format_span_exact(*spans[k], buf, sizeof(buf));
		}

		if (!c->set[k] && k != CONFIG_DURATION) {
			fprintf(f, "# %s: not set, %s\n", key_names[k], unset_why[k]);
			continue;
		}
		fprintf(f, "# %s: from %s\n%s = %s\n", key_names[k],
			c->set[k] ? c->origin[k] : "the default", key_names[k], value);
	}
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

int config_check_mode_bounds(const scan_config *c, const char *cur_mode,
			     uint64_t cur_width_ns, uint64_t cur_window_ns,
			     bool allow_high_duty)
{
	uint64_t width = c->set[CONFIG_WIDTH] ? c->width_ns : cur_width_ns;
	uint64_t window = c->set[CONFIG_WINDOW] ? c->window_ns : cur_window_ns;
	const char *mode = c->set[CONFIG_MODE] ? c->mode : cur_mode;
	const char *wsrc = c->set[CONFIG_WIDTH] ? "" : " (the detector's current width)";
	const char *Wsrc = c->set[CONFIG_WINDOW] ? "" : " (the detector's current window)";
	const char *msrc = c->set[CONFIG_MODE] ? "" : " (the detector's current mode)";
	unsigned percent;

	if (allow_high_duty || !mode)
		return 0;
	if (strcmp(mode, "stop-machine") == 0) {
		if (width > CONFIG_STOP_MACHINE_MAX_WIDTH_NS) {
			log_msg("mode stop-machine%s allows a width of at most %llu us, not %llu us%s: "
				"it holds every CPU with interrupts off for the whole width; "
				"set a shorter width (or load the module with allow_high_duty=1, for test labs)",
				msrc,
				(unsigned long long)(CONFIG_STOP_MACHINE_MAX_WIDTH_NS / NSEC_PER_USEC),
				(unsigned long long)(width / NSEC_PER_USEC), wsrc);
			return -ERANGE;
		}
		percent = CONFIG_STOP_MACHINE_MAX_WIDTH_PERCENT;
	} else if (strcmp(mode, "per-cpu") == 0) {
		percent = CONFIG_PER_CPU_MAX_WIDTH_PERCENT;
	} else {
		return 0;
	}
	if ((unsigned __int128)width * 100 > (unsigned __int128)window * percent) {
		log_msg("mode %s%s allows a width of at most %u%% of the window: width %llu us%s, "
			"window %llu us%s; set a shorter width or a longer window "
			"(or load the module with allow_high_duty=1, for test labs)",
			mode, msrc, percent, (unsigned long long)(width / NSEC_PER_USEC), wsrc,
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
