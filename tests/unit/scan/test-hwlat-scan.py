#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs hwlat-scan against a fake detector (regular files for the settings,
a FIFO for `stream`, this script playing the module) and proves that:

- the configuration (file + overriding command line) is applied before
  enable=1 and the previous settings are restored afterwards;
- every stream line becomes one journal entry *as it arrives* (the entry is
  in the export file before the next line is written), lines cut across
  writes are joined, lines buffered after enable=0 are drained;
- the entries, turned into a real journal file by systemd-journal-remote
  and read back with `journalctl -o json`, carry every field of
  docs/interfaces.md with the right values, then one summary entry, last;
- seq gaps and the `dropped` file end up in the summary;
- `journalctl -x` explains a sample from the installed catalog;
- SIGTERM mid-run gives status "interrupted", exit 0 and restored settings;
- a second concurrent scan is refused (exit 3) and changes nothing;
- a malformed stream line, or the stream ending early, fails the scan
  (exit 5, status "failed") and still restores the settings;
- every system call a scan makes passes the unit's SystemCallFilter=
  (traced with strace, checked against `systemd-analyze syscall-filter`);
- --load-module/--unload-module run the module tool only as documented (a
  fake stands in for it; the host kernel is never touched) and keep the
  marker right;
  a module that is not installed gives exit 4 and says how to install it;
  a module the tool fails to remove gives exit 4 and the tool's status.

TAP output; exit status 1 when any check failed.
"""
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_detector import (  # noqa: E402
    CATALOG, FAKE_MODPROBE, JOURNAL_REMOTE, NO_CONFIG, SAMPLE_ID, SCAN, SRCDIR, SUMMARY_ID,
    TOP_BUILD, FakeJournald, FakeModule, enabled, export_has_seq, journal_namespace, line,
    make_fake, ok, parse_export, read, run, run_scan, scan_env, snapshot, start_scan,
    to_journal, wait_for)


def test_full_run(tmp):
    """Config + command line applied, entries as they arrive, every field."""
    d = make_fake(tmp, dropped="2\n")
    export = os.path.join(tmp, "export.txt")
    conf = os.path.join(tmp, "scan.conf")
    with open(conf, "w") as f:
        f.write("# test config\nduration = 3s\nthreshold = 50\nwidth = 400ms\n"
                "window = 800000\nmode = per-cpu\ncpus = 0\n")
    arrival = {}

    def script(w):
        w.write(line(1, 0, 1700000000, 1, 212400, 1000, 1, 0, 0, 1))
        w.flush()
        arrival[1] = wait_for(lambda: export_has_seq(export, 1), 2)
        # Line 2 cut across two writes.
        l2 = line(2, 1, 1700000001, 500000000, 5000, 2500000, 3, 1, 40000, 0)
        w.write(l2[:10])
        w.flush()
        time.sleep(0.3)
        w.write(l2[10:])
        w.flush()
        arrival[2] = wait_for(lambda: export_has_seq(export, 2), 2)
        # seq 3 and 4 lost (dropped = 2).
        w.write(line(5, 0, 1700000002, 999999999, 30000, 20000, 1, 0, 0, 0))
        w.flush()
        arrival[5] = wait_for(lambda: export_has_seq(export, 5), 2)

    mod = FakeModule(d, script,
                     drain=line(6, 1, 1700000003, 0, 60000, 70000, 2, 0, 0, 2))
    mod.start()
    inv = "0123456789abcdef0123456789abcdef"
    t0 = time.monotonic()
    r = run_scan(["--detector-dir", d, "--journal-export", export,
                  "--config", conf, "--threshold", "20us", "--hardlimit", "1ms",
                  "--unit"],
                 env={"INVOCATION_ID": inv})
    elapsed = time.monotonic() - t0
    mod.join(5)
    ok(mod.error is None, "fake module ran its script", mod.error)
    ok(r.returncode == 1,
       f"exit status 1 when the hard limit is exceeded (got {r.returncode})",
       r.stdout + r.stderr)
    ok(2.9 <= elapsed < 8, f"the scan lasted its duration of 3 s ({elapsed:.2f} s)")
    s = mod.settings_while_enabled or {}
    ok(s.get("threshold") == "20\n" and s.get("width") == "400000\n"
       and s.get("window") == "800000\n" and s.get("mode") == "per-cpu\n"
       and s.get("cpus") == "0\n",
       "settings applied before enable=1 (command line threshold overrides the file)", s)
    ok(all(arrival.get(k) for k in (1, 2, 5)),
       "each sample was in the journal export before the next line was written", arrival)
    after = snapshot(d)
    ok(after["threshold"] == "10\n" and after["width"] == "500000\n"
       and after["window"] == "1000000\n" and after["mode"] == "round-robin\n"
       and after["cpus"] == "0-1\n" and after["enable"] == "0\n",
       "previous settings restored after the scan", after)
    ok("exceeds the hard limit" in r.stdout and "4 samples" in r.stdout
       and "2 dropped" in r.stdout, "human summary on stdout", r.stdout)
    ok("HWLAT_" not in r.stdout and "MESSAGE" not in r.stdout,
       "stdout does not repeat the journal entries", r.stdout)

    # journalctl --root looks in var/log/journal/<machine id>/.
    entries, jfile = to_journal(export, os.path.join(
        tmp, "root/var/log/journal/0123456789abcdef0123456789abcdef"))
    ok(entries is not None, "systemd-journal-remote made a journal that journalctl reads", jfile)
    if entries is None:
        return
    samples = [e for e in entries if e.get("MESSAGE_ID") == SAMPLE_ID]
    summaries = [e for e in entries if e.get("MESSAGE_ID") == SUMMARY_ID]
    ok([e.get("HWLAT_SEQ") for e in samples] == ["1", "2", "5", "6"],
       "one sample entry per stream line, drained line included",
       [e.get("HWLAT_SEQ") for e in samples])
    want1 = {
        "MESSAGE": "hardware latency 212.4 us on CPU 0 (SMI)",
        "PRIORITY": "4", "SYSLOG_IDENTIFIER": "hwlat-scan",
        "HWLAT_SCAN_ID": inv, "HWLAT_SEQ": "1", "HWLAT_CPU": "0",
        "HWLAT_INNER_NS": "212400", "HWLAT_OUTER_NS": "1000",
        "HWLAT_LATENCY_NS": "212400", "HWLAT_COUNT": "1",
        "HWLAT_NMI_COUNT": "0", "HWLAT_NMI_NS": "0", "HWLAT_SMI_COUNT": "1",
        "HWLAT_TIMESTAMP_NS": "1700000000000000001",
        "HWLAT_THRESHOLD_NS": "20000",
    }
    got1 = {k: samples[0].get(k) for k in want1} if samples else {}
    ok(got1 == want1, "sample 1 carries every field with its value", got1)
    want2 = {"MESSAGE": "hardware latency 2.50 ms on CPU 1 (NMI)",
             "HWLAT_LATENCY_NS": "2500000", "HWLAT_NMI_NS": "40000",
             "HWLAT_TIMESTAMP_NS": "1700000001500000000"}
    got2 = {k: samples[1].get(k) for k in want2} if len(samples) > 1 else {}
    ok(got2 == want2, "sample 2 (cut across writes) is intact", got2)
    ok(len(summaries) == 1 and entries[-1].get("MESSAGE_ID") == SUMMARY_ID,
       "exactly one summary entry, written last", len(summaries))
    if not summaries:
        return
    sm = summaries[0]
    want = {
        "HWLAT_SCAN_ID": inv, "HWLAT_STATUS": "completed",
        "HWLAT_THRESHOLD_NS": "20000", "HWLAT_WIDTH_NS": "400000000",
        "HWLAT_WINDOW_NS": "800000000", "HWLAT_HARDLIMIT_NS": "1000000",
        "HWLAT_MODE": "per-cpu", "HWLAT_CPUS": "0",
        "HWLAT_KERNEL": os.uname().release, "HWLAT_CLOCK": "tsc",
        "HWLAT_SAMPLES": "4", "HWLAT_MAX_NS": "2500000", "HWLAT_DROPPED": "2",
        # per-cpu mode: the larger per-CPU total (CPU 0: 1, CPU 1: 2)
        "HWLAT_SMI_TOTAL": "2", "HWLAT_NMI_TOTAL": "1", "HWLAT_FLOOR_NS": "45",
        "HWLAT_SAMPLED_NS": "899999999", "HWLAT_SAMPLED_CPU_NS": "0:450123456 1:449876543",
    }
    got = {k: sm.get(k) for k in want}
    ok(got == want, "summary fields have the scan's values", got)
    dur = int(sm.get("HWLAT_DURATION_NS", "0"))
    start = int(sm.get("HWLAT_START_NS", "0"))
    ok(2.9e9 <= dur < 4e9, f"HWLAT_DURATION_NS is the time scanned ({dur})")
    ok(abs(start / 1e9 - (time.time() - elapsed)) < 5, f"HWLAT_START_NS is wall-clock ({start})")
    ok(sm.get("HWLAT_CPU_MODEL", "") != "", "HWLAT_CPU_MODEL is set", sm.get("HWLAT_CPU_MODEL"))

    # journalctl -x explains the sample from the catalog.
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "usr/lib/systemd/catalog"), exist_ok=True)
    shutil.copy(CATALOG, os.path.join(root, "usr/lib/systemd/catalog/hwlat.catalog"))
    u = subprocess.run(["journalctl", "--root", root, "--update-catalog"],
                       capture_output=True, text=True)
    dump = subprocess.run(["journalctl", "--root", root, "--dump-catalog", SAMPLE_ID, SUMMARY_ID],
                          capture_output=True, text=True)
    ok(u.returncode == 0 and dump.stdout.count("Defined-By: hwlat") == 2,
       "the catalog compiles and holds both MESSAGE_IDs", u.stderr + dump.stdout + dump.stderr)
    # journalctl -x reads the host's catalog database: show it ours in a
    # private mount namespace (the host is not changed).
    x = subprocess.run(
        ["unshare", "-m", "sh", "-c",
         'mount --make-rprivate / && mount --bind "$1/var/lib/systemd/catalog" '
         '/var/lib/systemd/catalog && journalctl --file "$2" -x --no-pager "MESSAGE_ID=$3"',
         "sh", root, jfile, SAMPLE_ID], capture_output=True, text=True)
    ok(x.returncode == 0 and "Subject: Hardware latency of 212400 ns on CPU 0" in x.stdout
       and "System Management Interrupt" in x.stdout,
       "journalctl -x explains a sample with its fields substituted",
       x.stdout + x.stderr)


def test_sigterm(tmp):
    """SIGTERM mid-run: stop, drain, summary interrupted, restore, exit 0."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")

    def script(w):
        w.write(line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
        w.flush()

    mod = FakeModule(d, script, drain=line(2, 1, 1700000000, 5, 40000, 0, 1, 0, 0, 0))
    mod.start()
    p = start_scan(["--detector-dir", d, "--journal-export", export,
                    "--duration", "60", "--width", "300000", "--quiet"])
    arrived = wait_for(lambda: export_has_seq(export, 1), 10)
    changed = read(d, "width") == "300000\n"
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    stop_time = time.monotonic() - t0
    mod.join(5)
    ok(arrived and changed, "scan was sampling with the new width before SIGTERM")
    ok(p.returncode == 0 and stop_time < 5,
       f"SIGTERM: exit 0 within {stop_time:.2f} s (got {p.returncode})", err)
    ok(out == "", "--quiet prints nothing on stdout", out)
    ok("received Terminated" in err, "the scan says it got SIGTERM", err)
    ents = parse_export(export)
    sm = [x for x in ents if x.get("MESSAGE_ID") == SUMMARY_ID]
    ok(len(sm) == 1 and sm[0].get("HWLAT_STATUS") == "interrupted"
       and sm[0].get("HWLAT_SAMPLES") == "2"
       and int(sm[0].get("HWLAT_DURATION_NS", "0")) < 30e9,
       "summary: status interrupted, drained sample counted, short duration", sm)
    ok(re.fullmatch(r"[0-9a-f]{32}", sm[0].get("HWLAT_SCAN_ID", "") if sm else ""),
       "scan id without systemd is a fresh 128-bit id", sm)
    after = snapshot(d)
    ok(after["width"] == "500000\n" and after["enable"] == "0\n",
       "settings restored after SIGTERM", after)


def test_lock(tmp):
    """A second scan while one runs is refused and touches nothing."""
    d = make_fake(tmp)
    export = os.path.join(tmp, "export.txt")
    mod = FakeModule(d, lambda w: None)
    mod.start()
    first = start_scan(["--detector-dir", d, "--journal-export", export,
                        "--duration", "60", "--threshold", "33", "--quiet"])
    running = wait_for(enabled(d, "1"), 10)
    before = snapshot(d)
    second = run_scan(["--detector-dir", d, "--threshold", "44", "--duration", "1",
                       "--journal-export", os.path.join(tmp, "second.txt")])
    unchanged = snapshot(d) == before
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=10)
    mod.join(5)
    ok(running, "first scan is running")
    ok(second.returncode == 3 and "already running" in second.stderr,
       f"second scan refused with exit 3 (got {second.returncode})", second.stderr)
    ok(unchanged and before["threshold"] == "33\n",
       "second scan changed nothing in the detector", snapshot(d))
    ok(first.returncode == 0 and read(d, "threshold") == "10\n",
       "first scan finished and restored its settings", read(d, "threshold"))

    # The lock is a flock on the detector directory: held by anyone else.
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    before = snapshot(d)
    r = run_scan(["--detector-dir", d, "--duration", "1", "--width", "100000"])
    os.close(fd)
    ok(r.returncode == 3 and snapshot(d) == before,
       f"a held lock refuses the scan (exit {r.returncode}), nothing changed", r.stderr)


def test_failures(tmp):
    """A malformed line or an early EOF: exit 5, status failed, restored."""
    for name, script, close_early, want_err in (
        ("malformed", lambda w: (w.write("1 0 17.000000001 5 5 1 0 0\n"), w.flush()),
         False, "malformed line in the detector's stream: '1 0 17.000000001 5 5 1 0 0'"),
        ("early-eof", lambda w: (w.write(line(1, 0, 1, 0, 20000, 0, 1, 0, 0, 0)), w.flush()),
         True, "stream ended before the scan did"),
    ):
        sub = os.path.join(tmp, name)
        os.mkdir(sub)
        d = make_fake(sub)
        export = os.path.join(sub, "export.txt")
        mod = FakeModule(d, script, close_early=close_early)
        mod.start()
        r = run_scan(["--detector-dir", d, "--journal-export", export,
                      "--duration", "30", "--window", "2s"])
        mod.join(5)
        sm = [x for x in parse_export(export) if x.get("MESSAGE_ID") == SUMMARY_ID]
        ok(r.returncode == 5 and want_err in r.stderr,
           f"{name}: exit 5 with a message naming the problem (got {r.returncode})", r.stderr)
        ok(len(sm) == 1 and sm[0].get("HWLAT_STATUS") == "failed",
           f"{name}: summary status failed", sm)
        ok(read(d, "window") == "1000000\n" and read(d, "enable") == "0\n",
           f"{name}: settings restored", snapshot(d))


def test_rejected_setting(tmp):
    """A setting the detector rejects: exit 5, a "failed" summary with no
    samples, and the settings already written are restored."""
    d = make_fake(tmp, cpus=None)
    # A sysfs file reads as a cpulist but refuses every write (EACCES).
    os.symlink("/sys/devices/system/cpu/online", os.path.join(d, "cpus"))
    export = os.path.join(tmp, "export.txt")
    r = run_scan(["--detector-dir", d, "--journal-export", export,
                  "--duration", "5", "--width", "300000", "--cpus", "0"])
    sm = [x for x in parse_export(export) if x.get("MESSAGE_ID") == SUMMARY_ID]
    ok(r.returncode == 5 and f"cannot write '0' to {d}/cpus" in r.stderr,
       f"rejected cpus: exit 5 naming file and value (got {r.returncode})", r.stderr)
    lines = r.stderr.splitlines()
    ok(len(lines) == 2 and lines[0].startswith(f"hwlat-scan: cannot write '0' to {d}/cpus: ") and
       lines[1] == "hwlat-scan: the scan could not start; restoring the previous settings",
       "rejected cpus: the write error, then that the scan could not start and is restored",
       r.stderr)
    ok(len(sm) == 1 and sm[0].get("HWLAT_STATUS") == "failed"
       and sm[0].get("HWLAT_SAMPLES") == "0" and sm[0].get("HWLAT_DURATION_NS") == "0"
       # never enabled: the sampled file left from before is not this scan's
       and sm[0].get("HWLAT_SAMPLED_NS") == "0" and sm[0].get("HWLAT_SAMPLED_CPU_NS") == "",
       "rejected cpus: one summary, failed, nothing sampled (time sampled 0, no CPU)", sm)
    ok(read(d, "width") == "500000\n" and read(d, "enable") == "0\n",
       "rejected cpus: width written before it is restored, never enabled", snapshot(d))


def test_unreadable_setting(tmp):
    """A detector whose threshold cannot be read: exit 4 saying so, and
    nothing is written or started."""
    d = make_fake(tmp, threshold=None)
    before = snapshot(d)
    export = os.path.join(tmp, "export.txt")
    r = run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1",
                  "--threshold", "30"])
    ok(r.returncode == 4 and r.stderr == f"hwlat-scan: cannot read {d}/threshold: "
       "No such file or directory\n" and snapshot(d) == before,
       f"no threshold file: exit 4 (got {r.returncode}) naming it, nothing changed",
       (r.stderr, snapshot(d)))


def syscall_groups():
    out = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"],
                         capture_output=True, text=True, check=True).stdout
    groups, cur = {}, None
    for l in out.splitlines():
        if l.startswith("@"):
            cur = l.split()[0]
            groups[cur] = []
        elif cur and l.startswith("    ") and not l.strip().startswith("#"):
            groups[cur].append(l.strip())

    def expand(names, seen):
        res = set()
        for m in names:
            if m.startswith("@"):
                if m not in seen:
                    seen.add(m)
                    res |= expand(groups.get(m, []), seen)
            else:
                res.add(m)
        return res
    return lambda names: expand(names, set())


def test_syscall_filter(tmp):
    """The scan's system calls all pass the unit's SystemCallFilter=."""
    if not shutil.which("strace"):
        subprocess.run(["bash", "-c", '. "$1/tests/lib/need.sh" && need_packages strace',
                        "bash", SRCDIR], check=False)
    if not shutil.which("strace"):
        ok(False, "strace is available (tests/lib/need.sh strace)")
        return
    allow, deny = set(), set()
    with open(os.path.join(SRCDIR, "service/hwlat-scan.service.in")) as f:
        for l in f:
            if l.startswith("SystemCallFilter="):
                v = l.split("=", 1)[1].split()
                if v[0].startswith("~"):
                    deny |= {v[0][1:]} | set(v[1:])
                else:
                    allow |= set(v)
    expand = syscall_groups()
    allowed, denied = expand(allow), expand(deny)
    d = make_fake(tmp)
    trace = os.path.join(tmp, "trace")
    mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 20000, 0, 1, 0, 0, 0)), w.flush()),
                     drain=line(2, 0, 1, 5, 20000, 0, 1, 0, 0, 0))
    mod.start()
    jd = FakeJournald(tmp)
    r = subprocess.run(jd.wrap(["strace", "-f", "-qq", "-o", trace, SCAN] + NO_CONFIG +
                               ["--detector-dir", d, "--duration", "1", "--width", "400000"]),
                       capture_output=True, text=True, env=scan_env(), timeout=60)
    mod.join(5)
    jd.close()
    used = set()
    with open(trace) as f:
        for l in f:
            m = re.match(r"^\d+\s+([a-z_0-9]+)\(", l)
            if m:
                used.add(m.group(1))
    used.discard("execve")  # strace's own exec of the scan
    ok(r.returncode == 0 and "sendmsg" in used
       and [e.get("HWLAT_SEQ") for e in jd.entries] == ["1", "2", None]
       and jd.entries[-1].get("HWLAT_STATUS") == "completed",
       "traced scan completed and sent its entries to the journal socket",
       (r.returncode, r.stderr, sorted(used), jd.entries))
    ok(len(used) > 10 and used <= allowed and not (used & denied),
       f"all {len(used)} system calls pass SystemCallFilter=",
       f"not allowed: {sorted(used - allowed)}, denied: {sorted(used & denied)}")


def test_module_helpers(tmp):
    """--load-module/--unload-module through a fake module tool."""
    sysmod = os.path.join(tmp, "sys-module")
    run = os.path.join(tmp, "run-hwlat")
    log = os.path.join(tmp, "module-tool.log")
    os.mkdir(sysmod)
    env = {"HWLAT_MODPROBE": FAKE_MODPROBE, "HWLAT_SYS_MODULE": sysmod,
           "HWLAT_RUN_DIR": run, "FAKE_MODPROBE_LOG": log}
    marker = os.path.join(run, "loaded-by-scan")
    fake_dir = ["--detector-dir", tmp]  # no debugfs handling in tests

    def calls():
        if not os.path.exists(log):
            return []
        with open(log) as f:
            c = f.read().splitlines()
        os.unlink(log)
        return c

    r = run_scan(fake_dir + ["--load-module"], env=env)
    c = calls()
    ok(r.returncode == 0 and c == ["--dry-run --quiet hwlat_detector", "--quiet hwlat_detector"]
       and os.path.exists(marker) and os.path.isdir(os.path.join(sysmod, "hwlat_detector")),
       "--load-module loads an absent module and leaves the marker", (r.returncode, c, r.stderr))
    r = run_scan(fake_dir + ["--unload-module"], env=env)
    c = calls()
    ok(r.returncode == 0 and c == ["--remove hwlat_detector"] and not os.path.exists(marker),
       "--unload-module unloads what it loaded and removes the marker", (r.returncode, c))
    r = run_scan(fake_dir + ["--unload-module"], env=env)
    ok(r.returncode == 0 and calls() == [], "--unload-module without marker unloads nothing")
    os.mkdir(os.path.join(sysmod, "hwlat_detector"))
    r = run_scan(fake_dir + ["--load-module"], env=env)
    ok(r.returncode == 0 and calls() == [] and not os.path.exists(marker),
       "--load-module leaves an already loaded module alone, no marker")
    os.rmdir(os.path.join(sysmod, "hwlat_detector"))
    rel = os.uname().release
    r = run_scan(fake_dir + ["--load-module"], env={**env, "FAKE_MODPROBE_MISSING": "1"})
    c = calls()
    ok(r.returncode == 4 and rel in r.stderr and "hwlat-dkms" in r.stderr
       and f"linux-headers-{rel}" in r.stderr and "dkms autoinstall" in r.stderr
       and c == ["--dry-run --quiet hwlat_detector"] and not os.path.exists(marker),
       "module not installed: exit 4 naming the kernel and the fix", (r.returncode, c, r.stderr))
    # Loaded by the scan, but the module tool fails to remove it (status 1):
    # --unload-module exits 4 and says so, not 0 as if it were gone.
    r = run_scan(fake_dir + ["--load-module"], env=env)
    c = calls()
    r = run_scan(fake_dir + ["--unload-module"], env={**env, "FAKE_MODPROBE_MISSING": "1"})
    ok(r.returncode == 4 and calls() == ["--remove hwlat_detector"] and
       r.stderr == "hwlat-scan: modprobe --remove hwlat_detector failed (status 1)\n" and
       os.path.isdir(os.path.join(sysmod, "hwlat_detector")),
       f"--unload-module whose modprobe --remove fails: exit 4 (got {r.returncode}) with "
       "the tool's status", (c, r.stderr))


def test_scan_id(tmp):
    """$INVOCATION_ID is the scan id only under --unit: a scan run by hand
    from another service (a CI job, cloud-init) inherits that service's id,
    and two such scans must not share it."""
    inv = "fedcba9876543210fedcba9876543210"
    for unit in (True, False):
        name = "unit" if unit else "by-hand"
        sub = os.path.join(tmp, name)
        os.mkdir(sub)
        d = make_fake(sub)
        export = os.path.join(sub, "export.txt")
        mod = FakeModule(d, lambda w: (w.write(line(1, 0, 1, 0, 20000, 0, 1, 0, 0, 0)),
                                       w.flush()))
        mod.start()
        r = run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"]
                     + (["--unit"] if unit else []), env={"INVOCATION_ID": inv})
        mod.join(5)
        ids = {x.get("HWLAT_SCAN_ID") for x in parse_export(export)}
        if unit:
            ok(r.returncode == 0 and ids == {inv},
               f"--unit: every entry has HWLAT_SCAN_ID = $INVOCATION_ID (exit {r.returncode})",
               (ids, r.stderr))
        else:
            fresh = len(ids) == 1 and inv not in ids and all(
                i and len(i) == 32 and all(ch in "0123456789abcdef" for ch in i) for i in ids)
            ok(r.returncode == 0 and fresh,
               f"by hand under an inherited $INVOCATION_ID: a fresh scan id (exit {r.returncode})",
               (ids, r.stderr))


def main():
    if not os.access(SCAN, os.X_OK):
        print(f"Bail out! {SCAN} is not built")
        return 1
    if not os.access(JOURNAL_REMOTE, os.X_OK):
        print(f"Bail out! {JOURNAL_REMOTE} missing: install systemd-journal-remote (tests/install-deps)")
        return 1
    return run((test_full_run, test_sigterm, test_lock, test_failures,
                test_rejected_setting, test_unreadable_setting, test_scan_id, test_syscall_filter,
                test_module_helpers))


if __name__ == "__main__":
    sys.exit(main())
