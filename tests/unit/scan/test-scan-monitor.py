#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hwlat-scan --monitor against the fake detector (fake_detector.py, this
script playing the module, a fake /dev/cpu/N/msr and a fake sysfs), with
2-second intervals. Proves that:

- it applies the monitor_ settings (not the scan's), samples, journals two
  sample entries (budget 2) and folds the other three into the interval's
  summary, whose time sampled is the growth of the module's `sampled` and
  whose SMIs are the growth of MSR_SMI_COUNT; the Prometheus file says the
  same;
- SIGHUP with a bad configuration changes nothing and says what was wrong;
  with a good one it ends the interval ("reload") and applies it;
- SIGTERM restores every setting, ends with a "stop" summary, exit 0;
- a scan's lock (/run/hwlat/scan.lock, here HWLAT_RUN_DIR) pauses it: the
  detector's settings go back, hwlat_monitor_paused is 1; once the lock is
  gone it samples again, and the interval counts the pause as time paused,
  not sampled;
- a real one-shot scan started beside it waits for it, runs, and the monitor
  resumes afterwards;
- the detector going away (the module unloaded) pauses it without touching
  anything; when the detector is back it takes it again;
- someone else writing enable=0 (the stream ends, the detector stays)
  pauses it once, and it takes the detector again at the next tick;
- systemd's watchdog is pinged at half its period (WATCHDOG_USEC), and
  not at all without one;
- a second monitor process starts every counter from 0 with its own start
  time and its own id.
TAP output; exit status 1 when any check failed."""
import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

ok = fake.ok
INTERVAL_ID = "6d3e4f6fa03a4b40b324b6fdfbf15053"
SETTINGS = ("threshold", "width", "window", "mode", "cpus", "enable")
F_OFD_SETLK = 37


def setup(tmp, interval="2s"):
    """The fake machine with the monitor's config; returns (d, module, conf)."""
    return fake.monitor_machine(
        tmp, "threshold = 50us\nwidth = 300ms\n"  # the scan's: not the monitor's
        f"monitor_interval = {interval}\nmonitor_sample_budget = 2\n"
        f"monitor_openmetrics_file = {tmp}/m.prom\n", smi=10)


def start(tmp, d, conf, export="exp"):
    return subprocess.Popen(fake.monitor_argv(fake.SCAN, tmp, d, conf, export),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=fake.monitor_env(tmp))


def entries(tmp, export="exp", mid=INTERVAL_ID):
    try:
        return [e for e in fake.parse_export(os.path.join(tmp, export))
                if e.get("MESSAGE_ID") == mid]
    except FileNotFoundError:
        return []


def wait_intervals(tmp, n, timeout=15, export="exp"):
    return fake.wait_for(lambda: len(entries(tmp, export)) >= n, timeout)


def prom(tmp):
    try:
        with open(os.path.join(tmp, "m.prom")) as f:
            return dict(line.rsplit(" ", 1) for line in f.read().splitlines()
                        if line and not line.startswith("#"))
    except FileNotFoundError:
        return {}


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        return p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()


def settings(d):
    return {n: fake.read(d, n) for n in SETTINGS}


def test_intervals_reload_stop(tmp):
    d, mod, conf = setup(tmp)
    before = settings(d)
    p = start(tmp, d, conf)
    up = fake.wait_for(lambda: os.path.exists(os.path.join(tmp, "m.prom")), 10)
    now = settings(d)
    ok(up and now["width"] == "9000\n" and now["window"] == "1000000\n" and
       now["threshold"] == "10\n" and now["enable"] == "1\n",
       "the monitor_ settings are applied (9 ms of 1 s, 10 us), not the scan's", now)
    for i in range(5):
        mod.write(fake.line(i + 1, 0, 1700000000 + i, 0, 20000 + 1000 * i, 0, 1, 0, 0, 0))
    with open(os.path.join(d, "sampled"), "w") as f:
        f.write("0 460123456\n1 449876543\n")  # CPU 0 sampled 10 ms more
    fake.put_msr(tmp, 13)
    # The file is rewritten right after the summary is journaled.
    got = wait_intervals(tmp, 1) and fake.wait_for(
        lambda: "hwlat_monitor_last_interval_timestamp_seconds" in prom(tmp), 5)
    iv = entries(tmp)[0] if got else {}
    samples = entries(tmp, mid=fake.SAMPLE_ID)
    ok(got and iv.get("HWLAT_SAMPLES") == "5" and iv.get("HWLAT_JOURNALED") == "2" and
       iv.get("HWLAT_FOLDED") == "3" and len(samples) == 2 and
       iv.get("HWLAT_FOLDED_HISTOGRAM") == "5e-05:3" and iv.get("HWLAT_GAPS") == "5" and
       iv.get("HWLAT_MAX_NS") == "24000",
       "interval 1: 5 windows, 2 sample entries (the budget), 3 folded with their histogram",
       iv)
    ok(samples and all(e.get("HWLAT_MONITOR") == "1" for e in samples),
       "the monitor's sample entries carry HWLAT_MONITOR=1 (the report's newest scan passes "
       "them by)", samples)
    ok(iv.get("HWLAT_SAMPLED_NS") == "10000000" and iv.get("HWLAT_SAMPLED_CPU_NS") ==
       "0:10000000" and iv.get("HWLAT_SMI_TOTAL") == "3" and
       iv.get("HWLAT_SMI_CPU") == str(fake.first_cpu()) and iv.get("HWLAT_INTERVAL_END") == "interval",
       "its time sampled is the growth of `sampled` (10 ms on CPU 0), its SMIs the growth of "
       "MSR_SMI_COUNT (10 -> 13)", iv)
    # Every value, in order (the names and HELP lines: test-monitor-metrics).
    # Worked out from the lines above: gaps of 20-24 us, 20 us in le 2e-05
    # (inclusive), sum 110 us; no NMI and SMI count 0: all 5 unexplained.
    values = [l for l in open(os.path.join(tmp, "m.prom")).read().splitlines()
              if not l.startswith("#")] if got else []
    times = [v.split(" ")[1] for v in values[:2]]
    want = ([f"hwlat_monitor_start_time_seconds {times[0] if times else ''}",
             f"hwlat_monitor_last_interval_timestamp_seconds {times[1] if len(times) > 1 else ''}",
             "hwlat_monitor_paused 0", "hwlat_sampled_seconds_total 0.01",
             'hwlat_cpu_sampled_seconds_total{cpu="0"} 0.01', "hwlat_gaps_total 5"] +
            [f'hwlat_gap_seconds_bucket{{le="{le}"}} {n}' for le, n in
             [("1e-06", 0), ("2e-06", 0), ("5e-06", 0), ("1e-05", 0), ("2e-05", 1), ("5e-05", 5),
              ("0.0001", 5), ("0.0002", 5), ("0.0005", 5), ("0.001", 5), ("0.002", 5),
              ("0.005", 5), ("0.01", 5), ("0.02", 5), ("0.05", 5), ("0.1", 5), ("0.2", 5),
              ("0.5", 5), ("1", 5), ("+Inf", 5)]] +
            ["hwlat_gap_seconds_sum 0.00011", "hwlat_gap_seconds_count 5", "hwlat_smis_total 3",
             "hwlat_smis_available 1", "hwlat_nmis_total 0", "hwlat_unexplained_windows_total 5",
             "hwlat_dropped_windows_total 0", "hwlat_skipped_windows_total 0",
             "hwlat_interval_latency_max_seconds 0.000024", "hwlat_threshold_seconds 0.00001"])
    ok(values == want and all(float(t) > 1.7e9 for t in times),
       "the Prometheus file after interval 1, every value: 5 gaps, 0.01 s sampled on CPU 0, "
       "3 SMIs, the histogram, max 24 us", "\n".join(values))

    with open(conf, "a") as f:
        f.write("monitor_width = 2s\n")
    p.send_signal(signal.SIGHUP)
    time.sleep(1.5)
    ok(p.poll() is None and fake.read(d, "width") == "9000\n" and
       fake.read(d, "enable") == "1\n",
       "SIGHUP with a width the detector cannot take: still sampling with the old settings")
    with open(conf, "w") as f:
        f.write(f"monitor_interval = 2s\nmonitor_width = 20ms\n"
                f"monitor_openmetrics_file = {tmp}/m.prom\n")
    n = len(entries(tmp))
    p.send_signal(signal.SIGHUP)
    reloaded = fake.wait_for(lambda: fake.read(d, "width") == "20000\n", 10)
    ends = [e.get("HWLAT_INTERVAL_END") for e in entries(tmp)[n:]]
    ok(reloaded and "reload" in ends, "SIGHUP with a good one: the interval ends (reload), "
       "width 20 ms is applied", ends)
    out, err = stop(p)
    last = entries(tmp)[-1] if entries(tmp) else {}
    ok(p.returncode == 0 and settings(d) == before and last.get("HWLAT_INTERVAL_END") == "stop",
       "SIGTERM: exit 0, every setting restored, a last summary (stop)",
       f"exit {p.returncode}\n{settings(d)}\n{err}")
    ok("invalid" in err and "going on with the running one" in err and
       "reloaded the configuration" in err,
       "it said the bad configuration was refused and the good one applied", err)
    first_start = prom(tmp).get("hwlat_monitor_start_time_seconds")
    ids = {e.get("HWLAT_SCAN_ID") for e in entries(tmp)}

    # A second process: counters from 0, its own start time and id.
    with open(os.path.join(d, "sampled"), "w") as f:
        f.write("0 460123456\n1 449876543\n")
    p = start(tmp, d, conf, export="exp2")
    got = wait_intervals(tmp, 1, export="exp2")
    m = prom(tmp)
    out, err = stop(p)
    iv2 = entries(tmp, "exp2")[0] if got else {}
    ok(got and m.get("hwlat_gaps_total") == "0" and m.get("hwlat_sampled_seconds_total") == "0"
       and m.get("hwlat_monitor_start_time_seconds") != first_start and
       iv2.get("HWLAT_INTERVAL") == "1" and iv2.get("HWLAT_SCAN_ID") not in ids,
       "a new monitor process: counters from 0, a new start time, interval 1, a new id", m)
    mod.close()


def ofd_lock(path):
    """Takes the lock a scan takes (an open file description write lock)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
    return fd


def test_pause_for_scan_lock(tmp):
    d, mod, conf = setup(tmp, "3s")
    before = settings(d)
    p = start(tmp, d, conf)
    fake.wait_for(lambda: fake.read(d, "enable") == "1\n", 10)
    fd = ofd_lock(os.path.join(tmp, "run", "scan.lock"))
    paused = fake.wait_for(lambda: settings(d) == before and prom(tmp).get("hwlat_monitor_paused")
                           == "1", 10)
    ok(paused, "a scan's lock: the detector restored and let go, hwlat_monitor_paused 1",
       settings(d))
    time.sleep(1.5)
    os.close(fd)
    resumed = fake.wait_for(lambda: fake.read(d, "enable") == "1\n" and
                            prom(tmp).get("hwlat_monitor_paused") == "0", 10)
    out, err = stop(p)
    # A slow host may split the pause between two intervals: their sum.
    ivs = entries(tmp)
    paused_ns = sum(int(e.get("HWLAT_PAUSED_SCAN_NS", "0")) for e in ivs)
    ok(resumed and ivs and sum(int(e.get("HWLAT_PAUSES", "0")) for e in ivs) == 1 and
       paused_ns >= 1500000000 and
       all(e.get("HWLAT_PAUSED_DETECTOR_NS") == "0" for e in ivs),
       f"once the lock is gone it samples again; the intervals count {paused_ns} ns paused "
       "for the scan, in one pause", ivs)
    ok("a one-shot scan wants the detector" in err and "resumed after a pause" in err,
       "it said why it paused and that it resumed", err)
    mod.close()


def test_scan_beside_monitor(tmp):
    d, mod, conf = setup(tmp, "1h")
    p = start(tmp, d, conf)
    fake.wait_for(lambda: fake.read(d, "enable") == "1\n", 10)
    scan = subprocess.run([fake.SCAN] + fake.NO_CONFIG +
                          ["--detector-dir", d, "--duration=1s", "--width=100000",
                           "--journal-export", os.path.join(tmp, "scan-exp")],
                          capture_output=True, text=True, env=fake.monitor_env(tmp), timeout=60)
    summaries = [e for e in fake.parse_export(os.path.join(tmp, "scan-exp"))
                 if e.get("MESSAGE_ID") == fake.SUMMARY_ID] if scan.returncode == 0 else []
    ok(scan.returncode == 0 and "waiting up to 15 s" in scan.stderr and
       "the monitor paused; scanning" in scan.stderr and len(summaries) == 1 and
       summaries[0].get("HWLAT_WIDTH_NS") == "100000000",
       "a one-shot scan beside the monitor waits for it to pause and runs with its own "
       f"settings (exit {scan.returncode})", scan.stderr)
    scan_entries = fake.parse_export(os.path.join(tmp, "scan-exp")) if summaries else []
    ok(scan_entries and not any("HWLAT_MONITOR" in e for e in scan_entries),
       "the one-shot scan's entries carry no HWLAT_MONITOR", scan_entries[:3])
    resumed = fake.wait_for(lambda: fake.read(d, "width") == "9000\n" and
                            fake.read(d, "enable") == "1\n", 10)
    out, err = stop(p)
    iv = entries(tmp)[-1] if entries(tmp) else {}
    ok(resumed and p.returncode == 0 and int(iv.get("HWLAT_PAUSED_SCAN_NS", "0")) > 0,
       "then the monitor samples again with its own settings; the pause is in its interval",
       err)
    mod.close()


def test_detector_away(tmp):
    d, mod, conf = setup(tmp, "1h")
    p = start(tmp, d, conf)
    fake.wait_for(lambda: fake.read(d, "enable") == "1\n", 10)
    away = d + ".away"
    os.rename(d, away)  # the module unloaded: its directory is gone
    said = fake.wait_for(lambda: prom(tmp).get("hwlat_monitor_paused") == "1", 10)
    os.rename(away, d)
    with open(os.path.join(d, "enable"), "w") as f:
        f.write("0\n")  # a fresh module: not sampling
    with open(os.path.join(d, "width"), "w") as f:
        f.write("500000\n")
    back = fake.wait_for(lambda: fake.read(d, "enable") == "1\n" and
                         fake.read(d, "width") == "9000\n", 10)
    out, err = stop(p)
    iv = entries(tmp)[-1] if entries(tmp) else {}
    ok(said and back and int(iv.get("HWLAT_PAUSED_DETECTOR_NS", "0")) > 0 and
       iv.get("HWLAT_PAUSES") == "1",
       "the detector went away: paused; back: its settings applied again, the gap counted",
       err)
    ok("the detector went away" in err and "resumed after a pause" in err and
       p.returncode == 0, "it said so both times; exit 0 at SIGTERM", err)
    mod.close()


def test_disabled_by_someone(tmp):
    d, mod, conf = setup(tmp, "1h")
    before = settings(d)
    p = start(tmp, d, conf)
    on = fake.wait_for(lambda: fake.read(d, "enable") == "1\n", 10)
    with open(os.path.join(d, "enable"), "w") as f:
        f.write("0\n")  # someone else stops the detector: its stream ends
    back = on and fake.wait_for(lambda: fake.read(d, "enable") == "1\n", 20)
    out, err = stop(p)
    iv = entries(tmp)[-1] if entries(tmp) else {}
    ok(back and iv.get("HWLAT_PAUSES") == "1" and
       int(iv.get("HWLAT_PAUSED_DETECTOR_NS", "0")) > 0,
       "the detector disabled by someone else (its stream ended): one pause, then sampling "
       "again", err)
    ok("the detector went away (module unloaded, or disabled by someone else); pausing until "
       "it is back" in err and "resumed after a pause" in err and p.returncode == 0,
       "it said so both times; exit 0 at SIGTERM", err)
    ok(settings(d) == before, "the pause restored the detector's settings: after the stop they "
       "are the ones from before the monitor, not its own", (before, settings(d)))
    mod.close()


def notify_messages(tmp, d, conf, extra_env, seconds):
    """What the monitor tells systemd in its first seconds, with
    NOTIFY_SOCKET (and extra_env) set: the messages in order."""
    path = os.path.join(tmp, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    e = fake.monitor_env(tmp)
    e.update({"NOTIFY_SOCKET": path, **extra_env})
    p = subprocess.Popen(
        [fake.SCAN, "--config", conf, "--monitor", "--detector-dir", d,
         "--journal-export", os.path.join(tmp, "exp"), "--msr-dir", os.path.join(tmp, "msr"),
         "--platform-root", os.path.join(tmp, "root")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    msgs, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            msgs.append(sock.recv(4096).decode())
        except socket.timeout:
            pass
    stop(p)
    sock.close()
    os.unlink(path)
    return msgs


def test_watchdog(tmp):
    d, mod, conf = setup(tmp, "1h")
    msgs = notify_messages(tmp, d, conf, {"WATCHDOG_USEC": "2000000"}, 5.5)
    pings = msgs.count("WATCHDOG=1")
    ok(msgs and msgs[0].startswith("READY=1\n") and 3 <= pings <= 7,
       "WatchdogSec=2s: READY=1, then a ping every second (half the period), though a tick "
       "is 5 s: %d pings in 5.5 s" % pings, msgs)
    msgs = notify_messages(tmp, d, conf, {}, 3)
    ok(msgs and msgs[0].startswith("READY=1\n") and "WATCHDOG=1" not in msgs,
       "no WatchdogSec: READY=1 and no ping", msgs)
    mod.close()


sys.exit(fake.run([test_intervals_reload_stop, test_pause_for_scan_lock,
                   test_scan_beside_monitor, test_detector_away, test_disabled_by_someone,
                   test_watchdog],
                  sys.argv[1:]))
