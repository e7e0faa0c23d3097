#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Proves hwlat-scan's --fail-if and the fail_if config key on the fake
detector (fake_detector.py): a condition that holds exits 6 and prints the
condition on stderr ("FAIL: max = 30 us > 29.999 us"); at the limit it
passes (exit 0, "pass: ..." with the summary); percentiles, SMI, NMI,
unexplained, dropped and sample counts are those of the scan; the rates
(rate(>SIZE), rate(smi), rate(nmi), rate(unexplained)) are decided on the
95 % upper bound over the time sampled; smi-rate is
per hour sampled (the module's `sampled`: the sum over CPUs round-robin,
the longest CPU per-cpu), unknown and failing without it; the command
line replaces the file's fail_if; --hardlimit keeps exit 1 when both fail;
a bad condition is a usage error (exit 2) naming it, the detector
untouched. TAP output."""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as st  # noqa: E402

LINES = st.FIVE_WINDOWS


def scan(tmp, name, args, config=None, lines=LINES, **fake):
    """One 1 s scan of lines; returns (result, detector dir)."""
    r, d, _ = st.scan_lines(tmp, name, args, config, lines, **fake)
    return r, d


def lines(text, prefix):
    return [ln for ln in text.splitlines() if ln.startswith(prefix)]


def main(tmp):
    r, _ = scan(tmp, "max-over", ["--fail-if", "max > 29999ns"])
    st.ok(r.returncode == 6 and
          lines(r.stderr, "hwlat-scan: FAIL") == ["hwlat-scan: FAIL: max = 30 us > 29.999 us"],
          f"max 1 ns over the limit: exit 6, the condition on stderr (exit {r.returncode})",
          r.stdout + r.stderr)
    r, _ = scan(tmp, "max-at", ["--fail-if", "max > 30us"])
    st.ok(r.returncode == 0 and "hwlat-scan: pass: max = 30 us, not > 30 us" in r.stdout
          and "FAIL" not in r.stderr,
          f"max at the limit: exit 0, 'pass' with the summary (exit {r.returncode})",
          r.stdout + r.stderr)
    r, _ = scan(tmp, "max-at-q", ["--fail-if", "max > 30us", "-q"])
    st.ok(r.returncode == 0 and r.stdout == "", f"-q: a passing gate prints nothing (exit {r.returncode})",
          r.stdout + r.stderr)

    # The five latencies are 10, 20, 30, 25, 5 us: p50 is the 3rd smallest,
    # 20 us, read back as the middle of its histogram bucket [19968, 20096)
    # ns: 20031 ns, as hwlat-report prints it (within 0.4 %). p100 = max.
    r, _ = scan(tmp, "facts", ["--fail-if",
                               "p50 >= 20.031us, p50 > 20.031us, p50 > 20.030us, p100 == 30us, "
                               "smi == 2, nmi == 1, unexplained == 3, dropped == 1, "
                               "samples == 5, samples < 5"])
    want = ["hwlat-scan: FAIL: p50 = 20.031 us >= 20.031 us",
            "hwlat-scan: FAIL: p50 = 20.031 us > 20.03 us",
            "hwlat-scan: FAIL: p100 = 30 us == 30 us",
            "hwlat-scan: FAIL: smi = 2 == 2",
            "hwlat-scan: FAIL: nmi = 1 == 1",
            "hwlat-scan: FAIL: unexplained = 3 == 3",
            "hwlat-scan: FAIL: dropped = 1 == 1",
            "hwlat-scan: FAIL: samples = 5 == 5"]
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == want and
          "hwlat-scan: pass: p50 = 20.031 us, not > 20.031 us" in r.stdout and
          "hwlat-scan: pass: samples = 5, not < 5" in r.stdout,
          f"the scan's facts: p50, p100, smi, nmi, unexplained, dropped, samples (exit {r.returncode})",
          r.stdout + r.stderr)

    # smi-rate is per hour sampled (docs/interfaces.md section 4): the fake
    # module sampled 250 ms on each CPU, half the 1 s scan, one at a time
    # (round-robin, method sum): 2 SMIs in 500 ms are 14400/h (by the scan
    # duration, 7200/h or a little less). The limit at the rate and at the
    # rates of one SMI less (7200/h) and more (21600/h).
    r, _ = scan(tmp, "rate", ["--fail-if", "smi-rate >= 14400/h, smi-rate > 14400, "
                              "smi-rate > 7200, smi-rate < 21600/h, smi-rate >= 21600/h"],
                sampled="0 250000000\n1 250000000\n")
    in500 = " (2 SMIs in 500 ms of time sampled)"
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: smi-rate = 14400/h >= 14400/h" + in500,
        "hwlat-scan: FAIL: smi-rate = 14400/h > 7200/h" + in500,
        "hwlat-scan: FAIL: smi-rate = 14400/h < 21600/h" + in500] and
          lines(r.stdout, "hwlat-scan: pass") == [
        "hwlat-scan: pass: smi-rate = 14400/h, not > 14400/h" + in500,
        "hwlat-scan: pass: smi-rate = 14400/h, not >= 21600/h" + in500],
          f"round-robin: smi-rate is the SMIs over the time sampled, at the limit and one "
          f"SMI either side (exit {r.returncode})", r.stdout + r.stderr)

    # per-cpu: both CPUs take the same 2 broadcast SMIs (total 2, method
    # max-per-cpu) while sampling at once, 400 and 500 ms: the total counts
    # each SMI once over the time any CPU sampled, the longest CPU's 500 ms:
    # 14400/h (over both CPUs' 900 ms: 8000/h; 4 SMIs summed: 16000/h).
    broadcast = [st.line(1, 0, 1700000000, 0, 20000, 0, 1, 0, 0, 2),
                 st.line(2, 1, 1700000000, 1000, 20000, 0, 1, 0, 0, 2)]
    r, _ = scan(tmp, "rate-per-cpu", ["--mode", "per-cpu", "--fail-if",
                                      "smi-rate >= 14400, smi-rate > 14400, smi == 2"],
                lines=broadcast, sampled="0 400000000\n1 500000000\n")
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: smi-rate = 14400/h >= 14400/h" + in500,
        "hwlat-scan: FAIL: smi = 2 == 2"] and
          lines(r.stdout, "hwlat-scan: pass") == [
        "hwlat-scan: pass: smi-rate = 14400/h, not > 14400/h" + in500],
          f"per-cpu: the machine total over the longest CPU's time sampled (exit {r.returncode})",
          r.stdout + r.stderr)

    # No time sampled to divide by: a module without `sampled` (older than
    # it), or one that sampled nothing: unknown, which fails.
    r, _ = scan(tmp, "rate-no-file", ["--fail-if", "smi-rate > 100000, smi == 2"], sampled=None)
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: smi-rate unknown (the time sampled is unavailable (said above)), "
        "cannot tell whether > 100000/h",
        "hwlat-scan: FAIL: smi = 2 == 2"] and
          "the time sampled is unavailable (rebuild the module" in r.stderr,
          f"a module without sampled: smi-rate unknown, the reason said (exit {r.returncode})",
          r.stdout + r.stderr)
    r, _ = scan(tmp, "rate-zero", ["--fail-if", "smi-rate < 1"], sampled="")
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: smi-rate unknown (no time sampled to divide by), "
        "cannot tell whether < 1/h"],
          f"nothing sampled: smi-rate unknown, which fails (exit {r.returncode})",
          r.stdout + r.stderr)

    # The rates, decided on the one-sided 95 % upper bound: 3.1 h sampled
    # (5400 s and 5760 s), 2 windows above 20 us (25, 30 us), 1 above 25 us,
    # 1 NMI, 2 SMIs (sum: over the same 3.1 h), 3 unexplained. mpmath's
    # bounds (tests/unit/report/test-report-rates works them out): 2, 1 and
    # 3 events give 6.295794, 4.743865 and 7.753657, over 3.1 h 2.031/h,
    # 1.530/h and 2.501/h, shown rounded up; passing 2/h needs 3.1479 h,
    # 2.874 min more, 1/h 4.744 h and 6.296 h, 1.644 h and 3.196 h more.
    # 5 us is below the 10 us threshold: unknown.
    r, _ = scan(tmp, "rates", ["--fail-if", "rate(>20us) > 2/h, rate(>25us) >= 1/h, "
                               "rate(nmi) > 2/h, rate(smi) > 1/h, rate(unexplained) > 9/h, "
                               "rate(>5us) > 1/h"],
                sampled="0 5400000000000\n1 5760000000000\n")
    more = "more sampled with no further event would pass"
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: rate(>20us) = 0.645/h, not shown <= 2/h at 95 %: fewer than 2.04/h "
        "(2 windows above 20 us in 3.1 h sampled); 2.88 min " + more,
        "hwlat-scan: FAIL: rate(>25us) = 0.323/h, not shown < 1/h at 95 %: fewer than 1.54/h "
        "(1 window above 25 us in 3.1 h sampled); 1.65 h " + more,
        "hwlat-scan: FAIL: rate(smi) = 0.645/h, not shown <= 1/h at 95 %: fewer than 2.04/h "
        "(2 SMIs in 3.1 h sampled); 3.2 h " + more,
        "hwlat-scan: FAIL: rate(>5us) unknown (gaps above 5 us are not all reported: the "
        "threshold is 10 us), cannot tell whether > 1/h"] and
          lines(r.stdout, "hwlat-scan: pass") == [
        "hwlat-scan: pass: rate(nmi) = 0.323/h, not > 2/h at 95 %: fewer than 1.54/h "
        "(1 NMI in 3.1 h sampled)",
        "hwlat-scan: pass: rate(unexplained) = 0.968/h, not > 9/h at 95 %: fewer than 2.51/h "
        "(3 unexplained windows in 3.1 h sampled)"],
          f"rates: the scan's windows, NMIs and SMIs over its time sampled, on the bound "
          f"(exit {r.returncode})", r.stdout + r.stderr)

    # SMIs the module cannot count are unknown, never 0: a gate on them fails.
    r, _ = scan(tmp, "smi-unavailable", ["--fail-if", "smi > 100, unexplained > 100, max > 1s"],
                smi="unavailable: not an Intel CPU\n")
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") == [
        "hwlat-scan: FAIL: smi unknown (not an Intel CPU), cannot tell whether > 100",
        "hwlat-scan: FAIL: unexplained unknown (not an Intel CPU), cannot tell whether > 100"]
          and "hwlat-scan: pass: max = 30 us, not > 1 s" in r.stdout,
          f"SMIs unavailable: smi and unexplained cannot be judged, which fails (exit {r.returncode})",
          r.stdout + r.stderr)

    conf = "duration = 1\nfail_if = samples > 0, smi > 0\n"
    r, _ = scan(tmp, "config", [], config=conf)
    st.ok(r.returncode == 6 and lines(r.stderr, "hwlat-scan: FAIL") ==
          ["hwlat-scan: FAIL: samples = 5 > 0", "hwlat-scan: FAIL: smi = 2 > 0"],
          f"fail_if in the config file, two conditions (exit {r.returncode})", r.stdout + r.stderr)
    r, _ = scan(tmp, "config-replaced", ["--fail-if", "samples > 5"], config=conf)
    st.ok(r.returncode == 0 and "FAIL" not in r.stderr and
          "hwlat-scan: pass: samples = 5, not > 5" in r.stdout,
          f"--fail-if replaces the file's fail_if (exit {r.returncode})", r.stdout + r.stderr)

    r, _ = scan(tmp, "both", ["--fail-if", "max > 1us", "--hardlimit", "29us"])
    st.ok(r.returncode == 1 and "hwlat-scan: FAIL: max = 30 us > 1 us" in r.stderr,
          f"--hardlimit and --fail-if both fail: exit 1, the gate still said (exit {r.returncode})",
          r.stdout + r.stderr)

    for args, config, want in (
        (["--fail-if", "p99 >> 20us"], None,
         "command line: invalid value 'p99 >> 20us' for 'fail_if': condition 'p99 >> 20us': "
         "unknown operator"),
        (["--fail-if", "p101 > 20us"], None, "percentile 'p101' is above 100"),
        (["--fail-if", "jitter > 1"], None, "unknown fact 'jitter'"),
        (["--fail-if", "smi > lots"], None, "invalid count 'lots' for smi"),
        (["--fail-if", "rate(>20us) > 1"], None, "condition 'rate(>20us) > 1': invalid rate '1' "
         "(expected a number and a unit, /s /min /h or /d, such as 1/h or 0.5/min)"),
        (["--fail-if", "rate(smi) <= 1/h"], None, "condition 'rate(smi) <= 1/h': a rate takes > "
         "or >="),
        ([], "fail_if = max > 20 parsecs\n", "scan.conf:1: invalid value 'max > 20 parsecs' "
         "for 'fail_if'"),
    ):
        sub = os.path.join(tmp, "bad%d" % len(os.listdir(tmp)))
        os.mkdir(sub)
        d = st.make_fake(sub)
        before = st.snapshot(d)
        extra = []
        if config:
            with open(os.path.join(sub, "scan.conf"), "w") as f:
                f.write(config)
            extra = ["--config", os.path.join(sub, "scan.conf")]
        r = st.run_scan(["--detector-dir", d, "--duration", "1"] + extra + args, timeout=20)
        st.ok(r.returncode == 2 and want in r.stderr and st.snapshot(d) == before,
              f"bad condition {args or config!r}: exit 2 naming it, detector untouched "
              f"(exit {r.returncode})", r.stderr)


if __name__ == "__main__":
    sys.exit(st.run((main,)))
