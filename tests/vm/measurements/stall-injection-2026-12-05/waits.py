#!/usr/bin/python3
# waits.py PIDFILE OUT: samples the host run-queue wait (schedstat run_delay) of every QEMU thread every 5 ms,
# logs "host_time tid comm utime_ticks wait_ms" for each increment >= 1 ms, until QEMU exits.
import os, sys, time
pidfile, out = sys.argv[1], sys.argv[2]
while not os.path.exists(pidfile):
    time.sleep(0.2)
pid = int(open(pidfile).read())
prev = {}
with open(out, "w") as f:
    while True:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except FileNotFoundError:
            break
        now = time.time()
        for tid in tids:
            try:
                rd = int(open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if tid in prev and rd - prev[tid] >= 1_000_000:
                try:
                    ut = open("/proc/%d/task/%s/stat" % (pid, tid)).read().rsplit(")", 1)[1].split()[11]
                except Exception:
                    ut = "?"
                f.write("%.3f %s %s %.3f\n" % (now, tid, ut, (rd - prev[tid]) / 1e6))
            prev[tid] = rd
        f.flush()
        time.sleep(0.005)
