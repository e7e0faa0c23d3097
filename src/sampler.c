// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: the sampling loop and the threads that run it.
 *
 * A width is a busy loop with interrupts off that reads the clock twice per
 * iteration: a large difference between the two reads (inner gap) or
 * between the second read and the next iteration's first (outer gap) is time
 * the CPU spent somewhere the kernel cannot see: SMM, a hypervisor, a stall.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/irqflags.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>
#include <asm/cpufeature.h>
#include <asm/tsc.h>

#include "hwlat.h"

DEFINE_PER_CPU_ALIGNED(struct hwlat_cpu, hwlat_cpu);

struct hwlat_thread {
	struct task_struct *task;
	enum hwlat_mode mode;
	int cpu;			/* per-cpu: its CPU; else last one used */
	cpumask_var_t allowed;		/* CPUs this thread may sample */
	u64 gen;			/* settings generation of the last width */
	u64 start_ns;			/* when the last width began; 0: none */
	u64 width_end_ns;		/* when the last width (or try) ended */
	bool stopping;			/* finish the width, then wait for stop */
};

/* Result of one width. */
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

/* Reads of a clock that stand still; see hwlat_clock_stopped(). */
struct hwlat_still {
	unsigned long reads;
	u64 since;		/* TSC when the clock stopped moving */
};

static u64 hwlat_floor;
/* HWLAT_STILL_MS in TSC cycles; 0 without a TSC (the read count decides). */
static u64 hwlat_still_cycles;

/* The thread of the none, round-robin and stop-machine modes. */
static struct hwlat_thread *hwlat_single;

/* per-cpu mode; the CPU hotplug callbacks use these too. */
static DEFINE_MUTEX(hwlat_pcpu_lock);
static struct hwlat_thread **hwlat_pcpu_threads;
static cpumask_var_t hwlat_pcpu_mask;
static bool hwlat_pcpu_active;
static int hwlat_cpuhp_state = -1;

u64 hwlat_get_floor_ns(void)
{
	return READ_ONCE(hwlat_floor);
}

void hwlat_reset_floor(void)
{
	WRITE_ONCE(hwlat_floor, 0);
}

/* Only @cpu's sampler writes it; a u64 load is not torn on x86_64. */
u64 hwlat_get_sampled_ns(unsigned int cpu)
{
	return READ_ONCE(per_cpu(hwlat_cpu, cpu).sampled_ns);
}

/* Before the samplers start (enable=1): no writer runs. */
void hwlat_reset_sampled(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu(hwlat_cpu, cpu).sampled_ns, 0);
}

static inline unsigned int hwlat_hist_idx(u64 ns)
{
	u64 coarse;

	if (ns < HWLAT_HIST_FINE_TOP_NS)
		return ns >> HWLAT_HIST_FINE_SHIFT;
	coarse = (ns - HWLAT_HIST_FINE_TOP_NS) >> HWLAT_HIST_COARSE_SHIFT;
	if (coarse < HWLAT_HIST_NR - HWLAT_HIST_FINE_NR - 1)
		return HWLAT_HIST_FINE_NR + coarse;
	return HWLAT_HIST_NR - 1;
}

/* The middle of bucket @idx (the lower bound of the open last bucket). */
static u64 hwlat_hist_value(unsigned int idx)
{
	if (idx < HWLAT_HIST_FINE_NR)
		return ((u64)idx << HWLAT_HIST_FINE_SHIFT) +
		       (1 << HWLAT_HIST_FINE_SHIFT) / 2;
	if (idx < HWLAT_HIST_NR - 1)
		return HWLAT_HIST_FINE_TOP_NS +
		       ((u64)(idx - HWLAT_HIST_FINE_NR) << HWLAT_HIST_COARSE_SHIFT) +
		       (1 << HWLAT_HIST_COARSE_SHIFT) / 2;
	return HWLAT_HIST_TOP_NS;
}

static u64 hwlat_hist_median(const u32 *hist)
{
	u64 total = 0, seen = 0;
	unsigned int i;

	for (i = 0; i < HWLAT_HIST_NR; i++)
		total += hist[i];
	if (!total)
		return 0;
	for (i = 0; i < HWLAT_HIST_NR; i++) {
		seen += hist[i];
		if (seen * 2 >= total)
			break;
	}
	return hwlat_hist_value(i);
}

/* A gap starting at @from exceeded the threshold. */
static inline void hwlat_gap(struct hwlat_width *w, u64 from)
{
	if (!w->exceeded) {
		w->exceeded = true;
		w->first_ns = from;
	}
	w->count++;
}

/*
 * The clock stood still for a whole iteration. A tick-based clocksource read
 * on the CPU that runs the tick never advances with interrupts off; without
 * this limit the loop would keep them off until the hard-lockup detector
 * fires. The TSC measures how long the clock has stood still, so the limit
 * is time whatever a read costs (a slow emulated read would make a count of
 * reads last seconds); the count remains for CPUs without a TSC.
 */
static bool hwlat_clock_stopped(struct hwlat_still *st)
{
	u64 now = get_cycles();

	if (!st->reads++) {
		st->since = now;
		return false;
	}
	if (st->reads > HWLAT_STILL_READS)
		return true;
	return hwlat_still_cycles && now - st->since > hwlat_still_cycles;
}

/*
 * The clock went back from @prev to *@t1 or from *@t1 to *@t2.
 * ktime_get_mono_fast_ns() may, by a little, when an NMI lands in a
 * timekeeping update: a step up to the threshold is neither a latency nor a
 * reason to lose the width, so it is noted and the reads clamped. A larger
 * one makes the width's gaps meaningless: false, the width is discarded.
 */
static bool hwlat_backstep(struct hwlat_width *w, u64 prev, u64 *t1, u64 *t2)
{
	u64 back = 0;

	if (*t1 < prev)
		back = prev - *t1;
	if (*t2 < *t1)
		back = max(back, *t1 - *t2);
	if (back > w->threshold_ns) {
		w->invalid = "clock went backwards";
		return false;
	}
	w->backstep_ns = max(w->backstep_ns, back);
	*t1 = max(*t1, prev);
	*t2 = max(*t2, *t1);
	return true;
}

/*
 * An NMI entered at @at, after the last look: its entry time says which gap
 * holds it. Returns true when it came after @t2, so the next outer gap holds
 * it. @outer_timed: this iteration's outer gap is already in nmi_ns (an
 * earlier NMI's), so it is not added twice.
 */
static inline bool hwlat_nmi_place(struct hwlat_width *w, u64 at, u64 prev,
				   u64 t1, u64 t2, bool outer_timed)
{
	if (at <= t1) {
		if (!outer_timed)
			w->nmi_ns += t1 - prev;
		return false;
	}
	if (at <= t2) {
		w->nmi_ns += t2 - t1;
		return false;
	}
	return true;
}

static void hwlat_smi_begin(struct hwlat_width *w)
{
	w->smi_known = hwlat_smi_available() && !hwlat_smi_read(&w->smi_first);
	w->smi_seen = w->smi_first;
}

/*
 * Gaps of @over ns above the threshold just ended at @t2: if this CPU's SMI
 * counter moved since the last look, an SMI took that time. Read only here,
 * so the loop's floor is unchanged; returns the clock after the read, so
 * that the read's own cost is not the next outer gap.
 */
static u64 hwlat_smi_after_gap(struct hwlat_width *w, u64 t2, u64 over)
{
	u32 now;

	if (!w->smi_known)
		return t2;
	if (hwlat_smi_read(&now)) {
		w->smi_known = false;
		return t2;
	}
	if (now != w->smi_seen) {
		w->smi_ns += over;
		w->smi_seen = now;
	}
	return ktime_get_mono_fast_ns();
}

static void hwlat_smi_end(struct hwlat_width *w)
{
	u32 now;

	if (w->smi_known && !hwlat_smi_read(&now))
		w->smi_count = (u32)(now - w->smi_first);
	else
		w->smi_known = false;
}

/* The outer gap from @prev, the last look, to @now, when the width ended. */
static void hwlat_exit_gap(struct hwlat_width *w, u64 prev, u64 now,
			   u64 *outer, bool nmi_in_gap)
{
	u64 d = now - prev;

	if (d > *outer)
		*outer = d;
	if (d > w->threshold_ns) {
		hwlat_gap(w, prev);
		hwlat_smi_after_gap(w, now, d);
	}
	if (nmi_in_gap)
		w->nmi_ns += d;
}

/*
 * The width ran from its first read @start to its last read @end: the time
 * a gap would have been seen. A discarded width reports nothing, so it
 * counts as nothing sampled. Only this CPU writes its sum.
 */
static void hwlat_add_sampled(struct hwlat_cpu *hc,
			      const struct hwlat_width *w, u64 start, u64 end)
{
	if (!w->invalid)
		WRITE_ONCE(hc->sampled_ns, hc->sampled_ns + end - start);
}

/*
 * One width on the current CPU. Interrupts are off: the caller disabled
 * them, or stop_machine() did. Everything written here is this CPU's own.
 */
static void hwlat_width_irqsoff(struct hwlat_width *w)
{
	struct hwlat_cpu *hc = this_cpu_ptr(&hwlat_cpu);
	const u64 threshold = w->threshold_ns;
	const u64 width = w->width_ns;
	struct hwlat_still still = {};
	u64 start, prev, t1, t2, d, over, nmi0, nmi_seen;
	u64 inner = 0, outer = 0;
	bool nmi_next = false, outer_timed;

	lockdep_assert_irqs_disabled();
	w->cpu = smp_processor_id();
	memset(hc->hist, 0, sizeof(hc->hist));
	hwlat_smi_begin(w);
	nmi0 = READ_ONCE(hc->nmi_count);
	nmi_seen = nmi0;
	WRITE_ONCE(hc->sampling, 1);
	barrier();

	start = ktime_get_mono_fast_ns();
	prev = start;
	do {
		t1 = ktime_get_mono_fast_ns();
		t2 = ktime_get_mono_fast_ns();
		if (unlikely(t1 < prev || t2 < t1) &&
		    !hwlat_backstep(w, prev, &t1, &t2))
			break;
		if (likely(t2 != prev)) {
			still.reads = 0;
		} else if (hwlat_clock_stopped(&still)) {
			w->invalid = "clock stopped";
			break;
		}
		over = 0;
		d = t1 - prev;
		if (d > outer)
			outer = d;
		if (unlikely(d > threshold)) {
			hwlat_gap(w, prev);
			over += d;
		}
		outer_timed = nmi_next;
		if (unlikely(nmi_next)) {
			w->nmi_ns += d;
			nmi_next = false;
		}
		d = t2 - t1;
		hc->hist[hwlat_hist_idx(d)]++;
		if (d > inner)
			inner = d;
		if (unlikely(d > threshold)) {
			hwlat_gap(w, t1);
			over += d;
		}
		if (unlikely(READ_ONCE(hc->nmi_count) != nmi_seen)) {
			nmi_seen = READ_ONCE(hc->nmi_count);
			nmi_next = hwlat_nmi_place(w, READ_ONCE(hc->nmi_last_ns),
						   prev, t1, t2, outer_timed);
		}
		if (unlikely(over))
			t2 = hwlat_smi_after_gap(w, t2, over);
		prev = t2;
	} while (t2 - start < width);

	barrier();
	WRITE_ONCE(hc->sampling, 0);
	barrier();
	/*
	 * The time since the last look is an outer gap like the others: an
	 * NMI or SMI that came after the last look is in it, and nmi_ns must
	 * not hold more than the gaps it was taken from.
	 */
	t1 = ktime_get_mono_fast_ns();
	if (!w->invalid && t1 > prev)
		hwlat_exit_gap(w, prev, t1, &outer,
			       nmi_next || READ_ONCE(hc->nmi_count) != nmi_seen);
	hwlat_add_sampled(hc, w, start, max(t1, prev));
	hwlat_smi_end(w);
	w->ran = true;
	w->start_ns = start;
	w->inner_ns = inner;
	w->outer_ns = outer;
	w->nmi_count = READ_ONCE(hc->nmi_count) - nmi0;
	w->floor_ns = hwlat_hist_median(hc->hist);
}

static void hwlat_width_init(struct hwlat_thread *t, struct hwlat_width *w)
{
	struct hwlat_config cfg;

	memset(w, 0, sizeof(*w));
	hwlat_get_config(&cfg);
	w->threshold_ns = cfg.threshold_ns;
	w->width_ns = cfg.width_ns;
	t->gen = cfg.gen;
}

/* Publishes a finished width. */
static void hwlat_report(struct hwlat_width *w, s64 real_offset_ns)
{
	struct hwlat_sample s = {};

	if (w->invalid) {
		pr_warn_ratelimited("%s on CPU %u, width discarded\n",
				    w->invalid, w->cpu);
		return;
	}
	if (w->backstep_ns)
		pr_warn_ratelimited("clock stepped back %llu ns on CPU %u, width kept\n",
				    w->backstep_ns, w->cpu);
	WRITE_ONCE(hwlat_floor, w->floor_ns);
	if (!w->exceeded && !w->nmi_count && !w->smi_count)
		return;

	s.cpu = w->cpu;
	s.ts = ns_to_timespec64((w->exceeded ? w->first_ns : w->start_ns) +
				real_offset_ns);
	s.inner_ns = w->inner_ns;
	s.outer_ns = w->outer_ns;
	s.count = w->count;
	s.nmi_count = w->nmi_count;
	s.nmi_ns = w->nmi_ns;
	s.smi_known = w->smi_known;
	s.smi_count = w->smi_count;
	s.smi_ns = w->smi_ns;
	hwlat_buffer_push(&s, w->exceeded);
	if (hwlat_debug)
		pr_info_ratelimited("cpu %u inner %llu ns outer %llu ns count %llu nmi %llu/%llu ns smi %llu/%llu ns%s\n",
				    s.cpu, s.inner_ns, s.outer_ns, s.count,
				    s.nmi_count, s.nmi_ns, s.smi_count,
				    s.smi_ns, s.smi_known ? "" : " (unavailable)");
}

/* CLOCK_REALTIME minus the sampling clock, taken just before a width. */
static s64 hwlat_real_offset(void)
{
	return (s64)(ktime_get_real_ns() - ktime_get_mono_fast_ns());
}

static unsigned int hwlat_next_cpu(struct hwlat_thread *t)
{
	unsigned int cpu;

	cpu = cpumask_next_and(t->cpu, t->allowed, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first_and(t->allowed, cpu_online_mask);
	return cpu;
}

static void hwlat_window_per_cpu(struct hwlat_thread *t)
{
	struct hwlat_width w;
	s64 off;

	hwlat_width_init(t, &w);
	off = hwlat_real_offset();
	local_irq_disable();
	hwlat_width_irqsoff(&w);
	local_irq_enable();
	hwlat_report(&w, off);
}

/* round-robin moves to the next CPU first; none samples where it runs. */
static void hwlat_window_single(struct hwlat_thread *t)
{
	struct hwlat_width w;
	unsigned int cpu;
	s64 off;

	hwlat_width_init(t, &w);
	cpus_read_lock();
	if (t->mode == HWLAT_MODE_ROUND_ROBIN) {
		cpu = hwlat_next_cpu(t);
		if (cpu >= nr_cpu_ids ||
		    set_cpus_allowed_ptr(current, cpumask_of(cpu))) {
			cpus_read_unlock();
			return;
		}
		t->cpu = cpu;
	} else if (!cpumask_intersects(t->allowed, cpu_online_mask) ||
		   set_cpus_allowed_ptr(current, t->allowed)) {
		/* none: (re)applied every window, the CPUs may come and go. */
		cpus_read_unlock();
		return;
	}
	off = hwlat_real_offset();
	local_irq_disable();
	hwlat_width_irqsoff(&w);
	local_irq_enable();
	cpus_read_unlock();
	hwlat_report(&w, off);
}

static int hwlat_stop_machine_fn(void *data)
{
	hwlat_width_irqsoff(data);
	return 0;
}

/* The width runs on one CPU while stop_machine() holds all the others. */
static void hwlat_window_stop_machine(struct hwlat_thread *t)
{
	struct hwlat_width w;
	unsigned int cpu;
	s64 off;
	int ret;

	hwlat_width_init(t, &w);
	cpus_read_lock();
	cpu = hwlat_next_cpu(t);
	cpus_read_unlock();
	if (cpu >= nr_cpu_ids)
		return;
	t->cpu = cpu;
	off = hwlat_real_offset();
	/* Does not run the function if @cpu went offline meanwhile. */
	ret = stop_machine(hwlat_stop_machine_fn, &w, cpumask_of(cpu));
	/* Never ran: nothing to report. */
	if (!ret && w.ran)
		hwlat_report(&w, off);
}

static bool hwlat_thread_should_stop(struct hwlat_thread *t)
{
	return kthread_should_stop() || READ_ONCE(t->stopping);
}

/*
 * Where this thread's windows begin: the settings' epoch, plus, in per-cpu
 * mode, an equal share of the window for each sampling CPU before this one.
 * Staggered so, a machine-wide stall (a broadcast SMI, a hypervisor) always
 * finds some CPU inside a width once the widths cover window / CPUs. The
 * CPUs are counted as they are online now: a hotplug shifts the phases.
 */
static u64 hwlat_phase_ns(const struct hwlat_thread *t, u64 window_ns)
{
	unsigned int cpu, slot = 0, slots = 0;

	if (t->mode != HWLAT_MODE_PER_CPU)
		return 0;
	for_each_cpu_and(cpu, hwlat_pcpu_mask, cpu_online_mask) {
		if (cpu < (unsigned int)t->cpu)
			slot++;
		slots++;
	}
	if (slots < 2)
		return 0;
	return div_u64(window_ns * slot, slots);
}

/* The first point of the grid @base + k * @window (k >= 0) at or after @t. */
static u64 hwlat_grid_from(u64 base, u64 window_ns, u64 t)
{
	if (t <= base)
		return base;
	return base + div64_u64(t - base + window_ns - 1, window_ns) * window_ns;
}

/*
 * When the next width is due: the grid point after the last width's start,
 * one per window, so that what the width, the report and the wake-up cost
 * comes out of the sleep and the duty cycle is width / window. A width that
 * ended too late for that point (it started late: a stall, its thread kept
 * off the CPU) catches up instead, starting after the mode's duty-bound rest
 * until it is back on the grid, or, when that rest leaves nothing to gain or
 * it is a window or more behind, waits for the next grid point. New settings
 * start a new grid, after the duty-bound rest. A new thread takes the first
 * point of its grid, at once if that is past.
 */
static u64 hwlat_next_start_ns(const struct hwlat_thread *t,
			       const struct hwlat_config *cfg)
{
	u64 base = cfg->epoch_ns + hwlat_phase_ns(t, cfg->window_ns);
	u64 window = cfg->window_ns, rest = window - cfg->width_ns;
	u64 due, bound, earliest;

	if (!t->start_ns)
		return base;
	due = hwlat_grid_from(base, window, t->start_ns + 1);
	if (cfg->gen == t->gen &&
	    t->width_end_ns + min(HWLAT_MIN_SLEEP_US * NSEC_PER_USEC, rest / 2) <= due)
		return due;
	bound = hwlat_min_sleep_ns(cfg->mode, cfg->width_ns);
	earliest = t->width_end_ns + bound;
	if (earliest <= due)
		return due;
	if (earliest - due < window && rest > bound + HWLAT_MIN_SLEEP_US * NSEC_PER_USEC)
		return earliest;
	return hwlat_grid_from(base, window, earliest);
}

/*
 * Sleeps until the next width is due. A change of settings
 * (hwlat_sampler_kick() wakes us) starts a new grid, so that a write
 * applies within about 1 ms plus the width in progress. Returns on stop.
 */
static void hwlat_sleep(struct hwlat_thread *t)
{
	struct hwlat_config cfg;
	ktime_t until;
	u64 due;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (hwlat_thread_should_stop(t))
			break;
		hwlat_get_config(&cfg);
		due = hwlat_next_start_ns(t, &cfg);
		if (ktime_get_mono_fast_ns() >= due)
			break;
		/* Same clock: mono_fast is CLOCK_MONOTONIC read without locks. */
		until = ns_to_ktime(due);
		schedule_hrtimeout(&until, HRTIMER_MODE_ABS);
	}
	__set_current_state(TASK_RUNNING);
}

static int hwlat_thread_fn(void *data)
{
	struct hwlat_thread *t = data;

	for (;;) {
		hwlat_sleep(t);
		if (hwlat_thread_should_stop(t))
			break;
		t->start_ns = ktime_get_mono_fast_ns();
		switch (t->mode) {
		case HWLAT_MODE_PER_CPU:
			hwlat_window_per_cpu(t);
			break;
		case HWLAT_MODE_STOP_MACHINE:
			hwlat_window_stop_machine(t);
			break;
		default:
			hwlat_window_single(t);
			break;
		}
		t->width_end_ns = ktime_get_mono_fast_ns();
	}

	/* Asked to stop early: idle until kthread_stop() collects us. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void hwlat_thread_free(struct hwlat_thread *t)
{
	if (!t)
		return;
	free_cpumask_var(t->allowed);
	kfree(t);
}

/* Creates and starts a sampling thread; @cpu is used in per-cpu mode. */
static struct hwlat_thread *hwlat_thread_start(enum hwlat_mode mode,
					       unsigned int cpu,
					       const struct cpumask *allowed)
{
	struct hwlat_thread *t;
	struct task_struct *task;
	int ret = -ENOMEM;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	if (!zalloc_cpumask_var(&t->allowed, GFP_KERNEL))
		goto err;
	cpumask_copy(t->allowed, allowed);
	t->mode = mode;
	t->cpu = mode == HWLAT_MODE_PER_CPU ? cpu : -1;

	if (mode == HWLAT_MODE_PER_CPU)
		task = kthread_create_on_cpu(hwlat_thread_fn, t, cpu,
					     "hwlatd/%u");
	else
		task = kthread_create(hwlat_thread_fn, t, "hwlatd");
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto err;
	}
	t->task = task;
	wake_up_process(task);
	return t;
err:
	pr_err("cannot start a %s sampling thread: %d\n",
	       hwlat_mode_names[mode], ret);
	hwlat_thread_free(t);
	return ERR_PTR(ret);
}

/*
 * Lets the thread finish its width without waiting for it, so that many
 * threads stopped together finish their widths in parallel.
 */
static void hwlat_thread_request_stop(struct hwlat_thread *t)
{
	WRITE_ONCE(t->stopping, true);
	wake_up_process(t->task);
}

/* Waits for the current width (at most 1 s) and frees the thread. */
static void hwlat_thread_stop(struct hwlat_thread *t)
{
	kthread_stop(t->task);
	hwlat_thread_free(t);
}

/* hwlat_pcpu_lock held. */
static int hwlat_pcpu_start_cpu(unsigned int cpu)
{
	struct hwlat_thread *t;

	lockdep_assert_held(&hwlat_pcpu_lock);
	if (hwlat_pcpu_threads[cpu])
		return 0;
	t = hwlat_thread_start(HWLAT_MODE_PER_CPU, cpu, cpumask_of(cpu));
	if (IS_ERR(t))
		return PTR_ERR(t);
	hwlat_pcpu_threads[cpu] = t;
	return 0;
}

static void hwlat_pcpu_stop_cpu(unsigned int cpu)
{
	struct hwlat_thread *t = hwlat_pcpu_threads[cpu];

	lockdep_assert_held(&hwlat_pcpu_lock);
	if (!t)
		return;
	hwlat_pcpu_threads[cpu] = NULL;
	hwlat_thread_stop(t);
}

static void hwlat_pcpu_stop_all(void)
{
	unsigned int cpu;

	lockdep_assert_held(&hwlat_pcpu_lock);
	hwlat_pcpu_active = false;
	for_each_possible_cpu(cpu)
		if (hwlat_pcpu_threads[cpu])
			hwlat_thread_request_stop(hwlat_pcpu_threads[cpu]);
	for_each_possible_cpu(cpu)
		hwlat_pcpu_stop_cpu(cpu);
}

static int hwlat_cpu_online(unsigned int cpu)
{
	int ret = 0;

	mutex_lock(&hwlat_pcpu_lock);
	if (hwlat_pcpu_active && cpumask_test_cpu(cpu, hwlat_pcpu_mask))
		ret = hwlat_pcpu_start_cpu(cpu);
	mutex_unlock(&hwlat_pcpu_lock);
	if (ret)
		pr_warn("CPU %u came online but its sampler did not start: %d\n",
			cpu, ret);
	/* Never block CPU hotplug because of the detector. */
	return 0;
}

static int hwlat_cpu_offline(unsigned int cpu)
{
	mutex_lock(&hwlat_pcpu_lock);
	hwlat_pcpu_stop_cpu(cpu);
	mutex_unlock(&hwlat_pcpu_lock);
	return 0;
}

/* hwlat_lock held; @cpus is the effective set (never empty). */
int hwlat_sampler_start(enum hwlat_mode mode, const struct cpumask *cpus)
{
	struct hwlat_thread *t;
	unsigned int cpu;
	int ret = 0;

	lockdep_assert_held(&hwlat_lock);
	if (mode != HWLAT_MODE_PER_CPU) {
		t = hwlat_thread_start(mode, 0, cpus);
		if (IS_ERR(t))
			return PTR_ERR(t);
		hwlat_single = t;
		return 0;
	}

	cpus_read_lock();
	mutex_lock(&hwlat_pcpu_lock);
	cpumask_copy(hwlat_pcpu_mask, cpus);
	hwlat_pcpu_active = true;
	for_each_cpu_and(cpu, cpus, cpu_online_mask) {
		ret = hwlat_pcpu_start_cpu(cpu);
		if (ret)
			break;
	}
	if (ret)
		hwlat_pcpu_stop_all();
	mutex_unlock(&hwlat_pcpu_lock);
	cpus_read_unlock();
	return ret;
}

/*
 * Settings changed (hwlat_lock held): wakes the sleeping samplers, which
 * then sleep only as long as the new settings demand.
 */
void hwlat_sampler_kick(void)
{
	unsigned int cpu;

	lockdep_assert_held(&hwlat_lock);
	if (hwlat_single)
		wake_up_process(hwlat_single->task);
	mutex_lock(&hwlat_pcpu_lock);
	for_each_possible_cpu(cpu)
		if (hwlat_pcpu_threads[cpu])
			wake_up_process(hwlat_pcpu_threads[cpu]->task);
	mutex_unlock(&hwlat_pcpu_lock);
}

/* hwlat_lock held; returns once no sampler runs any more. */
void hwlat_sampler_stop(void)
{
	lockdep_assert_held(&hwlat_lock);
	if (hwlat_single) {
		hwlat_thread_stop(hwlat_single);
		hwlat_single = NULL;
	}
	cpus_read_lock();
	mutex_lock(&hwlat_pcpu_lock);
	hwlat_pcpu_stop_all();
	mutex_unlock(&hwlat_pcpu_lock);
	cpus_read_unlock();
}

int hwlat_sampler_init(void)
{
	int ret;

	if (boot_cpu_has(X86_FEATURE_TSC))
		hwlat_still_cycles = (u64)tsc_khz * HWLAT_STILL_MS;
	hwlat_pcpu_threads = kcalloc(nr_cpu_ids, sizeof(*hwlat_pcpu_threads),
				     GFP_KERNEL);
	if (!hwlat_pcpu_threads)
		return -ENOMEM;
	if (!zalloc_cpumask_var(&hwlat_pcpu_mask, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto err;
	}
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, HWLAT_NAME ":online",
					hwlat_cpu_online, hwlat_cpu_offline);
	if (ret < 0) {
		pr_err("cannot register CPU hotplug callbacks: %d\n", ret);
		goto err;
	}
	hwlat_cpuhp_state = ret;
	return 0;
err:
	free_cpumask_var(hwlat_pcpu_mask);
	kfree(hwlat_pcpu_threads);
	hwlat_pcpu_threads = NULL;
	return ret;
}

/* After hwlat_sampler_stop(): no thread runs. */
void hwlat_sampler_exit(void)
{
	if (hwlat_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(hwlat_cpuhp_state);
	hwlat_cpuhp_state = -1;
	free_cpumask_var(hwlat_pcpu_mask);
	kfree(hwlat_pcpu_threads);
	hwlat_pcpu_threads = NULL;
}
