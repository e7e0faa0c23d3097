#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The time sampled, scanner side: runs hwlat-scan against the fake detector
(fake_detector.py, this script playing the module) and proves that:

- the module's debugfs `sampled` ("<cpu> <ns>" lines) becomes
  HWLAT_SAMPLED_NS (the sum) and HWLAT_SAMPLED_CPU_NS ("<cpu>:<ns>" joined
  by spaces) in the summary, read once the detector is disabled (the fake
  writes its final content only after enable=0), and the printed summary
  says the time sampled;
- a `sampled` file that is empty (no width completed) gives 0 and an empty
  list: a known zero;
- a module without the file gives "unavailable" for both, with a message
  saying the module is older, and the scan still succeeds;
- a malformed file gives "unavailable" for both, an error naming the file
  and the line, and the scan still succeeds (exit 0, completed).

(The tracer backend's "unavailable" is in test-scan-tracer.py, the parser's
edges in test-cpu-values.c.) TAP output; exit status 1 when any check failed.
"""
import os
import sys
import threading

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

SUMMARY_ID = fake.SUMMARY_ID
ok = fake.ok
FIELDS = ("HWLAT_SAMPLED_NS", "HWLAT_SAMPLED_CPU_NS", "HWLAT_STATUS")
# What a module left from an earlier run: the scan must not take it.
STALE = "0 1\n"


class SampledModule(threading.Thread):
    """Plays the module: one stream line after enable=1; once enable=0,
    `sampled` gets its final content (None: removed), then EOF."""

    def __init__(self, d, final):
        super().__init__(daemon=True)
        self.d, self.final = d, final
        self.error = None

    def run(self):
        try:
            with open(os.path.join(self.d, "stream"), "w") as w:
                if not fake.wait_for(fake.enabled(self.d, "1"), 20):
                    self.error = "enable never became 1"
                    return
                w.write(fake.line(1, 0, 1700000000, 0, 30000, 0, 1, 0, 0, 0))
                w.flush()
                if not fake.wait_for(fake.enabled(self.d, "0"), 60):
                    self.error = "enable never went back to 0"
                    return
                path = os.path.join(self.d, "sampled")
                if self.final is None:
                    if os.path.exists(path):
                        os.unlink(path)
                else:
                    with open(path + ".new", "w") as f:
                        f.write(self.final)
                    os.rename(path + ".new", path)
        except Exception as e:  # reported by the test that started us
            self.error = repr(e)


def scan(tmp, final, stale=STALE):
    """A 1 s scan whose module ends with `sampled` = final; returns (result,
    summary fields, detector dir)."""
    os.makedirs(tmp, exist_ok=True)
    d = fake.make_fake(tmp, sampled=stale)
    export = os.path.join(tmp, "export.txt")
    mod = SampledModule(d, final)
    mod.start()
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"])
    mod.join(5)
    if mod.error:
        ok(False, f"fake module: {mod.error}")
    sums = [e for e in fake.parse_export(export) if e.get("MESSAGE_ID") == SUMMARY_ID] \
        if os.path.exists(export) else []
    return r, {k: sums[0].get(k) for k in FIELDS} if len(sums) == 1 else {}, d


def test_sampled(tmp):
    """Two CPUs: the sum and the list, read after enable=0, also via journald's format."""
    r, got, _ = scan(tmp, "0 450123456\n1 449876543\n")
    want = {"HWLAT_SAMPLED_NS": "899999999",
            "HWLAT_SAMPLED_CPU_NS": "0:450123456 1:449876543", "HWLAT_STATUS": "completed"}
    ok(r.returncode == 0 and got == want,
       "sampled '0 450123456\\n1 449876543\\n' read after enable=0: HWLAT_SAMPLED_NS=899999999, "
       "HWLAT_SAMPLED_CPU_NS='0:450123456 1:449876543'", [got, r.stderr])
    ok("hwlat-scan: time sampled 0.899 s on 2 CPUs\n" in r.stdout,
       "the printed summary says the time sampled", r.stdout)
    entries, jfile = fake.to_journal(os.path.join(tmp, "export.txt"), os.path.join(tmp, "j"))
    sm = [e for e in entries or [] if e.get("MESSAGE_ID") == SUMMARY_ID]
    ok(len(sm) == 1 and sm[0].get("HWLAT_SAMPLED_NS") == "899999999" and
       sm[0].get("HWLAT_SAMPLED_CPU_NS") == "0:450123456 1:449876543",
       "both fields survive systemd-journal-remote and journalctl", jfile)

    r, got, _ = scan(os.path.join(tmp, "sparse"), "3 1000000\n17 250000000\n1023 5\n")
    ok(r.returncode == 0 and got.get("HWLAT_SAMPLED_NS") == "251000005" and
       got.get("HWLAT_SAMPLED_CPU_NS") == "3:1000000 17:250000000 1023:5" and
       "hwlat-scan: time sampled 0.251 s on 3 CPUs\n" in r.stdout,
       "CPUs 3, 17 and 1023: each listed with its own figure, ascending", [got, r.stdout])


def test_empty(tmp):
    """No width completed: a known 0 and an empty list, not unavailable."""
    r, got, _ = scan(tmp, "")
    ok(r.returncode == 0 and got == {"HWLAT_SAMPLED_NS": "0", "HWLAT_SAMPLED_CPU_NS": "",
                                     "HWLAT_STATUS": "completed"} and
       "hwlat-scan: time sampled 0.000 s on 0 CPUs\n" in r.stdout,
       "an empty sampled file: HWLAT_SAMPLED_NS=0, HWLAT_SAMPLED_CPU_NS empty", [got, r.stdout])


def test_no_file(tmp):
    """An older module without the file: unavailable, said, the scan succeeds."""
    r, got, d = scan(tmp, None, stale=None)
    ok(r.returncode == 0 and got == {"HWLAT_SAMPLED_NS": "unavailable",
                                     "HWLAT_SAMPLED_CPU_NS": "unavailable",
                                     "HWLAT_STATUS": "completed"},
       "no sampled file: both fields 'unavailable', status completed, exit 0",
       [got, r.returncode, r.stderr])
    ok(f"hwlat-scan: {d}/sampled does not exist: the hwlat_detector module is older than this "
       "hwlat-scan, the time sampled is unavailable (rebuild the module: dkms autoinstall)\n"
       in r.stderr and "hwlat-scan: time sampled unavailable\n" in r.stdout,
       "no sampled file: the scan says why and prints 'time sampled unavailable'",
       r.stderr + r.stdout)


def test_malformed(tmp):
    """A malformed file: unavailable, an error naming the file and line, exit 0."""
    cases = (
        ("order", "0 12\n0 13\n", "line 2: CPUs not in ascending order, read '0 13'"),
        ("down", "1 12\n0 13\n", "line 2: CPUs not in ascending order, read '0 13'"),
        ("nonl", "0 12\n1 13", "line 2: the last line has no newline, read '1 13'"),
        ("word", "0 12\n1 x\n", "line 2: expected '<cpu> <ns>', read '1 x'"),
        ("sign", "0 -12\n", "line 1: expected '<cpu> <ns>', read '0 -12'"),
        ("tabs", "0\t12\n", "line 1: expected '<cpu> <ns>', read '0?12'"),
        ("two", "0  12\n", "line 1: expected '<cpu> <ns>', read '0  12'"),
        ("blank", "0 12\n\n1 3\n", "line 2: expected '<cpu> <ns>', read ''"),
        ("range", "1024 5\n", "line 1: CPU number out of range, read '1024 5'"),
        ("nul", "0 1\x002\n", "line 1: a NUL byte, read '0 1?2'"),
        ("sum", "0 18446744073709551615\n1 1\n", "line 2: the sum exceeds 64 bits, read '1 1'"),
    )
    for name, text, msg in cases:
        r, got, d = scan(os.path.join(tmp, name), text)
        want_err = (f"hwlat-scan: {d}/sampled {msg}; the time sampled is unavailable\n")
        ok(r.returncode == 0 and got == {"HWLAT_SAMPLED_NS": "unavailable",
                                         "HWLAT_SAMPLED_CPU_NS": "unavailable",
                                         "HWLAT_STATUS": "completed"} and want_err in r.stderr,
           f"malformed sampled ({name}): both fields unavailable, exit 0, "
           f"'<dir>/sampled {msg}'", [got, r.returncode, r.stderr])


def main():
    if not os.access(fake.SCAN, os.X_OK):
        print(f"Bail out! {fake.SCAN} is not built")
        return 1
    import scan_tap  # the counts of ok (fake_detector.py imports it)
    return scan_tap.run((test_sampled, test_empty, test_no_file, test_malformed))


if __name__ == "__main__":
    sys.exit(main())
