# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of analysis.py on synthetic data (no QEMU, no module).

Proves that the judging logic of the accuracy suite can fail: each
requirement (precision, recall, magnitude, attribution, NMI/SMI totals,
dmesg, stream parsing) has a case where a broken detector is caught, next to
a case where a correct one passes. Run: python3 -m unittest test_analysis
(from tests/accuracy/), or tests/accuracy/run --unit-only.
"""

import random
import re
import tempfile
import unittest

import analysis as a
from analysis import MS, SEC

THR, WIDTH, WINDOW = 20 * MS, 900 * MS, 1000 * MS
HOST0 = 1_780_000_000 * SEC          # some host realtime
OFFSET = -734 * MS                   # guest - host, as an RTC-seeded guest has
GUEST0 = HOST0 + OFFSET              # guest time of the sampling mark


def line(seq, cpu, ts, inner, outer, count=1, nmi=0, nmi_ns=0, smi=0):
    return a.parse_stream_line(f"{seq} {cpu} {ts // SEC}.{ts % SEC:09d} {inner} {outer} "
                               f"{count} {nmi} {nmi_ns} {smi}")


def scenario(n=24, per_cpu=False, seed=7, miss_every=0):
    """Stalls 1.5-2.5 s apart, 20-300 ms long; the detector reports each at
    its end (guest clock) with +0.6 ms, as TCG does, except every
    miss_every-th stall (fell into the sleep part)."""
    rnd = random.Random(seed)
    stalls, samples = [], []
    t = HOST0 + 2 * SEC
    seq = 0
    for i in range(n):
        dur = rnd.randint(20, 300) * MS
        st = a.Stall(t, t + dur)
        stalls.append(st)
        if not (miss_every and i % miss_every == 0):
            for cpu in ((0, 1) if per_cpu else (i % 2,)):
                seq += 1
                samples.append(line(seq, cpu, st.end + OFFSET + 50_000, 400, dur + 600_000))
        t += rnd.randint(1500, 2500) * MS
    return stalls, samples


class StreamParse(unittest.TestCase):
    def test_good_line(self):
        s = a.parse_stream_line("12 1 1780000000.000000123 500 200600000 3 0 0 0")
        self.assertEqual((s.seq, s.cpu, s.ts, s.latency, s.count),
                         (12, 1, 1780000000 * SEC + 123, 200600000, 3))

    def test_bad_lines_are_named(self):
        for bad in ("12 1 1780000000.123 5 5 1 0 0 0",       # nsec not 9 digits
                    "12 1 1780000000.000000123 5 5 1 0 0",   # field missing
                    "12 1 1780000000.000000123 5 -5 1 0 0 0",
                    "12 1 1780000000.000000123 5 5 1 0 0 0 junk",
                    ""):
            with self.assertRaises(a.GuestError) as cm:
                a.parse_stream_line(bad)
            self.assertIn(repr(bad), str(cm.exception))

    def test_guest_output(self):
        run = a.parse_guest_output([
            "HWLAT-CLOCK 100", "HWLAT-CONFIG threshold=20000 width=900000 mode=per-cpu",
            "HWLAT-NMI before 1 2", "HWLAT-MARK sampling per-cpu 200",
            "HWLAT-SAMPLE 1 0 1.000000000 1 30000000 1 0 0 0",
            "HWLAT-SMI 0 300 1", "HWLAT-NMI after 3 4", "HWLAT-MSR before 5 6",
            "HWLAT-STATS count=1 max=30000 dropped=0 raised_smis=0",
            "HWLAT-MARK done 1", "HWLAT-EXIT 0", "HWLAT-DMESG-BEGIN", "[ 1.0] hello",
            "HWLAT-DMESG-END", "some stray line"])
        self.assertEqual(run.mode, "per-cpu")
        self.assertEqual(run.sampling_mark, 200)
        self.assertEqual(run.nmi, {"before": [1, 2], "after": [3, 4]})
        self.assertEqual(run.smis, [(0, 300, 1)])
        self.assertEqual(run.dmesg, ["[ 1.0] hello"])
        self.assertEqual((run.done, run.exit_status, run.stats["max"]), (1, 0, 30000))
        with self.assertRaises(a.GuestError):
            a.parse_guest_output(["HWLAT-NMI before x"])

    def test_sequence(self):
        ok = [line(1, 0, SEC, 0, 30 * MS), line(3, 0, 2 * SEC, 0, 30 * MS)]
        self.assertEqual(a.check_sequence(ok), [])
        self.assertTrue(a.check_sequence(list(reversed(ok))))


class Offset(unittest.TestCase):
    def test_clock_marks_take_the_earliest_arrival(self):
        marks = [(g, g - OFFSET + d) for g, d in ((1 * SEC, 3 * MS), (2 * SEC, 1 * MS),
                                                  (3 * SEC, 40 * MS))]
        self.assertEqual(a.offset_from_clock_marks(marks), OFFSET - 1 * MS)
        self.assertIsNone(a.offset_from_clock_marks([]))

    def test_refine_stays_in_bounds(self):
        stalls, samples = scenario()
        # The true offset is outside [coarse - 5 ms, coarse + 100 ms]: the
        # refinement must not reach it (and so must not invent a fit).
        off, _ = a.refine_offset(samples, stalls, OFFSET + 300 * MS, search=100 * MS,
                                 below=5 * MS)
        self.assertGreaterEqual(off, OFFSET + 295 * MS)

    def test_refine_finds_true_offset_from_a_coarse_one(self):
        stalls, samples = scenario()
        off, n = a.refine_offset(samples, stalls, OFFSET + 900 * MS)
        self.assertEqual(n, len(samples))
        self.assertLess(abs(off - OFFSET), 2 * MS)


class Coverage(unittest.TestCase):
    """The widths must cover what width / window promises."""

    def grid(self, n, width, window, phase=0):
        return [(phase + k * window, phase + k * window + width) for k in range(n)]

    def test_widths_on_a_grid_cover_the_duty_cycle(self):
        got, why = a.judge_coverage(self.grid(10, WIDTH, WINDOW), 0, 10 * WINDOW, 0.9)
        self.assertAlmostEqual(got, 0.9)
        self.assertIsNone(why)

    def test_widths_that_drift_late_fail(self):
        # Each window 100 ms late (wake-up, report): in 10 s, 9 widths and
        # the first 100 ms of a tenth, 8.2 s.
        drift = [(k * 1_100 * MS, k * 1_100 * MS + WIDTH) for k in range(10)]
        got, why = a.judge_coverage(drift, 0, 10 * WINDOW, 0.9)
        self.assertAlmostEqual(got, 0.82)
        self.assertIn("covered 0.820", why)
        self.assertIn("at least 0.85", why)

    def test_edge_of_the_margin(self):
        widths = self.grid(10, 850 * MS, WINDOW)
        self.assertIsNone(a.judge_coverage(widths, 0, 10 * WINDOW, 0.9)[1])
        widths = self.grid(10, 849 * MS, WINDOW)
        self.assertIsNotNone(a.judge_coverage(widths, 0, 10 * WINDOW, 0.9)[1])

    def test_staggered_cpus_cover_everything_in_phase_ones_do_not(self):
        half = WINDOW // 2
        staggered = self.grid(10, WIDTH, WINDOW) + self.grid(10, WIDTH, WINDOW, half)
        self.assertAlmostEqual(a.coverage(staggered, half, 10 * WINDOW), 1.0)
        in_phase = self.grid(10, WIDTH, WINDOW) * 2
        got, why = a.judge_coverage(in_phase, half, 10 * WINDOW, 1.0)
        # [0.5, 0.9] of the first window, then nine whole widths, of 9.5 s.
        self.assertAlmostEqual(got, (400 * MS + 9 * WIDTH) / (10 * WINDOW - half))
        self.assertIsNotNone(why)

    def test_span_clips_widths_and_empty_span_is_zero(self):
        self.assertAlmostEqual(a.coverage([(-5 * SEC, 5 * SEC)], 0, SEC), 1.0)
        self.assertEqual(a.coverage([(0, SEC)], SEC, SEC), 0.0)


class Stalls(unittest.TestCase):
    def judge(self, stalls, samples, per_cpu=False):
        off, _ = a.refine_offset(samples, stalls, OFFSET + 20 * MS)
        return a.match_stalls(samples, stalls, off, THR, WIDTH, WINDOW, per_cpu)

    def test_correct_detector_passes(self):
        r = self.judge(*scenario())
        self.assertEqual(r.failures, [])
        self.assertEqual((r.recall, r.precision), (1.0, 1.0))
        self.assertAlmostEqual(r.worst_error_ns / MS, 0.6, places=3)

    def test_per_cpu_counts_a_stall_once(self):
        r = self.judge(*scenario(per_cpu=True), per_cpu=True)
        self.assertEqual(r.failures, [])
        self.assertEqual((r.found, r.matched_samples), (24, 48))

    def test_single_sampler_reporting_twice_fails(self):
        stalls, samples = scenario(per_cpu=True)
        r = self.judge(stalls, samples, per_cpu=False)
        # One window per stall is the stall; the duplicate is invented.
        self.assertEqual(r.found, 24)
        self.assertEqual(sum(f.startswith("invented latency") for f in r.failures), 24)

    def test_legitimate_misses_pass_but_too_many_fail(self):
        r = self.judge(*scenario(miss_every=6))          # 4 of 24 missed: 0.83
        self.assertEqual(r.failures, [])
        r = self.judge(*scenario(miss_every=3))          # 8 of 24 missed: 0.67
        self.assertTrue(any(f.startswith("recall 0.67 < 0.80") for f in r.failures),
                        r.failures)

    def test_invented_latency_fails_precision(self):
        stalls, samples = scenario()
        samples.append(line(999, 0, stalls[3].end + OFFSET + 700 * MS, 0, 25 * MS))
        r = self.judge(stalls, samples)
        self.assertLess(r.precision, 1.0)
        self.assertTrue(any(f.startswith("invented latency") for f in r.failures), r.failures)

    def test_measured_host_delay_explains_a_window_but_not_another(self):
        stalls, samples = scenario()
        t = stalls[3].end + 400 * MS               # host time of three noise windows
        samples.append(line(997, 1, t + OFFSET, 0, 30 * MS))
        samples.append(line(998, 0, t + OFFSET, 0, 30 * MS))
        samples.append(line(999, 0, t + 1000 * MS + OFFSET, 0, 30 * MS))
        delays = [a.HostDelay(t + 28 * MS, t + 30 * MS, 28 * MS, "CPU 0/TCG"),
                  a.HostDelay(t + 1028 * MS, t + 1030 * MS, 5 * MS, "CPU 0/TCG")]
        off, _ = a.refine_offset(samples, stalls, OFFSET)
        r = a.match_stalls(samples, stalls, off, THR, WIDTH, WINDOW, False, host_delays=delays)
        # A sampler can wait for the other vCPU: 997 (cpu 1) is explained by
        # the wait of CPU 0's thread too; 999: 5 ms cannot explain 30 ms.
        self.assertEqual([s.seq for s, _ in r.host_noise], [997, 998])
        self.assertEqual([s.seq for s in r.unmatched], [999])
        self.assertEqual(len(r.failures), 1, r.failures)
        self.assertAlmostEqual(r.precision, 24 / 25)

    def test_many_small_waits_explain_nothing(self):
        stalls, samples = scenario()
        t = stalls[3].end + 400 * MS
        samples.append(line(998, 0, t + OFFSET, 0, 40 * MS))
        delays = [a.HostDelay(t + k * 8 * MS, t + k * 8 * MS + 2 * MS, 5 * MS, "CPU 0/TCG")
                  for k in range(10)]
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=delays)
        self.assertEqual([s.seq for s in r.unmatched], [998])

    def test_host_waits_around_a_stall_are_part_of_its_truth(self):
        stalls, samples = scenario()
        st = stalls[4]
        s = next(x for x in samples if abs(x.ts - OFFSET - st.end) < MS)
        grown = line(s.seq, s.cpu, s.ts, 0, s.outer + 9 * MS)
        samples = [grown if x is s else x for x in samples]
        thread = a.vcpu_thread(s.cpu)
        # Waiting 6 ms when stopped (seen by the poll after the stop), 3 ms
        # to run again after SIGCONT: the band is [stop, stop + 9 ms].
        delays = [a.HostDelay(st.start - MS, st.start + 2 * MS, 6 * MS, thread),
                  a.HostDelay(st.end + 1 * MS, st.end + 3 * MS, 3 * MS, thread)]
        self.assertEqual(a.stall_truth(st, s.cpu, delays), (st.duration + 9 * MS, 6 * MS, 3 * MS))
        # The other vCPU's sampler can wait for this one (QEMU's big lock).
        self.assertEqual(a.stall_truth(st, 1 - s.cpu, delays)[0], st.duration + 9 * MS)
        self.assertEqual(a.stall_truth(st, s.cpu, [])[0], st.duration)
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=delays)
        self.assertEqual(r.failures, [])
        self.assertGreater(max(r.raw_errors_ns), 9 * MS)
        self.assertEqual(r.errors_ns[4], 600_000)    # 9.6 ms over the stop, band 9 ms
        # Above the band is still an error.
        over = line(s.seq, s.cpu, s.ts, 0, s.outer + 11 * MS + s.outer // 100)
        r = a.match_stalls([over if x is grown else x for x in samples], stalls, OFFSET, THR,
                           WIDTH, WINDOW, False, host_delays=delays)
        self.assertTrue(any(f.startswith("magnitude: stall 4") for f in r.failures))
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False)
        self.assertTrue(any(f.startswith("magnitude: stall 4") for f in r.failures))

    def test_first_exceedance_before_the_stall_still_matches(self):
        stalls, samples = scenario()
        st = stalls[6]
        s = next(x for x in samples if abs(x.ts - OFFSET - st.end) < MS)
        early = line(s.seq, s.cpu, st.start + OFFSET - 600 * MS, 0, s.outer, count=2)
        samples = [early if x is s else x for x in samples]
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False)
        self.assertEqual(r.failures, [])
        self.assertEqual(r.found, 24)

    def test_wrong_magnitude_fails(self):
        stalls, samples = scenario()
        s = samples[5]
        samples[5] = line(s.seq, s.cpu, s.ts, 0, s.outer + 1 * MS + s.outer // 100 + 1000)
        r = self.judge(stalls, samples)
        self.assertTrue(any(f.startswith("magnitude: stall 5") for f in r.failures), r.failures)
        # Microsecond truncation (like the ftrace tracer) stays within bounds.
        stalls, samples = scenario()
        samples = [line(s.seq, s.cpu, s.ts, 0, s.outer // 1000 * 1000) for s in samples]
        self.assertEqual(self.judge(stalls, samples).failures, [])

    def test_self_check_mode_tolerates_noise_not_misses(self):
        stalls, samples = scenario()
        samples.append(line(999, 0, stalls[3].end + OFFSET + 700 * MS, 0, 25 * MS))
        s = samples[5]
        samples[5] = line(s.seq, s.cpu, s.ts, 0, s.outer + 30 * MS)
        off, _ = a.refine_offset(samples, stalls, OFFSET)
        r = a.match_stalls(samples, stalls, off, THR, WIDTH, WINDOW, False, strict=False,
                           slack_ns=50 * MS)
        self.assertEqual(r.failures, [])
        r = a.match_stalls(samples[::3], stalls, off, THR, WIDTH, WINDOW, False, strict=False,
                           slack_ns=50 * MS)
        self.assertTrue(any(f.startswith("recall") for f in r.failures), r.failures)

    def test_nmi_on_a_stall_window_fails(self):
        stalls, samples = scenario()
        s = samples[2]
        samples[2] = line(s.seq, s.cpu, s.ts, s.inner, s.outer, nmi=1, nmi_ns=5)
        r = self.judge(stalls, samples)
        self.assertTrue(any(f.startswith("attribution: stall 2") for f in r.failures))

    def test_window_without_reason_fails(self):
        stalls, samples = scenario()
        samples.append(line(999, 0, stalls[3].end + OFFSET + 700 * MS, 0, 3 * MS, count=0))
        r = self.judge(stalls, samples)
        self.assertTrue(any("without a reason" in f for f in r.failures), r.failures)

    def test_nothing_detected_fails(self):
        stalls, _ = scenario()
        r = a.match_stalls([], stalls, OFFSET, THR, WIDTH, WINDOW, False)
        self.assertTrue(r.failures)
        self.assertEqual(r.recall, 0.0)


def ts_us(t):
    """A trace clock stamp as tracefs prints it (microseconds)."""
    return f"{t // SEC}.{t % SEC // 1000:06d}"


def switch(cpu, t, prev, prev_pid, nxt, nxt_pid, state="S"):
    return (f"HWLAT-TRACE {prev:>16}-{prev_pid:<6} [{cpu:03d}] d..2. {ts_us(t)}: sched_switch: "
            f"prev_comm={prev} prev_pid={prev_pid} prev_prio=120 prev_state={state} ==> "
            f"next_comm={nxt} next_pid={nxt_pid} next_prio=120")


def traced_run(inside, missed=(), mode="round-robin", trace_off=0, cal=True, end=True,
               overrun=0):
    """A traced guest run: one cycle per window from guest GUEST0; stall i
    starts 300 ms into the width of cycle 2 + 2 i when inside[i], else
    50 ms into the sleep gap after it, and lasts 50 ms. The detector reports
    every stall that began inside a width except those in `missed` (a broken
    detector). trace_off: trace clock - guest CLOCK_REALTIME. Returns
    (guest output lines, stalls in host time, samples)."""
    lines = [f"HWLAT-MARK sampling {mode} {GUEST0}", "HWLAT-TRACE-CLOCK tai"]
    trace = []
    cycles = 2 + 2 * len(inside) + 2
    cal_at = [GUEST0 - 5 * MS, GUEST0 + cycles * WINDOW + 5 * MS]
    if cal:
        for k, t in enumerate(cal_at):
            lines.append(f"HWLAT-TRACE-CAL {k} {t - 20_000} {t + 20_000}")
            trace.append(f"HWLAT-TRACE       acc-guest-50     [000] ..... "
                         f"{ts_us(t + trace_off)}: tracing_mark_write: hwlat-cal {k}")
    width_at = []
    for k in range(cycles):
        c = GUEST0 + k * WINDOW + trace_off
        if mode == "round-robin":
            # Wake-up blip where it slept, migration, the width on the other CPU.
            old, new = k % 2, (k + 1) % 2
            trace.append(switch(old, c, "swapper/0", 0, "hwlatd", 93, "R"))
            trace.append(switch(old, c + 300_000, "hwlatd", 93, "migration/0", 16, "R+"))
            trace.append(switch(new, c + 600_000, "swapper/1", 0, "hwlatd", 93, "R"))
            trace.append(switch(new, c + 600_000 + WIDTH + 900_000, "hwlatd", 93,
                                "kworker/1:1", 42))
            width_at.append((c + 600_000 - trace_off, new))
        elif mode == "per-cpu":
            for cpu in (0, 1):
                t = c + cpu * 2 * MS
                trace.append(switch(cpu, t, f"swapper/{cpu}", 0, f"hwlatd/{cpu}", 90 + cpu,
                                    "R"))
                trace.append(switch(cpu, t + WIDTH + 500_000, f"hwlatd/{cpu}", 90 + cpu,
                                    f"swapper/{cpu}", 0))
            width_at.append((c - trace_off, 0))
        else:   # stop-machine: both stoppers spin for the width
            for cpu in (0, 1):
                trace.append(switch(cpu, c, "hwlatd" if cpu == k % 2 else f"swapper/{cpu}",
                                    93 if cpu == k % 2 else 0, f"migration/{cpu}", 16 + cpu,
                                    "D"))
                trace.append(switch(cpu, c + WIDTH + 400_000, f"migration/{cpu}", 16 + cpu,
                                    f"swapper/{cpu}", 0))
            width_at.append((c - trace_off, k % 2))
    lines += trace
    if end:
        lines.append(f"HWLAT-TRACE-END lines={len(trace)} overrun={overrun}")
    stalls, samples = [], []
    for i, ok in enumerate(inside):
        ws, cpu = width_at[2 + 2 * i]
        g = ws + 300 * MS if ok else ws + WIDTH + 50 * MS
        st = a.Stall(g - OFFSET, g - OFFSET + 50 * MS)
        stalls.append(st)
        if ok and i not in missed:
            samples.append(line(len(samples) + 1, cpu, st.end + OFFSET + 50_000, 400,
                                st.duration + 600_000))
    return lines, stalls, samples


class TracedWidths(unittest.TestCase):
    """Recall is judged against the stalls that started inside a traced
    width (the suite's rule: "at least the fraction of stalls that started
    inside a sampling width, minus 10 points")."""

    def judge(self, inside, missed=(), mode="round-robin", **kw):
        lines, stalls, samples = traced_run(inside, missed, mode, **kw)
        run = a.parse_guest_output(lines)
        widths, why = a.sampling_widths(run, mode, WIDTH)
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, mode == "per-cpu",
                           widths=widths, widths_note=why)
        return r, widths, why

    def test_trace_line_parse(self):
        cpu, ts, event, rest = a.parse_trace_line(
            "  hwlatd-93      [001] d..2. 1796309910.869049: sched_switch: prev_comm=hwlatd "
            "prev_pid=93 prev_prio=120 prev_state=S ==> next_comm=kworker/1:1 next_pid=42")
        self.assertEqual((cpu, ts, event), (1, 1796309910 * SEC + 869049000, "sched_switch"))
        # No irq-info column (an older or reconfigured kernel).
        self.assertEqual(a.parse_trace_line("<idle>-0 [000] 5.000001: x: y")[:3],
                         (0, 5 * SEC + 1000, "x"))
        for bad in ("CPU:1 [LOST 12 EVENTS]", "garbage"):
            with self.assertRaises(a.GuestError) as cm:
                a.parse_trace_line(bad)
            self.assertIn(repr(bad), str(cm.exception))

    def test_calibration_measures_the_trace_clock(self):
        # A mono-like trace clock 7.5 s behind CLOCK_REALTIME.
        lines, _, _ = traced_run([True] * 3, trace_off=-7_500_000_000)
        run = a.parse_guest_output(lines)
        self.assertEqual(a.trace_clock_offset(run), -7_500_000_000)
        # Markers that disagree (the clock was stepped) are refused.
        _, b, e = next(x for x in lines if x.startswith("HWLAT-TRACE-CAL 1 ")).split()[1:]
        bad = [x for x in lines if not x.startswith("HWLAT-TRACE-CAL 1 ")] + \
            [f"HWLAT-TRACE-CAL 1 {int(b) + 10 * MS} {int(e) + 10 * MS}"]
        with self.assertRaises(a.GuestError) as cm:
            a.trace_clock_offset(a.parse_guest_output(bad))
        self.assertIn("disagree", str(cm.exception))
        lines, _, _ = traced_run([True] * 3, cal=False)
        with self.assertRaises(a.GuestError):
            a.trace_clock_offset(a.parse_guest_output(lines))

    def test_widths_are_long_runs_clipped_to_the_width(self):
        for mode in ("round-robin", "per-cpu", "stop-machine"):
            lines, _, _ = traced_run([True] * 3, mode=mode, trace_off=-3 * SEC)
            widths, why = a.sampling_widths(a.parse_guest_output(lines), mode, WIDTH)
            self.assertIsNone(why, mode)
            cycles = 2 + 2 * 3 + 2
            # Round-robin: the 0.3 ms wake-up blips are no widths.
            self.assertEqual(len(widths), cycles * (1 if mode == "round-robin" else 2), mode)
            self.assertTrue(all(e - s == WIDTH for s, e in widths), mode)
            first = GUEST0 + (600_000 if mode == "round-robin" else 0)
            self.assertEqual(widths[0][0], first, mode)

    def test_stall_in_a_width_not_reported_counts_against_recall(self):
        # All 24 began inside a width, 4 not reported: 0.83 < 1.00 - 0.10,
        # although the old fixed bound (0.80) would have let it pass.
        r, widths, _ = self.judge([True] * 24, missed=(3, 9, 15, 21))
        self.assertIsNotNone(widths)
        self.assertEqual(len(r.eligible), 24)
        self.assertAlmostEqual(r.need, 0.90)
        fail = [f for f in r.failures if f.startswith("recall 0.83 < 0.90")]
        self.assertTrue(fail, r.failures)
        self.assertIn("3 (50.0 ms at host", fail[0])
        self.assertIn("inside a width", fail[0])
        self.assertIn("eligible 24/24", r.summary())
        # Two of them missed: 0.92 >= 0.90.
        r, _, _ = self.judge([True] * 24, missed=(3, 9))
        self.assertEqual(r.failures, [])

    def test_stall_in_a_sleep_gap_does_not_count(self):
        # 7 of 24 began in a sleep gap, all missed, the 17 others found:
        # recall 0.71 passes against 17/24 - 0.10 = 0.61 (the fixed bound
        # would have failed it), in every mode.
        inside = [i % 7 not in (0, 3) for i in range(24)]
        self.assertEqual(inside.count(False), 7)
        for mode in ("round-robin", "per-cpu", "stop-machine"):
            r, _, _ = self.judge(inside, mode=mode)
            self.assertEqual(r.failures, [], mode)
            self.assertEqual(len(r.eligible), 17, mode)
            self.assertAlmostEqual(r.recall, 17 / 24)
            # One missed inside a width as well: 16/24 = 0.67 >= 0.61 still
            # passes; three: 14/24 = 0.58 fails.
            r, _, _ = self.judge(inside, missed=(1,), mode=mode)
            self.assertEqual(r.failures, [], mode)
            r, _, _ = self.judge(inside, missed=(1, 2, 4), mode=mode)
            self.assertTrue(any(f.startswith("recall 0.58 < 0.61") for f in r.failures),
                            (mode, r.failures))

    def test_without_a_trace_the_fixed_bound_applies_and_says_so(self):
        inside = [i % 7 not in (0, 3) for i in range(24)]
        for kw, reason in (({"end": False}, "no HWLAT-TRACE-END"),
                           ({"overrun": 3}, "lost 3 events"),
                           ({"cal": False}, "calibration")):
            r, widths, why = self.judge(inside, **kw)
            self.assertIsNone(widths, kw)
            self.assertIn(reason, why)
            self.assertIsNone(r.eligible)
            self.assertAlmostEqual(r.need, 0.80)
            self.assertIn("fixed width/window - 0.10: no traced widths", r.summary())
            self.assertTrue(any(f.startswith("recall 0.71 < 0.80") for f in r.failures),
                            r.failures)
        run = a.parse_guest_output(["HWLAT-NOTE tracing unavailable: no tracefs at x or y"])
        self.assertEqual(a.sampling_widths(run, "per-cpu", WIDTH),
                         (None, "tracing unavailable: no tracefs at x or y"))
        # A trace without any long sampler period gives no widths either.
        lines, _, _ = traced_run([True] * 3)
        widths, why = a.sampling_widths(a.parse_guest_output(lines), "per-cpu", WIDTH)
        self.assertIsNone(widths)
        self.assertIn("hwlatd/", why)

    def test_inconsistent_trace_is_refused(self):
        lines, _, _ = traced_run([True] * 3)
        i = next(k for k, x in enumerate(lines) if "prev_comm=hwlatd" in x)
        lines[i] = lines[i].replace("prev_pid=93", "prev_pid=94")
        widths, why = a.sampling_widths(a.parse_guest_output(lines), "round-robin", WIDTH)
        self.assertIsNone(widths)
        self.assertIn("switch away from pid 94", why)


class Nmis(unittest.TestCase):
    def setUp(self):
        self.inj = [HOST0 + (2 + 2 * i) * SEC for i in range(10)]

    def windows(self, cpus=(0, 1), skip=()):
        out, seq = [], 0
        for i, t in enumerate(self.inj):
            if i in skip:
                continue
            for c in cpus:
                seq += 1
                out.append(line(seq, c, t + OFFSET - 300 * MS, 2000, 3 * MS, count=0, nmi=1,
                                nmi_ns=2 * MS))
        return out

    def test_broadcast_nmis_attributed(self):
        r = a.match_nmis(self.windows(), self.inj, OFFSET, [0, 0], [10, 10], THR, WIDTH,
                         WINDOW)
        self.assertEqual(r.failures, [])
        self.assertEqual(r.recall, {0: 1.0, 1: 1.0})

    def test_nmi_before_the_first_exceedance_is_in_the_window(self):
        # With noise over the threshold, ts is the first exceedance, which
        # may come after the NMI in the same width.
        w = self.windows()
        w = [line(x.seq, x.cpu, x.ts + 700 * MS, 0, 30 * MS, count=2, nmi=1, nmi_ns=MS)
             for x in w]
        r = a.match_nmis(w, self.inj, OFFSET, [0, 0], [10, 10], THR, WIDTH, WINDOW)
        self.assertEqual(r.failures, [])

    def test_more_than_taken_fails(self):
        r = a.match_nmis(self.windows(), self.inj, OFFSET, [0, 0], [10, 9], THR, WIDTH, WINDOW)
        self.assertTrue(any("cpu 1: stream counts 10" in f for f in r.failures), r.failures)

    def test_missing_attribution_fails(self):
        r = a.match_nmis(self.windows(skip=(1, 4, 7)), self.inj, OFFSET, [0, 0], [10, 10], THR,
                         WIDTH, WINDOW)
        self.assertTrue(any("7 of 10" in f for f in r.failures), r.failures)

    def test_nmi_outside_any_injection_fails(self):
        w = self.windows()
        w.append(line(99, 0, self.inj[0] + OFFSET + SEC, 0, 1 * MS, count=0, nmi=1, nmi_ns=1))
        r = a.match_nmis(w, self.inj, OFFSET, [0, 0], [11, 10], THR, WIDTH, WINDOW)
        self.assertTrue(any("holds no injected NMI" in f for f in r.failures), r.failures)

    def test_nmi_ns_bounds(self):
        w = self.windows()
        s = w[0]
        w[0] = line(s.seq, s.cpu, s.ts, s.inner, s.outer, count=0, nmi=1, nmi_ns=0)
        r = a.match_nmis(w, self.inj, OFFSET, [0, 0], [10, 10], THR, WIDTH, WINDOW)
        self.assertTrue(any(f.startswith("nmi_ns 0") for f in r.failures), r.failures)


class NmisInWidths(unittest.TestCase):
    """NMI recall judged against the widths CPU 0's sampler was traced
    running: an injection inside a width must be counted, one in a sleep
    gap must not, one within the 5 ms guard band of an edge may go either
    way."""
    inj = [HOST0 + (2 + 2 * i) * SEC for i in range(10)]

    def widths(self, gap=(), edge=()):
        """One width per injection on cpu 0 (guest ns): the NMI 300 ms into
        it, or 50 ms before it starts (gap), or 2 ms before its end (edge)."""
        out = []
        for i, t in enumerate(self.inj):
            g = t + OFFSET
            start = g + 50 * MS if i in gap else g - (WIDTH - 2 * MS if i in edge else 300 * MS)
            out.append((start, start + WIDTH))
        return {0: out}

    def windows(self, counted):
        """cpu 0 windows (window start as ts, no exceedance) counting the
        injections in `counted`; cpu 1 took none."""
        return [line(k + 1, 0, self.inj[i] + OFFSET - 300 * MS, 2000, 3 * MS, count=0, nmi=1,
                     nmi_ns=2 * MS) for k, i in enumerate(counted)]

    def judge(self, counted, taken=10, **kw):
        return a.match_nmis(self.windows(counted), self.inj, OFFSET, [0, 0], [taken, 0], THR,
                            WIDTH, WINDOW, widths=self.widths(**kw))

    def test_all_inside_and_counted_passes(self):
        r = self.judge(range(10))
        self.assertEqual(r.failures, [])
        c = r.cpus[0]
        self.assertEqual((len(c.inside), len(c.edge), len(c.gap), c.counted, c.need),
                         (10, 0, 0, 10, 10))
        self.assertIn("inside a width 10, at an edge 0, in a sleep gap 0, stream counts 10",
                      r.summary())

    def test_nmi_inside_a_width_not_counted_fails(self):
        # 9 of 10 (0.90) would pass the old fixed bound (0.80); but the
        # missed one arrived 300 ms into a width: a broken detector.
        r = self.judge([i for i in range(10) if i != 6])
        fail = [f for f in r.failures if f.startswith("cpu 0: stream counts 9 NMIs, but 10 "
                                                      "arrived inside a width")]
        self.assertTrue(fail, r.failures)
        self.assertIn(f"not attributed: 6 (host {self.inj[6] / SEC:.3f}", fail[0])

    def test_nmi_in_a_sleep_gap_not_counted_passes(self):
        # 3 of 10 arrived while the sampler slept and are rightly not
        # counted: 7/10 passes (the old fixed bound, 0.80, failed it).
        gap = (1, 4, 7)
        r = self.judge([i for i in range(10) if i not in gap], gap=gap)
        self.assertEqual(r.failures, [])
        self.assertEqual((r.cpus[0].gap, r.cpus[0].need), (list(gap), 7))
        # One inside missed as well: fails.
        r = self.judge([i for i in range(10) if i not in gap + (2,)], gap=gap)
        self.assertTrue(any("counts 6 NMIs, but 7 arrived" in f for f in r.failures),
                        r.failures)

    def test_nmi_counted_in_a_sleep_gap_fails(self):
        # A window that counts an NMI the CPU took while its sampler slept.
        r = self.judge(range(10), gap=(3,))
        self.assertTrue(any(f.startswith("cpu 0: stream counts 10 NMIs, but only 9 arrived "
                                         "inside a width or at its edge") for f in r.failures),
                        r.failures)
        # ... unless the CPU took an NMI nobody injected (it may lie in a width).
        r = self.judge(range(10), taken=11, gap=(3,))
        self.assertEqual(r.failures, [])

    def test_nmi_at_an_edge_is_neither_required_nor_forbidden(self):
        for counted in (range(10), [i for i in range(10) if i != 5]):
            r = self.judge(counted, edge=(5,))
            self.assertEqual(r.failures, [], list(counted))
            self.assertEqual(r.cpus[0].edge, [5])
        # 6 ms from the edge is inside again (guard 5 ms).
        w = self.widths()
        g = self.inj[5] + OFFSET
        w[0][5] = (g - WIDTH + 6 * MS, g + 6 * MS)
        r = a.match_nmis(self.windows([i for i in range(10) if i != 5]), self.inj, OFFSET,
                         [0, 0], [10, 0], THR, WIDTH, WINDOW, widths=w)
        self.assertTrue(any("but 10 arrived inside" in f for f in r.failures), r.failures)

    def test_without_traced_widths_the_fixed_bound_applies_and_says_so(self):
        gap = (1, 4, 7)
        counted = [i for i in range(10) if i not in gap]
        for widths in (None, {1: self.widths()[0]}):
            r = a.match_nmis(self.windows(counted), self.inj, OFFSET, [0, 0], [10, 0], THR,
                             WIDTH, WINDOW, widths=widths, widths_note="no tracefs")
            self.assertIsNone(r.cpus[0].inside)
            self.assertEqual(r.cpus[0].need, 8)
            self.assertIn("fixed width/window - 0.10 = 0.80 of 10: no traced widths of cpu 0, "
                          "no tracefs", r.summary())
            self.assertTrue(any("7 of 10 NMIs it took were attributed" in f
                                for f in r.failures), r.failures)

    def test_edge_distance(self):
        w = [(10 * MS, 20 * MS), (30 * MS, 40 * MS)]
        self.assertEqual([a.width_edge_distance(t * MS, w) for t in (12, 25, 29, 39, 50)],
                         [2 * MS, -5 * MS, -MS, MS, -10 * MS])

    def test_widths_of_one_cpu_from_a_per_cpu_trace(self):
        lines, _, _ = traced_run([True] * 3, mode="per-cpu")
        run = a.parse_guest_output(lines)
        w0, why0 = a.sampling_widths(run, "per-cpu", WIDTH, cpu=0)
        w1, _ = a.sampling_widths(run, "per-cpu", WIDTH, cpu=1)
        both, _ = a.sampling_widths(run, "per-cpu", WIDTH)
        self.assertIsNone(why0)
        self.assertEqual(len(w0) + len(w1), len(both))
        self.assertEqual([s + 2 * MS for s, _ in w0], [s for s, _ in w1])
        self.assertEqual(w0[0], (GUEST0, GUEST0 + WIDTH))
        w, why = a.sampling_widths(run, "per-cpu", WIDTH, cpu=2)
        self.assertIsNone(w)
        self.assertIn("on cpu 2", why)


def smi_line(seq, cpu, ts, inner=30_000, outer=20_000, count=1, smi=0, smi_ns=None):
    """An 11-field stream line (smi_ns None: the old 10-field line)."""
    tail = "" if smi_ns is None else f" {smi_ns}"
    return a.parse_stream_line(f"{seq} {cpu} {ts // SEC}.{ts % SEC:09d} {inner} {outer} "
                               f"{count} 0 0 {smi}{tail}")


class Smis(unittest.TestCase):
    """judge_smis: broadcast SMIs raised on cpu 1 while cpu 0 is in a width
    (one per width, 300 ms into it), threshold 20 us."""
    THR = 20_000
    widths0 = [(1000 * SEC + k * SEC, 1000 * SEC + k * SEC + WIDTH) for k in range(5)]
    gaps1 = [(1000 * SEC + k * SEC + 400 * MS, 1000 * SEC + k * SEC + 500 * MS)
             for k in range(5)]
    smis = [(k, 1000 * SEC + k * SEC + 300 * MS, 1) for k in range(5)]

    def stream(self, counts=(1, 1, 1, 1, 1), smi_ns=450_000, noise=True):
        """cpu 0's windows: each with its SMI (smi_ns) and, with noise, a
        6th width of TCG noise only."""
        out = [smi_line(k + 1, 0, s + 100 * MS, inner=450_000, outer=900_000, count=3, smi=c,
                        smi_ns=smi_ns if c else (None if smi_ns is None else 0))
               for k, ((s, _), c) in enumerate(zip(self.widths0, counts))]
        if noise:
            out.append(smi_line(6, 0, 1005 * SEC + 10 * MS, inner=900_000, outer=40_000,
                                count=2, smi=0, smi_ns=None if smi_ns is None else 0))
        return out

    def judge(self, samples, widths=None, method="sum", msr=([10, 20], [15, 25]), **kw):
        w = widths or {0: self.widths0 + [(1005 * SEC, 1005 * SEC + WIDTH)]}
        return a.judge_smis(samples, self.smis, w, msr[0], msr[1], method,
                            threshold_ns=self.THR, **kw)

    def test_stream_lines_of_10_and_11_fields(self):
        s = a.parse_stream_line("3 1 1780000000.000000123 500 600 1 0 0 2 450000")
        self.assertEqual((s.smi_count, s.smi_ns, s.fields), (2, 450000, 11))
        s = a.parse_stream_line("3 1 1780000000.000000123 500 600 1 0 0 2")
        self.assertEqual((s.smi_count, s.smi_ns, s.fields), (2, None, 10))
        s = a.parse_stream_line("3 1 1780000000.000000123 500 600 1 0 0 - -")
        self.assertEqual((s.smi_count, s.smi_ns, s.smis), (None, None, 0))
        for bad in ("3 1 1780000000.000000123 500 600 1 0 0 2 -",
                    "3 1 1780000000.000000123 500 600 1 0 0 - 7",
                    "3 1 1780000000.000000123 500 600 1 0 0 2 450000 1"):
            with self.assertRaises(a.GuestError) as cm:
                a.parse_stream_line(bad)
            self.assertIn(repr(bad), str(cm.exception))

    def test_broadcast_counted_once_passes(self):
        r = self.judge(self.stream(), check_ns=True, want_raised=5)
        self.assertEqual((r.failures, r.ns_failures), ([], []))
        self.assertEqual((r.machine_total, r.expected, r.noise_windows), (5, {0: 5}, 1))

    def test_every_cpus_count_added_fails(self):
        """The module before per-CPU SMI counting: each SMI once per CPU."""
        r = self.judge(self.stream(counts=(2, 2, 2, 2, 2)))
        self.assertIn("machine total (sum) 10, expected 5", r.failures)
        self.assertIn("cpu 0: stream smi_count total 10, 5 SMIs were inside its widths",
                      r.failures)

    def test_lost_smi_fails(self):
        r = self.judge(self.stream(counts=(1, 1, 0, 1, 1)))
        self.assertTrue(any("its width held 1 (2)" in f for f in r.failures), r.failures)
        r = self.judge(self.stream()[:2] + self.stream()[3:])
        self.assertTrue(any("SMIs 2 inside a width" in f and "reported no window" in f
                            for f in r.failures), r.failures)

    def test_too_few_raised_fails(self):
        r = self.judge(self.stream(), want_raised=6)
        self.assertIn("5 SMIs raised, 6 wanted", r.failures[0])

    def test_smi_in_a_sleep_gap_counted_fails(self):
        """per-cpu: cpu 1 raised them, so it took each outside its width."""
        widths = {0: self.widths0 + [(1005 * SEC, 1005 * SEC + WIDTH)],
                  1: [(e, e + WIDTH) for _, e in self.gaps1]}
        smis = [(k, s + 50 * MS, 1) for k, (s, _) in enumerate(self.gaps1)]
        ok = self.stream()
        r = a.judge_smis(ok, smis, widths, [10, 20], [15, 25], "max-per-cpu")
        self.assertEqual(r.failures, [])
        self.assertEqual((r.expected, r.machine_total), ({0: 5, 1: 0}, 5))
        bad = ok + [smi_line(10 + k, 1, e + 50 * MS, count=0, smi=1, smi_ns=0)
                    for k, (_, e) in enumerate(self.gaps1)]
        r = a.judge_smis(bad, smis, widths, [10, 20], [15, 25], "max-per-cpu")
        self.assertIn("cpu 1: stream smi_count total 5, 0 SMIs were inside its widths",
                      r.failures)

    def test_max_per_cpu_is_not_the_sum(self):
        """Both samplers in a width: each counts every SMI, the machine once."""
        widths = {0: self.widths0, 1: self.widths0}
        both = self.stream(noise=False) + [smi_line(10 + k, 1, s + 100 * MS, smi=1,
                                                    smi_ns=450_000)
                                           for k, (s, _) in enumerate(self.widths0)]
        r = self.judge(both, widths=widths, method="max-per-cpu")
        self.assertEqual((r.failures, r.machine_total), ([], 5))
        r = self.judge(both, widths=widths, method="sum")
        self.assertEqual((r.machine_total, r.machine_expected), (10, 10))

    def test_smi_at_a_width_edge_cannot_be_judged(self):
        smis = self.smis[:4] + [(4, self.widths0[4][1] - MS, 1)]
        r = a.judge_smis(self.stream(noise=False), smis, {0: self.widths0}, None, None,
                         "sum")
        self.assertTrue(any(f.startswith("SMI 4 at guest") and "not knowable" in f
                            for f in r.failures), r.failures)

    def test_firmware_behaviour_is_checked(self):
        r = self.judge(self.stream(), msr=([10, 20], [15, 20]))
        self.assertTrue(any("cpu 1 rose by 0, the firmware broadcasts: 5 expected" in f
                            for f in r.failures), r.failures)

    def test_seabios_smis_on_the_raising_cpu_are_not_the_samplers(self):
        """No broadcast: raised on cpu 0 (outside its widths), the sampler on
        cpu 1 never takes one; the old module counted them."""
        smis = [(k, 1000 * SEC + k * SEC + 950 * MS, 0) for k in range(5)]
        widths = {0: self.widths0, 1: [(s + 2 * SEC, e + 2 * SEC) for s, e in self.widths0]}
        none = [smi_line(1, 1, 1002 * SEC + 10 * MS, count=1, smi=0)]
        r = a.judge_smis(none, smis, widths, [3, 0], [8, 0], "sum", broadcast=False)
        self.assertEqual((r.failures, r.machine_total, r.machine_expected), ([], 0, 0))
        old = [smi_line(k + 1, 1, s + 10 * MS, count=0, smi=1)
               for k, (s, _) in enumerate(widths[1])]
        r = a.judge_smis(old, smis, widths, [3, 0], [8, 0], "sum", broadcast=False)
        self.assertIn("machine total (sum) 5, expected 0", r.failures)
        r = a.judge_smis(none, smis, widths, [3, 0], [8, 5], "sum", broadcast=False)
        self.assertTrue(any("cpu 1 rose by 5" in f for f in r.failures), r.failures)

    def test_old_lines_without_smi_ns_fail_the_ns_check(self):
        r = self.judge(self.stream(smi_ns=None), check_ns=True)
        self.assertEqual(r.failures, [])
        self.assertTrue(r.ns_failures[0].startswith("6 of 6 windows have no smi_ns (old "
                                                    "10-field lines)"), r.ns_failures)

    def test_smi_ns_bounds(self):
        for ns in (20_000, 1_350_001):          # at the threshold; above inner + outer
            r = self.judge(self.stream(smi_ns=ns), check_ns=True)
            self.assertEqual(len(r.ns_failures), 5, (ns, r.ns_failures))
        r = self.judge(self.stream(smi_ns=20_001), check_ns=True)
        self.assertEqual(r.ns_failures, [])
        r = self.judge(self.stream(smi_ns=1_350_000), check_ns=True)
        self.assertEqual(r.ns_failures, [])

    def test_single_gap_must_be_the_smis(self):
        one = [smi_line(1, 0, self.widths0[0][0] + 100 * MS, inner=450_000, outer=9_000,
                        count=1, smi=1, smi_ns=ns) for ns in (450_000, 449_999)]
        widths = {0: self.widths0[:1]}
        r = a.judge_smis(one[:1], self.smis[:1], widths, None, None, "sum",
                         threshold_ns=self.THR, check_ns=True)
        self.assertEqual((r.ns_failures, r.exact_ns), ([], 1))
        r = a.judge_smis(one[1:], self.smis[:1], widths, None, None, "sum",
                         threshold_ns=self.THR, check_ns=True)
        self.assertIn("smi_ns 449999 != that gap 450000", r.ns_failures[0])

    def test_noise_flagged_as_smi_fails(self):
        s = self.stream()
        s[-1] = smi_line(6, 0, 1005 * SEC + 10 * MS, inner=900_000, count=2, smi=0,
                         smi_ns=900_000)
        r = self.judge(s, check_ns=True)
        self.assertTrue(any(f.startswith("window that held no SMI flagged") for f in
                            r.ns_failures), r.ns_failures)


class Dmesg(unittest.TestCase):
    lines = ["[ 1.0] hwlat_detector: loaded",
             "[ 2.0] Uhhuh. NMI received for unknown reason 21 on CPU 0.",
             "[ 2.0] Dazed and confused, but trying to continue"]

    def test_nmi_line_only_where_allowed(self):
        self.assertEqual(a.dmesg_problems(self.lines, allow_unknown_nmi=True), [])
        self.assertEqual(len(a.dmesg_problems(self.lines)), 2)

    def test_mitigation_notice_is_no_warning(self):
        notice = ("[ 0.017975] RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable "
                  "to RETBleed attacks, data leaks possible!")
        self.assertEqual(a.dmesg_problems([notice]), [])

    def test_problems_found(self):
        for bad in ("[ 3.0] WARNING: CPU: 0 PID: 1 at foo.c:1", "[ 3.0] BUG: kernel NULL",
                    "[ 3.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!",
                    "[ 3.0] INFO: task x:1 blocked for more than 120 seconds. hung task",
                    "[ 3.0] Oops: 0000 [#1] SMP"):
            self.assertEqual(a.dmesg_problems(self.lines[:1] + [bad], True), [bad])


def tracer_line(seq, cpu, ts, inner_us, outer_us, count=1, nmi=None, nmi_total=None):
    """A trace_pipe line of the kernel's hwlat tracer, as 6.1 prints it."""
    text = (f"          hwlatd-8{cpu}     [00{cpu}] d..1.   {100 + seq}.123456: #{seq:<5d} "
            f"inner/outer(us): {inner_us:4d}/{outer_us:<5d} ts:{ts // SEC}.{ts % SEC:09d} "
            f"count:{count}")
    if nmi_total is not None:
        text += f" nmi-total:{nmi_total}"
    if nmi is not None:
        text += f" nmi-count:{nmi}"
    return text


class TracerLines(unittest.TestCase):
    """The kernel hwlat tracer's trace_pipe lines become the same StreamLine
    as the module's stream, so that one set of judges scores both."""

    def test_sample_line(self):
        s = a.parse_tracer_line(tracer_line(7, 1, 1780000000 * SEC + 5, 20010, 0, count=3))
        self.assertEqual((s.seq, s.cpu, s.ts, s.inner, s.outer, s.count, s.latency),
                         (7, 1, 1780000000 * SEC + 5, 20_010_000, 0, 3, 20_010_000))
        self.assertEqual((s.nmi_count, s.nmi_ns, s.backend), (0, 0, "tracer"))
        # The tracer counts no SMIs: unavailable, not 0.
        self.assertIsNone(s.smi_count)
        self.assertIsNone(s.smi_ns)

    def test_outer_and_nmi_fields(self):
        s = a.parse_tracer_line(tracer_line(2, 0, 1780000000 * SEC, 3, 48123, nmi=2,
                                            nmi_total=14))
        self.assertEqual((s.outer, s.latency, s.nmi_count, s.nmi_ns),
                         (48_123_000, 48_123_000, 2, 14_000))

    def test_nmi_count_without_total_is_unavailable(self):
        # Kernels with a generic sched_clock print no nmi-total.
        s = a.parse_tracer_line(tracer_line(2, 0, 1780000000 * SEC, 3, 48123, nmi=1))
        self.assertEqual(s.nmi_count, 1)
        self.assertIsNone(s.nmi_ns)

    def test_bad_lines_are_named(self):
        good = tracer_line(7, 1, 1780000000 * SEC, 20010, 0)
        for bad in (good.split(": ", 1)[1],                      # no context: no CPU
                    good.replace("ts:1780000000.000000000", "ts:1780000000.000"),
                    good.replace("count:1", "count:x"),
                    good.replace("inner/outer(us)", "inner(us)"),
                    tracer_line(2, 0, 1780000000 * SEC, 3, 48123, nmi_total=14),
                    good + " junk",
                    "hwlatd-81 [001] d..1. 101.1: sched_switch: prev_comm=hwlatd"):
            with self.assertRaises(a.GuestError, msg=bad) as cm:
                a.parse_tracer_line(bad)
            self.assertIn(repr(bad), str(cm.exception))

    def test_guest_output_takes_tracer_lines_as_samples(self):
        run = a.parse_guest_output([
            "HWLAT-CONFIG backend=tracer tracing_thresh=20000 width=900000 window=1000000 "
            "current_tracer=hwlat mode=per-cpu",
            "HWLAT-MARK sampling per-cpu 1780000000000000000",
            "HWLAT-TRACER " + tracer_line(1, 1, 1780000001 * SEC, 0, 30000),
            "HWLAT-TRACE   hwlatd/1-81 [001] d..2. 101.000001: sched_switch: x",
            "HWLAT-MARK done 1"])
        self.assertEqual(run.config["backend"], "tracer")
        self.assertEqual([(s.cpu, s.latency, s.backend) for s in run.samples],
                         [(1, 30 * MS, "tracer")])
        self.assertEqual(len(run.trace), 1)
        with self.assertRaises(a.GuestError):
            a.parse_guest_output(["HWLAT-TRACER #1 inner/outer(us): 1/2 ts:1.000000000 "
                                  "count:1"])

    def test_tracer_stalls_are_judged_like_the_modules(self):
        stalls, samples = scenario()
        tr = [a.parse_tracer_line(tracer_line(s.seq, s.cpu, s.ts, s.inner // 1000,
                                              s.outer // 1000)) for s in samples]
        off, _ = a.refine_offset(tr, stalls, OFFSET + 20 * MS)
        r = a.match_stalls(tr, stalls, off, THR, WIDTH, WINDOW, False)
        self.assertEqual(r.failures, [])
        self.assertEqual((r.recall, r.precision), (1.0, 1.0))

    def test_sampler_threads_of_mode_none(self):
        self.assertTrue(re.fullmatch(a.SAMPLER_THREADS["none"], "hwlatd"))
        self.assertFalse(re.fullmatch(a.SAMPLER_THREADS["none"], "hwlatd/0"))

    def test_nmi_without_nmi_ns_is_not_judged_on_it(self):
        inj = [HOST0 + 2 * SEC]
        w = a.parse_tracer_line(tracer_line(1, 0, inj[0] + OFFSET - 300 * MS, 0, 25000, nmi=1))
        r = a.match_nmis([w], inj, OFFSET, [0, 0], [1, 0], THR, WIDTH, WINDOW)
        self.assertEqual(r.failures, [])
        w = a.parse_tracer_line(tracer_line(1, 0, inj[0] + OFFSET - 300 * MS, 0, 25000, nmi=1,
                                            nmi_total=30000))
        r = a.match_nmis([w], inj, OFFSET, [0, 0], [1, 0], THR, WIDTH, WINDOW)
        self.assertTrue(any(f.startswith("nmi_ns") for f in r.failures), r.failures)


class Versus(unittest.TestCase):
    """bench/accuracy-vs-tracer: the figures of a run and the goals."""

    def row(self, backend="module", mode="round-robin", miss_every=0, err_ns=50_000,
            extra=None, per_cpu=False, seed=7):
        stalls, samples = scenario(per_cpu=per_cpu, miss_every=miss_every, seed=seed)
        samples = [line(s.seq, s.cpu, s.ts, s.inner, stalls_dur(stalls, s) + err_ns)
                   for s in samples]
        if extra is not None:
            samples.append(line(999, 0, extra + OFFSET, 0, 25 * MS))
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, per_cpu)
        return a.versus_row(backend, mode, stalls=r)

    def goals(self, row, tracer):
        return {g: ok for g, ok, _ in a.versus_goals(row, tracer, 0.9)}

    def test_as_good_as_the_tracer_passes(self):
        g = self.goals(self.row(), self.row("tracer", err_ns=80_000))
        self.assertEqual(g, {"precision": True, "recall": True, "median error": True,
                             "every matched stall": True})

    def test_recall_below_the_tracers_fails(self):
        ours, tracer = self.row(miss_every=12), self.row("tracer")   # 22/24 vs 24/24
        self.assertGreaterEqual(ours.recall, 0.85)
        self.assertFalse(self.goals(ours, tracer)["recall"])

    def test_recall_below_the_duty_cycle_fails_even_when_the_tracer_is_worse(self):
        ours, tracer = self.row(miss_every=4), self.row("tracer", miss_every=3)
        self.assertGreater(ours.recall, tracer.recall)
        self.assertLess(ours.recall, 0.85)
        self.assertFalse(self.goals(ours, tracer)["recall"])

    def test_per_cpu_must_find_every_stall(self):
        tracer = self.row("tracer", "per-cpu", miss_every=12, per_cpu=True)
        ours = self.row(mode="per-cpu", miss_every=24, per_cpu=True)   # 23/24 = 0.96
        self.assertGreater(ours.recall, 0.95)
        self.assertFalse(self.goals(ours, tracer)["recall"])
        ours = self.row(mode="per-cpu", per_cpu=True)
        self.assertTrue(self.goals(ours, tracer)["recall"])

    def test_invented_window_fails_precision(self):
        stalls, _ = scenario()
        ours = self.row(extra=stalls[3].end + 700 * MS)
        self.assertLess(ours.precision, 1.0)
        self.assertFalse(self.goals(ours, self.row("tracer"))["precision"])

    def test_median_error_over_100_us_fails(self):
        ours = self.row(err_ns=150_000)
        g = self.goals(ours, self.row("tracer"))
        self.assertFalse(g["median error"])
        self.assertTrue(g["every matched stall"])

    def test_one_stall_off_by_more_than_1_ms_plus_1_percent_fails(self):
        stalls, samples = scenario()
        samples = [line(s.seq, s.cpu, s.ts, s.inner, stalls_dur(stalls, s) + 50_000)
                   for s in samples]
        d = stalls[5].duration
        samples[5] = line(samples[5].seq, samples[5].cpu, samples[5].ts, 0,
                          d + MS + d // 100 + 100_000)
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False)
        row = a.versus_row("module", "round-robin", stalls=r)
        self.assertEqual((row.matched, row.magnitude_misses), (24, 1))
        g = self.goals(row, self.row("tracer"))
        self.assertFalse(g["every matched stall"])
        self.assertTrue(g["median error"])

    def test_over_the_stop_and_the_waits_are_medians_of_the_matched_windows(self):
        """The table shows what the error is measured against: the latency
        over the stop alone (signed) and the measured vCPU waits that widen
        the truth band, each a median over the matched windows."""
        stalls = [a.Stall(HOST0 + k * 2 * SEC, HOST0 + k * 2 * SEC + 50 * MS) for k in range(3)]
        over = [30_000, 250_000, 90_000]
        samples = [line(k + 1, 0, st.start + OFFSET - 100 * MS, 2000, st.duration + d)
                   for k, (st, d) in enumerate(zip(stalls, over))]
        # 200 us waits of CPU 0's thread after the second stall's SIGCONT.
        waits = [a.HostDelay(stalls[1].end - 10 * MS, stalls[1].end + 300_000, 200_000,
                             a.vcpu_thread(0))]
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=waits)
        row = a.versus_row("module", "round-robin", stalls=r)
        self.assertEqual(r.over_stop_ns, over)
        self.assertEqual(row.median_over_stop_ns, 90_000)
        self.assertEqual(row.median_waits_ns, 0)
        # The second window lies 50 us beyond its band, the others 30 and 90 us.
        self.assertEqual(sorted(r.errors_ns), [30_000, 50_000, 90_000])

    def test_a_run_that_failed_fails_every_goal(self):
        row = a.versus_row("module", "none", error="guest died")
        self.assertEqual(set(self.goals(row, self.row("tracer", "none")).values()), {False})

    def test_without_a_tracer_result_only_the_duty_bound_counts(self):
        res = a.versus_goals(self.row(), a.versus_row("tracer", "round-robin", error="x"), 0.9)
        recall = [d for g, _, d in res if g == "recall"][0]
        self.assertIn("no result to compare with", recall)

    def test_nmi_figures(self):
        inj = [HOST0 + (2 + 2 * i) * SEC for i in range(4)]
        ws = [line(i + 1, 0, t + OFFSET - 300 * MS, 2000, 3 * MS, count=0, nmi=1, nmi_ns=MS)
              for i, t in enumerate(inj[:3])]
        widths = {0: [(t + OFFSET - 400 * MS, t + OFFSET + 400 * MS) for t in inj]}
        r = a.match_nmis(ws, inj, OFFSET, [0, 0], [4, 0], THR, WIDTH, WINDOW, widths=widths)
        row = a.versus_row("module", "per-cpu", nmis=r)
        self.assertEqual((row.nmi_injected, row.nmi_inside, row.nmi_attributed), (4, 4, 3))
        self.assertAlmostEqual(row.nmi_fraction, 0.75)

    def test_traced_duty_is_the_union_of_the_cpus_widths(self):
        one = [(k * SEC, k * SEC + 900 * MS) for k in range(10)]          # 9.9 s span
        self.assertAlmostEqual(a.traced_duty(one), 9 / 9.9)
        # A second CPU in phase adds nothing; half a window out of phase
        # covers the first one's sleep.
        self.assertAlmostEqual(a.traced_duty(one + one), a.traced_duty(one))
        other = [(k * SEC + 500 * MS, k * SEC + 1400 * MS) for k in range(10)]
        self.assertAlmostEqual(a.traced_duty(one + other), 1.0)
        # A sampler losing 100 ms per window covers less.
        slow = [(k * 1100 * MS, k * 1100 * MS + 900 * MS) for k in range(10)]
        self.assertAlmostEqual(a.traced_duty(slow), 10 * 900 / (9 * 1100 + 900))
        self.assertIsNone(a.traced_duty(one[:1]))
        self.assertIsNone(a.traced_duty(None))

    def test_table_ratios_to_the_tracers_same_mode(self):
        rows = [self.row(err_ns=40_000), self.row("tracer", err_ns=80_000),
                a.versus_row("module", "none", error="guest died")]
        table = a.versus_table(rows)
        self.assertEqual(len(table), 2 + 3)
        ours = table[2].split(" | ")
        self.assertEqual(ours[0:2], ["| module", "round-robin"])
        self.assertEqual(ours[4], "n/a")               # traced duty: no trace
        self.assertEqual(ours[6], "0.040 ms")
        # Over the stop alone: the scenario's windows read the stop + 40 us;
        # no host waits were measured, so the band is the stop itself.
        self.assertEqual(ours[8:10], ["0.040 ms", "0.000 ms"])
        # recall, in-width (no trace: n/a), precision, median, worst, NMI (none)
        self.assertEqual(ours[11:17], ["1.00", "n/a", "1.00", "0.50", "0.50", "n/a |"])
        self.assertEqual(table[3].split(" | ")[11:17], ["-"] * 5 + ["- |"])
        self.assertIn("not measured: guest died", table[4])
        self.assertEqual((a.ratio(1, 0), a.ratio(0, 0), a.ratio(None, 1)),
                         ("inf", "n/a", "n/a"))


class TestDmesgCommandLine(unittest.TestCase):
    def test_the_command_line_is_no_problem_but_a_lockup_is(self):
        """The guests boot with softlockup_all_cpu_backtrace=1: the echo of
        the command line must not read as a soft lockup; a real one must."""
        cmdline = "console=ttyS0 loglevel=5 softlockup_all_cpu_backtrace=1"
        lines = [f"[    0.000000] Command line: {cmdline}",
                 f"[    0.105738] Kernel command line: {cmdline}",
                 "[  100.698690] watchdog: BUG: soft lockup - CPU#1 stuck for 44s! [acc-guest:91]"]
        self.assertEqual(a.dmesg_problems(lines), lines[2:])


class TestStealProbe(unittest.TestCase):
    """steal-probe's output: each late wake-up becomes a HostDelay "steal
    cpuN" spanning [previous wake-up, late wake-up] (an upper bound of the
    loss), and a loss at a stall's edge widens its truth band as a
    run-queue wait does."""

    def probe_lines(self, *late):
        return (["steal-probe ready 2 1000000"]
                + [f"late {c} {p} {w} {n}" for c, p, w, n in late]
                + [f"steal-probe end 80000 {len(late)}"])

    def test_late_wake_ups_become_spans_sorted_by_end(self):
        delays, counts = a.parse_steal_probe(self.probe_lines(
            (1, 50 * MS, 54 * MS, 3 * MS), (0, 10 * MS, 20 * MS + 1, 9 * MS)))
        self.assertEqual([(d.start, d.end, d.wait, d.thread) for d in delays],
                         [(10 * MS, 20 * MS + 1, 10 * MS + 1, "steal cpu0"),
                          (50 * MS, 54 * MS, 4 * MS, "steal cpu1")])
        self.assertEqual(counts, (80000, 2))

    def test_cut_or_malformed_output_is_named(self):
        good = self.probe_lines((0, 10, 20, 5))
        for bad, want in ((good[:-1], "no end line"),
                          (good[1:], "never printed its ready line"),
                          (good[:1] + ["late 0 20 10 5"] + good[2:], "line 2 not understood"),
                          (good[:1] + ["late 0 10 20 15"] + good[2:], "line 2 not understood"),
                          (good[:1] + ["late 0 10 x 5"] + good[2:], "'late 0 10 x 5'"),
                          (good[:2] + ["steal-probe end 80000 2"], "counted 2 late wake-ups"),
                          (good + ["late 0 30 40 5"], "line 4 not understood"),
                          ([], "never printed its ready line")):
            with self.assertRaises(a.GuestError, msg=bad) as cm:
                a.parse_steal_probe(bad)
            self.assertIn(want, str(cm.exception))

    def test_a_loss_spanning_a_stall_start_widens_its_band(self):
        """Measured in a per-cpu run: CPU 1's gap began 4.0 ms before a
        234.04 ms stop with no run-queue wait (its host CPU was taken away);
        it read 238.23 ms. Without the probe's span the window fails; with
        it the band is [stop, stop + span]."""
        stalls, samples = scenario()
        st = stalls[5]
        s = next(x for x in samples if abs(x.ts - OFFSET - st.end) < MS)
        samples = [line(s.seq, s.cpu, s.ts, 0, st.duration + 4190 * 1000) if x is s else x
                   for x in samples]
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False)
        self.assertEqual(len(r.failures), 1, r.failures)
        self.assertIn(f"stall 5 stopped {st.duration / MS:.3f} ms", r.failures[0])
        delays, _ = a.parse_steal_probe(self.probe_lines(
            (1, st.start - 4200 * 1000, st.start + 300 * 1000, 3500 * 1000)))
        self.assertEqual(a.stall_truth(st, s.cpu, delays)[0], st.duration + 4500 * 1000)
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=delays)
        self.assertEqual(r.failures, [])
        # A span that ended before the stop is no part of its gap.
        delays, _ = a.parse_steal_probe(self.probe_lines(
            (1, st.start - 5200 * 1000, st.start - MS, 3500 * 1000)))
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=delays)
        self.assertEqual(len(r.failures), 1, r.failures)

    def test_a_long_loss_explains_a_window_that_would_be_invented(self):
        stalls, samples = scenario()
        t = stalls[3].end + 400 * MS
        samples.append(line(998, 0, t + OFFSET, 0, 100 * MS))
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False)
        self.assertEqual([s.seq for s in r.unmatched], [998])
        delays, _ = a.parse_steal_probe(self.probe_lines((0, t - MS, t + 100 * MS, 100 * MS)))
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=delays)
        self.assertEqual([s.seq for s, _ in r.host_noise], [998])
        self.assertEqual(r.unmatched, [])


    def test_a_loss_and_a_vcpu_wait_do_not_add_up(self):
        """The host's fair server preempts the probe and the vCPU thread on
        one CPU alike: a 6 ms loss and a 6 ms wait there may be one event,
        so they do not explain a 22 ms window; two vCPU threads' waits do."""
        stalls, samples = scenario()
        t = stalls[3].end + 400 * MS
        samples.append(line(998, 0, t + OFFSET, 0, 22 * MS))
        wait = a.HostDelay(t + 4 * MS, t + 6 * MS, 6 * MS, "CPU 0/TCG")
        loss = a.HostDelay(t, t + 6 * MS, 6 * MS, "steal cpu0")
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=[wait, loss])
        self.assertEqual([s.seq for s in r.unmatched], [998])
        other = a.HostDelay(t + 4 * MS, t + 6 * MS, 6 * MS, "CPU 1/TCG")
        r = a.match_stalls(samples, stalls, OFFSET, THR, WIDTH, WINDOW, False,
                           host_delays=[wait, other])
        self.assertEqual([s.seq for s, _ in r.host_noise], [998])


class TestTwoGapsInAWindow(unittest.TestCase):
    """A window reports its largest gap. Measured: one held a 96.0 ms stop
    and, apart from it, a 100.4 ms gap while the host lost 100 ms; it read
    100.4 ms and failed the stall's magnitude."""

    def setUp(self):
        self.stalls, samples = scenario()
        old = self.stalls[6]
        s = next(x for x in samples if abs(x.ts - OFFSET - old.end) < MS)
        st = self.stalls[6] = a.Stall(old.start, old.start + 96 * MS)
        self.s = line(s.seq, s.cpu, st.end + OFFSET + 50_000, 0, 96 * MS + 170_000)
        self.samples = [self.s if x is s else x for x in samples]
        # The host lost 100.4 ms, 300 ms after the stop ended.
        self.delays = [a.HostDelay(st.end + 300 * MS, st.end + 400 * MS + 400_000,
                                   100 * MS + 400_000, "steal cpu0")]

    def judge(self, latency, count):
        s = self.s
        samples = [line(s.seq, s.cpu, s.ts, 0, latency, count=count) if x is s else x
                   for x in self.samples]
        return a.match_stalls(samples, self.stalls, OFFSET, THR, WIDTH, WINDOW, False,
                              host_delays=self.delays)

    def test_a_separate_loss_can_be_the_largest_gap(self):
        want = 100 * MS + 400_000
        self.assertEqual(a.separate_loss(line(1, 0, self.s.ts, 0, want, count=2),
                                         self.stalls[6], self.delays, OFFSET, WIDTH), want)
        r = self.judge(want, count=2)
        self.assertEqual(r.failures, [])

    def test_not_when_the_window_counted_one_gap(self):
        r = self.judge(100 * MS + 400_000, count=1)
        self.assertEqual(len(r.failures), 1, r.failures)
        self.assertIn("magnitude: stall 6", r.failures[0])

    def test_not_beyond_the_loss(self):
        """The loss is the band's top: 1 ms + 1 % of it beyond passes, 1 ns
        more fails."""
        top = 100 * MS + 400_000
        self.assertEqual(self.judge(top + MS + top // 100, count=2).failures, [])
        r = self.judge(top + MS + top // 100 + 1, count=2)
        self.assertEqual(len(r.failures), 1, r.failures)
        self.assertIn("truth band up to 100.400 ms", r.failures[0])

    def test_a_loss_inside_the_stall_is_not_separate(self):
        st = self.stalls[6]
        inside = [a.HostDelay(st.start + MS, st.start + 2 * MS, 300 * MS, "steal cpu0")]
        self.assertEqual(a.separate_loss(line(1, 0, self.s.ts, 0, 300 * MS, count=2), st,
                                         inside, OFFSET, WIDTH), 0)


def stalls_dur(stalls, s):
    """The duration of the stall a scenario() window reports."""
    return min(stalls, key=lambda st: abs(st.end + OFFSET + 50_000 - s.ts)).duration


if __name__ == "__main__":
    unittest.main()
