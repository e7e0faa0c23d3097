/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hwlat_detector: which gaps of one loop iteration held NMIs.
 *
 * Pure arithmetic on clock readings, no kernel state: the width loop calls
 * it, and tests/kernel/unit compiles this header on the host to check it
 * against worked examples that no guest can arrange (two NMIs inside one
 * iteration of a few hundred nanoseconds).
 */
#ifndef _HWLAT_NMI_PLACE_H
#define _HWLAT_NMI_PLACE_H

#include <linux/types.h>

/*
 * Entry times a CPU keeps of its latest NMIs (a power of two). Two NMIs in
 * one iteration already need the ring: a second NMI latched while the first
 * is handled arrives right after it. When more than this many come between
 * two looks, the oldest times are gone and every gap counts as holding one.
 */
#define HWLAT_NMI_RING		4

/*
 * NMIs number @seen to @now - 1 (a count that only grows) arrived since the
 * loop last looked; NMI n entered at @at[n % HWLAT_NMI_RING]. The iteration
 * read the clock at @prev (end of the last one), @t1 and @t2: an NMI that
 * entered by @t1 is in the outer gap [prev, t1], by @t2 in the inner gap
 * [t1, t2], later in the next outer gap. Each gap that held one or more is
 * added to *@nmi_ns once, whatever its size. @outer_timed: the outer gap was
 * already added (an NMI after the previous iteration's @t2 was in it).
 * Returns true when the next outer gap holds one.
 */
static inline bool hwlat_nmi_place(const u64 *at, u64 seen, u64 now,
				   u64 prev, u64 t1, u64 t2,
				   bool outer_timed, u64 *nmi_ns)
{
	bool outer = false, inner = false, after = false;
	u64 n;

	if (now - seen > HWLAT_NMI_RING) {
		outer = true;
		inner = true;
		after = true;
	} else {
		for (n = seen; n != now; n++) {
			u64 t = at[n & (HWLAT_NMI_RING - 1)];

			if (t <= t1)
				outer = true;
			else if (t <= t2)
				inner = true;
			else
				after = true;
		}
	}
	if (outer && !outer_timed)
		*nmi_ns += t1 - prev;
	if (inner)
		*nmi_ns += t2 - t1;
	return after;
}

#endif /* _HWLAT_NMI_PLACE_H */
