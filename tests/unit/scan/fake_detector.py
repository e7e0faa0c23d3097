# SPDX-License-Identifier: GPL-2.0-or-later
"""The fake hwlat_detector of hwlat-scan's script tests: a directory of
regular files for the settings and a FIFO for `stream`, a thread that
plays the module (FakeModule), a fake /sys/module for its parameters, and
running the scan against them (the export file read back as entries).
Imported by the test scripts of tests/unit/scan; TAP through scan_tap."""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scan_tap import ok, run  # noqa: E402,F401 (the scripts' TAP)

TOP_BUILD = os.getcwd()
SRCDIR = os.environ.get("srcdir", ".")
SCAN = os.path.abspath(os.environ.get("HWLAT_SCAN", "service/hwlat-scan"))
FAKE_MODPROBE = os.path.abspath(os.path.join(SRCDIR, "tests/unit/scan/fake-modprobe"))
CATALOG = os.path.abspath(os.path.join(SRCDIR, "service/hwlat.catalog"))
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
SAMPLE_ID = "18debb1199484fcc965913f03f96d36e"
SUMMARY_ID = "4ffb84af0b5d43dab64f8c6cd40251d6"



ORIGINAL = {
    "threshold": "10\n",
    "width": "500000\n",
    "window": "1000000\n",
    "mode": "none [round-robin] per-cpu stop-machine\n",
    "cpus": "0-1\n",
    "enable": "0\n",
    "dropped": "0\n",
    "floor": "45\n",
    "clock": "tsc\n",
    "count": "0\n",
    "max": "0\n",
    "smi": "MSR_SMI_COUNT\n",
    # What the module sampled (kept after enable=0).
    "sampled": "0 450123456\n1 449876543\n",
    # Windows it could not sample: none.
    "skipped": "",
}

# The machine the scans of scan_lines() see (--platform-root): bare metal
# with the TSC as its clocksource, or a guest ("hypervisor" in its flags),
# so that what they print does not depend on the machine running the tests.
PLATFORMS = {
    "bare": "fpu tsc constant_tsc nonstop_tsc",
    "guest": "fpu tsc constant_tsc nonstop_tsc hypervisor",
}


def fake_platform(d, kind="bare", clocksource="tsc"):
    """A platform root in d: /proc/cpuinfo and the clocksource files."""
    cs = os.path.join(d, "sys/devices/system/clocksource/clocksource0")
    os.makedirs(cs)
    os.makedirs(os.path.join(d, "proc"))
    with open(os.path.join(d, "proc/cpuinfo"), "w") as f:
        f.write("processor\t: 0\nmodel name\t: Fake CPU\nflags\t\t: "
                f"{PLATFORMS[kind]}\n")
    with open(os.path.join(cs, "current_clocksource"), "w") as f:
        f.write(clocksource + "\n")
    with open(os.path.join(cs, "available_clocksource"), "w") as f:
        f.write("tsc hpet acpi_pm\n")
    return d


def fake_dir(d, files, fifo):
    """d with a regular file for each of files (name: text; None: no such
    file) and a FIFO named fifo, playing a kernel directory. Returns d."""
    for name, text in files.items():
        if text is None:
            continue
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    os.mkfifo(os.path.join(d, fifo))
    return d


def make_fake(root, **overrides):
    d = os.path.join(root, "hwlat_detector")
    os.mkdir(d)
    return fake_dir(d, {**ORIGINAL, **overrides}, "stream")


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return f.read()


def snapshot(d):
    return {n: read(d, n) for n in sorted(os.listdir(d)) if n != "stream"}


def wait_for(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def open_when_read(path, limit=20.0, alive=lambda: True):
    """The write end of the FIFO path once a reader opened it (ENXIO until
    then), or -1 after limit seconds or once alive() is false."""
    end = time.monotonic() + limit
    while time.monotonic() < end and alive():
        try:
            return os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.01)
    return -1


def term_while_held(p, fifo, text):
    """A scan p held in open()/read() of fifo (a file it reads before it
    samples, made a FIFO), where main() has blocked SIGTERM for its
    signalfd already: sends SIGTERM, then lets it read text, so that the
    signal is pending when sampling starts. Returns (held, out, err)."""
    fd = open_when_read(fifo, alive=lambda: p.poll() is None)
    if fd >= 0:
        os.kill(p.pid, signal.SIGTERM)
        os.write(fd, text.encode())
        os.close(fd)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return fd >= 0, out, err


def enabled(d, value):
    return lambda: read(d, "enable").strip() == value


class FakeModule(threading.Thread):
    """Plays the module: after enable=1 it runs `script(w)`, then waits for
    enable=0, writes `drain` and closes the stream (EOF)."""

    def __init__(self, d, script, drain="", close_early=False):
        super().__init__(daemon=True)
        self.d, self.script, self.drain = d, script, drain
        self.close_early = close_early
        self.settings_while_enabled = None
        self.error = None

    def run(self):
        try:
            with open(os.path.join(self.d, "stream"), "w") as w:
                if not wait_for(enabled(self.d, "1"), 20):
                    self.error = "enable never became 1"
                    return
                self.settings_while_enabled = snapshot(self.d)
                self.script(w)
                if self.close_early:
                    return
                if not wait_for(enabled(self.d, "0"), 120):
                    self.error = "enable never went back to 0"
                    return
                w.write(self.drain)
                w.flush()
        except Exception as e:  # reported by the test that started us
            self.error = repr(e)


class MonitorModule(threading.Thread):
    """Plays the module for a reader that opens `stream` for each read:
    while enable is 1 it holds the FIFO open read-write, so that lines
    written wait in it; on enable=0 it lets go (the reader's EOF)."""

    def __init__(self, d):
        super().__init__(daemon=True)
        self.d = d
        self.fd = -1
        self.pending = []
        self.lock = threading.Lock()
        self.stop = False
        self.start()

    def write(self, text):
        with self.lock:
            self.pending.append(text)

    def run(self):
        while not self.stop:
            try:
                on = read(self.d, "enable").strip() == "1"
            except OSError:  # the directory is away
                on = False
            with self.lock:
                if on and self.fd < 0:
                    self.fd = os.open(os.path.join(self.d, "stream"), os.O_RDWR)
                if on and self.pending:
                    os.write(self.fd, "".join(self.pending).encode())
                    self.pending = []
                if not on and self.fd >= 0:
                    os.close(self.fd)
                    self.fd = -1
            time.sleep(0.02)

    def close(self):
        self.stop = True
        self.join(2)
        if self.fd >= 0:
            os.close(self.fd)


def first_cpu():
    """The CPU the fake machine has online: one this process may run on."""
    return min(os.sched_getaffinity(0))


def put_msr(tmp, value):
    """The first CPU's MSR file under tmp/msr, MSR_SMI_COUNT (0x34) = value."""
    cpu_dir = os.path.join(tmp, "msr", str(first_cpu()))
    os.makedirs(cpu_dir, exist_ok=True)
    with open(os.path.join(cpu_dir, "msr"), "wb") as f:
        f.write(b"\0" * 0x34 + struct.pack("<Q", value))


def monitor_machine(tmp, conf_text, smi=0):
    """A machine for hwlat-scan --monitor under tmp: the fake detector, one
    online CPU with its SMI count, the config conf_text and a run directory;
    returns (detector dir, MonitorModule, config path)."""
    d = make_fake(tmp)
    cpu_dir = os.path.join(tmp, "root/sys/devices/system/cpu")
    os.makedirs(cpu_dir)
    with open(os.path.join(cpu_dir, "online"), "w") as f:
        f.write(f"{first_cpu()}\n")
    put_msr(tmp, smi)
    conf = os.path.join(tmp, "monitor.conf")
    with open(conf, "w") as f:
        f.write(conf_text)
    os.makedirs(os.path.join(tmp, "run"))
    return d, MonitorModule(d), conf


def monitor_env(tmp):
    """A monitor's environment: its lock and state under tmp/run."""
    return scan_env({"HWLAT_RUN_DIR": os.path.join(tmp, "run")})


def monitor_argv(scan, tmp, d, conf, export="exp"):
    """The command line of a monitor on the machine monitor_machine made,
    its journal entries exported to tmp/export."""
    return [scan, "--config", conf, "--monitor", "--detector-dir", d,
            "--journal-export", os.path.join(tmp, export), "--msr-dir", os.path.join(tmp, "msr"),
            "--platform-root", os.path.join(tmp, "root")]


def parse_export(path):
    """Entries of a journal export file (text fields only: ours)."""
    entries, cur = [], {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if cur:
                    entries.append(cur)
                cur = {}
                continue
            k, _, v = line.partition("=")
            cur[k] = v
    if cur:
        entries.append(cur)
    return entries


def export_has_seq(path, seq):
    try:
        return any(e.get("HWLAT_SEQ") == str(seq) for e in parse_export(path))
    except FileNotFoundError:
        return False


def to_journal(export, outdir):
    """export file -> real journal file -> list of JSON entries."""
    os.makedirs(outdir, exist_ok=True)
    jfile = os.path.join(outdir, "scan.journal")
    r = subprocess.run([JOURNAL_REMOTE, "-o", jfile, export],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    r = subprocess.run(["journalctl", "--file", jfile, "-o", "json", "--no-pager"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()], jfile


# What --check-config prints for the monitor's keys when none is set.
MONITOR_DEFAULTS = (
    "# monitor_interval: from the default\nmonitor_interval = 10m\n"
    "# monitor_threshold: from the default\nmonitor_threshold = 10us\n"
    "# monitor_width: from the default\nmonitor_width = 9ms\n"
    "# monitor_window: from the default\nmonitor_window = 1s\n"
    "# monitor_mode: from the default\nmonitor_mode = round-robin\n"
    "# monitor_cpus: not set, the detector's CPUs are kept (the housekeeping CPUs)\n"
    "# monitor_sample_budget: from the default\nmonitor_sample_budget = 100\n"
    "# monitor_openmetrics_file: from the default\n"
    "monitor_openmetrics_file = /var/lib/prometheus/node-exporter/hwlat-monitor.prom\n")

# An installed /etc/hwlat/hwlat-scan.conf must not change the tests: an
# empty config comes first (a later --config wins).
NO_CONFIG = ["--config", "/dev/null"]


def scan_env(env=None):
    """The environment of a scan: ours without systemd's INVOCATION_ID, plus env."""
    e = dict(os.environ)
    e.pop("INVOCATION_ID", None)
    e.update(env or {})
    return e


def run_scan(args, env=None, timeout=60):
    return subprocess.run([SCAN] + NO_CONFIG + args, capture_output=True, text=True,
                          env=scan_env(env), timeout=timeout)


def start_scan(args):
    """Starts a scan in the background, its stdout and stderr piped."""
    return subprocess.Popen([SCAN] + NO_CONFIG + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=scan_env())


def line(seq, cpu, sec, nsec, inner, outer, count, nmi, nmi_ns, smi):
    return f"{seq} {cpu} {sec}.{nsec:09d} {inner} {outer} {count} {nmi} {nmi_ns} {smi}\n"


class FakeJournald(threading.Thread):
    """A datagram socket speaking journald's native protocol, for scans run
    in a mount namespace where it is /run/systemd/journal/socket (this host
    may have no journald). entries: the entries received, as dicts."""

    def __init__(self, tmp):
        super().__init__(daemon=True)
        self.path = os.path.join(tmp, "journal.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.entries = []
        self.stop = False
        self.start()

    def run(self):
        while not self.stop:
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            entry, i = {}, 0
            while i < len(data):
                nl = data.index(b"\n", i)
                field = data[i:nl]
                if b"=" in field:
                    k, _, v = field.partition(b"=")
                    i = nl + 1
                else:  # NAME\n<le64 length><value>\n
                    k, n = field, int.from_bytes(data[nl + 1:nl + 9], "little")
                    v = data[nl + 9:nl + 9 + n]
                    i = nl + 9 + n + 1
                entry[k.decode()] = v.decode(errors="replace")
            self.entries.append(entry)

    def close(self):
        self.stop = True
        self.join(2)
        self.sock.close()

    def wrap(self, cmd):
        """cmd, run where this socket is the journal's."""
        return journal_namespace(cmd, self.path)


def journal_namespace(cmd, socket_path=None):
    """cmd in a private mount namespace whose /run/systemd holds only a
    journal socket at socket_path (bind-mounted), or nothing."""
    script = ("mount --make-rprivate / && mount -t tmpfs tmpfs /run/systemd && "
              "mkdir /run/systemd/journal && "
              'if [ -n "$1" ]; then touch /run/systemd/journal/socket && '
              'mount --bind "$1" /run/systemd/journal/socket; fi && shift && exec "$@"')
    return ["unshare", "-m", "sh", "-c", script, "sh", socket_path or ""] + cmd


# Five windows: latencies 10, 20, 30 us (inner), 25, 5 us (outer); one SMI
# window (2 SMIs on CPU 1), one NMI window, so 3 unexplained; seq 5 lost.
FIVE_WINDOWS = [
    line(1, 0, 1700000000, 0, 10000, 0, 1, 0, 0, 0),
    line(2, 1, 1700000001, 0, 20000, 0, 1, 0, 0, 2),
    line(3, 0, 1700000002, 0, 30000, 1000, 1, 1, 30000, 0),
    line(4, 1, 1700000003, 0, 1000, 25000, 1, 0, 0, 0),
    line(6, 0, 1700000005, 0, 5000, 0, 1, 0, 0, 0),
]


def scan_lines(tmp, name, args, config=None, lines=FIVE_WINDOWS, platform="bare",
               clocksource="tsc", **files):
    """One 1 s scan of lines on a new fake detector in tmp/name (its files
    as ORIGINAL, dropped 1, then files) on a fake platform (fake_platform()),
    with config as its config file when given; returns (result, detector
    dir, export file)."""
    sub = os.path.join(tmp, name)
    os.mkdir(sub)
    d = make_fake(sub, **{"dropped": "1\n", **files})
    export = os.path.join(sub, "export")
    extra = ["--platform-root", fake_platform(os.path.join(sub, "platform"), platform,
                                              clocksource)]
    if config is not None:
        conf = os.path.join(sub, "scan.conf")
        with open(conf, "w") as f:
            f.write(config)
        extra += ["--config", conf]

    def script(w):
        for ln in lines:
            w.write(ln)
        w.flush()

    mod = FakeModule(d, script)
    mod.start()
    r = run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"]
                 + extra + args)
    mod.join(5)
    return r, d, export


# --- the module's parameters (/sys/module/hwlat_detector/parameters) -------

SETTINGS = ("enable", "threshold", "width", "window", "mode", "cpus")


def fake_sys_module(tmp, **params):
    """<tmp>/sys-module/hwlat_detector/parameters/<name> for each param."""
    root = os.path.join(tmp, "sys-module")
    pdir = os.path.join(root, "hwlat_detector", "parameters")
    os.makedirs(pdir)
    for name, text in params.items():
        if text is None:
            continue
        with open(os.path.join(pdir, name), "w") as f:
            f.write(text)
    return root


def summaries(export):
    try:
        return [e for e in parse_export(export) if e.get("MESSAGE_ID") == SUMMARY_ID]
    except FileNotFoundError:
        return []


PARAMS = {"enabled": "1\n", "threshold": "20\n", "width": "100000\n", "window": "200000\n",
          "mode": "round-robin\n", "cpus": "0-1\n", "debug": "0\n", "allow_high_duty": "N\n"}


def locked_wrapper():
    """What makes a 0000 file refuse us: nothing when not root; as root, a
    user namespace without mappings (no capability over our own files)."""
    if os.geteuid() != 0:
        return []
    r = subprocess.run(["unshare", "-U", "true"], capture_output=True)
    return ["unshare", "-U"] if r.returncode == 0 else None


# `sampled` before and after: since the load, the scan's part is the growth.
