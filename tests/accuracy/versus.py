#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/accuracy-vs-tracer, host side.

One QEMU (TCG) guest running a kernel that has both our module and the
kernel's own hwlat tracer (Debian's -rt kernel), one boot, six sampling runs
in a row: our module (acc-guest sample MODE) and the tracer (acc-guest
tracer MODE, trace_pipe) in round-robin, per-cpu and none modes. Every run
gets the same injection, drawn once from the seed: N SIGSTOP/SIGCONT stops
of QEMU (20-300 ms, 1.5-2.5 s apart, the first 2-3 s after the sampling
mark), then M QMP inject-nmi 2-3 s apart. Each run is judged by the accuracy
suite's own functions (analysis.match_stalls, analysis.match_nmis, the
widths traced with sched_switch of the hwlatd threads, which both backends
name alike), and the figures go into one table with each figure's ratio to
the tracer's same mode, followed by the goals for our modes.

A benchmark: it prints the table and the goals, PASS or FAIL, and exits 0
when all six runs were measured; 1 when some could not be (the table says
which), 2 when the guest could not run at all.

Usage: versus.py --kernel VMLINUZ --ko HWLAT_KO --guest ACC_GUEST [--out DIR]
                 [--seed N] [--stalls N] [--nmis N] [--realtime] [--nice N]
                 [--runs module:round-robin,tracer:round-robin,...]
       versus.py --recheck DIR     (judge a saved run again: DIR/versus.host.json)
"""

import argparse
import json
import os
import random
import signal
import sys
import time

import accuracy as acc
import analysis as a
from analysis import MS, SEC

THRESHOLD_NS, WIDTH_NS, WINDOW_NS = acc.THRESHOLD_NS, acc.WIDTH_NS, acc.WINDOW_NS
DUTY = WIDTH_NS / WINDOW_NS
RUNS = [("module", "round-robin"), ("tracer", "round-robin"),
        ("module", "per-cpu"), ("tracer", "per-cpu"),
        ("module", "none"), ("tracer", "none")]
BOOT_TIMEOUT = 300          # s: the -rt kernel under TCG boots slower than 6.1


def schedule(seed, n_stalls, n_nmis):
    """The one injection every run gets, drawn from the seed: stall starts
    (s after the first), durations (ms), the lead of the first stall after
    the sampling mark (s), NMI starts (s after the first NMI), the first
    NMI's time after the mark (s), and the sampling length (s)."""
    rnd = random.Random(seed)
    starts = acc.plan(n_stalls, rnd)
    durs = [rnd.randint(20, 300) for _ in range(n_stalls)]
    lead = 2 + rnd.randint(0, WINDOW_NS // MS - 1) / 1000
    nmi_starts = acc.plan(n_nmis, rnd, 2000, 3000) if n_nmis else []
    nmi_lead = lead + starts[-1] + 0.3 + 2.5
    end = nmi_lead + nmi_starts[-1] if n_nmis else lead + starts[-1] + 0.3
    return starts, durs, lead, nmi_starts, nmi_lead, int(end + 3.5)


def inject(g, qmp, monitor, starts, durs, lead, nmi_starts, nmi_lead):
    """The stalls and then the NMIs of one run, timed from now (the run's
    sampling mark has just arrived). Returns (stalls, NMI host times)."""
    t0 = time.monotonic_ns()
    with acc.Realtime():
        stalls = acc.inject_stalls(g.pid, starts, durs, t0 + int(lead * SEC), monitor)
        nmis = []
        for s in nmi_starts:
            acc.precise_sleep_until(t0 + int((nmi_lead + s) * SEC), monitor)
            b = acc.now()
            qmp.execute("inject-nmi")
            nmis.append((b + acc.now()) // 2)
    return stalls, nmis


def judge(backend, mode, lines, stalls, nmis, delays):
    """(VersusRow, notes) of one run, by the suite's judges."""
    texts = [t for _, t in lines]
    try:
        run = a.parse_guest_output(texts)
    except a.GuestError as e:
        return a.versus_row(backend, mode, error=f"guest output: {e}"), []
    notes = []
    if run.errors:
        return a.versus_row(backend, mode, error="; ".join(run.errors)), []
    if run.done is None or run.done != len(run.samples):
        return a.versus_row(backend, mode, error=f"incomplete: done {run.done}, "
                            f"{len(run.samples)} samples parsed"), []
    if run.stats.get("dropped"):
        notes.append(f"{run.stats['dropped']} windows/events dropped")
    notes += a.check_sequence(run.samples)
    coarse = acc.Suite.clock_offset_of(lines)
    if coarse is None:
        return a.versus_row(backend, mode, error="no HWLAT-CLOCK lines"), []
    off, nfit = a.refine_offset(run.samples, stalls, coarse, search=100 * MS, below=5 * MS)
    widths, why = a.sampling_widths(run, mode, WIDTH_NS)
    sr = a.match_stalls(run.samples, stalls, off, THRESHOLD_NS, WIDTH_NS, WINDOW_NS,
                        per_cpu=(mode == "per-cpu"), strict=True, slack_ns=MS,
                        host_delays=delays, widths=widths, widths_note=why)
    notes.append(f"clock offset {off / MS:.1f} ms (marks {coarse / MS:.1f} ms, {nfit} windows "
                 f"fit); " + (f"{len(widths)} traced widths" if widths else
                              f"no traced widths: {why}"))
    notes += [f"host load explains {s.latency / MS:.3f} ms at guest {s.ts / SEC:.3f}"
              for s, _ in sr.host_noise]
    notes += [f"stalls: {f}" for f in sr.failures]
    nr = None
    if nmis:
        wmap = {}
        for c in range(len(run.nmi.get("after", []))):
            w, _ = a.sampling_widths(run, mode, WIDTH_NS, cpu=c)
            if w:
                wmap[c] = w
        try:
            nr = a.match_nmis(run.samples, nmis, coarse, run.nmi.get("before", []),
                              run.nmi.get("after", []), THRESHOLD_NS, WIDTH_NS, WINDOW_NS,
                              widths=wmap or None, widths_note=why, guard_ns=acc.NMI_GUARD_NS)
            notes.append(f"NMIs: {nr.summary()}")
            notes += [f"NMIs: {f}" for f in nr.failures]
        except a.GuestError as e:
            notes.append(f"NMIs not judged: {e}")
    return a.versus_row(backend, mode, stalls=sr, nmis=nr,
                        duty=a.traced_duty(widths) if widths else None), notes


def recheck(directory):
    """Judges a saved run again (after a change of the judges): the ground
    truth, the host's measured waits and every guest line with its host
    arrival time come from DIR/versus.host.json; writes DIR/versus.md."""
    with open(os.path.join(directory, "versus.host.json")) as f:
        saved = json.load(f)
    truth = [([a.Stall(s0, s1) for s0, s1 in t["stalls"]], t["nmis"]) for t in saved["truth"]]
    delays = [a.HostDelay(*d) for d in saved["delays"]]
    head = saved.get("head") or f"Seed {saved['seed']} (the run's conditions were not saved)."
    head += f" Re-judged {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (--recheck)."
    return report([tuple(r) for r in saved["runs"]], [tuple(x) for x in saved["lines"]],
                  truth, delays, head, directory, dmesg_saved=saved.get("all_lines", False))


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernel")
    p.add_argument("--ko")
    p.add_argument("--guest")
    p.add_argument("--steal-probe", help="host steal-probe binary")
    p.add_argument("--out", default="_build/accuracy-vs-tracer")
    p.add_argument("--kernel-release", default="?")
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--stalls", type=int, default=20)
    p.add_argument("--nmis", type=int, default=8)
    p.add_argument("--runs", default=",".join(f"{b}:{m}" for b, m in RUNS))
    p.add_argument("--realtime", action="store_true")
    p.add_argument("--nice", type=int, default=-15)
    p.add_argument("--recheck", metavar="DIR",
                   help="judge again the run saved in DIR/versus.host.json (no guest; "
                        "--kernel, --ko, --guest are then not needed)")
    args = p.parse_args()
    if args.recheck:
        return recheck(args.recheck)
    runs = []
    for item in args.runs.split(","):
        b, _, m = item.partition(":")
        if (b, m) not in RUNS:
            p.error(f"--runs: unknown run '{item}' (known: "
                    f"{', '.join(f'{x}:{y}' for x, y in RUNS)})")
        runs.append((b, m))
    if args.stalls < 2 or args.nmis < 0:
        p.error("--stalls must be >= 2, --nmis >= 0")
    for what, path in (("--kernel", args.kernel), ("--ko", args.ko), ("--guest", args.guest)):
        if path is None:
            p.error(f"{what} is required (but with --recheck)")
        if not os.path.isfile(path):
            p.error(f"{what} {path}: no such file")
    os.makedirs(args.out, exist_ok=True)
    starts, durs, lead, nmi_starts, nmi_lead, seconds = schedule(args.seed, args.stalls,
                                                                 args.nmis)
    print(f"# accuracy-vs-tracer: seed {args.seed}, kernel {args.kernel_release}, "
          f"{args.stalls} stalls ({min(durs)}-{max(durs)} ms) then {args.nmis} NMIs per run, "
          f"{seconds} s of sampling per run, {len(runs)} runs, QEMU nice {args.nice}"
          f"{', vCPUs SCHED_FIFO after boot' if args.realtime else ''}", flush=True)
    if args.realtime:
        acc.ALWAYS_RT = True
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    cmds = [f"{'sample' if b == 'module' else 'tracer'} {m} {seconds} trace" for b, m in runs]
    initrd = os.path.join(args.out, "versus.initrd")
    acc.make_initramfs(initrd, args.ko, args.guest, cmds)
    load_before = os.getloadavg()
    t_start = time.monotonic()
    g = acc.Guest("versus", args.out, args.kernel, initrd, nice=args.nice,
                  realtime=args.realtime)
    truth = []
    monitor = None
    try:
        qmp = acc.Qmp(g.qmp_path)
        g.wait_for("HWLAT-CLOCK", BOOT_TIMEOUT)
        boot_s = time.monotonic() - t_start
        monitor = acc.HostMonitor(g.pid, args.steal_probe,
                                  os.path.join(args.out, "steal-probe.out"))
        if g.realtime:
            g.make_realtime()
        idx = 0
        for b, m in runs:
            g.wait_for("HWLAT-MARK sampling", seconds + 120, monitor=monitor, after=idx)
            idx = next(i for i in range(idx, len(g.lines))
                       if g.lines[i][1].startswith("HWLAT-MARK sampling")) + 1
            print(f"# {b} {m}: sampling, injecting", flush=True)
            truth.append(inject(g, qmp, monitor, starts, durs, lead, nmi_starts, nmi_lead))
        qmp.close()
        g.finish(timeout=seconds + 120)
        monitor.close()
    except (RuntimeError, OSError, a.GuestError) as e:
        g.wind_down()
        print(f"# the guest could not run the benchmark: {e}")
        for x in g.tail(40):
            print(f"#   {x}")
        if not truth:
            return 2
    finally:
        if monitor:
            monitor.discard()
        g.kill()
    load_after = os.getloadavg()
    head = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
            f"bench/accuracy-vs-tracer: guest kernel {args.kernel_release} (QEMU TCG, -smp 2, "
            f"{'vCPU threads SCHED_FIFO 1 after boot' if args.realtime else f'nice {args.nice}'}"
            f"), seed {args.seed}, per run {args.stalls} stalls of {min(durs)}-{max(durs)} ms "
            f"then {args.nmis} NMIs, {seconds} s of sampling; threshold 20000 us, width "
            f"900000 us, window 1000000 us (module loaded with allow_high_duty=1); host load "
            f"average {load_before[0]:.2f} before, {load_after[0]:.2f} after; guest booted "
            f"in {boot_s:.0f} s, whole run {time.monotonic() - t_start:.0f} s.")
    with open(os.path.join(args.out, "versus.host.json"), "w") as f:
        json.dump({"seed": args.seed, "head": head, "runs": runs, "truth": [
            {"stalls": [[s.start, s.end] for s in st], "nmis": nm} for st, nm in truth],
            "delays": [[d.start, d.end, d.wait, d.thread] for d in monitor.delays],
            "all_lines": True, "lines": [[t, x] for t, x in g.lines]}, f)
    return report(runs, g.lines, truth, monitor.delays, head, args.out)


def report(runs, lines, truth, delays, head, out, dmesg_saved=True):
    """Judges every run, prints the table and the goals, writes versus.md
    and versus.json to out. Returns the exit status. dmesg_saved False: the
    lines are a saved run's HWLAT- lines only (runs saved before all lines
    were), so the guest's dmesg is not judged."""
    segs = acc.split_runs(lines)[1:]
    rows, notes = [], {}
    for k, (b, m) in enumerate(runs):
        if k >= len(truth) or k >= len(segs):
            rows.append(a.versus_row(b, m, error="the run did not take place"))
            continue
        stalls, nmis = truth[k]
        row, n = judge(b, m, segs[k][1], stalls, nmis, delays)
        rows.append(row)
        notes[f"{b} {m}"] = n
    try:
        whole = a.parse_guest_output([t for _, t in lines])
        dmesg = a.dmesg_problems(whole.dmesg, allow_unknown_nmi=True)
        if not dmesg_saved:
            dmesg = ["not judged (the saved run kept only its HWLAT- lines)"]
        elif not whole.dmesg:
            dmesg = ["no dmesg dump from the guest"]
    except a.GuestError as e:
        dmesg = [str(e)]
    table = a.versus_table(rows)
    tracer = {r.mode: r for r in rows if r.backend == "tracer"}
    goals = []
    for r in rows:
        if r.backend != "module":
            continue
        for goal, ok, detail in a.versus_goals(r, tracer.get(r.mode), DUTY):
            goals.append(f"- module {r.mode}: {goal}: {'PASS' if ok else 'FAIL'} ({detail})")
    text = ["# accuracy vs the kernel's hwlat tracer", "", head, ""] + table + [
        "", "Errors: distance of max(inner, outer) from the truth band [stop, stop + host "
        "run-queue waits of the vCPU threads] (accuracy suite, README): the waits right "
        "before the stop and until each vCPU thread ran again after it, of any size. Median "
        "over the stop: max(inner, outer) minus the stop alone; median vCPU waits: the "
        "band's width, what the host measured beyond the stop. Begun in a width: "
        "stalls whose start lies in a width of the backend's hwlatd thread(s), traced with "
        "sched_switch. Traced duty: the share of the run (first width's start to last "
        "width's end) inside some CPU's traced width (width/window = 0.90 on paper). NMIs "
        "attributed: injected NMIs matched to a window of the CPU that took them (the "
        "tracer reports a width only when a gap exceeded the threshold).",
        "", "## Goals (ours against the tracer's same mode)", ""] + goals + [
        "", "## Notes per run", ""]
    for key, ns in notes.items():
        text += [f"- {key}: " + "; ".join(ns)] if ns else []
    if dmesg:
        text += ["", "Guest dmesg: " + "; ".join(dmesg[:10])]
    md = "\n".join(text) + "\n"
    with open(os.path.join(out, "versus.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "versus.json"), "w") as f:
        json.dump({"head": head, "rows": [r.__dict__ for r in rows], "goals": goals}, f,
                  indent=1)
    print(md, end="")
    print(f"# written: {os.path.join(out, 'versus.md')}")
    return 0 if all(not r.error for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
