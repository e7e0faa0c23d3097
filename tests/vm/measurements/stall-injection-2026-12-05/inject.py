#!/usr/bin/python3
# inject.py PID N OUT: N stalls (20-200 ms), 1-3 s apart, records host start + measured stop time
import os, random, signal, sys, time
pid, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(out, "a") as f:
    for i in range(n):
        time.sleep(1 + 2 * random.random())
        ms = random.randint(20, 200)
        t0w = time.time(); t0 = time.monotonic_ns()
        os.kill(pid, signal.SIGSTOP)
        time.sleep(ms / 1000)
        os.kill(pid, signal.SIGCONT)
        t1 = time.monotonic_ns()
        f.write("%.6f %d %.3f\n" % (t0w, ms, (t1 - t0) / 1e6)); f.flush()
