/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hwlat-scan's configuration (service/config-keys.c, scan-config.c), TAP
 * output. Proves that config values, keys and files are validated, each
 * refusal naming where the value came from, the key and the value; the
 * width/window bounds hold; the hard limit takes nanoseconds, a duration
 * of 1 ms is the shortest, "2-2" is CPU 2; a config file may start with a
 * UTF-8 BOM, a directory is "Is a directory"; drop-ins are *.conf only and
 * apply in lexical order, a dangling one is an error, so is a drop-in
 * directory that is a file (named); spans print exactly; --check-config
 * prints every key; an openmetrics_file path one byte too long for its
 * temporary name is refused; every refusal the key table words reads
 * exactly as users see it, at each key's edges.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwlat-journal.h"
#include "parse.h"
#include "progress.h"
#include "scan-config.h"
#include "unit-test.h"

static int write_text(const char *path, const char *text)
{
	return write_file_len(path, text, strlen(text));
}

static void test_config(void)
{
	static const struct {
		const char *key, *value;
		bool good;
	} cases[] = {
		{ "duration", "60", true },
		{ "duration", "1.5h", true },
		{ "duration", "0", false },
		{ "duration", "367d", false },
		{ "duration", "soon", false },
		{ "threshold", "10", true },
		{ "threshold", "10us", true },
		{ "threshold", "0", false },
		{ "threshold", "1.5us", false },
		{ "threshold", "-3", false },
		{ "threshold", "1s", true },
		{ "threshold", "1000001", false },
		{ "width", "500000", true },
		{ "width", "1s", true },
		{ "width", "1000001", false },
		{ "window", "1000000", true },
		{ "window", "", false },
		{ "window", "10m", true },
		{ "window", "600000001", false },
		{ "mode", "per-cpu", true },
		{ "mode", "stop-machine", true },
		{ "mode", "fast", false },
		{ "cpus", "0-3,6", true },
		{ "cpus", "1024", false },
		{ "cpus", "", false },
		{ "hardlimit", "100", true },
		{ "hardlimit", "0", false },
		{ "colour", "blue", false },
	};
	scan_config c, before;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		config_init(&c);
		before = c;
		r = config_set(&c, cases[i].key, cases[i].value, "test");
		if (cases[i].good)
			ok(r == 0, "config %s = \"%s\" accepted (r=%d)",
			   cases[i].key, cases[i].value, r);
		else
			ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0,
			   "config %s = \"%s\" refused, config unchanged (r=%d)",
			   cases[i].key, cases[i].value, r);
	}

	config_init(&c);
	config_set(&c, "width", "0.5s", "test");
	config_set(&c, "cpus", "6,0-3", "test");
	ok(c.width_ns == 500 * NSEC_PER_MSEC && c.set[CONFIG_WIDTH] &&
	   strcmp(c.cpus, "0-3,6") == 0 && !c.set[CONFIG_WINDOW],
	   "config stores ns and canonical cpulist (%" PRIu64 ", \"%s\")",
	   c.width_ns, c.cpus);

	/* width against window: given, or the detector's current value. */
	config_init(&c);
	config_set(&c, "width", "1000000", "test");
	config_set(&c, "window", "1000000", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "width == window refused");
	config_set(&c, "width", "950000", "test");
	ok(config_check_bounds(&c, 0, 0) == 0, "width 95%% of window accepted");
	config_set(&c, "width", "950001", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "width above 95%% of window refused");
	config_init(&c);
	config_set(&c, "width", "9000", "test");
	config_set(&c, "window", "9999", "test");
	ok(config_check_bounds(&c, 0, 0) < 0, "window - width < 1 ms refused");
	config_init(&c);
	config_set(&c, "width", "600000", "test");
	ok(config_check_bounds(&c, 500 * NSEC_PER_MSEC, 600 * NSEC_PER_MSEC) < 0,
	   "width >= current window refused");
	ok(config_check_bounds(&c, 500 * NSEC_PER_MSEC, 1000 * NSEC_PER_MSEC) == 0,
	   "width < current window accepted");
}

static void test_config_file(void)
{
	char path[] = "/tmp/hwlat-test-config-XXXXXX";
	scan_config c, before;
	int fd, r;

	fd = mkstemp(path);
	if (fd < 0) {
		ok(false, "mkstemp: %s", strerror(errno));
		return;
	}
	close(fd);

	write_text(path, "# comment\n\n  duration = 30s \nthreshold=20\n"
			 "width = 300000\nwindow = 600000\nmode = per-cpu\n"
			 "cpus = 0\nhardlimit = 1ms\n");
	config_init(&c);
	r = config_load_file(&c, path, true);
	ok(r == 0 && c.duration_ns == 30 * NSEC_PER_SEC &&
	   c.threshold_ns == 20000 && c.width_ns == 300 * NSEC_PER_MSEC &&
	   c.window_ns == 600 * NSEC_PER_MSEC && strcmp(c.mode, "per-cpu") == 0 &&
	   strcmp(c.cpus, "0") == 0 && c.hardlimit_ns == NSEC_PER_MSEC,
	   "config file with every key loads (r=%d)", r);

	static const char *const bad[] = {
		"threshold = 20\nfoo = 1\n",
		"threshold = 20\nthreshold = 30\n",
		"threshold 20\n",
		" = 20\n",
		"threshold = 20\nwidth = abc\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(path, bad[i]);
		config_init(&c);
		before = c;
		r = config_load_file(&c, path, true);
		ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0,
		   "bad config file %zu refused, nothing applied (r=%d)", i, r);
	}

	unlink(path);
	config_init(&c);
	ok(config_load_file(&c, path, false) == 0,
	   "missing optional config file is fine");
	ok(config_load_file(&c, path, true) == -ENOENT,
	   "missing explicit config file is -ENOENT");
}

static void test_config_edges(void)
{
	static const struct {
		const char *key, *value;
		int r;
		uint64_t ns;
	} cases[] = {
		{ "hardlimit", "1500ns", 0, 1500 },
		{ "hardlimit", "1ns", 0, 1 },
		{ "hardlimit", "0ns", -ERANGE, 0 },
		{ "hardlimit", "100", 0, 100000 }, /* bare number: us */
		{ "duration", "1ms", 0, NSEC_PER_MSEC },
		{ "duration", "999999ns", -ERANGE, 0 },
		{ "duration", "500us", -ERANGE, 0 },
		{ "duration", "366d", 0, 366 * 86400 * NSEC_PER_SEC },
		{ "duration", "366d1ns", -EINVAL, 0 },
	};
	scan_config c;
	cpu_set_bits m;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got;

		config_init(&c);
		r = config_set(&c, cases[i].key, cases[i].value, "test");
		got = strcmp(cases[i].key, "hardlimit") == 0 ? c.hardlimit_ns : c.duration_ns;
		ok(r == cases[i].r && (r < 0 || got == cases[i].ns),
		   "config %s = %s: r=%d (want %d), %" PRIu64 " ns", cases[i].key, cases[i].value,
		   r, cases[i].r, got);
	}
	config_init(&c);
	r = config_set(&c, "cpus", "2-2", "test");
	ok(r == 0 && strcmp(c.cpus, "2") == 0 && parse_cpulist("2-2", &m) == 0 &&
	   cpu_set_has(&m, 2) && !cpu_set_has(&m, 1) && !cpu_set_has(&m, 3),
	   "cpus 2-2 is CPU 2 alone (\"%s\")", c.cpus);
}

static void test_config_files(void)
{
	char dir[] = "/tmp/hwlat-test-edges-XXXXXX", path[256], dropins[300], p[400];
	scan_config c, before;
	char span[32];
	int r;

	if (!mkdtemp(dir)) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/scan.conf", dir);
	write_file_len(path, "\xef\xbb\xbfthreshold = 20\n", 18);
	config_init(&c);
	r = config_load(&c, path, true);
	ok(r == 0 && c.threshold_ns == 20000, "a UTF-8 BOM before the first key is skipped (r=%d)", r);
	write_file_len(path, "threshold = 20\n\xef\xbb\xbfwidth = 1\n", 30);
	config_init(&c);
	ok(config_load(&c, path, true) < 0, "a BOM on a later line is not skipped");

	config_init(&c);
	before = c;
	r = config_load(&c, dir, true);
	ok(r == -EISDIR && memcmp(&c, &before, sizeof(c)) == 0, "a directory as config file: -EISDIR (r=%d)", r);

	write_file_len(path, "threshold = 20\nwidth = 300ms\n", 29);
	snprintf(dropins, sizeof(dropins), "%s%s", path, CONFIG_DROPIN_SUFFIX);
	mkdir(dropins, 0755);
	snprintf(p, sizeof(p), "%s/b.conf", dropins);
	write_file_len(p, "threshold = 40\n", 15);
	snprintf(p, sizeof(p), "%s/a.conf", dropins);
	write_file_len(p, "threshold = 30\nwidth = 200ms\n", 29);
	snprintf(p, sizeof(p), "%s/c.conf.disabled", dropins);
	write_file_len(p, "threshold = 50\n", 15);
	config_init(&c);
	r = config_load(&c, path, true);
	ok(r == 0 && c.threshold_ns == 40000 && c.width_ns == 200 * NSEC_PER_MSEC &&
	   strstr(c.origin[CONFIG_THRESHOLD], "/b.conf:1") && strstr(c.origin[CONFIG_WIDTH], "/a.conf:2"),
	   "drop-ins a.conf then b.conf after the file, later wins, origins kept (%s, %s)",
	   c.origin[CONFIG_THRESHOLD], c.origin[CONFIG_WIDTH]);
	snprintf(p, sizeof(p), "%s/d.conf", dropins);
	write_file_len(p, "mode = fast\n", 12);
	config_init(&c);
	before = c;
	r = config_load(&c, path, true);
	ok(r < 0 && memcmp(&c, &before, sizeof(c)) == 0, "a bad drop-in: nothing applied (r=%d)", r);

	ok(strcmp(format_span_exact(90 * NSEC_PER_SEC, span, sizeof(span)), "90s") == 0 &&
	   strcmp(format_span_exact(120 * NSEC_PER_SEC, span, sizeof(span)), "2m") == 0 &&
	   strcmp(format_span_exact(1500, span, sizeof(span)), "1500ns") == 0 &&
	   strcmp(format_span_exact(366 * 86400 * NSEC_PER_SEC, span, sizeof(span)), "366d") == 0 &&
	   strcmp(format_span_exact(500 * NSEC_PER_MSEC, span, sizeof(span)), "500ms") == 0,
	   "spans print in the largest exact unit");
	ok(strcmp(format_seconds(59, span, sizeof(span)), "59s") == 0 &&
	   strcmp(format_seconds(125, span, sizeof(span)), "2m 05s") == 0 &&
	   strcmp(format_seconds(3605, span, sizeof(span)), "1h 00m 05s") == 0 &&
	   strcmp(format_seconds(366 * 86400 + 1, span, sizeof(span)), "366d 00h 00m 01s") == 0,
	   "progress times: 59s, 2m 05s, 1h 00m 05s, 366d 00h 00m 01s");

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p) != 0)
		ok(false, "cleanup of %s", dir);
}

struct long_path {
	int r;
	char value[4096];
	scan_config c;
};

static void set_long_path(void *arg)
{
	struct long_path *x = arg;

	config_init(&x->c);
	x->r = config_set(&x->c, "openmetrics_file", x->value, "t.conf:9");
}

/* openmetrics_file takes 4087 bytes and refuses 4088 (room for ".tmp"). */
static void test_long_openmetrics_path(void)
{
	static struct long_path x;
	static char want[8192];
	const char *err;

	memset(x.value, 'a', 4088);
	x.value[0] = '/';
	x.value[4088] = '\0';
	snprintf(want, sizeof(want),
		 "hwlat-scan: t.conf:9: invalid value '%s' for 'openmetrics_file': path too long\n",
		 x.value);
	err = stderr_of(set_long_path, &x);
	ok(x.r == -ERANGE && strcmp(x.c.openmetrics_file, "") == 0 && strcmp(err, want) == 0,
	   "an openmetrics_file path of 4088 bytes is refused: r=%d (want %d), '%.50s...%.39s'",
	   x.r, -ERANGE, err, strlen(err) > 40 ? err + strlen(err) - 40 : "");
	x.value[4087] = '\0';
	err = stderr_of(set_long_path, &x);
	ok(x.r == 0 && strcmp(x.c.openmetrics_file, x.value) == 0 && strcmp(err, "") == 0,
	   "an openmetrics_file path of 4087 bytes is taken whole: r=%d, %zu bytes", x.r,
	   strlen(x.c.openmetrics_file));
}

struct load_config {
	const char *path;
	scan_config c;
	int r;
};

static void load_config(void *arg)
{
	struct load_config *x = arg;

	config_init(&x->c);
	x->r = config_load(&x->c, x->path, true);
}

static void test_config_dropins(void)
{
	static scan_config c;
	char *text = NULL, gone[1024];
	size_t size = 0;
	FILE *f;
	int r;

	config_init(&c);
	r = config_set(&c, "duration", "90s", "t.conf:1");
	if (r >= 0)
		r = config_set(&c, "mode", "none", "t.conf:2");
	if (r >= 0)
		r = config_set(&c, "cpus", "0,1", "t.conf:3");
	if (r >= 0)
		r = config_set(&c, "fail_if", "max > 1ms, smi > 0", "t.conf:4");
	ok(r == 0 && c.duration_ns == 90 * NSEC_PER_SEC && strcmp(c.mode, "none") == 0,
	   "duration 90s, mode none, cpus and two fail_if conditions are taken (r=%d)", r);
	f = open_memstream(&text, &size);
	if (!f)
		bail("open_memstream");
	config_print(&c, f);
	fclose(f);
	ok(strcmp(text, "# duration: from t.conf:1\nduration = 90s\n"
			"# threshold: not set, the detector's current threshold is kept\n"
			"# width: not set, the detector's current width is kept\n"
			"# window: not set, the detector's current window is kept\n"
			"# mode: from t.conf:2\nmode = none\n"
			"# cpus: from t.conf:3\ncpus = 0-1\n"
			"# hardlimit: not set, no hard limit\n"
			"# fail_if: from t.conf:4\nfail_if = max > 1ms, smi > 0\n"
			"# openmetrics_file: not set, no metrics file is written\n"
			"# backend: not set, the hwlat_detector module samples (backend = module)\n"
			"# monitor_interval: from the default\nmonitor_interval = 10m\n"
			"# monitor_threshold: from the default\nmonitor_threshold = 10us\n"
			"# monitor_width: from the default\nmonitor_width = 9ms\n"
			"# monitor_window: from the default\nmonitor_window = 1s\n"
			"# monitor_mode: from the default\nmonitor_mode = round-robin\n"
			"# monitor_cpus: not set, the detector's CPUs are kept (the housekeeping CPUs)\n"
			"# monitor_sample_budget: from the default\nmonitor_sample_budget = 100\n"
			"# monitor_openmetrics_file: from the default\n"
			"monitor_openmetrics_file = /var/lib/prometheus/node-exporter/hwlat-monitor.prom\n") == 0,
	   "the printed configuration");
	free(text);

	/* Drop-ins: only NAME.conf, not hidden, not other names. */
	put("conf1/scan.conf", "threshold = 10us\n");
	put("conf1/scan.conf.d/10-a.conf", "threshold = 20us\n");
	put("conf1/scan.conf.d/notes.txt", "not a setting\n");
	put("conf1/scan.conf.d/.hidden.conf", "not a setting\n");
	put("conf1/scan.conf.d/.conf", "not a setting\n");
	config_init(&c);
	r = config_load(&c, at("conf1/scan.conf"), true);
	ok(r == 0 && c.threshold_ns == 20 * NSEC_PER_USEC,
	   "drop-in 10-a.conf read, notes.txt, .hidden.conf and .conf not (r=%d)", r);
	/* A drop-in listed but gone (dangling link) is an error. */
	put("conf2/scan.conf", "threshold = 10us\n");
	put("conf2/scan.conf.d/10-a.conf", "width = 20us\n");
	snprintf(gone, sizeof(gone), "%s", at("conf2/scan.conf.d/20-gone.conf"));
	if (symlink(at("nowhere"), gone) < 0)
		bail("symlink");
	config_init(&c);
	r = config_load(&c, at("conf2/scan.conf"), true);
	ok(r == -ENOENT && !c.set[CONFIG_THRESHOLD],
	   "a dangling drop-in fails the load with -ENOENT, nothing taken (r=%d)", r);
	/* A drop-in "directory" that is a file: the error, named, not a crash. */
	put("conf3/scan.conf", "threshold = 10us\n");
	put("conf3/scan.conf.d", "not a directory\n");
	{
		static struct load_config x;
		char want_err[1200], path[1024];
		const char *err;

		snprintf(path, sizeof(path), "%s", at("conf3/scan.conf"));
		x.path = path;
		snprintf(want_err, sizeof(want_err), "hwlat-scan: cannot read the drop-in "
			 "directory %s: Not a directory\n", at("conf3/scan.conf.d"));
		err = stderr_of(load_config, &x);
		ok(x.r == -ENOTDIR && strcmp(err, want_err) == 0,
		   "a drop-in directory that is a file: -ENOTDIR (r=%d), said", x.r);
		if (strcmp(err, want_err) != 0)
			printf("#   got: '%s'\n", err);
	}
}

/* One config_set() call, for stderr_of(). */
struct set_one {
	const char *key, *value;
	int r;
};

static void set_one(void *arg)
{
	struct set_one *x = arg;
	static scan_config c;

	config_init(&c);
	x->r = config_set(&c, x->key, x->value, "t.conf:3");
}

/*
 * Every refusal the key table words, at each key's edges, read whole as
 * users do: the origin, the value, the key and why, and the errno.
 */
static void test_config_messages(void)
{
	static const struct {
		const char *key, *value;
		int r;
		const char *why; /* NULL: accepted */
	} cases[] = {
		{ "duration", "forever", -EINVAL,
		  "expected a duration such as 120 (seconds), 90s, 10m or 1h" },
		{ "duration", "99999999999999999999", -ERANGE,
		  "expected a duration such as 120 (seconds), 90s, 10m or 1h" },
		{ "duration", "999us", -ERANGE, "must be at least 1ms" },
		{ "duration", "1ms", 0, NULL },
		{ "duration", "2h", 0, NULL },
		{ "duration", "366d", 0, NULL },
		{ "duration", "366d 1ns", -EINVAL,
		  "expected a duration such as 120 (seconds), 90s, 10m or 1h" },
		{ "duration", "8785h", -ERANGE, "must be at most 366d" },
		{ "threshold", "abc", -EINVAL,
		  "expected a time span such as 500000 (us), 500ms or 0.5s" },
		{ "threshold", "99999999999999999999", -ERANGE, "too large" },
		{ "threshold", "0", -ERANGE, "must be greater than 0" },
		{ "threshold", "999ns", -EINVAL, "the detector works in whole microseconds" },
		{ "threshold", "1", 0, NULL },
		{ "threshold", "1000000", 0, NULL },
		{ "threshold", "1000001", -ERANGE, "the detector allows at most 1s (1000000 us)" },
		{ "threshold", "4294967295", -ERANGE, "the detector allows at most 1s (1000000 us)" },
		{ "threshold", "4294967296", -ERANGE, "too large" },
		{ "width", "1000001", -ERANGE, "the detector allows at most 1s (1000000 us)" },
		{ "window", "600000000", 0, NULL },
		{ "window", "600000001", -ERANGE,
		  "the detector allows at most 10m (600000000 us)" },
		{ "hardlimit", "x", -EINVAL, "expected a time span such as 100 (us), 1500ns or 2ms" },
		{ "hardlimit", "99999999999999999999", -ERANGE, "too large" },
		{ "hardlimit", "0", -ERANGE, "must be greater than 0" },
		{ "hardlimit", "1ns", 0, NULL },
		{ "mode", "turbo", -EINVAL, "expected none, round-robin, per-cpu or stop-machine" },
		{ "mode", "stop-machine", 0, NULL },
		{ "backend", "kernel", -EINVAL, "expected module, tracer or auto" },
		{ "backend", "auto", 0, NULL },
		{ "cpus", "1024", -ERANGE, "CPU numbers must be below 1024" },
		{ "cpus", "0-", -EINVAL, "expected a cpulist such as 0-3,6" },
		{ "openmetrics_file", "m.prom", -EINVAL,
		  "expected the absolute path of a file, e.g. "
		  "/var/lib/prometheus/node-exporter/hwlat.prom" },
		{ "openmetrics_file", "/var/lib/", -EINVAL,
		  "expected the absolute path of a file, e.g. "
		  "/var/lib/prometheus/node-exporter/hwlat.prom" },
		{ "fail_if", "p99 > 20us", 0, NULL },
		{ "monitor_interval", "often", -EINVAL,
		  "expected a duration such as 600 (seconds), 10m or 1h" },
		{ "monitor_interval", "999ms", -ERANGE, "must be at least 1s" },
		{ "monitor_interval", "1", 0, NULL },
		{ "monitor_interval", "1d", 0, NULL },
		{ "monitor_interval", "86401", -ERANGE, "must be at most 1d" },
		{ "monitor_width", "1000001", -ERANGE,
		  "the detector allows at most 1s (1000000 us)" },
		{ "monitor_mode", "sometimes", -EINVAL,
		  "expected none, round-robin, per-cpu or stop-machine" },
		{ "monitor_cpus", "0-", -EINVAL, "expected a cpulist such as 0-3,6" },
		{ "monitor_sample_budget", "lots", -EINVAL, "expected a whole number such as 100" },
		{ "monitor_sample_budget", "-1", -EINVAL, "expected a whole number such as 100" },
		{ "monitor_sample_budget", "0", 0, NULL },
		{ "monitor_sample_budget", "1000000", 0, NULL },
		{ "monitor_sample_budget", "1000001", -ERANGE, "must be at most 1000000" },
		{ "monitor_openmetrics_file", "hwlat.prom", -EINVAL,
		  "expected the absolute path of a file, e.g. "
		  "/var/lib/prometheus/node-exporter/hwlat.prom" },
	};
	char want[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct set_one x = { cases[i].key, cases[i].value, 1 };
		const char *err = stderr_of(set_one, &x);

		if (cases[i].why)
			snprintf(want, sizeof(want),
				 "hwlat-scan: t.conf:3: invalid value '%s' for '%s': %s\n",
				 cases[i].value, cases[i].key, cases[i].why);
		else
			want[0] = '\0';
		ok(x.r == cases[i].r && strcmp(err, want) == 0, "%s = %s: %d (r=%d), '%s'",
		   cases[i].key, cases[i].value, cases[i].r, x.r, cases[i].why ? cases[i].why : "");
		if (strcmp(err, want) != 0)
			printf("#   got: %s", err);
	}
	{
		struct set_one x = { "bogus", "1", 1 };
		const char *err = stderr_of(set_one, &x);

		ok(x.r == -EINVAL &&
			   strcmp(err, "hwlat-scan: t.conf:3: unknown key 'bogus' (known: duration, "
				       "threshold, width, window, mode, cpus, hardlimit, fail_if, "
				       "openmetrics_file, backend, monitor_interval, monitor_threshold, "
				       "monitor_width, monitor_window, monitor_mode, monitor_cpus, "
				       "monitor_sample_budget, monitor_openmetrics_file)\n") == 0,
		   "an unknown key: -EINVAL (r=%d) and every known key, in the table's order", x.r);
	}
}

int main(void)
{
	/* TAP lines and the code's stderr messages interleave readably. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_config();
	test_config_file();
	test_config_edges();
	test_config_files();
	test_config_dropins();
	test_long_openmetrics_path();
	test_config_messages();
	scratch_done();
	return tap_finish();
}
