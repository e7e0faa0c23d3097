/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hwlat_detector: what differs between the kernels the module supports,
 * Linux 5.10 and newer. Where a vendor kernel may carry a change before or
 * after the version that brought it upstream, src/Kbuild asks the kernel's
 * headers and defines HWLAT_HAVE_* instead of comparing version numbers.
 */
#ifndef _HWLAT_COMPAT_H
#define _HWLAT_COMPAT_H

#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/sched/prio.h>
#include <linux/version.h>
#include <uapi/linux/sched/types.h>

/*
 * A kernel below the minimum would fail with compiler errors that do not
 * say why; dkms.conf refuses it before building, this says it to everyone
 * else.
 */
#if KERNEL_VERSION(5, 10, 0) > LINUX_VERSION_CODE
#error "hwlat_detector needs Linux 5.10 or newer: these kernel headers are older"
#endif

/*
 * 5.18 turned the housekeeping flags (HK_FLAG_TICK, a bit mask) into types
 * (HK_TYPE_TICK, an enum); housekeeping_cpumask() takes either.
 */
#ifdef HWLAT_HAVE_HK_TYPE
#define HWLAT_HK_TICK	HK_TYPE_TICK
#define HWLAT_HK_DOMAIN	HK_TYPE_DOMAIN
#else
#define HWLAT_HK_TICK	HK_FLAG_TICK
#define HWLAT_HK_DOMAIN	HK_FLAG_DOMAIN
#endif

/*
 * sched_setattr_nocheck() is not exported by 5.10 (6.1 exports it): there a
 * module can make a thread SCHED_FIFO at 1 (sched_set_fifo_low()) or at
 * MAX_RT_PRIO / 2 (sched_set_fifo()) only. The priority this kernel gives
 * for @want (1 to 99); main.c says so at load when it is not @want.
 */
static inline int hwlat_fifo_priority_possible(int want)
{
#ifdef HWLAT_HAVE_SCHED_SETATTR_NOCHECK
	return want;
#else
	return want == 1 ? 1 : MAX_RT_PRIO / 2;
#endif
}

/* Makes @task SCHED_FIFO at a priority hwlat_fifo_priority_possible() gave. */
static inline int hwlat_sched_fifo(struct task_struct *task, int prio)
{
#ifdef HWLAT_HAVE_SCHED_SETATTR_NOCHECK
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};

	return sched_setattr_nocheck(task, &attr);
#else
	if (prio == 1)
		sched_set_fifo_low(task);
	else
		sched_set_fifo(task);
	return 0;
#endif
}

#endif /* _HWLAT_COMPAT_H */
