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
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "hwlat.h"

DEFINE_PER_CPU_ALIGNED(struct hwlat_cpu, hwlat_cpu);

struct hwlat_thread {
	struct task_struct *task;
	enum hwlat_mode mode;
	int cpu;			/* per-cpu: its CPU; else last one used */
	cpumask_var_t allowed;		/* CPUs this thread may sample */
	struct hwlat_smi_state smi;
	u64 smi_pending;		/* SMIs of windows not reported yet */
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
	unsigned int cpu;
	bool exceeded;
	bool ran;		/* the width ran (stop_machine() may skip it) */
	const char *invalid;	/* why the width is discarded, or NULL */
};

static u64 hwlat_floor;

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

/* A gap from @from to @to exceeded the threshold. */
static inline void hwlat_gap(struct hwlat_width *w, u64 from)
{
	if (!w->exceeded) {
		w->exceeded = true;
		w->first_ns = from;
	}
	w->count++;
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
	u64 start, prev, t1, t2, d, nmi0, nmi_seen, nmi_at;
	u64 inner = 0, outer = 0;
	unsigned long still = 0;
	bool nmi_next = false;

	lockdep_assert_irqs_disabled();
	w->cpu = smp_processor_id();
	memset(hc->hist, 0, sizeof(hc->hist));
	nmi0 = READ_ONCE(hc->nmi_count);
	nmi_seen = nmi0;
	WRITE_ONCE(hc->sampling, 1);
	barrier();

	start = ktime_get_mono_fast_ns();
	prev = start;
	do {
		t1 = ktime_get_mono_fast_ns();
		t2 = ktime_get_mono_fast_ns();
		if (unlikely(t1 < prev || t2 < t1)) {
			w->invalid = "clock went backwards";
			break;
		}
		/* A clock that stopped would keep interrupts off for ever. */
		if (likely(t2 != prev)) {
			still = 0;
		} else if (++still > HWLAT_STILL_READS) {
			w->invalid = "clock stopped";
			break;
		}
		d = t1 - prev;
		if (d > outer)
			outer = d;
		if (unlikely(d > threshold))
			hwlat_gap(w, prev);
		if (unlikely(nmi_next)) {
			w->nmi_ns += d;
			nmi_next = false;
		}
		d = t2 - t1;
		hc->hist[hwlat_hist_idx(d)]++;
		if (d > inner)
			inner = d;
		if (unlikely(d > threshold))
			hwlat_gap(w, t1);
		/*
		 * An NMI since the last look: its entry time says which gap
		 * holds it. One that came after t2 shows in the next outer gap.
		 */
		if (unlikely(READ_ONCE(hc->nmi_count) != nmi_seen)) {
			nmi_seen = READ_ONCE(hc->nmi_count);
			nmi_at = READ_ONCE(hc->nmi_last_ns);
			if (nmi_at <= t1)
				w->nmi_ns += t1 - prev;
			else if (nmi_at <= t2)
				w->nmi_ns += d;
			else
				nmi_next = true;
		}
		prev = t2;
	} while (t2 - start < width);

	barrier();
	WRITE_ONCE(hc->sampling, 0);
	w->ran = true;
	w->start_ns = start;
	w->inner_ns = inner;
	w->outer_ns = outer;
	w->nmi_count = READ_ONCE(hc->nmi_count) - nmi0;
	w->floor_ns = hwlat_hist_median(hc->hist);
}

static void hwlat_width_init(struct hwlat_width *w)
{
	struct hwlat_config cfg;

	memset(w, 0, sizeof(*w));
	hwlat_get_config(&cfg);
	w->threshold_ns = cfg.threshold_ns;
	w->width_ns = cfg.width_ns;
}

/* Publishes a finished width; the SMI count covers the whole window. */
static void hwlat_report(struct hwlat_thread *t, struct hwlat_width *w,
			 s64 real_offset_ns)
{
	struct hwlat_sample s = {};
	u64 smi = w->smi_count + t->smi_pending;

	t->smi_pending = 0;
	if (w->invalid) {
		/* Keep the SMIs for the next window: each is counted once. */
		t->smi_pending = smi;
		pr_warn_ratelimited("%s on CPU %u, width discarded\n",
				    w->invalid, w->cpu);
		return;
	}
	WRITE_ONCE(hwlat_floor, w->floor_ns);
	if (!w->exceeded && !w->nmi_count && !smi)
		return;

	s.cpu = w->cpu;
	s.ts = ns_to_timespec64((w->exceeded ? w->first_ns : w->start_ns) +
				real_offset_ns);
	s.inner_ns = w->inner_ns;
	s.outer_ns = w->outer_ns;
	s.count = w->count;
	s.nmi_count = w->nmi_count;
	s.nmi_ns = w->nmi_ns;
	s.smi_count = smi;
	hwlat_buffer_push(&s, w->exceeded);
	if (hwlat_debug)
		pr_info_ratelimited("cpu %u inner %llu ns outer %llu ns count %llu nmi %llu/%llu ns smi %llu\n",
				    s.cpu, s.inner_ns, s.outer_ns, s.count,
				    s.nmi_count, s.nmi_ns, s.smi_count);
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

	hwlat_width_init(&w);
	off = hwlat_real_offset();
	local_irq_disable();
	hwlat_width_irqsoff(&w);
	w.smi_count = hwlat_smi_collect_local(&t->smi);
	local_irq_enable();
	hwlat_report(t, &w, off);
}

/* round-robin moves to the next CPU first; none samples where it runs. */
static void hwlat_window_single(struct hwlat_thread *t)
{
	struct hwlat_width w;
	unsigned int cpu;
	s64 off;

	hwlat_width_init(&w);
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
	w.smi_count = hwlat_smi_collect_online(&t->smi);
	cpus_read_unlock();
	hwlat_report(t, &w, off);
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

	hwlat_width_init(&w);
	cpus_read_lock();
	cpu = hwlat_next_cpu(t);
	cpus_read_unlock();
	if (cpu >= nr_cpu_ids)
		return;
	t->cpu = cpu;
	off = hwlat_real_offset();
	/* Does not run the function if @cpu went offline meanwhile. */
	ret = stop_machine(hwlat_stop_machine_fn, &w, cpumask_of(cpu));
	cpus_read_lock();
	w.smi_count = hwlat_smi_collect_online(&t->smi);
	cpus_read_unlock();
	if (ret || !w.ran) {
		/* Never ran: nothing to report, keep the SMIs. */
		t->smi_pending += w.smi_count;
		return;
	}
	hwlat_report(t, &w, off);
}

static bool hwlat_thread_should_stop(struct hwlat_thread *t)
{
	return kthread_should_stop() || READ_ONCE(t->stopping);
}

/* Sleeps the rest of the window, at least 1 ms; returns early on stop. */
static void hwlat_sleep(struct hwlat_thread *t)
{
	struct hwlat_config cfg;
	u64 us;

	hwlat_get_config(&cfg);
	us = div_u64(cfg.window_ns - cfg.width_ns, NSEC_PER_USEC);
	us = max(us, HWLAT_MIN_SLEEP_US);
	set_current_state(TASK_INTERRUPTIBLE);
	if (!hwlat_thread_should_stop(t))
		schedule_timeout(max(usecs_to_jiffies((unsigned int)us), 1UL));
	__set_current_state(TASK_RUNNING);
}

static int hwlat_thread_fn(void *data)
{
	struct hwlat_thread *t = data;

	/* SMIs count from the start of sampling. */
	if (t->mode == HWLAT_MODE_PER_CPU) {
		preempt_disable();
		hwlat_smi_collect_local(&t->smi);
		preempt_enable();
	} else {
		cpus_read_lock();
		hwlat_smi_collect_online(&t->smi);
		cpus_read_unlock();
	}

	while (!hwlat_thread_should_stop(t)) {
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
		hwlat_sleep(t);
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
	hwlat_smi_state_free(&t->smi);
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
	ret = hwlat_smi_state_alloc(&t->smi);
	if (ret)
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
