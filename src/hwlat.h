/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hwlat_detector: shared declarations of the module's parts.
 *
 * main.c     settings, parameters, enable/disable, module init/exit
 * sampler.c  the sampling threads, their modes, and getting onto a CPU
 * width.c    the irq-off loop of one width
 * buffer.c   the legacy "sample" ring and the "stream" ring
 * debugfs.c  the debugfs files
 * attrib.c   NMI handler and SMI counter reads
 */
#ifndef _HWLAT_H
#define _HWLAT_H

#include <linux/bits.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/time64.h>
#include <linux/timekeeping.h>
#include <linux/trace_clock.h>
#include <linux/types.h>

#include "hwlat_abi.h"
#include "nmi_place.h"

#define HWLAT_NAME "hwlat_detector"

#ifndef HWLAT_VERSION
#define HWLAT_VERSION "unreleased"
#endif

/*
 * A clock that has not moved for this long (by the TSC) or for this many
 * reads in a row has stopped: the width gives up. Far longer than any
 * clocksource needs to advance, far shorter than a lockup.
 */
#define HWLAT_STILL_MS			50U
#define HWLAT_STILL_READS		BIT(22)

/*
 * How often a width reports a momentary RCU quiescent state (width.c,
 * hwlat_rcu_qs()): well below the force-quiescent-state scan interval
 * (a jiffy or more), so that a grace period never waits for a width.
 */
#define HWLAT_QS_NS			(500 * NSEC_PER_USEC)

/*
 * The scheduling priority of the samplers: SCHED_FIFO 99 by default, so
 * that a width starts on time and reaches a CPU that a real-time task holds;
 * 0 keeps them SCHED_NORMAL. docs/design.md, "Reaching a CPU", says why.
 */
#define HWLAT_DEFAULT_PRIORITY		99
#define HWLAT_MAX_PRIORITY		99

/*
 * A stopping sampler that has not exited after this long is moved off the
 * CPU it sampled (a task it cannot preempt may hold that CPU); again after
 * each further period, since it may have moved back on its own meanwhile.
 */
#define HWLAT_RELEASE_MS		10

/*
 * A CPU that has not taken a moving sampler within this long is held by a
 * task the sampler cannot preempt (a move takes microseconds): the window
 * is skipped. Waiting the whole window would leave the sampler queued
 * behind that task, and on 5.10 a task queued behind a real-time loop on a
 * nohz_full CPU stalls grace periods (docs/design.md, "Reaching a CPU").
 */
#define HWLAT_REACH_MS			50

/* Longest number a value file accepts, without the newline. */
#define HWLAT_MAX_NUMBER_LEN		31

/* Samples each ring holds. */
#define HWLAT_RING_SIZE			4096

/* One reported window. */
struct hwlat_sample {
	u64 seq;
	unsigned int cpu;
	struct timespec64 ts;
	u64 inner_ns;
	u64 outer_ns;
	u64 count;
	u64 nmi_count;
	u64 nmi_ns;
	u64 smi_count;
	u64 smi_ns;
	bool smi_known;		/* false: the CPU could not count SMIs */
	u64 skipped;		/* not 0: a record of windows not sampled */
};

/*
 * Histogram of inner deltas: 4 ns buckets below 1024 ns, then 64 ns buckets;
 * the last bucket collects everything from HWLAT_HIST_TOP_NS on.
 */
#define HWLAT_HIST_FINE_NR		256
#define HWLAT_HIST_FINE_SHIFT		2
#define HWLAT_HIST_COARSE_SHIFT		6
#define HWLAT_HIST_NR			512
#define HWLAT_HIST_FINE_TOP_NS		(HWLAT_HIST_FINE_NR << HWLAT_HIST_FINE_SHIFT)
#define HWLAT_HIST_TOP_NS		(HWLAT_HIST_FINE_TOP_NS + \
		((u64)(HWLAT_HIST_NR - HWLAT_HIST_FINE_NR - 1) << HWLAT_HIST_COARSE_SHIFT))

/*
 * Everything a CPU touches while it samples, on its own cache lines. Only
 * the sampler running on that CPU and NMIs taken by that CPU access it.
 */
struct hwlat_cpu {
	int sampling;		/* a width is running on this CPU */
	u64 nmi_count;		/* NMIs taken while sampling */
	/* entry time of NMI n in nmi_at[n % HWLAT_NMI_RING] */
	u64 nmi_at[HWLAT_NMI_RING];
	u64 sampled_ns;		/* sum of the kept widths since enable */
	u32 hist[HWLAT_HIST_NR];
};

DECLARE_PER_CPU_ALIGNED(struct hwlat_cpu, hwlat_cpu);

/*
 * The clock of the widths, and of the NMI handler's entry times, so that
 * both compare directly: lock-free and NMI-safe. docs/design.md, "Clock",
 * says why the timekeeper's clocksource; HWLAT_CLOCK_LOCAL (a build flag,
 * for bench/clock-cost only) reads trace_clock_local() instead, to measure
 * the alternative.
 */
#ifdef HWLAT_CLOCK_LOCAL
#define HWLAT_CLOCK_NAME	"local"
static __always_inline u64 hwlat_clock_ns(void)
{
	return trace_clock_local();
}
#else
#define HWLAT_CLOCK_NAME	"mono_fast"
static __always_inline u64 hwlat_clock_ns(void)
{
	return ktime_get_mono_fast_ns();
}
#endif

/* The clock of the window grid and of deadlines: CLOCK_MONOTONIC. */
static __always_inline u64 hwlat_mono_ns(void)
{
	return ktime_get_mono_fast_ns();
}

/* One width: its settings going in, its result coming out. */
struct hwlat_width {
	u64 threshold_ns;
	u64 width_ns;
	u64 first_ns;		/* start of the first gap over threshold */
	u64 start_ns;
	u64 inner_ns;
	u64 outer_ns;
	u64 count;
	u64 nmi_count;
	u64 nmi_ns;
	u64 floor_ns;
	u64 smi_count;
	u64 smi_ns;
	u64 backstep_ns;	/* largest small backwards step of the clock */
	u32 smi_first;		/* MSR_SMI_COUNT at the start of the width */
	u32 smi_seen;		/* MSR_SMI_COUNT at the last look */
	unsigned int cpu;
	bool smi_known;		/* both readings (and any between) worked */
	bool exceeded;
	bool ran;		/* the width ran (stop_machine() may skip it) */
	const char *invalid;	/* why the width is discarded, or NULL */
};

/* What a sampling thread needs for one window, copied under a lock. */
struct hwlat_config {
	u64 threshold_ns;
	u64 width_ns;
	u64 window_ns;
	enum hwlat_mode mode;
	u64 gen;		/* bumped by every change of settings */
	u64 epoch_ns;		/* CLOCK_MONOTONIC: start of the window grid */
};

/* main.c */
extern struct mutex hwlat_lock;
extern int hwlat_debug;
extern const char * const hwlat_mode_names[HWLAT_MODE_NR];

bool hwlat_is_enabled(void);
int hwlat_set_enabled(bool on);
void hwlat_get_config(struct hwlat_config *cfg);
u64 hwlat_get_threshold_us(void);
u64 hwlat_get_width_us(void);
u64 hwlat_get_window_us(void);
int hwlat_set_threshold_us(u64 val);
int hwlat_set_width_us(u64 val);
int hwlat_set_window_us(u64 val);
enum hwlat_mode hwlat_get_mode(void);
int hwlat_set_mode(enum hwlat_mode mode);
const char *hwlat_check_mode(enum hwlat_mode mode, u64 wid, u64 win);
u64 hwlat_min_sleep_ns(enum hwlat_mode mode, u64 width_ns);
void hwlat_get_effective_cpus(struct cpumask *mask);
const struct cpumask *hwlat_cpus_excluded(void);
int hwlat_get_priority(void);
int hwlat_set_cpus(const struct cpumask *mask);
int hwlat_parse_u64(const char *buf, size_t len, u64 *ret);
int hwlat_parse_mode(const char *buf, enum hwlat_mode *ret);

/* sampler.c */
int hwlat_sampler_init(void);
void hwlat_sampler_exit(void);
int hwlat_sampler_start(enum hwlat_mode mode, const struct cpumask *cpus);
void hwlat_sampler_stop(void);
void hwlat_sampler_kick(void);
u64 hwlat_get_skipped(unsigned int cpu);
void hwlat_reset_skipped(void);

/* width.c */
void hwlat_width_setup(void);
void hwlat_width_run(struct hwlat_width *w);
u64 hwlat_get_floor_ns(void);
void hwlat_reset_floor(void);
void hwlat_set_floor(u64 ns);
u64 hwlat_get_sampled_ns(unsigned int cpu);
void hwlat_reset_sampled(void);

/* buffer.c */
int hwlat_buffer_init(void);
void hwlat_buffer_exit(void);
void hwlat_buffer_reset(void);
void hwlat_buffer_push(struct hwlat_sample *s, bool exceeded);
void hwlat_buffer_wake(void);
void hwlat_buffer_shutdown(void);
void hwlat_buffer_stats(u64 *count, u64 *max_us, u64 *dropped);
int hwlat_buffer_sample_open(void);
void hwlat_buffer_sample_release(void);
ssize_t hwlat_buffer_sample_read(char __user *ubuf, size_t cnt, bool nonblock);
__poll_t hwlat_buffer_sample_poll(struct file *file,
				  struct poll_table_struct *wait);
int hwlat_buffer_stream_open(void);
void hwlat_buffer_stream_release(void);
ssize_t hwlat_buffer_stream_read(char __user *ubuf, size_t cnt, bool nonblock);
__poll_t hwlat_buffer_stream_poll(struct file *file,
				  struct poll_table_struct *wait);

/* debugfs.c */
int hwlat_debugfs_init(void);
void hwlat_debugfs_exit(void);

/* attrib.c */
int hwlat_attrib_init(void);
void hwlat_attrib_exit(void);
bool hwlat_smi_available(void);
const char *hwlat_smi_status(void);
int hwlat_smi_read(u32 *val);

#endif /* _HWLAT_H */
