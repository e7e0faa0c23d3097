#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The tracer backend (service/backend-tracer.c): hwlat-scan
--backend=tracer|auto against a fake tracefs (fake_tracefs.py: regular
files for the tracer's settings, a FIFO for trace_pipe, a thread playing
the kernel), and proves that:

- the settings are written before trace_pipe is opened, and hwlat is the
  current tracer by then (a real kernel refuses to change the tracer while
  trace_pipe is open): tracing_thresh, width, window, mode, the cpus as a
  tracing_cpumask, tracing_on=1;
- each hwlat line of trace_pipe (the kernel's padded format) becomes one
  sample entry with exactly the fields the module's would have, values in
  ns, HWLAT_BACKEND=tracer, SMIs unavailable, and NMI time unavailable when
  the line has nmi-count without nmi-total; "[LOST n EVENTS]" lines count as
  dropped, other tracers' lines are ignored;
- the summary records backend tracer, settings source tracefs, the
  settings in force, floor, clock and SMIs unavailable (never 0); a gate
  on smi-rate fails, unknown, saying why;
- every file is restored as it was, after a completed scan, after SIGTERM
  ("interrupted"), when trace_pipe cannot be opened ("failed", exit 5),
  when trace_pipe ends before the duration (exit 5, said; a completed scan
  does not say it) and after a malformed hwlat line (exit 5);
- refusals change nothing and say why: current_tracer in use (exit 3,
  naming it), a second scan (exit 3), no tracefs, no hwlat in
  available_tracers (exit 4), mode stop-machine or a mode without a mode
  file (exit 2);
- auto uses the module when it can and says so (HWLAT_BACKEND=module),
  falls back to the tracer when the module cannot be used and says why,
  and never falls back from a fake detector to the real tracefs.

TAP output; exit status 1 when any check failed.
"""
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402
from fake_tracefs import (  # noqa: E402
    FOREIGN, L1, L2, L3, LOST, FakeKernel, entries, hwlat_fields, make_tracefs, scan,
    snapshot)

SAMPLE_ID, SUMMARY_ID = fake.SAMPLE_ID, fake.SUMMARY_ID
ok = fake.ok


def test_scan(tmp):
    d = make_tracefs(tmp)
    before = snapshot(d)
    export = os.path.join(tmp, "export.txt")
    k = FakeKernel(d, [L1, L2, LOST, FOREIGN, L3])
    k.start()
    r = scan(d, ["--backend", "tracer", "--duration", "1s", "--threshold", "20us",
                 "--width", "200ms", "--window", "400ms", "--mode", "per-cpu", "--cpus", "1"],
             export)
    k.join(10)
    ok(r.returncode == 0 and k.error is None,
       f"a tracer scan exits 0 (got {r.returncode}, kernel: {k.error})", r.stderr)

    want_open = dict(before)
    want_open.update({"current_tracer": "hwlat\n", "tracing_thresh": "20\n",
                      "tracing_cpumask": "2\n", "tracing_on": "1\n",
                      "hwlat_detector/width": "200000\n", "hwlat_detector/window": "400000\n",
                      "hwlat_detector/mode": "per-cpu\n"})
    ok(k.at_open == want_open,
       "when trace_pipe is opened, hwlat is the tracer and every setting is written "
       "(thresh 20, width 200000, window 400000, mode per-cpu, cpumask 2, tracing_on 1)",
       k.at_open)
    ok(snapshot(d) == before, "after the scan every tracefs file is as it was", snapshot(d))

    samples = entries(export, SAMPLE_ID)
    common = {"HWLAT_SMI_COUNT": "unavailable", "HWLAT_SMI_NS": "unavailable",
              "HWLAT_THRESHOLD_NS": "20000", "HWLAT_BACKEND": "tracer"}
    want = [
        dict(common, HWLAT_SEQ="1", HWLAT_CPU="1", HWLAT_INNER_NS="12000",
             HWLAT_OUTER_NS="10000", HWLAT_LATENCY_NS="12000", HWLAT_COUNT="1",
             HWLAT_NMI_COUNT="0", HWLAT_NMI_NS="0", HWLAT_TIMESTAMP_NS="1700000000123456789"),
        dict(common, HWLAT_SEQ="2", HWLAT_CPU="0", HWLAT_INNER_NS="5000",
             HWLAT_OUTER_NS="30000", HWLAT_LATENCY_NS="30000", HWLAT_COUNT="3",
             HWLAT_NMI_COUNT="2", HWLAT_NMI_NS="7000", HWLAT_TIMESTAMP_NS="1700000001000000001"),
        dict(common, HWLAT_SEQ="5", HWLAT_CPU="1", HWLAT_INNER_NS="1500000",
             HWLAT_OUTER_NS="2000", HWLAT_LATENCY_NS="1500000", HWLAT_COUNT="2",
             HWLAT_NMI_COUNT="1", HWLAT_NMI_NS="unavailable",
             HWLAT_TIMESTAMP_NS="1700000002000000000"),
    ]
    got = [hwlat_fields(e) for e in samples]
    ok(got == want, "three sample entries with exactly the module's fields, in ns, "
       "HWLAT_BACKEND=tracer, SMIs unavailable, NMI time unavailable without nmi-total", got)
    ok([e.get("MESSAGE") for e in samples] ==
       ["hardware latency 12.0 us on CPU 1", "hardware latency 30.0 us on CPU 0 (NMI)",
        "hardware latency 1.50 ms on CPU 1 (NMI)"],
       "the samples' messages", [e.get("MESSAGE") for e in samples])

    sums = entries(export, SUMMARY_ID)
    s = sums[0] if len(sums) == 1 else {}
    want_sum = {
        "HWLAT_STATUS": "completed", "HWLAT_BACKEND": "tracer",
        "HWLAT_SETTINGS_SOURCE": "tracefs", "HWLAT_THRESHOLD_NS": "20000",
        "HWLAT_WIDTH_NS": "200000000", "HWLAT_WINDOW_NS": "400000000",
        "HWLAT_MODE": "per-cpu", "HWLAT_CPUS": "1", "HWLAT_CLOCK": "unavailable",
        "HWLAT_SAMPLES": "3", "HWLAT_MAX_NS": "1500000",
        # seq 3 and 4 never seen, 4 events lost: the buffer's count is higher.
        "HWLAT_DROPPED": "4", "HWLAT_SMI_TOTAL": "unavailable",
        "HWLAT_SMI_UNAVAILABLE": "the kernel's hwlat tracer does not count SMIs",
        "HWLAT_NMI_TOTAL": "3", "HWLAT_FLOOR_NS": "unavailable", "HWLAT_SKIPPED_LINES": "0",
        # The tracer says nothing of the time it sampled.
        "HWLAT_SAMPLED_NS": "unavailable", "HWLAT_SAMPLED_CPU_NS": "unavailable",
    }
    got_sum = {k: s.get(k) for k in want_sum}
    ok(len(sums) == 1 and got_sum == want_sum and samples and
       fake.parse_export(export)[-1] is not None and
       fake.parse_export(export)[-1].get("MESSAGE_ID") == SUMMARY_ID,
       "one summary, last: backend tracer, settings source tracefs, the settings in force, "
       "dropped 4, floor, clock, SMIs and time sampled unavailable", got_sum)
    ok("the kernel's trace buffer lost 4 events: 'CPU:1 [LOST 4 EVENTS]'" in r.stderr and
       "ignoring lines of other tracers or events in trace_pipe, e.g. '" + FOREIGN.strip()[:40]
       in r.stderr.replace("'            ", "'"),
       "lost events and other tracers' lines are said on stderr", r.stderr)
    ok("trace_pipe ended" not in r.stderr,
       "a scan that ran its duration does not say trace_pipe ended early", r.stderr)
    ok("hwlat-scan: backend tracer: the kernel's hwlat tracer sampled (no SMI counts, "
       "no detection floor)\n" in r.stdout and "detection floor unavailable" in r.stdout
       and "hwlat-scan: time sampled unavailable\n" in r.stdout,
       "the printed summary names the backend, the floor and the time sampled as unavailable",
       r.stdout)


def test_smi_rate(tmp):
    """The tracer counts neither SMIs nor the time it sampled: a gate on
    smi-rate cannot be judged either way, fails (exit 6) and says why."""
    d = make_tracefs(tmp)
    k = FakeKernel(d, [L1])
    k.start()
    r = scan(d, ["--backend", "tracer", "--duration", "1s", "--fail-if",
                 "smi-rate > 0, smi-rate < 100000/h"], os.path.join(tmp, "export.txt"))
    k.join(10)
    why = "(the kernel's hwlat tracer does not count SMIs)"
    ok(r.returncode == 6 and [ln for ln in r.stderr.splitlines() if "FAIL" in ln] == [
        f"hwlat-scan: FAIL: smi-rate unknown {why}, cannot tell whether > 0/h",
        f"hwlat-scan: FAIL: smi-rate unknown {why}, cannot tell whether < 100000/h"],
       f"tracer: smi-rate unknown both ways, the reason said, exit 6 (got {r.returncode})",
       r.stdout + r.stderr)


def test_threshold_default(tmp):
    """tracing_thresh 0 is the tracer's default: 10 us is written and recorded."""
    d = make_tracefs(tmp, tracing_thresh="0\n", hwlat_detector__mode=None)
    before = snapshot(d)
    export = os.path.join(tmp, "export.txt")
    k = FakeKernel(d, [])
    k.start()
    r = scan(d, ["--backend", "tracer", "--duration", "200ms"], export)
    k.join(10)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 0 and k.at_open and k.at_open.get("tracing_thresh") == "10\n" and
       s.get("HWLAT_THRESHOLD_NS") == "10000" and s.get("HWLAT_MODE") == "unknown" and
       s.get("HWLAT_CPUS") == "0" and s.get("HWLAT_SAMPLES") == "0",
       "without a threshold, tracing_thresh 0 becomes the tracer's 10 us; no mode file: "
       "mode unknown; cpumask 1 recorded as CPUs 0", (r.stderr, k.at_open, s))
    ok(snapshot(d) == before, "tracing_thresh back to 0, nothing else changed", snapshot(d))


def test_sigterm_and_lock(tmp):
    d = make_tracefs(tmp)
    before = snapshot(d)
    export = os.path.join(tmp, "export.txt")
    k = FakeKernel(d, [L1])
    k.start()
    p = fake.start_scan(["--tracefs-dir", d, "--journal-export", export, "--backend", "tracer",
                         "--duration", "60s"])
    seen = fake.wait_for(lambda: fake.export_has_seq(export, 1), 20)
    r2 = scan(d, ["--backend", "tracer", "--duration", "1s"], os.path.join(tmp, "second.txt"))
    ok(seen and r2.returncode == 3 and
       f"another hwlat-scan is already using the kernel's tracer in {d}; not starting a "
       "second scan" in r2.stderr and not entries(os.path.join(tmp, "second.txt"), SUMMARY_ID),
       f"a second scan while one runs: exit 3 saying so, no entry (got {r2.returncode})",
       r2.stderr)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    k.join(10)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(p.returncode == 0 and s.get("HWLAT_STATUS") == "interrupted" and
       s.get("HWLAT_SAMPLES") == "1",
       f"SIGTERM: exit 0 (got {p.returncode}), summary interrupted with its 1 sample", err)
    ok(snapshot(d) == before, "SIGTERM: every tracefs file restored", snapshot(d))


def test_refusals(tmp):
    def case(name, args, want_rc, want_msg, what, **over):
        sub = os.path.join(tmp, name)
        os.mkdir(sub)
        d = make_tracefs(sub, **over)
        before = snapshot(d)
        export = os.path.join(sub, "export.txt")
        r = scan(d, args, export)
        ok(r.returncode == want_rc and want_msg in r.stderr and snapshot(d) == before and
           not entries(export, SUMMARY_ID),
           f"{what}: exit {want_rc} (got {r.returncode}), says so, changes nothing", r.stderr)
        return d

    d = case("busy", ["--backend", "tracer"], 3,
             "/current_tracer is 'function', not 'nop'; not starting (write nop to it once "
             "its user is done)", "current_tracer function",
             current_tracer="function\n")
    # (the message names the directory: checked by its start above)
    case("nohwlat", ["--backend", "tracer"], 4,
         "/available_tracers does not list it (CONFIG_HWLAT_TRACER; on Debian only "
         "linux-image-rt-amd64 builds it in)", "no hwlat in available_tracers",
         available_tracers="blk function nop\n")
    case("sm", ["--backend", "tracer", "--mode", "stop-machine"], 2,
         "invalid mode 'stop-machine' for backend tracer: the kernel's hwlat tracer has none, "
         "round-robin and per-cpu", "mode stop-machine")
    case("nomode", ["--backend", "tracer", "--mode", "per-cpu"], 2,
         "invalid key 'mode': this kernel's hwlat tracer has no mode file", "a mode without "
         "a mode file", hwlat_detector__mode=None)
    case("bounds", ["--backend", "tracer", "--width", "700ms"], 2,
         "width 700000 us must be smaller than window 600000 us (current)",
         "a width above the tracer's current window")
    sub = os.path.join(tmp, "none")
    os.mkdir(sub)
    r = scan(sub, ["--backend", "tracer"], os.path.join(sub, "export.txt"))
    ok(r.returncode == 4 and f"{sub} is no tracefs directory (it has no available_tracers)"
       in r.stderr, f"no tracefs: exit 4 saying so (got {r.returncode})", r.stderr)
    # available_tracers that exists but cannot be read (here a directory:
    # root reads any file) is an error with its cause, not "no hwlat tracer"
    # read from a buffer nothing was read into.
    sub = os.path.join(tmp, "unreadable")
    os.mkdir(sub)
    d = make_tracefs(sub, available_tracers=None)
    os.mkdir(os.path.join(d, "available_tracers"))
    r = scan(d, ["--backend", "tracer"], os.path.join(sub, "export.txt"))
    ok(r.returncode == 4 and f"cannot read {d}/available_tracers: Is a directory" in r.stderr
       and "does not list it" not in r.stderr,
       f"unreadable available_tracers: exit 4, names the file and the cause (got "
       f"{r.returncode})", r.stderr)


def test_busy_message(tmp):
    d = make_tracefs(tmp, current_tracer="function\n")
    r = scan(d, ["--backend", "tracer"], os.path.join(tmp, "export.txt"))
    ok(f"hwlat-scan: the kernel's tracer is busy: {d}/current_tracer is 'function', not 'nop'"
       in r.stderr, "the busy message names the directory and the tracer in use", r.stderr)


def test_failures(tmp):
    # trace_pipe missing: the tracer was started, so it is restored; summary failed.
    sub = os.path.join(tmp, "nopipe")
    os.mkdir(sub)
    d = make_tracefs(sub)
    os.unlink(os.path.join(d, "trace_pipe"))
    before = snapshot(d)
    export = os.path.join(sub, "export.txt")
    r = scan(d, ["--backend", "tracer", "--threshold", "3us"], export)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 5 and f"cannot open {d}/trace_pipe" in r.stderr and
       s.get("HWLAT_STATUS") == "failed" and snapshot(d) == before,
       f"trace_pipe cannot be opened: exit 5 (got {r.returncode}), summary failed, "
       "every file restored", (r.stderr, snapshot(d)))

    # tracing_thresh missing: the read error is the one message, nothing
    # is parsed from a file never read, nothing is changed.
    sub = os.path.join(tmp, "nothresh")
    os.mkdir(sub)
    d = make_tracefs(sub, tracing_thresh=None)
    before = snapshot(d)
    export = os.path.join(sub, "export.txt")
    r = scan(d, ["--backend", "tracer", "--threshold", "3us"], export)
    ok(r.returncode == 4 and r.stderr == f"hwlat-scan: cannot read {d}/tracing_thresh: "
       "No such file or directory\n" and snapshot(d) == before,
       f"tracing_thresh missing: exit 4 (got {r.returncode}), the read error alone, "
       "nothing changed", r.stderr)

    # A mode file whose text names no mode (no brackets, more than one
    # word): refused, the file and its text named, nothing changed.
    sub = os.path.join(tmp, "badmode")
    os.mkdir(sub)
    d = make_tracefs(sub, hwlat_detector__mode="none round-robin\n")
    before = snapshot(d)
    export = os.path.join(sub, "export.txt")
    r = scan(d, ["--backend", "tracer", "--threshold", "3us"], export)
    ok(r.returncode == 4 and f"hwlat-scan: {d}/hwlat_detector/mode: cannot tell the mode from "
       "'none round-robin'\n" in r.stderr and snapshot(d) == before,
       f"a mode file naming no mode: exit 4 (got {r.returncode}), says which file and "
       "what it read, nothing changed", r.stderr)

    # A window the kernel refuses (a read-only sysfs number stands in for
    # it): the scan does not start on the other settings, and says why.
    sub = os.path.join(tmp, "badwindow")
    os.mkdir(sub)
    d = make_tracefs(sub)
    window = os.path.join(d, "hwlat_detector", "window")
    os.unlink(window)
    os.symlink("/sys/devices/system/cpu/kernel_max", window)
    export = os.path.join(sub, "export.txt")
    r = scan(d, ["--backend", "tracer", "--width", "100us", "--window", "1100us",
                 "--duration", "500ms"], export)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    after = snapshot(d)
    ok(r.returncode == 5 and r.stderr ==
       f"hwlat-scan: scanning with the kernel's hwlat tracer in {d}\n"
       f"hwlat-scan: cannot write '1100' to {window}: Permission denied\n"
       "hwlat-scan: the scan could not start; restoring the tracer as it was\n" and
       s.get("HWLAT_STATUS") == "failed" and after["hwlat_detector/width"] == "300000\n" and
       after["current_tracer"] == "nop\n" and after["tracing_thresh"] == "7\n",
       f"a window the kernel refuses: exit 5 (got {r.returncode}), not started, width restored",
       (r.stderr, after))

    # trace_pipe ends before the duration: failed, exit 5, said once, restored.
    sub = os.path.join(tmp, "eof")
    os.mkdir(sub)
    d = make_tracefs(sub)
    before = snapshot(d)
    export = os.path.join(sub, "export.txt")
    k = FakeKernel(d, [L1], close_early=True)
    k.start()
    r = scan(d, ["--backend", "tracer", "--duration", "60s"], export)
    k.join(10)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 5 and r.stderr.count("hwlat-scan: trace_pipe ended before the scan did\n")
       == 1 and s.get("HWLAT_STATUS") == "failed" and s.get("HWLAT_SAMPLES") == "1" and
       snapshot(d) == before,
       f"trace_pipe ending under the scan: exit 5 (got {r.returncode}), said once, summary "
       "failed with its 1 sample, restored", (r.stderr, s))

    # A line that says hwlat but does not parse.
    sub = os.path.join(tmp, "bad")
    os.mkdir(sub)
    d = make_tracefs(sub)
    before = snapshot(d)
    export = os.path.join(sub, "export.txt")
    k = FakeKernel(d, [L1, "  x-1 [000] d.... 1.0: #2 inner/outer(us): 5/x ts:1.000000000 count:1"])
    k.start()
    r = scan(d, ["--backend", "tracer", "--duration", "500ms"], export)
    k.join(10)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 5 and "skipping a malformed line in the detector's stream" in r.stderr and
       s.get("HWLAT_STATUS") == "failed" and s.get("HWLAT_SKIPPED_LINES") == "1" and
       s.get("HWLAT_SAMPLES") == "1" and snapshot(d) == before,
       f"a malformed hwlat line: skipped and counted, exit 5 (got {r.returncode}), restored",
       (r.stderr, s))


def test_auto(tmp):
    # The module can be used: auto says so and the module samples.
    sub = os.path.join(tmp, "module")
    os.mkdir(sub)
    det = fake.make_fake(sub)
    tfs = make_tracefs(sub)
    tbefore = snapshot(tfs)
    export = os.path.join(sub, "export.txt")
    mod = fake.FakeModule(det, lambda w: (w.write(fake.line(1, 0, 1700000000, 5, 30, 20, 1, 0, 0,
                                                               0)), w.flush()))
    mod.start()
    r = fake.run_scan(["--detector-dir", det, "--tracefs-dir", tfs, "--journal-export", export,
                       "--backend", "auto", "--duration", "300ms"])
    mod.join(10)
    samples = entries(export, SAMPLE_ID)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 0 and f"hwlat-scan: backend auto: using the hwlat_detector module ({det})"
       in r.stderr and [e.get("HWLAT_BACKEND") for e in samples] == ["module"] and
       s.get("HWLAT_BACKEND") == "module" and s.get("HWLAT_SETTINGS_SOURCE") == "debugfs" and
       snapshot(tfs) == tbefore,
       f"auto with a usable module: says so, HWLAT_BACKEND=module, tracefs untouched "
       f"(got {r.returncode})", r.stderr)

    # No module: auto says why and falls back to the tracer.
    sub = os.path.join(tmp, "fallback")
    os.mkdir(sub)
    tfs = make_tracefs(sub)
    tbefore = snapshot(tfs)
    export = os.path.join(sub, "export.txt")
    k = FakeKernel(tfs, [L1])
    k.start()
    missing = os.path.join(sub, "no-detector")
    r = fake.run_scan(["--detector-dir", missing, "--tracefs-dir", tfs, "--journal-export",
                       export, "--backend", "auto", "--duration", "300ms"])
    k.join(10)
    s = (entries(export, SUMMARY_ID) or [{}])[0]
    ok(r.returncode == 0 and f"cannot open the detector directory {missing}" in r.stderr and
       "hwlat-scan: backend auto: the hwlat_detector module cannot be used (said above); "
       "scanning with the kernel's hwlat tracer instead" in r.stderr and
       s.get("HWLAT_BACKEND") == "tracer" and s.get("HWLAT_SAMPLES") == "1" and
       snapshot(tfs) == tbefore,
       f"auto without the module: says why, scans with the tracer (got {r.returncode})",
       r.stderr)

    # Neither: exit 4 with both reasons.
    tfs2 = make_tracefs(os.path.join(sub, "t2"), available_tracers="nop\n")
    r = fake.run_scan(["--detector-dir", missing, "--tracefs-dir", tfs2, "--journal-export",
                       os.path.join(sub, "e2.txt"), "--backend", "auto"])
    ok(r.returncode == 4 and f"cannot open the detector directory {missing}" in r.stderr and
       "does not list it (CONFIG_HWLAT_TRACER" in r.stderr,
       f"auto with neither module nor hwlat tracer: exit 4 with both reasons "
       f"(got {r.returncode})", r.stderr)

    # A fake detector never falls back to the real tracefs.
    r = fake.run_scan(["--detector-dir", missing, "--journal-export",
                       os.path.join(sub, "e3.txt"), "--backend", "auto"])
    ok(r.returncode == 4 and "backend auto: no fallback to the kernel's tracer with "
       "--detector-dir but no --tracefs-dir" in r.stderr,
       f"auto with a fake detector and no --tracefs-dir: exit 4, no real tracefs "
       f"(got {r.returncode})", r.stderr)


def test_config(tmp):
    conf = os.path.join(tmp, "scan.conf")
    with open(conf, "w") as f:
        f.write("backend = tracer\n")
    r = fake.run_scan(["--config", conf, "--check-config"])
    ok(r.returncode == 0 and f"# backend: from {conf}:1\nbackend = tracer\n" in r.stdout,
       "backend = tracer in the config file, printed by --check-config", r.stdout + r.stderr)
    r = fake.run_scan(["--backend", "kernel", "--check-config"])
    ok(r.returncode == 2 and "command line: invalid value 'kernel' for 'backend': expected "
       "module, tracer or auto" in r.stderr,
       f"a bad backend: exit 2 naming it (got {r.returncode})", r.stderr)


def test_load_module(tmp):
    """The unit's ExecStartPre (--load-module) follows the configured backend."""
    sysmod = os.path.join(tmp, "sys-module")
    run = os.path.join(tmp, "run-hwlat")
    log = os.path.join(tmp, "module-tool.log")
    os.mkdir(sysmod)
    env = {"HWLAT_MODPROBE": fake.FAKE_MODPROBE, "HWLAT_SYS_MODULE": sysmod,
           "HWLAT_RUN_DIR": run, "FAKE_MODPROBE_LOG": log}
    marker = os.path.join(run, "loaded-by-scan")

    def calls():
        if not os.path.exists(log):
            return []
        with open(log) as f:
            c = f.read().splitlines()
        os.unlink(log)
        return c

    # A module tool that cannot be run: its name and errno, once.
    nothing = os.path.join(tmp, "no-such-modprobe")
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "module", "--load-module"],
                      env={**env, "HWLAT_MODPROBE": nothing})
    ok(r.returncode == 4 and r.stderr == f"hwlat-scan: cannot run {nothing}: "
       "No such file or directory\n" and not os.path.exists(marker),
       f"a module tool that cannot be run: exit 4 (got {r.returncode}), named once", r.stderr)
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "tracer", "--load-module"], env=env)
    ok(r.returncode == 0 and calls() == [] and not os.path.exists(marker) and
       "hwlat-scan: backend tracer: not loading the hwlat_detector module\n" in r.stderr,
       f"--load-module with backend tracer loads nothing and says so (got {r.returncode})",
       r.stderr)
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "auto", "--load-module"],
                      env={**env, "FAKE_MODPROBE_MISSING": "1"})
    ok(r.returncode == 0 and calls() == ["--dry-run --quiet hwlat_detector"] and
       not os.path.exists(marker) and
       "hwlat-scan: backend auto: the hwlat_detector module cannot be loaded (said above); "
       "the scan will use the kernel's hwlat tracer" in r.stderr,
       f"--load-module with backend auto and no module: exit 0, the tracer will scan "
       f"(got {r.returncode})", r.stderr)
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "auto", "--load-module"], env=env)
    ok(r.returncode == 0 and calls() == ["--dry-run --quiet hwlat_detector",
                                         "--quiet hwlat_detector"] and os.path.exists(marker),
       f"--load-module with backend auto and a module: loads it (got {r.returncode})", r.stderr)

    # A configuration that does not load: the module is loaded all the same
    # (the scan then says what is wrong), not the backend it names.
    sysmod2, run2 = os.path.join(tmp, "sys-module-2"), os.path.join(tmp, "run-hwlat-2")
    os.mkdir(sysmod2)
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "tracer", "--width", "700ms",
                       "--window", "600ms", "--load-module"],
                      env={**env, "HWLAT_SYS_MODULE": sysmod2, "HWLAT_RUN_DIR": run2})
    ok(r.returncode == 0 and calls() == ["--dry-run --quiet hwlat_detector",
                                         "--quiet hwlat_detector"] and
       os.path.exists(os.path.join(run2, "loaded-by-scan")) and
       r.stderr == "hwlat-scan: width 700000 us must be smaller than window 600000 us\n",
       f"--load-module with a configuration that does not load: loads the module "
       f"(got {r.returncode})", r.stderr)


def main():
    if not os.access(fake.SCAN, os.X_OK):
        print(f"Bail out! {fake.SCAN} is not built")
        return 1
    import scan_tap  # the counts of ok (fake_detector.py imports it)
    return scan_tap.run((test_scan, test_smi_rate, test_threshold_default, test_sigterm_and_lock, test_refusals,
                         test_busy_message, test_failures, test_auto, test_config,
                         test_load_module))


if __name__ == "__main__":
    sys.exit(main())
