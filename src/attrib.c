// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: attribution of gaps to NMIs and SMIs.
 *
 * The NMI handler never claims an NMI: it only notes, on the CPU that took
 * it, that an NMI arrived while that CPU was sampling and when. SMIs are
 * counted with MSR_SMI_COUNT where Intel CPUs provide it, each CPU reading
 * only its own counter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/processor.h>

#include "hwlat.h"

#ifndef MSR_SMI_COUNT
#define MSR_SMI_COUNT 0x00000034
#endif

/* Why SMIs cannot be counted, or NULL when they can. */
static const char *hwlat_smi_unavailable;
static const char hwlat_smi_hidden[] =
	"unavailable: MSR_SMI_COUNT cannot be read (a hypervisor may hide it)";

/*
 * The counter is 32 bits wide, so the two-halves rdmsr_safe() suffices: it
 * has the same name from 6.1 to 7.x, whereas 6.16 renamed the 64-bit
 * accessors (rdmsrl* to rdmsrq*). Only the current CPU's counter is ever
 * read, from the sampler itself, so no IPI disturbs any other CPU.
 */
int hwlat_smi_read(u32 *val)
{
	u32 hi;

	return rdmsr_safe(MSR_SMI_COUNT, val, &hi);
}

bool hwlat_smi_available(void)
{
	return !hwlat_smi_unavailable;
}

/* The text of the debugfs file "smi" and of the load message. */
const char *hwlat_smi_status(void)
{
	return hwlat_smi_unavailable ? hwlat_smi_unavailable : "MSR_SMI_COUNT";
}

static bool hwlat_nmi_registered;

/*
 * Each NMI's entry time has its own slot, written before the count that
 * makes it visible: the loop reads the count, then the times, so two NMIs
 * between two of its looks are both placed (nmi_place.h). NMIs do not nest
 * on one CPU, and only this CPU's loop reads these, so compiler barriers
 * order them.
 */
static int hwlat_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct hwlat_cpu *hc = this_cpu_ptr(&hwlat_cpu);
	u64 n;

	if (READ_ONCE(hc->sampling)) {
		n = hc->nmi_count;
		WRITE_ONCE(hc->nmi_at[n & (HWLAT_NMI_RING - 1)],
			   hwlat_clock_ns());
		barrier();
		WRITE_ONCE(hc->nmi_count, n + 1);
	}
	return NMI_DONE;
}

int hwlat_attrib_init(void)
{
	u32 val;
	int ret;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL)
		hwlat_smi_unavailable = "unavailable: not an Intel CPU";
	else if (hwlat_smi_read(&val))
		hwlat_smi_unavailable = hwlat_smi_hidden;
	pr_info("SMI counting: %s\n", hwlat_smi_status());

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
