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
#include <linux/rcupdate.h>
#include <linux/sched/isolation.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "compat.h"
#include "hwlat.h"

const char * const hwlat_mode_names[HWLAT_MODE_NR] = HWLAT_MODE_NAMES;

/*
 * Module parameters: the 2009 names first, then the newer settings. They
 * are set at load time (modprobe.d); debugfs changes the settings at run
 * time. In sysfs they are read-only (0444) and show the settings in force,
 * so that those stay readable where debugfs is not (lockdown, debugfs=off).
 */
static int enabled;
static int threshold;
int hwlat_debug;
static ulong width = HWLAT_DEFAULT_WIDTH_US;
static ulong window = HWLAT_DEFAULT_WINDOW_US;
static char *mode;
static char *cpus;
static bool allow_high_duty;
static bool allow_isolated_stop;
static int priority = HWLAT_DEFAULT_PRIORITY;

/*
 * Init done, the settings are live; written under kernel_param_lock(), which
 * the parameters' get functions run under.
 */
static bool hwlat_loaded;

static int hwlat_param_get_enabled(char *buf, const struct kernel_param *kp)
{
	if (!hwlat_loaded)
		return param_get_int(buf, kp);
	return scnprintf(buf, PAGE_SIZE, "%d\n", hwlat_is_enabled());
}

/* threshold, width and window: the value in force, in us. */
static int hwlat_param_get_us(char *buf, const struct kernel_param *kp)
{
	u64 val;

	if (!hwlat_loaded)
		return kp->arg == &threshold ? param_get_int(buf, kp) :
					       param_get_ulong(buf, kp);
	if (kp->arg == &threshold)
		val = hwlat_get_threshold_us();
	else if (kp->arg == &width)
		val = hwlat_get_width_us();
	else
		val = hwlat_get_window_us();
	return scnprintf(buf, PAGE_SIZE, "%llu\n", val);
}

static int hwlat_param_get_mode(char *buf, const struct kernel_param *kp)
{
	if (!hwlat_loaded)
		return param_get_charp(buf, kp);
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 hwlat_mode_names[hwlat_get_mode()]);
}

/* The effective CPU list, as the debugfs file "cpus" shows it. */
static int hwlat_param_get_cpus(char *buf, const struct kernel_param *kp)
{
	cpumask_var_t mask;
	int len;

	if (!hwlat_loaded)
		return param_get_charp(buf, kp);
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	hwlat_get_effective_cpus(mask);
	len = scnprintf(buf, PAGE_SIZE, "%*pbl\n", cpumask_pr_args(mask));
	free_cpumask_var(mask);
	return len;
}

static const struct kernel_param_ops hwlat_enabled_ops = {
	.set = param_set_int,
	.get = hwlat_param_get_enabled,
};

static const struct kernel_param_ops hwlat_int_us_ops = {
	.set = param_set_int,
	.get = hwlat_param_get_us,
};

static const struct kernel_param_ops hwlat_ulong_us_ops = {
	.set = param_set_ulong,
	.get = hwlat_param_get_us,
};

static const struct kernel_param_ops hwlat_mode_ops = {
	.set = param_set_charp,
	.get = hwlat_param_get_mode,
	.free = param_free_charp,
};

static const struct kernel_param_ops hwlat_cpus_ops = {
	.set = param_set_charp,
	.get = hwlat_param_get_cpus,
	.free = param_free_charp,
};

module_param_cb(enabled, &hwlat_enabled_ops, &enabled, 0444);
MODULE_PARM_DESC(enabled, "start sampling at load time (0 or 1)");

module_param_cb(threshold, &hwlat_int_us_ops, &threshold, 0444);
MODULE_PARM_DESC(threshold, "latency threshold in us (0 = default "
		 __stringify(HWLAT_DEFAULT_THRESHOLD_US_NUM) ")");

module_param_named(debug, hwlat_debug, int, 0444);
MODULE_PARM_DESC(debug, "log every reported window (rate limited)");

module_param_cb(width, &hwlat_ulong_us_ops, &width, 0444);
MODULE_PARM_DESC(width, "time sampled with interrupts off per window, us");

module_param_cb(window, &hwlat_ulong_us_ops, &window, 0444);
MODULE_PARM_DESC(window, "sampling period, us");

module_param_cb(mode, &hwlat_mode_ops, &mode, 0444);
MODULE_PARM_DESC(mode, HWLAT_MODE_NONE_NAME ", " HWLAT_MODE_ROUND_ROBIN_NAME
		 " (default), " HWLAT_MODE_PER_CPU_NAME " or "
		 HWLAT_MODE_STOP_MACHINE_NAME);

module_param_cb(cpus, &hwlat_cpus_ops, &cpus, 0444);
MODULE_PARM_DESC(cpus, "cpulist the samplers may use (default: the CPUs not in nohz_full= or isolcpus=)");

module_param(allow_high_duty, bool, 0444);
MODULE_PARM_DESC(allow_high_duty, "lift the " HWLAT_MODE_PER_CPU_NAME " (duty "
		 __stringify(HWLAT_PER_CPU_MAX_DUTY_PERCENT_NUM) "%) and "
		 HWLAT_MODE_STOP_MACHINE_NAME " (width "
		 __stringify(HWLAT_STOP_MACHINE_MAX_WIDTH_MS_NUM) " ms, duty "
		 __stringify(HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT_NUM)
		 "%) bounds to width " __stringify(HWLAT_MAX_WIDTH_S_NUM)
		 " s, duty " __stringify(HWLAT_MAX_DUTY_PERCENT_NUM)
		 "% (test labs, not production)");

module_param(allow_isolated_stop, bool, 0444);
MODULE_PARM_DESC(allow_isolated_stop, "let " HWLAT_MODE_STOP_MACHINE_NAME
		 " mode run although CPUs are isolated (nohz_full=, isolcpus=): it holds them with interrupts off too");

module_param(priority, int, 0444);
MODULE_PARM_DESC(priority, "SCHED_FIFO priority of the samplers, 1-"
		 __stringify(HWLAT_MAX_PRIORITY) " (default "
		 __stringify(HWLAT_DEFAULT_PRIORITY)
		 "), or 0 for SCHED_NORMAL: a CPU a task of this priority or above holds is skipped, not sampled");

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
static cpumask_var_t hwlat_cpus;	/* empty: the housekeeping CPUs */
static cpumask_var_t hwlat_excluded;	/* nohz_full= and isolcpus= CPUs */
static u64 hwlat_cfg_gen;
static u64 hwlat_cfg_epoch_ns;
static bool hwlat_enabled;

int hwlat_get_priority(void)
{
	return priority;
}

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
	cfg->mode = READ_ONCE(hwlat_mode);
	cfg->gen = hwlat_cfg_gen;
	cfg->epoch_ns = hwlat_cfg_epoch_ns;
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

/*
 * The bounds of the modes that hold more than one CPU; NULL if @wid and @win
 * (us) keep them. docs/design.md, "Safety bounds", gives the reasons.
 */
const char *hwlat_check_mode(enum hwlat_mode m, u64 wid, u64 win)
{
	if (allow_high_duty)
		return NULL;
	if (m == HWLAT_MODE_PER_CPU &&
	    wid * 100 > win * HWLAT_PER_CPU_MAX_DUTY_PERCENT)
		return HWLAT_MODE_PER_CPU_NAME " mode: width at most "
		       __stringify(HWLAT_PER_CPU_MAX_DUTY_PERCENT_NUM)
		       "% of window (allow_high_duty lifts it)";
	if (m == HWLAT_MODE_STOP_MACHINE &&
	    wid > HWLAT_STOP_MACHINE_MAX_WIDTH_US)
		return HWLAT_MODE_STOP_MACHINE_NAME " mode: width at most "
		       __stringify(HWLAT_STOP_MACHINE_MAX_WIDTH_US_NUM)
		       " us (allow_high_duty lifts it)";
	if (m == HWLAT_MODE_STOP_MACHINE &&
	    wid * 100 > win * HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT)
		return HWLAT_MODE_STOP_MACHINE_NAME " mode: width at most "
		       __stringify(HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT_NUM)
		       "% of window (allow_high_duty lifts it)";
	return NULL;
}

/*
 * The shortest sleep after a width that keeps @m's duty bound: what a
 * sampler woken by a change of settings must still sleep, at least 1 ms.
 */
u64 hwlat_min_sleep_ns(enum hwlat_mode m, u64 width_ns)
{
	u64 duty = HWLAT_MAX_DUTY_PERCENT;

	if (!allow_high_duty && m == HWLAT_MODE_PER_CPU)
		duty = HWLAT_PER_CPU_MAX_DUTY_PERCENT;
	else if (!allow_high_duty && m == HWLAT_MODE_STOP_MACHINE)
		duty = HWLAT_STOP_MACHINE_MAX_DUTY_PERCENT;
	return max(div64_u64(width_ns * (100 - duty), duty),
		   HWLAT_MIN_SLEEP_US * NSEC_PER_USEC);
}

/*
 * stop_machine() holds every online CPU with interrupts off, whatever the
 * CPU list: the CPUs set apart for latency-critical work too, which the
 * default list promises to spare. NULL if mode @m may run, else why not.
 */
#define HWLAT_ISOLATED_WHY HWLAT_MODE_STOP_MACHINE_NAME \
	" mode holds every CPU with interrupts off, the isolated ones (nohz_full=, isolcpus=) too; load the module with allow_isolated_stop=1 to accept that"

static const char *hwlat_check_isolated(enum hwlat_mode m)
{
	if (m != HWLAT_MODE_STOP_MACHINE || allow_isolated_stop ||
	    cpumask_empty(hwlat_excluded))
		return NULL;
	return HWLAT_ISOLATED_WHY;
}

/* NULL if the values are safe together in mode @m, else what is wrong. */
static const char *hwlat_check(enum hwlat_mode m, u64 thresh, u64 wid,
			       u64 win)
{
	if (thresh < HWLAT_MIN_THRESHOLD_US)
		return "threshold must be at least "
		       __stringify(HWLAT_MIN_THRESHOLD_US_NUM) " us";
	if (thresh > HWLAT_MAX_THRESHOLD_US)
		return "threshold must be at most "
		       __stringify(HWLAT_MAX_THRESHOLD_US_NUM) " us";
	if (wid < HWLAT_MIN_WIDTH_US)
		return "width must be at least "
		       __stringify(HWLAT_MIN_WIDTH_US_NUM) " us";
	if (wid > HWLAT_MAX_WIDTH_US)
		return "width must be at most "
		       __stringify(HWLAT_MAX_WIDTH_US_NUM)
		       " us (interrupts off for "
		       __stringify(HWLAT_MAX_WIDTH_S_NUM) " s)";
	if (win > HWLAT_MAX_WINDOW_US)
		return "window must be at most "
		       __stringify(HWLAT_MAX_WINDOW_US_NUM) " us ("
		       __stringify(HWLAT_MAX_WINDOW_MIN_NUM) " minutes)";
	if (wid >= win)
		return "width must be less than window";
	if (win - wid < HWLAT_MIN_SLEEP_US)
		return "window must exceed width by at least "
		       __stringify(HWLAT_MIN_SLEEP_US_NUM) " us";
	if (wid * 100 > win * HWLAT_MAX_DUTY_PERCENT)
		return "width must be at most "
		       __stringify(HWLAT_MAX_DUTY_PERCENT_NUM) "% of window";
	return hwlat_check_mode(m, wid, win);
}

/*
 * Stores a checked set and wakes the samplers, so that it applies at once;
 * hwlat_lock held.
 */
static int hwlat_apply(const char *what, u64 val, u64 thresh, u64 wid,
		       u64 win)
{
	const char *why;

	lockdep_assert_held(&hwlat_lock);
	why = hwlat_check(hwlat_mode, thresh, wid, win);
	if (why) {
		pr_info_ratelimited("%s %llu rejected: %s\n", what, val, why);
		return -EINVAL;
	}
	spin_lock(&hwlat_cfg_lock);
	WRITE_ONCE(hwlat_threshold_us, thresh);
	WRITE_ONCE(hwlat_width_us, wid);
	WRITE_ONCE(hwlat_window_us, win);
	hwlat_cfg_gen++;
	hwlat_cfg_epoch_ns = ktime_get_mono_fast_ns();
	spin_unlock(&hwlat_cfg_lock);
	if (hwlat_enabled)
		hwlat_sampler_kick();
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

/* The CPUs the samplers may use: the configured list or the default. */
static void hwlat_allowed_cpus_locked(struct cpumask *mask)
{
	if (cpumask_empty(hwlat_cpus))
		cpumask_andnot(mask, cpu_possible_mask, hwlat_excluded);
	else
		cpumask_copy(mask, hwlat_cpus);
}

/* A configured list as it is; the default one as far as it is online. */
static void hwlat_effective_cpus_locked(struct cpumask *mask)
{
	hwlat_allowed_cpus_locked(mask);
	if (cpumask_empty(hwlat_cpus))
		cpumask_and(mask, mask, cpu_online_mask);
}

/* CPUs nohz_full= or isolcpus= set apart, left out of the default list. */
const struct cpumask *hwlat_cpus_excluded(void)
{
	return hwlat_excluded;
}

/* The CPUs the samplers may use, as the file "cpus" shows them. */
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
	/* Offline CPUs too: they are sampled once they come online. */
	hwlat_allowed_cpus_locked(eff);
	/* The window grid starts now: the first width runs at once. */
	spin_lock(&hwlat_cfg_lock);
	hwlat_cfg_epoch_ns = ktime_get_mono_fast_ns();
	spin_unlock(&hwlat_cfg_lock);
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
		hwlat_reset_sampled();
		hwlat_reset_skipped();
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
	const char *why;
	int ret = 0;

	if (new_mode >= HWLAT_MODE_NR)
		return -EINVAL;
	mutex_lock(&hwlat_lock);
	why = hwlat_check_isolated(new_mode);
	if (why) {
		pr_info_ratelimited("mode %s rejected: %s\n",
				    hwlat_mode_names[new_mode], why);
		ret = -EINVAL;
		goto out;
	}
	why = hwlat_check_mode(new_mode, hwlat_width_us, hwlat_window_us);
	if (why) {
		pr_info_ratelimited("mode %s rejected with width %llu us and window %llu us: %s\n",
				    hwlat_mode_names[new_mode], hwlat_width_us,
				    hwlat_window_us, why);
		ret = -EINVAL;
	} else if (new_mode != hwlat_mode) {
		ret = hwlat_reconfigure(new_mode, hwlat_cpus);
	}
out:
	mutex_unlock(&hwlat_lock);
	return ret;
}

/* An empty @mask selects the default list: the CPUs not in nohz_full= or isolcpus=. */
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
	if (mode && hwlat_parse_mode(mode, &hwlat_mode)) {
		pr_err("invalid parameter mode=%s: must be " HWLAT_MODE_LIST "\n",
		       mode);
		return -EINVAL;
	}
	why = hwlat_check(hwlat_mode, thresh, width, window);
	if (why) {
		pr_err("invalid parameters threshold=%llu width=%lu window=%lu mode=%s: %s\n",
		       thresh, width, window, hwlat_mode_names[hwlat_mode], why);
		return -EINVAL;
	}
	hwlat_threshold_us = thresh;
	hwlat_width_us = width;
	hwlat_window_us = window;

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
	if (priority < 0 || priority > HWLAT_MAX_PRIORITY) {
		pr_err("invalid parameter priority=%d: must be 0 (SCHED_NORMAL) to "
		       __stringify(HWLAT_MAX_PRIORITY) " (SCHED_FIFO)\n", priority);
		return -EINVAL;
	}
	if (priority && hwlat_fifo_priority_possible(priority) != priority) {
		pr_warn("priority=%d: this kernel lets a module make its threads SCHED_FIFO 1 or %d only (it does not export sched_setattr_nocheck()); the samplers run at %d\n",
			priority, MAX_RT_PRIO / 2,
			hwlat_fifo_priority_possible(priority));
		priority = hwlat_fifo_priority_possible(priority);
	}
	why = hwlat_check_isolated(hwlat_mode);
	if (why) {
		pr_err("invalid parameter mode=%s: %s\n",
		       hwlat_mode_names[hwlat_mode], why);
		return -EINVAL;
	}
	if (allow_high_duty)
		pr_warn("allow_high_duty=1: " HWLAT_MODE_PER_CPU_NAME " and "
			HWLAT_MODE_STOP_MACHINE_NAME " may use widths up to "
			__stringify(HWLAT_MAX_WIDTH_S_NUM) " s and "
			__stringify(HWLAT_MAX_DUTY_PERCENT_NUM)
			"%% of every window\n");
	if (allow_isolated_stop && !cpumask_empty(hwlat_excluded))
		pr_warn("allow_isolated_stop=1: " HWLAT_MODE_STOP_MACHINE_NAME
			" mode may hold the isolated CPUs %*pbl with interrupts off\n",
			cpumask_pr_args(hwlat_excluded));
	return 0;
}

/*
 * The default CPU list leaves out the CPUs the administrator set apart for
 * latency-critical work (nohz_full=, isolcpus=): sampling them with
 * interrupts off is exactly the disturbance they were isolated from.
 */
static void __init hwlat_find_excluded(void)
{
	/* 7.x updates HK_TYPE_DOMAIN with cpuset partitions under RCU. */
	rcu_read_lock();
	cpumask_and(hwlat_excluded, housekeeping_cpumask(HWLAT_HK_TICK),
		    housekeeping_cpumask(HWLAT_HK_DOMAIN));
	rcu_read_unlock();
	cpumask_andnot(hwlat_excluded, cpu_possible_mask, hwlat_excluded);
	if (!cpumask_empty(hwlat_excluded))
		pr_info("CPUs %*pbl (nohz_full= or isolcpus=) are left out of the default CPU list; name them in cpus to sample them\n",
			cpumask_pr_args(hwlat_excluded));
}

static int __init hwlat_init(void)
{
	int ret = -ENOMEM;

	if (!zalloc_cpumask_var(&hwlat_cpus, GFP_KERNEL))
		return -ENOMEM;
	if (!zalloc_cpumask_var(&hwlat_excluded, GFP_KERNEL))
		goto err_cpus;
	/* Before the parameters: stop-machine is checked against it. */
	hwlat_find_excluded();
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
	/* Before the files exist: no reader can see a start that fails. */
	if (enabled) {
		ret = hwlat_set_enabled(true);
		if (ret)
			goto err_sampler;
	}
	/* The detector is still useful to a reader of the kernel log. */
	ret = hwlat_debugfs_init();
	if (ret)
		pr_warn("debugfs is not available (%d): results cannot be read, the settings show in /sys/module/%s/parameters\n",
			ret, KBUILD_MODNAME);
	kernel_param_lock(THIS_MODULE);
	hwlat_loaded = true;
	kernel_param_unlock(THIS_MODULE);
	pr_info("version %s loaded\n", HWLAT_VERSION);
	return 0;

err_sampler:
	hwlat_sampler_exit();
err_attrib:
	hwlat_attrib_exit();
err_buffer:
	hwlat_buffer_exit();
err_cpus:
	free_cpumask_var(hwlat_excluded);
	free_cpumask_var(hwlat_cpus);
	return ret;
}

static void __exit hwlat_exit(void)
{
	/* Blocked readers return; then no file operation is left running. */
	hwlat_buffer_shutdown();
	hwlat_debugfs_exit();
	hwlat_set_enabled(false);
	/* A parameter read running now ends before the settings go away. */
	kernel_param_lock(THIS_MODULE);
	hwlat_loaded = false;
	kernel_param_unlock(THIS_MODULE);
	hwlat_sampler_exit();
	hwlat_attrib_exit();
	hwlat_buffer_exit();
	free_cpumask_var(hwlat_excluded);
	free_cpumask_var(hwlat_cpus);
	pr_info("unloaded\n");
}

module_init(hwlat_init);
module_exit(hwlat_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Hardware latency detector");
MODULE_VERSION(HWLAT_VERSION);
