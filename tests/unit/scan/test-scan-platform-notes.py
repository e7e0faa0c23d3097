#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What hwlat-scan says about a scan's platform and the windows it could
not sample, on the fake detector (fake_detector.py) and a fake platform
root. Proves that:

- a skip record of the stream ("<seq> <cpu> <time> skipped <windows>")
  becomes a journal entry of its own (HWLAT_SKIP_MESSAGE_ID, the CPU, the
  windows, the time), takes its sequence number (no gap), and is no sample;
- the module's `skipped` file becomes HWLAT_SKIPPED_WINDOWS and
  HWLAT_SKIPPED_CPU_WINDOWS, and the printed summary names each CPU; an
  empty file is a known 0 and prints nothing; a module without the file
  gives "unavailable" and says it is older;
- HWLAT_SMI_SCOPE is "guest" when the kernel's flags say "hypervisor",
  "host" otherwise; a guest scan prints the note on its SMI counts, and
  --fail-if smi/smi-rate repeat it (they still decide);
- a clocksource that does not read the TSC (hpet) prints a warning naming
  it; tsc and kvm-clock print none.

TAP output; exit status 1 when any check failed.
"""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402
import scan_tap  # noqa: E402

ok = fake.ok
SKIP_ID = "ab639cbb95654a4d8de1256da3c0ca68"
NOTE = ("SMIs counted in this guest only (the hypervisor's count of what it gave the "
        "guest): the host's own SMIs are not in them and show as host preemption")


def summary(export):
    sums = [e for e in fake.parse_export(export) if e.get("MESSAGE_ID") == fake.SUMMARY_ID]
    return sums[-1] if sums else {}


def test_skipped(tmp):
    lines = [fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0),
             "2 1 1700000000.500000000 skipped 3\n",
             fake.line(3, 0, 1700000002, 0, 25000, 0, 1, 0, 0, 0)]
    r, _, export = fake.scan_lines(tmp, "skip", [], lines=lines, skipped="1 3\n",
                                   dropped="0\n")
    entries = fake.parse_export(export)
    skips = [e for e in entries if e.get("MESSAGE_ID") == SKIP_ID]
    want = {"HWLAT_SEQ": "2", "HWLAT_CPU": "1", "HWLAT_SKIPPED_WINDOWS": "3",
            "HWLAT_TIMESTAMP_NS": "1700000000500000000", "PRIORITY": "4",
            "MESSAGE": "CPU 1 not sampled for 3 windows: the sampler could not get onto it "
                       "(a task of its priority or above held it)"}
    got = {k: skips[0].get(k) for k in want} if len(skips) == 1 else skips
    ok(r.returncode == 0 and got == want, "a skip record is one journal entry of its own", got)
    sm = summary(export)
    ok(sm.get("HWLAT_SAMPLES") == "2" and sm.get("HWLAT_DROPPED") == "0",
       "it is no sample, and its seq is no gap",
       {k: sm.get(k) for k in ("HWLAT_SAMPLES", "HWLAT_DROPPED")})
    ok(sm.get("HWLAT_SKIPPED_WINDOWS") == "3" and sm.get("HWLAT_SKIPPED_CPU_WINDOWS") == "1:3",
       "the skipped file in the summary: 3, '1:3'",
       {k: sm.get(k) for k in ("HWLAT_SKIPPED_WINDOWS", "HWLAT_SKIPPED_CPU_WINDOWS")})
    ok("hwlat-scan: windows skipped: 3 (CPU 1: 3): the sampler could not get onto those CPUs "
       "in time (a task of its priority or above held them)\n" in r.stdout,
       "the printed summary names the CPU", r.stdout)

    r, _, export = fake.scan_lines(tmp, "skip-two", [], skipped="0 1\n5 2\n")
    sm = summary(export)
    ok(sm.get("HWLAT_SKIPPED_WINDOWS") == "3" and sm.get("HWLAT_SKIPPED_CPU_WINDOWS") == "0:1 5:2"
       and "windows skipped: 3 (CPU 0: 1, CPU 5: 2)" in r.stdout,
       "two CPUs: the sum and both, ascending", (sm.get("HWLAT_SKIPPED_CPU_WINDOWS"), r.stdout))

    r, _, export = fake.scan_lines(tmp, "skip-none", [])
    sm = summary(export)
    ok(sm.get("HWLAT_SKIPPED_WINDOWS") == "0" and sm.get("HWLAT_SKIPPED_CPU_WINDOWS") == ""
       and "windows skipped" not in r.stdout, "an empty file: a known 0, nothing printed",
       (sm.get("HWLAT_SKIPPED_WINDOWS"), r.stdout))

    r, d, export = fake.scan_lines(tmp, "skip-old", [], skipped=None)
    sm = summary(export)
    ok(r.returncode == 0 and sm.get("HWLAT_SKIPPED_WINDOWS") == "unavailable" and
       sm.get("HWLAT_SKIPPED_CPU_WINDOWS") == "unavailable" and
       f"{d}/skipped does not exist: the hwlat_detector module is older than this hwlat-scan, "
       "the windows skipped is unavailable" in r.stderr,
       "a module without the file: unavailable, said, exit 0",
       (sm.get("HWLAT_SKIPPED_WINDOWS"), r.stderr))

    r, d, export = fake.scan_lines(tmp, "skip-bad", [], skipped="1 x\n")
    sm = summary(export)
    ok(r.returncode == 0 and sm.get("HWLAT_SKIPPED_WINDOWS") == "unavailable" and
       f"{d}/skipped line 1: expected '<cpu> <windows>', read '1 x'; the windows skipped is "
       "unavailable" in r.stderr, "a malformed file: unavailable, the line named",
       (sm.get("HWLAT_SKIPPED_WINDOWS"), r.stderr))


def test_smi_scope(tmp):
    r, _, export = fake.scan_lines(tmp, "bare", ["--fail-if", "smi > 5"])
    sm = summary(export)
    ok(r.returncode == 0 and sm.get("HWLAT_SMI_SCOPE") == "host" and "note:" not in r.stdout and
       "hwlat-scan: pass: smi = 2, not > 5\n" in r.stdout,
       "bare metal: HWLAT_SMI_SCOPE=host, no note", (sm.get("HWLAT_SMI_SCOPE"), r.stdout))
    r, _, export = fake.scan_lines(tmp, "guest", ["--fail-if", "smi > 5, smi > 1"],
                                   platform="guest")
    sm = summary(export)
    ok(sm.get("HWLAT_SMI_SCOPE") == "guest" and f"hwlat-scan: note: {NOTE}\n" in r.stdout,
       "a guest: HWLAT_SMI_SCOPE=guest and the note", (sm.get("HWLAT_SMI_SCOPE"), r.stdout))
    ok(r.returncode == 6 and f"hwlat-scan: pass: smi = 2, not > 5; {NOTE}\n" in r.stdout and
       f"hwlat-scan: FAIL: smi = 2 > 1; {NOTE}\n" in r.stderr,
       "--fail-if smi in a guest decides as ever and repeats the note",
       (r.returncode, r.stdout, r.stderr))


def test_clocksource(tmp):
    for cs, warned in (("hpet", True), ("acpi_pm", True), ("tsc", False), ("kvm-clock", False)):
        r, _, export = fake.scan_lines(tmp, "cs-" + cs, [], clocksource=cs)
        warning = (f"hwlat-scan: warning: clocksource {cs} does not read the TSC: each clock "
                   "read costs more (the detection floor), and CPUs sampling at once wait for "
                   "each other's reads; gaps near the floor may be the clock's own cost (if the "
                   "TSC is sound, boot with tsc=reliable)\n")
        ok(summary(export).get("HWLAT_CLOCKSOURCE") == cs and (warning in r.stdout) == warned,
           f"clocksource {cs}: {'the warning' if warned else 'no warning'}", r.stdout)


def main():
    return scan_tap.run((test_skipped, test_smi_scope, test_clocksource))


if __name__ == "__main__":
    sys.exit(main())
