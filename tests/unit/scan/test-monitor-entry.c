/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proves the monitor's interval summary entry (service/monitor-entry.c):
 * its MESSAGE_ID, message and every field of docs/interfaces.md for an
 * interval with gaps, folded windows, SMIs and pauses; and "unavailable"
 * with its reason, never 0, for SMIs that could not be counted.
 */
#include <string.h>

#include "hwlat-journal.h"
#include "monitor-entry.h"
#include "unit-test.h"

static journal_entry e;

int main(void)
{
	monitor_interval iv;
	interval_context c = {
		.scan_id = "0123456789abcdef0123456789abcdef", .width_ns = 10000000,
		.window_ns = 1000000000, .mode = "round-robin", .cpus = "default", .smi_cpu = 0,
		.smi_unavailable = "", .end = HWLAT_INTERVAL_END_TIME,
	};
	hwlat_sample w1 = { .seq = 1, .inner_ns = 25000, .count = 1 };
	hwlat_sample w2 = { .seq = 2, .cpu = 1, .inner_ns = 3000000, .count = 2, .nmi_count = 1 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	monitor_interval_start(&iv, 3, 1764750000000000000ULL, 10000, 1);
	monitor_interval_sample(&iv, &w1);
	monitor_interval_sample(&iv, &w2);
	iv.duration_ns = 600000000000ULL;
	iv.sampled.v[0] = iv.sampled.v[1] = 2970000000ULL;
	iv.sampled.total = 5940000000ULL;
	iv.sampled.listed.bits[0] = 3;
	iv.paused_ns[PAUSE_SCAN] = 4000000000ULL;
	iv.paused_ns[PAUSE_DETECTOR] = 1500000000ULL;
	iv.pauses[PAUSE_SCAN] = 1;
	iv.pauses[PAUSE_DETECTOR] = 1;
	iv.smi_known = true;
	iv.smis = 7;
	ok(journal_entry_interval(&e, &iv, &c) == 0, "the entry builds");
	ok(field_is(&e, "MESSAGE_ID", HWLAT_INTERVAL_MESSAGE_ID) &&
		   field_is(&e, "MESSAGE", "hardware latency monitor, interval 3: 3 gaps above 10.0 us "
			    "in 2 windows, max 3.00 ms, 5.940 s sampled, 5.500 s paused, SMIs 7, 1 folded") &&
		   field_is(&e, "PRIORITY", "5"),
	   "MESSAGE_ID, the message, PRIORITY 5 (gaps)");
	ok(field_is(&e, "HWLAT_SCAN_ID", c.scan_id) && field_is(&e, "HWLAT_INTERVAL", "3") &&
		   field_is(&e, "HWLAT_INTERVAL_END", "interval") &&
		   field_is(&e, "HWLAT_START_NS", "1764750000000000000") &&
		   field_is(&e, "HWLAT_DURATION_NS", "600000000000") &&
		   field_is(&e, "HWLAT_THRESHOLD_NS", "10000") &&
		   field_is(&e, "HWLAT_WIDTH_NS", "10000000") &&
		   field_is(&e, "HWLAT_WINDOW_NS", "1000000000") &&
		   field_is(&e, "HWLAT_MODE", "round-robin") && field_is(&e, "HWLAT_CPUS", "default"),
	   "which monitor, which interval, why it ended, when, with which settings");
	ok(field_is(&e, "HWLAT_SAMPLES", "2") && field_is(&e, "HWLAT_GAP_WINDOWS", "2") &&
		   field_is(&e, "HWLAT_GAPS", "3") && field_is(&e, "HWLAT_MAX_NS", "3000000") &&
		   field_is(&e, "HWLAT_GAP_HISTOGRAM", "5e-05:1 0.005:1") &&
		   field_is(&e, "HWLAT_NMI_TOTAL", "1") &&
		   field_is(&e, "HWLAT_UNEXPLAINED_WINDOWS", "1"),
	   "windows, gaps, max, the histogram, NMIs, unexplained");
	ok(field_is(&e, "HWLAT_SMI_TOTAL", "7") && field_is(&e, "HWLAT_SMI_METHOD", "msr") &&
		   field_is(&e, "HWLAT_SMI_CPU", "0") && field_is(&e, "HWLAT_SMI_UNAVAILABLE", NULL),
	   "7 SMIs read on CPU 0, no reason");
	ok(field_is(&e, "HWLAT_SAMPLE_BUDGET", "1") && field_is(&e, "HWLAT_JOURNALED", "1") &&
		   field_is(&e, "HWLAT_FOLDED", "1") &&
		   field_is(&e, "HWLAT_FOLDED_HISTOGRAM", "0.005:1") &&
		   field_is(&e, "HWLAT_FOLDED_SKIP_RECORDS", "0"),
	   "budget 1: one journaled, one folded with its histogram");
	ok(field_is(&e, "HWLAT_PAUSED_NS", "5500000000") &&
		   field_is(&e, "HWLAT_PAUSED_SCAN_NS", "4000000000") &&
		   field_is(&e, "HWLAT_PAUSED_DETECTOR_NS", "1500000000") &&
		   field_is(&e, "HWLAT_PAUSES", "2"),
	   "the pauses: 4 s for a scan, 1.5 s without the detector, 2 of them");
	ok(field_is(&e, "HWLAT_SAMPLED_NS", "5940000000") &&
		   field_is(&e, "HWLAT_SAMPLED_CPU_NS", "0:2970000000 1:2970000000") &&
		   field_is(&e, "HWLAT_SKIPPED_WINDOWS", "0") &&
		   field_is(&e, "HWLAT_SKIPPED_CPU_WINDOWS", "") &&
		   field_is(&e, "HWLAT_DROPPED", "0") && field_is(&e, "HWLAT_BACKEND", "module"),
	   "the time sampled per CPU, skipped, dropped, backend");

	monitor_interval_start(&iv, 4, 1764750600000000000ULL, 10000, 100);
	c.smi_cpu = -1;
	c.smi_unavailable = "no housekeeping CPU";
	c.end = HWLAT_INTERVAL_END_STOP;
	ok(journal_entry_interval(&e, &iv, &c) == 0 &&
		   field_is(&e, "HWLAT_SMI_TOTAL", "unavailable") &&
		   field_is(&e, "HWLAT_SMI_UNAVAILABLE", "no housekeeping CPU") &&
		   field_is(&e, "HWLAT_SMI_CPU", NULL) && field_is(&e, "PRIORITY", "6") &&
		   field_is(&e, "HWLAT_MAX_NS", "0") && field_is(&e, "HWLAT_GAP_HISTOGRAM", "") &&
		   field_is(&e, "HWLAT_INTERVAL_END", "stop") &&
		   field_is(&e, "MESSAGE", "hardware latency monitor, interval 4: 0 gaps above 10.0 us "
			    "in 0 windows, max none, 0.000 s sampled, 0.000 s paused, SMIs unavailable, "
			    "0 folded"),
	   "a quiet last interval without SMIs: unavailable and why, no SMI CPU, PRIORITY 6");
	return tap_finish();
}
