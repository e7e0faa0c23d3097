/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan's configuration files (the file, then its drop-ins, all or
 * nothing) and the checks that tie the settings together with the module's
 * safety bounds (src/hwlat_abi.h). The keys themselves: config-keys.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hwlat_abi.h"
#include "scan-config.h"
#include "scan.h"
#include "log.h"
#include "macro.h"

void config_init(scan_config *c)
{
	memset(c, 0, sizeof(*c));
	c->duration_ns = CONFIG_DEFAULT_DURATION_NS;
	c->monitor.interval_ns = CONFIG_MONITOR_DEFAULT_INTERVAL_NS;
	c->monitor.threshold_ns = CONFIG_MONITOR_DEFAULT_THRESHOLD_NS;
	c->monitor.width_ns = CONFIG_MONITOR_DEFAULT_WIDTH_NS;
	c->monitor.window_ns = CONFIG_MONITOR_DEFAULT_WINDOW_NS;
	snprintf(c->monitor.mode, sizeof(c->monitor.mode), "%s", CONFIG_MONITOR_DEFAULT_MODE);
	c->monitor.sample_budget = CONFIG_MONITOR_DEFAULT_SAMPLE_BUDGET;
	snprintf(c->monitor.openmetrics_file, sizeof(c->monitor.openmetrics_file), "%s",
		 CONFIG_MONITOR_DEFAULT_OPENMETRICS_FILE);
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

/* The glosses src/hwlat_abi.h gives its bounds in other units say the same. */
_Static_assert(HWLAT_MAX_WIDTH_S_NUM * NSEC_PER_SEC == HWLAT_MAX_WIDTH_US * NSEC_PER_USEC,
	       "HWLAT_MAX_WIDTH_S_NUM");
_Static_assert(HWLAT_MAX_WINDOW_MIN_NUM * 60 * NSEC_PER_SEC == HWLAT_MAX_WINDOW_US * NSEC_PER_USEC,
	       "HWLAT_MAX_WINDOW_MIN_NUM");
_Static_assert(HWLAT_STOP_MACHINE_MAX_WIDTH_MS_NUM * NSEC_PER_MSEC ==
		       HWLAT_STOP_MACHINE_MAX_WIDTH_US * NSEC_PER_USEC,
	       "HWLAT_STOP_MACHINE_MAX_WIDTH_MS_NUM");

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
	if (width > HWLAT_MAX_WIDTH_US * NSEC_PER_USEC) {
		log_msg("width %llu us%s exceeds the detector's limit of %llu us",
			(unsigned long long)(width / NSEC_PER_USEC), wsrc, HWLAT_MAX_WIDTH_US);
		return -ERANGE;
	}
	if (window - width < HWLAT_MIN_SLEEP_US * NSEC_PER_USEC) {
		log_msg("window %llu us%s minus width %llu us%s must leave at least %llu us",
			(unsigned long long)(window / NSEC_PER_USEC), Wsrc,
			(unsigned long long)(width / NSEC_PER_USEC), wsrc, HWLAT_MIN_SLEEP_US);
		return -ERANGE;
	}
	if ((unsigned __int128)width * 100 > (unsigned __int128)window * HWLAT_MAX_DUTY_PERCENT) {
		log_msg("width %llu us%s must be at most %llu%% of window %llu us%s",
			(unsigned long long)(width / NSEC_PER_USEC), wsrc, HWLAT_MAX_DUTY_PERCENT,
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
	unsigned long long percent;

	if (allow_high_duty || !mode)
		return 0;
	if (strcmp(mode, HWLAT_MODE_STOP_MACHINE_NAME) == 0) {
		if (width > HWLAT_STOP_MACHINE_MAX_WIDTH_US * NSEC_PER_USEC) {
			log_msg("mode %s%s allows a width of at most %llu us, not %llu us%s: "
				"it holds every CPU with interrupts off for the whole width; "
				"set a shorter width (or load the module with allow_high_duty=1, for test labs)",
				mode, msrc, HWLAT_STOP_MACHINE_MAX_WIDTH_US,
				(unsigned long long)(width / NSEC_PER_USEC), wsrc);
			return -ERANGE;
		}
		percent = HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT;
	} else if (strcmp(mode, HWLAT_MODE_PER_CPU_NAME) == 0) {
		percent = HWLAT_PER_CPU_MAX_DUTY_PERCENT;
	} else {
		return 0;
	}
	if ((unsigned __int128)width * 100 > (unsigned __int128)window * percent) {
		log_msg("mode %s%s allows a width of at most %llu%% of the window: width %llu us%s, "
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

int scan_load_config(const scan_options *o, scan_config *c)
{
	bool gates_replaced = false;
	size_t i;
	int r;

	config_init(c);
	r = config_load(c, o->config_path, o->config_explicit);
	if (r < 0)
		return r;
	for (i = 0; i < o->n_overrides; i++) {
		/* The command line's --fail-if replace the file's fail_if. */
		if (strcmp(o->overrides[i].key, "fail_if") == 0 && !gates_replaced) {
			c->gates.n = 0;
			gates_replaced = true;
		}
		r = config_set(c, o->overrides[i].key, o->overrides[i].value,
			       "command line");
		if (r < 0)
			return r;
	}
	/* Both given: decide now, before anything is touched. */
	if (c->set[CONFIG_WIDTH] && c->set[CONFIG_WINDOW]) {
		r = config_check_bounds(c, 0, 0);
		if (r < 0)
			return r;
	}
	return config_check_cpus_online(c, "/sys/devices/system/cpu/online");
}
