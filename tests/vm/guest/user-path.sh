#!/bin/bash
# Guest side of tests/vm/user-path (runs inside the QEMU guest as root, from
# the read-only payload share, cwd /mnt/payload). Proves the user's path on
# the guest's kernel: the .debs install offline, DKMS builds the module for
# the running kernel, one `systemctl start hwlat-scan` writes sample and
# summary entries with every field to the journal, hwlat-report shows them
# (histogram, JSON, SVG), purge removes everything, and the kernel log stays
# free of warnings, oopses, lockups and hung tasks. Prints TAP; copies the
# evidence to /mnt/results.
#
#   user-path.sh [--allow-nmi] [--keep] KEY=VALUE...
# KEY=VALUE lines go to /etc/hwlat/hwlat-scan.conf (default: duration=15s
# width=100ms window=200ms). --allow-nmi tolerates the kernel's "NMI received
# for unknown reason" line (host NMI injection); --keep skips the purge.
set -uo pipefail

res=/mnt/results
allow_nmi=0 keep=0 conf=()
for a in "$@"; do
	case "$a" in
	--allow-nmi) allow_nmi=1 ;;
	--keep) keep=1 ;;
	*=*) conf+=("${a%%=*} = ${a#*=}") ;;
	*) echo "user-path.sh: bad argument '$a' (expected --allow-nmi, --keep or KEY=VALUE)" >&2; exit 2 ;;
	esac
done
[ ${#conf[@]} -gt 0 ] || conf=("duration = 15s" "width = 100ms" "window = 200ms")

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION CMD...: runs CMD; its output is shown only on failure.
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
mark() { echo "HWLAT-MARK $*" >/dev/ttyS0; }
t() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
bail() {
	echo "Bail out! $*"
	echo "1..$n"
	exit 1
}

kver=$(uname -r)
# The kernel log before the test (boot-time TCG noise such as "failed to get
# a good estimate for loops_per_jiffy") is not ours: check only what follows.
dmesg_start=$(dmesg | wc -l)
echo "# guest kernel $kver, $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
mkdir -p /root/debs
cp ./hwlat-dkms_*.deb ./hwlat-tools_*.deb /root/debs/ 2>/dev/null ||
	bail "the payload has no hwlat-dkms_*.deb and hwlat-tools_*.deb: $(ls)"

# 1. Offline install: the guest has no network device at all, so this
# proves that every dependency is in the image.
t0=$(t)
check "apt-get install of both .debs works offline" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Use-Pty=0 /root/debs/hwlat-dkms_*.deb /root/debs/hwlat-tools_*.deb ||
	bail "cannot install the packages"
t1=$(t)
echo "# time: install + DKMS build $(secs "$t0" "$t1") s"
dkms status hwlat >"$res/dkms-status.txt" 2>&1
# Fixed strings: a kernel release such as 6.12.117+deb13-amd64 is no regex.
if grep -F "hwlat/" "$res/dkms-status.txt" | grep -F ", $kver, " | grep -qF ": installed"; then
	ok "dkms status says installed for $kver"
else
	not_ok "dkms status says installed for $kver"
	sed 's/^/#   /' "$res/dkms-status.txt"
	cat /var/lib/dkms/hwlat/*/build/make.log 2>/dev/null | tail -n 30 | sed 's/^/#   make.log: /'
fi
if vm=$(modinfo -F vermagic hwlat_detector 2>&1) && [ "${vm%% *}" = "$kver" ]; then
	ok "modinfo hwlat_detector works (vermagic $kver)"
else
	not_ok "modinfo hwlat_detector works (vermagic $kver)"
	echo "#   modinfo said: $vm"
fi

# 2. One scan through systemd, configured by the conf file.
mkdir -p /etc/hwlat
printf '%s\n' "# written by tests/vm/guest/user-path.sh" "${conf[@]}" >/etc/hwlat/hwlat-scan.conf
echo "# scan config: ${conf[*]}"
t2=$(t)
systemctl start hwlat-scan >"$res/systemctl-start.txt" 2>&1 &
start_pid=$!
started=0
for _ in $(seq 1 600); do
	if [ "$(cat /sys/kernel/debug/hwlat_detector/enable 2>/dev/null)" = 1 ]; then
		started=1
		break
	fi
	kill -0 "$start_pid" 2>/dev/null || break
	sleep 0.1
done
[ "$started" = 1 ] && mark scan-started
src=0
wait "$start_pid" || src=$?
t3=$(t)
mark scan-done rc=$src
echo "# time: scan $(secs "$t2" "$t3") s"
if [ "$src" -eq 0 ] && [ "$started" = 1 ]; then
	ok "systemctl start hwlat-scan succeeds and enabled the detector"
else
	not_ok "systemctl start hwlat-scan succeeds and enabled the detector (exit $src, detector seen enabled: $started)"
	sed 's/^/#   /' "$res/systemctl-start.txt"
	systemctl status --no-pager hwlat-scan 2>&1 | sed 's/^/#   /'
fi
# The scan's id is the service's $INVOCATION_ID: take it from the summary,
# and check it against the invocation id journald attached to the entry.
read -r scan_id invocation < <(journalctl -b -o json \
	MESSAGE_ID=4ffb84af0b5d43dab64f8c6cd40251d6 | python3 -c '
import json, sys
e = [json.loads(l) for l in sys.stdin][-1:] or [{}]
print(e[0].get("HWLAT_SCAN_ID", "none"), e[0].get("_SYSTEMD_INVOCATION_ID", "none").replace("-", ""))')
echo "# scan id: $scan_id (journald invocation id $invocation)"
if [[ "$scan_id" =~ ^[0-9a-f]{32}$ ]] && [ "$scan_id" = "$invocation" ]; then
	ok "the summary's HWLAT_SCAN_ID is the service's invocation id"
else
	not_ok "the summary's HWLAT_SCAN_ID is the service's invocation id ($scan_id vs $invocation)"
fi
journalctl -u hwlat-scan --no-pager -b >"$res/hwlat-scan-unit.log" 2>&1

# 3. The journal: sample and summary entries with every field, this scan.
journalctl -o json -b HWLAT_SCAN_ID="$scan_id" >"$res/journal-hwlat.json" 2>&1
check "journal holds this scan's samples and summary with every field" \
	python3 - "$res/journal-hwlat.json" "$scan_id" <<'PY'
import json, re, sys
path, scan = sys.argv[1], sys.argv[2]
SAMPLE, SUMMARY = "18debb1199484fcc965913f03f96d36e", "4ffb84af0b5d43dab64f8c6cd40251d6"
num = ["HWLAT_SEQ", "HWLAT_CPU", "HWLAT_INNER_NS", "HWLAT_OUTER_NS", "HWLAT_LATENCY_NS",
       "HWLAT_COUNT", "HWLAT_NMI_COUNT", "HWLAT_NMI_NS", "HWLAT_SMI_COUNT",
       "HWLAT_TIMESTAMP_NS", "HWLAT_THRESHOLD_NS"]
snum = ["HWLAT_THRESHOLD_NS", "HWLAT_WIDTH_NS", "HWLAT_WINDOW_NS", "HWLAT_HARDLIMIT_NS",
        "HWLAT_START_NS", "HWLAT_DURATION_NS", "HWLAT_SAMPLES", "HWLAT_MAX_NS",
        "HWLAT_DROPPED", "HWLAT_SMI_TOTAL", "HWLAT_NMI_TOTAL", "HWLAT_FLOOR_NS"]
stext = ["HWLAT_STATUS", "HWLAT_MODE", "HWLAT_CPUS", "HWLAT_KERNEL", "HWLAT_CPU_MODEL", "HWLAT_CLOCK"]
if not re.fullmatch(r"[0-9a-f]{32}", scan):
    sys.exit("no InvocationID for hwlat-scan: %r" % scan)
samples, summaries, bad = [], [], []
for line in open(path):
    e = json.loads(line)
    mid = e.get("MESSAGE_ID")
    if mid == SAMPLE:
        samples.append(e)
        for f in num:
            if not re.fullmatch(r"[0-9]+", str(e.get(f, ""))):
                bad.append("sample %s: %s=%r" % (e.get("HWLAT_SEQ"), f, e.get(f)))
        if e.get("HWLAT_LATENCY_NS", "").isdigit() and int(e["HWLAT_LATENCY_NS"]) != max(
                int(e.get("HWLAT_INNER_NS", 0)), int(e.get("HWLAT_OUTER_NS", 0))):
            bad.append("sample %s: latency != max(inner, outer)" % e.get("HWLAT_SEQ"))
    elif mid == SUMMARY:
        summaries.append(e)
        for f in snum:
            if not re.fullmatch(r"[0-9]+", str(e.get(f, ""))):
                bad.append("summary: %s=%r" % (f, e.get(f)))
        for f in stext:
            if f not in e:
                bad.append("summary: %s missing" % f)
print("samples %d, summaries %d" % (len(samples), len(summaries)))
if len(summaries) != 1:
    sys.exit("expected exactly 1 summary for scan %s, found %d" % (scan, len(summaries)))
s = summaries[0]
if s.get("HWLAT_STATUS") != "completed":
    bad.append("summary: HWLAT_STATUS=%r, expected completed" % s.get("HWLAT_STATUS"))
if not samples:
    bad.append("no sample entries (TCG noise exceeds the default threshold, so there must be some)")
if str(len(samples)) != s.get("HWLAT_SAMPLES"):
    bad.append("summary says HWLAT_SAMPLES=%s but the journal holds %d samples" % (s.get("HWLAT_SAMPLES"), len(samples)))
lat = [int(e["HWLAT_LATENCY_NS"]) for e in samples if e.get("HWLAT_LATENCY_NS", "").isdigit()]
if lat and str(max(lat)) != s.get("HWLAT_MAX_NS"):
    bad.append("summary HWLAT_MAX_NS=%s, largest sample %d" % (s.get("HWLAT_MAX_NS"), max(lat)))
if bad:
    print("\n".join(bad[:20]))
    sys.exit(1)
print("max %s ns, duration %s ns, floor %s ns, clock %s" % (s["HWLAT_MAX_NS"], s["HWLAT_DURATION_NS"], s["HWLAT_FLOOR_NS"], s["HWLAT_CLOCK"]))
PY
python3 - "$res/journal-hwlat.json" <<'PY' | sed 's/^/# /'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("MESSAGE_ID") == "4ffb84af0b5d43dab64f8c6cd40251d6":
        print("summary: samples %s max %s ns floor %s ns smi %s nmi %s dropped %s clock %s" % tuple(
            e.get(k) for k in ("HWLAT_SAMPLES", "HWLAT_MAX_NS", "HWLAT_FLOOR_NS", "HWLAT_SMI_TOTAL",
                               "HWLAT_NMI_TOTAL", "HWLAT_DROPPED", "HWLAT_CLOCK")))
PY

# 4. The report, three ways.
if hwlat-report --histogram >"$res/report-histogram.txt" 2>"$res/report-histogram.err" &&
	[ -s "$res/report-histogram.txt" ]; then
	ok "hwlat-report --histogram shows the scan"
else
	not_ok "hwlat-report --histogram shows the scan"
	cat "$res/report-histogram.txt" "$res/report-histogram.err" | tail -n 20 | sed 's/^/#   /'
fi
report_json() {
	hwlat-report --json >"$res/report.json" &&
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$res/report.json" &&
		grep -qi "$scan_id" "$res/report.json"
}
report_svg() {
	hwlat-report --svg "$res/report.svg" &&
		head -c 300 "$res/report.svg" | grep -q "<svg" && grep -q "</svg>" "$res/report.svg"
}
check "hwlat-report --json is valid JSON naming this scan" report_json
check "hwlat-report --svg writes an SVG file" report_svg

# 5. Purge leaves nothing behind.
if [ "$keep" = 0 ]; then
	check "apt-get purge removes both packages" \
		env DEBIAN_FRONTEND=noninteractive apt-get purge -y -o Dpkg::Use-Pty=0 hwlat-dkms hwlat-tools
	left=$( {
		dkms status hwlat 2>&1 | grep -v '^$'
		find /lib/modules /usr/lib/modules -name 'hwlat_detector.ko*' 2>/dev/null
		ls -d /usr/src/hwlat-* /var/lib/dkms/hwlat 2>/dev/null
		ls /lib/systemd/system/hwlat-scan.* /usr/lib/systemd/system/hwlat-scan.* 2>/dev/null
		hash -r
		command -v hwlat-report hwlat-scan
		systemctl list-unit-files 'hwlat*' --no-legend 2>/dev/null
	} )
	if [ -z "$left" ]; then
		ok "after purge: no dkms entry, module, source, units or tools"
	else
		not_ok "after purge: no dkms entry, module, source, units or tools"
		printf '%s\n' "$left" | sed 's/^/#   left: /'
	fi
	if ! modinfo hwlat_detector >/dev/null 2>&1; then
		ok "after purge: modinfo hwlat_detector fails"
	else
		not_ok "after purge: modinfo hwlat_detector fails"
	fi
fi

# 6. The kernel log: nothing went wrong in the kernel.
dmesg >"$res/dmesg-end.txt"
tail -n +"$((dmesg_start + 1))" "$res/dmesg-end.txt" >"$res/dmesg-test.txt"
# Case-sensitive, as the kernel prints them ("loops_per_jiffy" is no oops).
pat='WARNING:|BUG:|Oops:|general protection fault|soft lockup|hard LOCKUP|hung_task|blocked for more than|Call Trace:|rcu: INFO|detected stalls|self-detected stall|NMI received for unknown reason'
[ "$allow_nmi" = 1 ] && pat=${pat%|NMI received for unknown reason}
if early=$(head -n "$dmesg_start" "$res/dmesg-end.txt" | grep -E "$pat"); then
	printf '%s\n' "$early" | sed 's/^/# (before the test, not counted) /'
fi
if bad=$(grep -E "$pat" "$res/dmesg-test.txt"); then
	not_ok "dmesg has no warning, oops, lockup, stall or hung task"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/#   /'
else
	ok "dmesg has no warning, oops, lockup, stall or hung task ($(wc -l <"$res/dmesg-test.txt") lines since the test began)"
fi
grep -i hwlat "$res/dmesg-end.txt" | tail -n 5 | sed 's/^/# dmesg: /'
echo "1..$n"
[ "$failed" -eq 0 ]
