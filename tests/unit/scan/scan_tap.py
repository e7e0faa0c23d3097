# SPDX-License-Identifier: GPL-2.0-or-later
"""TAP output of the Python scan tests (test-hwlat-scan.py and the
test-scan-*.py scripts): one count of checks for the whole
program, whichever script's check ran, and the loop that runs the test
functions, each in a temporary directory of its own."""
import shutil
import sys
import tempfile

n_tests = 0
n_failed = 0


def ok(cond, what, saw=None):
    """One TAP line; on failure, the last 30 lines of what was seen."""
    global n_tests, n_failed
    n_tests += 1
    if not cond:
        n_failed += 1
    print(("ok" if cond else "not ok") + f" {n_tests} - {what}", flush=True)
    if not cond and saw is not None:
        for line in str(saw).splitlines()[-30:]:
            print(f"#   saw: {line}", flush=True)


def run(tests, only=()):
    """Runs each test(tmp) (only those named in ONLY, if any) in a fresh
    directory, removed after it; an exception is a failed check naming it.
    Prints the plan; returns the exit status (1 when any check failed)."""
    for t in tests:
        if only and t.__name__ not in only:
            continue
        tmp = tempfile.mkdtemp(prefix=f"hwlat-{t.__name__}-")
        try:
            t(tmp)
        except Exception as e:
            ok(False, f"{t.__name__} raised {e!r}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{n_tests}")
    sys.stdout.flush()
    return 1 if n_failed else 0
