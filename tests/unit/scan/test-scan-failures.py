#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How each failure of a scan is said and what status it ends in, module
and tracer backends alike, on the fake detector (fake_detector.py) and
tracefs (fake_tracefs.py); the cases tests/mutation found untested:

- a scan that did not load the module runs no module tool (every scan
  here gets a fake one);
- 64 setting options are taken, the 65th is refused (exit 2);
- a module whose `smi` file says it cannot count SMIs makes every sample's
  SMI fields "unavailable", even where the stream line has a number;
- a `cpus_excluded` that is not a cpulist (one character) is said and not
  recorded;
- the OpenMetrics quantile of one window is that window's latency (the
  middle of its histogram bucket is below it and is clamped to the
  minimum);
- a journal that refuses a sample (the export file is /dev/full) names the
  sample, and the scan fails (exit 5);
- a detector that cannot be disabled at the end (its `enable` became
  /dev/full) is said, and the scan fails (exit 5, status "failed");
- with the module's settings (setting files refused, as under lockdown),
  an EOF that the last read finds behind a SIGTERM fails the scan;
- with the kernel's tracer, a trace_pipe whose last read fails (a
  directory: EISDIR) behind a SIGTERM is said, and the scan stays
  "interrupted" (exit 0): only a scan that ran its full duration fails
  for it;
- with the module's settings too, a stream whose read after enable=0
  fails (a directory: EISDIR) behind a SIGTERM is said once as an
  unreadable stream and the scan stays "interrupted" (exit 0);
- a detector that cannot be enabled (its `enable` is /dev/full from the
  start) is said with the cause, the scan fails (exit 5, status
  "failed") and nothing is sampled;
- a stream whose sequence goes back (5, then 3) is said with both
  numbers; a malformed stream line is quoted with printable ASCII as it
  is, '~' (0x7e) included, and DEL (0x7f) and '\\' escaped as \\xNN;
- a sample the statistics cannot count (no memory: RLIMIT_DATA lowered
  while the scan samples) breaks the scan: said once with the sample's
  number, never as an unreadable stream, exit 5;
- a tracer scan without --mode never writes the tracer's mode file (it
  keeps the kernel's text, "none [round-robin] per-cpu", byte for byte);
- a tracer whose tracing_thresh cannot be written back at the end (it
  became /dev/full) is said, naming the directory, and the scan fails
  (exit 5, status "failed");
- a scan that writes to a journald that listens says nothing about the
  journal on stderr (the socket check passed: no "cannot write" line);
- a stream that does not end after enable=0 (the module keeps it open
  past the window and the 2 s grace) is said once, and the scan fails
  (exit 5, status "failed");
- a stream that someone else holds (open() is EBUSY: a terminal in
  exclusive mode, opened without CAP_SYS_ADMIN) is refused saying so,
  exit 3;
- the module tool runs with SIGPIPE at its default action, though the
  scan ignores SIGPIPE itself;
- --load-module where debugfs is not mounted mounts it (read-write: the
  scan writes the detector's settings there) and goes on to load the
  module (exit 0); as root, in a mount namespace of its own;
- an interactive scan where debugfs is not mounted mounts it, loads the
  module and looks there (as root, in a mount namespace of its own);
- --backend tracer where no tracefs is mounted (a tmpfs over /sys/kernel
  in a mount namespace) says both places it looked and how to mount it,
  exit 4;
- --load-module in a kernel without debugfs (a /proc/filesystems that
  does not list it, bind-mounted in that namespace) says why nothing can
  be scanned and how to fix it, exit 4, no module tool run.

TAP output; exit status 1 when any check failed.
"""
import fcntl
import os
import resource
import signal
import subprocess
import sys
import termios
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

import fake_tracefs as tracer  # noqa: E402

ok = fake.ok


def no_module_tool(tmp, **env):
    """The environment of a scan that must not run the module tool: a fake
    one (never the host's modprobe) whose every call lands in a log."""
    sysmod = os.path.join(tmp, "sys-module")
    os.makedirs(sysmod, exist_ok=True)
    return {"HWLAT_MODPROBE": fake.FAKE_MODPROBE, "HWLAT_SYS_MODULE": sysmod,
            "FAKE_MODPROBE_LOG": os.path.join(tmp, "modprobe.log"), **env}


def module_tool_calls(tmp):
    log = os.path.join(tmp, "modprobe.log")
    return open(log).read().splitlines() if os.path.exists(log) else []


def summary_and_samples(export):
    entries = fake.parse_export(export) if os.path.exists(export) else []
    sm = [e for e in entries if e.get("MESSAGE_ID") == fake.SUMMARY_ID]
    return (sm[0] if len(sm) == 1 else {},
            [e for e in entries if e.get("MESSAGE_ID") == fake.SAMPLE_ID])


def test_too_many_options(tmp):
    """64 setting options are taken (the last wins), the 65th is refused."""
    for n, rc, out, err in ((64, 0, "# threshold: from command line\nthreshold = 64us\n", ""),
                            (65, 2, "", "hwlat-scan: too many options\n")):
        args = [a for i in range(1, n + 1) for a in ("--threshold", f"{i}us")]
        r = fake.run_scan(args + ["--check-config"], env=no_module_tool(tmp))
        ok(r.returncode == rc and out in r.stdout and r.stderr == err,
           f"{n} --threshold options: exit {rc} (got {r.returncode})", (r.stdout, r.stderr))


def test_unavailable_counts(tmp):
    d = fake.make_fake(tmp, smi="unavailable: not an Intel CPU\n", cpus_excluded="x\n")
    export = os.path.join(tmp, "export.txt")
    prom = os.path.join(tmp, "hwlat.prom")

    def script(w):
        # An SMI count of 3 from a module that says it cannot count.
        w.write(fake.line(1, 0, 1700000000, 0, 31100, 1000, 1, 0, 0, 3))
        w.flush()

    mod = fake.FakeModule(d, script)
    mod.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "300ms",
                       "--openmetrics-file", prom], env=no_module_tool(tmp))
    mod.join(5)
    sm, samples = summary_and_samples(export)
    ok(r.returncode == 0 and [s.get("HWLAT_SMI_COUNT") for s in samples] == ["unavailable"]
       and sm.get("HWLAT_SMI_TOTAL") == "unavailable" and module_tool_calls(tmp) == [],
       f"SMIs unavailable: the stream's count 3 is journaled as 'unavailable', no module "
       f"tool run (exit {r.returncode})", (r.stderr, samples, sm, module_tool_calls(tmp)))
    ok("hwlat-scan: " + d + "/cpus_excluded: expected a cpulist, read 'x'; not recorded"
       in r.stderr and sm and "HWLAT_CPUS_EXCLUDED" not in sm,
       "cpus_excluded 'x' is said and not recorded", (r.stderr, sm))
    text = open(prom).read() if os.path.exists(prom) else ""
    # 31100 ns lies in the bucket [30976, 31104): its middle 31039 is
    # below the only window, so every quantile is the window itself.
    ok('hwlat_latency_seconds{quantile="0.5"} 0.0000311\n' in text
       and 'hwlat_latency_seconds{quantile="0.999"} 0.0000311\n' in text,
       "one window of 31.1 us: the quantiles are 31.1 us", text)


def test_journal_refuses(tmp):
    d = fake.make_fake(tmp)

    def script(w):
        w.write(fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
        w.flush()

    mod = fake.FakeModule(d, script)
    mod.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", "/dev/full",
                       "--duration", "300ms"], env=no_module_tool(tmp))
    mod.join(5)
    ok(r.returncode == 5 and "hwlat-scan: cannot write sample 1 to the journal: "
       "No space left on device\n" in r.stderr,
       f"a journal that refuses sample 1: said, exit 5 (got {r.returncode})", r.stderr)


def test_cannot_disable(tmp):
    d = fake.make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    enable = os.path.join(d, "enable")
    done = threading.Event()
    error = []

    def module():
        # Plays the module until the scan ends; once sampling, enable=0
        # can no longer be written (ENOSPC). Never reads /dev/full.
        try:
            with open(os.path.join(d, "stream"), "w") as w:
                if not fake.wait_for(fake.enabled(d, "1"), 20):
                    error.append("enable never became 1")
                    return
                os.remove(enable)
                os.symlink("/dev/full", enable)
                w.write(fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
                w.flush()
                done.wait(30)
        except Exception as e:  # reported below
            error.append(repr(e))

    t = threading.Thread(target=module, daemon=True)
    t.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "300ms"],
                      env=no_module_tool(tmp))
    done.set()
    t.join(5)
    sm, samples = summary_and_samples(export)
    ok(not error and r.returncode == 5
       and "hwlat-scan: cannot disable the detector: No space left on device\n" in r.stderr
       and sm.get("HWLAT_STATUS") == "failed" and len(samples) == 1,
       f"a detector that cannot be disabled: said, status failed, exit 5 (got {r.returncode})",
       (error, r.stderr, sm))


def test_cannot_enable(tmp):
    """Writing enable=1 fails (ENOSPC): the cause is said before the scan
    gives up, and the one summary says failed."""
    d = fake.make_fake(tmp)
    enable = os.path.join(d, "enable")
    os.remove(enable)
    os.symlink("/dev/full", enable)  # reads NULs (not enabled), writes ENOSPC
    export = os.path.join(tmp, "export.txt")
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "300ms"],
                      env=no_module_tool(tmp))
    sm, samples = summary_and_samples(export)
    ok(r.returncode == 5
       and "hwlat-scan: cannot enable the detector: No space left on device\n"
       "hwlat-scan: the scan could not start; restoring the previous settings\n" in r.stderr
       and sm.get("HWLAT_STATUS") == "failed" and sm.get("HWLAT_SAMPLES") == "0"
       and not samples,
       f"a detector that cannot be enabled: said with its cause, status failed, exit 5 "
       f"(got {r.returncode})", (r.stderr, sm))


def test_sequence_back_and_escapes(tmp):
    """Sample 5, then sample 3, then a malformed line: both said on stderr
    exactly; the malformed line fails the scan (exit 5)."""
    d = fake.make_fake(tmp)
    export = os.path.join(tmp, "export.txt")

    def script(w):
        w.write(fake.line(5, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
        w.write(fake.line(3, 0, 1700000001, 0, 31000, 0, 1, 0, 0, 0))
        w.write("a~b}\x7f\\c\n")
        w.flush()

    mod = fake.FakeModule(d, script)
    mod.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "500ms"],
                      env=no_module_tool(tmp))
    mod.join(5)
    sm, samples = summary_and_samples(export)
    ok("hwlat-scan: stream sequence went back from 5 to 3\n" in r.stderr
       and [e.get("HWLAT_SEQ") for e in samples] == ["5", "3"],
       "sample 3 after sample 5: 'stream sequence went back from 5 to 3'", r.stderr)
    ok(r.returncode == 5 and "hwlat-scan: skipping a malformed line in the detector's "
       "stream: 'a~b}\\x7f\\x5cc'\n" in r.stderr and sm.get("HWLAT_STATUS") == "failed",
       f"a malformed line 'a~b}}<DEL>\\c': '~' and '}}' as they are, DEL and '\\' as \\xNN, "
       f"exit 5 (got {r.returncode})", r.stderr)


def test_count_fails(tmp):
    """count_window() fails only when malloc() does. Once sample 1 is
    journaled, RLIMIT_DATA is set to the scan's data size (VmData): the
    per-CPU statistics of --openmetrics-file need a new histogram row for
    each new CPU and latency, and soon one cannot be had. The scan stops
    at that sample, names it, and does not take it for a read error of the
    stream (the error is its own, already said); exit 5, status failed."""
    d = fake.make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    prom = os.path.join(tmp, "hwlat.prom")
    error = []
    p = fake.start_scan(["--detector-dir", d, "--journal-export", export, "--duration", "30s",
                         "--openmetrics-file", prom])

    def module():
        try:
            with open(os.path.join(d, "stream"), "w") as w:
                if not fake.wait_for(fake.enabled(d, "1"), 20):
                    error.append("enable never became 1")
                    return
                w.write(fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
                w.flush()
                if not fake.wait_for(lambda: fake.export_has_seq(export, 1), 20):
                    error.append("sample 1 was never journaled")
                    return
                with open(f"/proc/{p.pid}/status") as f:
                    kib = int(next(ln for ln in f if ln.startswith("VmData:")).split()[1])
                resource.prlimit(p.pid, resource.RLIMIT_DATA,
                                 (kib * 1024, resource.RLIM_INFINITY))
                # 1023 new CPUs, each with 4 latencies of other rows:
                # about 5 KiB of new statistics a CPU, 5 MiB in all.
                seq = 2
                for cpu in range(1, 1024):
                    for k in range(4):
                        w.write(fake.line(seq, cpu, 1700000001, seq, 1000 << (4 * k + cpu % 4),
                                          0, 1, 0, 0, 0))
                        seq += 1
                    w.flush()
        except BrokenPipeError:
            pass  # the scan stopped reading: what it must do
        except Exception as e:  # reported below
            error.append(repr(e))

    t = threading.Thread(target=module, daemon=True)
    t.start()
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    t.join(10)
    sm, samples = summary_and_samples(export)
    failed = [ln for ln in err.splitlines() if ln.startswith("hwlat-scan: cannot count sample ")]
    ok(not error and p.returncode == 5 and len(failed) == 1
       and failed[0].endswith(": Cannot allocate memory")
       and "cannot read the detector's stream" not in err
       and sm.get("HWLAT_STATUS") == "failed"
       and max(int(e["HWLAT_SEQ"]) for e in samples) <
       int(failed[0].split()[4].rstrip(":")),
       f"a sample that cannot be counted: said once with its number, not as a stream error, "
       f"nothing after it journaled, exit 5 (got {p.returncode})", (error, err, sm))


def test_stream_does_not_end(tmp):
    """After enable=0 the scan reads the stream until its EOF, at most the
    window (200 ms) and 2 s more: here the stream stays open for 4.5 s."""
    d = fake.make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    error = []

    def module():
        try:
            with open(os.path.join(d, "stream"), "w") as w:
                if not fake.wait_for(fake.enabled(d, "1"), 20):
                    error.append("enable never became 1")
                    return
                w.write(fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
                w.flush()
                if not fake.wait_for(fake.enabled(d, "0"), 20):
                    error.append("enable never went back to 0")
                    return
                time.sleep(4.5)  # then EOF: well after the drain's end
        except Exception as e:  # reported below
            error.append(repr(e))

    t = threading.Thread(target=module, daemon=True)
    t.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "300ms",
                       "--width", "100ms", "--window", "200ms"], env=no_module_tool(tmp))
    t.join(10)
    sm, samples = summary_and_samples(export)
    ok(not error and r.returncode == 5
       and r.stderr.count("hwlat-scan: the detector's stream did not end after enable=0\n") == 1
       and sm.get("HWLAT_STATUS") == "failed" and len(samples) == 1,
       f"a stream that does not end after enable=0: said once, status failed, exit 5 "
       f"(got {r.returncode})", (error, r.stderr[:2000], sm))


def wait_stopped(pid, limit=10.0):
    """Returns once /proc says pid is stopped (state T), at most limit s."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.01)
    raise RuntimeError(f"process {pid} did not stop within {limit} s")


def test_locked_eof_with_signal(tmp):
    """With the module's settings (debugfs refuses writes) the stream is
    read once more after the scan stops: an EOF found there fails the scan
    even when a signal stopped it."""
    wrapper = fake.locked_wrapper()
    if wrapper is None:
        ok(True, "locked scan, EOF after a signal # SKIP no user namespace")
        return
    d = fake.make_fake(tmp)
    os.chmod(tmp, 0o755)
    for f in fake.SETTINGS:
        os.chmod(os.path.join(d, f), 0)
    env = no_module_tool(tmp, HWLAT_SYS_MODULE=fake.fake_sys_module(tmp, **fake.PARAMS))
    export = os.path.join(tmp, "export.txt")
    fd = os.open(os.path.join(d, "stream"), os.O_RDWR | os.O_NONBLOCK)
    p = subprocess.Popen(wrapper + [fake.SCAN] + fake.NO_CONFIG +
                         ["--detector-dir", d, "--journal-export", export, "--duration", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=fake.scan_env(env))
    # A window every 0.2 s until one is journaled: the scan is sampling
    # (those buffered before it started are discarded).
    seq, end = 200, time.monotonic() + 15
    while not summary_and_samples(export)[1] and time.monotonic() < end:
        os.write(fd, fake.line(seq, 1, 1700000001, 0, 40000, 0, 1, 0, 0, 0).encode())
        seq += 1
        time.sleep(0.2)
    # Stopped, the scan sees the signal and the stream's EOF at once; it
    # takes the signal first, then the last read finds the EOF.
    os.kill(p.pid, signal.SIGSTOP)
    # kill() returns before the scan has stopped: closing the stream while
    # it still runs lets it see the EOF alone, before the SIGTERM exists
    # (seen once in 2026-12-05's mutation run). Wait for state T.
    wait_stopped(p.pid)
    os.close(fd)
    os.kill(p.pid, signal.SIGTERM)
    os.kill(p.pid, signal.SIGCONT)
    out, err = p.communicate(timeout=30)
    sm, samples = summary_and_samples(export)
    ok(p.returncode == 5 and "stopping the scan" in err
       and "hwlat-scan: the detector's stream ended before the scan did: was it disabled by "
       "someone else?\n" in err and sm.get("HWLAT_STATUS") == "failed"
       and len(samples) >= 1,
       f"locked scan, EOF behind a SIGTERM: status failed, exit 5 (got {p.returncode})",
       (err, sm))


def test_tracer_read_error_after_signal(tmp):
    """The tracer path reads trace_pipe once more after the scan stops: a
    read error there (not EOF) fails a completed scan but not an
    interrupted one, which keeps its status and exit 0 and says the error."""
    d = tracer.make_tracefs(tmp)
    os.unlink(os.path.join(d, "trace_pipe"))
    os.mkdir(os.path.join(d, "trace_pipe"))  # opens; every read() is EISDIR
    tracers = os.path.join(d, "available_tracers")
    os.unlink(tracers)
    os.mkfifo(tracers)  # holds the scan where its signals are blocked already
    export = os.path.join(tmp, "export.txt")
    p = fake.start_scan(["--tracefs-dir", d, "--journal-export", export, "--backend", "tracer",
                         "--duration", "60s"])
    # The sample loop takes the pending signal before trace_pipe.
    held, out, err = fake.term_while_held(p, tracers, tracer.TRACEFS["available_tracers"])
    sm, samples = summary_and_samples(export)
    ok(held and p.returncode == 0 and "hwlat-scan: received Terminated, stopping the scan\n"
       in err and "hwlat-scan: cannot read the detector's stream: Is a directory\n" in err
       and sm.get("HWLAT_STATUS") == "interrupted" and sm.get("HWLAT_BACKEND") == "tracer"
       and not samples,
       f"tracer scan, trace_pipe read fails behind a SIGTERM: said, status interrupted, "
       f"exit 0 (got {p.returncode})", (err, sm))


def test_module_read_error_after_signal(tmp):
    """The module path drains the stream after enable=0: a read error there
    (the stream is a directory: EISDIR) is said at once as an unreadable
    stream, not read again until the drain's deadline; a scan stopped by a
    signal stays "interrupted", exit 0."""
    d = fake.make_fake(tmp, smi=None)
    stream = os.path.join(d, "stream")
    os.unlink(stream)
    os.mkdir(stream)
    smi = os.path.join(d, "smi")
    os.mkfifo(smi)  # holds the scan where its signals are blocked already
    export = os.path.join(tmp, "export.txt")
    p = subprocess.Popen([fake.SCAN] + fake.NO_CONFIG +
                         ["--detector-dir", d, "--journal-export", export, "--duration", "60s"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=fake.scan_env(no_module_tool(tmp)))
    # The sample loop takes the pending signal before the stream.
    held, out, err = fake.term_while_held(p, smi, fake.ORIGINAL["smi"])
    sm, samples = summary_and_samples(export)
    ok(held and p.returncode == 0 and err ==
       "hwlat-scan: received Terminated, stopping the scan\n"
       "hwlat-scan: cannot read the detector's stream: Is a directory\n"
       and sm.get("HWLAT_STATUS") == "interrupted" and not samples,
       f"module scan, stream read fails behind a SIGTERM: said, status interrupted, "
       f"exit 0 (got {p.returncode})", (err, sm))


def test_tracer_mode_untouched(tmp):
    """Without --mode the mode in force is kept: hwlat_detector/mode is not
    written, neither when the tracer starts nor when it is restored (a
    write would leave the bare name "round-robin" in this regular file)."""
    d = tracer.make_tracefs(tmp)
    export = os.path.join(tmp, "export.txt")
    k = tracer.FakeKernel(d, [tracer.L1])
    k.start()
    r = tracer.scan(d, ["--backend", "tracer", "--duration", "300ms", "--threshold", "20us"],
                    export)
    k.join(10)
    mode = fake.read(d, "hwlat_detector/mode")
    ok(r.returncode == 0 and k.error is None and k.at_open is not None
       and k.at_open.get("tracing_thresh") == "20\n"
       and mode == tracer.TRACEFS["hwlat_detector/mode"],
       f"a tracer scan without --mode leaves the mode file as it was: {mode!r} "
       f"(exit {r.returncode})", (r.stderr, k.error))


def test_tracer_restore_fails(tmp):
    """Once trace_pipe is open, tracing_thresh becomes /dev/full: writing
    the original 7 back fails with ENOSPC, which the scan says (naming the
    tracefs directory) and fails for."""
    d = tracer.make_tracefs(tmp)
    export = os.path.join(tmp, "export.txt")
    thresh = os.path.join(d, "tracing_thresh")
    error = []

    def kernel():
        try:
            fd = fake.open_when_read(os.path.join(d, "trace_pipe"))
            if fd < 0:
                error.append("trace_pipe was never opened")
                return
            os.remove(thresh)
            os.symlink("/dev/full", thresh)
            fake.wait_for(lambda: fake.read(d, "current_tracer") == "nop\n", 30)
            os.close(fd)
        except Exception as e:  # reported below
            error.append(repr(e))

    t = threading.Thread(target=kernel, daemon=True)
    t.start()
    r = tracer.scan(d, ["--backend", "tracer", "--duration", "300ms", "--threshold", "20us"],
                    export)
    t.join(10)
    sm, _ = summary_and_samples(export)
    ok(not error and r.returncode == 5
       and f"hwlat-scan: the tracer's previous state could not all be restored ({d})\n"
       in r.stderr and sm.get("HWLAT_STATUS") == "failed"
       and fake.read(d, "current_tracer") == "nop\n",
       f"tracing_thresh cannot be written back: said naming {d}, status failed, exit 5 "
       f"(got {r.returncode})", (error, r.stderr, sm))


def test_journald_listens(tmp):
    """Without --journal-export the scan first checks that journald
    listens; when it does (a fake journald bound where the socket is, in a
    mount namespace), nothing is said: stderr stays empty."""
    probe = subprocess.run(fake.journal_namespace(["true"]), capture_output=True)
    if probe.returncode != 0:
        ok(True, "a scan to a listening journald # SKIP no mount namespace")
        return
    d = fake.make_fake(tmp)
    mod = fake.FakeModule(d, lambda w: (w.write(fake.line(1, 0, 1, 0, 20000, 0, 1, 0, 0, 0)),
                                        w.flush()))
    mod.start()
    jd = fake.FakeJournald(tmp)
    r = subprocess.run(jd.wrap([fake.SCAN] + fake.NO_CONFIG +
                               ["--detector-dir", d, "--duration", "300ms"]),
                       capture_output=True, text=True, env=fake.scan_env(no_module_tool(tmp)),
                       timeout=60)
    mod.join(5)
    jd.close()
    ok(r.returncode == 0 and r.stderr == ""
       and [e.get("HWLAT_SEQ") for e in jd.entries] == ["1", None]
       and jd.entries[-1].get("HWLAT_STATUS") == "completed",
       f"a scan to a listening journald: its entries sent, nothing on stderr, exit 0 "
       f"(got {r.returncode})", (r.stderr, jd.entries))


def test_stream_busy(tmp):
    """The module lets one reader have its stream: a second open() is
    EBUSY. Here the stream is a pseudo-terminal in exclusive mode
    (TIOCEXCL), which open() refuses with EBUSY to a process without
    CAP_SYS_ADMIN: the scan runs without it (setpriv)."""
    drop = ["setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin"]
    if subprocess.run(drop + ["true"], capture_output=True).returncode != 0:
        ok(True, "a busy stream # SKIP setpriv cannot drop CAP_SYS_ADMIN")
        return
    d = fake.make_fake(tmp)
    master, slave = os.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCEXCL)
        os.remove(os.path.join(d, "stream"))
        os.symlink(os.ttyname(slave), os.path.join(d, "stream"))
        before = {n: fake.read(d, n) for n in ("enable", "threshold", "width", "window")}
        r = subprocess.run(drop + [fake.SCAN] + fake.NO_CONFIG +
                           ["--detector-dir", d, "--journal-export",
                            os.path.join(tmp, "export.txt"), "--duration", "300ms"],
                           capture_output=True, text=True,
                           env=fake.scan_env(no_module_tool(tmp)), timeout=60)
        after = {n: fake.read(d, n) for n in before}
    finally:
        os.close(slave)
        os.close(master)
    ok(r.returncode == 3 and r.stderr ==
       f"hwlat-scan: {d}/stream is open by another reader; not starting\n"
       and after == before,
       f"a stream open() refuses with EBUSY: 'open by another reader; not starting', exit 3, "
       f"detector unchanged (got {r.returncode})", (r.stderr, after))


def test_module_tool_signals(tmp):
    """hwlat-scan ignores SIGPIPE (a closed stdout is EPIPE): modprobe must
    not inherit that. A module tool that records SigIgn of its
    /proc/self/status, then does what fake-modprobe does."""
    tool = os.path.join(tmp, "recording-modprobe")
    sigs = os.path.join(tmp, "signals")
    with open(tool, "w") as f:
        f.write("#!/bin/sh\n"
                f"grep '^SigIgn:' /proc/$$/status >>'{sigs}'\n"
                f"exec '{fake.FAKE_MODPROBE}' \"$@\"\n")
    os.chmod(tool, 0o755)
    env = no_module_tool(tmp, HWLAT_MODPROBE=tool, HWLAT_RUN_DIR=os.path.join(tmp, "run"))
    r = fake.run_scan(["--detector-dir", tmp, "--backend", "module", "--load-module"], env=env)
    seen = open(sigs).read().splitlines() if os.path.exists(sigs) else []
    masks = [(ln.split(":")[0], int(ln.split()[1], 16)) for ln in seen]
    pipe = 1 << (signal.SIGPIPE - 1)
    ok(r.returncode == 0 and module_tool_calls(tmp) == ["--dry-run --quiet hwlat_detector",
                                                        "--quiet hwlat_detector"]
       and [k for k, _ in masks] == ["SigIgn"] * 2 and all(m & pipe == 0 for _, m in masks),
       f"the module tool, run twice, has SIGPIPE at its default action "
       f"(exit {r.returncode})", (seen, r.stderr, module_tool_calls(tmp)))


def test_load_module_mounts_debugfs(tmp):
    """--load-module without --detector-dir needs debugfs: when it is not
    mounted, the scan mounts it on /sys/kernel/debug (debugfs_mount()
    returns 0) and goes on to load the module. Run as root in a private
    mount namespace (the host's mounts are not touched), where debugfs is
    unmounted first; the fake module tool is called, never the host's."""
    if os.geteuid() != 0:
        ok(True, "--load-module mounts debugfs # SKIP not root")
        return
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    with open("/proc/filesystems") as f:
        has_debugfs = any(ln.split()[-1:] == ["debugfs"] for ln in f)
    if probe.returncode != 0 or not has_debugfs or not os.path.isdir("/sys/kernel/debug"):
        ok(True, "--load-module mounts debugfs # SKIP no mount namespace or no debugfs")
        return
    run = os.path.join(tmp, "run-hwlat")
    env = no_module_tool(tmp, HWLAT_RUN_DIR=run)
    script = ("mountpoint -q /sys/kernel/debug && umount /sys/kernel/debug; "
              "\"$@\"; rc=$?; "
              "awk '$2 == \"/sys/kernel/debug\" { split($4, o, \",\"); "
              "print \"mounted: \" $3 \" \" o[1] }' /proc/self/mounts; "
              "exit $rc")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                        fake.SCAN] + fake.NO_CONFIG + ["--backend", "module", "--load-module"],
                       capture_output=True, text=True, env=fake.scan_env(env), timeout=60)
    ok(r.returncode == 0 and r.stdout == "mounted: debugfs rw\n" and r.stderr == ""
       and module_tool_calls(tmp) == ["--dry-run --quiet hwlat_detector",
                                      "--quiet hwlat_detector"]
       and os.path.exists(os.path.join(run, "loaded-by-scan")),
       f"--load-module, debugfs not mounted: mounts it read-write, loads the module, exit 0 "
       f"(got {r.returncode})", (r.stdout, r.stderr, module_tool_calls(tmp)))


def test_scan_mounts_debugfs(tmp):
    """An interactive scan (no --unit, no --load-module, no --detector-dir)
    where debugfs is not mounted mounts it itself and looks for the
    detector there, after loading the module: here the fake module tool
    creates no debugfs files, so it says the detector's directory does not
    exist, exit 4, and unloads the module and unmounts debugfs again. As
    root in a private mount namespace where debugfs is unmounted first
    (the host's mounts are not touched)."""
    if os.geteuid() != 0:
        ok(True, "an interactive scan mounts debugfs # SKIP not root")
        return
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    with open("/proc/filesystems") as f:
        has_debugfs = any(ln.split()[-1:] == ["debugfs"] for ln in f)
    if probe.returncode != 0 or not has_debugfs or not os.path.isdir("/sys/kernel/debug"):
        ok(True, "an interactive scan mounts debugfs # SKIP no mount namespace or no debugfs")
        return
    env = no_module_tool(tmp, HWLAT_RUN_DIR=os.path.join(tmp, "run-hwlat"))
    script = ("mountpoint -q /sys/kernel/debug && umount /sys/kernel/debug; "
              "\"$@\"; rc=$?; "
              "awk '$2 == \"/sys/kernel/debug\" { print \"mounted: \" $3 }' /proc/self/mounts; "
              "exit $rc")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                        fake.SCAN] + fake.NO_CONFIG + ["--backend", "module"],
                       capture_output=True, text=True, env=fake.scan_env(env), timeout=60)
    ok(r.returncode == 4 and r.stdout == "" and r.stderr ==
       "hwlat-scan: /sys/kernel/debug/hwlat_detector does not exist although the "
       "hwlat_detector module is loaded: it could not create its debugfs files (its load "
       "message in 'dmesg' says why)\n" and
       module_tool_calls(tmp) == ["--dry-run --quiet hwlat_detector", "--quiet hwlat_detector",
                                  "--remove hwlat_detector"],
       f"interactive scan, debugfs not mounted: mounts it, loads the module, finds no detector "
       f"there, exit 4 (got {r.returncode}), unloads and unmounts again",
       (r.stdout, r.stderr, module_tool_calls(tmp)))


def test_tracer_without_tracefs(tmp):
    """--backend tracer without --tracefs-dir where neither
    /sys/kernel/tracing nor /sys/kernel/debug/tracing is a tracefs (an
    empty tmpfs over /sys/kernel, in a private mount namespace as root):
    says where it looked and how to mount it, exit 4."""
    if os.geteuid() != 0:
        ok(True, "tracer without tracefs # SKIP not root")
        return
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        ok(True, "tracer without tracefs # SKIP no mount namespace")
        return
    env = no_module_tool(tmp, HWLAT_RUN_DIR=os.path.join(tmp, "run-hwlat"))
    script = "mount -t tmpfs none /sys/kernel || exit 99; exec \"$@\""
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                        fake.SCAN] + fake.NO_CONFIG + ["--backend", "tracer"],
                       capture_output=True, text=True, env=fake.scan_env(env), timeout=60)
    ok(r.returncode == 4 and r.stdout == "" and r.stderr ==
       "hwlat-scan: tracefs is not mounted on /sys/kernel/tracing nor "
       "/sys/kernel/debug/tracing (mount -t tracefs tracefs /sys/kernel/tracing), or the "
       "kernel has no tracing (CONFIG_FTRACE)\n",
       f"tracer without tracefs: says where it looked, exit 4 (got {r.returncode})",
       (r.stdout, r.stderr))


def test_load_module_without_debugfs(tmp):
    """--load-module where /proc/filesystems has no debugfs: the whole
    explanation on stderr, exit 4, nothing mounted or loaded. As root in a
    private mount namespace, where a file listing only proc and sysfs is
    bind-mounted over /proc/filesystems and debugfs is unmounted."""
    if os.geteuid() != 0:
        ok(True, "--load-module without debugfs # SKIP not root")
        return
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    if probe.returncode != 0 or not os.path.isdir("/sys/kernel/debug"):
        ok(True, "--load-module without debugfs # SKIP no mount namespace")
        return
    filesystems = os.path.join(tmp, "filesystems")
    with open(filesystems, "w") as f:
        f.write("nodev\tsysfs\nnodev\tproc\n\text4\n")
    env = no_module_tool(tmp, HWLAT_RUN_DIR=os.path.join(tmp, "run-hwlat"))
    script = ("mountpoint -q /sys/kernel/debug && umount /sys/kernel/debug; "
              "mount --bind \"$0\" /proc/filesystems || exit 99; "
              "\"$@\"; rc=$?; "
              "awk '$2 == \"/sys/kernel/debug\" { print \"mounted: \" $3 }' /proc/self/mounts; "
              "exit $rc")
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                        filesystems, fake.SCAN] + fake.NO_CONFIG +
                       ["--backend", "module", "--load-module"],
                       capture_output=True, text=True, env=fake.scan_env(env), timeout=60)
    ok(r.returncode == 4 and r.stdout == "" and r.stderr ==
       "hwlat-scan: debugfs is not available in this kernel (booted with debugfs=off or "
       "debugfs=no-mount, or built without CONFIG_DEBUG_FS), and the hwlat_detector module "
       "gives its results only in debugfs: nothing can be scanned. Boot without debugfs=off "
       "(the kernel command line, e.g. GRUB_CMDLINE_LINUX in /etc/default/grub, then "
       "update-grub and reboot)\n" and module_tool_calls(tmp) == [],
       f"--load-module, no debugfs in the kernel: says why and how, exit 4 "
       f"(got {r.returncode})", (r.stdout, r.stderr, module_tool_calls(tmp)))


def main():
    if not os.access(fake.SCAN, os.X_OK):
        print(f"Bail out! {fake.SCAN} is not built")
        return 1
    import scan_tap  # the counts of ok (fake_detector.py imports it)
    return scan_tap.run((test_too_many_options, test_unavailable_counts, test_journal_refuses, test_cannot_disable,
                          test_cannot_enable, test_sequence_back_and_escapes,
                          test_count_fails, test_stream_does_not_end,
                          test_locked_eof_with_signal, test_tracer_read_error_after_signal,
                          test_module_read_error_after_signal,
                          test_tracer_mode_untouched, test_tracer_restore_fails,
                          test_journald_listens,
                          test_stream_busy, test_module_tool_signals,
                          test_load_module_mounts_debugfs, test_scan_mounts_debugfs,
                          test_tracer_without_tracefs,
                          test_load_module_without_debugfs))


if __name__ == "__main__":
    sys.exit(main())
