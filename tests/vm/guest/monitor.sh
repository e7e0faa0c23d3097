#!/bin/bash
# Guest side of tests/vm/monitor (inside the QEMU guest as root, cwd the
# read-only payload). Proves hwlat-monitor.service on a real kernel and a
# real systemd: disabled after install; started, it is ready (Type=notify)
# with the monitor's settings on the detector, a watchdog, and the msr
# module loaded; it journals interval summaries and rewrites its Prometheus
# file with the agreed names; it counts every SMI raised on its SMI CPU; a journald restart loses no summary; a
# one-shot `systemctl start hwlat-scan` runs beside it, the monitor pauses
# and resumes and the interval counts the pause; unloading and reloading the
# module pauses and resumes it; reload applies a new configuration; a burst
# of sample entries above journald's rate limit (lowered to 100 per 30 s,
# which cuts a control unit's burst) is journaled whole; stopping it
# restores the detector as it was. Prints
# TAP; copies the evidence to /mnt/results.
set -uo pipefail

res=/mnt/results
INTERVAL_ID=6d3e4f6fa03a4b40b324b6fdfbf15053
SAMPLE_ID=18debb1199484fcc965913f03f96d36e
det=/sys/kernel/debug/hwlat_detector
prom=/var/lib/prometheus/node-exporter/hwlat-monitor.prom
conf=/etc/hwlat/hwlat-scan.conf

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION CMD...: CMD as one test; its output on failure.
check() {
	local d=$1 o rc=0
	shift
	o=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$d"
	else
		not_ok "$d"
		echo "# command: $* (exit $rc)"
		printf '%s\n' "$o" | tail -n 30 | sed 's/^/#   /'
	fi
	return "$rc"
}
# is VALUE WANT DESCRIPTION: one test, VALUE shown when it is not WANT.
is() {
	if [ "$1" = "$2" ]; then ok "$3"; else not_ok "$3 (saw: $1)"; fi
}
bail() {
	echo "Bail out! $*"
	echo "1..$n"
	exit 1
}
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.5
	done
}
prop() { systemctl show -p "$2" --value "$1"; }
evidence() {
	systemctl status --no-pager hwlat-monitor 2>&1 | head -n 12 | sed 's/^/#   status: /'
	journalctl -b -u hwlat-monitor --no-pager -n 20 -o short-monotonic 2>&1 | sed 's/^/#   journal: /'
}
settings() {
	local f
	for f in enable threshold width window mode cpus; do
		printf '%s=%s ' "$f" "$(cat "$det/$f" 2>&1)"
	done
}
# intervals [FIELD=VALUE]: the monitor's interval summaries this boot.
intervals() {
	journalctl --sync 2>/dev/null
	journalctl -b -q -o cat MESSAGE_ID="$INTERVAL_ID" _SYSTEMD_UNIT=hwlat-monitor.service ${1:+"$1"} |
		wc -l
}
intervals_at_least() { [ "$(intervals "${2:-}")" -ge "$1" ]; }
# field NAME [FIELD=VALUE]: NAME of the newest interval summary (matching).
field() {
	journalctl --sync 2>/dev/null
	journalctl -b -o json -n 1 MESSAGE_ID="$INTERVAL_ID" ${2:+"$2"} |
		python3 -c 'import json, sys; print(json.loads(sys.stdin.read() or "{}").get(sys.argv[1], ""))' "$1"
}
monitor_sampling() {
	[ "$(cat "$det/enable" 2>/dev/null)" = 1 ] && [ "$(cat "$det/width" 2>/dev/null)" = 9000 ]
}
metric() { sed -n "s/^$1 //p" "$prom" 2>/dev/null; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }
# Not grep -q: it would end the pipe early, and journalctl's SIGPIPE fail it.
said() { journalctl -b -q -o cat -u hwlat-monitor | grep -F "$1" >/dev/null; }
write_conf() { printf '%s\n' "# written by tests/vm/guest/monitor.sh" "$@" >"$conf"; }

kver=$(uname -r)
echo "# guest kernel $kver, $(nproc) CPUs"
mkdir -p /root/debs
cp ./hwlat-dkms_*.deb ./hwlat-tools_*.deb /root/debs/ 2>/dev/null ||
	bail "the payload has no hwlat-dkms_*.deb and hwlat-tools_*.deb: $(ls)"
check "apt-get install of both .debs works offline" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Use-Pty=0 \
	/root/debs/hwlat-dkms_*.deb /root/debs/hwlat-tools_*.deb || bail "cannot install the packages"
en=$(systemctl is-enabled hwlat-monitor.service 2>&1)
act=$(systemctl is-active hwlat-monitor.service 2>&1)
if [ "$en" = disabled ] && [ "$act" = inactive ]; then
	ok "installed, hwlat-monitor.service is disabled and not running"
else
	not_ok "installed, hwlat-monitor.service is disabled and not running (is-enabled: $en, is-active: $act)"
fi
# node-exporter is not installed in the image: its directory is made by hand.
mkdir -p "$(dirname "$prom")"
modprobe hwlat_detector || bail "cannot load hwlat_detector"
before=$(settings)
write_conf "monitor_interval = 20s"

# 1. Start: ready once it samples, with the monitor's settings.
check "systemctl start hwlat-monitor (Type=notify: returns once it samples)" \
	systemctl start hwlat-monitor || { evidence; bail "the monitor did not start"; }
now=$(settings)
case "$now" in
"enable=1 threshold=10 width=9000 window=1000000 mode=none [round-robin] "*)
	ok "the detector runs the monitor's defaults: 10 us, 9 ms of 1 s, round-robin" ;;
*) not_ok "the detector runs the monitor's defaults: 10 us, 9 ms of 1 s, round-robin (saw: $now)" ;;
esac
wd=$(prop hwlat-monitor WatchdogUSec)
if [ "$wd" != 0 ] && [ "$wd" != infinity ] && [ "$(prop hwlat-monitor Type)" = notify ]; then
	ok "Type=notify with a watchdog ($wd)"
else
	not_ok "Type=notify with a watchdog (WatchdogUSec=$wd, Type=$(prop hwlat-monitor Type))"
fi
check "the monitor said its cost: 0.9 % of one CPU with interrupts off" \
	said "0.9 % of one CPU with interrupts off"
if grep -q '^msr ' /proc/modules || [ -e /dev/cpu/0/msr ]; then
	ok "the msr driver is there for the SMI count"
else
	not_ok "the msr driver is there for the SMI count"
fi
journalctl -b -q -o cat -u hwlat-monitor | grep 'SMIs:' | sed 's/^/# /'
# The sandbox must let it open the msr device (the count itself may still
# be unavailable: TCG need not implement MSR_SMI_COUNT).
if said "cannot open /dev/cpu/"; then
	not_ok "the unit lets the monitor open /dev/cpu/N/msr"
else
	ok "the unit lets the monitor open /dev/cpu/N/msr"
fi

# 2. Intervals and the Prometheus file.
if wait_for 60 intervals_at_least 1; then
	ok "an interval summary within 60 s (monitor_interval 20 s): $(field MESSAGE)"
else
	not_ok "an interval summary within 60 s"
	evidence
fi
s=$(field HWLAT_SAMPLED_NS)
if [ "${s:-0}" -gt 0 ] 2>/dev/null && [ "$(field HWLAT_INTERVAL_END)" = interval ]; then
	ok "it counts time sampled ($s ns in $(field HWLAT_DURATION_NS) ns)"
else
	not_ok "it counts time sampled (HWLAT_SAMPLED_NS=$s)"
fi
names=$(grep -v '^#' "$prom" 2>/dev/null | sed 's/[{ ].*//' | sort -u | tr '\n' ' ')
want="hwlat_cpu_sampled_seconds_total hwlat_dropped_windows_total hwlat_gap_seconds_bucket hwlat_gap_seconds_count hwlat_gap_seconds_sum hwlat_gaps_total hwlat_interval_latency_max_seconds hwlat_monitor_last_interval_timestamp_seconds hwlat_monitor_paused hwlat_monitor_start_time_seconds hwlat_nmis_total hwlat_sampled_seconds_total hwlat_skipped_windows_total hwlat_smis_available hwlat_threshold_seconds hwlat_unexplained_windows_total "
want_smi="hwlat_cpu_sampled_seconds_total hwlat_dropped_windows_total hwlat_gap_seconds_bucket hwlat_gap_seconds_count hwlat_gap_seconds_sum hwlat_gaps_total hwlat_interval_latency_max_seconds hwlat_monitor_last_interval_timestamp_seconds hwlat_monitor_paused hwlat_monitor_start_time_seconds hwlat_nmis_total hwlat_sampled_seconds_total hwlat_skipped_windows_total hwlat_smis_available hwlat_smis_total hwlat_threshold_seconds hwlat_unexplained_windows_total "
if [ "$names" = "$want" ] || [ "$names" = "$want_smi" ]; then
	ok "the Prometheus file has the agreed names (hwlat_smis_available $(metric hwlat_smis_available))"
else
	not_ok "the Prometheus file has the agreed names (saw: $names)"
fi
mode=$(stat -c %a "$prom" 2>/dev/null)
is "$mode" 644 "the file is 0644 for node-exporter"

# 2b. SMIs are counted whole, not sampled: the monitor reads MSR_SMI_COUNT
# of its SMI CPU at each interval's end, so SMIs raised between two widths
# count as fully as those inside one. SMIS SMIs are raised on that CPU
# through the APM control port (0xb2; the firmware enters SMM on the
# raising CPU), 20 ms apart (closer ones can merge); the summaries that
# follow must add exactly SMIS, the Prometheus counter too. A TCG guest
# takes no SMI of its own: before the raise the intervals counted none.
smi_sum() {
	journalctl --sync 2>/dev/null
	journalctl -b -o json MESSAGE_ID="$INTERVAL_ID" _SYSTEMD_UNIT=hwlat-monitor.service | python3 -c '
import json, sys
print(sum(int(json.loads(l).get("HWLAT_SMI_TOTAL", 0)) for l in sys.stdin if l.strip()))'
}
raise_smis() { # raise_smis CPU N
	taskset -c "$1" python3 -c '
import os, sys, time
fd = os.open("/dev/port", os.O_WRONLY)
for _ in range(int(sys.argv[1])):
    os.pwrite(fd, b"\0", 0xb2)
    time.sleep(0.02)' "$2"
}
SMIS=25
smi_cpu=$(field HWLAT_SMI_CPU)
if [ -n "$smi_cpu" ] && [ -n "$(field HWLAT_SMI_TOTAL)" ]; then
	k=$(intervals)
	s0=$(smi_sum)
	check "raise $SMIS SMIs on CPU $smi_cpu, the monitor's SMI CPU (APM port 0xb2)" raise_smis "$smi_cpu" "$SMIS"
	wait_for 60 intervals_at_least $((k + 1)) || true
	s1=$(smi_sum)
	# The metrics file is rewritten just after the summary is journaled.
	wait_for 5 metric_is hwlat_smis_total "$s1" || true
	echo "# SMIs in the summaries: $s0 before the raise, $s1 after; hwlat_smis_total $(metric hwlat_smis_total)"
	is "$s0 $((s1 - s0)) $(metric hwlat_smis_total)" "0 $SMIS $s1" \
		"the summaries count none before and exactly the $SMIS raised SMIs after, as does hwlat_smis_total"
else
	not_ok "the interval summary names its SMI CPU and count (HWLAT_SMI_CPU '$smi_cpu', HWLAT_SMI_TOTAL '$(field HWLAT_SMI_TOTAL)')"
fi

# 3. journald restarts: the monitor goes on, the next summary arrives.
k=$(intervals)
systemctl restart systemd-journald
if wait_for 60 intervals_at_least $((k + 1)) && [ "$(prop hwlat-monitor ActiveState)" = active ]; then
	ok "after a journald restart the monitor runs on and its next summary is journaled"
else
	not_ok "after a journald restart the monitor runs on and its next summary is journaled"
	evidence
fi

# 4. A one-shot scan beside it: the monitor pauses, the scan runs, it resumes.
write_conf "monitor_interval = 20s" "duration = 5s" "width = 100ms" "window = 200ms"
systemctl reload hwlat-monitor
k=$(intervals)
check "systemctl start hwlat-scan succeeds while the monitor runs" systemctl start hwlat-scan
scan_w=$(journalctl -b -o json -n 1 MESSAGE_ID=4ffb84af0b5d43dab64f8c6cd40251d6 |
	python3 -c 'import json, sys; print(json.loads(sys.stdin.read() or "{}").get("HWLAT_WIDTH_NS", ""))')
is "$scan_w" 100000000 "the scan ran with its own width (100 ms)"
if wait_for 15 monitor_sampling; then
	ok "then the monitor samples again with its own settings"
else
	not_ok "then the monitor samples again with its own settings ($(settings))"
fi
wait_for 60 intervals_at_least $((k + 2)) || true
p=$(journalctl -b -o json MESSAGE_ID="$INTERVAL_ID" | python3 -c '
import json, sys
print(sum(int(json.loads(l).get("HWLAT_PAUSED_SCAN_NS", 0)) for l in sys.stdin if l.strip()))')
if [ "${p:-0}" -ge 5000000000 ] && said "a one-shot scan wants the detector" && said "resumed after a pause"; then
	ok "the summaries count the pause for the scan ($p ns) and the monitor said so"
else
	not_ok "the summaries count the pause for the scan (HWLAT_PAUSED_SCAN_NS in all: $p)"
	evidence
fi

# 5. The module away and back.
sleep 2
check "modprobe -r hwlat_detector while the monitor runs" wait_for 20 modprobe -r hwlat_detector
check "the monitor said the detector went away" wait_for 10 said "the detector went away"
check "modprobe hwlat_detector again" modprobe hwlat_detector
if wait_for 15 said "(detector)" && wait_for 5 monitor_sampling; then
	ok "the monitor resumed on the new module with its settings"
else
	not_ok "the monitor resumed on the new module with its settings ($(settings))"
	evidence
fi

# 6. Reload applies; journald's rate limit drops none of the monitor's
# entries. A TCG guest journals far fewer than journald's default 10000
# entries per 30 s, so the limit is lowered to 100 for the whole machine: a
# control unit's burst of 1000 lines must be cut, the monitor's burst
# (threshold 1 us, which TCG's clock exceeds in many 100 us widths, 2 ms
# windows, no budget) must be whole.
mkdir -p /etc/systemd/journald.conf.d
printf '[Journal]\nRateLimitIntervalSec=30s\nRateLimitBurst=100\n' >/etc/systemd/journald.conf.d/hwlat-test.conf
systemctl restart systemd-journald
# The writer stays alive a moment after its lines: journald learns a
# stream's unit from the writer's /proc entry, and a line whose writer is
# gone has no unit and no rate limit (seen after journald's restart: all
# 1000 lines kept).
{
	seq -f 'control line %.0f' 1000
	sleep 2
} | systemd-cat -t hwlat-burst-control
journalctl --sync
control=$(journalctl -b -q -o cat -t hwlat-burst-control | grep -c '^control line' || true)
if [ "$control" -gt 0 ] && [ "$control" -lt 1000 ]; then
	ok "journald's lowered rate limit is in force: a control burst kept $control of 1000 lines"
else
	not_ok "journald's lowered rate limit is in force (a control burst kept $control of 1000 lines)"
fi
inv=$(prop hwlat-monitor InvocationID)
write_conf "monitor_interval = 40s" "monitor_threshold = 1us" "monitor_width = 100us" \
	"monitor_window = 2ms" "monitor_sample_budget = 1000000"
check "systemctl reload hwlat-monitor" systemctl reload hwlat-monitor
if wait_for 10 said "reloaded the configuration" && [ "$(cat $det/window)" = 2000 ]; then
	ok "the reload applied (window 2 ms)"
else
	not_ok "the reload applied ($(settings))"
fi
k=$(intervals)
wait_for 120 intervals_at_least $((k + 1)) || true

# 7. Stop: the detector as it was before the monitor, a last summary.
check "systemctl stop hwlat-monitor" systemctl stop hwlat-monitor
st="Result=$(prop hwlat-monitor Result) ExecMainStatus=$(prop hwlat-monitor ExecMainStatus)"
is "$st" "Result=success ExecMainStatus=0" "it stopped cleanly"
is "$(field HWLAT_INTERVAL_END)" stop "a last summary (HWLAT_INTERVAL_END=stop)"
now=$(settings)
if [ "$now" = "$before" ]; then
	ok "the detector is as it was before the monitor: $now"
else
	not_ok "the detector is as it was before the monitor (before: $before; now: $now)"
fi

# Every entry the summaries say was journaled is in the journal.
journalctl --sync
# burst: the most entries per 30 s of an interval with the burst settings.
read -r burst journaled <<<"$(journalctl -b -o json MESSAGE_ID="$INTERVAL_ID" HWLAT_SCAN_ID="$inv" |
	python3 -c '
import json, sys
e = [json.loads(l) for l in sys.stdin if l.strip()]
print(max([int(x["HWLAT_JOURNALED"]) * 30 * 10**9 // int(x["HWLAT_DURATION_NS"]) for x in e
           if x.get("HWLAT_WINDOW_NS") == "2000000" and int(x["HWLAT_DURATION_NS"])] or [0]),
      sum(int(x["HWLAT_JOURNALED"]) for x in e))')"
got=$(($(journalctl -b -q -o cat MESSAGE_ID="$SAMPLE_ID" HWLAT_SCAN_ID="$inv" | wc -l) +
	$(journalctl -b -q -o cat MESSAGE_ID=ab639cbb95654a4d8de1256da3c0ca68 HWLAT_SCAN_ID="$inv" | wc -l)))
supp=$(journalctl -b -q -o cat -u systemd-journald | grep -c 'uppressed.*hwlat-monitor.service' || true)
echo "# burst: $burst entries per 30 s; journaled in all $journaled, in the journal $got"
if [ "${burst:-0}" -gt 100 ] && [ "$got" = "$journaled" ] && [ "$supp" = 0 ]; then
	ok "$burst entries per 30 s, above the lowered limit of 100: every entry journaled ($got) is there, nothing suppressed"
else
	not_ok "a burst above journald's rate limit is journaled whole ($burst per 30 s, said journaled $journaled, found $got, journald suppression lines $supp)"
fi
rm -f /etc/systemd/journald.conf.d/hwlat-test.conf
systemctl restart systemd-journald

journalctl -b -o json -u hwlat-monitor >"$res/journal-monitor.json" 2>&1
cp "$prom" "$res/hwlat-monitor.prom" 2>/dev/null
dmesg >"$res/dmesg.txt"
if dmesg | grep -E 'WARNING:|BUG:|Oops|hung_task|soft lockup|hard LOCKUP|rcu.*stall' >/dev/null; then
	not_ok "the kernel log has no warning, oops, lockup or stall"
	dmesg | grep -E 'WARNING:|BUG:|Oops|hung_task|soft lockup|hard LOCKUP|rcu.*stall' | head | sed 's/^/#   /'
else
	ok "the kernel log has no warning, oops, lockup or stall"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
