# SPDX-License-Identifier: GPL-2.0-or-later
"""Host-side analysis for the accuracy suite (Python 3, stdlib only).

Pure functions, no QEMU: parse what the guest printed (acc-guest.c tags),
estimate the guest-host clock offset, and match the detector's windows
against the faults the host injected. test_analysis.py checks them on
synthetic data; accuracy.py feeds them real guest runs.

Times are integer nanoseconds. Host times are CLOCK_REALTIME of the host,
guest times CLOCK_REALTIME of the guest; offset = guest - host.
"""

import re
import statistics
from dataclasses import dataclass, field

MS = 1_000_000
SEC = 1_000_000_000


class GuestError(Exception):
    """The guest's output is malformed or says that something failed."""


@dataclass
class StreamLine:
    """One line of <debugfs>/hwlat_detector/stream (docs/interfaces.md §1)."""
    seq: int
    cpu: int
    ts: int          # guest CLOCK_REALTIME, ns
    inner: int
    outer: int
    count: int
    nmi_count: int
    nmi_ns: int
    smi_count: int   # None: "-", the CPU cannot count SMIs
    raw: str = ""
    smi_ns: int = None   # None: "-", or an old 10-field line (no such field)
    fields: int = 11
    backend: str = "module"   # "tracer": a kernel hwlat tracer line (parse_tracer_line)

    @property
    def latency(self):
        return max(self.inner, self.outer)

    @property
    def smis(self):
        """smi_count, 0 when unavailable (for checks that only ask "any?")."""
        return self.smi_count or 0


# 11 fields (smi_count and smi_ns, each "-" when the CPU cannot
# count SMIs); the 10-field line of earlier modules has no smi_ns.
_STREAM_RE = re.compile(r"^(\d+) (\d+) (\d+)\.(\d{9}) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+|-)"
                        r"(?: (\d+|-))?$")


def parse_stream_line(text):
    """Parses one stream line strictly (11 fields, or the old 10); raises
    GuestError naming the line. smi_count and smi_ns are None for "-"."""
    m = _STREAM_RE.match(text)
    if not m:
        raise GuestError(f"malformed stream line (want '<seq> <cpu> <sec>.<9-digit nsec> "
                         f"<inner_ns> <outer_ns> <count> <nmi_count> <nmi_ns> <smi_count> "
                         f"<smi_ns>', the last two a number or '-', or the old 10 fields "
                         f"without smi_ns): {text!r}")
    g = m.groups()
    if g[10] is not None and (g[9] == "-") != (g[10] == "-"):
        raise GuestError(f"stream line with one of smi_count, smi_ns '-' and the other a "
                         f"number: {text!r}")
    v = [int(x) for x in g[:9]]
    return StreamLine(seq=v[0], cpu=v[1], ts=v[2] * SEC + v[3], inner=v[4], outer=v[5],
                      count=v[6], nmi_count=v[7], nmi_ns=v[8],
                      smi_count=None if g[9] == "-" else int(g[9]), raw=text,
                      smi_ns=None if g[10] in (None, "-") else int(g[10]),
                      fields=10 if g[10] is None else 11)


# One trace_pipe line of the kernel's hwlat tracer (Linux 6.1
# kernel/trace/trace_output.c, trace_hwlat_print, after the usual
# "<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: " context):
#   "#<seq> inner/outer(us): <inner>/<outer> ts:<sec>.<9-digit nsec> count:<n>"
#   then " nmi-total:<us>" (not on kernels with a generic sched_clock) and
#   " nmi-count:<n>" only when NMIs arrived during the width.
# inner/outer and nmi-total are microseconds; ts is CLOCK_REALTIME of the
# first iteration over tracing_thresh, like the module's ts.
_TRACER_RE = re.compile(r"^\s*(?P<task>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?"
                        r"\d+\.\d{1,9}: #(?P<seq>\d+)\s+inner/outer\(us\):\s*(?P<inner>\d+)/"
                        r"(?P<outer>\d+)\s+ts:(?P<sec>\d+)\.(?P<nsec>\d{9}) count:(?P<count>\d+)"
                        r"(?: nmi-total:(?P<nmi_total>\d+))?(?: nmi-count:(?P<nmi_count>\d+))?\s*$")


def parse_tracer_line(text):
    """One hwlat tracer sample from trace_pipe as the StreamLine the module's
    stream gives, so that both are judged by the same functions: inner, outer
    and nmi_ns converted from us to ns, cpu from the line's context. What the
    tracer cannot say is None (unavailable), never 0: smi_count and smi_ns
    (it counts no SMIs), and nmi_ns when NMIs were counted but the kernel
    printed no nmi-total. Raises GuestError naming a line that does not
    parse (a tracer line without its context has no CPU)."""
    m = _TRACER_RE.match(text)
    if not m:
        raise GuestError(f"hwlat tracer line not understood (want '<comm>-<pid> [<cpu>] "
                         f"<flags> <sec>.<usec>: #<seq> inner/outer(us): <inner>/<outer> "
                         f"ts:<sec>.<9-digit nsec> count:<n>[ nmi-total:<us>][ "
                         f"nmi-count:<n>]'): {text!r}")
    nmi_count = int(m["nmi_count"] or 0)
    if m["nmi_total"] is not None and not nmi_count:
        raise GuestError(f"hwlat tracer line with nmi-total but no nmi-count: {text!r}")
    if m["nmi_total"] is not None:
        nmi_ns = int(m["nmi_total"]) * 1000
    else:
        nmi_ns = None if nmi_count else 0
    return StreamLine(seq=int(m["seq"]), cpu=int(m["cpu"]),
                      ts=int(m["sec"]) * SEC + int(m["nsec"]), inner=int(m["inner"]) * 1000,
                      outer=int(m["outer"]) * 1000, count=int(m["count"]), nmi_count=nmi_count,
                      nmi_ns=nmi_ns, smi_count=None, raw=text, smi_ns=None, fields=0,
                      backend="tracer")


@dataclass
class GuestRun:
    """Everything one acc-guest run printed, parsed."""
    config: dict = field(default_factory=dict)
    clock_marks: list = field(default_factory=list)   # guest ns
    sampling_mark: int = None                         # guest ns at enable
    mode: str = None
    samples: list = field(default_factory=list)       # StreamLine
    nmi: dict = field(default_factory=dict)           # when -> [per cpu]
    msr: dict = field(default_factory=dict)           # when -> [per cpu]
    smis: list = field(default_factory=list)          # (k, guest ns, cpu)
    smi_gate: dict = field(default_factory=dict)      # k -> (frozen before, after us, outb ns)
    smi_costs: list = field(default_factory=list)     # ns of each control outb
    smi_control: int = None                           # SMIs raised, detector off
    freezes: list = field(default_factory=list)       # (guest ns from, to)
    irqs: dict = field(default_factory=dict)          # (when, tag) -> [per cpu]
    stats: dict = field(default_factory=dict)
    done: int = None
    exit_status: int = None
    dmesg: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)         # HWLAT-NOTE texts
    trace_clock: str = None                           # tracefs trace_clock used
    trace_cal: list = field(default_factory=list)     # (k, guest ns before, after)
    trace: list = field(default_factory=list)         # tracefs lines, verbatim
    trace_end: dict = None                            # lines=, overrun=


def key_values(text):
    """The KEY=VALUE words of a guest line, as a dict of strings."""
    return dict(word.split("=", 1) for word in text.split())


def parse_guest_output(lines):
    """Parses the data channel of one guest boot (lines without newlines).

    Lines without a HWLAT- tag are ignored (there should be none on the data
    channel, but a stray shell message must not break the parse). A tagged
    line that does not parse raises GuestError naming it.
    """
    run = GuestRun()
    in_dmesg = False
    for line in lines:
        line = line.rstrip("\r")
        if in_dmesg:
            if line.startswith("HWLAT-DMESG-END"):
                in_dmesg = False
            else:
                run.dmesg.append(line)
            continue
        tag, _, rest = line.partition(" ")
        try:
            if tag == "HWLAT-SAMPLE":
                run.samples.append(parse_stream_line(rest))
            elif tag == "HWLAT-TRACER":
                run.samples.append(parse_tracer_line(rest))
            elif tag == "HWLAT-CLOCK":
                run.clock_marks.append(int(rest))
            elif tag == "HWLAT-MARK":
                what = rest.split()
                if what[0] == "sampling" and len(what) == 3:
                    run.mode, run.sampling_mark = what[1], int(what[2])
                elif what[0] == "done" and len(what) == 2:
                    run.done = int(what[1])
                else:
                    raise ValueError("unknown mark")
            elif tag == "HWLAT-CONFIG":
                run.config = key_values(rest)
            elif tag == "HWLAT-NMI":
                when, *vals = rest.split()
                run.nmi[when] = [int(x) for x in vals]
            elif tag == "HWLAT-MSR":
                when, *vals = rest.split()
                run.msr[when] = [int(x) for x in vals]
            elif tag == "HWLAT-SMI":
                k, ts, cpu, *kv = rest.split()
                run.smis.append((int(k), int(ts), int(cpu)))
                if kv:
                    d = key_values(" ".join(kv))
                    run.smi_gate[int(k)] = (int(d["frozen_before_us"]),
                                            int(d["frozen_after_us"]), int(d["cost_ns"]))
            elif tag == "HWLAT-SMI-COST":
                k, ns = rest.split()
                run.smi_costs.append(int(ns))
            elif tag == "HWLAT-FREEZE":
                t0, t1 = rest.split()
                run.freezes.append((int(t0), int(t1)))
            elif tag == "HWLAT-IRQ":
                when, what, *vals = rest.split()
                run.irqs[(when, what)] = [int(x) for x in vals]
            elif tag == "HWLAT-STATS":
                run.stats = {k: int(v) for k, v in key_values(rest).items()}
            elif tag == "HWLAT-SMI-CONTROL":
                run.smi_control = int(key_values(rest)["raised"])
            elif tag == "HWLAT-TRACE":
                run.trace.append(rest)
            elif tag == "HWLAT-TRACE-CLOCK":
                run.trace_clock = rest.strip()
            elif tag == "HWLAT-TRACE-CAL":
                k, before, after = rest.split()
                run.trace_cal.append((int(k), int(before), int(after)))
            elif tag == "HWLAT-TRACE-END":
                run.trace_end = {k: int(v) for k, v in key_values(rest).items()}
            elif tag == "HWLAT-NOTE":
                run.notes.append(rest)
            elif tag == "HWLAT-EXIT":
                run.exit_status = int(rest)
            elif tag == "HWLAT-ERROR":
                run.errors.append(rest)
            elif tag == "HWLAT-DMESG-BEGIN":
                in_dmesg = True
        except (ValueError, IndexError) as e:
            raise GuestError(f"malformed guest line {line!r}: {e}") from None
    return run


def check_sequence(samples):
    """Returns problems with the seq numbers (must rise; gaps are drops)."""
    problems = []
    prev = 0
    for s in samples:
        if s.seq <= prev:
            problems.append(f"seq {s.seq} after {prev} (not increasing): {s.raw!r}")
        prev = s.seq
    return problems


def offset_from_clock_marks(marks):
    """marks: [(guest_ns, host_arrival_ns)]. A line arrives after it was
    stamped, so guest - host_arrival <= offset; the largest is the best
    bound. Returns None without marks."""
    if not marks:
        return None
    return max(g - h for g, h in marks)


@dataclass
class Stall:
    start: int      # host realtime ns, midpoint of kill(SIGSTOP)
    end: int        # host realtime ns, midpoint of kill(SIGCONT)

    @property
    def duration(self):
        return self.end - self.start


def _stall_index(t, stalls, tol):
    for i, st in enumerate(stalls):
        if st.start - tol <= t <= st.end + tol:
            return i
    return None


def refine_offset(samples, stalls, coarse, search=2 * SEC, tol=30 * MS, below=None):
    """Offset (guest - host) that lets the most samples fall inside a stall.

    Candidates put each sample's timestamp at the start or the end of each
    stall; only candidates within [coarse - below, coarse + search] count
    (below defaults to search; clock marks give a lower bound, so below can
    be small). Among
    those matching the most samples, the one whose samples sit closest to a
    stall edge wins (a detector stamps every stall at the same edge). Returns
    (offset, matched), or (coarse, 0) when nothing matches.
    """
    cands = set()
    for s in samples:
        for st in stalls:
            for edge in (st.start, st.end):
                c = s.ts - edge
                if coarse is None or coarse - (search if below is None else below) <= c \
                        <= coarse + search:
                    cands.add(c)
    best, best_key = (coarse, 0), None
    for c in sorted(cands):
        n, resid = 0, 0
        for s in samples:
            i = _stall_index(s.ts - c, stalls, tol)
            if i is not None:
                n += 1
                t = s.ts - c
                resid += min(abs(t - stalls[i].start), abs(t - stalls[i].end))
        key = (n, -resid)
        if best_key is None or key > best_key:
            best, best_key = (c, n), key
    return best


@dataclass
class HostDelay:
    """A thread of QEMU (a vCPU thread, where it explains a window) waited
    `wait` ns on the host's run queue; the wait ended between `start` and
    `end` (host realtime ns, two polls of /proc/PID/task/TID/schedstat).
    Measured, not injected: hypervisor latency caused by other load on the
    host."""
    start: int
    end: int
    wait: int
    thread: str


def parse_steal_probe(lines):
    """The host CPU time losses steal-probe (tests/accuracy/steal-probe.c)
    measured: a HostDelay "steal cpuN" per late wake-up, spanning
    [previous wake-up, late wake-up] with that span as its wait (the loss
    lies inside it: an upper bound, good to one probe period), sorted by
    end; and (wakes, late wakes) from its end line. Raises GuestError
    naming the line when the output is cut short or malformed."""
    delays, end = [], None
    for i, text in enumerate(lines):
        f = text.split()
        try:
            if f[:2] == ["steal-probe", "ready"] and i == 0:
                continue
            if f[:2] == ["steal-probe", "end"] and len(f) == 4 and end is None:
                end = (int(f[2]), int(f[3]))
                continue
            if f[0] == "late" and len(f) == 5 and end is None:
                cpu, prev, wake, late = (int(x) for x in f[1:])
                if wake > prev and 0 <= late <= wake - prev:
                    delays.append(HostDelay(prev, wake, wake - prev, f"steal cpu{cpu}"))
                    continue
        except (IndexError, ValueError):
            pass
        raise GuestError(f"steal-probe output line {i + 1} not understood (want 'steal-probe "
                         f"ready N P' first, 'late CPU PREV WAKE LATE' and 'steal-probe end "
                         f"WAKES LATE' last): {text!r}")
    if not lines or not lines[0].startswith("steal-probe ready"):
        raise GuestError("steal-probe never printed its ready line")
    if end is None:
        raise GuestError(f"steal-probe output has no end line ({len(lines)} lines): it did "
                         f"not run to the end of the test")
    if end[1] != len(delays):
        raise GuestError(f"steal-probe counted {end[1]} late wake-ups, printed {len(delays)}")
    delays.sort(key=lambda d: d.end)
    return delays, end


def is_host_loss(delay):
    """A loss of a whole host CPU (parse_steal_probe), not a thread's wait."""
    return delay.thread.startswith("steal cpu")


def vcpu_thread(cpu):
    """QEMU's name for the thread of a vCPU (-name ...,debug-threads=on)."""
    return f"CPU {cpu}/TCG"


def _mine(delays, cpu):
    name = vcpu_thread(cpu)
    return [d for d in delays if d.thread == name]


def host_explanation(sample, delays, offset, width_ns, tol=20 * MS):
    """The run-queue waits of the vCPU threads that can explain a window's
    latency: the wait of one vCPU thread, or two waits of different vCPU
    threads within the latency of each other (a sampler spinning on one vCPU
    can wait for the other, e.g. for an IPI), adding up to at least half the
    latency, inside the window's span [ts - latency - tol, ts + width + tol]
    (ts is the first exceedance; the largest gap may come later). A gap is
    one continuous period without progress, so many small waits never add
    up to an explanation. A host CPU's loss (steal-probe's "steal cpuN")
    explains alone: it pairs with nothing, since the run-queue wait of the
    vCPU thread on that CPU may be the same event seen twice (the host's
    fair server preempts both). Returns the waits, or []."""
    t = sample.ts - offset
    lat = sample.latency
    near = [d for d in delays
            if d.end >= t - lat - tol and d.end - d.wait <= t + width_ns + tol]
    best, best_sum = [], 0
    for d1 in near:
        if d1.wait > best_sum:
            best, best_sum = [d1], d1.wait
        if is_host_loss(d1):
            continue
        for d2 in near:
            if d2.thread == d1.thread or is_host_loss(d2) or abs(d2.end - d1.end) > lat + tol:
                continue
            if d1.wait + d2.wait > best_sum:
                best, best_sum = [d1, d2], d1.wait + d2.wait
    return best if best_sum * 2 >= lat else []


def separate_loss(sample, stall, delays, offset, width_ns, tol=20 * MS):
    """The longest measured host delay inside a window's span that lies
    wholly outside `stall` (it ended before the stop, or began after it
    ended, counting a run-queue wait from before its first poll), when the
    window counted more than one gap above the threshold; else 0. Such a
    window reports its largest gap, which may be that loss and not the
    stall's (measured: a window held a 96.0 ms stop and a 100.4 ms gap
    while the host lost 100 ms)."""
    if sample.count < 2:
        return 0
    t = sample.ts - offset
    return max((d.wait for d in delays
                if d.end >= t - sample.latency - tol and d.end - d.wait <= t + width_ns + tol
                and (d.end <= stall.start or d.start - d.wait >= stall.end)), default=0)


def stall_truth(stall, cpu, delays, poll_slack=3 * MS):
    """Upper bound of how long the sampler on `cpu` could not run around a
    stall, from the host: the stop itself, plus the run-queue wait a vCPU
    thread was in when stopped (accounted when the thread ran to stop: the
    poll right after the stop), plus a vCPU thread's wait to run again after
    SIGCONT. Any vCPU thread counts, not only `cpu`'s: the guest reads its
    clock (HPET) under QEMU's big lock, so a preempted vCPU thread holding
    it stalls the other. How much of those waits fell inside the sampler's
    gap is not observable from the host, so the truth is the band
    [stop, stop + pre + post]; on an idle host both waits are 0 and the band
    is the stop duration. The host's own losses (steal-probe's "steal cpuN"
    delays, per host CPU) count the same way: whichever thread they hit, a
    vCPU could not run. Returns (upper_ns, pre_ns, post_ns)."""
    pre = post = 0
    for name in {d.thread for d in delays}:
        mine = [d for d in delays if d.thread == name]
        pre = max(pre, sum(d.wait for d in mine if d.start <= stall.start <= d.end <= stall.end))
        for d in mine:
            if d.end >= stall.end and d.start - d.wait <= stall.end + poll_slack \
                    and d.end - d.wait >= stall.end - poll_slack:
                post = max(post, d.wait)
                break
    return stall.duration + pre + post, pre, post


# A tracefs "trace" line: "<comm>-<pid> [<cpu>] <irq flags> <sec>.<usec>: <event>: ..."
# (the irq-info column is optional).
_TRACE_RE = re.compile(r"^\s*(?P<task>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?"
                       r"(?P<sec>\d+)\.(?P<frac>\d{1,9}): (?P<event>[\w:]+): (?P<rest>.*)$")
_SWITCH_RE = re.compile(r"^prev_comm=(?P<prev>.*?) prev_pid=(?P<prev_pid>\d+) .*==> "
                        r"next_comm=(?P<next>.*?) next_pid=(?P<next_pid>\d+)")
_CAL_RE = re.compile(r"^hwlat-cal (\d+)$")


def parse_trace_line(text):
    """(cpu, trace clock ns, event, rest) of one tracefs line; raises
    GuestError naming the line (a "[LOST n EVENTS]" line included)."""
    m = _TRACE_RE.match(text)
    if not m:
        raise GuestError(f"trace line not understood (want '<comm>-<pid> [<cpu>] <flags> "
                         f"<sec>.<usec>: <event>: ...'): {text!r}")
    ts = int(m["sec"]) * SEC + int(m["frac"].ljust(9, "0"))
    return int(m["cpu"]), ts, m["event"], m["rest"].strip()


def trace_clock_offset(run, agree_ns=2 * MS):
    """(trace clock - guest CLOCK_REALTIME) in ns, measured by the
    "hwlat-cal <k>" markers the guest wrote between two CLOCK_REALTIME
    reads: the tightest pair wins. Raises GuestError when there is no pair
    or when the markers disagree by more than agree_ns (the clock drifted
    or was stepped against CLOCK_REALTIME during the run)."""
    stamps = {}
    for text in run.trace:
        cpu, ts, event, rest = parse_trace_line(text)
        m = _CAL_RE.match(rest) if event == "tracing_mark_write" else None
        if m:
            stamps[int(m[1])] = ts
    pairs = []
    for k, before, after in run.trace_cal:
        if k in stamps:
            # The trace prints microseconds: 1 us more of uncertainty.
            pairs.append((after - before + 2000, stamps[k] - (before + after) // 2))
    if not pairs:
        raise GuestError(f"no trace calibration marker pairs up with a HWLAT-TRACE-CAL line "
                         f"({len(run.trace_cal)} CAL lines, {len(stamps)} markers traced)")
    pairs.sort()
    offs = [o for _, o in pairs]
    if max(offs) - min(offs) > agree_ns + pairs[-1][0]:
        raise GuestError(f"trace clock {run.trace_clock} vs CLOCK_REALTIME: calibration "
                         f"offsets {min(offs)} to {max(offs)} ns disagree by more than "
                         f"{agree_ns / MS:g} ms")
    return offs[0]


def sampler_runs(run, pattern):
    """On-CPU periods of the threads whose comm matches the regular
    expression `pattern`, from the guest's sched_switch trace:
    [(cpu, comm, start, end)] in guest CLOCK_REALTIME ns. A period starts
    with a switch to the thread and ends with the next switch away from it
    on that CPU; one still open at the end of the trace is dropped. Raises
    GuestError when the trace is incomplete (no end line, lost events,
    a switch away from a thread that was not running) or malformed."""
    if run.trace_end is None:
        raise GuestError("no HWLAT-TRACE-END line (the trace was cut short)")
    if run.trace_end.get("overrun", 0):
        raise GuestError(f"the trace lost {run.trace_end['overrun']} events (ring buffer "
                         f"overrun)")
    if run.trace_end.get("lines") != len(run.trace):
        raise GuestError(f"the guest printed {run.trace_end.get('lines')} trace lines, the "
                         f"host got {len(run.trace)}")
    off = trace_clock_offset(run)
    rx = re.compile(pattern)
    current = {}               # cpu -> (pid, comm, start)
    runs = []
    for text in run.trace:
        cpu, ts, event, rest = parse_trace_line(text)
        if event != "sched_switch":
            continue
        m = _SWITCH_RE.match(rest)
        if not m:
            raise GuestError(f"sched_switch line not understood: {text!r}")
        cur = current.pop(cpu, None)
        if cur and cur[0] == int(m["prev_pid"]):
            runs.append((cpu, cur[1], cur[2] - off, ts - off))
        elif cur:
            raise GuestError(f"cpu {cpu}: switch away from pid {m['prev_pid']} while the "
                             f"trace had pid {cur[0]} ({cur[1]}) on it: {text!r}")
        if rx.fullmatch(m["next"]):
            current[cpu] = (int(m["next_pid"]), m["next"], ts)
    return runs


# Which threads run the widths, per mode (src/sampler.c): hwlatd in
# round-robin and none, hwlatd/N in per-cpu (the kernel's hwlat tracer names
# its threads the same way, kernel/trace/trace_hwlat.c), the CPU stopper
# threads migration/N in stop-machine (both CPUs' stoppers spin with
# interrupts off for the width).
SAMPLER_THREADS = {"round-robin": r"hwlatd", "per-cpu": r"hwlatd/\d+",
                   "stop-machine": r"migration/\d+", "none": r"hwlatd"}


def sampling_widths(run, mode, width_ns, min_fraction=0.5, cpu=None):
    """The widths of a run: on-CPU periods of the mode's sampler threads
    that lasted at least min_fraction of the width (a sampler runs a width
    with interrupts off, so such a period is a width; the short periods
    between wake-up and width, e.g. before a round-robin migration, are
    not). The width is the first width_ns of such a period: the guest
    clock runs on through a stall, so a width spans width_ns of guest time
    from its start whatever happened in it, and the rest of the period is
    the report after it (a stall that begins there extends the period but
    was not inside the width). The period also starts a little before the
    width (the tail of a migration, interrupts being disabled; stop-machine:
    the stopper threads synchronising), which the traced start cannot
    separate: an error of that overhead at each edge. cpu: only the
    periods traced on that CPU (per-cpu mode: its hwlatd/N). Returns
    ([(start, end)] guest ns, None), or (None, why) when the run has no
    usable trace."""
    if not run.trace and run.trace_end is None:
        why = next((n for n in run.notes if "tracing" in n), "the guest printed no trace")
        return None, why
    try:
        runs = sampler_runs(run, SAMPLER_THREADS[mode])
    except GuestError as e:
        return None, str(e)
    widths = sorted((s, min(e, s + width_ns)) for c, _, s, e in runs
                    if e - s >= width_ns * min_fraction and (cpu is None or c == cpu))
    if not widths:
        return None, (f"the trace holds no on-CPU period of {SAMPLER_THREADS[mode]} of at "
                      f"least {min_fraction:.0%} of the width"
                      + ("" if cpu is None else f" on cpu {cpu}"))
    return widths, None


def in_widths(t, widths):
    """Whether guest time t lies inside one of the (start, end) widths."""
    return any(s <= t <= e for s, e in widths)


def coverage(widths, start, end):
    """The fraction of [start, end] (guest ns) that the union of `widths`
    [(start, end)] covers: the time some CPU was inside a width."""
    if end <= start:
        return 0.0
    covered, reach = 0, start
    for s, e in sorted(widths):
        s, e = max(s, reach), min(e, end)
        if e > s:
            covered += e - s
            reach = e
    return covered / (end - start)


def judge_coverage(widths, start, end, promised, margin=0.05):
    """The traced widths must cover the sampling time the settings
    promise (width / window, or 1 when staggered per-cpu widths overlap)
    within `margin`. Time lost to wake-ups, migrations or the report path
    shows as coverage below the promise. Returns (fraction, failure or
    None)."""
    got = coverage(widths, start, end)
    if got < promised - margin - 1e-9:
        return got, (f"the widths covered {got:.3f} of the {(end - start) / SEC:.1f} s "
                     f"sampled, the settings promise {promised:.2f} (at least "
                     f"{promised - margin:.2f} required)")
    return got, None


@dataclass
class StallResult:
    stalls: int
    found: int
    over_threshold: int
    matched_samples: int
    recall: float
    precision: float
    errors_ns: list          # |latency - measured truth| per matched window
    raw_errors_ns: list      # |latency - stop duration| per matched window
    over_stop_ns: list       # latency - stop duration (signed) per matched window
    worst_error_ns: int
    median_error_ns: float
    offset_ns: int
    failures: list
    unmatched: list = field(default_factory=list)   # windows > threshold, no stall
    host_noise: list = field(default_factory=list)  # (window, [HostDelay]) explained
    pairs: list = field(default_factory=list)       # (stall index, window, truth, pre, post)
    eligible: list = None    # indices of stalls that began inside a width (None: unknown)
    need: float = 0.0        # recall required
    bound: str = ""          # where `need` comes from

    @property
    def eligible_fraction(self):
        return len(self.eligible) / self.stalls if self.eligible is not None and self.stalls \
            else None

    def summary(self):
        host = f", {len(self.host_noise)} more explained by host load" if self.host_noise else ""
        raw = max(self.raw_errors_ns, default=0)
        return (f"recall {self.recall:.2f} ({self.found}/{self.stalls}) >= {self.need:.2f} "
                f"({self.bound}) precision "
                f"{self.precision:.2f} ({self.matched_samples}/"
                f"{self.over_threshold - len(self.host_noise)}{host}) worst error "
                f"{self.worst_error_ns / MS:.2f} ms median error {self.median_error_ns / MS:.2f} ms"
                f" (vs stop alone: worst {raw / MS:.2f} ms, median "
                f"{statistics.median(self.raw_errors_ns or [0]) / MS:.2f} ms)")


def match_stalls(samples, stalls, offset, threshold_ns, width_ns, window_ns, per_cpu,
                 tol=100 * MS, recall_margin=0.10, slack_ns=MS, strict=True, host_delays=(),
                 pair_gate_ns=5 * MS, widths=None, widths_note=None):
    """Matches detector windows against injected stalls and judges them.

    Required: precision 1 (every window above the threshold is an
    injected stall: no invented latency), recall >= the fraction of stalls
    that started inside a sampling width, minus recall_margin (a stall that
    begins while the sampler sleeps is legitimately missed; a stall seen on
    several CPUs in per-cpu mode counts once). `widths` are the traced
    widths, [(start, end)] in guest ns (sampling_widths); a stall started
    inside one when its host start + offset lies in it. Without them
    (widths None, widths_note says why) the bound is the old fixed
    width/window - recall_margin. Magnitude: latency within 1 ms + 1 % of the truth band for every
    matched window,
    and no NMI or SMI attributed to those windows. A window that names no
    reason at all (not above the threshold, no NMI, no SMI) breaks the stream
    contract.

    A window's span is [ts - tol, ts + width + tol] in host time (ts is its
    first exceedance; its largest gap can come later). Each stall takes, among
    the windows whose span it overlaps (per CPU in per-cpu mode), the one whose
    latency is closest to the stall's truth band, if within pair_gate_ns + 25 %
    (a window further off did not see the stall: it is judged on its own, as
    possibly invented, and the stall may count as missed). The band runs from
    the stop timed around kill() to that plus the host run-queue waits of
    the vCPU threads right before and after it (stall_truth; one value on an
    idle host); errors against the stop alone are reported too. A window
    above the threshold that no stall takes is "invented" unless measured
    run-queue waits of the vCPU threads explain it (host_explanation): those
    are listed in .host_noise and left out of precision (the detector was
    right, the guest really stalled).

    strict=False (the user-space harness self-check) drops the precision
    requirement (a user-space spinner also sees guest interrupts) and allows
    slack_ns + 1 % of error instead of 1 ms + 1 %.
    """
    failures = []
    over = [s for s in samples if s.latency > threshold_ns]
    for s in samples:
        if s.latency <= threshold_ns and s.nmi_count == 0 and s.smis == 0:
            failures.append(f"window reported without a reason (latency {s.latency} ns <= "
                            f"threshold, no NMI, no SMI): {s.raw!r}")
    # Candidate (error, stall, window) pairs, best first; greedy assignment.
    cands = []
    for j, s in enumerate(over):
        t = s.ts - offset
        for i, st in enumerate(stalls):
            if st.end >= t - tol and st.start <= t + width_ns + tol:
                truth, pre, post = stall_truth(st, s.cpu, host_delays)
                truth = max(truth, separate_loss(s, st, host_delays, offset, width_ns))
                err = max(0, st.duration - s.latency, s.latency - truth)
                # A window whose largest gap is nowhere near the stall did
                # not see it (the stall fell in its sleep, or in the next
                # window): it must stand on its own, and the stall counts
                # as missed unless another window took it.
                if err <= pair_gate_ns + truth // 4:
                    cands.append((err, i, j, truth, pre, post))
    cands.sort()
    taken_w, taken_sc = set(), set()
    pairs = []
    for err, i, j, truth, pre, post in cands:
        key = (i, over[j].cpu) if per_cpu else (i,)
        if j in taken_w or key in taken_sc:
            continue
        taken_w.add(j)
        taken_sc.add(key)
        pairs.append((i, over[j], truth, pre, post))
    pairs.sort(key=lambda p: (p[0], p[1].cpu))
    errors, raw_errors, over_stop = [], [], []
    for i, s, truth, pre, post in pairs:
        err = max(0, stalls[i].duration - s.latency, s.latency - truth)
        errors.append(err)
        raw_errors.append(abs(s.latency - stalls[i].duration))
        over_stop.append(s.latency - stalls[i].duration)
        if err > slack_ns + truth // 100:
            failures.append(f"magnitude: stall {i} stopped {stalls[i].duration / MS:.3f} ms "
                            f"(truth band up to {truth / MS:.3f} ms with the host run-queue "
                            f"waits of the vCPU threads, {pre / MS:.3f} before and {post / MS:.3f} "
                            f"after), window reports {s.latency / MS:.3f} ms (error "
                            f"{err / MS:.3f} ms outside the band > {slack_ns / MS:g} ms + "
                            f"1 %): {s.raw!r}")
        if s.nmi_count or s.smis:
            failures.append(f"attribution: stall {i} window carries nmi_count {s.nmi_count} "
                            f"smi_count {s.smi_count} (none were injected): {s.raw!r}")
        if s.count < 1:
            failures.append(f"window above threshold with count 0: {s.raw!r}")
    unmatched, host_noise = [], []
    for j, s in enumerate(over):
        if j in taken_w:
            continue
        why = host_explanation(s, host_delays, offset, width_ns)
        if why:
            host_noise.append((s, why))
            continue
        unmatched.append(s)
        if strict:
            near = [f"{i} ({st.duration / MS:.1f} ms at host {st.start / SEC:.3f})"
                    for i, st in enumerate(stalls)
                    if abs(st.start - (s.ts - offset)) < 2 * SEC]
            failures.append(f"invented latency: {s.latency / MS:.3f} ms, first exceedance at "
                            f"guest {s.ts / SEC:.3f} (host {(s.ts - offset) / SEC:.3f}), is no "
                            f"injected stall (stalls near: {', '.join(near) or 'none'}) and "
                            f"no measured host wait of the vCPU threads explains it: {s.raw!r}")
    n = len(stalls)
    found = {i for i, *_ in pairs}
    recall = len(found) / n if n else 0.0
    judged = len(over) - len(host_noise)
    precision = (judged - len(unmatched)) / judged if judged else 0.0
    if widths is not None:
        eligible = [i for i, st in enumerate(stalls) if in_widths(st.start + offset, widths)]
        need = (len(eligible) / n if n else 0.0) - recall_margin
        bound = (f"eligible {len(eligible)}/{n} started inside a traced width, minus "
                 f"{recall_margin:.2f}")
    else:
        eligible = None
        need = width_ns / window_ns - recall_margin
        bound = (f"fixed width/window - {recall_margin:.2f}: no traced widths"
                 + (f", {widths_note}" if widths_note else ""))
    if n == 0:
        failures.append("no stall was injected")
    elif recall < need - 1e-9:
        missed = [i for i in range(n) if i not in found]

        def where(i):
            if eligible is None:
                return ""
            return ", inside a width" if i in eligible else ", in a sleep gap"
        failures.append(f"recall {recall:.2f} < {need:.2f} ({bound}): missed stalls "
                        + ", ".join(f"{i} ({stalls[i].duration / MS:.1f} ms at host "
                                    f"{stalls[i].start / SEC:.3f}{where(i)})" for i in missed))
    if not over:
        failures.append("no window above the threshold at all")
    return StallResult(stalls=n, found=len(found), over_threshold=len(over),
                       matched_samples=len(pairs), recall=recall, precision=precision,
                       errors_ns=errors, raw_errors_ns=raw_errors, over_stop_ns=over_stop,
                       worst_error_ns=max(errors) if errors else 0,
                       median_error_ns=statistics.median(errors) if errors else 0.0,
                       offset_ns=offset, failures=failures, unmatched=unmatched,
                       host_noise=host_noise, pairs=pairs, eligible=eligible, need=need,
                       bound=bound)


def where_in_widths(t, widths, guard_ns):
    """Where guest time t lies against the traced widths [(start, end)]:
    "inside" (more than guard_ns from both edges of a width), "edge" (within
    guard_ns of a width's start or end: the clock offset and the traced
    edges are only that good, so neither counted nor missed is wrong) or
    "gap" (in no width: the sampler slept, nothing may count it)."""
    for s, e in widths:
        if s - guard_ns <= t <= e + guard_ns:
            return "edge" if min(abs(t - s), abs(t - e)) <= guard_ns else "inside"
    return "gap"


def width_edge_distance(t, widths):
    """Signed distance of guest time t from the nearest edge of the widths:
    positive inside a width, negative outside (for the test's report)."""
    best = None
    for s, e in widths:
        d = min(t - s, e - t)
        if best is None or abs(d) < abs(best) or (d >= 0 > best):
            best = d
    return best


@dataclass
class NmiCpu:
    """The judgement of one CPU that took injected NMIs."""
    cpu: int
    took: int                # /proc/interrupts delta
    counted: int             # the stream's nmi_count total on this CPU
    attributed: int          # injections matched to this CPU's windows
    inside: list = None      # injection indices inside a traced width (None: no trace)
    edge: list = None        # ... within the guard band of a width's edge
    gap: list = None         # ... in a sleep gap
    need: int = 0            # nmi_count total required at least
    bound: str = ""          # where `need` comes from

    def summary(self):
        if self.inside is None:
            where = ""
        else:
            where = (f", inside a width {len(self.inside)}, at an edge {len(self.edge)}, "
                     f"in a sleep gap {len(self.gap)}")
        return (f"cpu{self.cpu} took {self.took}{where}, stream counts {self.counted}, "
                f"attributed {self.attributed} (>= {self.need} required: {self.bound})")


@dataclass
class NmiResult:
    injected: int
    delivered: list          # per CPU, from /proc/interrupts
    stream_total: int
    attributed: dict         # cpu -> injections found on that cpu
    recall: dict             # cpu -> fraction
    failures: list
    cpus: dict = field(default_factory=dict)   # cpu -> NmiCpu, CPUs that took NMIs

    def summary(self):
        return (f"injected {self.injected}, delivered {sum(self.delivered)} "
                f"({'+'.join(map(str, self.delivered))}), stream nmi_count total "
                f"{self.stream_total}; "
                + "; ".join(c.summary() for _, c in sorted(self.cpus.items())))


def match_nmis(samples, injections, offset, nmi_before, nmi_after, threshold_ns, width_ns,
               window_ns, tol=50 * MS, recall_margin=0.10, widths=None, widths_note=None,
               guard_ns=5 * MS):
    """Judges NMI attribution against host-injected NMIs.

    injections: host realtime ns of each inject-nmi. nmi_before/after: the
    guest's /proc/interrupts NMI counts per CPU around the run (the ground
    truth of who took them). A window's span is [ts, ts + width] when no gap
    exceeded the threshold (ts is then the window's start), else
    [ts - width, ts + width] (ts is the first exceedance, anywhere in the
    width); +- tol. Injections are assigned to windows of a CPU nearest first,
    each window taking at most nmi_count of them (inject >= 2 s apart, so
    that a span holds one). Required: every window with nmi_count > 0 gets
    that many injections; per CPU, the stream never counts more NMIs than the
    CPU took; 0 < nmi_ns <= nmi_count * max(inner, outer).

    Recall, per CPU that took NMIs: `widths` maps a CPU to the widths its
    sampler was traced running ([(start, end)] guest ns, sampling_widths);
    an injection (host time + offset) is "inside", at an "edge" (within
    guard_ns of one) or in a sleep "gap" (where_in_widths). nmi_count only
    counts NMIs taken during a width, so the CPU's stream total must be at
    least the number inside and at most inside + edge (+ NMIs the CPU took
    beyond those injected). A CPU without traced widths (widths None or
    missing the CPU; widths_note says why) falls back to the old fixed
    bound: width/window - recall_margin of the NMIs it took attributed.
    """
    failures = []
    if len(nmi_before) != len(nmi_after) or not nmi_before:
        raise GuestError(f"NMI counts before {nmi_before} and after {nmi_after} do not pair up")
    delivered = [a - b for a, b in zip(nmi_after, nmi_before)]
    ncpu = len(delivered)
    stream_total = 0
    per_cpu_total = [0] * ncpu
    windows = []
    for s in samples:
        if s.nmi_count == 0:
            continue
        stream_total += s.nmi_count
        if s.cpu >= ncpu:
            failures.append(f"window on cpu {s.cpu} but the guest has {ncpu} CPUs: {s.raw!r}")
            continue
        per_cpu_total[s.cpu] += s.nmi_count
        windows.append(s)
        if s.nmi_ns is not None and not 0 < s.nmi_ns <= s.nmi_count * s.latency:
            failures.append(f"nmi_ns {s.nmi_ns} not in (0, nmi_count * max(inner, outer) = "
                            f"{s.nmi_count * s.latency}]: {s.raw!r}")
    cands = []
    for j, s in enumerate(windows):
        t = s.ts - offset
        lo = t - tol - (width_ns if s.count else 0)
        hi = t + width_ns + tol
        for i, inj in enumerate(injections):
            if lo <= inj <= hi:
                cands.append((abs(inj - t), i, j))
    cands.sort()
    got = [[] for _ in windows]
    used = set()               # (injection, cpu)
    for _, i, j in cands:
        s = windows[j]
        if (i, s.cpu) in used or len(got[j]) >= s.nmi_count:
            continue
        used.add((i, s.cpu))
        got[j].append(i)
    attributed = {}
    for j, s in enumerate(windows):
        attributed.setdefault(s.cpu, set()).update(got[j])
        if not got[j]:
            failures.append(f"nmi_count {s.nmi_count} in a window at guest {s.ts / SEC:.3f} "
                            f"(host {(s.ts - offset) / SEC:.3f}) that holds no injected NMI: "
                            f"{s.raw!r}")
        elif len(got[j]) != s.nmi_count:
            failures.append(f"nmi_count {s.nmi_count} but {len(got[j])} NMIs were injected "
                            f"in the window: {s.raw!r}")
    for s in samples:
        if s.nmi_count == 0 and s.smis == 0 and s.latency <= threshold_ns:
            failures.append(f"window reported without a reason: {s.raw!r}")
    for c in range(ncpu):
        if per_cpu_total[c] > delivered[c]:
            failures.append(f"cpu {c}: stream counts {per_cpu_total[c]} NMIs but "
                            f"/proc/interrupts shows {delivered[c]} taken")
    if sum(delivered) < len(injections):
        failures.append(f"/proc/interrupts shows {sum(delivered)} NMIs for {len(injections)} "
                        f"injected (ground truth lost)")
    frac = width_ns / window_ns - recall_margin
    recall, cpus = {}, {}
    for c in range(ncpu):
        base = min(delivered[c], len(injections))
        if base == 0:
            continue
        mine = attributed.get(c, set())
        recall[c] = len(mine) / base
        r = NmiCpu(cpu=c, took=delivered[c], counted=per_cpu_total[c], attributed=len(mine))
        cpus[c] = r

        def at(i):
            return (f"{i} (host {injections[i] / SEC:.3f}, guest "
                    f"{(injections[i] + offset) / SEC:.3f})")
        if widths is not None and widths.get(c):
            cls = [where_in_widths(inj + offset, widths[c], guard_ns) for inj in injections]
            r.inside = [i for i, w in enumerate(cls) if w == "inside"]
            r.edge = [i for i, w in enumerate(cls) if w == "edge"]
            r.gap = [i for i, w in enumerate(cls) if w == "gap"]
            extra = max(0, delivered[c] - len(injections))
            r.need = len(r.inside)
            r.bound = (f"the injections inside a traced width of cpu {c}, edges +-"
                       f"{guard_ns / MS:g} ms neither required nor forbidden")
            if per_cpu_total[c] < r.need:
                missed = [i for i in r.inside if i not in mine]
                failures.append(f"cpu {c}: stream counts {per_cpu_total[c]} NMIs, but "
                                f"{r.need} arrived inside a width (> {guard_ns / MS:g} ms from "
                                f"its edges); inside and not attributed: "
                                + (", ".join(map(at, missed)) or "none matched"))
            most = len(r.inside) + len(r.edge) + extra
            if per_cpu_total[c] > most:
                failures.append(f"cpu {c}: stream counts {per_cpu_total[c]} NMIs, but only "
                                f"{most} arrived inside a width or at its edge"
                                + (f" (with {extra} taken beyond those injected)" if extra else "")
                                + "; in a sleep gap: " + (", ".join(map(at, r.gap)) or "none"))
        else:
            r.need = -int(-(frac - 1e-9) * base // 1)
            r.bound = (f"fixed width/window - {recall_margin:.2f} = {frac:.2f} of {base}: no "
                       f"traced widths of cpu {c}"
                       + (f", {widths_note}" if widths_note else ""))
            if len(mine) < r.need:
                failures.append(f"cpu {c}: {len(mine)} of {base} NMIs it took were attributed "
                                f"({recall[c]:.2f} < {frac:.2f}, {r.bound})")
    return NmiResult(injected=len(injections), delivered=delivered, stream_total=stream_total,
                     attributed={c: len(v) for c, v in attributed.items()}, recall=recall,
                     failures=failures, cpus=cpus)


@dataclass
class SmiCheck:
    """The judgement of one run with raised SMIs."""
    raised: int
    msr_delta: list          # per CPU, None without MSR access
    takers: str              # "every CPU" (broadcast) or "the raising CPU"
    placed: dict             # cpu -> {"inside": n, "edge": n, "gap": n}
    expected: dict           # cpu -> SMIs its stream must count
    counted: dict            # cpu -> the stream's smi_count total
    method: str              # "sum" or "max-per-cpu"
    machine_expected: int
    machine_total: int
    windows: int             # windows with smi_count > 0
    failures: list
    ns_failures: list = field(default_factory=list)   # smi_ns checks (check_ns)
    ns_windows: int = 0      # windows with an SMI whose smi_ns was judged
    exact_ns: int = 0        # ... of them with one gap: smi_ns == the gap
    noise_windows: int = 0   # windows with gaps over the threshold and no SMI
    noise_gaps: int = 0      # gaps over the threshold that held no SMI (at least)
    smi_ns_range: tuple = (None, None)
    ns_vs_cost: list = field(default_factory=list)   # (k, smi_ns, raising CPU's outb ns)

    def summary(self):
        msr = "n/a" if self.msr_delta is None else "+".join(map(str, self.msr_delta))
        per = ", ".join(f"cpu{c} {self.counted.get(c, 0)} (expected {e})"
                        for c, e in sorted(self.expected.items()))
        return (f"raised {self.raised} (taken by {self.takers}), MSR_SMI_COUNT delta per CPU "
                f"{msr}; stream per CPU: {per}; machine total ({self.method}) "
                f"{self.machine_total} (expected {self.machine_expected}) in {self.windows} "
                f"windows")

    def ns_summary(self):
        lo, hi = self.smi_ns_range
        rng = "none" if lo is None else f"{lo / 1000:.0f}-{hi / 1000:.0f} us"
        return (f"{self.ns_windows} windows held an SMI, smi_ns {rng} ({self.exact_ns} with a "
                f"single gap over the threshold, where smi_ns must equal it); "
                f"{self.noise_windows} windows without an SMI not flagged, "
                f"{self.noise_gaps} gaps of TCG noise over the threshold in all")


def _width_of(ts, widths, tol=2 * MS):
    """Index of the traced width holding a window's ts (its first exceedance
    or its start, which follows the traced start by the switch overhead)."""
    for i, (s, e) in enumerate(widths):
        if s - tol <= ts <= e + tol:
            return i
    return None


def judge_smis(samples, smis, widths, msr_before, msr_after, method, broadcast=True,
               threshold_ns=None, check_ns=False, guard_ns=2 * MS, costs=None,
               want_raised=None):
    """Judges SMI counting as docs/interfaces.md defines it.

    smis: [(k, guest ns, raising cpu)]. widths: {cpu: [(start, end)]}, the
    traced widths of every CPU that sampled. A window's smi_count is the
    SMIs its CPU took during its width: with broadcast firmware (OVMF) every
    CPU takes every SMI, else (SeaBIOS) only the raising CPU. Each SMI is
    placed against each taking CPU's widths (where_in_widths, guard_ns): one
    inside a width must be counted in that width's window, one in a sleep
    gap must not; one at an edge makes the expected count unknowable and
    fails the test (the raising side places SMIs far from edges on purpose).
    Required: the MSR deltas show the firmware's behaviour (N on every CPU
    with broadcast; N on the raising CPU and 0 elsewhere without); per
    width, the window's smi_count equals the SMIs inside it; per CPU the
    stream's total equals the SMIs inside its widths; the machine total
    (method "sum": the sum of the windows, one sampler at a time;
    "max-per-cpu": the largest per-CPU total) equals the SMIs inside a
    width of some sampler.

    check_ns (threshold below the SMI's cost): every window whose width held
    an SMI has threshold < smi_ns <= inner + outer (the module reads the
    counter once per loop iteration, after its outer and inner gap, and
    charges both when both exceeded the threshold), and smi_ns equal to
    max(inner, outer) when it had a single gap over the threshold (that gap
    is the SMI's). The raising CPU's time in the outb (costs: {k: ns}) is
    only reported next to smi_ns: it includes waiting in SMM for the sampler
    to arrive, which under TCG can be most of it (measured: smi_ns 52 us for
    a 458 us outb), so it bounds nothing on the sampler's side. Every other
    window has smi_count 0 and smi_ns 0 even when TCG's own noise put gaps
    over the threshold in it.
    """
    failures, ns_fail = [], []
    raised = len(smis)
    ncpu = max([len(msr_after or [])] + [c + 1 for c in widths] + [s.cpu + 1 for s in samples])
    msr_delta = None
    if msr_before and msr_after:
        if len(msr_before) != len(msr_after):
            raise GuestError(f"MSR counts before {msr_before} and after {msr_after} differ "
                             f"in length")
        msr_delta = [x - y for x, y in zip(msr_after, msr_before)]
        for c, d in enumerate(msr_delta):
            want = raised if broadcast else sum(1 for _, _, rc in smis if rc == c)
            if d != want:
                failures.append(f"MSR_SMI_COUNT of cpu {c} rose by {d}, the firmware "
                                f"{'broadcasts' if broadcast else 'does not broadcast'}: "
                                f"{want} expected (ground truth disagrees with itself)")
    placed, expected, inside_at = {}, {}, {}
    for c, ws in sorted(widths.items()):
        placed[c] = {"inside": 0, "edge": 0, "gap": 0}
        expected[c] = 0
        for k, t, rc in smis:
            if not broadcast and rc != c:
                continue
            where = where_in_widths(t, ws, guard_ns)
            placed[c][where] += 1
            if where == "inside":
                expected[c] += 1
                i = _width_of(t, ws, tol=0)
                inside_at.setdefault((c, i), []).append(k)
            elif where == "edge":
                failures.append(f"SMI {k} at guest {t / SEC:.3f} is within {guard_ns / MS:g} ms "
                                f"of an edge of a width of cpu {c} "
                                f"({width_edge_distance(t, ws) / MS:+.3f} ms): whether it "
                                f"counts is not knowable, the test cannot be exact")
    counted = {}
    smi_windows = [s for s in samples if s.smis > 0]
    for s in samples:
        if s.smi_count is None:
            failures.append(f"smi_count '-' (unavailable) on a CPU that counts SMIs: {s.raw!r}")
            continue
        counted[s.cpu] = counted.get(s.cpu, 0) + s.smi_count
        ws = widths.get(s.cpu)
        i = _width_of(s.ts, ws) if ws else None
        held = inside_at.get((s.cpu, i), []) if i is not None else []
        if i is None and s.smi_count:
            failures.append(f"window on cpu {s.cpu} at guest {s.ts / SEC:.3f} counts "
                            f"{s.smi_count} SMIs and lies in no traced width of that CPU: "
                            f"{s.raw!r}")
        elif s.smi_count != len(held):
            failures.append(f"window on cpu {s.cpu} at guest {s.ts / SEC:.3f} counts "
                            f"{s.smi_count} SMIs, its width held {len(held)} "
                            f"({', '.join(map(str, held)) or 'none'}): {s.raw!r}")
    reported = {(s.cpu, _width_of(s.ts, widths.get(s.cpu, []))) for s in samples}
    for (c, i), ks in sorted(inside_at.items()):
        if (c, i) not in reported:
            failures.append(f"cpu {c}: SMIs {', '.join(map(str, ks))} inside a width "
                            f"(guest {widths[c][i][0] / SEC:.3f}) that reported no window")
    for c, want in sorted(expected.items()):
        if counted.get(c, 0) != want:
            failures.append(f"cpu {c}: stream smi_count total {counted.get(c, 0)}, "
                            f"{want} SMIs were inside its widths")
    for c in sorted(set(counted) - set(expected)):
        if counted[c]:
            failures.append(f"cpu {c} counted {counted[c]} SMIs but was traced sampling no "
                            f"width")
    if method == "sum":
        machine, machine_expected = sum(counted.values()), sum(expected.values())
    elif method == "max-per-cpu":
        machine = max(counted.values(), default=0)
        machine_expected = max(expected.values(), default=0)
    else:
        raise ValueError(f"unknown SMI total method {method!r}")
    if machine != machine_expected:
        failures.append(f"machine total ({method}) {machine}, expected {machine_expected}")
    if raised == 0:
        failures.append("no SMI was raised")
    elif want_raised is not None and raised != want_raised:
        failures.append(f"{raised} SMIs raised, {want_raised} wanted (the raising side found "
                        f"too few widths to raise them in)")
    r = SmiCheck(raised=raised, msr_delta=msr_delta,
                 takers="every CPU" if broadcast else "the raising CPU", placed=placed,
                 expected=expected, counted=counted, method=method,
                 machine_expected=machine_expected, machine_total=machine,
                 windows=len(smi_windows), failures=failures)
    if not check_ns:
        return r
    no_field = [s for s in samples if s.smi_ns is None]
    if no_field:
        ns_fail.append(f"{len(no_field)} of {len(samples)} windows have no smi_ns "
                       f"({'old 10-field lines' if no_field[0].fields == 10 else 'smi_ns -'}),"
                       f" e.g. {no_field[0].raw!r}")
    vals = []
    for s in samples:
        if s.smi_ns is None:
            continue
        i = _width_of(s.ts, widths.get(s.cpu, []))
        held = inside_at.get((s.cpu, i), []) if i is not None else []
        if held:
            r.ns_windows += 1
            vals.append(s.smi_ns)
            if costs and len(held) == 1 and held[0] in costs:
                r.ns_vs_cost.append((held[0], s.smi_ns, costs[held[0]]))
            if not threshold_ns < s.smi_ns <= s.inner + s.outer:
                ns_fail.append(f"window holding SMI {', '.join(map(str, held))}: smi_ns "
                               f"{s.smi_ns} not in (threshold {threshold_ns}, inner + outer "
                               f"{s.inner + s.outer}]: {s.raw!r}")
            elif s.count == 1:
                r.exact_ns += 1
                if s.smi_ns != s.latency:
                    ns_fail.append(f"window holding SMI {', '.join(map(str, held))} with one "
                                   f"gap over the threshold: smi_ns {s.smi_ns} != that gap "
                                   f"{s.latency}: {s.raw!r}")
            r.noise_gaps += s.count - 1
        else:
            r.noise_gaps += s.count
            if s.count:
                r.noise_windows += 1
            if s.smi_ns or s.smis:
                ns_fail.append(f"window that held no SMI flagged: smi_count {s.smi_count} "
                               f"smi_ns {s.smi_ns}: {s.raw!r}")
    held_widths = len(inside_at)
    if r.ns_windows != held_widths:
        ns_fail.append(f"{held_widths} widths held an SMI, {r.ns_windows} windows for them "
                       f"carry smi_ns")
    if vals:
        r.smi_ns_range = (min(vals), max(vals))
    r.ns_failures = ns_fail
    return r


# "WARNING: CPU: n PID: ..." is a WARN() splat; a bare "WARNING:" is not
# (the Skylake model's boot prints "RETBleed: WARNING: Spectre v2 mitigation
# leaves CPU vulnerable ...", a mitigation notice).
_DMESG_BAD = re.compile(r"WARNING: CPU:|WARNING: at |cut here|BUG:|Oops|[Ll]ockup|hung task"
                        r"|Call Trace|general protection"
                        r"|RCU stall|self-detected stall|Kernel panic|NMI received for unknown"
                        r"|Dazed and confused|double fault|segfault")
_DMESG_NMI_OK = re.compile(r"NMI received for unknown reason|Dazed and confused"
                           r"|Do you have a strange power saving mode")


# The kernel echoes its command line, whose options may name what
# _DMESG_BAD looks for (softlockup_all_cpu_backtrace=1).
_DMESG_CMDLINE = re.compile(r"\] (Kernel c|C)ommand line: ")


def dmesg_problems(lines, allow_unknown_nmi=False):
    """dmesg lines that show a kernel problem. The unknown-NMI lines are
    allowed only where the test injects NMIs."""
    bad = []
    for line in lines:
        if not _DMESG_BAD.search(line) or _DMESG_CMDLINE.search(line):
            continue
        if allow_unknown_nmi and _DMESG_NMI_OK.search(line):
            continue
        bad.append(line)
    return bad


# ------------------------------------------------------ bench/accuracy-vs-tracer

@dataclass
class VersusRow:
    """One backend and mode of bench/accuracy-vs-tracer, from the same
    judges as the accuracy suite (match_stalls, match_nmis). None: not
    measured (error says why, or nothing to compute it from)."""
    backend: str                 # "module" or "tracer"
    mode: str
    stalls: int = 0
    found: int = 0
    recall: float = None
    eligible: int = None         # stalls begun inside a traced width (None: no trace)
    duty: float = None           # traced_duty() of the widths (None: no trace)
    precision: float = None      # None: no window above the threshold at all
    over_threshold: int = 0
    median_error_ns: float = None
    worst_error_ns: int = None
    median_over_stop_ns: float = None   # latency - stop (signed), median over matched windows
    median_waits_ns: float = None       # the truth band's width (measured vCPU waits), median
    matched: int = 0             # windows matched to a stall (per CPU in per-cpu mode)
    magnitude_misses: int = 0    # ... off by more than 1 ms + 1 % of the truth
    nmi_injected: int = None
    nmi_inside: int = None       # NMIs inside a traced width of the CPU that took them
    nmi_attributed: int = None   # NMIs matched to a window of the CPU that took them
    error: str = None            # the run could not be judged

    @property
    def eligible_fraction(self):
        return self.eligible / self.stalls if self.eligible is not None and self.stalls \
            else None

    @property
    def nmi_fraction(self):
        return self.nmi_attributed / self.nmi_injected \
            if self.nmi_attributed is not None and self.nmi_injected else None


def traced_duty(widths):
    """The fraction of the time from the first traced width's start to the
    last one's end that some CPU was inside a width (the union of all CPUs'
    widths): what a machine-wide stall beginning at a random time finds.
    None with fewer than two widths."""
    if not widths or len(widths) < 2:
        return None
    ws = sorted(widths)
    covered, cur_s, cur_e = 0, ws[0][0], ws[0][1]
    for s, e in ws[1:]:
        if s > cur_e:
            covered += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    covered += cur_e - cur_s
    span = max(e for _, e in ws) - ws[0][0]
    return covered / span if span > 0 else None


def versus_row(backend, mode, stalls=None, nmis=None, error=None, duty=None):
    """A VersusRow from a StallResult and an NmiResult (either may be None);
    duty: traced_duty() of the run's widths."""
    row = VersusRow(backend=backend, mode=mode, error=error, duty=duty)
    if stalls is not None:
        row.stalls, row.found, row.recall = stalls.stalls, stalls.found, stalls.recall
        row.eligible = None if stalls.eligible is None else len(stalls.eligible)
        row.over_threshold = stalls.over_threshold
        judged = stalls.over_threshold - len(stalls.host_noise)
        row.precision = stalls.precision if judged else None
        if stalls.errors_ns:
            row.median_error_ns = stalls.median_error_ns
            row.worst_error_ns = stalls.worst_error_ns
            row.median_over_stop_ns = statistics.median(stalls.over_stop_ns)
            row.median_waits_ns = statistics.median(pre + post
                                                    for *_, pre, post in stalls.pairs)
        row.matched = stalls.matched_samples
        row.magnitude_misses = sum(1 for err, (_, _, truth, _, _) in
                                   zip(stalls.errors_ns, stalls.pairs)
                                   if err > MS + truth // 100)
    if nmis is not None:
        row.nmi_injected = nmis.injected
        row.nmi_attributed = sum(c.attributed for c in nmis.cpus.values())
        if nmis.cpus and all(c.inside is not None for c in nmis.cpus.values()):
            row.nmi_inside = sum(len(c.inside) for c in nmis.cpus.values())
    return row


def ratio(ours, theirs):
    """ours / theirs as text: "n/a" when either is unknown or theirs is 0
    (then "inf" if ours is not 0 either)."""
    if ours is None or theirs is None:
        return "n/a"
    if theirs == 0:
        return "n/a" if ours == 0 else "inf"
    return f"{ours / theirs:.2f}"


def versus_goals(row, tracer, duty, margin=0.05, median_ns=100_000):
    """The benchmark's goals for one mode of ours against the tracer's same mode:
    [(goal, ok, detail)]. Precision 1.00; recall at least the tracer's and
    at least duty - margin (per-cpu: 1.00, some CPU always samples); median
    error at most median_ns; every matched stall within 1 ms + 1 % of its
    truth. A goal that cannot be judged (run failed, nothing matched)
    fails, saying why; a tracer without a result leaves only the duty
    bound, said too."""
    out = []
    if row.error or row.recall is None:
        why = row.error or "no result"
        return [(g, False, why) for g in ("precision", "recall", "median error",
                                           "every matched stall")]
    out.append(("precision", row.precision is not None and row.precision >= 1 - 1e-9,
                "no window above the threshold" if row.precision is None else
                f"{row.precision:.2f} (want 1.00)"))
    need = 1.0 if row.mode == "per-cpu" else duty - margin
    why = "per-cpu: 1.00" if row.mode == "per-cpu" else f"duty {duty:.2f} - {margin:.2f}"
    if tracer is not None and tracer.recall is not None and not tracer.error:
        ok = row.recall >= max(need, tracer.recall) - 1e-9
        detail = (f"{row.recall:.2f} >= tracer {tracer.recall:.2f} and >= {need:.2f} "
                  f"({why})")
    else:
        ok = row.recall >= need - 1e-9
        detail = (f"{row.recall:.2f} >= {need:.2f} ({why}); the tracer's "
                  f"{row.mode} has no result to compare with")
    out.append(("recall", ok, detail))
    if row.median_error_ns is None:
        out.append(("median error", False, "no stall matched"))
        out.append(("every matched stall", False, "no stall matched"))
    else:
        out.append(("median error", row.median_error_ns <= median_ns,
                    f"{row.median_error_ns / 1000:.0f} us (want <= {median_ns / 1000:.0f} us)"))
        out.append(("every matched stall", row.magnitude_misses == 0,
                    f"{row.matched - row.magnitude_misses}/{row.matched} matched windows "
                    f"within 1 ms + 1 % of the truth"))
    return out


def _ms(ns):
    return "n/a" if ns is None else f"{ns / MS:.3f} ms"


def _frac(x):
    return "n/a" if x is None else f"{x:.2f}"


def versus_table(rows):
    """The benchmark's one table (markdown lines): per backend and mode the
    figures, and each figure of ours as a ratio to the tracer's same mode
    (the tracer's own rows: "-")."""
    tracer = {r.mode: r for r in rows if r.backend == "tracer"}
    out = ["| backend | mode | recall | begun in a width | traced duty | precision "
           "| median error | worst error | median over the stop | median vCPU waits "
           "| NMIs attributed | recall / tracer "
           "| in-width / tracer | precision / tracer | median / tracer | worst / tracer "
           "| NMI / tracer |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.error:
            out.append(f"| {r.backend} | {r.mode} | not measured: {r.error} |"
                       + " |" * 15)
            continue
        t = tracer.get(r.mode)
        t = None if t is None or t.error else t
        elig = ("n/a (no trace)" if r.eligible is None else
                f"{r.eligible}/{r.stalls} ({r.eligible_fraction:.2f})")
        nmi = ("n/a" if r.nmi_attributed is None else
               f"{r.nmi_attributed}/{r.nmi_injected}"
               + ("" if r.nmi_inside is None else f" ({r.nmi_inside} inside a width)"))
        prec = ("n/a (no window)" if r.precision is None else
                f"{r.precision:.2f} ({r.over_threshold} windows)")
        out.append(f"| {r.backend} | {r.mode} | {_frac(r.recall)} ({r.found}/{r.stalls}) | "
                   f"{elig} | {_frac(r.duty)} | {prec} | {_ms(r.median_error_ns)} | "
                   f"{_ms(r.worst_error_ns)} | {_ms(r.median_over_stop_ns)} | "
                   f"{_ms(r.median_waits_ns)} | {nmi} | "
                   + " | ".join("-" if r.backend == "tracer" else
                                ratio(getattr(r, k), getattr(t, k) if t else None)
                                for k in ("recall", "eligible", "precision", "median_error_ns",
                                          "worst_error_ns", "nmi_attributed")) + " |")
    return out
