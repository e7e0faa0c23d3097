# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of analysis.py on synthetic data (no QEMU, no module).

Proves that the judging logic of the accuracy suite can fail: each
requirement (precision, recall, magnitude, attribution, NMI/SMI totals,
dmesg, stream parsing) has a case where a broken detector is caught, next to
a case where a correct one passes. Run: python3 -m unittest test_analysis
(from tests/accuracy/), or tests/accuracy/run --unit-only.
"""

import random
import unittest

import analysis as a
from analysis import MS, SEC

THR, WIDTH, WINDOW = 20 * MS, 900 * MS, 1000 * MS
HOST0 = 1_780_000_000 * SEC          # some host realtime
OFFSET = -734 * MS                   # guest - host, as an RTC-seeded guest has


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


class Smis(unittest.TestCase):
    smis = [(k, 1000 * SEC + k * 3 * SEC + 400 * MS, 1) for k in range(5)]

    def windows(self, counts=(1, 1, 1, 1, 1)):
        return [line(k + 1, 0, 1000 * SEC + k * 3 * SEC, 0, 1000, count=0, smi=c)
                for k, c in enumerate(counts) if c]

    def test_exact_total_passes(self):
        r = a.match_smis(self.windows(), self.smis, [10, 0], [15, 0], WIDTH, WINDOW)
        self.assertEqual(r.failures, [])
        r = a.match_smis(self.windows(), self.smis, None, None, WIDTH, WINDOW)
        self.assertEqual(r.failures, [])

    def test_smi_before_the_first_exceedance_counts(self):
        w = [line(k + 1, 0, 1000 * SEC + k * 3 * SEC + 800 * MS, 0, 30 * MS, count=1, smi=1)
             for k in range(5)]
        r = a.match_smis(w, self.smis, None, None, WIDTH, WINDOW)
        self.assertEqual(r.failures, [])

    def test_lost_smi_fails(self):
        r = a.match_smis(self.windows((1, 1, 0, 1, 1)), self.smis, [10, 0], [15, 0], WIDTH,
                         WINDOW)
        self.assertTrue(any("total 4 != 5" in f for f in r.failures), r.failures)
        self.assertTrue(any(f.startswith("SMI 2 raised") for f in r.failures), r.failures)

    def test_double_count_fails(self):
        r = a.match_smis(self.windows((1, 2, 1, 1, 1)), self.smis, None, None, WIDTH, WINDOW)
        self.assertTrue(any("counts 2 SMIs, 1 were raised" in f for f in r.failures))

    def test_msr_disagreement_is_reported(self):
        r = a.match_smis(self.windows(), self.smis, [10, 0], [16, 0], WIDTH, WINDOW)
        self.assertTrue(any("MSR_SMI_COUNT rose by 6" in f for f in r.failures), r.failures)


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


if __name__ == "__main__":
    unittest.main()
