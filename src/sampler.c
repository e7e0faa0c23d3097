// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: the threads that run the widths, in their four modes.
 *
 * Each thread sleeps until its next grid point, gets onto the CPU it is to
 * sample, runs a width there (width.c) and reports it. Nothing here may
 * wait for a CPU that a task the sampler cannot preempt holds: a thread that
 * does not get onto its CPU within the window skips the window and counts
 * it, and a stopping thread that does not exit is moved off its CPU, so
 * that disabling never hangs on what runs on a sampled CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stop_machine.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "hwlat.h"

#define CREATE_TRACE_POINTS
#include "hwlat_trace.h"

/* Where a thread is on its way to the CPU it is to sample. */
enum hwlat_reach {
	HWLAT_REACH_NONE,	/* not moving */
	HWLAT_REACH_TRANSIT,	/* moving; the target must take it by deadline */
	HWLAT_REACH_ABANDONED,	/* too late: moved away, the window skipped */
};

struct hwlat_thread {
	struct task_struct *task;
	enum hwlat_mode mode;
	int cpu;			/* per-cpu: its CPU; else last one used */
	cpumask_var_t allowed;		/* CPUs this thread may sample */
	cpumask_var_t home;		/* scratch of the thread: where it sleeps */
	cpumask_var_t target;		/* where the width is to run */
	u64 gen;			/* settings generation of the last width */
	u64 start_ns;			/* when the last width began; 0: none */
	u64 width_end_ns;		/* when the last width (or try) ended */
	bool stopping;			/* finish the width, then wait for stop */
	struct completion done;		/* left its loop: kthread_stop() is quick */
	/*
	 * round-robin: getting onto the next CPU (hwlat_reach_*()). A raw lock:
	 * hwlat_reach_end() takes it with interrupts off, where PREEMPT_RT's
	 * sleeping spinlock_t must not be taken (contended, it would schedule).
	 */
	raw_spinlock_t reach_lock;
	enum hwlat_reach reach;
	u64 reach_deadline_ns;
	struct delayed_work reach_work;
	struct mutex release_lock;	/* serialises hwlat_release() */
	cpumask_var_t away;		/* scratch of hwlat_release() */
};

static bool hwlat_thread_should_stop(struct hwlat_thread *t)
{
	return kthread_should_stop() || READ_ONCE(t->stopping);
}

/* Windows each CPU could not be sampled in, since enable=1. */
static DEFINE_PER_CPU(atomic64_t, hwlat_skipped);

/* The thread of the none, round-robin and stop-machine modes. */
static struct hwlat_thread *hwlat_single;

/* per-cpu mode; the CPU hotplug callbacks use these too. */
static DEFINE_MUTEX(hwlat_pcpu_lock);
static struct hwlat_thread **hwlat_pcpu_threads;
static cpumask_var_t hwlat_pcpu_mask;
static bool hwlat_pcpu_active;
static int hwlat_cpuhp_state = -1;

u64 hwlat_get_skipped(unsigned int cpu)
{
	return atomic64_read(per_cpu_ptr(&hwlat_skipped, cpu));
}

/* Before the samplers start (enable=1). */
void hwlat_reset_skipped(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		atomic64_set(per_cpu_ptr(&hwlat_skipped, cpu), 0);
}

/*
 * @n windows of @cpu, the first due at @from_ns (CLOCK_MONOTONIC), passed
 * without a width on it: counted, and a record in the stream, so that a
 * reader sees which CPU and when. An offline CPU skips nothing: it was not
 * there to be sampled.
 */
static void hwlat_skip(unsigned int cpu, u64 n, u64 from_ns)
{
	struct hwlat_sample s = {};

	if (!n || cpu >= nr_cpu_ids || !cpu_online(cpu))
		return;
	atomic64_add(n, per_cpu_ptr(&hwlat_skipped, cpu));
	s.cpu = cpu;
	s.skipped = n;
	s.ts = ns_to_timespec64(ktime_get_real_ns() - hwlat_mono_ns() + from_ns);
	hwlat_buffer_push(&s, false);
	pr_warn_ratelimited("CPU %u: %llu window(s) skipped, the sampler could not get onto it in time (a task it cannot preempt held it)\n",
			    cpu, n);
}

/*
 * Where a thread waits between widths, and where a stuck one is sent: the
 * online CPUs outside nohz_full= and isolcpus= (a kthread waking on an
 * isolated CPU disturbs it), or any online CPU when there is none, but never
 * @avoid (a CPU that may hold it off; -1: none).
 */
static bool hwlat_where(struct cpumask *dst, int avoid)
{
	cpumask_andnot(dst, cpu_online_mask, hwlat_cpus_excluded());
	if (avoid >= 0)
		cpumask_clear_cpu(avoid, dst);
	if (cpumask_empty(dst)) {
		cpumask_copy(dst, cpu_online_mask);
		if (avoid >= 0)
			cpumask_clear_cpu(avoid, dst);
	}
	return !cpumask_empty(dst);
}

/*
 * Moves @t off the CPU it is on or queued on: a task that the sampler cannot
 * preempt may hold that CPU forever, and then neither a window nor a stop
 * could ever finish. A thread inside a width moves once the width is over.
 */
static void hwlat_release(struct hwlat_thread *t)
{
	mutex_lock(&t->release_lock);
	if (hwlat_where(t->away, task_cpu(t->task)))
		set_cpus_allowed_ptr(t->task, t->away);
	mutex_unlock(&t->release_lock);
}

/*
 * Runs when a round-robin thread's deadline passed: if it is still on its
 * way, the window is lost; the thread is moved away, and looked at again
 * shortly, since its own move onto the CPU may come after this one.
 */
static void hwlat_reach_timeout(struct work_struct *work)
{
	struct hwlat_thread *t = container_of(to_delayed_work(work),
					      struct hwlat_thread, reach_work);
	u64 now = hwlat_mono_ns();
	unsigned long delay = msecs_to_jiffies(HWLAT_RELEASE_MS);
	bool release, again;

	raw_spin_lock_irq(&t->reach_lock);
	if (t->reach == HWLAT_REACH_TRANSIT && now < t->reach_deadline_ns)
		delay = nsecs_to_jiffies(t->reach_deadline_ns - now) + 1;
	else if (t->reach == HWLAT_REACH_TRANSIT)
		t->reach = HWLAT_REACH_ABANDONED;
	release = t->reach == HWLAT_REACH_ABANDONED;
	again = t->reach != HWLAT_REACH_NONE;
	raw_spin_unlock_irq(&t->reach_lock);
	if (release)
		hwlat_release(t);
	if (again)
		queue_delayed_work(system_unbound_wq, &t->reach_work, delay);
}

/* The thread sets off for its next CPU, which must take it by @deadline_ns. */
static void hwlat_reach_begin(struct hwlat_thread *t, u64 deadline_ns)
{
	u64 now = hwlat_mono_ns();

	raw_spin_lock_irq(&t->reach_lock);
	t->reach = HWLAT_REACH_TRANSIT;
	t->reach_deadline_ns = deadline_ns;
	raw_spin_unlock_irq(&t->reach_lock);
	mod_delayed_work(system_unbound_wq, &t->reach_work,
			 deadline_ns > now ?
			 nsecs_to_jiffies(deadline_ns - now) + 1 : 0);
}

/*
 * Interrupts off, so the thread stays where it is: true when it is on a CPU
 * of t->target in time. Either way the journey is over, and its timeout is
 * cancelled now: left to expire inside a width longer than HWLAT_REACH_MS,
 * it would fire as the width ends and wake a kworker, an IPI to another
 * CPU in every window. cancel_delayed_work() does not wait for a running
 * timeout, so it is safe here; one that already runs finds the journey
 * over and does nothing.
 */
static bool hwlat_reach_end(struct hwlat_thread *t)
{
	bool arrived;

	lockdep_assert_irqs_disabled();
	raw_spin_lock(&t->reach_lock);
	arrived = t->reach == HWLAT_REACH_TRANSIT &&
		  cpumask_test_cpu(smp_processor_id(), t->target);
	t->reach = HWLAT_REACH_NONE;
	raw_spin_unlock(&t->reach_lock);
	cancel_delayed_work(&t->reach_work);
	return arrived;
}

/* Back to the CPUs where a sleeping sampler can always be woken. */
static void hwlat_go_home(struct hwlat_thread *t)
{
	cancel_delayed_work(&t->reach_work);
	if (hwlat_where(t->home, -1))
		set_cpus_allowed_ptr(current, t->home);
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
	hwlat_set_floor(w->floor_ns);
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
	trace_sample(&s);
	if (hwlat_debug)
		pr_info_ratelimited("cpu %u inner %llu ns outer %llu ns count %llu nmi %llu/%llu ns smi %llu/%llu ns%s\n",
				    s.cpu, s.inner_ns, s.outer_ns, s.count,
				    s.nmi_count, s.nmi_ns, s.smi_count,
				    s.smi_ns, s.smi_known ? "" : " (unavailable)");
}

/* CLOCK_REALTIME minus the sampling clock, taken just before a width. */
static s64 hwlat_real_offset(void)
{
	return (s64)(ktime_get_real_ns() - hwlat_clock_ns());
}

/*
 * A width on the CPU this thread is on, if it is where it meant to be (on
 * its way there, hwlat_reach_end(); else @cpu): interrupts off first, so
 * that it cannot move between the check and the width. Reports it; false
 * when not there.
 */
static bool hwlat_width_here(struct hwlat_thread *t, int cpu, bool reaching)
{
	struct hwlat_width w;
	bool here;
	s64 off;

	hwlat_width_init(t, &w);
	off = hwlat_real_offset();
	local_irq_disable();
	if (reaching)
		here = hwlat_reach_end(t);
	else
		here = smp_processor_id() == cpu;
	if (here)
		hwlat_width_run(&w);
	local_irq_enable();
	if (here)
		hwlat_report(&w, off);
	return here;
}

static unsigned int hwlat_next_cpu(struct hwlat_thread *t)
{
	unsigned int cpu;

	cpu = cpumask_next_and(t->cpu, t->allowed, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first_and(t->allowed, cpu_online_mask);
	return cpu;
}

/*
 * per-cpu: the thread is bound to its CPU. A stopping thread may have been
 * moved off it (hwlat_release()); then it samples nothing.
 */
static void hwlat_window_per_cpu(struct hwlat_thread *t, u64 missed,
				 u64 due)
{
	hwlat_skip(t->cpu, missed, due);
	hwlat_width_here(t, t->cpu, false);
}

/*
 * Moves the thread onto t->target, runs the width there if it gets there
 * by @deadline_ns and within HWLAT_REACH_MS, and takes it back home. A
 * window it could not get onto a CPU in is skipped, for each CPU it could
 * have used, unless a stop cut the journey short. The hotplug lock is not
 * held: a thread held off its CPU must not hold up CPU hotplug (and every
 * cpus_read_lock() behind a waiting writer) with it; if the CPU goes away
 * meanwhile, the scheduler moves the thread elsewhere, and the check with
 * interrupts off sees it.
 */
static void hwlat_width_there(struct hwlat_thread *t, u64 from_ns,
			      u64 deadline_ns)
{
	u64 reach = hwlat_mono_ns() + HWLAT_REACH_MS * NSEC_PER_MSEC;
	unsigned int cpu;

	hwlat_reach_begin(t, min(deadline_ns, reach));
	set_cpus_allowed_ptr(current, t->target);
	if (!hwlat_width_here(t, -1, true) && !hwlat_thread_should_stop(t))
		for_each_cpu(cpu, t->target)
			hwlat_skip(cpu, 1, from_ns);
	hwlat_go_home(t);
}

/* round-robin: the next CPU, chosen under the hotplug lock. */
static void hwlat_window_round_robin(struct hwlat_thread *t, u64 missed,
				     u64 due, u64 window_ns)
{
	unsigned int cpu;

	cpus_read_lock();
	cpu = hwlat_next_cpu(t);
	cpus_read_unlock();
	if (cpu >= nr_cpu_ids)
		return;
	t->cpu = cpu;
	hwlat_skip(cpu, missed, due);
	cpumask_copy(t->target, cpumask_of(cpu));
	hwlat_width_there(t, due + missed * window_ns,
			  due + (missed + 1) * window_ns);
}

/*
 * none: any allowed CPU the scheduler places the thread on; re-applied
 * every window, the CPUs may come and go.
 */
static void hwlat_window_none(struct hwlat_thread *t, u64 missed, u64 due,
			      u64 window_ns)
{
	cpumask_and(t->target, t->allowed, cpu_online_mask);
	if (cpumask_empty(t->target))
		return;
	hwlat_skip(cpumask_first(t->target), missed, due);
	hwlat_width_there(t, due + missed * window_ns,
			  due + (missed + 1) * window_ns);
}

static int hwlat_stop_machine_fn(void *data)
{
	hwlat_width_run(data);
	return 0;
}

/*
 * The width runs on one CPU while stop_machine() holds all the others; the
 * CPU stoppers preempt whatever runs there. stop_machine() holds the hotplug
 * lock for its duration, a width at most (10 ms unless allow_high_duty).
 */
static void hwlat_window_stop_machine(struct hwlat_thread *t, u64 missed,
				      u64 due)
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
	hwlat_skip(cpu, missed, due);
	off = hwlat_real_offset();
	/* Does not run the function if @cpu went offline meanwhile. */
	ret = stop_machine(hwlat_stop_machine_fn, &w, cpumask_of(cpu));
	if (!ret && w.ran)
		hwlat_report(&w, off);
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
 * applies within about 1 ms plus the width in progress. *@due: when the
 * width is due, with @cfg the settings it is due under. False on stop.
 */
static bool hwlat_sleep(struct hwlat_thread *t, struct hwlat_config *cfg,
			u64 *due)
{
	bool go = false;
	ktime_t until;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		hwlat_get_config(cfg);
		*due = hwlat_next_start_ns(t, cfg);
		if (hwlat_thread_should_stop(t))
			break;
		go = hwlat_mono_ns() >= *due;
		if (go)
			break;
		/* Same clock: hwlat_mono_ns() is CLOCK_MONOTONIC. */
		until = ns_to_ktime(*due);
		schedule_hrtimeout(&until, HRTIMER_MODE_ABS);
	}
	__set_current_state(TASK_RUNNING);
	return go;
}

/*
 * A per-cpu thread that a task it cannot preempt kept off its CPU until it
 * was stopped (and moved elsewhere) skipped every window due meanwhile.
 */
static void hwlat_skip_at_stop(struct hwlat_thread *t, u64 due, u64 window_ns)
{
	u64 now = hwlat_mono_ns();

	if (t->mode == HWLAT_MODE_PER_CPU && now > due)
		hwlat_skip(t->cpu, div64_u64(now - due, window_ns), due);
}

/*
 * One window, due at @due: the windows that passed while the thread was
 * kept from running are skipped, and the width must start within the
 * window it is in now.
 */
static void hwlat_window(struct hwlat_thread *t, u64 due, u64 window_ns)
{
	u64 missed = 0;

	t->start_ns = hwlat_mono_ns();
	if (t->start_ns > due)
		missed = div64_u64(t->start_ns - due, window_ns);
	switch (t->mode) {
	case HWLAT_MODE_PER_CPU:
		hwlat_window_per_cpu(t, missed, due);
		break;
	case HWLAT_MODE_STOP_MACHINE:
		hwlat_window_stop_machine(t, missed, due);
		break;
	case HWLAT_MODE_ROUND_ROBIN:
		hwlat_window_round_robin(t, missed, due, window_ns);
		break;
	default:
		hwlat_window_none(t, missed, due, window_ns);
		break;
	}
	t->width_end_ns = hwlat_mono_ns();
}

/*
 * Where the thread runs, set again by the thread itself: from 6.14 a new
 * kthread's first run moves it to its node's housekeeping CPUs, undoing an
 * affinity set before it woke.
 */
static void hwlat_thread_place(struct hwlat_thread *t)
{
	if (t->mode == HWLAT_MODE_PER_CPU)
		set_cpus_allowed_ptr(current, cpumask_of(t->cpu));
	else if (hwlat_where(t->home, -1))
		set_cpus_allowed_ptr(current, t->home);
}

static int hwlat_thread_fn(void *data)
{
	struct hwlat_thread *t = data;
	struct hwlat_config cfg;
	u64 due;

	hwlat_thread_place(t);
	while (hwlat_sleep(t, &cfg, &due))
		hwlat_window(t, due, cfg.window_ns);
	hwlat_skip_at_stop(t, due, cfg.window_ns);

	/* Asked to stop early: idle until kthread_stop() collects us. */
	complete(&t->done);
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
	free_cpumask_var(t->away);
	free_cpumask_var(t->target);
	free_cpumask_var(t->home);
	free_cpumask_var(t->allowed);
	kfree(t);
}

static struct hwlat_thread *hwlat_thread_alloc(enum hwlat_mode mode, int cpu,
					       const struct cpumask *allowed)
{
	struct hwlat_thread *t;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	if (!zalloc_cpumask_var(&t->allowed, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&t->home, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&t->target, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&t->away, GFP_KERNEL)) {
		hwlat_thread_free(t);
		return NULL;
	}
	cpumask_copy(t->allowed, allowed);
	t->mode = mode;
	t->cpu = cpu;
	init_completion(&t->done);
	raw_spin_lock_init(&t->reach_lock);
	mutex_init(&t->release_lock);
	INIT_DELAYED_WORK(&t->reach_work, hwlat_reach_timeout);
	return t;
}

/*
 * The samplers' priority (the priority parameter): SCHED_FIFO, so that a
 * width starts on time and preempts any task of a lower priority, or left
 * SCHED_NORMAL for 0.
 */
static int hwlat_thread_sched(struct task_struct *task)
{
	int prio = hwlat_get_priority();

	return prio ? hwlat_sched_fifo(task, prio) : 0;
}

/*
 * Creates and starts a sampling thread; @cpu is its CPU in per-cpu mode.
 * It is never bound for good (kthread_bind()): a stopping thread that a
 * task it cannot preempt holds off its CPU must be movable elsewhere.
 */
static struct hwlat_thread *hwlat_thread_start(enum hwlat_mode mode,
					       unsigned int cpu,
					       const struct cpumask *allowed)
{
	bool pcpu = mode == HWLAT_MODE_PER_CPU;
	struct task_struct *task;
	struct hwlat_thread *t;
	int ret = -ENOMEM;

	t = hwlat_thread_alloc(mode, pcpu ? cpu : -1, allowed);
	if (!t)
		goto err;
	if (pcpu)
		task = kthread_create(hwlat_thread_fn, t, "hwlatd/%u", cpu);
	else
		task = kthread_create(hwlat_thread_fn, t, "hwlatd");
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto err;
	}
	t->task = task;
	if (pcpu)
		ret = set_cpus_allowed_ptr(task, cpumask_of(cpu));
	else if (hwlat_where(t->home, -1))
		ret = set_cpus_allowed_ptr(task, t->home);
	if (!ret)
		ret = hwlat_thread_sched(task);
	if (ret) {
		kthread_stop(task);
		goto err;
	}
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

/*
 * Waits for the current width (at most 1 s) and frees the thread. A thread
 * that does not leave its loop is held off its CPU: it is moved off it,
 * again and again, until it runs.
 */
static void hwlat_thread_stop(struct hwlat_thread *t)
{
	hwlat_thread_request_stop(t);
	while (!wait_for_completion_timeout(&t->done,
					    msecs_to_jiffies(HWLAT_RELEASE_MS)))
		hwlat_release(t);
	cancel_delayed_work_sync(&t->reach_work);
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

	hwlat_width_setup();
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
