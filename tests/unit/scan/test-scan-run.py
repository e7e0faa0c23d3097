#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How a scan runs (service/scan-run.c, reader.c, tally.c), whatever
befalls it: runs hwlat-scan against the fake detector (fake_detector.py)
under hostile conditions and pins what users read at the limits:

- every terminating signal (SIGHUP, SIGQUIT, SIGINT, SIGUSR1, a terminal
  hanging up) ends the scan like SIGTERM: detector disabled, settings
  restored, summary "interrupted", exit 0; SIGPIPE is ignored and a closed
  stdout is an error message, never a killed scan;
- durations beyond 24.9 days never hand poll() a negative timeout;
- a partial last line, a malformed, too long or NUL-holding line is skipped,
  counted (HWLAT_SKIPPED_LINES) and named; later samples are all journaled;
- without journald the scan refuses to start (exit 5) and changes nothing;
- --hardlimit has nanosecond precision; at the limit the scan passes, 1 ns
  above it fails (exit status, printed verdict, summary PRIORITY/MESSAGE);
- a detector found enabled is re-enabled with its settings; a failed
  restore is status "failed", PRIORITY 3, exit 5;
- HWLAT_DROPPED and sequence gaps are told apart;
- --unit tells systemd the scan's length (EXTEND_TIMEOUT_USEC);
- an interactive scan on a terminal shows its progress on stderr, and is
  silent under systemd, with --quiet or when stderr is not a terminal;
- --check-config, drop-ins, a UTF-8 BOM, --config DIR, non-root, --cpus N-N,
  --duration 500us.

TAP output; exit status 1 when any check failed.
"""
import fcntl
import os
import pty
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import termios
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as T  # noqa: E402

SCAN, ok, line, make_fake = T.SCAN, T.ok, T.line, T.make_fake
read, snapshot, wait_for, enabled = T.read, T.snapshot, T.wait_for, T.enabled
parse_export, export_has_seq = T.parse_export, T.export_has_seq
FakeModule, NO_CONFIG, scan_env = T.FakeModule, T.NO_CONFIG, T.scan_env
SUMMARY_ID = T.SUMMARY_ID


def summary_of(export):
    if not os.path.exists(export):
        return {}
    sm = [e for e in parse_export(export) if e.get("MESSAGE_ID") == SUMMARY_ID]
    return sm[0] if len(sm) == 1 else {}


def finish(p, timeout=15):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return out, err


def test_terminating_signals(tmp):
    """Each terminating signal ends the scan the way SIGTERM does."""
    for sig, name in ((signal.SIGHUP, "Hangup"), (signal.SIGQUIT, "Quit"),
                      (signal.SIGINT, "Interrupt"), (signal.SIGUSR1, "User defined signal 1")):
        sub = os.path.join(tmp, sig.name)
        os.mkdir(sub)
        d = make_fake(sub)
        export = os.path.join(sub, "export.txt")
        mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0)),
                                       w.flush()),
                         drain=line(2, 1, 1700000000, 5, 40000, 0, 1, 0, 0, 0))
        mod.start()
        p = T.start_scan(["--detector-dir", d, "--journal-export", export,
                          "--duration", "60", "--width", "300000"])
        running = wait_for(lambda: export_has_seq(export, 1), 10)
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = finish(p)
        took = time.monotonic() - t0
        mod.join(5)
        sm = summary_of(export)
        after = snapshot(d)
        ok(running and p.returncode == 0 and took < 5 and f"received {name}, stopping the scan" in err,
           f"{sig.name}: exit 0 within {took:.1f} s, says 'received {name}' (exit {p.returncode})", err)
        ok(sm.get("HWLAT_STATUS") == "interrupted" and sm.get("HWLAT_SAMPLES") == "2"
           and "interrupted after" in out,
           f"{sig.name}: summary 'interrupted' with the drained sample, printed", (sm, out))
        ok(after["width"] == "500000\n" and after["enable"] == "0\n",
           f"{sig.name}: detector disabled, width restored", after)


def test_sigpipe(tmp):
    """SIGPIPE is ignored; a closed stdout is EPIPE, said on stderr."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0)),
                                   w.flush()))
    mod.start()
    r_fd, w_fd = os.pipe()
    p = subprocess.Popen([SCAN] + NO_CONFIG + ["--detector-dir", d, "--journal-export", export,
                                               "--duration", "60", "--width", "300000"],
                         stdout=w_fd, stderr=subprocess.PIPE, text=True, env=scan_env())
    os.close(w_fd)
    os.close(r_fd)  # nobody will read the summary
    running = wait_for(lambda: export_has_seq(export, 1), 10)
    p.send_signal(signal.SIGPIPE)
    time.sleep(0.5)
    alive = p.poll() is None
    p.send_signal(signal.SIGTERM)
    _, err = finish(p)
    mod.join(5)
    after = snapshot(d)
    ok(running and alive, "kill -PIPE does not end the scan")
    ok(p.returncode == 0 and "cannot print the summary on standard output (it is in the journal): Broken pipe" in err,
       f"closed stdout: exit 0 and an EPIPE message, not a killed scan (exit {p.returncode})", err)
    ok(after["width"] == "500000\n" and after["enable"] == "0\n"
       and summary_of(export).get("HWLAT_STATUS") == "interrupted",
       "closed stdout: settings restored, summary interrupted", after)


def traced_poll_timeouts(trace):
    vals = []
    with open(trace) as f:
        for l in f:
            m = re.search(r"\bpoll\(.*\], \d+, (-?\d+)\)", l)
            if m:
                vals.append(int(m.group(1)))
    return vals


def test_long_durations(tmp):
    """25 and 366 days: every poll() timeout is in 0..60000 ms."""
    for dur in ("25d", "366d"):
        sub = os.path.join(tmp, dur)
        os.mkdir(sub)
        d = make_fake(sub)
        export = os.path.join(sub, "export.txt")
        trace = os.path.join(sub, "trace")
        mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0)), w.flush()))
        mod.start()
        p = subprocess.Popen(["strace", "-qq", "-e", "trace=poll", "-o", trace, SCAN] + NO_CONFIG +
                             ["--detector-dir", d, "--journal-export", export, "--duration", dur],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=scan_env())
        running = wait_for(lambda: export_has_seq(export, 1), 10)
        time.sleep(0.3)
        # The tracee is strace's child: signal it, not strace.
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            kids = f.read().split()
        if kids:
            os.kill(int(kids[0]), signal.SIGTERM)
        out, err = finish(p)
        mod.join(5)
        vals = traced_poll_timeouts(trace)
        ok(running and p.returncode == 0 and vals and all(0 <= v <= 60000 for v in vals),
           f"--duration {dur}: {len(vals)} poll() timeouts, all in 0..60000 ms (exit {p.returncode})",
           (vals[:10], err))


def test_partial_last_line(tmp):
    """A stream ending in a partial line: no spin, no false timeout."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0)), w.flush()),
                     drain=line(2, 0, 1, 5, 40000, 0, 1, 0, 0, 0) + "3 0 17")
    mod.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"])
    took = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    mod.join(5)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sm = summary_of(export)
    ok(took < 2.5 and cpu < 0.5, f"partial last line: the scan ends at once ({took:.2f} s, {cpu:.2f} s CPU)")
    ok("skipping a partial last line (the stream ended in the middle of it) in the detector's stream: '3 0 17'"
       in r.stderr and "did not end" not in r.stderr,
       "partial last line: named as such, no 'did not end after enable=0'", r.stderr)
    ok(r.returncode == 5 and sm.get("HWLAT_SKIPPED_LINES") == "1" and sm.get("HWLAT_SAMPLES") == "2"
       and sm.get("HWLAT_STATUS") == "failed" and "1 unreadable stream lines skipped" in r.stdout,
       f"partial last line: counted (HWLAT_SKIPPED_LINES=1), both whole lines kept, exit 5 (got {r.returncode})",
       (sm, r.stdout))


def test_bad_lines(tmp):
    """Malformed, too long and NUL lines are skipped and counted; every
    later sample is journaled; after 10 messages the rest is only counted."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")

    def script(w):
        w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0))
        w.write("garbage here\n")
        w.write(line(3, 0, 1, 0, 31000, 0, 1, 0, 0, 0))
        w.write("x" * 600 + "\n")
        w.write("5 0 1.000000000 9\x009 0 1 0 0 0\n")
        w.write(line(6, 1, 1, 0, 32000, 0, 1, 0, 0, 0))
        for i in range(10):
            w.write(f"junk {i}\n")
        w.write(line(17, 1, 1, 0, 33000, 0, 1, 0, 0, 0))
        w.flush()

    mod = FakeModule(d, script)
    mod.start()
    r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"])
    mod.join(5)
    seqs = [e.get("HWLAT_SEQ") for e in parse_export(export) if e.get("MESSAGE_ID") == T.SAMPLE_ID]
    sm = summary_of(export)
    ok(seqs == ["1", "3", "6", "17"], "every good line after a bad one is journaled", seqs)
    ok(sm.get("HWLAT_SKIPPED_LINES") == "13" and sm.get("HWLAT_SAMPLES") == "4"
       and sm.get("HWLAT_MAX_NS") == "33000",
       "13 skipped lines counted in the summary, 4 samples, max of all", sm)
    msgs = [l for l in r.stderr.splitlines() if "skipping" in l]
    ok(len(msgs) == 10
       and "skipping a malformed line in the detector's stream: 'garbage here'" in r.stderr
       and "skipping a line longer than 512 bytes in the detector's stream: '" + "x" * 120 + "...'" in r.stderr
       and "skipping a line with a NUL byte in the detector's stream: '5 0 1.000000000 9\\x009 0 1 0 0 0'" in r.stderr
       and "further unreadable stream lines are counted, not shown" in r.stderr
       and "lost windows" not in r.stderr,
       "each bad line named (escaped, cut at 120 bytes), 10 at most, no false 'lost windows'", r.stderr)
    ok(r.returncode == 5 and sm.get("HWLAT_STATUS") == "failed" and sm.get("PRIORITY") == "3",
       f"a scan with skipped lines is failed: exit 5, PRIORITY 3 (got {r.returncode})", sm)


def test_no_journald(tmp):
    """No journald: exit 5 before the detector is touched."""
    d = make_fake(tmp)
    stale = os.path.join(tmp, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(stale)
    s.close()  # a socket file nobody listens on
    for what, sock, errtext in (("absent", None, "No such file or directory"),
                                ("not listening", stale, "Connection refused")):
        # A module that would sample: the scan must not get that far.
        mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0)), w.flush()))
        mod.start()
        before = snapshot(d)
        t0 = time.monotonic()
        r = subprocess.run(T.journal_namespace([SCAN] + NO_CONFIG + ["--detector-dir", d, "--duration", "3",
                                                                     "--width", "300000"], sock),
                           capture_output=True, text=True, env=scan_env(), timeout=30)
        took = time.monotonic() - t0
        # Lets the fake's open() of the FIFO return if the scan never opened it.
        fd = os.open(os.path.join(d, "stream"), os.O_RDONLY | os.O_NONBLOCK)
        time.sleep(0.1)
        os.close(fd)
        ok(r.returncode == 5 and took < 2 and snapshot(d) == before
           and "cannot write to the journal at /run/systemd/journal/socket (is systemd-journald running?); "
           f"not starting the scan: {errtext}" in r.stderr,
           f"journald {what}: exit 5 at once ({took:.1f} s), detector unchanged (got {r.returncode})", r.stderr)


def run_sample(tmp, name, latency, args, env=None):
    """One short scan whose only sample has this latency."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    d = make_fake(sub)
    export = os.path.join(sub, "export.txt")
    mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, latency, 0, 1, 0, 0, 0)), w.flush()))
    mod.start()
    r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "500ms"] + args,
                   env=env)
    mod.join(5)
    return r, summary_of(export), d


def test_verdict_at_limit(tmp):
    """Max latency 1500 ns against --hardlimit 1499, 1500, 1501 ns: equal passes."""
    for limit, want_exit, over in (("1499ns", 1, True), ("1500ns", 0, False), ("1501ns", 0, False)):
        r, sm, _ = run_sample(tmp, limit, 1500, ["--hardlimit", limit])
        said = "max latency 1.5 us exceeds the hard limit" in r.stdout
        ok(r.returncode == want_exit and said == over,
           f"max 1500 ns, --hardlimit {limit}: exit {want_exit}, {'' if over else 'no '}verdict line "
           f"(got {r.returncode})", r.stdout + r.stderr)
        msg = sm.get("MESSAGE", "")
        ok(sm.get("HWLAT_HARDLIMIT_NS") == limit[:-2] and sm.get("PRIORITY") == ("4" if over else "6")
           and ("exceeds hard limit" in msg) == over,
           f"max 1500 ns, --hardlimit {limit}: summary PRIORITY {'4' if over else '6'}, "
           f"HWLAT_HARDLIMIT_NS={limit[:-2]}", sm)


class ScriptedModule(threading.Thread):
    """Like FakeModule, but starts sampling when pred() holds (the fake may
    start enabled), and runs after(d) once the scan has enabled it."""

    def __init__(self, d, pred, after=None):
        super().__init__(daemon=True)
        self.d, self.pred, self.after = d, pred, after
        self.during = None
        self.error = None

    def run(self):
        try:
            with open(os.path.join(self.d, "stream"), "w") as w:
                if not wait_for(self.pred, 20):
                    self.error = "the scan never enabled the detector"
                    return
                self.during = snapshot(self.d)
                w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0))
                w.flush()
                if self.after:
                    self.after(self.d)
                if not wait_for(enabled(self.d, "0"), 30):
                    self.error = "enable never went to 0"
        except Exception as e:
            self.error = repr(e)


def test_restore_enabled(tmp):
    """A detector found enabled is re-enabled afterwards with its settings."""
    d = make_fake(tmp, enable="1\n", threshold="15\n", width="400000\n", window="900000\n",
                  mode="none round-robin [per-cpu] stop-machine\n", cpus="1\n")
    export = os.path.join(tmp, "export.txt")
    mod = ScriptedModule(d, lambda: read(d, "threshold") == "30\n" and read(d, "enable") == "1\n")
    mod.start()
    r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1",
                    "--threshold", "30", "--width", "300000", "--mode", "round-robin", "--cpus", "0"])
    mod.join(5)
    after = snapshot(d)
    dur = mod.during or {}
    ok(mod.error is None and dur.get("width") == "300000\n" and dur.get("mode") == "round-robin\n"
       and dur.get("cpus") == "0\n", "found enabled: the scan's settings applied while it ran", (mod.error, dur))
    ok(r.returncode == 0 and after["enable"] == "1\n" and after["threshold"] == "15\n"
       and after["width"] == "400000\n" and after["window"] == "900000\n"
       and after["mode"] == "per-cpu\n" and after["cpus"] == "1\n",
       f"found enabled: re-enabled with its own settings afterwards (exit {r.returncode})", (after, r.stderr))


def test_failed_restore(tmp):
    """The threshold file turns into a directory mid-scan: restore fails."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")

    def break_threshold(d):
        os.unlink(os.path.join(d, "threshold"))
        os.mkdir(os.path.join(d, "threshold"))

    mod = ScriptedModule(d, lambda: read(d, "enable") == "1\n", after=break_threshold)
    mod.start()
    r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1",
                    "--threshold", "30"])
    mod.join(5)
    sm = summary_of(export)
    ok(r.returncode == 5 and f"cannot write 10 to {d}/threshold: Is a directory" in r.stderr
       and "previous settings could not all be restored" in r.stderr,
       f"failed restore: exit 5, naming the file (got {r.returncode})", r.stderr)
    ok(sm.get("HWLAT_STATUS") == "failed" and sm.get("PRIORITY") == "3" and "failed after" in r.stdout,
       "failed restore: summary status failed, PRIORITY 3", (sm, r.stdout))


def test_dropped_vs_gaps(tmp):
    """HWLAT_DROPPED is the detector's count; sequence gaps are the stream's."""
    for name, dropped, seqs, want_msg in (("more-dropped", "3\n", (1, 2, 4), None),
                                          ("more-gaps", "0\n", (1, 4), "the stream showed 2 lost windows "
                                                                      "but the detector counts 0 dropped")):
        sub = os.path.join(tmp, name)
        os.mkdir(sub)
        d = make_fake(sub, dropped=dropped)
        export = os.path.join(sub, "export.txt")
        mod = FakeModule(d, lambda w, seqs=seqs: (
            [w.write(line(q, 0, 1, 0, 30000, 0, 1, 0, 0, 0)) for q in seqs], w.flush()))
        mod.start()
        r = T.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"])
        mod.join(5)
        sm = summary_of(export)
        gaps = seqs[-1] - len(seqs)
        ok(r.returncode == 0 and sm.get("HWLAT_DROPPED") == dropped.strip()
           and f"{dropped.strip()} dropped ({gaps} seen as sequence gaps)" in r.stdout
           and ((want_msg in r.stderr) if want_msg else "lost windows" not in r.stderr),
           f"{name}: HWLAT_DROPPED={dropped.strip()}, {gaps} sequence gaps told apart", (sm, r.stdout, r.stderr))


def test_notify(tmp):
    """--unit sends EXTEND_TIMEOUT_USEC = duration + window + 2 s + 30 s."""
    path = os.path.join(tmp, "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.5)
    inv = "00112233445566778899aabbccddeeff"
    for unit, dur, want in ((True, "2", "EXTEND_TIMEOUT_USEC=35000000"),
                            (True, "366d", f"EXTEND_TIMEOUT_USEC={366 * 86400 * 10**6 + 33 * 10**6}"),
                            (False, "2", None)):
        sub = os.path.join(tmp, f"{unit}-{dur}")
        os.mkdir(sub)
        d = make_fake(sub)
        export = os.path.join(sub, "export.txt")
        mod = FakeModule(d, lambda w: None)
        mod.start()
        p = subprocess.Popen([SCAN] + NO_CONFIG + ["--detector-dir", d, "--journal-export", export,
                                                   "--duration", dur] + (["--unit"] if unit else []),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=scan_env({"NOTIFY_SOCKET": path, "INVOCATION_ID": inv}))
        wait_for(enabled(d, "1"), 10)
        msgs = []
        try:
            while True:
                msgs.append(s.recv(4096).decode())
        except socket.timeout:
            pass
        p.send_signal(signal.SIGTERM)
        _, err = finish(p)
        mod.join(5)
        what = f"--duration {dur}{' --unit' if unit else ''}"
        if want:
            ok(msgs == [want], f"{what}: systemd told {want}", (msgs, err))
        else:
            ok(msgs == [], f"{what} (by hand under a service): no message to that service's manager", msgs)
    s.close()


def pty_scan(tmp, name, args, env=None, hang_up_after=None):
    """Runs a scan with stderr (and, as its controlling terminal, the session)
    on a pty; returns (exit status, stdout, what the terminal showed, dir)."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    d = make_fake(sub)
    export = os.path.join(sub, "export.txt")
    mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 30000, 0, 1, 0, 0, 0)), w.flush()),
                     drain=line(2, 0, 1, 5, 40000, 0, 1, 0, 0, 0))
    mod.start()
    master, slave = pty.openpty()

    def session():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    p = subprocess.Popen([SCAN] + NO_CONFIG + ["--detector-dir", d, "--journal-export", export] + args,
                         stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=scan_env(env),
                         preexec_fn=session)
    os.close(slave)
    shown = b""
    t0 = time.monotonic()
    while True:
        if hang_up_after is not None and time.monotonic() - t0 > hang_up_after and master >= 0:
            wait_for(lambda: export_has_seq(export, 1), 5)
            os.close(master)  # the terminal goes away: SIGHUP to the session
            master = -1
        if master < 0:
            break
        rd, _, _ = select.select([master], [], [], 0.1)
        if rd:
            try:
                data = os.read(master, 4096)
            except OSError:
                data = b""
            if not data:
                break
            shown += data
        if p.poll() is not None and not rd:
            break
    out, _ = finish(p)
    if master >= 0:
        os.close(master)
    mod.join(5)
    return p.returncode, out.decode(), shown.decode(errors="replace"), d, export


def test_progress(tmp):
    """Progress on a terminal, once a second; silent otherwise."""
    rc, out, shown, _, _ = pty_scan(tmp, "tty", ["--duration", "2500ms"])
    ok(rc == 0 and "\rhwlat-scan: 0s elapsed, 3s left, 0 samples, max -\x1b[K" in shown
       and "\rhwlat-scan: 1s elapsed, 2s left, 1 sample, max 30.0 us\x1b[K" in shown
       and "\rhwlat-scan: 2s elapsed, 1s left, 1 sample, max 30.0 us\x1b[K" in shown
       and shown.endswith("\r\x1b[K"),
       "terminal: elapsed, left, samples, max once a second, line cleared at the end", repr(shown))
    ok("completed after" in out and "elapsed" not in out, "terminal: the summary goes to stdout, no progress there", out)
    for name, args, env in (("unit", ["--unit"], None), ("invocation", [], {"INVOCATION_ID": "0" * 32}),
                            ("quiet", ["--quiet"], None)):
        rc, _, shown, _, _ = pty_scan(tmp, name, ["--duration", "1500ms"] + args, env=env)
        ok(rc == 0 and "elapsed" not in shown, f"terminal but {name}: no progress", repr(shown))
    r, _, _ = run_sample(tmp, "pipe", 30000, ["--duration", "1500ms"])
    ok(r.returncode == 0 and "elapsed" not in r.stderr, "stderr not a terminal: no progress", r.stderr)


def test_hangup(tmp):
    """The terminal of an interactive scan goes away (SSH drops)."""
    rc, out, _, d, export = pty_scan(tmp, "hangup", ["--duration", "60", "--width", "300000"],
                                     hang_up_after=1.2)
    sm = summary_of(export)
    after = snapshot(d)
    ok(rc == 0 and sm.get("HWLAT_STATUS") == "interrupted" and "interrupted after" in out,
       f"terminal hung up: exit 0, summary interrupted (exit {rc})", (sm, out))
    ok(after["enable"] == "0\n" and after["width"] == "500000\n",
       "terminal hung up: detector disabled, settings restored", after)


def check_config(args, env=None, user=None, scan=SCAN):
    cmd = [scan] + args + ["--check-config"]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=scan_env(env), timeout=30)


def test_config_inputs(tmp):
    """Config directory, BOM, drop-ins, --check-config, non-root."""
    d = make_fake(tmp)
    before = snapshot(d)
    r = T.run_scan(["--detector-dir", d, "--config", tmp])
    ok(r.returncode == 2 and f"cannot read config file {tmp}: Is a directory" in r.stderr,
       f"--config DIR: exit 2, 'Is a directory' (got {r.returncode})", r.stderr)

    conf = os.path.join(tmp, "bom.conf")
    with open(conf, "wb") as f:
        f.write(b"\xef\xbb\xbfthreshold = 20\nduration = 1ms\n")
    r = check_config(["--config", conf])
    ok(r.returncode == 0 and "\nthreshold = 20us\n" in r.stdout,
       f"a UTF-8 BOM before the first key is accepted (got {r.returncode})", r.stdout + r.stderr)

    main = os.path.join(tmp, "scan.conf")
    with open(main, "w") as f:
        f.write("threshold = 20\nwidth = 300ms\nhardlimit = 1500ns\n")
    os.mkdir(main + ".d")
    for name, text in (("20-b.conf", "threshold = 40\nmode = per-cpu\n"),
                       ("10-a.conf", "threshold = 30\nduration = 90s\n"),
                       ("README", "colour = blue\n"), (".hidden.conf", "colour = blue\n")):
        with open(os.path.join(main + ".d", name), "w") as f:
            f.write(text)
    r = check_config(["--config", main, "--detector-dir", d])
    want = (f"# duration: from {main}.d/10-a.conf:2\nduration = 90s\n"
            f"# threshold: from {main}.d/20-b.conf:1\nthreshold = 40us\n"
            f"# width: from {main}:2\nwidth = 300ms\n"
            "# window: not set, the detector's current window is kept\n"
            f"# mode: from {main}.d/20-b.conf:2\nmode = per-cpu\n"
            "# cpus: not set, the detector's current CPUs are kept\n"
            f"# hardlimit: from {main}:3\nhardlimit = 1500ns\n"
            "# fail_if: not set, no condition\n"
            "# openmetrics_file: not set, no metrics file is written\n"
            "# backend: not set, the hwlat_detector module samples (backend = module)\n"
            + T.MONITOR_DEFAULTS)
    ok(r.returncode == 0 and r.stdout == want and snapshot(d) == before,
       "drop-ins in lexical order after the main file, later wins; --check-config prints "
       "each setting with its origin and touches nothing", r.stdout + r.stderr)
    roundtrip = os.path.join(tmp, "roundtrip.conf")
    with open(roundtrip, "w") as f:
        f.write(r.stdout)
    r2 = check_config(["--config", roundtrip])
    ok(r2.returncode == 0 and re.sub(r"# (\w+): from .*", r"# \1", r2.stdout) ==
       re.sub(r"# (\w+): from .*", r"# \1", r.stdout),
       "--check-config output is itself a valid configuration with the same settings", r2.stdout + r2.stderr)
    r = check_config(["--config", main, "--threshold", "50"])
    ok(r.returncode == 0 and "# threshold: from command line\nthreshold = 50us\n" in r.stdout,
       "the command line overrides the drop-ins", r.stdout)
    with open(os.path.join(main + ".d", "30-c.conf"), "w") as f:
        f.write("# comment\ncolour = blue\n")
    r = check_config(["--config", main])
    ok(r.returncode == 2 and r.stdout == "" and
       f"{main}.d/30-c.conf:2: unknown key 'colour'" in r.stderr,
       f"a bad key in a drop-in names its file and line, exit 2 (got {r.returncode})", r.stderr)
    os.unlink(os.path.join(main + ".d", "30-c.conf"))

    nobody = "65534"
    os.chmod(tmp, 0o755)
    os.chmod(main, 0o644)
    # The build tree may be closed to others (make distcheck's is): a copy.
    scan = os.path.join(tmp, "hwlat-scan")
    shutil.copy(SCAN, scan)
    os.chmod(scan, 0o755)
    r = check_config(["--config", main], user=nobody, scan=scan)
    ok(r.returncode == 0 and "threshold = 40us" in r.stdout,
       f"--check-config works without root (got {r.returncode})", r.stderr)
    log = os.path.join(tmp, "modprobe.log")
    env = {"HWLAT_MODPROBE": T.FAKE_MODPROBE, "HWLAT_SYS_MODULE": os.path.join(tmp, "sys-module"),
           "HWLAT_RUN_DIR": os.path.join(tmp, "run"), "FAKE_MODPROBE_LOG": log}
    for args in ([], ["--load-module"]):
        r = subprocess.run(["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
                            scan] + NO_CONFIG + ["--duration", "1"] + args,
                           capture_output=True, text=True, env=scan_env(env), timeout=30)
        ok(r.returncode == 4 and r.stderr.startswith("hwlat-scan: must be run as root")
           and len(r.stderr.splitlines()) == 1 and not os.path.exists(log),
           f"non-root {' '.join(args) or 'scan'}: exit 4, 'must be run as root', nothing tried "
           f"(got {r.returncode})", r.stderr)


def test_edges(tmp):
    """--cpus N-N, --duration at and below 1 ms."""
    with open("/sys/devices/system/cpu/online") as f:
        online = f.read().strip()
    cpu = "1" if re.fullmatch(r"0-([1-9]\d*)", online) else "0"
    sub = os.path.join(tmp, "cpus")
    os.mkdir(sub)
    d = make_fake(sub)
    mod = FakeModule(d, lambda w: None)
    mod.start()
    r = T.run_scan(["--detector-dir", d, "--journal-export", os.path.join(sub, "e"),
                    "--duration", "300ms", "--cpus", f"{cpu}-{cpu}"])
    mod.join(5)
    s = mod.settings_while_enabled or {}
    ok(r.returncode == 0 and s.get("cpus") == f"{cpu}\n",
       f"--cpus {cpu}-{cpu}: the one CPU {cpu} written (exit {r.returncode})", (s, r.stderr))
    r = check_config(NO_CONFIG + ["--duration", "500us"])
    ok(r.returncode == 2 and r.stderr == "hwlat-scan: command line: invalid value '500us' for 'duration': "
       "must be at least 1ms\n", f"--duration 500us refused: at least 1ms (got {r.returncode})", r.stderr)
    r = check_config(NO_CONFIG + ["--duration", "999999ns"])
    r2 = check_config(NO_CONFIG + ["--duration", "1ms"])
    ok(r.returncode == 2 and r2.returncode == 0 and "\nduration = 1ms\n" in r2.stdout,
       "--duration 999999ns refused, 1ms accepted", r.stderr + r2.stdout)


def main():
    if not os.access(SCAN, os.X_OK):
        print(f"Bail out! {SCAN} is not built")
        return 1
    return T.run((test_terminating_signals, test_sigpipe, test_hangup, test_long_durations,
                  test_partial_last_line, test_bad_lines, test_no_journald,
                  test_verdict_at_limit, test_restore_enabled, test_failed_restore,
                  test_dropped_vs_gaps, test_notify, test_progress, test_config_inputs,
                  test_edges), only=sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
