// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: attribution of gaps to NMIs and SMIs.
 *
 * The NMI handler never claims an NMI: it only notes, on the CPU that took
 * it, that an NMI arrived while that CPU was sampling and when. SMIs are
 * counted with MSR_SMI_COUNT where Intel CPUs provide it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/processor.h>

#include "hwlat.h"

#ifndef MSR_SMI_COUNT
#define MSR_SMI_COUNT 0x00000034
#endif

/*
 * The counter is 32 bits wide, so the two-halves rdmsr_safe() suffices: it
 * has the same name from 6.1 to 7.x, whereas 6.16 renamed the 64-bit
 * accessors (rdmsrl* to rdmsrq*) and later kernels dropped
 * rdmsr_safe_on_cpu(). Remote reads therefore go through
 * smp_call_function_single() with our own callback.
 */
static int hwlat_smi_read_local(u32 *val)
{
	u32 hi;

	return rdmsr_safe(MSR_SMI_COUNT, val, &hi);
}

struct hwlat_smi_read {
	u32 val;
	int err;
};

static void hwlat_smi_read_ipi(void *info)
{
	struct hwlat_smi_read *rd = info;

	rd->err = hwlat_smi_read_local(&rd->val);
}

static int hwlat_smi_read_on(unsigned int cpu, u32 *val)
{
	struct hwlat_smi_read rd = { .err = -EIO };
	int ret;

	ret = smp_call_function_single(cpu, hwlat_smi_read_ipi, &rd, 1);
	if (ret)
		return ret;
	if (rd.err)
		return rd.err;
	*val = rd.val;
	return 0;
}

static bool hwlat_smi;
static bool hwlat_nmi_registered;

static int hwlat_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct hwlat_cpu *hc = this_cpu_ptr(&hwlat_cpu);

	if (READ_ONCE(hc->sampling)) {
		WRITE_ONCE(hc->nmi_last_ns, ktime_get_mono_fast_ns());
		WRITE_ONCE(hc->nmi_count, hc->nmi_count + 1);
	}
	return NMI_DONE;
}

int hwlat_smi_state_alloc(struct hwlat_smi_state *st)
{
	st->prev = kcalloc(nr_cpu_ids, sizeof(*st->prev), GFP_KERNEL);
	st->valid = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
	if (!st->prev || !st->valid) {
		hwlat_smi_state_free(st);
		return -ENOMEM;
	}
	return 0;
}

void hwlat_smi_state_free(struct hwlat_smi_state *st)
{
	kfree(st->prev);
	bitmap_free(st->valid);
	st->prev = NULL;
	st->valid = NULL;
}

/* Adds the SMIs @cpu took since the last reading to *sum; @val is the MSR. */
static void hwlat_smi_account(struct hwlat_smi_state *st, unsigned int cpu,
			      u32 now, u64 *sum)
{
	if (test_bit(cpu, st->valid))
		*sum += (u32)(now - st->prev[cpu]);
	st->prev[cpu] = now;
	__set_bit(cpu, st->valid);
}

/*
 * SMIs taken by the current CPU since the previous call for it. Reads the
 * local MSR only, so it may run with interrupts off; the caller keeps the
 * thread on this CPU.
 */
u64 hwlat_smi_collect_local(struct hwlat_smi_state *st)
{
	unsigned int cpu = smp_processor_id();
	u64 sum = 0;
	u32 val;

	if (!hwlat_smi)
		return 0;
	if (hwlat_smi_read_local(&val)) {
		__clear_bit(cpu, st->valid);
		return 0;
	}
	hwlat_smi_account(st, cpu, val, &sum);
	return sum;
}

/*
 * SMIs taken by every online CPU since the previous call. Sends IPIs to the
 * other CPUs: interrupts must be on and the caller holds cpus_read_lock().
 * A CPU that was offline at the previous call starts a new baseline.
 */
u64 hwlat_smi_collect_online(struct hwlat_smi_state *st)
{
	unsigned int cpu;
	u64 sum = 0;
	u32 val;

	if (!hwlat_smi)
		return 0;
	for_each_possible_cpu(cpu) {
		if (!cpu_online(cpu) || hwlat_smi_read_on(cpu, &val)) {
			__clear_bit(cpu, st->valid);
			continue;
		}
		hwlat_smi_account(st, cpu, val, &sum);
	}
	return sum;
}

int hwlat_attrib_init(void)
{
	u32 val;
	int ret;

	hwlat_smi = boot_cpu_data.x86_vendor == X86_VENDOR_INTEL &&
		    !hwlat_smi_read_local(&val);
	pr_info("SMI counting %s\n", hwlat_smi ?
		"enabled (MSR_SMI_COUNT)" : "unavailable on this CPU, SMI counts are 0");

	ret = register_nmi_handler(NMI_LOCAL, hwlat_nmi_handler, 0, HWLAT_NAME);
	if (ret) {
		pr_err("cannot register the NMI handler: %d\n", ret);
		return ret;
	}
	hwlat_nmi_registered = true;
	return 0;
}

void hwlat_attrib_exit(void)
{
	/* unregister_nmi_handler() waits for running handlers (RCU). */
	if (hwlat_nmi_registered)
		unregister_nmi_handler(NMI_LOCAL, HWLAT_NAME);
	hwlat_nmi_registered = false;
}
