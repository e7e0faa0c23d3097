// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: a hardware latency detector.
 *
 * This part holds the settings, checks them against the safety bounds,
 * turns the detector on and off, and loads and unloads the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "hwlat.h"

const char * const hwlat_mode_names[HWLAT_MODE_NR] = {
	[HWLAT_MODE_NONE] = "none",
	[HWLAT_MODE_ROUND_ROBIN] = "round-robin",
	[HWLAT_MODE_PER_CPU] = "per-cpu",
	[HWLAT_MODE_STOP_MACHINE] = "stop-machine",
};

/* Module parameters: the 2009 names first, then the newer settings. */
static int enabled;
module_param(enabled, int, 0);
MODULE_PARM_DESC(enabled, "start sampling at load time (0 or 1)");

static int threshold;
module_param(threshold, int, 0);
MODULE_PARM_DESC(threshold, "latency threshold in us (0 = default 10)");

int hwlat_debug;
module_param_named(debug, hwlat_debug, int, 0);
MODULE_PARM_DESC(debug, "log every reported window (rate limited)");

static ulong width = HWLAT_DEFAULT_WIDTH_US;
module_param(width, ulong, 0);
MODULE_PARM_DESC(width, "time sampled with interrupts off per window, us");

static ulong window = HWLAT_DEFAULT_WINDOW_US;
module_param(window, ulong, 0);
MODULE_PARM_DESC(window, "sampling period, us");

static char *mode;
module_param(mode, charp, 0);
MODULE_PARM_DESC(mode, "none, round-robin (default), per-cpu or stop-machine");

static char *cpus;
module_param(cpus, charp, 0);
MODULE_PARM_DESC(cpus, "cpulist the samplers may use (default: all online)");

/*
 * hwlat_lock serialises every change of settings and of the enabled state.
 * hwlat_cfg_lock lets the samplers copy threshold, width and window as one
 * consistent set without sleeping.
 */
DEFINE_MUTEX(hwlat_lock);
static DEFINE_SPINLOCK(hwlat_cfg_lock);
static u64 hwlat_threshold_us = HWLAT_DEFAULT_THRESHOLD_US;
static u64 hwlat_width_us = HWLAT_DEFAULT_WIDTH_US;
static u64 hwlat_window_us = HWLAT_DEFAULT_WINDOW_US;
static enum hwlat_mode hwlat_mode = HWLAT_MODE_ROUND_ROBIN;
static cpumask_var_t hwlat_cpus;	/* empty: all online CPUs */
static bool hwlat_enabled;

bool hwlat_is_enabled(void)
{
	return READ_ONCE(hwlat_enabled);
}

void hwlat_get_config(struct hwlat_config *cfg)
{
	spin_lock(&hwlat_cfg_lock);
	cfg->threshold_ns = hwlat_threshold_us * NSEC_PER_USEC;
	cfg->width_ns = hwlat_width_us * NSEC_PER_USEC;
	cfg->window_ns = hwlat_window_us * NSEC_PER_USEC;
	spin_unlock(&hwlat_cfg_lock);
}

u64 hwlat_get_threshold_us(void)
{
	return READ_ONCE(hwlat_threshold_us);
}

u64 hwlat_get_width_us(void)
{
	return READ_ONCE(hwlat_width_us);
}

u64 hwlat_get_window_us(void)
{
	return READ_ONCE(hwlat_window_us);
}

/* NULL if the three values are safe together, else what is wrong. */
static const char *hwlat_check(u64 thresh, u64 wid, u64 win)
{
	if (thresh < HWLAT_MIN_THRESHOLD_US)
		return "threshold must be at least 1 us";
	if (thresh > HWLAT_MAX_THRESHOLD_US)
		return "threshold must be at most 1000000 us";
	if (wid < HWLAT_MIN_WIDTH_US)
		return "width must be at least 1 us";
	if (wid > HWLAT_MAX_WIDTH_US)
		return "width must be at most 1000000 us (interrupts off for 1 s)";
	if (win > HWLAT_MAX_WINDOW_US)
		return "window must be at most 600000000 us (10 minutes)";
	if (wid >= win)
		return "width must be less than window";
	if (win - wid < HWLAT_MIN_SLEEP_US)
		return "window must exceed width by at least 1000 us";
	if (wid * 100 > win * HWLAT_MAX_DUTY_PERCENT)
		return "width must be at most 95% of window";
	return NULL;
}

/* Stores a checked set; hwlat_lock held. */
static int hwlat_apply(const char *what, u64 val, u64 thresh, u64 wid,
		       u64 win)
{
	const char *why;

	lockdep_assert_held(&hwlat_lock);
	why = hwlat_check(thresh, wid, win);
	if (why) {
		pr_info_ratelimited("%s %llu rejected: %s\n", what, val, why);
		return -EINVAL;
	}
	spin_lock(&hwlat_cfg_lock);
	WRITE_ONCE(hwlat_threshold_us, thresh);
	WRITE_ONCE(hwlat_width_us, wid);
	WRITE_ONCE(hwlat_window_us, win);
	spin_unlock(&hwlat_cfg_lock);
	return 0;
}

int hwlat_set_threshold_us(u64 val)
{
	int ret;

	mutex_lock(&hwlat_lock);
	ret = hwlat_apply("threshold", val, val, hwlat_width_us,
			  hwlat_window_us);
	mutex_unlock(&hwlat_lock);
	return ret;
}

int hwlat_set_width_us(u64 val)
{
	int ret;

	mutex_lock(&hwlat_lock);
	ret = hwlat_apply("width", val, hwlat_threshold_us, val,
			  hwlat_window_us);
	mutex_unlock(&hwlat_lock);
	return ret;
}

int hwlat_set_window_us(u64 val)
{
	int ret;

	mutex_lock(&hwlat_lock);
	ret = hwlat_apply("window", val, hwlat_threshold_us, hwlat_width_us,
			  val);
	mutex_unlock(&hwlat_lock);
	return ret;
}

enum hwlat_mode hwlat_get_mode(void)
{
	return READ_ONCE(hwlat_mode);
}

static void hwlat_effective_cpus_locked(struct cpumask *mask)
{
	if (cpumask_empty(hwlat_cpus))
		cpumask_copy(mask, cpu_online_mask);
	else
		cpumask_copy(mask, hwlat_cpus);
}

/* The CPUs the samplers may use: the configured list or all online. */
void hwlat_get_effective_cpus(struct cpumask *mask)
{
	mutex_lock(&hwlat_lock);
	hwlat_effective_cpus_locked(mask);
	mutex_unlock(&hwlat_lock);
}

/* Starts the samplers with the current settings; hwlat_lock held. */
static int hwlat_start_locked(void)
{
	cpumask_var_t eff;
	int ret;

	if (!alloc_cpumask_var(&eff, GFP_KERNEL))
		return -ENOMEM;
	/* Empty list: every CPU, as it comes online too. */
	if (cpumask_empty(hwlat_cpus))
		cpumask_setall(eff);
	else
		cpumask_copy(eff, hwlat_cpus);
	ret = hwlat_sampler_start(hwlat_mode, eff);
	free_cpumask_var(eff);
	return ret;
}

int hwlat_set_enabled(bool on)
{
	int ret = 0;

	mutex_lock(&hwlat_lock);
	if (on == hwlat_enabled)
		goto out;
	if (on) {
		hwlat_buffer_reset();
		hwlat_reset_floor();
		WRITE_ONCE(hwlat_enabled, true);
		ret = hwlat_start_locked();
		if (ret) {
			WRITE_ONCE(hwlat_enabled, false);
			hwlat_buffer_wake();
			goto out;
		}
		pr_info("enabled: mode %s, threshold %llu us, width %llu us, window %llu us\n",
			hwlat_mode_names[hwlat_mode], hwlat_threshold_us,
			hwlat_width_us, hwlat_window_us);
	} else {
		/* Stop first: a reader sees EOF only after the last window. */
		hwlat_sampler_stop();
		WRITE_ONCE(hwlat_enabled, false);
		hwlat_buffer_wake();
		pr_info("disabled\n");
	}
out:
	mutex_unlock(&hwlat_lock);
	return ret;
}

/*
 * Replaces mode and CPU list together and restarts the samplers if they
 * run. On failure the previous settings are restored and restarted.
 */
static int hwlat_reconfigure(enum hwlat_mode new_mode,
			     const struct cpumask *new_cpus)
{
	enum hwlat_mode old_mode = hwlat_mode;
	cpumask_var_t old_cpus;
	int ret;

	lockdep_assert_held(&hwlat_lock);
	if (!alloc_cpumask_var(&old_cpus, GFP_KERNEL))
		return -ENOMEM;
	cpumask_copy(old_cpus, hwlat_cpus);

	if (hwlat_enabled)
		hwlat_sampler_stop();
	WRITE_ONCE(hwlat_mode, new_mode);
	cpumask_copy(hwlat_cpus, new_cpus);
	if (!hwlat_enabled) {
		ret = 0;
		goto out;
	}
	ret = hwlat_start_locked();
	if (!ret)
		goto out;

	WRITE_ONCE(hwlat_mode, old_mode);
	cpumask_copy(hwlat_cpus, old_cpus);
	if (hwlat_start_locked()) {
		pr_err("cannot restart the samplers, detector disabled\n");
		WRITE_ONCE(hwlat_enabled, false);
		hwlat_buffer_wake();
	}
out:
	free_cpumask_var(old_cpus);
	return ret;
}

int hwlat_set_mode(enum hwlat_mode new_mode)
{
	int ret = 0;

	if (new_mode >= HWLAT_MODE_NR)
		return -EINVAL;
	mutex_lock(&hwlat_lock);
	if (new_mode != hwlat_mode)
		ret = hwlat_reconfigure(new_mode, hwlat_cpus);
	mutex_unlock(&hwlat_lock);
	return ret;
}

/* An empty @mask selects all online CPUs. */
int hwlat_set_cpus(const struct cpumask *mask)
{
	int ret = 0;

	if (!cpumask_subset(mask, cpu_possible_mask)) {
		pr_info_ratelimited("cpus rejected: %*pbl names CPUs that do not exist\n",
				    cpumask_pr_args(mask));
		return -EINVAL;
	}
	if (!cpumask_empty(mask) && !cpumask_intersects(mask, cpu_online_mask)) {
		pr_info_ratelimited("cpus rejected: none of %*pbl is online\n",
				    cpumask_pr_args(mask));
		return -EINVAL;
	}
	mutex_lock(&hwlat_lock);
	if (!cpumask_equal(mask, hwlat_cpus))
		ret = hwlat_reconfigure(hwlat_mode, mask);
	mutex_unlock(&hwlat_lock);
	return ret;
}

/*
 * A decimal number as the 2009 files take it: digits, optionally ".000"
 * (what Python 3 hwlatdetect writes), optionally one '\n'. At most
 * HWLAT_MAX_NUMBER_LEN characters before the newline; no sign, no spaces,
 * no overflow. @buf need not be NUL-terminated.
 */
int hwlat_parse_u64(const char *buf, size_t len, u64 *ret)
{
	u64 val = 0;
	size_t i;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len > HWLAT_MAX_NUMBER_LEN || !isdigit(buf[0]))
		return -EINVAL;
	for (i = 0; i < len && isdigit(buf[i]); i++) {
		if (check_mul_overflow(val, (u64)10, &val) ||
		    check_add_overflow(val, (u64)(buf[i] - '0'), &val))
			return -EINVAL;
	}
	if (i < len) {
		if (buf[i] != '.' || i + 1 == len)
			return -EINVAL;
		for (i++; i < len; i++)
			if (buf[i] != '0')
				return -EINVAL;
	}
	*ret = val;
	return 0;
}

/* One of hwlat_mode_names, optionally followed by one '\n'. */
int hwlat_parse_mode(const char *buf, enum hwlat_mode *ret)
{
	size_t len = strlen(buf);
	enum hwlat_mode m;

	if (len && buf[len - 1] == '\n')
		len--;
	for (m = 0; m < HWLAT_MODE_NR; m++) {
		if (strlen(hwlat_mode_names[m]) == len &&
		    !strncmp(buf, hwlat_mode_names[m], len)) {
			*ret = m;
			return 0;
		}
	}
	return -EINVAL;
}

/* Checks and applies the module parameters; fails the load if invalid. */
static int __init hwlat_apply_params(void)
{
	u64 thresh = threshold ? (u64)threshold : HWLAT_DEFAULT_THRESHOLD_US;
	const char *why;
	int ret;

	if (enabled != 0 && enabled != 1) {
		pr_err("invalid parameter enabled=%d: must be 0 or 1\n", enabled);
		return -EINVAL;
	}
	if (threshold < 0) {
		pr_err("invalid parameter threshold=%d: must not be negative\n",
		       threshold);
		return -EINVAL;
	}
	why = hwlat_check(thresh, width, window);
	if (why) {
		pr_err("invalid parameters threshold=%llu width=%lu window=%lu: %s\n",
		       thresh, width, window, why);
		return -EINVAL;
	}
	hwlat_threshold_us = thresh;
	hwlat_width_us = width;
	hwlat_window_us = window;

	if (mode && hwlat_parse_mode(mode, &hwlat_mode)) {
		pr_err("invalid parameter mode=%s: must be none, round-robin, per-cpu or stop-machine\n",
		       mode);
		return -EINVAL;
	}
	if (cpus && *cpus) {
		ret = cpulist_parse(cpus, hwlat_cpus);
		if (ret || !cpumask_subset(hwlat_cpus, cpu_possible_mask)) {
			pr_err("invalid parameter cpus=%s: not a cpulist of existing CPUs\n",
			       cpus);
			return -EINVAL;
		}
		if (!cpumask_intersects(hwlat_cpus, cpu_online_mask)) {
			pr_err("invalid parameter cpus=%s: no online CPU in it\n",
			       cpus);
			return -EINVAL;
		}
	}
	return 0;
}

static int __init hwlat_init(void)
{
	int ret;

	if (!zalloc_cpumask_var(&hwlat_cpus, GFP_KERNEL))
		return -ENOMEM;
	ret = hwlat_apply_params();
	if (ret)
		goto err_cpus;
	ret = hwlat_buffer_init();
	if (ret)
		goto err_cpus;
	ret = hwlat_attrib_init();
	if (ret)
		goto err_buffer;
	ret = hwlat_sampler_init();
	if (ret)
		goto err_attrib;
	ret = hwlat_debugfs_init();
	if (ret)
		goto err_sampler;
	if (enabled) {
		ret = hwlat_set_enabled(true);
		if (ret)
			goto err_debugfs;
	}
	pr_info("version %s loaded\n", HWLAT_VERSION);
	return 0;

err_debugfs:
	hwlat_buffer_shutdown();
	hwlat_debugfs_exit();
err_sampler:
	hwlat_sampler_exit();
err_attrib:
	hwlat_attrib_exit();
err_buffer:
	hwlat_buffer_exit();
err_cpus:
	free_cpumask_var(hwlat_cpus);
	return ret;
}

static void __exit hwlat_exit(void)
{
	/* Blocked readers return; then no file operation is left running. */
	hwlat_buffer_shutdown();
	hwlat_debugfs_exit();
	hwlat_set_enabled(false);
	hwlat_sampler_exit();
	hwlat_attrib_exit();
	hwlat_buffer_exit();
	free_cpumask_var(hwlat_cpus);
	pr_info("unloaded\n");
}

module_init(hwlat_init);
module_exit(hwlat_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Hardware latency detector");
MODULE_VERSION(HWLAT_VERSION);
