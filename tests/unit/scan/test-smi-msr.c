/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proves the monitor's SMI count (service/smi-msr.c): which CPU it reads
 * (a housekeeping one: online, neither isolated nor nohz_full, in the
 * process's affinity), the 32-bit counter's wrap, the deltas read from a
 * fake /dev/cpu/N/msr (8 bytes at offset 0x34), and "unavailable" with its
 * reason when the file is missing or the read comes up short.
 */
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "smi-msr.h"
#include "unit-test.h"

static void test_pick(void)
{
	cpu_set_bits all, three = {};

	memset(&all, 0xff, sizeof(all));
	three.bits[0] = 1 << 3;
	ok(smi_msr_pick_cpu(&all, "0-3", "0", "1") == 2,
	   "online 0-3, isolated 0, nohz_full 1: CPU 2");
	ok(smi_msr_pick_cpu(&all, "0-3", "", "") == 0, "nothing set apart: CPU 0");
	ok(smi_msr_pick_cpu(&three, "0-3", "", "") == 3, "affinity 3 only: CPU 3");
	ok(smi_msr_pick_cpu(&three, "0-3", "3", "") == -1,
	   "the only allowed CPU is isolated: none (-1), never an isolated CPU");
	ok(smi_msr_pick_cpu(&all, "", "", "") == -1, "online unknown: none");
	ok(smi_msr_pick_cpu(&all, "0-1", "0-1", "") == -1, "every CPU isolated: none");
}

/* The counter file: value at offset MSR_SMI_COUNT, the high half junk. */
static void put_counter(const char *name, uint64_t v)
{
	char buf[MSR_SMI_COUNT + 8] = {};

	v |= UINT64_C(0xdead) << 32; /* bits 63:32 are not the counter */
	memcpy(buf + MSR_SMI_COUNT, &v, sizeof(v));
	put(name, "");
	if (write_file_len(at(name), buf, sizeof(buf)) < 0)
		bail("counter file");
}

static int first_allowed_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		bail("sched_getaffinity");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return 0;
}

static void test_read(void)
{
	int cpu = first_allowed_cpu();
	char online[16], name[64];
	smi_msr m;
	uint64_t d = 99;
	bool r;

	snprintf(online, sizeof(online), "%d\n", cpu);
	put("root/sys/devices/system/cpu/online", online);
	snprintf(name, sizeof(name), "msr/%d/msr", cpu);
	put_counter(name, 10);
	smi_msr_open(&m, at("root"), at("msr"));
	ok(m.cpu == cpu && m.fd >= 0, "CPU %d chosen and its msr file open", cpu);
	r = smi_msr_delta(&m, &d);
	ok(!r && m.have_last && m.last == 10, "the first reading is no delta (a base: 10)");
	put_counter(name, 15);
	r = smi_msr_delta(&m, &d);
	ok(r && d == 5, "10 -> 15: 5 SMIs (got %llu)", (unsigned long long)d);
	put_counter(name, 2);
	r = smi_msr_delta(&m, &d);
	ok(r && d == 4294967283ULL, "15 -> 2: the 32-bit counter wrapped, 2^32 - 13 SMIs");
	ok(smi_msr_wrap_delta(0xfffffffeULL, 1) == 3, "0xfffffffe -> 1 is 3");
	put(name, "short");
	r = smi_msr_delta(&m, &d);
	ok(!r && !m.have_last && strstr(m.reason, "cannot be read on CPU") &&
		   strstr(m.reason, "short read"),
	   "a short read: unavailable, '%s'", m.reason);
	put_counter(name, 20);
	r = smi_msr_delta(&m, &d);
	ok(!r && m.have_last, "after a failure the next reading is a new base, no delta");
	smi_msr_close(&m);

	smi_msr_open(&m, at("root"), at("nomsr"));
	ok(m.fd < 0 && !smi_msr_delta(&m, &d) && strstr(m.reason, "does not exist (the msr "
								"module is not loaded: modprobe msr)"),
	   "no msr file: unavailable, '%s'", m.reason);
	smi_msr_close(&m);
	put("root/sys/devices/system/cpu/isolated", online);
	smi_msr_open(&m, at("root"), at("msr"));
	ok(m.cpu == -1 && m.fd < 0 && strstr(m.reason, "no housekeeping CPU"),
	   "the only CPU isolated: none read, '%s'", m.reason);
	smi_msr_close(&m);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	scratch_init();
	test_pick();
	test_read();
	scratch_done();
	return tap_finish();
}
