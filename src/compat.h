/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hwlat_detector: what differs between the kernels the module supports,
 * Linux 5.10 and newer. Where a vendor kernel may carry a change before or
 * after the version that brought it upstream, src/Kbuild asks the kernel's
 * headers and defines HWLAT_HAVE_* instead of comparing version numbers.
 */
#ifndef _HWLAT_COMPAT_H
#define _HWLAT_COMPAT_H

#include <linux/sched/isolation.h>

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

#endif /* _HWLAT_COMPAT_H */
