// SPDX-License-Identifier: GPL-2.0
/*
 * nmi-probe: proves the lab's host-side NMI injection reaches the guest:
 * asks the host for NMIs (the "HWLAT-LAB: inject-nmi" line that
 * `tests/kernel/lab --qmp PATH --inject-nmi N` waits for) and checks that the
 * NMI counts of /proc/interrupts grow by at least N within 20 s.
 *
 *   nmi-probe N
 *
 * Runs inside the QEMU guest only (tests/kernel/lab).
 */
#define _GNU_SOURCE
#include "lab.h"
#include "nmi-count.h"

/* Sum of the per-CPU NMI counts of /proc/interrupts, or -1. */
static long long nmi_total(void)
{
	unsigned long long v[1024];
	long long total = 0;
	int n = nmi_counts(v, 1024);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		total += (long long)v[i];
	return total;
}

int main(int argc, char **argv)
{
	long long want, before, now = -1;
	uint64_t deadline;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || (want = atoll(argv[1])) < 1) {
		fprintf(stderr, "nmi-probe: usage: nmi-probe N (N >= 1)\n");
		return 2;
	}
	before = nmi_total();
	if (!ok(before >= 0, "/proc/interrupts has an NMI line"))
		return tap_done();
	printf("HWLAT-LAB: inject-nmi\n");
	deadline = now_ns() + 20000000000ull;
	while (now_ns() < deadline) {
		now = nmi_total();
		if (now - before >= want)
			break;
		sleep_ms(100);
	}
	if (!ok(now - before >= want, "%lld NMIs injected from the host arrive", want))
		diag("NMI count went from %lld to %lld", before, now);
	return tap_done();
}
