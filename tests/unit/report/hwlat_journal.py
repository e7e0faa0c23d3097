# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for the hwlat-report tests: real journal files with known hwlat
entries (journal export format -> systemd-journal-remote), running the tool,
and a TAP reporter. Field names follow docs/interfaces.md section 2."""

import os
import struct
import subprocess
import sys
import tempfile

SAMPLE_ID = "18debb1199484fcc965913f03f96d36e"
SUMMARY_ID = "4ffb84af0b5d43dab64f8c6cd40251d6"
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"

HOST_A = {"_HOSTNAME": "hosta", "_MACHINE_ID": "a" * 32, "_BOOT_ID": "1" * 32}
HOST_B = {"_HOSTNAME": "hostb", "_MACHINE_ID": "b" * 32, "_BOOT_ID": "2" * 32}


def ensure_tools():
    """Installs systemd-journal-remote when missing (a fresh CI machine)."""
    if os.path.exists(JOURNAL_REMOTE):
        return
    top = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
    subprocess.run(["bash", "-c", '. "$1/tests/lib/need.sh"; need_packages systemd-journal-remote',
                    "need", top], check=True)


def tool():
    """The hwlat-report binary: $HWLAT_REPORT, or report/hwlat-report from
    the build directory (automake runs tests there)."""
    path = os.environ.get("HWLAT_REPORT") or os.path.abspath("report/hwlat-report")
    if not os.access(path, os.X_OK):
        print("Bail out! hwlat-report not found at %s (set HWLAT_REPORT)" % path)
        sys.exit(99)
    return path


class Journal:
    """Collects entries, then writes them as one journal file."""

    def __init__(self):
        self.entries = []
        self.mono = 1000

    def add(self, fields, host, realtime_ns, extra=()):
        """One entry: fields (a dict), then extra, a list of (name, value)
        pairs that may repeat a field or hold any bytes."""
        e = [("__REALTIME_TIMESTAMP", str(realtime_ns // 1000)),
             ("__MONOTONIC_TIMESTAMP", str(self.mono))]
        self.mono += 1000
        merged = dict(host)
        merged.update({k: v for k, v in fields.items()})
        e += [(k, v) for k, v in merged.items() if v is not None]
        e += list(extra)
        self.entries.append(e)

    def sample(self, scan, seq, cpu, t_ns, latency, host=HOST_A, inner=None,
               outer=None, count=1, nmi=0, nmi_ns=0, smi=0, threshold=10000, extra=(),
               **override):
        """A sample entry; override=value replaces (None: drops) a field,
        e.g. HWLAT_LATENCY_NS=None."""
        inner = latency if inner is None else inner
        outer = 0 if outer is None else outer
        fields = {"MESSAGE": "hwlat: %d ns on CPU %d" % (latency, cpu),
                  "MESSAGE_ID": SAMPLE_ID, "PRIORITY": 4,
                  "SYSLOG_IDENTIFIER": "hwlat-scan",
                  "HWLAT_SCAN_ID": scan, "HWLAT_SEQ": seq, "HWLAT_CPU": cpu,
                  "HWLAT_INNER_NS": inner, "HWLAT_OUTER_NS": outer,
                  "HWLAT_LATENCY_NS": latency, "HWLAT_COUNT": count,
                  "HWLAT_NMI_COUNT": nmi, "HWLAT_NMI_NS": nmi_ns,
                  "HWLAT_SMI_COUNT": smi, "HWLAT_TIMESTAMP_NS": t_ns,
                  "HWLAT_THRESHOLD_NS": threshold}
        fields.update(override)
        self.add(fields, host, t_ns + 1000000, extra)

    def summary(self, scan, start_ns, duration_ns, samples, max_ns, host=HOST_A,
                status="completed", threshold=10000, hardlimit=0, dropped=0,
                smi=0, nmi=0, floor=120, extra=(), **override):
        fields = {"MESSAGE": "hwlat scan %s %s" % (scan, status),
                  "MESSAGE_ID": SUMMARY_ID, "PRIORITY": 6,
                  "SYSLOG_IDENTIFIER": "hwlat-scan",
                  "HWLAT_SCAN_ID": scan, "HWLAT_STATUS": status,
                  "HWLAT_THRESHOLD_NS": threshold, "HWLAT_WIDTH_NS": 500000000,
                  "HWLAT_WINDOW_NS": 1000000000, "HWLAT_HARDLIMIT_NS": hardlimit,
                  "HWLAT_MODE": "round-robin", "HWLAT_CPUS": "0-1",
                  "HWLAT_KERNEL": "6.1.0-test-amd64", "HWLAT_CPU_MODEL": "Test CPU @ 2.0GHz",
                  "HWLAT_CLOCK": "tsc", "HWLAT_START_NS": start_ns,
                  "HWLAT_DURATION_NS": duration_ns, "HWLAT_SAMPLES": samples,
                  "HWLAT_MAX_NS": max_ns, "HWLAT_DROPPED": dropped,
                  "HWLAT_SMI_TOTAL": smi, "HWLAT_NMI_TOTAL": nmi,
                  "HWLAT_FLOOR_NS": floor}
        fields.update(override)
        self.add(fields, host, start_ns + duration_ns + 2000000, extra)

    def other(self, message, host=HOST_A, realtime_ns=1700000000 * 10**9):
        """An unrelated entry, which the report must ignore."""
        self.add({"MESSAGE": message, "SYSLOG_IDENTIFIER": "other"}, host, realtime_ns)

    def write(self, path):
        ensure_tools()
        with tempfile.NamedTemporaryFile("wb", suffix=".export", delete=False) as f:
            for e in self.entries:
                for k, v in e:
                    v = v if isinstance(v, bytes) else str(v).encode()
                    if all(0x20 <= b < 0x7f for b in v):
                        f.write(k.encode() + b"=" + v + b"\n")
                    else:  # the export format's binary form: name, size, bytes
                        f.write(k.encode() + b"\n" + struct.pack("<Q", len(v)) + v + b"\n")
                f.write(b"\n")
            export = f.name
        try:
            r = subprocess.run([JOURNAL_REMOTE, "--output=" + path, export],
                               capture_output=True, text=True)
            if r.returncode != 0 or not os.path.exists(path):
                raise RuntimeError("systemd-journal-remote failed (%d): %s" %
                                   (r.returncode, r.stderr))
        finally:
            os.unlink(export)
        return path


def thousand_samples(path, scan, t0):
    """A journal file of one scan of 10 s from t0 with 1000 samples on two
    CPUs (7000 ns and up) and its summary, 5 s sampled: 1001 hwlat entries
    for a walk. Returns path."""
    j = Journal()
    for i in range(1000):
        j.sample(scan, i + 1, i % 2, t0 + i * 1000, 7000 + i)
    j.summary(scan, t0, 10 * 10**9, 1000, 7999, HWLAT_SAMPLED_NS=5 * 10**9,
              HWLAT_SAMPLED_CPU_NS="0:%d 1:%d" % (2500000000, 2500000000))
    return j.write(path)


def ns_values(obj):
    """A --json document with its "*_ns" decimal strings as Python ints (the
    report prints nanoseconds as strings: docs/hwlat-report.schema.json);
    "unavailable" stays as it is."""
    if isinstance(obj, dict):
        return {k: (int(v) if k.endswith("_ns") and isinstance(v, str) and v.isdigit()
                    else ns_values(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [ns_values(v) for v in obj]
    return obj


def load_json(text):
    """Parses hwlat-report --json output; nanoseconds become ints."""
    import json
    return ns_values(json.loads(text))


def run(*args, env=None, raw=False, prefix=(), stdout=None):
    """Runs hwlat-report; returns (exit status, stdout, stderr), as bytes when
    raw. prefix runs it through another command (setpriv); stdout, a file
    object, takes its output instead."""
    e = dict(os.environ)
    e["TZ"] = "UTC"
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    r = subprocess.run(list(prefix) + [tool()] + list(args), env=e,
                       stdout=stdout if stdout else subprocess.PIPE, stderr=subprocess.PIPE)
    out = r.stdout if r.stdout is not None else b""
    if raw:
        return r.returncode, out, r.stderr
    return (r.returncode, out.decode("utf-8", "strict"),
            r.stderr.decode("utf-8", "backslashreplace"))


class Tap:
    """Minimal TAP producer: every check prints what it saw when it fails."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, saw=""):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, name))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, name))
            for line in str(saw).splitlines()[:40]:
                print("#   " + line)
        sys.stdout.flush()
        return cond

    def skip(self, name, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, why))
        sys.stdout.flush()

    def eq(self, got, want, name):
        return self.ok(got == want, name, "got:  %r\nwant: %r" % (got, want))

    def done(self):
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)


def nearest_rank(values, p):
    """The exact nearest-rank percentile the report approximates."""
    v = sorted(values)
    if p >= 100:
        return v[-1]
    import math
    rank = max(1, math.ceil(p / 100.0 * len(v)))
    return v[rank - 1]
