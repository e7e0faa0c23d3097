#!/bin/bash
# Guest side of ./run: prints the clocksource facts to /mnt/results/clock.txt,
# loads ./hwlat_detector.ko, and for each NAME:SECONDS[:CLOCKSOURCE] argument
# (after switching to CLOCKSOURCE) reads the stream for SECONDS into
# stream-NAME.txt between the marks "phase-start NAME" and "phase-done NAME".
set -u
res=/mnt/results
mark() { echo "HWLAT-MARK $*" >/dev/ttyS0; }
cs=/sys/devices/system/clocksource/clocksource0
{
echo "uname $(uname -r)"; echo "cmdline $(cat /proc/cmdline)"
echo "current $(cat $cs/current_clocksource)"; echo "available $(cat $cs/available_clocksource)"
grep -m3 -E 'model name|flags' /proc/cpuinfo
dmesg | grep -iE 'tsc|clocksource|hpet|watchdog'
} > $res/clock.txt 2>&1
insmod ./hwlat_detector.ko || { echo insmod failed; exit 1; }
d=/sys/kernel/debug/hwlat_detector
echo round-robin > $d/mode
echo 2000 > $d/threshold
echo 1000000 > $d/window
echo 900000 > $d/width
phase() { # name seconds [clocksource]
	local name=$1 secs=$2
	if [ -n "${3:-}" ]; then echo "$3" > $cs/current_clocksource; fi
	echo "phase $name clocksource $(cat $cs/current_clocksource)" >> $res/clock.txt
	echo 1 > $d/enable
	timeout "$secs" cat $d/stream >"$res/stream-$name.txt" &
	local p=$!
	sleep 1
	mark "phase-start $name"
	wait $p
	echo 0 > $d/enable
	mark "phase-done $name"
}
for spec in "$@"; do
	IFS=: read -r name secs csrc <<<"$spec"
	phase "$name" "$secs" "$csrc"
done
dmesg > $res/dmesg-exp.txt
mark exp-done
