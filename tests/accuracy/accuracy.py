#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Accuracy suite, host side: boots QEMU (TCG) guests running acc-guest with
hwlat_detector.ko loaded, injects faults with known ground truth from the
host, and judges what the detector reported (analysis.py). Prints TAP.

Tests:
  selfcheck       a user-space spinner in the guest (no module) sees the
                  injected stalls (12 of them): proves the harness itself
  stalls-MODE     SIGSTOP/SIGCONT of the QEMU process for 20-300 ms, >= 20
                  times, one per 1.5-2.5 s: precision, recall (against the
                  stalls that began inside a width traced in the guest),
                  magnitude and attribution of the detector in round-robin,
                  per-cpu and stop-machine modes
  nmi             QMP inject-nmi while sampling (per-cpu): nmi_count lands in
                  the windows of the CPUs that took them (/proc/interrupts),
                  every NMI that arrived inside a traced width of the CPU's
                  sampler is counted, none that arrived in a sleep gap
  smi             SeaBIOS (SMIs on the raising CPU only), q35,smm=on,
                  Skylake-Client: SMIs raised on CPU 0 while round-robin
                  samples; no sampler takes one during its width, so every
                  window counts 0 (the contract of docs/interfaces.md)
  smi-ovmf        OVMF (SMI broadcast): N SMIs raised inside the sampler's
                  widths from elsewhere in round-robin, per-cpu and
                  stop-machine are counted exactly N (sum; max-per-cpu),
                  each in its width's window, with smi_ns; no IPIs to CPU 0
                  with cpus=1

Usage: accuracy.py --kernel VMLINUZ --ko HWLAT_KO --guest ACC_GUEST
                   [--msr-ko MSR_KO] [--out DIR] [--only T[,T...]] [--seed N]
                   [--stalls N] [--nmis N] [--smis N] [--smi-threshold-us US]
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import analysis as a
from analysis import MS, SEC

THRESHOLD_NS, WIDTH_NS, WINDOW_NS = 20 * MS, 900 * MS, 1000 * MS
NMI_GUARD_NS = 5 * MS   # an NMI this close to a traced width edge is "edge"
SMI_THRESHOLD_US = 20   # OVMF runs: below an SMI's cost under TCG (measured: README)
IPI_SECONDS = 6         # each half of the IPI check (detector off, sampling)
BOOT_TIMEOUT = 120      # s until the guest starts sampling
# The harness self-check judges the injector, not the detector, with loose
# bounds (recall >= 0.5, error <= 50 ms): half the detector runs' stalls
# are plenty, and save the full run about 25 s.
SELFCHECK_STALLS = 12
MODES = ("round-robin", "per-cpu", "stop-machine")
ALWAYS_RT = False       # --realtime: the injector stays above QEMU throughout


def now():
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


# ---------------------------------------------------------------- initramfs

def cpio_newc(entries):
    """An uncompressed newc cpio archive. entries: [(path, mode, data)],
    directories with data None."""
    out = bytearray()
    ino = 1

    def put(name, mode, data):
        nonlocal ino
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08X}" for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
        out.extend(hdr.encode() + name_b)
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))
        ino += 1

    for path, mode, data in entries:
        put(path, mode, b"" if data is None else data)
    put("TRAILER!!!", 0, b"")
    return bytes(out)


def make_initramfs(path, ko, guest_bin, commands, msr_ko=None):
    """/init mounts the pseudo file systems, loads the modules (the
    detector with allow_high_duty=1: the suite samples 900 ms of every
    second in per-cpu and stop-machine modes too, beyond the production
    per-mode bounds of docs/design.md, "Safety bounds"; a module without
    the parameter ignores it), runs each of `commands` (acc-guest
    arguments) while the previous ones succeed, with the output on ttyS1
    (the data channel), dumps dmesg there, and powers off."""
    if isinstance(commands, str):
        commands = [commands]
    run = "\n".join(f"\t[ $rc -ne 0 ] || /acc-guest {c} || rc=$?" for c in commands)
    init = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
exec >/dev/ttyS1 2>&1
echo "HWLAT-BOOT $(uname -r)"
rc=0
{'insmod /msr.ko || echo "HWLAT-NOTE msr.ko did not load"' if msr_ko else ':'}
if insmod /hwlat_detector.ko allow_high_duty=1; then
{run}
else
	echo "HWLAT-ERROR insmod /hwlat_detector.ko failed"
	rc=125
fi
echo "HWLAT-EXIT $rc"
echo HWLAT-DMESG-BEGIN
dmesg
echo HWLAT-DMESG-END
sync
poweroff -f
"""
    files = [("bin", 0o40755, None), ("proc", 0o40755, None), ("sys", 0o40755, None),
             ("dev", 0o40755, None), ("tmp", 0o40755, None),
             ("init", 0o100755, init.encode())]
    with open("/bin/busybox", "rb") as f:
        files.append(("bin/busybox", 0o100755, f.read()))
    with open(guest_bin, "rb") as f:
        files.append(("acc-guest", 0o100755, f.read()))
    if ko:
        with open(ko, "rb") as f:
            files.append(("hwlat_detector.ko", 0o100644, f.read()))
    if msr_ko:
        with open(msr_ko, "rb") as f:
            data = f.read()
        if msr_ko.endswith(".xz"):
            import lzma
            data = lzma.decompress(data)
        elif msr_ko.endswith(".zst"):
            raise SystemExit(f"{msr_ko}: zstd-compressed modules are not supported "
                             f"(python has no zstd); give an uncompressed msr.ko")
        files.append(("msr.ko", 0o100644, data))
    if not ko:           # the self-check runs without the module
        init = init.replace("if insmod /hwlat_detector.ko allow_high_duty=1; then", "if true; then")
        files = [f if f[0] != "init" else ("init", 0o100755, init.encode()) for f in files]
    with open(path, "wb") as f:
        f.write(cpio_newc(files))


# -------------------------------------------------------------------- guest

OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"


def ovmf_args(tmp):
    """QEMU arguments of a guest with a server's SMM firmware: q35 with SMM,
    OVMF's Secure Boot build (its SMM driver stack) read-only and a private
    copy of its variable store as the two flash chips. OVMF negotiates SMI
    broadcast with QEMU, so an SMI enters SMM on every CPU as on real Intel
    servers (SeaBIOS: only on the CPU that raised it)."""
    for f in (OVMF_CODE, OVMF_VARS):
        if not os.path.isfile(f):
            raise RuntimeError(f"{f} is missing (Debian package ovmf)")
    vars_copy = os.path.join(tmp, "OVMF_VARS.fd")
    shutil.copy(OVMF_VARS, vars_copy)
    return ["-machine", "q35,smm=on", "-cpu", "Skylake-Client",
            "-global", "driver=cfi.pflash01,property=secure,value=on",
            "-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={OVMF_CODE}",
            "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]


def qemu_priority(nice, realtime):
    """In the QEMU child before exec: the given niceness (--realtime
    raises the threads once the guest has booted, see Guest.make_realtime);
    never the injector's SCHED_FIFO."""
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    if nice:
        os.nice(nice)


class Guest:
    """One QEMU guest; follows its data channel (ttyS1) line by line and
    remembers when each line arrived on the host."""

    def __init__(self, name, outdir, kernel, initrd, smm=False, nice=0, realtime=False,
                 firmware="seabios", smp=2, append=""):
        self.name = name
        self.outdir = outdir
        # The serial ports write to tmpfs: a file on a busy disk can block
        # QEMU's write() (under its big lock) and stall the guest for tens of
        # ms. save_logs() copies them to outdir.
        self.tmp = tempfile.mkdtemp(prefix=f"hwlat-acc-{name}.", dir="/dev/shm")
        self.console = os.path.join(self.tmp, f"{name}.console.log")
        self.data = os.path.join(self.tmp, f"{name}.data.log")
        self.qmp_path = os.path.join(self.tmp, f"{name}.qmp")
        open(self.data, "w").close()
        cmd = ["qemu-system-x86_64", "-name", f"{name},debug-threads=on",
               "-accel", "tcg", "-smp", str(smp), "-m", "512",
               "-nodefaults", "-display", "none", "-no-reboot",
               "-serial", f"file:{self.console}", "-serial", f"file:{self.data}",
               "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
               "-kernel", kernel, "-initrd", initrd,
               # loglevel=5 and softlockup_all_cpu_backtrace: a guest that
               # hangs (one CPU stuck with interrupts off, seen three times
               # on 2026-12-05, cause unknown) prints every CPU's stack on
               # the console, which the failure shows.
               "-append", "console=ttyS0 panic=-1 rdinit=/init loglevel=5 no_timer_check "
               "softlockup_all_cpu_backtrace=1" + (" " + append if append else "")]
        if firmware == "ovmf":
            cmd += ovmf_args(self.tmp)
        elif smm:
            cmd += ["-machine", "q35,smm=on", "-cpu", "Skylake-Client"]
        else:
            cmd += ["-machine", "q35"]
        self.cmd = cmd
        self.stderr = open(os.path.join(outdir, f"{name}.qemu.log"), "w")
        self.realtime = realtime
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.stderr,
                                     stderr=subprocess.STDOUT,
                                     preexec_fn=lambda: qemu_priority(nice, realtime))
        self.fh = open(self.data, "rb")
        self.buf = b""
        self.lines = []          # (host arrival ns, text)

    @property
    def pid(self):
        return self.proc.pid

    def poll_lines(self):
        chunk = self.fh.read()
        t = now()
        if chunk:
            self.buf += chunk
            *full, self.buf = self.buf.split(b"\n")
            for raw in full:
                self.lines.append((t, raw.decode("utf-8", "replace").rstrip("\r")))
        return self.proc.poll() is None

    def wait_for(self, prefix, timeout, interval=0.001, monitor=None, after=0):
        """Arrival time of the first line starting with prefix (from line
        index after on); raises RuntimeError if the guest dies, fails or
        times out first."""
        deadline = time.monotonic() + timeout
        seen = after
        while True:
            alive = self.poll_lines()
            if monitor:
                monitor.poll()
            for t, text in self.lines[seen:]:
                if text.startswith(prefix):
                    return t
                if text.startswith(("HWLAT-ERROR", "HWLAT-EXIT")):
                    raise RuntimeError(f"guest said {text!r} before {prefix!r}")
            seen = len(self.lines)
            if not alive:
                raise RuntimeError(f"QEMU exited (status {self.proc.returncode}) before the "
                                   f"guest printed {prefix!r}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {prefix!r} from the guest within {timeout} s")
            time.sleep(interval)

    def finish(self, timeout, monitor=None):
        """Waits for QEMU to exit (the guest powers off), polling monitor
        until the guest stops sampling; kills QEMU after timeout. Returns
        all data lines."""
        try:
            deadline = time.monotonic() + timeout
            while monitor and self.poll_lines():
                monitor.poll()
                if any(t.startswith(("HWLAT-MARK done", "HWLAT-EXIT")) for _, t in self.lines[-5:]):
                    break
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(self.cmd, timeout)
                time.sleep(0.002)
            self.proc.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGCONT)
            where = self.where()
            self.proc.kill()
            self.proc.wait()
            self.poll_lines()
            raise RuntimeError(f"guest did not power off within {timeout} s (killed); vCPU "
                               f"state then: {where}")
        finally:
            self.poll_lines()
            self.stderr.close()
        return [text for _, text in self.lines]

    def make_realtime(self):
        """--realtime, once the guest runs: vCPU threads SCHED_FIFO 1, every
        other QEMU thread FIFO 2 (the main loop must preempt spinning vCPUs,
        or the guest's I/O starves), the injector FIFO 10 above all."""
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                prio = 1 if "/TCG" in name else 2
                os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(prio))
            except (OSError, ValueError):
                pass

    def where(self):
        """Where the vCPUs are (RIP, SMM or not, halted), through QMP, for a
        guest that hangs."""
        try:
            q = Qmp(self.qmp_path, timeout=5)
            out = q.execute_args("human-monitor-command",
                                 {"command-line": "info registers -a"})
            q.close()
        except (RuntimeError, OSError, ValueError) as e:
            return f"(QMP failed: {e})"
        cpus = []
        for block in out.split("CPU#")[1:]:
            n = block.split("\n", 1)[0].strip()
            rip = re.search(r"RIP=([0-9a-f]+)", block)
            smm = re.search(r"SMM=(\d)", block)
            hlt = re.search(r"HLT=(\d)", block)
            cpus.append(f"cpu{n} RIP={rip.group(1) if rip else '?'} "
                        f"SMM={smm.group(1) if smm else '?'} HLT={hlt.group(1) if hlt else '?'}")
        return "; ".join(cpus) or out[:300]

    def wind_down(self):
        """After a failure: resumes a stopped guest, lets it dump dmesg and
        power off (30 s at most), then kills what is left."""
        try:
            os.kill(self.pid, signal.SIGCONT)
            self.finish(timeout=30)
        except (RuntimeError, OSError):
            pass
        self.kill()

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            self.proc.kill()
            self.proc.wait()
        self.save_logs()

    def save_logs(self):
        """Moves the serial logs from tmpfs to outdir (once)."""
        if not os.path.isdir(self.tmp):
            return
        for p in (self.console, self.data):
            if os.path.exists(p):
                shutil.copy(p, self.outdir)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.console = os.path.join(self.outdir, os.path.basename(self.console))
        self.data = os.path.join(self.outdir, os.path.basename(self.data))

    def tail(self, n=30):
        out = []
        for label, path in (("console", self.console), ("data", self.data)):
            try:
                with open(path, "rb") as f:
                    lines = f.read().decode("utf-8", "replace").splitlines()
            except OSError as e:
                lines = [f"(cannot read {path}: {e})"]
            first = next((i for i, x in enumerate(lines) if "BUG: soft lockup" in x), None)
            if label == "console" and first is not None:
                # A hung guest: its first report, with every CPU's stack.
                out.append(f"the first soft lockup report in the {label} log {path}:")
                out += ["  " + x.rstrip("\r") for x in lines[first:first + 150]]
            out.append(f"last {n} lines of the {label} log {path}:")
            out += ["  " + x.rstrip("\r") for x in lines[-n:]]
        return out


class Qmp:
    """Minimal QMP client over the guest's unix socket."""

    def __init__(self, path, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cannot connect to QMP socket {path}") from None
                time.sleep(0.05)
        self.sock.settimeout(10)
        self.rfile = self.sock.makefile("rb")
        greeting = self._read()
        if "QMP" not in greeting:
            raise RuntimeError(f"unexpected QMP greeting {greeting}")
        self.execute("qmp_capabilities")

    def _read(self):
        line = self.rfile.readline()
        if not line:
            raise RuntimeError("QMP socket closed")
        return json.loads(line)

    def execute(self, cmd):
        return self.execute_args(cmd, None)

    def execute_args(self, cmd, arguments):
        msg = {"execute": cmd}
        if arguments is not None:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            msg = self._read()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise RuntimeError(f"QMP {cmd}: {msg['error']}")
            # events ({"event": ...}) are skipped

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- injection

class StealProbe:
    """Runs steal-probe (tests/accuracy/steal-probe.c) beside a guest: one
    thread per host CPU at SCHED_FIFO 50 wakes every 1 ms and reports each
    wake-up 0.2 ms late or more. The project machine is itself a KVM guest
    whose hypervisor takes 2-10 ms from a CPU every few seconds: a vCPU
    thread on that CPU cannot run, and no run-queue wait shows it. (A late
    wake-up also counts the host's interrupts and its fair server, which
    preempt SCHED_FIFO threads; a vCPU thread loses those too.) Measured
    against a spinning thread's own lost CPU time (wall - CLOCK_THREAD_CPUTIME
    - run-queue wait), the probe saw all 28 losses of 1.3-10 ms in 40 s,
    each inside a reported span at most 1 ms longer; it costs each CPU
    about 1.7 % (measurements/host-steal-2026-12-05/probe-vs-spinner.md)."""

    PERIOD_US = 1000
    MIN_LATE_US = 200

    def __init__(self, path, out_path):
        self.out = open(out_path, "w+")
        self.proc = subprocess.Popen([path, str(self.PERIOD_US), str(self.MIN_LATE_US)],
                                     stdout=self.out, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while True:
            self.out.seek(0)
            if self.out.readline().startswith("steal-probe ready"):
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                err = self.proc.communicate()[1].decode(errors="replace").strip()
                raise RuntimeError(f"steal-probe did not start (exit {self.proc.returncode}): "
                                   f"{err or 'no message'}")
            time.sleep(0.01)

    def stop(self):
        """Stops the probe; returns (its HostDelays, (wakes, late wakes)).
        Raises GuestError when its output is incomplete."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            err = self.proc.communicate(timeout=5)[1].decode(errors="replace").strip()
        except subprocess.TimeoutExpired:
            self.proc.kill()
            err = "did not stop on SIGTERM within 5 s"
        self.out.seek(0)
        lines = self.out.read().splitlines()
        self.out.close()
        if self.proc.returncode not in (0, -signal.SIGKILL) or err:
            raise a.GuestError(f"steal-probe exited {self.proc.returncode}: {err}")
        return a.parse_steal_probe(lines)

    def kill(self):
        """On the way out of a failed test: no judging, no probe left."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()


class HostMonitor:
    """Polls the host run-queue wait of QEMU's vCPU threads
    (/proc/PID/task/TID/schedstat, field 2) and records every increase of at
    least 2 ms: measured hypervisor latency that nobody injected. QEMU's
    other threads (its main loop holds the lock a vCPU needs for I/O) are
    watched too, for the failure notes only: their waits explain nothing by
    themselves, but they tell where to look when a window is unexplained.
    With a steal-probe binary, it also records the time the host itself
    lost (StealProbe) from now to close(); /proc/stat's steal column over
    the same time is kept as a cross-check (it counts 10 ms ticks, late)."""

    def __init__(self, pid, probe=None, probe_out=None):
        self.pid = pid
        self.fds = {}
        self.last = {}
        self.delays = []
        self.other_delays = []
        self.others = {}
        tids = os.listdir(f"/proc/{pid}/task")
        names = {}
        for tid in tids:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names[tid] = f.read().strip()
        vcpus = [t for t in tids if "TCG" in names[t]] or tids
        self.names = sorted(names[t] for t in vcpus)
        for tid in vcpus:
            self.fds[tid] = (names[tid], os.open(f"/proc/{pid}/task/{tid}/schedstat",
                                                  os.O_RDONLY))
        for tid in set(tids) - set(vcpus):
            self.others[tid] = (names[tid], os.open(f"/proc/{pid}/task/{tid}/schedstat",
                                                     os.O_RDONLY))
        self.stat_steal_ns = -host_steal_ns()
        self.probe_counts = None
        self.poll()
        # Last: nothing after it may fail and leave the probe running.
        self.probe = StealProbe(probe, probe_out or f"/tmp/steal-probe.{pid}") \
            if probe else None

    def poll(self, vcpu_min=2 * MS):
        """Records each thread's run-queue wait since its last poll when it
        is at least 2 ms; for the vCPU threads at least vcpu_min (0 at a
        stall's edges, where every microsecond a vCPU waits is part of the
        gap the guest sees)."""
        t = now()
        for threads, delays, least in ((self.fds, self.delays, vcpu_min),
                                       (self.others, self.other_delays, 2 * MS)):
            for tid, (name, fd) in threads.items():
                try:
                    os.lseek(fd, 0, os.SEEK_SET)
                    ran, wait = (int(x) for x in os.read(fd, 128).split()[:2])
                except (OSError, ValueError):
                    continue
                if tid in self.last:
                    pt, pw, _ = self.last[tid]
                    if wait - pw >= max(least, 1):
                        delays.append(a.HostDelay(pt, t, wait - pw, name))
                self.last[tid] = (t, wait, ran)

    def wait_stopped(self, timeout=0.2):
        """After SIGSTOP: waits until every vCPU thread is stopped (state T;
        a thread waiting on the run queue must run once to stop), then polls,
        so that the wait each was in when stopped is recorded now."""
        deadline = time.monotonic() + timeout
        pending = set(self.fds)
        while pending and time.monotonic() < deadline:
            for tid in list(pending):
                try:
                    with open(f"/proc/{self.pid}/task/{tid}/stat") as f:
                        state = f.read().rsplit(")", 1)[1].split()[0]
                except (OSError, IndexError):
                    state = "T"
                if state in ("T", "t"):
                    pending.discard(tid)
            if pending:
                time.sleep(0.0002)
        self.poll(vcpu_min=0)

    def wait_running(self, timeout=0.03):
        """After SIGCONT: polls every 0.3 ms until every vCPU thread has run
        again (its run time grew), so that each one's wait for a host CPU
        after the stop, however short, is recorded as one HostDelay ending
        right after it ran. Polling sooner would steal the CPU it waits for;
        later would merge that wait with the next ones."""
        ran_at_stop = {tid: self.last[tid][2] for tid in self.fds if tid in self.last}
        deadline = time.monotonic() + timeout
        while ran_at_stop and time.monotonic() < deadline:
            time.sleep(0.0003)
            for tid in list(ran_at_stop):
                name, fd = self.fds[tid]
                try:
                    os.lseek(fd, 0, os.SEEK_SET)
                    ran, wait = (int(x) for x in os.read(fd, 128).split()[:2])
                except (OSError, ValueError):
                    del ran_at_stop[tid]
                    continue
                if ran == ran_at_stop[tid]:
                    continue
                pt, pw, _ = self.last[tid]
                t = now()
                if wait > pw:
                    self.delays.append(a.HostDelay(pt, t, wait - pw, name))
                self.last[tid] = (t, wait, ran)
                del ran_at_stop[tid]

    def close(self):
        """Stops watching; adds the probe's losses to .delays. Raises
        GuestError when the probe's output is incomplete."""
        for _, fd in list(self.fds.values()) + list(self.others.values()):
            os.close(fd)
        self.fds = {}
        self.others = {}
        self.stat_steal_ns += host_steal_ns()
        if self.probe:
            probe, self.probe = self.probe, None
            lost, self.probe_counts = probe.stop()
            self.delays = sorted(self.delays + lost, key=lambda d: d.end)

    def discard(self):
        """Stops the probe, if still running, without judging its output."""
        if self.probe:
            self.probe.kill()
            self.probe = None

    def summary(self):
        steal = [d.wait for d in self.delays if a.is_host_loss(d)]
        waits = [d for d in self.delays if not a.is_host_loss(d)]
        big = [d.wait for d in waits if d.wait > THRESHOLD_NS]
        some = [d.wait for d in waits if d.wait >= 2 * MS]
        worst = max((d.wait for d in waits), default=0)
        text = (f"host run-queue waits of the vCPU threads ({', '.join(self.names)}): "
                f"{len(some)} >= 2 ms, {len(big)} > 20 ms, longest {worst / MS:.1f} ms; ")
        if self.probe_counts:
            spans = sum(1 for w in steal if w >= 2 * MS)
            text += (f"host CPUs lost to anything above SCHED_FIFO 50 (steal-probe, "
                     f"{self.probe_counts[0]} wake-ups): {spans} losses in spans >= 2 ms, "
                     f"longest span {max(steal, default=0) / MS:.1f} ms; ")
        else:
            text += "no steal-probe; "
        text += f"/proc/stat steal meanwhile {self.stat_steal_ns / MS:.0f} ms"
        if self.other_delays:
            longest = max(self.other_delays, key=lambda d: d.wait)
            text += (f"; QEMU's other threads (not counted as explanations): "
                     f"{len(self.other_delays)} waits >= 2 ms, longest {longest.wait / MS:.1f} ms "
                     f"({longest.thread}, host {longest.end / SEC:.3f})")
        return text


def host_steal_ns():
    """The host's steal time so far, all CPUs (/proc/stat, 10 ms ticks)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) * (SEC // os.sysconf("SC_CLK_TCK"))


def precise_sleep_until(t_mono, monitor=None, spin=True):
    """Sleeps (polling monitor every 2 ms) and spins only the last 0.3 ms:
    a spinning injector at SCHED_FIFO takes a host CPU from a vCPU.
    spin=False sleeps to within 0.05 ms (and spins only that) and wakes up
    to about 0.1 ms late."""
    tail = 250_000 if spin else 0
    while True:
        left = t_mono - time.monotonic_ns()
        if left <= 0:
            return
        if left > tail + 50_000:
            if monitor and left > 3 * MS:
                monitor.poll()
            time.sleep(min(left - tail, 2 * MS if monitor else left) / SEC)


def plan(n, rnd, lo=1500, hi=2500):
    """Start times (s after the first) of n events spaced lo-hi ms apart."""
    t, out = 0.0, []
    for _ in range(n):
        out.append(t)
        t += rnd.randint(lo, hi) / 1000
    return out


def inject_stalls(pid, starts, durations_ms, t0_mono, monitor):
    """SIGSTOP/SIGCONT pid at t0 + starts[i] for durations_ms[i]; returns
    the Stalls in host realtime (midpoints of the kill() calls)."""
    stalls = []
    for s, d in zip(starts, durations_ms):
        precise_sleep_until(t0_mono + int(s * SEC), monitor, spin=False)
        a0 = now()
        os.kill(pid, signal.SIGSTOP)
        a1 = now()
        m1 = time.monotonic_ns()
        monitor.wait_stopped()
        precise_sleep_until(m1 + d * MS - (a1 - a0) // 2)
        b0 = now()
        os.kill(pid, signal.SIGCONT)
        b1 = now()
        stalls.append(a.Stall((a0 + a1) // 2, (b0 + b1) // 2))
        monitor.wait_running()
    return stalls


# -------------------------------------------------------------------- tests

class Realtime:
    """SCHED_FIFO for the injector while it times faults (never while QEMU
    is started: its threads would inherit it and starve the host)."""

    def __enter__(self):
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        except OSError as e:
            print(f"# note: injector stays SCHED_OTHER ({e})", flush=True)
        return self

    def __exit__(self, *exc):
        if not ALWAYS_RT:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


class Suite:
    def __init__(self, args):
        self.args = args
        self.n = args.first - 1
        self.failed = 0
        self.results = {}
        self.rnd = random.Random(args.seed)

    def tap(self, ok, desc, details=()):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {desc}", flush=True)
        for d in details:
            print(f"#   {d}", flush=True)
        if not ok:
            self.failed += 1

    def boot(self, name, command, smm=False, with_module=True, msr=False, firmware="seabios"):
        """An OVMF guest boots with nohz=off: its CPUs tick every 1/HZ s even
        when idle, which acc-guest's SMI gate relies on; and idle=halt
        cpuidle.off=1: an idle CPU halts instead of polling (cpuidle's poll
        state), so that a function call from another CPU reaches it as an
        IPI that /proc/interrupts counts (CAL), not as a silent wake-up of a
        polling idle loop (measured: without it the old module's calls to
        CPU 0 did not show)."""
        initrd = os.path.join(self.args.out, f"{name}.initrd")
        make_initramfs(initrd, self.args.ko if with_module else None, self.args.guest, command,
                       self.args.msr_ko if msr else None)
        return Guest(name, self.args.out, self.args.kernel, initrd, smm=smm, nice=self.args.nice,
                     realtime=self.args.realtime, firmware=firmware,
                     append="nohz=off idle=halt cpuidle.off=1" if firmware == "ovmf" else "")

    def clock_offset(self, g):
        """Offset from the HWLAT-CLOCK lines (guest stamp vs host arrival)."""
        marks = []
        for t, text in g.lines:
            if text.startswith("HWLAT-CLOCK "):
                marks.append((int(text.split()[1]), t))
        return a.offset_from_clock_marks(marks)

    def dump(self, name, lines, **data):
        """Raw ground truth and guest lines (with host arrival times) in
        OUT/NAME.host.json, for re-analysis."""
        data["lines"] = [[t, text] for t, text in lines if text.startswith("HWLAT-")]
        with open(os.path.join(self.args.out, f"{name}.host.json"), "w") as f:
            json.dump(data, f)

    def abort(self, g, name, err):
        """A guest run that could not be judged: lets the guest dump dmesg
        and power off (30 s at most), then reports the error with the tails
        of both serial logs."""
        g.wind_down()
        self.tap(False, f"{name}: guest run", [str(err)] + g.tail(40))

    def finish(self, g, name, seconds, allow_nmi=False, monitor=None):
        """Waits for the guest, parses its output, checks the program's
        status and dmesg (one TAP line). Returns the GuestRun."""
        lines = g.finish(timeout=seconds + 120, monitor=monitor)
        run = a.parse_guest_output(lines)
        problems = []
        if run.errors:
            problems += [f"guest error: {e}" for e in run.errors]
        if run.exit_status != 0:
            problems.append(f"guest program exit status {run.exit_status}")
        if run.done is None:
            problems.append("no 'HWLAT-MARK done' line")
        elif run.done != len(run.samples):
            problems.append(f"guest counted {run.done} stream lines, host parsed "
                            f"{len(run.samples)}")
        if run.stats.get("dropped"):
            problems.append(f"dropped = {run.stats['dropped']} windows")
        problems += a.check_sequence(run.samples)
        if not run.dmesg:
            problems.append("no dmesg dump from the guest")
        bad = a.dmesg_problems(run.dmesg, allow_unknown_nmi=allow_nmi)
        problems += [f"dmesg: {b}" for b in bad]
        self.tap(not problems, f"{name}: guest ran cleanly (exit 0, no drops, increasing seq, "
                 f"dmesg clean{', unknown-NMI lines allowed' if allow_nmi else ''})",
                 problems + (g.tail() if problems else []))
        return run

    def run_stalls(self, mode):
        name = f"stalls-{mode}"
        n = self.args.stalls
        if mode == "user-spinner":
            n = min(n, SELFCHECK_STALLS)
        starts = plan(n, self.rnd)
        durs = [self.rnd.randint(20, 300) for _ in range(n)]
        # The first stall comes 2 s plus a random part of a window after the
        # sampling mark: at a fixed 2 s it fell, run after run, into the
        # same sleep gap (before the third width). Drawn from the seeded
        # generator: a seed still gives one schedule.
        lead = 2 + self.rnd.randint(0, WINDOW_NS // MS - 1) / 1000
        seconds = int(lead + starts[-1] + 0.3 + 4)
        if mode == "user-spinner":
            cmd = f"selfcheck {seconds}"
        else:
            cmd = f"sample {mode} {seconds} trace"
        g = self.boot(name, cmd, with_module=(mode != "user-spinner"))
        monitor = None
        try:
            g.wait_for("HWLAT-CLOCK", BOOT_TIMEOUT)
            # Before the detector is enabled.
            monitor = HostMonitor(g.pid, self.args.steal_probe,
                                  os.path.join(self.args.out, f"{name}.steal-probe"))
            if g.realtime:
                g.make_realtime()
            mark = g.wait_for("HWLAT-MARK sampling", 30, monitor=monitor)
            t0 = time.monotonic_ns() + int(lead * SEC)
            with Realtime():
                stalls = inject_stalls(g.pid, starts, durs, t0, monitor)
                coarse = self.clock_offset(g)
                run = self.finish(g, name, seconds, monitor=monitor)
            monitor.close()
        except (RuntimeError, a.GuestError, OSError) as e:
            self.abort(g, name, e)
            return
        finally:
            if monitor:
                monitor.discard()
            g.kill()
        if coarse is None:
            coarse = run.sampling_mark - mark
        self.dump(name, stalls=[[st.start, st.end] for st in stalls], clock_offset=coarse,
                  lines=g.lines, delays=[[d.start, d.end, d.wait, d.thread]
                                         for d in monitor.delays])
        # The clock marks bound the offset from below (a line arrives after
        # it is stamped) and are good to a few ms on a quiet host: refine only
        # within [-5 ms, +100 ms] of them, so that noise windows cannot pull
        # the offset onto the wrong stalls.
        off, nfit = a.refine_offset(run.samples, stalls, coarse, search=100 * MS, below=5 * MS)
        spinner = mode == "user-spinner"
        if spinner:
            widths, why = None, "the user-space spinner is not traced"
        else:
            widths, why = a.sampling_widths(run, mode, WIDTH_NS)
        r = a.match_stalls(run.samples, stalls, off, THRESHOLD_NS, WIDTH_NS, WINDOW_NS,
                           per_cpu=(mode == "per-cpu"), strict=not spinner,
                           slack_ns=50 * MS if spinner else MS, host_delays=monitor.delays,
                           recall_margin=0.4 if spinner else 0.0 if mode == "per-cpu" else 0.1,
                           widths=widths, widths_note=why)
        # The widths must cover the time the settings promise,
        # over the injection period; per-cpu staggers 2 CPUs by half a
        # window, so together they cover all of it.
        promised = min(1.0, (2 if mode == "per-cpu" else 1) * WIDTH_NS / WINDOW_NS)
        covered = None
        if widths:
            covered, lost = a.judge_coverage(widths, stalls[0].start + off,
                                             stalls[-1].end + off, promised)
            if lost:
                r.failures.append(lost)
        if widths:
            trace_note = (f"traced widths: {len(widths)} on-CPU periods of "
                          f"{a.SAMPLER_THREADS[mode]} >= 50 % of the width (trace clock "
                          f"{run.trace_clock}, {a.trace_clock_offset(run) / 1000:.1f} us from "
                          f"CLOCK_REALTIME); stalls started inside one: "
                          f"{len(r.eligible)}/{r.stalls} ({r.eligible_fraction:.2f}); widths "
                          f"covered {covered:.3f} of the injection period (promised "
                          f"{promised:.2f}); first stall {lead:.3f} s after the sampling mark")
        else:
            trace_note = f"no traced widths ({why}): fixed recall bound"
        label = ("harness self-check (user-space spinner, no module; recall >= 0.5, error <= "
                 "50 ms + 1 %)")\
            if spinner else f"stalls {mode}"
        self.tap(not r.failures, f"{label}: {r.summary()}",
                 [f"clock offset guest-host {off / MS:.1f} ms (clock marks "
                  f"{coarse / MS:.1f} ms, {nfit} windows fit)", trace_note, monitor.summary()]
                 + [f"host load explains {s.latency / MS:.3f} ms (window at guest "
                    f"{s.ts / SEC:.3f} cpu {s.cpu}): "
                    + ", ".join(f"{d.thread} waited {d.wait / MS:.1f} ms" for d in why)
                    for s, why in r.host_noise]
                 + r.failures
                 + ([f"noise (allowed here): {s.latency / MS:.3f} ms at guest {s.ts / SEC:.3f}"
                     f" in no stall" for s in r.unmatched] if spinner else []))
        self.results[name] = {
            "mode": mode, "stalls": r.stalls, "found": r.found, "recall": r.recall,
            "eligible": None if r.eligible is None else len(r.eligible),
            "eligible_fraction": r.eligible_fraction, "recall_needed": r.need,
            "recall_bound": r.bound, "traced_widths": len(widths) if widths else 0,
            "coverage": covered, "coverage_promised": promised,
            "first_stall_after_mark_s": lead,
            "over_threshold": r.over_threshold, "matched_windows": r.matched_samples,
            "precision": r.precision, "worst_error_ms": r.worst_error_ns / MS,
            "median_error_ms": r.median_error_ns / MS,
            "min_injected_ms": min(s.duration for s in stalls) / MS,
            "max_injected_ms": max(s.duration for s in stalls) / MS,
            "offset_ms": off / MS, "marker_offset_ms": coarse / MS,
            "failures": len(r.failures), "pass": not r.failures,
            "unmatched_ms": [s.latency / MS for s in r.unmatched],
            "host_explained_ms": [s.latency / MS for s, _ in r.host_noise],
            "host_waits_over_threshold": sum(1 for d in monitor.delays if d.wait > THRESHOLD_NS),
            "host_longest_wait_ms": max((d.wait for d in monitor.delays), default=0) / MS,
            "worst_error_vs_stop_ms": max(r.raw_errors_ns, default=0) / MS,
            "median_error_vs_stop_ms": (statistics.median(r.raw_errors_ns)
                                        if r.raw_errors_ns else 0) / MS,
            "pairs": [{"stall": i, "stop_ms": stalls[i].duration / MS, "cpu": s.cpu,
                       "pre_wait_ms": pre / MS, "post_wait_ms": post / MS,
                       "truth_ms": truth / MS, "reported_ms": s.latency / MS}
                      for i, s, truth, pre, post in r.pairs],
        }

    @staticmethod
    def inject_nmis(qmp, starts):
        """QMP inject-nmi at starts (s) after 2 s from now; returns the host
        realtime of each (midpoint of the QMP call)."""
        injections = []
        t0 = time.monotonic_ns() + 2 * SEC
        with Realtime():
            for s in starts:
                precise_sleep_until(t0 + int(s * SEC))
                b = now()
                qmp.execute("inject-nmi")
                injections.append((b + now()) // 2)
        return injections

    def run_nmi(self):
        name = "nmi"
        n = self.args.nmis
        starts = plan(n, self.rnd, 2000, 3000)     # a window's span is up to 1.8 s
        seconds = int(2 + starts[-1] + 4)
        g = self.boot(name, f"sample per-cpu {seconds} trace")
        injections = []
        try:
            qmp = Qmp(g.qmp_path)
            g.wait_for("HWLAT-CLOCK", BOOT_TIMEOUT)
            if g.realtime:
                g.make_realtime()
            g.wait_for("HWLAT-MARK sampling", 30)
            injections = self.inject_nmis(qmp, starts)
            qmp.close()
            coarse = self.clock_offset(g)
            run = self.finish(g, name, seconds, allow_nmi=True)
            self.dump(name, injections=injections, clock_offset=coarse, lines=g.lines)
        except (RuntimeError, a.GuestError, OSError) as e:
            self.abort(g, name, e)
            return
        finally:
            g.kill()
        res = self.judge_nmis("NMI attribution (per-cpu)", run, injections, coarse)
        if res is not None:
            self.results[name] = res

    def judge_nmis(self, label, run, injections, coarse):
        """One TAP line for a per-cpu run with injected NMIs (a.match_nmis);
        returns the results dict, or None when they could not be matched."""
        # The widths each CPU's sampler (hwlatd/N) was traced running: an
        # NMI that arrives while it sleeps is rightly not counted.
        widths, why = {}, None
        for c in range(len(run.nmi.get("after", []))):
            w, why_c = a.sampling_widths(run, "per-cpu", WIDTH_NS, cpu=c)
            if w:
                widths[c] = w
            else:
                why = why or why_c
        if not widths:
            widths = None
        try:
            r = a.match_nmis(run.samples, injections, coarse, run.nmi.get("before", []),
                             run.nmi.get("after", []), THRESHOLD_NS, WIDTH_NS, WINDOW_NS,
                             widths=widths, widths_note=why, guard_ns=NMI_GUARD_NS)
        except a.GuestError as e:
            self.tap(False, f"{label}: {e}")
            return None
        if widths:
            trace_note = ("traced widths: " + ", ".join(f"cpu{c} {len(w)}" for c, w in
                                                       sorted(widths.items()))
                          + f" on-CPU periods of hwlatd/N >= 50 % of the width (trace clock "
                          f"{run.trace_clock}, {a.trace_clock_offset(run) / 1000:.1f} us from "
                          f"CLOCK_REALTIME); guard band {NMI_GUARD_NS / MS:g} ms at width edges")
        else:
            trace_note = f"no traced widths ({why}): fixed recall bound"
        details = [f"clock offset guest-host {coarse / MS:.1f} ms (clock marks)", trace_note]
        for c in sorted(r.cpus):
            if widths and c in widths:
                details.append(f"cpu{c} injections, distance to the nearest width edge (ms, "
                               f"+ inside, - outside): " + ", ".join(
                                   f"{i}:{d / MS:+.1f}" for i, d in
                                   enumerate(a.width_edge_distance(t + coarse, widths[c])
                                             for t in injections)))
        details += r.failures
        self.tap(not r.failures, f"{label}: {r.summary()}", details)
        lat = [s for s in run.samples if s.nmi_count]
        judged = {str(c): {"took": rc.took, "counted": rc.counted, "attributed": rc.attributed,
                           "inside": None if rc.inside is None else len(rc.inside),
                           "edge": None if rc.edge is None else len(rc.edge),
                           "gap": None if rc.gap is None else len(rc.gap),
                           "need": rc.need, "bound": rc.bound}
                  for c, rc in r.cpus.items()}
        return {
            "injected": r.injected, "delivered_per_cpu": r.delivered,
            "stream_nmi_total": r.stream_total, "attributed_per_cpu": r.attributed,
            "recall_per_cpu": r.recall, "windows_with_nmi": len(lat),
            "max_nmi_ns": max((s.nmi_ns for s in lat), default=0),
            "min_nmi_ns": min((s.nmi_ns for s in lat), default=0),
            "traced_widths": {str(c): len(w) for c, w in (widths or {}).items()},
            "guard_ms": NMI_GUARD_NS / MS, "per_cpu": judged,
            "failures": len(r.failures), "pass": not r.failures}

    def check_run(self, name, lines, segments, allow_nmi=False):
        """One TAP line for a guest that ran several acc-guest commands:
        exit 0, no guest error, each sampling run's stream complete (its
        'done' count, no drops, increasing seq), dmesg clean (but for the
        unknown-NMI lines of injected NMIs with allow_nmi)."""
        whole = a.parse_guest_output([t for _, t in lines])
        problems = [f"guest error: {e}" for e in whole.errors]
        if whole.exit_status != 0:
            problems.append(f"guest program exit status {whole.exit_status}")
        for label, run in segments:
            if run.done is None:
                problems.append(f"{label}: no 'HWLAT-MARK done' line")
            elif run.done != len(run.samples):
                problems.append(f"{label}: guest counted {run.done} stream lines, host parsed "
                                f"{len(run.samples)}")
            if run.stats.get("dropped"):
                problems.append(f"{label}: dropped = {run.stats['dropped']} windows")
            problems += [f"{label}: {p}" for p in a.check_sequence(run.samples)]
        if not whole.dmesg:
            problems.append("no dmesg dump from the guest")
        problems += [f"dmesg: {b}" for b in a.dmesg_problems(whole.dmesg, allow_nmi)]
        self.tap(not problems, f"{name}: guest ran cleanly (exit 0, no drops, increasing seq, "
                 f"dmesg clean)", problems)
        return whole

    def smi_tap(self, label, run, smis, mode, widths, why, broadcast, check_ns, threshold_ns,
                guard_ns, notes=(), costs=None, want_raised=None):
        """TAP lines of one sampling run with raised SMIs: the count, and
        with check_ns the smi_ns check. Returns the result dict."""
        if widths is None:
            self.tap(False, f"{label}: SMI count", [f"no traced widths ({why}): the "
                                                    "expected count is unknown"])
            return {"pass": False, "error": why}
        try:
            r = a.judge_smis(run.samples, smis, widths, run.msr.get("before"),
                             run.msr.get("after"),
                             "max-per-cpu" if mode == "per-cpu" else "sum", broadcast=broadcast,
                             threshold_ns=threshold_ns, check_ns=check_ns, guard_ns=guard_ns,
                             costs=costs, want_raised=want_raised)
        except a.GuestError as e:
            self.tap(False, f"{label}: SMI count: {e}")
            return {"pass": False, "error": str(e)}
        placed = "; ".join(f"cpu{c}: inside a width {p['inside']}, at an edge {p['edge']}, in a "
                           f"sleep gap {p['gap']}" for c, p in sorted(r.placed.items()))
        self.tap(not r.failures, f"{label}: SMI count: {r.summary()}",
                 list(notes) + [f"SMIs against the traced widths (guard {guard_ns / MS:g} ms): "
                                f"{placed}"] + r.failures)
        out = {"raised": r.raised, "msr_delta": r.msr_delta, "expected": r.expected,
               "counted": r.counted, "method": r.method, "machine_total": r.machine_total,
               "machine_expected": r.machine_expected, "windows_with_smi": r.windows,
               "placed": r.placed, "count_pass": not r.failures}
        ok = not r.failures
        if check_ns:
            vs = ([f"smi_ns vs the raising CPU's outb time (us): " + ", ".join(
                f"{k}: {ns / 1000:.0f}/{c / 1000:.0f}" for k, ns, c in r.ns_vs_cost)]
                if r.ns_vs_cost else [])
            self.tap(not r.ns_failures, f"{label}: smi_ns at threshold "
                     f"{threshold_ns / 1000:g} us: {r.ns_summary()}", vs + r.ns_failures)
            out.update({"ns_windows": r.ns_windows, "exact_ns": r.exact_ns,
                        "noise_windows": r.noise_windows, "smi_ns_range": r.smi_ns_range,
                        "ns_pass": not r.ns_failures})
            ok = ok and not r.ns_failures
        out["pass"] = ok
        return out

    def run_smi(self):
        """SeaBIOS (no broadcast): SMIs raised from CPU 0 enter SMM on CPU 0
        only, and CPU 0 runs the raising program only outside its own widths,
        so no sampler takes one during a width: every window's smi_count is
        0, while MSR_SMI_COUNT rises by N on CPU 0 and 0 on CPU 1. (The
        module before per-CPU SMI counting added every CPU's MSR delta over
        the whole window, sleep included, and counted them all.)"""
        name = "smi"
        n = self.args.smis
        seconds = int(n * 3 + 3)
        g = self.boot(name, ["smi-control 5 0", f"sample round-robin {seconds} {n} trace"],
                      smm=True, msr=bool(self.args.msr_ko))
        try:
            g.wait_for("HWLAT-MARK sampling", BOOT_TIMEOUT)
            run = self.finish(g, name, seconds)
            self.dump(name, lines=g.lines)
        except (RuntimeError, a.GuestError, OSError) as e:
            self.abort(g, name, e)
            return
        finally:
            g.kill()
        cb, ca = run.msr.get("control-before"), run.msr.get("control-after")
        if cb and ca:
            rose = [x - y for x, y in zip(ca, cb)]
            self.tap(rose == [run.smi_control] + [0] * (len(rose) - 1),
                     f"SMI control, SeaBIOS (detector disabled): MSR_SMI_COUNT rose by "
                     f"{'+'.join(map(str, rose))} per CPU for {run.smi_control} SMIs raised on "
                     f"cpu 0 (no broadcast: only the raising CPU counts them)")
        else:
            print("# SMI control: no MSR_SMI_COUNT in the guest (msr.ko missing or the CPU "
                  "model has none); the number raised is the only ground truth", flush=True)
        widths, why = self.cpu_widths(run, "round-robin", range(len(run.msr.get("after", [0, 0]))))
        self.results[name] = self.smi_tap("SeaBIOS round-robin, raised on cpu 0", run,
                                          run.smis, "round-robin", widths, why,
                                          broadcast=False, check_ns=False, threshold_ns=None,
                                          guard_ns=2 * MS)

    @staticmethod
    def cpu_widths(run, mode, cpus):
        """{cpu: traced widths} of the CPUs that sampled, or (None, why)."""
        widths = {}
        for c in cpus:
            w, why = a.sampling_widths(run, mode, WIDTH_NS, cpu=c)
            if not w:
                return None, why
            widths[c] = w
        return widths, None

    def run_smi_ovmf(self):
        """OVMF (SMI broadcast, as servers do). One guest runs
        the control, the three modes with N SMIs each raised inside a width of
        the sampler from elsewhere, the IPI check, and the NMI attribution
        under this firmware (per-cpu, QMP inject-nmi as in run_nmi); see
        README.md."""
        name = "smi-ovmf"
        n = self.args.smis
        thr_us = self.args.smi_threshold_us
        nmi_starts = plan(self.args.nmis, self.rnd, 2000, 3000)
        nmi_seconds = int(2 + nmi_starts[-1] + 4)
        cmds = ["smi-control 5 1",
                f"sample round-robin {n + 3} trace threshold={thr_us} cpus=0 gate=1,0,{n}",
                f"sample per-cpu {n + 6} trace threshold={thr_us} cpus=0-1 desync=1 "
                f"gate=1,0,{n}",
                f"sample stop-machine {n + 4} trace threshold={thr_us} cpus=0 freeze=1",
                f"sample round-robin {IPI_SECONDS + 2} threshold={thr_us} cpus=1 "
                f"idle={IPI_SECONDS}",
                f"sample per-cpu {IPI_SECONDS + 2} threshold={thr_us} cpus=1 "
                f"idle={IPI_SECONDS}",
                # cpus=: the IPI runs before it left the detector at cpus=1.
                f"sample per-cpu {nmi_seconds} trace cpus=0-1"]
        g = self.boot(name, cmds, firmware="ovmf", msr=bool(self.args.msr_ko))
        raises, nmis = [], []
        t_boot = time.monotonic()
        try:
            g.wait_for("HWLAT-BOOT", BOOT_TIMEOUT)
            boot_s = time.monotonic() - t_boot
            if g.realtime:
                g.make_realtime()
            qmp = Qmp(g.qmp_path)
            raises = self.raise_in_stop_machine(g, qmp, n)
            # The NMI run is the third in per-cpu mode (after the SMI and
            # IPI ones): each run starts with its HWLAT-CONFIG line.
            idx, per_cpu = 0, 0
            while per_cpu < 3:
                g.wait_for("HWLAT-CONFIG", 3 * IPI_SECONDS + 120, after=idx)
                idx = next(i for i in range(idx, len(g.lines))
                           if g.lines[i][1].startswith("HWLAT-CONFIG")) + 1
                per_cpu += "mode=per-cpu" in g.lines[idx - 1][1]
            g.wait_for("HWLAT-MARK sampling per-cpu", 30, after=idx)
            nmis = self.inject_nmis(qmp, nmi_starts)
            qmp.close()
            g.finish(timeout=3 * n + 2 * IPI_SECONDS + nmi_seconds + 150)
            self.dump(name, lines=g.lines, host_raises=raises, nmi_injections=nmis)
        except (RuntimeError, a.GuestError, OSError) as e:
            self.abort(g, name, e)
            return
        finally:
            g.kill()
        segs = split_runs(g.lines)
        try:
            parsed = [(label, a.parse_guest_output([t for _, t in ls])) for label, ls in segs]
        except a.GuestError as e:
            self.tap(False, f"{name}: guest output: {e}")
            return
        self.check_run(name, g.lines, parsed[1:], allow_nmi=True)
        res = {"boot_s": boot_s}
        ctl = parsed[0][1]
        cb, ca = ctl.msr.get("control-before"), ctl.msr.get("control-after")
        costs = ctl.smi_costs
        if cb and ca:
            rose = [x - y for x, y in zip(ca, cb)]
            self.tap(rose == [ctl.smi_control] * len(rose),
                     f"SMI control, OVMF (detector disabled): {ctl.smi_control} SMIs raised on "
                     f"cpu 1 raised MSR_SMI_COUNT by {'+'.join(map(str, rose))} per CPU "
                     f"(broadcast: every CPU counts each); each outb took "
                     + (f"{min(costs) / 1000:.0f}-{max(costs) / 1000:.0f} us" if costs else "?"),
                     [f"threshold of the smi_ns checks: {thr_us} us"])
            res["control"] = {"msr_rose": rose, "cost_us": [c / 1000 for c in costs]}
        else:
            self.tap(False, "SMI control, OVMF: no MSR_SMI_COUNT readings (msr.ko missing?)")
        runs = dict(parsed[1:])
        thr = thr_us * 1000
        for mode, label in (("round-robin", "OVMF round-robin cpus=0, raised on cpu 1 while "
                                            "cpu 0 is in a width"),
                            ("per-cpu", "OVMF per-cpu cpus=0-1 (cpu 1 half a window out of "
                                        "phase), raised on cpu 1 while cpu 0 is in a width"),
                            ("stop-machine", "OVMF stop-machine cpus=0, raised by the host "
                                             "(APM port write, no CPU) inside the width")):
            run = runs.get(f"{mode}#1")
            if run is None:
                self.tap(False, f"{label}: the guest never ran it")
                continue
            notes = []
            if mode == "stop-machine":
                lines = dict(segs[1:])[f"{mode}#1"]
                off = self.clock_offset_of(lines)
                smis = [(k, t + off, -1) for k, t in enumerate(raises)]
                notes.append(f"{len(raises)} SMIs raised by the host (QMP human-monitor-command "
                             f"'o /b 0xb2 0'), {len(run.freezes)} freezes of cpu 1 reported; "
                             f"clock offset guest-host {off / MS:.1f} ms (clock marks)")
                guard = 5 * MS
                cpus = [0]
            else:
                smis = run.smis
                broken = [k for k, (_, after, _) in run.smi_gate.items() if after < 0]
                notes.append(f"gate: {len(run.smis)} raised, LOC of cpu 0 still for "
                             f">= 20 ms before each"
                             + (f"; after SMI {', '.join(map(str, broken))} it moved within "
                                f"20 ms (placed by the trace alone)" if broken else
                                " and after each"))
                guard = 2 * MS
                cpus = [0, 1] if mode == "per-cpu" else [0]
            widths, why = self.cpu_widths(run, mode, cpus)
            res[mode] = self.smi_tap(label, run, smis, mode, widths, why, broadcast=True,
                                     check_ns=True, threshold_ns=thr, guard_ns=guard,
                                     notes=notes, want_raised=n,
                                     costs={k: c for k, (_, _, c) in run.smi_gate.items()})
        for mode in ("round-robin", "per-cpu"):
            run = runs.get(f"{mode}#2")
            res[f"ipi-{mode}"] = self.ipi_tap(mode, run)
        run = runs.get("per-cpu#3")
        if run is None:
            self.tap(False, "NMI attribution, OVMF (per-cpu): the guest never ran it")
        else:
            res["nmi"] = self.judge_nmis("NMI attribution, OVMF (per-cpu)", run, nmis,
                                         self.clock_offset_of(dict(segs)["per-cpu#3"]))
        self.results[name] = res

    def raise_in_stop_machine(self, g, qmp, n):
        """While the guest samples in stop-machine mode, raises n SMIs from
        the host, one inside each width after the first: the guest reports
        each freeze of cpu 1 (a width) as it ends; the next width starts
        after the 100 ms sleep and lasts 900 ms, so an SMI 450 ms after the
        report lands in its middle. Returns the host realtime of each
        (midpoint of the QMP call)."""
        g.wait_for("HWLAT-MARK sampling stop-machine", BOOT_TIMEOUT + 120)
        seen = len(g.lines)
        raises, due = [], []
        deadline = time.monotonic() + 3 * n + 30
        with Realtime():
            while len(raises) < n:
                if not g.poll_lines():
                    raise RuntimeError("QEMU exited during the stop-machine run")
                for t, text in g.lines[seen:]:
                    if text.startswith("HWLAT-FREEZE") and len(raises) + len(due) < n:
                        due.append(time.monotonic_ns() + 450 * MS)
                    if text.startswith(("HWLAT-MARK done", "HWLAT-ERROR", "HWLAT-EXIT")):
                        raise RuntimeError(f"the guest said {text!r} after {len(raises)} of "
                                           f"{n} host SMIs")
                seen = len(g.lines)
                if due and time.monotonic_ns() >= due[0]:
                    due.pop(0)
                    b = now()
                    qmp.execute_args("human-monitor-command", {"command-line": "o /b 0xb2 0"})
                    raises.append((b + now()) // 2)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"only {len(raises)} of {n} host SMIs raised in time")
                time.sleep(0.001)
        return raises

    @staticmethod
    def clock_offset_of(lines):
        marks = [(int(text.split()[1]), t) for t, text in lines
                 if text.startswith("HWLAT-CLOCK ")]
        return a.offset_from_clock_marks(marks)

    def ipi_tap(self, mode, run):
        """cpus=1: the module must send no IPI to CPU 0 (the old one read
        every CPU's MSR_SMI_COUNT through IPIs after each window, so CPU 0
        took at least one more IPI per window). The CAL line of CPU 0 over
        the sampling (from 2 s after enabling to the end) may rise above its
        rise over as long a time with the detector disabled (the guest's own
        IPIs, 0-3 per 6 s measured) by fewer than half the windows sampled:
        the old module's one per window fails that, the guest's own
        variation (one more or fewer in a run) does not."""
        label = f"OVMF {mode} cpus=1: no IPIs on cpu 0"
        need = [("idle-before", "CAL"), ("idle-after", "CAL"), ("sampling-before", "CAL"),
                ("sampling-after", "CAL")]
        if run is None or any(k not in run.irqs for k in need):
            self.tap(False, f"{label}: the guest printed no CAL counts")
            return {"pass": False}
        cal = {w: run.irqs[(w, "CAL")] for w, _ in need}
        res = {w: run.irqs.get((w, "RES")) for w, _ in need}
        idle = cal["idle-after"][0] - cal["idle-before"][0]
        samp = cal["sampling-after"][0] - cal["sampling-before"][0]
        idle_res = res["idle-after"][0] - res["idle-before"][0]
        samp_res = res["sampling-after"][0] - res["sampling-before"][0]
        windows = len(run.samples)
        ok = windows > 0 and 2 * (samp - idle) < windows
        self.tap(ok, f"{label}: CAL of cpu 0 rose by {samp} while sampling "
                 f"({IPI_SECONDS} s, {windows} windows; more than {idle} + {windows} / 2 "
                 f"would be IPIs of the module), {idle} over {IPI_SECONDS} s with the detector "
                 f"disabled (RES: {samp_res} and {idle_res})")
        return {"cal_sampling": samp, "cal_idle": idle, "res_sampling": samp_res,
                "res_idle": idle_res, "windows": windows, "pass": ok}


def split_runs(lines):
    """Splits a guest's (host time, text) lines into its commands' runs:
    [("control", lines before the first sampling run), ("MODE#k", the k-th
    run in MODE, from its HWLAT-CONFIG line), ...]."""
    out, cur, label, seen = [], [], "control", {}
    for t, text in lines:
        if text.startswith("HWLAT-CONFIG"):
            out.append((label, cur))
            mode = a.key_values(text.partition(" ")[2]).get("mode", "?")
            seen[mode] = seen.get(mode, 0) + 1
            label, cur = f"{mode}#{seen[mode]}", []
        cur.append((t, text))
    out.append((label, cur))
    return out


def figures_md(results, args, kernel_release):
    out = ["# hwlat accuracy figures", "",
           "Measured by `tests/accuracy/run` on "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
           f", guest kernel {kernel_release}, QEMU TCG -smp 2 at "
           f"{'vCPU threads SCHED_FIFO 1 (--realtime)' if args.realtime else f'nice {args.nice}'}"
           f", seed "
           f"{args.seed}, host load average {os.getloadavg()[0]:.1f} at the end. "
           "Detector settings: threshold 20000 us, width 900000 us, window 1000000 us.", "",
           "Error = distance of max(inner, outer) from the truth band [stop, stop + waits]: "
           "the stop timed on the host around kill(), the waits those of the vCPU threads on "
           "the host run queue when stopped and after SIGCONT (0 on an idle host); the error "
           "against the stop alone is shown too. Windows above "
           "the threshold outside every injected stall count against precision unless a "
           "measured host run-queue wait of the vCPU threads (>= half the latency, "
           "/proc/PID/task/TID/schedstat) explains them; those are listed as host-load "
           "windows.", "",
           "## Injected hypervisor stalls (SIGSTOP/SIGCONT of QEMU)", "",
           "Recall must reach the fraction of stalls that started inside a sampling width "
           "(traced in the guest: sched_switch of the sampler threads) minus 0.10; without "
           "a trace, width/window - 0.10 = 0.80 (the self-check: 0.50).", "",
           "| mode | stalls (ms) | found | recall | started in a width | recall needed "
           "| windows > threshold | precision "
           "| worst error | median error | worst / median error vs stop alone "
           "| host-load windows (longest vCPU wait) | result |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in ["stalls-user-spinner"] + [f"stalls-{m}" for m in MODES]:
        r = results.get(key)
        if not r:
            continue
        label = "user-space spinner (harness self-check)" if key.endswith("spinner") \
            else r["mode"]
        out.append(f"| {label} | {r['stalls']} ({r['min_injected_ms']:.0f}-"
                   f"{r['max_injected_ms']:.0f}) | {r['found']} | {r['recall']:.2f} | "
                   + ("n/a (not traced)" if r["eligible"] is None else
                      f"{r['eligible']} ({r['eligible_fraction']:.2f})")
                   + f" | {r['recall_needed']:.2f} | {r['over_threshold']} | "
                   f"{r['precision']:.2f} | {r['worst_error_ms']:.3f} ms"
                   f" | {r['median_error_ms']:.3f} ms | {r['worst_error_vs_stop_ms']:.3f} / "
                   f"{r['median_error_vs_stop_ms']:.3f} ms | {len(r['host_explained_ms'])} "
                   f"({r['host_longest_wait_ms']:.0f} ms) | {'pass' if r['pass'] else 'FAIL'} |")
    r = results.get("nmi")
    if r:
        def per(key):
            return ", ".join(f"cpu{c}: {'n/a' if v[key] is None else v[key]}"
                             for c, v in sorted(r["per_cpu"].items()))
        out += ["", "## Injected NMIs (QMP inject-nmi, per-cpu mode)", "",
                "Per CPU that took them: the stream's nmi_count total must reach the NMIs "
                "that arrived inside a width of that CPU's sampler (traced, as above; host "
                f"time of the QMP command + clock offset, more than {r['guard_ms']:g} ms from "
                "both edges) and stay within those plus the ones at an edge; without a "
                "trace, 0.80 of the NMIs taken must be attributed.", "",
                "| injected | taken per CPU (/proc/interrupts) | inside a width | at an edge "
                "| in a sleep gap | stream nmi_count total | required | windows with NMI "
                "| attributed per CPU | largest nmi_ns | result |",
                "|---|---|---|---|---|---|---|---|---|---|---|",
                f"| {r['injected']} | {' + '.join(map(str, r['delivered_per_cpu']))} | "
                f"{per('inside')} | {per('edge')} | {per('gap')} | "
                f"{r['stream_nmi_total']} | {per('need')} | {r['windows_with_nmi']} | "
                f"{', '.join(f'cpu{c}: {v}' for c, v in sorted(r['attributed_per_cpu'].items()))}"
                f" | {r['max_nmi_ns'] / 1000:.0f} us | {'pass' if r['pass'] else 'FAIL'} |"]
    def smi_row(label, r):
        if not r or "counted" not in r:
            return f"| {label} | - | - | - | - | - | - | - | FAIL (no result) |"
        msr = "n/a" if r["msr_delta"] is None else "+".join(map(str, r["msr_delta"]))
        per = ", ".join(f"cpu{c}: {n}/{r['expected'][c]}" for c, n in
                        sorted(((c, r["counted"].get(c, 0)) for c in r["expected"])))
        rng = r.get("smi_ns_range") or (None, None)
        ns = ("-" if "ns_windows" not in r else
              f"{r['ns_windows']} windows, " + ("none" if rng[0] is None else
                                                 f"{rng[0] / 1000:.0f}-{rng[1] / 1000:.0f} us")
              + f"; {r['noise_windows']} noise windows unflagged")
        return (f"| {label} | {r['raised']} | {msr} | {per} | {r['method']} | "
                f"{r['machine_total']} / {r['machine_expected']} | {ns} | "
                f"{'pass' if r['pass'] else 'FAIL'} |")
    smi, ovmf = results.get("smi"), results.get("smi-ovmf")
    if smi or ovmf:
        out += ["", "## Raised SMIs (APM port 0xb2, q35 smm=on, Skylake-Client)", "",
                "Counted as docs/interfaces.md defines smi_count: the SMIs the sampling CPU "
                "took during its width. Per CPU: stream total / SMIs inside that CPU's traced "
                "widths. Machine total / expected, by the contract's method.", "",
                "| run | raised | MSR_SMI_COUNT delta per CPU | stream per CPU / expected "
                "| method | machine total / expected | smi_ns | result |",
                "|---|---|---|---|---|---|---|---|"]
        if smi:
            out.append(smi_row("SeaBIOS round-robin, raised on cpu 0 (no broadcast)", smi))
        if ovmf:
            for mode, label in (("round-robin", "OVMF round-robin cpus=0, raised on cpu 1"),
                                ("per-cpu", "OVMF per-cpu cpus=0-1, raised on cpu 1"),
                                ("stop-machine", "OVMF stop-machine cpus=0, raised by the "
                                                 "host")):
                out.append(smi_row(label, ovmf.get(mode)))
            ctl = ovmf.get("control")
            if ctl:
                out += ["", f"OVMF control: {len(ctl['cost_us'])} SMIs from cpu 1 raised "
                        f"MSR_SMI_COUNT by {'+'.join(map(str, ctl['msr_rose']))}; the outb "
                        f"took {min(ctl['cost_us']):.0f}-{max(ctl['cost_us']):.0f} us."]
            rows = [(m, ovmf.get(f"ipi-{m}")) for m in ("round-robin", "per-cpu")]
            out += ["", "IPIs to cpu 0 with cpus=1 (CAL line of /proc/interrupts, "
                    f"{IPI_SECONDS} s sampling vs {IPI_SECONDS} s detector disabled): "
                    + "; ".join(f"{m}: {r['cal_sampling']} vs {r['cal_idle']} "
                                f"({'pass' if r['pass'] else 'FAIL'})" for m, r in rows
                                if r and "cal_sampling" in r)]
    return "\n".join(out) + "\n"


def main():
    # SIGTERM unwinds like an exception, so that every QEMU is killed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernel", required=True)
    p.add_argument("--ko", help="hwlat_detector.ko (every test but selfcheck)")
    p.add_argument("--guest", required=True, help="static acc-guest binary")
    p.add_argument("--steal-probe", required=True,
                   help="host steal-probe binary (tests/accuracy/steal-probe.c)")
    p.add_argument("--msr-ko")
    p.add_argument("--out", default="_build/accuracy")
    p.add_argument("--only",
                   default="selfcheck,round-robin,per-cpu,stop-machine,nmi,smi,smi-ovmf")
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--stalls", type=int, default=24)
    p.add_argument("--nmis", type=int, default=12)
    p.add_argument("--smis", type=int, default=10)
    p.add_argument("--smi-threshold-us", type=int, default=SMI_THRESHOLD_US,
                   help="threshold of the OVMF runs' smi_ns checks (below an SMI's cost)")
    p.add_argument("--kernel-release", default="?")
    p.add_argument("--first", type=int, default=1, help="number of the first TAP line")
    p.add_argument("--realtime", action="store_true",
                   help="once a guest has booted, run its vCPU threads at SCHED_FIFO 1 and "
                        "QEMU's other threads at FIFO 2 (clean ground truth on a loaded host; "
                        "starves other work on the machine while the guest runs)")
    p.add_argument("--nice", type=int, default=-15,
                   help="niceness of QEMU (default -15: less host scheduling noise in the guest)")
    args = p.parse_args()
    known = {"selfcheck", "nmi", "smi", "smi-ovmf", *MODES}
    only = [t for t in args.only.split(",") if t]
    for t in only:
        if t not in known:
            p.error(f"--only: unknown test '{t}' (known: {', '.join(sorted(known))})")
    if not args.ko and set(only) - {"selfcheck"}:
        p.error("--ko is needed for every test but selfcheck")
    for what, path in (("--kernel", args.kernel), ("--ko", args.ko), ("--guest", args.guest)):
        if path is not None and not os.path.isfile(path):
            p.error(f"{what} {path}: no such file")
    if args.msr_ko and not os.path.isfile(args.msr_ko):
        p.error(f"--msr-ko {args.msr_ko}: no such file")
    if args.stalls < 20 or args.nmis < 1 or args.smis < 1:
        p.error("--stalls must be >= 20, --nmis and --smis >= 1")
    os.makedirs(args.out, exist_ok=True)
    print(f"# accuracy: seed {args.seed}, kernel {args.kernel}, module {args.ko}, QEMU "
          f"{'nice ' + str(args.nice) + (', FIFO after boot' if args.realtime else '')}",
          flush=True)
    suite = Suite(args)
    if args.realtime:
        global ALWAYS_RT
        ALWAYS_RT = True
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        print("# --realtime: after boot, vCPU threads SCHED_FIFO 1, other QEMU threads FIFO 2,"
              " injector FIFO 10", flush=True)
    for t in only:
        t0 = time.monotonic()
        if t == "selfcheck":
            suite.run_stalls("user-spinner")
        elif t in MODES:
            suite.run_stalls(t)
        elif t == "nmi":
            suite.run_nmi()
        elif t == "smi":
            suite.run_smi()
        elif t == "smi-ovmf":
            suite.run_smi_ovmf()
        print(f"# {t}: {time.monotonic() - t0:.0f} s", flush=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"seed": args.seed, "kernel": args.kernel_release, "results": suite.results},
                  f, indent=1)
    with open(os.path.join(args.out, "figures.md"), "w") as f:
        f.write(figures_md(suite.results, args, args.kernel_release))
    print(f"1..{suite.n}")
    print(f"# accuracy: {suite.n - args.first + 1 - suite.failed} passed, {suite.failed} failed")
    print(f"# figures: {os.path.join(args.out, 'figures.md')}")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
