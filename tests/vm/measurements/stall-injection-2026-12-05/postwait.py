#!/usr/bin/python3
# postwait.py RUN PHASE: for each stall of a ./run, the host run-queue waits (ms) of the two
# busiest QEMU threads (the vCPUs) logged by waits.py within 150 ms after SIGCONT
import os, sys
run, ph = sys.argv[1], sys.argv[2]
w = [l.split() for l in open(os.path.join(run, "waits.txt"))]
util = {}
for t, tid, ut, ms in w:
    if ut.isdigit():
        util[tid] = int(ut)
vcpus = sorted(util, key=util.get)[-2:]
for l in open(os.path.join(run, "injected-%s.txt" % ph)):
    t, req, real = l.split()
    end = float(t) + float(real) / 1000
    post = {tid: sum(float(ms) for tt, ti, _, ms in w if ti == tid and end <= float(tt) <= end + 0.15) for tid in vcpus}
    print("%s stall %7.3f ms: vCPU waits in the 150 ms after SIGCONT: %s" % (req, float(real), ", ".join("%.1f" % v for v in post.values())))
