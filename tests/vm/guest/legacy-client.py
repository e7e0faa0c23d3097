#!/usr/bin/python3
"""Legacy client: drives <debugfs>/hwlat_detector the way rt-tests'
hwlatdetect drove the 2009 module (its kmod driver, v1.1, and v1.2-v1.4 with
--kmodule), step by step as docs in shared/reference/kernel-anchors.md §3
describe it, and checks that every step works against our module.

Proves that an unmodified old hwlatdetect can run against hwlat_detector:
  - every value file reads as one line that Python's int() accepts;
  - values are written with str(value) and no newline, including the float
    "200000.0" Python 3 produces for "--window smaller than width";
  - enable is written, then polled every 0.1 s until it reads non-zero
    (and likewise for 0 at the end);
  - samples are read every 0.1 s by opening `sample` O_RDONLY|O_NONBLOCK,
    reading one line and closing; EAGAIN means "no sample";
  - each sample line is "<10 digits>.<10 digits>\\t<inner us>\\t<outer us>";
  - at the end `count` and `max` read as integers consistent with the
    samples seen (count >= samples read, max >= every sample's latency).

Runs inside the guest as root with the module loaded. Prints TAP.
  legacy-client.py [SECONDS]   sampling time, default 8
"""
import errno
import os
import re
import sys
import time

DIR = "/sys/kernel/debug/hwlat_detector"
SAMPLE_RE = re.compile(r"^(\d{10})\.(\d{10})\t(\d+)\t(\d+)$")

results = []


def tap(ok, what, seen=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - legacy client: {what}")
    if not ok and seen:
        for line in str(seen).splitlines()[:20]:
            print(f"#   {line}")
    sys.stdout.flush()


def get(field):
    """hwlatdetect's get(): open, read one line, int()."""
    with open(os.path.join(DIR, field)) as f:
        return int(f.readline())


def put(field, value):
    """hwlatdetect's set(): str(value), no newline."""
    with open(os.path.join(DIR, field), "w") as f:
        f.write(str(value))


def poll_enable(want, tries=50):
    """Write enable and poll it every 0.1 s, rewriting, until it reads want."""
    for _ in range(tries):
        put("enable", want)
        time.sleep(0.1)
        if (get("enable") != 0) == bool(want):
            return True
    return False


def read_sample():
    """One non-blocking open/readline/close; None on EAGAIN."""
    fd = os.open(os.path.join(DIR, "sample"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        with os.fdopen(fd, "r", closefd=False) as f:
            return f.readline()
    except OSError as e:
        if e.errno == errno.EAGAIN:
            return None
        raise
    finally:
        os.close(fd)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
    if not os.path.isdir(DIR):
        tap(False, f"{DIR} exists (module loaded, debugfs mounted)")
        return 1
    with open("/proc/mounts") as f:
        tap(any(l.split()[2] == "debugfs" for l in f), "debugfs is in /proc/mounts")

    try:
        vals = {k: get(k) for k in ("enable", "threshold", "width", "window", "count", "max")}
        tap(True, "every value file reads as an int() line: %s" % vals)
    except (OSError, ValueError) as e:
        tap(False, "every value file reads as an int() line", e)
        return 1

    # --window 400000 while width is 500000: width = window / 2 first, as a
    # Python 3 float, then the window; then --width 300000 fits the window.
    try:
        put("width", 400000 / 2)
        put("window", 400000)
        put("width", 300000)
        put("threshold", 10)
        got = (get("width"), get("window"), get("threshold"))
        tap(got == (300000, 400000, 10),
            "width 200000.0 (float), window 400000, width 300000, threshold 10 applied",
            f"read back width/window/threshold {got}")
    except (OSError, ValueError) as e:
        tap(False, "settings written the way hwlatdetect writes them", e)
        return 1

    threshold = get("threshold")
    tap(poll_enable(1), "enable=1 written and polled until it reads 1")
    if get("threshold") != threshold:
        put("threshold", threshold)

    lines, bad = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        while True:
            line = read_sample()
            if not line:
                break
            line = line.strip()
            lines.append(line)
            if not SAMPLE_RE.match(line):
                bad.append(line)
        time.sleep(0.1)

    count, mx = get("count"), get("max")
    tap(poll_enable(0), "enable=0 written and polled until it reads 0")
    tap(len(lines) > 0, f"samples read with O_NONBLOCK open/readline/close: {len(lines)}",
        "no sample in %.0f s at threshold 10 us (a TCG guest always has some)" % seconds)
    tap(not bad, "every sample line is <10 digits>.<10 digits>\\t<inner>\\t<outer>",
        "\n".join(repr(b) for b in bad[:10]))
    lat = [max(int(m.group(3)), int(m.group(4)))
           for m in map(SAMPLE_RE.match, lines) if m]
    tap(count >= len(lines), f"count {count} >= samples read {len(lines)}")
    tap(not lat or mx >= max(lat), f"max {mx} us >= largest sample latency "
        f"{max(lat) if lat else '-'} us")
    try:
        put("window", 400000 // 2)
        tap(False, "window 200000 <= width 300000 refused", "the write succeeded")
    except OSError as e:
        tap(e.errno == errno.EINVAL, "window 200000 <= width 300000 refused with EINVAL",
            e)
    put("window", 1000000)
    put("width", 500000)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
