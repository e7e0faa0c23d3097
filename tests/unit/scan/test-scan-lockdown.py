#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The module's per-mode bounds and kernel lockdown in hwlat-scan: runs it
against the fake detector (fake_detector.py) and a fake /sys/module
(HWLAT_SYS_MODULE), and proves that:

- the per-mode bounds are checked before anything is touched: stop-machine
  width at most 10000 us and width/window at most 10 %, per-cpu at most
  50 %, each at the limit (scans), one past it (exit 2, a message naming
  the bound and where the value came from, the detector unchanged, no
  summary) and one inside it; allow_high_duty=Y lifts them; a module
  without allow_high_duty (no per-mode bounds) is left to judge itself;
- where the setting files cannot be opened for writing (as debugfs refuses
  them under kernel lockdown; here a 0000 mode, run in a user namespace
  when we are root so that the mode holds), the scan runs with the
  module's parameters: windows buffered before the scan are discarded, the
  summary records the parameters as the settings, HWLAT_SETTINGS_SOURCE is
  module-parameters and the dropped count is the scan's own; requested
  settings that differ give exit 7, HWLAT_SETTINGS_NOT_APPLIED naming each,
  and the modprobe.d line; a module loaded with enabled=0 gives exit 4 with
  that line and no summary; on a terminal such a scan's progress line is
  cleared when it ends;
- a locked scan whose stream has already ended, or cannot be read, when it
  reads away what was buffered before it does not start: it says so once
  and fails (exit 5, status failed, duration 0).

TAP output; exit status 1 when any check failed.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

SAMPLE_ID, SUMMARY_ID = fake.SAMPLE_ID, fake.SUMMARY_ID
SETTINGS, PARAMS = fake.SETTINGS, fake.PARAMS
ok = fake.ok
fake_sys_module, summaries = fake.fake_sys_module, fake.summaries
locked_wrapper = fake.locked_wrapper
# --- per-mode bounds --------------------------------------------------------

def bounds_case(tmp, name, args, allow, want_ok, want_msg=None, mode_file=None):
    """One scan with args; allow: the allow_high_duty parameter (None: none)."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    over = {} if mode_file is None else {"mode": mode_file}
    d = fake.make_fake(sub, **over)
    params = {} if allow is None else {"allow_high_duty": allow + "\n"}
    env = {"HWLAT_SYS_MODULE": fake_sys_module(sub, **params)}
    export = os.path.join(sub, "export.txt")
    before = fake.snapshot(d)
    mod = fake.FakeModule(d, lambda w: None) if want_ok else None
    if mod:
        mod.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "100ms"]
                      + args, env=env)
    if mod:
        mod.join(5)
        sm = summaries(export)
        ok(r.returncode == 0 and len(sm) == 1 and sm[0].get("HWLAT_STATUS") == "completed",
           f"{name}: {' '.join(args)} scans (exit {r.returncode})", r.stderr)
    else:
        # The fake module's FIFO has no writer: a scan that got that far
        # would block in open(); none does, as nothing may be touched.
        ok(r.returncode == 2 and want_msg in r.stderr,
           f"{name}: {' '.join(args)} is refused with exit 2 naming the bound "
           f"(got {r.returncode})", r.stderr)
        ok(fake.snapshot(d) == before and summaries(export) == [],
           f"{name}: the detector is unchanged and no summary written",
           (fake.snapshot(d), summaries(export)))


def test_mode_bounds(tmp):
    sm_width = "mode stop-machine allows a width of at most 10000 us, not %s us"
    sm_duty = ("mode stop-machine allows a width of at most 10%% of the window: "
               "width %s us, window %s us")
    pc_duty = ("mode per-cpu allows a width of at most 50%% of the window: "
               "width %s us, window %s us")
    cases = [
        # stop-machine width: limit, limit + 1, limit - 1 (window 200 ms: 5 %)
        ("sm-width-limit", ["--mode", "stop-machine", "--width", "10000", "--window", "200000"],
         True, None),
        ("sm-width-over", ["--mode", "stop-machine", "--width", "10001", "--window", "200000"],
         False, sm_width % "10001"),
        ("sm-width-under", ["--mode", "stop-machine", "--width", "9999", "--window", "200000"],
         True, None),
        # stop-machine duty 10 %: 10000 / 100000 exactly, window 1 us shorter, longer
        ("sm-duty-limit", ["--mode", "stop-machine", "--width", "10000", "--window", "100000"],
         True, None),
        ("sm-duty-over", ["--mode", "stop-machine", "--width", "10000", "--window", "99999"],
         False, sm_duty % ("10000", "99999")),
        ("sm-duty-under", ["--mode", "stop-machine", "--width", "10000", "--window", "100001"],
         True, None),
        # per-cpu duty 50 %: the 2009 defaults exactly, window 1 us shorter, longer
        ("pc-duty-limit", ["--mode", "per-cpu", "--width", "500000", "--window", "1000000"],
         True, None),
        ("pc-duty-over", ["--mode", "per-cpu", "--width", "500000", "--window", "999999"],
         False, pc_duty % ("500000", "999999")),
        ("pc-width-over", ["--mode", "per-cpu", "--width", "500001", "--window", "1000000"],
         False, pc_duty % ("500001", "1000000")),
        ("pc-duty-under", ["--mode", "per-cpu", "--width", "499999", "--window", "1000000"],
         True, None),
    ]
    for name, args, good, msg in cases:
        bounds_case(tmp, name, args, "N", good, msg)
    # The case: --mode stop-machine with the detector's 500 ms width.
    bounds_case(tmp, "sm-current-width", ["--mode", "stop-machine"], "N", False,
                "mode stop-machine allows a width of at most 10000 us, not 500000 us "
                "(the detector's current width): it holds every CPU with interrupts off "
                "for the whole width; set a shorter width (or load the module with "
                "allow_high_duty=1, for test labs)")
    # The mode in force counts when the scan names none.
    bounds_case(tmp, "sm-current-mode", ["--width", "10001", "--window", "200000"], "N", False,
                "mode stop-machine (the detector's current mode) allows a width of at most "
                "10000 us, not 10001 us",
                mode_file="none round-robin per-cpu [stop-machine]\n")
    # allow_high_duty=1 lifts the per-mode bounds (the general ones stay).
    bounds_case(tmp, "sm-allowed", ["--mode", "stop-machine", "--width", "10001",
                                    "--window", "20000"], "Y", True)
    bounds_case(tmp, "pc-allowed", ["--mode", "per-cpu", "--width", "500001",
                                    "--window", "1000000"], "Y", True)
    # A module without allow_high_duty has no per-mode bounds: it decides.
    bounds_case(tmp, "old-module", ["--mode", "stop-machine", "--width", "500000",
                                    "--window", "1000000"], None, True)


# --- settings from module parameters ----------------------------------------

SAMPLED = ("0 100\n1 200\n", "0 350\n1 200\n2 50\n")


def read_all(fd, out):
    """Appends what fd gives to out until it ends (EIO once a pty's other
    side is closed)."""
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out.append(data)


def locked_scan(tmp, name, args, params=None, stale=3, fresh=2, dropped=(5, 7),
                sampled=SAMPLED, tty=False):
    """A scan of a detector whose setting files cannot be opened for
    writing. `stale` lines (and a malformed one) are in the stream before the scan starts,
    `fresh` come 0.5 s after it started, `dropped` and `sampled` are the
    detector's files before and after; with tty, stderr is a terminal and
    err what it showed. Returns (result, summaries, samples)."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    d = fake.make_fake(sub, dropped=f"{dropped[0]}\n", sampled=sampled[0])
    os.chmod(sub, 0o755)
    for f in SETTINGS:
        os.chmod(os.path.join(d, f), 0)
    env = {"HWLAT_SYS_MODULE": fake_sys_module(sub, **{**PARAMS, **(params or {})})}
    export = os.path.join(sub, "export.txt")
    # O_RDWR: the FIFO holds the stale lines before the scan opens it, and
    # never reaches EOF (the detector keeps sampling).
    fd = os.open(os.path.join(d, "stream"), os.O_RDWR | os.O_NONBLOCK)
    # The stale lines and one a scan would skip as malformed: discarded.
    os.write(fd, ("".join(fake.line(s, 0, 1700000000, s, 30000, 0, 1, 0, 0, 0)
                          for s in range(100, 100 + stale)) + "not a window\n").encode())
    cmd = locked_wrapper() + [fake.SCAN] + fake.NO_CONFIG + [
        "--detector-dir", d, "--journal-export", export, "--duration", "2"] + args
    shown, reader = [], None
    if tty:
        master, slave = os.openpty()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, text=True,
                             env=fake.scan_env(env))
        os.close(slave)
        reader = threading.Thread(target=read_all, args=(master, shown), daemon=True)
        reader.start()
    else:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=fake.scan_env(env))
    time.sleep(0.5)
    os.write(fd, "".join(fake.line(s, 1, 1700000001, s, 40000 + s, 0, 1, 0, 0, 0)
                         for s in range(200, 200 + fresh)).encode())
    with open(os.path.join(d, "dropped"), "w") as f:
        f.write(f"{dropped[1]}\n")
    with open(os.path.join(d, "sampled.new"), "w") as f:
        f.write(sampled[1])
    os.rename(os.path.join(d, "sampled.new"), os.path.join(d, "sampled"))
    out, err = p.communicate(timeout=30)
    os.close(fd)
    if reader:
        reader.join(10)
        os.close(master)
        err = b"".join(shown).decode(errors="replace")
    entries = fake.parse_export(export) if os.path.exists(export) else []
    return (p.returncode, out, err, [e for e in entries if e.get("MESSAGE_ID") == SUMMARY_ID],
            [e for e in entries if e.get("MESSAGE_ID") == SAMPLE_ID], d)


def test_locked(tmp):
    if locked_wrapper() is None:
        ok(True, "settings from module parameters # SKIP no user namespace to make a 0000 file refuse root")
        return
    # stderr on a terminal: the progress line shows, and is cleared at the end.
    rc, out, err, sm, samples, d = locked_scan(tmp, "same", ["--threshold", "20us"], tty=True)
    refused = f"cannot open {d}/enable for writing (Permission denied)"
    using = ("scanning with the settings the module was loaded with "
             "(/sys/module/hwlat_detector/parameters): enabled 1, threshold 20 us, "
             "width 100000 us, window 200000 us, mode round-robin, CPUs 0-1")
    ok(rc == 0 and refused in err and using in err,
       f"refused setting files: exit 0, saying what was refused and the settings used (got {rc})",
       err)
    ok("\rhwlat-scan: 0s elapsed, 2s left, 0 samples, max -\x1b[K" in err and
       err.endswith("\r\x1b[K") and "elapsed" not in out,
       "on a terminal the progress line shows and is cleared when the scan ends", repr(err))
    ok("discarded 4 stream lines the detector buffered before the scan started" in err,
       "the 3 windows and the malformed line buffered before the scan are discarded, "
       "and said so", err)
    s = sm[0] if len(sm) == 1 else {}
    want = {"HWLAT_STATUS": "completed", "HWLAT_THRESHOLD_NS": "20000",
            "HWLAT_WIDTH_NS": "100000000", "HWLAT_WINDOW_NS": "200000000",
            "HWLAT_MODE": "round-robin", "HWLAT_CPUS": "0-1",
            "HWLAT_SETTINGS_SOURCE": "module-parameters", "HWLAT_SAMPLES": "2",
            "HWLAT_MAX_NS": "40201", "HWLAT_DROPPED": "2",
            "HWLAT_SAMPLED_NS": "300", "HWLAT_SAMPLED_CPU_NS": "0:250 2:50"}
    ok(len(sm) == 1 and {k: s.get(k) for k in want} == want
       and "HWLAT_SETTINGS_NOT_APPLIED" not in s,
       "the summary records the module's parameters, its 2 windows, 2 dropped and the time "
       "sampled during the scan (each CPU's growth; CPU 1 did not sample)", (want, sm))

    rc, out, err, sm, samples, d = locked_scan(tmp, "reset", ["--threshold", "20us"],
                                               sampled=("0 100\n1 200\n", "0 350\n1 150\n"))
    s = sm[0] if len(sm) == 1 else {}
    ok(rc == 0 and s.get("HWLAT_STATUS") == "completed" and
       s.get("HWLAT_SAMPLED_NS") == "unavailable" and
       s.get("HWLAT_SAMPLED_CPU_NS") == "unavailable" and
       f"{d}/sampled: CPU 1 sampled 200 ns at the start of the scan and 150 ns at its end (was "
       "the module reloaded or restarted?); the time sampled is unavailable" in err,
       f"a CPU's sampled time went down during the scan: unavailable, said, exit 0 (got {rc})",
       [s, err])
    ok([e.get("HWLAT_SEQ") for e in samples] == ["200", "201"]
       and all(e.get("HWLAT_THRESHOLD_NS") == "20000" for e in samples),
       "only the windows that came during the scan are journaled, with the threshold in force",
       samples)
    ok("settings from the module's parameters (debugfs refused writes)" in out,
       "the printed summary says where the settings came from", out)
    ok(all(oct(os.stat(os.path.join(d, f)).st_mode & 0o777) == "0o0" for f in SETTINGS),
       "nothing was written to the detector")

    rc, out, err, sm, samples, d = locked_scan(
        tmp, "differ", ["--threshold", "5us", "--mode", "per-cpu", "--width", "90ms"])
    text = ("threshold 5 us requested (command line), 20 us in force; "
            "width 90000 us requested (command line), 100000 us in force; "
            "mode per-cpu requested (command line), round-robin in force")
    line = ("options hwlat_detector enabled=1 threshold=5 width=90000 window=200000 "
            "mode=per-cpu")
    ok(rc == 7 and f"requested settings not in force: {text}. To scan with them, put "
       f"'{line}' in /etc/modprobe.d/hwlat.conf, then reload the module "
       "(modprobe -r hwlat_detector; modprobe hwlat_detector)" in err,
       f"requested settings not in force: exit 7 naming each and the modprobe.d line (got {rc})",
       err)
    s = sm[0] if len(sm) == 1 else {}
    ok(s.get("HWLAT_STATUS") == "completed" and s.get("HWLAT_THRESHOLD_NS") == "20000"
       and s.get("HWLAT_MODE") == "round-robin" and s.get("HWLAT_WIDTH_NS") == "100000000"
       and s.get("HWLAT_SETTINGS_NOT_APPLIED") == text and s.get("HWLAT_SAMPLES") == "2",
       "the summary has the settings in force and HWLAT_SETTINGS_NOT_APPLIED", sm)
    ok(f"not in force: {text}" in out, "the printed summary says what was not in force", out)

    # Requested bounds are still checked first (exit 2), with the
    # parameters standing for what the scan does not set.
    rc, out, err, sm, samples, d = locked_scan(tmp, "bounds", ["--mode", "stop-machine"])
    ok(rc == 2 and "mode stop-machine allows a width of at most 10000 us, not 100000 us "
       "(the detector's current width)" in err and sm == [],
       f"a requested mode whose bound the parameters break: exit 2, no summary (got {rc})", err)

    rc, out, err, sm, samples, d = locked_scan(tmp, "disabled", ["--threshold", "20us"],
                                               params={"enabled": "0\n"})
    ok(rc == 4 and "the module was loaded with enabled=0 and only a debugfs write could "
       "start it: nothing to scan. Put 'options hwlat_detector enabled=1 threshold=20' in "
       "/etc/modprobe.d/hwlat.conf, then reload the module" in err and sm == [],
       f"a module loaded with enabled=0: exit 4 with the modprobe.d line, no summary (got {rc})",
       err)

    # A module whose parameters are not readable (mode 0: built before they were).
    rc, out, err, sm, samples, d = locked_scan(tmp, "no-params", [],
                                               params={"enabled": None})
    ok(rc == 4 and "and the hwlat_detector module shows no parameters in "
       "/sys/module/hwlat_detector/parameters (built before its parameters were readable?" in err and sm == [],
       f"refused setting files and no parameters: exit 4 saying so, no summary (got {rc})", err)


def locked_start_fails(tmp, name, stream):
    """A locked scan whose stream, read before it starts, is `stream`:
    "ended" (a regular file: its lines, then EOF) or "unreadable" (a
    directory: read() fails). Returns (exit status, stderr, summaries)."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    d = fake.make_fake(sub)
    os.chmod(sub, 0o755)
    os.unlink(os.path.join(d, "stream"))
    if stream == "ended":
        with open(os.path.join(d, "stream"), "w") as f:
            f.write(fake.line(100, 0, 1700000000, 100, 30000, 0, 1, 0, 0, 0))
    else:
        os.mkdir(os.path.join(d, "stream"))
    for f in SETTINGS:
        os.chmod(os.path.join(d, f), 0)
    env = {"HWLAT_SYS_MODULE": fake_sys_module(sub, **PARAMS)}
    export = os.path.join(sub, "export.txt")
    r = subprocess.run(locked_wrapper() + [fake.SCAN] + fake.NO_CONFIG + [
        "--detector-dir", d, "--journal-export", export, "--duration", "2"],
        capture_output=True, text=True, env=fake.scan_env(env), timeout=30)
    return r.returncode, r.stderr, summaries(export)


def test_locked_start(tmp):
    """The windows buffered before a locked scan must be read to their end
    before it starts: a stream that has already ended, or cannot be read,
    leaves no way to tell the scan's windows from earlier ones."""
    if locked_wrapper() is None:
        ok(True, "locked start # SKIP no user namespace to make a 0000 file refuse root")
        return
    rc, err, sm = locked_start_fails(tmp, "start-ended", "ended")
    s = sm[0] if len(sm) == 1 else {}
    ok(rc == 5 and "the detector's stream ended before the scan started: was it disabled by "
       "someone else?\nhwlat-scan: the scan could not start\n" in err and
       "before the scan did" not in err and s.get("HWLAT_STATUS") == "failed" and
       s.get("HWLAT_DURATION_NS") == "0" and s.get("HWLAT_SAMPLES") == "0",
       f"a stream that ended before a locked scan started: the scan does not start, exit 5, "
       f"status failed, duration 0 (got {rc})", [err, sm])
    rc, err, sm = locked_start_fails(tmp, "start-unreadable", "unreadable")
    s = sm[0] if len(sm) == 1 else {}
    ok(rc == 5 and err.count("cannot read the detector's stream: Is a directory\n") == 1 and
       "hwlat-scan: the scan could not start\n" in err and s.get("HWLAT_STATUS") == "failed" and
       s.get("HWLAT_DURATION_NS") == "0" and s.get("HWLAT_SAMPLES") == "0",
       f"a stream that cannot be read before a locked scan starts: said once, the scan does "
       f"not start, exit 5, status failed, duration 0 (got {rc})", [err, sm])


def main():
    if not os.access(fake.SCAN, os.X_OK):
        print(f"Bail out! {fake.SCAN} is not built")
        return 1
    import scan_tap  # the counts of ok (fake_detector.py imports it)
    return scan_tap.run((test_mode_bounds, test_locked, test_locked_start))


if __name__ == "__main__":
    sys.exit(main())
