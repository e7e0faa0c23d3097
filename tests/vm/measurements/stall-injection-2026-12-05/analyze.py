#!/usr/bin/python3
# analyze.py RUNDIR...: per phase of a ./run: quiet windows' largest gaps; per injected
# stall: asked, STOP..CONT (the injector's measure), reported by the detector (the
# window within -3..+1 s of the host's time closest in size, within 25 ms and > half)
import os, statistics, sys
for run in sys.argv[1:]:
    # a ./run OUTDIR keeps the guest's files in guest/; raw/ keeps them flat
    g = os.path.join(run, "guest") if os.path.isdir(os.path.join(run, "guest")) else run
    cs = {}
    for l in open(os.path.join(g, "clock.txt")):
        if l.startswith("phase "):
            _, name, _, c = l.split()
            cs[name] = c
        if l.startswith("current "):
            boot_cs = l.split()[1]
    print("== %s (boot clocksource %s)" % (os.path.basename(run), boot_cs))
    for name in cs:
        w = [l.split() for l in open(os.path.join(g, "stream-%s.txt" % name))]
        w = [(float(f[2]), max(int(f[3]), int(f[4])) / 1e6, int(f[5])) for f in w]
        inj = os.path.join(run, "injected-%s.txt" % name)
        if not os.path.exists(inj):
            mx = [m for _, m, _ in w]
            print("  %-9s %-4s quiet: %2d windows with a gap > 2 ms, max gap per window median %.1f ms, max %.1f, > 10 ms in %d"
                  % (name, cs[name], len(w), statistics.median(mx) if mx else 0, max(mx or [0]), sum(m > 10 for m in mx)))
            continue
        print("  %-9s %-4s injected: requested / STOP..CONT / reported (reported - requested, reported - STOP..CONT)" % (name, cs[name]))
        for l in open(inj):
            t, req, real = float(l.split()[0]), int(l.split()[1]), float(l.split()[2])
            c = [(abs(m - real), m) for (s, m, _) in w if -3 < s - t < 1 and abs(m - real) < 25 and m > real / 2]
            if c:
                m = min(c)[1]
                print("    %3d %8.3f %8.3f  (%+6.2f, %+6.2f)" % (req, real, m, m - req, m - real))
            else:
                print("    %3d %8.3f    none" % (req, real))
