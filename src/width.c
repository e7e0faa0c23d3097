// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: one width, the loop that runs with interrupts off.
 *
 * A width is a busy loop that reads the clock twice per iteration: a large
 * difference between the two reads (inner gap) or between the second read
 * and the next iteration's first (outer gap) is time the CPU spent somewhere
 * the kernel cannot see: SMM, a hypervisor, a stall. The loop touches only
 * its locals and its own CPU's struct hwlat_cpu.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/irqflags.h>
#include <linux/minmax.h>
#include <linux/rcupdate.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <asm/cpufeature.h>
#include <asm/tsc.h>

#include "hwlat.h"
#include "nmi_place.h"

DEFINE_PER_CPU_ALIGNED(struct hwlat_cpu, hwlat_cpu);

/* Reads of a clock that stand still; see hwlat_clock_stopped(). */
struct hwlat_still {
	unsigned long reads;
	u64 since;		/* TSC when the clock stopped moving */
};

static u64 hwlat_floor;
/* HWLAT_STILL_MS in TSC cycles; 0 without a TSC (the read count decides). */
static u64 hwlat_still_cycles;

void hwlat_width_setup(void)
{
	if (boot_cpu_has(X86_FEATURE_TSC))
		hwlat_still_cycles = (u64)tsc_khz * HWLAT_STILL_MS;
}

u64 hwlat_get_floor_ns(void)
{
	return READ_ONCE(hwlat_floor);
}

void hwlat_reset_floor(void)
{
	WRITE_ONCE(hwlat_floor, 0);
}

void hwlat_set_floor(u64 ns)
{
	WRITE_ONCE(hwlat_floor, ns);
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

/*
 * The detection floor: the median inner delta, the cost of one read. A
 * clock coarser than its read (the ACPI PM timer ticks every 279 ns) returns
 * the same value to most back-to-back reads, and its median delta is 0: its
 * floor is then its step, the smallest delta above 0 it showed.
 */
static u64 hwlat_hist_floor(const u32 *hist)
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
	if (i)
		return hwlat_hist_value(i);
	for (i = 1; i < HWLAT_HIST_NR && !hist[i]; i++)
		;
	return hwlat_hist_value(i < HWLAT_HIST_NR ? i : 0);
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
 * NMIs @seen to @now - 1 came since the last look: nmi_place.h says which
 * gaps held them. Their times are copied only after the count that covers
 * them was read (the handler writes the time, then the count); if more NMIs
 * overwrote those slots meanwhile, every gap of the iteration counts as
 * holding one.
 */
static bool hwlat_nmi_seen(struct hwlat_width *w, const struct hwlat_cpu *hc,
			   u64 seen, u64 now, u64 prev, u64 t1, u64 t2,
			   bool outer_timed)
{
	u64 at[HWLAT_NMI_RING];

	barrier();
	memcpy(at, hc->nmi_at, sizeof(at));
	barrier();
	if (unlikely(READ_ONCE(hc->nmi_count) - seen > HWLAT_NMI_RING))
		now = seen + HWLAT_NMI_RING + 1;
	return hwlat_nmi_place(at, seen, now, prev, t1, t2, outer_timed,
			       &w->nmi_ns);
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
	return hwlat_clock_ns();
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
 * With interrupts off this CPU reports no quiescent state, so every grace
 * period of the machine (synchronize_rcu(): module loads, network and
 * cgroup changes) would wait for the width to end. stop_machine()'s and
 * osnoise's loops report a momentary one for the same reason; it is one
 * increment of this CPU's RCU state, between @t2 and the next read, so it
 * lands in an outer gap, never in the inner deltas that make the floor.
 */
static __always_inline void hwlat_rcu_qs(void)
{
#if defined(HWLAT_HAVE_RCU_MOMENTARY_EQS)
	rcu_momentary_eqs();
#elif defined(HWLAT_HAVE_RCU_MOMENTARY_DYNTICK_IDLE)
	rcu_momentary_dyntick_idle();
#endif
}

/* Per iteration: the two gaps, their histogram and their attribution. */
struct hwlat_loop {
	u64 prev;
	u64 inner;
	u64 outer;
	u64 nmi_seen;
	u64 qs_at;
	bool nmi_next;
};

static __always_inline void hwlat_iteration(struct hwlat_width *w,
					    struct hwlat_cpu *hc,
					    struct hwlat_loop *l, u64 t1, u64 t2)
{
	const u64 threshold = w->threshold_ns;
	bool outer_timed = l->nmi_next;
	u64 d, over = 0, nmi;

	d = t1 - l->prev;
	if (d > l->outer)
		l->outer = d;
	if (unlikely(d > threshold)) {
		hwlat_gap(w, l->prev);
		over += d;
	}
	if (unlikely(l->nmi_next)) {
		w->nmi_ns += d;
		l->nmi_next = false;
	}
	d = t2 - t1;
	hc->hist[hwlat_hist_idx(d)]++;
	if (d > l->inner)
		l->inner = d;
	if (unlikely(d > threshold)) {
		hwlat_gap(w, t1);
		over += d;
	}
	nmi = READ_ONCE(hc->nmi_count);
	if (unlikely(nmi != l->nmi_seen)) {
		l->nmi_next = hwlat_nmi_seen(w, hc, l->nmi_seen, nmi, l->prev,
					     t1, t2, outer_timed);
		l->nmi_seen = nmi;
	}
	if (unlikely(over))
		t2 = hwlat_smi_after_gap(w, t2, over);
	if (unlikely(t2 - l->qs_at > HWLAT_QS_NS)) {
		hwlat_rcu_qs();
		l->qs_at = t2;
	}
	l->prev = t2;
}

/*
 * One width on the current CPU. Interrupts are off: the caller disabled
 * them, or stop_machine() did. Everything written here is this CPU's own.
 */
void hwlat_width_run(struct hwlat_width *w)
{
	struct hwlat_cpu *hc = this_cpu_ptr(&hwlat_cpu);
	struct hwlat_still still = {};
	struct hwlat_loop l = {};
	u64 start, t1, t2, nmi0;

	lockdep_assert_irqs_disabled();
	w->cpu = smp_processor_id();
	memset(hc->hist, 0, sizeof(hc->hist));
	hwlat_smi_begin(w);
	nmi0 = READ_ONCE(hc->nmi_count);
	l.nmi_seen = nmi0;
	WRITE_ONCE(hc->sampling, 1);
	barrier();

	start = hwlat_clock_ns();
	l.prev = start;
	l.qs_at = start;
	do {
		t1 = hwlat_clock_ns();
		t2 = hwlat_clock_ns();
		if (unlikely(t1 < l.prev || t2 < t1) &&
		    !hwlat_backstep(w, l.prev, &t1, &t2))
			break;
		if (likely(t2 != l.prev)) {
			still.reads = 0;
		} else if (hwlat_clock_stopped(&still)) {
			w->invalid = "clock stopped";
			break;
		}
		hwlat_iteration(w, hc, &l, t1, t2);
	} while (l.prev - start < w->width_ns);

	barrier();
	WRITE_ONCE(hc->sampling, 0);
	barrier();
	/*
	 * The time since the last look is an outer gap like the others: an
	 * NMI or SMI that came after the last look is in it, and nmi_ns must
	 * not hold more than the gaps it was taken from.
	 */
	t1 = hwlat_clock_ns();
	if (!w->invalid && t1 > l.prev)
		hwlat_exit_gap(w, l.prev, t1, &l.outer,
			       l.nmi_next ||
			       READ_ONCE(hc->nmi_count) != l.nmi_seen);
	hwlat_add_sampled(hc, w, start, max(t1, l.prev));
	hwlat_smi_end(w);
	w->ran = true;
	w->start_ns = start;
	w->inner_ns = l.inner;
	w->outer_ns = l.outer;
	w->nmi_count = READ_ONCE(hc->nmi_count) - nmi0;
	w->floor_ns = hwlat_hist_floor(hc->hist);
}
