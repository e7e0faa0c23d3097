#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hwlat-scan's openmetrics_file on the fake detector (fake_detector.py).
Proves that after a scan the file holds the scan's figures
at exact values (samples, max, percentiles, latency sum, SMIs, NMIs,
unexplained and dropped windows, duration, threshold, the scan's end and
status, the time sampled in all and per CPU, per CPU samples, max, SMIs
and unexplained windows; no time sampled without the module's `sampled`), that it
passes `promtool check metrics`, that SMIs the module cannot count leave
hwlat_smis out (never 0), that the file is replaced atomically (mode
0644, no temporary file left, also when writing fails), that a file that
cannot be written names the path and the cause and exits 5, and that the
config key and --openmetrics-file are checked (an absolute path) and shown
by --check-config. TAP output."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as st  # noqa: E402

LINES = st.FIVE_WINDOWS


def scan(tmp, name, args, config=None, **fake):
    """One 1 s scan of LINES; returns (result, summary entry)."""
    r, _, export = st.scan_lines(tmp, name, args, config, **fake)
    entries = st.parse_export(export) if os.path.exists(export) else []
    summary = [e for e in entries if e.get("MESSAGE_ID") == st.SUMMARY_ID]
    return r, summary[0] if summary else {}


def seconds(ns):
    """ns as the file writes it: an exact decimal."""
    s, frac = divmod(int(ns), 10**9)
    return str(s) if frac == 0 else ("%d.%09d" % (s, frac)).rstrip("0")


def promtool(path):
    r = subprocess.run(["promtool", "check", "metrics"], stdin=open(path), capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def samples_of(text):
    """{series: value} of the sample lines."""
    return dict(ln.rsplit(" ", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))


def main(tmp):
    out = os.path.join(tmp, "textfile")
    os.mkdir(out)
    prom = os.path.join(out, "hwlat.prom")
    with open(prom, "w") as f:
        f.write("old\n")
    r, sm = scan(tmp, "full", ["--openmetrics-file", prom])
    st.ok(r.returncode == 0 and os.path.exists(prom), f"scan exit {r.returncode}, file written",
          r.stdout + r.stderr)
    text = open(prom).read() if os.path.exists(prom) else ""
    got = samples_of(text)
    end = seconds(int(sm.get("HWLAT_START_NS", 0)) + int(sm.get("HWLAT_DURATION_NS", 0)))
    want = {
        "hwlat_scans": "1",
        "hwlat_samples": "5",
        "hwlat_latency_max_seconds": "0.00003",
        # p50 = 20 us read back as the middle of its bucket [19968, 20096) ns
        'hwlat_latency_seconds{quantile="0.5"}': "0.000020031",
        'hwlat_latency_seconds{quantile="0.9"}': "0.00003",
        'hwlat_latency_seconds{quantile="0.99"}': "0.00003",
        'hwlat_latency_seconds{quantile="0.999"}': "0.00003",
        "hwlat_latency_seconds_sum": "0.00009",
        "hwlat_latency_seconds_count": "5",
        "hwlat_smis": "2",
        "hwlat_smis_available": "1",
        # The fake platform is bare metal: the machine's own SMIs.
        "hwlat_smis_guest": "0",
        "hwlat_nmis": "1",
        "hwlat_unexplained_windows": "3",
        "hwlat_dropped_windows": "1",
        # The fake module's `skipped` is empty: none.
        "hwlat_skipped_windows": "0",
        "hwlat_scan_duration_seconds": seconds(sm.get("HWLAT_DURATION_NS", 0)),
        # The fake module's `sampled`: 450123456 + 449876543 ns.
        "hwlat_sampled_seconds": "0.899999999",
        'hwlat_cpu_sampled_seconds{cpu="0"}': "0.450123456",
        'hwlat_cpu_sampled_seconds{cpu="1"}': "0.449876543",
        "hwlat_threshold_seconds": "0.00001",
        "hwlat_last_scan_timestamp_seconds": end,
        'hwlat_last_scan_status{status="completed"}': "1",
        'hwlat_last_scan_status{status="interrupted"}': "0",
        'hwlat_last_scan_status{status="failed"}': "0",
        'hwlat_last_scan_status{status="no-summary"}': "0",
        'hwlat_cpu_samples{cpu="0"}': "3",
        'hwlat_cpu_samples{cpu="1"}': "2",
        'hwlat_cpu_latency_max_seconds{cpu="0"}': "0.00003",
        'hwlat_cpu_latency_max_seconds{cpu="1"}': "0.000025",
        'hwlat_cpu_smis{cpu="0"}': "0",
        'hwlat_cpu_smis{cpu="1"}': "2",
        'hwlat_cpu_unexplained_windows{cpu="0"}': "2",
        'hwlat_cpu_unexplained_windows{cpu="1"}': "1",
    }
    st.ok(got == want, "every series at its exact value", "\n".join(
        "%s: got %s want %s" % (k, got.get(k), want.get(k))
        for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)))
    st.ok(re.match(r"^1\.0[0-9]*$", got.get("hwlat_scan_duration_seconds", "")) is not None,
          "the duration is the scan's 1.0x s", got.get("hwlat_scan_duration_seconds"))
    families = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    helps = re.findall(r"^# HELP (\S+) ", text, re.M)
    st.ok([f for f, _ in families] == helps and len(families) == 21 and
          dict(families)["hwlat_latency_seconds"] == "summary" and
          all(t == "gauge" for f, t in families if f != "hwlat_latency_seconds"),
          "21 families, each with HELP and TYPE: gauges and one summary", families)
    rc, msg = promtool(prom)
    st.ok(rc == 0, "promtool check metrics passes", msg)
    st.ok(oct(os.stat(prom).st_mode & 0o777) == "0o644" and os.listdir(out) == ["hwlat.prom"],
          "mode 0644, the old file replaced, no temporary file left", os.listdir(out))

    # A module that cannot count SMIs: no hwlat_smis, never 0.
    prom2 = os.path.join(out, "nosmi.prom")
    r, _ = scan(tmp, "nosmi", ["--openmetrics-file", prom2], smi="unavailable: not an Intel CPU\n")
    got = samples_of(open(prom2).read()) if os.path.exists(prom2) else {}
    st.ok(r.returncode == 0 and "hwlat_smis" not in got and got.get("hwlat_smis_available") == "0"
          and not any(k.startswith("hwlat_cpu_smis") for k in got),
          "SMIs unavailable: hwlat_smis and hwlat_cpu_smis absent, hwlat_smis_available 0", got)
    rc, msg = promtool(prom2)
    st.ok(rc == 0, "promtool check metrics passes without SMIs", msg)

    # A module without `sampled` (older than the tools): no time sampled,
    # never 0.
    prom4 = os.path.join(out, "nosampled.prom")
    r, _ = scan(tmp, "nosampled", ["--openmetrics-file", prom4], sampled=None)
    got = samples_of(open(prom4).read()) if os.path.exists(prom4) else {}
    st.ok(r.returncode == 0 and got.get("hwlat_samples") == "5" and
          not any(k.startswith(("hwlat_sampled_seconds", "hwlat_cpu_sampled_seconds")) for k in got),
          "time sampled unavailable: hwlat_sampled_seconds and hwlat_cpu_sampled_seconds absent",
          [r.returncode, got])

    # The config key, and what --check-config shows.
    prom3 = os.path.join(out, "conf.prom")
    r, _ = scan(tmp, "config", [], config="openmetrics_file = %s\n" % prom3)
    st.ok(r.returncode == 0 and os.path.exists(prom3), "openmetrics_file in the config file",
          r.stderr)
    conf = os.path.join(tmp, "check.conf")
    with open(conf, "w") as f:
        f.write("openmetrics_file = /var/lib/prometheus/node-exporter/hwlat.prom\n")
    r = subprocess.run([st.SCAN, "--config", conf, "--check-config"], capture_output=True,
                       text=True, env=st.scan_env())
    st.ok(r.returncode == 0 and "# openmetrics_file: from %s:1\n"
          "openmetrics_file = /var/lib/prometheus/node-exporter/hwlat.prom\n" % conf in r.stdout,
          "--check-config shows openmetrics_file and where it comes from", r.stdout + r.stderr)

    # Cannot write: the path and the cause, exit 5, nothing left behind.
    missing = os.path.join(tmp, "no-such-dir", "hwlat.prom")
    r, sm = scan(tmp, "nodir", ["--openmetrics-file", missing])
    st.ok(r.returncode == 5 and sm.get("HWLAT_STATUS") == "completed" and
          "hwlat-scan: cannot write the OpenMetrics file %s: No such file or directory" % missing
          in r.stderr, "missing directory: exit 5, the path and the cause named, summary written",
          r.stderr)
    ro = os.path.join(tmp, "a-directory")
    os.mkdir(ro)
    r, _ = scan(tmp, "isdir", ["--openmetrics-file", ro])
    st.ok(r.returncode == 5 and "cannot write the OpenMetrics file %s: Is a directory" % ro
          in r.stderr and os.listdir(tmp).count("a-directory") == 1 and
          not [f for f in os.listdir(tmp) if f.startswith("a-directory.")],
          "a directory in the way: exit 5 naming it, the temporary file removed",
          (r.stderr, os.listdir(tmp)))

    for value, why in (("hwlat.prom", "expected the absolute path of a file"),
                       ("/var/lib/prometheus/node-exporter/", "expected the absolute path"),
                       ("", "expected the absolute path")):
        r = st.run_scan(["--detector-dir", "/nonexistent", "--openmetrics-file", value],
                        timeout=20)
        st.ok(r.returncode == 2 and ("command line: invalid value '%s' for 'openmetrics_file': "
                                     % value) in r.stderr and why in r.stderr,
              f"--openmetrics-file {value!r}: usage error naming it", r.stderr)
    r = st.run_scan(["--help"])
    st.ok("--openmetrics-file=PATH" in r.stdout, "--help shows --openmetrics-file", r.stdout)
    srcdir = os.environ.get("srcdir", ".")
    man = open(os.path.join(srcdir, "service/hwlat-scan.8")).read()
    conf_text = open(os.path.join(srcdir, "service/hwlat-scan.conf")).read()
    st.ok("openmetrics_file" in man and "\\-\\-openmetrics\\-file" in man and
          "#openmetrics_file = /var/lib/prometheus/node-exporter/hwlat.prom" in conf_text,
          "hwlat-scan(8) and hwlat-scan.conf document openmetrics_file")


if __name__ == "__main__":
    if not shutil.which("promtool"):
        print("Bail out! promtool is missing (package prometheus; tests/install-deps)")
        sys.exit(99)
    tmp = tempfile.mkdtemp(prefix="hwlat-scan-metrics-")
    try:
        main(tmp)
    except Exception as e:
        st.ok(False, f"raised {e!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    import scan_tap  # the counts of st.ok (fake_detector.py imports it)
    print(f"1..{scan_tap.n_tests}")
    sys.exit(1 if scan_tap.n_failed else 0)
