#!/bin/bash
# Guest side of tests/vm/tracer-path (runs inside the QEMU guest as root,
# cwd /mnt/payload): hwlat-scan --backend=tracer on a kernel with the hwlat
# tracer built in (bookworm-rt, bullseye-rt) and without our module. Proves
# that:
#  - a scan at a low threshold writes sample entries and one summary to the
#    journal with HWLAT_BACKEND=tracer, HWLAT_SETTINGS_SOURCE=tracefs, the
#    requested settings, SMIs and floor "unavailable", as many samples as
#    the summary counts, and the format of the kernel's lines (shown);
#  - on a kernel whose tracer has no mode file (before 5.14: bullseye-rt),
#    a scan without a mode reports mode "unknown", and one asking for a mode
#    is refused with status 2 and a message naming the file, the tracer
#    untouched;
#  - every tracefs file it changed is back as it was, from a state that is
#    not the default (tracing_thresh, width, window, mode, cpumask set
#    before the scan), after a completed scan and after SIGTERM or SIGHUP half-way
#    (status "interrupted");
#  - a tracer in use (current_tracer not nop) is refused with status 3 and
#    a message naming it, and left alone;
#  - backend=auto without the module says so and scans with the tracer;
#  - hwlat-report shows the backend in the scan header and its JSON;
#  - hwlat-scan.service (sandboxed) with backend = auto and no module
#    scans with the tracer.
# Prints TAP; copies the evidence (journal exports, report, stderr) to
# /mnt/results.
set -uo pipefail

res=/mnt/results
SAMPLE_ID=18debb1199484fcc965913f03f96d36e
SUMMARY_ID=4ffb84af0b5d43dab64f8c6cd40251d6
tfs=/sys/kernel/tracing
[ -e "$tfs/available_tracers" ] || tfs=/sys/kernel/debug/tracing
files=(current_tracer tracing_thresh tracing_cpumask tracing_on
	hwlat_detector/width hwlat_detector/window hwlat_detector/mode)

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # DESCRIPTION CONDITION-STATUS [EVIDENCE-FILE...]
	local d=$1 st=$2 f
	shift 2
	if [ "$st" -eq 0 ]; then
		ok "$d"
		return
	fi
	not_ok "$d"
	for f in "$@"; do
		[ -f "$f" ] || continue
		echo "# --- $f:"
		tail -n 30 "$f" | sed 's/^/#   /'
	done
}
mark() { echo "HWLAT-MARK $1" >/dev/ttyS0 2>/dev/null || true; }
state() { # the tracer's state, one "file: content" line each
	local f
	for f in "${files[@]}"; do
		printf '%s: %s\n' "$f" "$(cat "$tfs/$f" 2>&1)"
	done
}
# field JSON-LINES NAME: the values of NAME, one a line.
field() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        v = json.loads(line).get(sys.argv[2])
        print(v if v is not None else "MISSING")' "$1" "$2"
}
entries() { # SCAN-ID MESSAGE-ID OUT: the scan's entries as JSON lines
	journalctl --sync 2>/dev/null || true
	journalctl -o json --no-pager "MESSAGE_ID=$2" "HWLAT_SCAN_ID=$1" >"$3"
}
scan_id_of() { sed -n 's/^hwlat-scan: scan \([0-9a-f]\{32\}\) .*/\1/p' "$1" | head -n 1; }

# hwlat-scan goes where the unit's ExecStart= looks for it (the build's
# prefix: /usr/local for a developer's build, /usr for a package's).
scan_bin=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' hwlat-scan.service)
[[ "$scan_bin" == /*/hwlat-scan ]] || scan_bin=/usr/local/sbin/hwlat-scan
install -m 0755 hwlat-scan "$scan_bin"
install -m 0755 hwlat-report /usr/local/bin/hwlat-report
echo "# kernel $(uname -r), tracefs $tfs"
echo "# available_tracers: $(cat "$tfs/available_tracers")"
grep -qw hwlat "$tfs/available_tracers"
check "the kernel's available_tracers lists hwlat" $?
if ! lsmod | grep -q '^hwlat_detector'; then
	ok "our module is not loaded (the tracer is the only sampler)"
else
	not_ok "our module is not loaded"
fi

# A state that is not the default, so that restoring it proves something.
ncpu=$(nproc)
echo 7 >"$tfs/tracing_thresh"
echo 300000 >"$tfs/hwlat_detector/width"
echo 600000 >"$tfs/hwlat_detector/window"
[ ! -e "$tfs/hwlat_detector/mode" ] || echo none >"$tfs/hwlat_detector/mode"
echo 1 >"$tfs/tracing_cpumask"
echo 1 >"$tfs/tracing_on"
state >"$res/state-before.txt"
echo "# tracer state before the scans:"
sed 's/^/#   /' "$res/state-before.txt"

# The mode file came with 5.14; before, the tracer's thread always moved
# from CPU to CPU, and hwlat-scan cannot set or read a mode.
if [ -e "$tfs/hwlat_detector/mode" ]; then
	mode_opt=(--mode=round-robin) mode_want=round-robin
else
	mode_opt=() mode_want=unknown
	hwlat-scan --config /dev/null --backend=tracer --duration=2s --mode=round-robin \
		>"$res/mode.out" 2>"$res/mode.err"
	rc=$?
	state >"$res/state-after-mode.txt"
	[ "$rc" = 2 ] && [ "$(cat "$res/mode.err")" = "hwlat-scan: invalid key 'mode': this kernel's hwlat tracer has no mode file (hwlat_detector/mode: Linux 5.14 and later)" ] &&
		cmp -s "$res/state-before.txt" "$res/state-after-mode.txt"
	check "no mode file: --mode=round-robin is refused with status 2 (got $rc) naming the file, the tracer untouched" $? \
		"$res/mode.err" "$res/state-after-mode.txt"
fi

# 1. A short scan at a low threshold.
mark scan-started
hwlat-scan --config /dev/null --backend=tracer --duration=8s --threshold=1us \
	--width=200ms --window=400ms "${mode_opt[@]}" --cpus="0-$((ncpu - 1))" \
	>"$res/scan.out" 2>"$res/scan.err"
rc=$?
mark scan-done
check "hwlat-scan --backend=tracer exits 0" "$rc" "$res/scan.out" "$res/scan.err"
state >"$res/state-after.txt"
cmp -s "$res/state-before.txt" "$res/state-after.txt"
check "every tracer file is back as before the scan (current_tracer nop, tracing_thresh 7, width, window, mode, cpumask, tracing_on)" $? \
	"$res/state-after.txt"
id=$(scan_id_of "$res/scan.out")
entries "$id" "$SAMPLE_ID" "$res/journal-samples.json"
entries "$id" "$SUMMARY_ID" "$res/journal-summary.json"
nsamples=$(grep -c . "$res/journal-samples.json")
[ "$nsamples" -ge 3 ]
check "the scan wrote sample entries to the journal at threshold 1 us ($nsamples)" $? "$res/scan.out" "$res/scan.err"
[ "$(field "$res/journal-samples.json" HWLAT_BACKEND | sort -u)" = tracer ]
check "every sample entry has HWLAT_BACKEND=tracer" $? "$res/journal-samples.json"
[ "$(field "$res/journal-samples.json" HWLAT_SMI_COUNT | sort -u)" = unavailable ]
check "every sample's HWLAT_SMI_COUNT is unavailable" $? "$res/journal-samples.json"
[ "$(field "$res/journal-samples.json" HWLAT_THRESHOLD_NS | sort -u)" = 1000 ]
check "every sample's HWLAT_THRESHOLD_NS is 1000" $? "$res/journal-samples.json"
# Every sample above the threshold, latency = max(inner, outer), sequence from 1.
python3 - "$res/journal-samples.json" <<'PY'
import json, sys
xs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
seqs = sorted(int(x["HWLAT_SEQ"]) for x in xs)
bad = [x for x in xs if int(x["HWLAT_LATENCY_NS"]) != max(int(x["HWLAT_INNER_NS"]), int(x["HWLAT_OUTER_NS"]))
       or int(x["HWLAT_LATENCY_NS"]) < 1000 or int(x["HWLAT_LATENCY_NS"]) % 1000 != 0]
sys.exit(1 if bad or not seqs or seqs[0] != 1 else 0)
PY
check "samples: latency = max(inner, outer) in whole microseconds >= 1 us, sequence from 1" $? "$res/journal-samples.json"
[ "$(grep -c . "$res/journal-summary.json")" = 1 ]
check "exactly one summary entry" $? "$res/journal-summary.json"
want="tracer tracefs completed 1000 200000000 400000000 $mode_want 0-$((ncpu - 1)) unavailable unavailable unavailable $nsamples"
got=$(for f in HWLAT_BACKEND HWLAT_SETTINGS_SOURCE HWLAT_STATUS HWLAT_THRESHOLD_NS HWLAT_WIDTH_NS \
	HWLAT_WINDOW_NS HWLAT_MODE HWLAT_CPUS HWLAT_SMI_TOTAL HWLAT_FLOOR_NS HWLAT_CLOCK HWLAT_SAMPLES; do
	field "$res/journal-summary.json" "$f"
done | tr '\n' ' ')
[ "$got" = "$want " ]
check "summary: backend, settings source, status, settings, SMIs/floor/clock unavailable, samples = entries ($got)" $? \
	"$res/journal-summary.json"
echo "# first sample entry: $(head -n 1 "$res/journal-samples.json" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print({k: v for k, v in d.items() if k.startswith("HWLAT_")})')"

# The kernel's own line format, as the parser expects it (shown).
echo hwlat >"$tfs/current_tracer"
echo 1 >"$tfs/tracing_on"
timeout 3 cat "$tfs/trace_pipe" >"$res/trace-pipe-raw.txt" 2>&1
echo nop >"$tfs/current_tracer"
echo "# raw trace_pipe lines of this kernel:"
head -n 3 "$res/trace-pipe-raw.txt" | sed 's/^/#   /'
grep -qE '\[[0-9]+\] .*: #[0-9]+ +inner/outer\(us\): +[0-9]+/[0-9]+ +ts:[0-9]+\.[0-9]{9} count:[0-9]+' "$res/trace-pipe-raw.txt"
check "the kernel's trace_pipe lines have the format tracer.c parses" $? "$res/trace-pipe-raw.txt"
# Back to the state before (the raw read above changed nothing else).
echo 7 >"$tfs/tracing_thresh"
state >"$res/state-before2.txt"

# 2. SIGTERM and SIGHUP (the terminal went away) half-way: both end the
# scan the same way (hwlat-scan.c, signalfd_setup()).
for sig in TERM HUP; do
	hwlat-scan --config /dev/null --backend=tracer --duration=60s --threshold=1us \
		>"$res/$sig.out" 2>"$res/$sig.err" &
	pid=$!
	for _ in $(seq 100); do
		[ "$(cat "$tfs/current_tracer")" = hwlat ] && break
		sleep 0.1
	done
	sleep 3
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	check "SIG$sig half-way: exit 0" "$rc" "$res/$sig.out" "$res/$sig.err"
	state >"$res/state-after-$sig.txt"
	cmp -s "$res/state-before2.txt" "$res/state-after-$sig.txt"
	check "SIG$sig half-way: every tracer file is back as before" $? "$res/state-after-$sig.txt"
	id=$(scan_id_of "$res/$sig.out")
	entries "$id" "$SUMMARY_ID" "$res/journal-$sig.json"
	[ "$(field "$res/journal-$sig.json" HWLAT_STATUS)" = interrupted ]
	check "SIG$sig half-way: the summary says interrupted" $? "$res/journal-$sig.json" "$res/$sig.err"
done

# 3. The tracer in use by someone else.
# A light one: blk (traces nothing until blktrace asks), never mmiotrace (it
# takes all CPUs but one offline); function makes a TCG guest crawl.
other=""
for t in blk wakeup function function_graph; do
	if tr ' ' '\n' <"$tfs/available_tracers" | grep -qx "$t"; then
		other=$t
		break
	fi
done
if [ -n "$other" ]; then
	echo "$other" >"$tfs/current_tracer"
	hwlat-scan --config /dev/null --backend=tracer --duration=2s >"$res/busy.out" 2>"$res/busy.err"
	rc=$?
	[ "$rc" = 3 ] && grep -q "current_tracer is '$other'" "$res/busy.err" &&
		[ "$(cat "$tfs/current_tracer")" = "$other" ]
	check "current_tracer $other: refused with status 3 (got $rc), the message names it, the tracer left alone" $? \
		"$res/busy.err"
	echo "# $(cat "$res/busy.err")"
	echo nop >"$tfs/current_tracer"
else
	not_ok "another tracer to be busy with (available_tracers: $(cat "$tfs/available_tracers"))"
fi

# 3b. Someone reads trace_pipe: the kernel refuses to change the tracer.
cat "$tfs/trace_pipe" >/dev/null 2>&1 &
reader=$!
sleep 0.5
hwlat-scan --config /dev/null --backend=tracer --duration=2s >"$res/reader.out" 2>"$res/reader.err"
rc=$?
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
state >"$res/state-after-reader.txt"
[ "$rc" = 3 ] && grep -q "$tfs/current_tracer while someone reads its trace_pipe" "$res/reader.err" &&
	cmp -s "$res/state-before2.txt" "$res/state-after-reader.txt"
check "trace_pipe open by another reader: refused with status 3 (got $rc), said, every file restored" $? \
	"$res/reader.err" "$res/state-after-reader.txt"

# 4. auto without the module.
hwlat-scan --config /dev/null --backend=auto --duration=3s --threshold=1us \
	>"$res/auto.out" 2>"$res/auto.err"
rc=$?
id=$(scan_id_of "$res/auto.out")
entries "$id" "$SUMMARY_ID" "$res/journal-auto.json"
[ "$rc" = 0 ] && grep -q "scanning with the kernel's hwlat tracer instead" "$res/auto.err" &&
	[ "$(field "$res/journal-auto.json" HWLAT_BACKEND)" = tracer ]
check "backend=auto without the module: says why and scans with the tracer (exit $rc)" $? "$res/auto.err"
sed 's/^/# auto: /' "$res/auto.err"

# 5. The report names the backend.
hwlat-report --scan "$(scan_id_of "$res/scan.out")" >"$res/report.txt" 2>&1
grep -qE '^  backend: +tracer' "$res/report.txt"
check "hwlat-report shows 'backend: tracer' in the scan header" $? "$res/report.txt"
hwlat-report --json --scan "$(scan_id_of "$res/scan.out")" >"$res/report.json" 2>&1
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any(s.get("backend") == "tracer" for s in d["scans"]) else 1)' "$res/report.json"
check "hwlat-report --json has backend tracer in the scan" $? "$res/report.json"

# 6. The unit, sandboxed, with backend = auto in its configuration: its
# ExecStartPre loads no module (none is installed) and the scan falls back
# to the tracer.
conf=$(hwlat-scan --help | sed -n 's/.*configuration file (default \(.*\)),$/\1/p')
mkdir -p "$(dirname "$conf")"
printf 'backend = auto\nduration = 5s\nthreshold = 1us\n' >"$conf"
install -m 0644 hwlat-scan.service /etc/systemd/system/hwlat-scan.service
systemctl daemon-reload
state >"$res/state-before-unit.txt"
systemctl start hwlat-scan.service
rc=$?
journalctl -u hwlat-scan.service --no-pager -o cat >"$res/unit.log" 2>&1
# (InvocationID is gone once the oneshot unit is inactive: the printed id.)
inv=$(scan_id_of "$res/unit.log")
entries "$inv" "$SUMMARY_ID" "$res/journal-unit.json"
entries "$inv" "$SAMPLE_ID" "$res/journal-unit-samples.json"
state >"$res/state-after-unit.txt"
[ "$rc" = 0 ] && [ "$(field "$res/journal-unit.json" HWLAT_BACKEND)" = tracer ] &&
	[ "$(field "$res/journal-unit.json" HWLAT_STATUS)" = completed ] &&
	[ "$(grep -c . "$res/journal-unit-samples.json")" -ge 1 ] &&
	cmp -s "$res/state-before-unit.txt" "$res/state-after-unit.txt"
check "systemctl start hwlat-scan with backend = auto: the sandboxed unit scans with the tracer (exit $rc, samples, summary completed), tracer restored" $? \
	"$res/unit.log" "$res/journal-unit.json" "$res/state-after-unit.txt"
sed 's/^/# unit: /' "$res/unit.log" | grep -v 'hardware latency [0-9]' | tail -n 8
rm -f "$conf"

dmesg >"$res/dmesg.txt" 2>&1
! grep -qE 'WARNING:|BUG:|Oops|Call Trace' "$res/dmesg.txt"
check "no warning, BUG or oops in the kernel log" $? "$res/dmesg.txt"
echo "1..$n"
[ "$failed" -eq 0 ]
