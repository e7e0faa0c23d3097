// SPDX-License-Identifier: GPL-2.0
/*
 * floor-probe: what one read of the samplers' clock costs on this guest,
 * for bench/clock-cost. For round-robin (one CPU reads at a time) and
 * per-cpu (every CPU reads at once, so a clock that is one shared device
 * contends), it samples 3 s of 100 ms widths and prints
 *
 *   floor <clocksource> <clock> <mode> <floor ns> <windows over 20 us> <largest gap ns>
 *
 * floor: the module's median time between two back-to-back reads, that is
 * the cost of one read; the windows and the largest gap: what the clock's
 * own cost turns into at a 20 us threshold on a guest with nothing else to
 * report. It checks only that it could read those (TAP), never a figure.
 *
 * Runs inside the QEMU guest only (tests/kernel/lab).
 */
#define _GNU_SOURCE
#include "lab.h"

static void probe(const char *cs, const char *clock, const char *mode)
{
	struct stream_acc a = { 0 };
	long long floor_ns;

	configure(mode, 20, 100000, 200000);
	wr("enable", "1");
	read_stream(&a, 3000, 0, 65536, NULL);
	floor_ns = rdnum("floor");
	wr("enable", "0");
	if (ok(floor_ns > 0, "%s: the floor is known after 3 s", mode))
		printf("floor %s %s %s %lld %" PRIu64 " %" PRIu64 "\n", cs, clock, mode, floor_ns,
		       a.lines, a.max_gap);
}

int main(void)
{
	char cs[64] = "", clock[64] = "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	rd_path("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs,
		sizeof(cs));
	rd("clock", clock, sizeof(clock));
	cs[strcspn(cs, "\n")] = '\0';
	clock[strcspn(clock, "\n")] = '\0';
	ok(cs[0] && clock[0], "clocksource \"%s\", module clock \"%s\"", cs, clock);
	probe(cs, clock, "round-robin");
	probe(cs, clock, "per-cpu");
	return tap_done();
}
