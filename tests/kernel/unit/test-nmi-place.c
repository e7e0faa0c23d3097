// SPDX-License-Identifier: GPL-2.0
/*
 * test-nmi-place: src/nmi_place.h, which gaps of one loop iteration held
 * NMIs, against worked examples. One iteration reads the clock at prev (the
 * end of the last), t1 and t2: outer gap [prev, t1], inner gap [t1, t2].
 * Two NMIs in one iteration (a second one latched while the first is
 * handled arrives right after it) must both be placed, and each gap that
 * held any must count once in nmi_ns. The module before this header kept
 * only the last NMI's time: the first of two lost its gap.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../../src/nmi_place.h"

static int n, failed;

static void check(int cond, const char *what, u64 got_ns, u64 want_ns, int got_after,
		  int want_after)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
	if (!cond)
		printf("# nmi_ns %" PRIu64 " (want %" PRIu64 "), after %d (want %d)\n", got_ns,
		       want_ns, got_after, want_after);
}

struct example {
	const char *what;
	u64 at[HWLAT_NMI_RING]; /* entry times by NMI number modulo the ring */
	u64 seen, now;
	int outer_timed;
	u64 want_ns;
	int want_after;
};

/* prev 1000, t1 1100 (outer gap 100), t2 1300 (inner gap 200). */
static const struct example examples[] = {
	{ "one NMI in the outer gap: the outer gap (100 ns)", { 1050 }, 0, 1, 0, 100, 0 },
	{ "one NMI in the inner gap: the inner gap (200 ns)", { 1200 }, 0, 1, 0, 200, 0 },
	{ "one NMI after t2: no gap yet, the next outer gap holds it", { 1400 }, 0, 1, 0, 0, 1 },
	{ "an NMI at t1 exactly is in the outer gap", { 1100 }, 0, 1, 0, 100, 0 },
	{ "an NMI at t2 exactly is in the inner gap", { 1300 }, 0, 1, 0, 200, 0 },
	{ "two NMIs, outer then inner: both gaps (300 ns)", { 1050, 1200 }, 0, 2, 0, 300, 0 },
	{ "two NMIs, outer then after t2: the outer gap, and the next one", { 1050, 1400 }, 0, 2,
	  0, 100, 1 },
	{ "two NMIs in the inner gap: the inner gap once (200 ns)", { 1150, 1250 }, 0, 2, 0, 200,
	  0 },
	{ "two NMIs in the outer gap: the outer gap once (100 ns)", { 1010, 1090 }, 0, 2, 0, 100,
	  0 },
	{ "outer gap already timed by an NMI of the last iteration: not again", { 1050 }, 0, 1, 1,
	  0, 0 },
	{ "outer already timed, a second NMI in the inner gap: the inner gap only", { 1050, 1200 },
	  0, 2, 1, 200, 0 },
	{ "NMIs 5 and 6 (slots 1 and 2) of a running count", { 0, 1050, 1200, 0 }, 5, 7, 0, 300, 0 },
	{ "the count wraps past the ring: slots 3 then 0", { 1200, 0, 0, 1050 }, 3, 5, 0, 300, 0 },
	{ "4 NMIs, as many as the ring holds: placed by their times", { 1050, 1060, 1070, 1080 },
	  0, 4, 0, 100, 0 },
	{ "5 NMIs, more than the ring holds: every gap holds one", { 1050, 1060, 1070, 1080 }, 0, 5,
	  0, 300, 1 },
	{ "no new NMI: nothing", { 1050 }, 1, 1, 0, 0, 0 },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		const struct example *e = &examples[i];
		u64 ns = 0;
		int after = hwlat_nmi_place(e->at, e->seen, e->now, 1000, 1100, 1300,
					    e->outer_timed, &ns);

		check(ns == e->want_ns && after == e->want_after, e->what, ns, e->want_ns, after,
		      e->want_after);
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
