# SPDX-License-Identifier: GPL-2.0-or-later
"""The fake tracefs of hwlat-scan's tracer tests: regular files for the
hwlat tracer's settings, a FIFO for trace_pipe, a thread that plays the
kernel (FakeKernel), lines as the kernel prints them, and a scan of it."""
import os
import sys
import threading

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

TRACEFS = {
    "available_tracers": "hwlat blk function nop\n",
    "current_tracer": "nop\n",
    "tracing_thresh": "7\n",
    "tracing_cpumask": "1\n",
    "tracing_on": "0\n",
    "hwlat_detector/width": "300000\n",
    "hwlat_detector/window": "600000\n",
    "hwlat_detector/mode": "none [round-robin] per-cpu\n",
}

# Lines as the 6.1 kernel prints them ("#%-5u inner/outer(us): %4llu/%-5llu ...").
L1 = ("          <idle>-0       [001] d.... 1234.567890: #1     inner/outer(us):   12/10    "
      "ts:1700000000.123456789 count:1")
L2 = ("        hwlatd-123     [000] dn... 1235.000001: #2     inner/outer(us):    5/30    "
      "ts:1700000001.000000001 count:3 nmi-total:7 nmi-count:2")
LOST = "CPU:1 [LOST 4 EVENTS]"
FOREIGN = "            bash-42      [000] ..... 1236.0: sys_enter: NR 0 (0, 0, 0)"
L3 = ("          <idle>-0       [001] d.... 1237.000000: #5     inner/outer(us): 1500/2     "
      "ts:1700000002.000000000 count:2 nmi-count:1")


def make_tracefs(root, **over):
    d = os.path.join(root, "tracing")
    os.makedirs(os.path.join(d, "hwlat_detector"))
    files = dict(TRACEFS)
    for k, v in over.items():
        files[k.replace("__", "/")] = v
    return fake.fake_dir(d, files, "trace_pipe")


def mode_name(text):
    """The kernel shows "none [round-robin] per-cpu" and takes "round-robin":
    a regular file shows what was written, so compare the names."""
    if "[" in text:
        return text[text.index("[") + 1:text.index("]")] + "\n"
    return text


def snapshot(d):
    out = {}
    for base, _, names in os.walk(d):
        for n in names:
            p = os.path.join(base, n)
            if n != "trace_pipe":
                out[os.path.relpath(p, d)] = fake.read(base, n)
    if "hwlat_detector/mode" in out:
        out["hwlat_detector/mode"] = mode_name(out["hwlat_detector/mode"])
    return out


class FakeKernel(threading.Thread):
    """Plays the tracer: once hwlat-scan opens trace_pipe it records the
    settings, writes lines, waits for current_tracer to be restored."""

    def __init__(self, d, lines, close_early=False):
        super().__init__(daemon=True)
        self.d, self.lines, self.close_early = d, lines, close_early
        self.at_open = None
        self.error = None

    def run(self):
        fd = fake.open_when_read(os.path.join(self.d, "trace_pipe"), 30)
        if fd < 0:
            self.error = "trace_pipe was never opened"
            return
        try:
            self.at_open = snapshot(self.d)
            for line in self.lines:
                os.write(fd, (line + "\n").encode())
            if self.close_early:  # trace_pipe ends under the scan
                return
            if not fake.wait_for(lambda: fake.read(self.d, "current_tracer") == "nop\n", 120):
                self.error = "current_tracer never went back to nop"
        except Exception as e:
            self.error = repr(e)
        finally:
            os.close(fd)


def scan(d, args, export, env=None):
    return fake.run_scan(["--tracefs-dir", d, "--journal-export", export] + args, env=env)


def entries(export, mid):
    try:
        return [e for e in fake.parse_export(export) if e.get("MESSAGE_ID") == mid]
    except FileNotFoundError:
        return []


def hwlat_fields(e):
    return {k: v for k, v in e.items() if k.startswith("HWLAT_") and k != "HWLAT_SCAN_ID"}
