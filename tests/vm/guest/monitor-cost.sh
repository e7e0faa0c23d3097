#!/bin/bash
# Guest side of bench/monitor-cost (inside the QEMU guest as root, cwd the
# read-only payload): installs the .debs offline, then measures the default
# monitor for MINUTES three times: quiet (the defaults; under TCG nearly
# every width still has a gap above 10 us), calm (monitor_threshold = 8ms,
# which TCG's gaps seldom pass: what a machine without gaps journals) and
# stormy (monitor_threshold = 1us, which TCG's clock exceeds in nearly every
# width, so nearly every window is a sample and the budget folds the rest), and
# times membarrier(MEMBARRIER_CMD_GLOBAL), which waits for an RCU grace
# period, with the monitor stopped and running. Prints "# cost KEY VALUE"
# lines for the host, and the monitor's journal to /mnt/results.
#
#   monitor-cost.sh MINUTES
set -uo pipefail

minutes=${1:-10}
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || { echo "monitor-cost.sh: MINUTES '$minutes' is not a number" >&2; exit 2; }
res=/mnt/results
prom=/var/lib/prometheus/node-exporter/hwlat-monitor.prom
say() { echo "# cost $*"; }

mkdir -p /root/debs "$(dirname "$prom")"
cp ./hwlat-dkms_*.deb ./hwlat-tools_*.deb /root/debs/
env DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Use-Pty=0 \
	/root/debs/hwlat-dkms_*.deb /root/debs/hwlat-tools_*.deb >"$res/apt.log" 2>&1 ||
	{ echo "Bail out! cannot install the packages"; exit 1; }
modprobe hwlat_detector || { echo "Bail out! cannot load hwlat_detector"; exit 1; }
say cpus "$(nproc)"
say kernel "$(uname -r)"

# membarrier NAME: 40 calls of membarrier(MEMBARRIER_CMD_GLOBAL, 0), each
# timed; median and largest in us.
membarrier() {
	python3 - "$1" <<'PY'
import ctypes, statistics, sys, time
libc = ctypes.CDLL(None, use_errno=True)
SYS_membarrier, MEMBARRIER_CMD_GLOBAL = 324, 1
t = []
for _ in range(40):
    a = time.monotonic_ns()
    if libc.syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0) != 0:
        sys.exit("membarrier failed: errno %d" % ctypes.get_errno())
    t.append((time.monotonic_ns() - a) / 1000)
    time.sleep(0.05)
print("# cost membarrier_%s_median_us %.0f" % (sys.argv[1], statistics.median(t)))
print("# cost membarrier_%s_max_us %.0f" % (sys.argv[1], max(t)))
PY
}

# run NAME CONF...: the monitor for MINUTES with CONF; its figures.
run() {
	local name=$1 cursor pid t0 t1 ticks0 ticks1 hz
	shift
	printf '%s\n' "monitor_openmetrics_file = $prom" "$@" >/etc/hwlat/hwlat-scan.conf
	systemctl start hwlat-monitor || { echo "Bail out! the monitor did not start"; exit 1; }
	cursor=$(journalctl -n 0 --show-cursor -q | sed -n 's/^-- cursor: //p')
	pid=$(systemctl show -p MainPID --value hwlat-monitor)
	hz=$(getconf CLK_TCK)
	t0=$(date +%s%N)
	ticks0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	[ "$name" = quiet ] && membarrier monitoring
	sleep $((minutes * 60))
	ticks1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	t1=$(date +%s%N)
	journalctl --sync
	say "${name}_seconds" "$(((t1 - t0) / 1000000000))"
	say "${name}_cpu_ms" "$(((ticks1 - ticks0) * 1000 / hz))"
	say "${name}_journal_bytes" "$(journalctl --after-cursor "$cursor" -o export _SYSTEMD_UNIT=hwlat-monitor.service | wc -c)"
	say "${name}_entries" "$(journalctl --after-cursor "$cursor" -q -o cat _SYSTEMD_UNIT=hwlat-monitor.service | wc -l)"
	# The module's own counters: interrupts-off time per CPU since enable.
	say "${name}_sampled" "$(tr '\n' ' ' </sys/kernel/debug/hwlat_detector/sampled)"
	say "${name}_sampled_total_s" "$(sed -n 's/^hwlat_sampled_seconds_total //p' "$prom")"
	systemctl stop hwlat-monitor
	journalctl -b -o json _SYSTEMD_UNIT=hwlat-monitor.service >"$res/journal-$name.json"
}

membarrier idle
run quiet
run calm "monitor_threshold = 8ms"
run stormy "monitor_threshold = 1us"
echo "1..0"
