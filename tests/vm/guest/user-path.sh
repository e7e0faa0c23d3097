#!/bin/bash
# Guest side of tests/vm/user-path (runs inside the QEMU guest as root, from
# the read-only payload share, cwd /mnt/payload). Proves the user's path on
# the guest's kernel: the .debs install offline, DKMS builds the module for
# the running kernel, one `systemctl start hwlat-scan` writes sample and
# summary entries with every field to the journal (sequence numbers without
# unexplained gaps) and leaves the detector as it found it, hwlat-report
# shows them (histogram, JSON, SVG); then what hwlat-scan(8) promises beyond
# the happy path: `systemctl stop` half-way gives an "interrupted" summary
# that accounts for every sample, a second scan is refused with status 3
# while the first runs undisturbed, a missing module is status 4 with a
# message naming the kernel and the fix; SIGHUP to an interactive scan on a
# terminal ends it like SIGTERM (detector restored, "interrupted"), a scan
# longer than the unit's start timeout extends it itself; DKMS signs the
# module with its MOK key (DKMS 3; bullseye's DKMS 2.8 signs nothing, and
# there the module must be unsigned), and under kernel lockdown (raised after loading
# with modprobe.d options) a scan runs with the module's parameters and says
# so; purge removes everything, and the
# kernel log stays free of warnings, oopses, lockups and hung tasks. Prints
# TAP; copies the evidence to /mnt/results.
#
#   user-path.sh [--allow-nmi] [--keep] [--second-kernel=K2] KEY=VALUE...
# KEY=VALUE lines go to /etc/hwlat/hwlat-scan.conf (default: duration=15s
# width=100ms window=200ms). --allow-nmi tolerates the kernel's "NMI received
# for unknown reason" line (host NMI injection); --keep skips the purge (and
# so the missing-module checks). --second-kernel=K2 (a release, uname -r
# form) also installs the second kernel K2 from the payload's kernel2/ before
# the purge, and checks DKMS for both kernels (./second-kernel.sh says what).
set -uo pipefail

res=/mnt/results
allow_nmi=0 keep=0 conf=() k2="" hv_bit=""
for a in "$@"; do
	case "$a" in
	--allow-nmi) allow_nmi=1 ;;
	--keep) keep=1 ;;
	--hypervisor-bit=[01]) hv_bit=${a#*=} ;;
	--second-kernel=*)
		k2=${a#*=}
		[[ "$k2" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || {
			echo "user-path.sh: --second-kernel '$k2' does not look like a kernel release" >&2
			exit 2
		}
		;;
	*=*) conf+=("${a%%=*} = ${a#*=}") ;;
	*) echo "user-path.sh: bad argument '$a' (expected --allow-nmi, --keep, --hypervisor-bit=0|1, --second-kernel=K2 or KEY=VALUE)" >&2; exit 2 ;;
	esac
done
[ ${#conf[@]} -gt 0 ] || conf=("duration = 15s" "width = 100ms" "window = 200ms")

SAMPLE_ID=18debb1199484fcc965913f03f96d36e
SUMMARY_ID=4ffb84af0b5d43dab64f8c6cd40251d6
det=/sys/kernel/debug/hwlat_detector
marker=/run/hwlat/loaded-by-scan

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# run_check LINES DESCRIPTION CMD...: runs CMD and reports it as one test;
# its output is shown on failure, and its last LINES lines on success too.
run_check() {
	local lines=$1 d=$2 o rc=0
	shift 2
	o=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$d"
		[ "$lines" -eq 0 ] || printf '%s\n' "$o" | tail -n "$lines" | sed 's/^/#   /'
	else
		not_ok "$d"
		echo "# command: $* (exit $rc)"
		printf '%s\n' "$o" | tail -n 30 | sed 's/^/#   /'
	fi
	return "$rc"
}
# check DESCRIPTION CMD...: output only on failure.
check() { run_check 0 "$@"; }
# check_facts DESCRIPTION CMD...: also shows what CMD measured on success.
check_facts() { run_check 5 "$@"; }
mark() { echo "HWLAT-MARK $*" >/dev/ttyS0; }
t() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
bail() {
	echo "Bail out! $*"
	echo "1..$n"
	exit 1
}
# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds; fails
# after SECONDS.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
module_loaded() { grep -q '^hwlat_detector ' /proc/modules; }
detector_enabled() { [ "$(cat "$det/enable" 2>/dev/null)" = 1 ]; }
unit_prop() { systemctl show -p "$1" --value hwlat-scan; }
unit_activating() { [ "$(unit_prop ActiveState)" = activating ]; }
unit_done() { case "$(unit_prop ActiveState)" in inactive | failed) return 0 ;; esac; return 1; }
# What the unit did, for a failure report: status and its last journal lines.
unit_evidence() {
	systemctl status --no-pager hwlat-scan 2>&1 | head -n 12 | sed 's/^/#   status: /'
	journalctl -b -u hwlat-scan --no-pager -n 15 -o short-monotonic 2>&1 | sed 's/^/#   journal: /'
}
# unit_succeeded DESCRIPTION: the last run of the unit ended inactive with
# Result=success and exit status 0.
unit_succeeded() {
	local st
	st="ActiveState=$(unit_prop ActiveState) Result=$(unit_prop Result) ExecMainStatus=$(unit_prop ExecMainStatus)"
	if [ "$st" = "ActiveState=inactive Result=success ExecMainStatus=0" ]; then
		ok "$1 ($st)"
	else
		not_ok "$1 ($st)"
		unit_evidence
	fi
}
# last_unit_scan_id: HWLAT_SCAN_ID of the last summary hwlat-scan.service
# journaled this boot ("" when there is none).
last_unit_scan_id() {
	journalctl --sync 2>/dev/null
	journalctl -b -o json MESSAGE_ID="$SUMMARY_ID" _SYSTEMD_UNIT=hwlat-scan.service 2>/dev/null |
		python3 -c '
import json, sys
e = [json.loads(l) for l in sys.stdin if l.strip()][-1:] or [{}]
print(e[0].get("HWLAT_SCAN_ID", ""))'
}
# export_scan ID FILE: this boot's journal entries of scan ID, as JSON lines.
export_scan() {
	journalctl --sync 2>/dev/null
	journalctl -o json -b HWLAT_SCAN_ID="$1" >"$2" 2>&1
}
# count_entries MESSAGE_ID [FIELD=VALUE]: journal entries of this boot.
count_entries() {
	journalctl -b -q -o cat MESSAGE_ID="$1" ${2:+"$2"} 2>/dev/null | wc -l
}
samples_at_least() { [ "$(count_entries "$SAMPLE_ID" HWLAT_SCAN_ID="$1")" -ge "$2" ]; }
# write_conf LINE...: the scan configuration hwlat-scan.service reads.
write_conf() {
	printf '%s\n' "# written by tests/vm/guest/user-path.sh" "$@" >/etc/hwlat/hwlat-scan.conf
}
# snapshot: the detector's settings as a user sees them (enable included).
snapshot() {
	local f
	for f in enable threshold width window mode cpus; do
		printf '%s=%s ' "$f" "$(cat "$det/$f" 2>&1)"
	done
}

# scan_check JSON SCAN_ID KEY=VALUE...: the journal entries of one scan
# (journalctl -o json HWLAT_SCAN_ID=...) are complete and consistent:
# every documented field, exactly one summary and it comes last, the summary
# counts exactly the sample entries in the journal and their maximum, the
# sequence numbers rise strictly and every missing number is covered by
# HWLAT_DROPPED. KEYs: status (expected HWLAT_STATUS), min_samples,
# threshold_ns (expected on every entry), min_duration_ns, max_duration_ns.
# Prints what it found; on failure, what was wrong.
scan_check() {
	python3 - "$@" <<'PY'
import json, re, sys
path, scan = sys.argv[1], sys.argv[2]
want = dict(a.split("=", 1) for a in sys.argv[3:])
SAMPLE, SUMMARY = "18debb1199484fcc965913f03f96d36e", "4ffb84af0b5d43dab64f8c6cd40251d6"
SKIP = "ab639cbb95654a4d8de1256da3c0ca68"
num = ["HWLAT_SEQ", "HWLAT_CPU", "HWLAT_INNER_NS", "HWLAT_OUTER_NS", "HWLAT_LATENCY_NS",
       "HWLAT_COUNT", "HWLAT_NMI_COUNT", "HWLAT_NMI_NS",
       "HWLAT_TIMESTAMP_NS", "HWLAT_THRESHOLD_NS"]
# A number, or "unavailable" where SMIs cannot be counted (never 0 for that).
maybe = ["HWLAT_SMI_COUNT", "HWLAT_SMI_NS"]
snum = ["HWLAT_THRESHOLD_NS", "HWLAT_WIDTH_NS", "HWLAT_WINDOW_NS", "HWLAT_HARDLIMIT_NS",
        "HWLAT_START_NS", "HWLAT_DURATION_NS", "HWLAT_SAMPLES", "HWLAT_MAX_NS",
        "HWLAT_DROPPED", "HWLAT_NMI_TOTAL", "HWLAT_FLOOR_NS"]
stext = ["HWLAT_STATUS", "HWLAT_MODE", "HWLAT_CPUS", "HWLAT_KERNEL", "HWLAT_CPU_MODEL", "HWLAT_CLOCK",
         "HWLAT_SMI_METHOD", "HWLAT_HYPERVISOR", "HWLAT_CLOCKSOURCE", "HWLAT_TSC_STABLE",
         "HWLAT_SMI_SCOPE", "HWLAT_SKIPPED_CPU_WINDOWS"]
# Whose SMIs: the kernel's own view of the CPU, as hwlat-scan reads it.
guest = any(l.startswith("flags") and " hypervisor" in l for l in open("/proc/cpuinfo"))
if not re.fullmatch(r"[0-9a-f]{32}", scan):
    sys.exit("no scan id (HWLAT_SCAN_ID / InvocationID): %r" % scan)
entries = [json.loads(l) for l in open(path) if l.strip()]
samples, summaries, skips, bad = [], [], [], []
for e in entries:
    mid = e.get("MESSAGE_ID")
    if mid == SKIP:
        skips.append(e)
    elif mid == SAMPLE:
        samples.append(e)
        for f in num:
            if not re.fullmatch(r"[0-9]+", str(e.get(f, ""))):
                bad.append("sample %s: %s=%r" % (e.get("HWLAT_SEQ"), f, e.get(f)))
        for f in maybe:
            if not re.fullmatch(r"[0-9]+|unavailable", str(e.get(f, ""))):
                bad.append("sample %s: %s=%r" % (e.get("HWLAT_SEQ"), f, e.get(f)))
        if e.get("HWLAT_LATENCY_NS", "").isdigit() and int(e["HWLAT_LATENCY_NS"]) != max(
                int(e.get("HWLAT_INNER_NS", 0)), int(e.get("HWLAT_OUTER_NS", 0))):
            bad.append("sample %s: latency != max(inner, outer)" % e.get("HWLAT_SEQ"))
    elif mid == SUMMARY:
        summaries.append(e)
        for f in snum + ["HWLAT_SKIPPED_WINDOWS"]:
            if not re.fullmatch(r"[0-9]+", str(e.get(f, ""))):
                bad.append("summary: %s=%r" % (f, e.get(f)))
        if e.get("HWLAT_SMI_SCOPE") != ("guest" if guest else "host"):
            bad.append("summary: HWLAT_SMI_SCOPE=%r, the kernel's flags say %s"
                       % (e.get("HWLAT_SMI_SCOPE"), "hypervisor" if guest else "none"))
        smi = str(e.get("HWLAT_SMI_TOTAL", ""))
        if not re.fullmatch(r"[0-9]+", smi) and not (
                smi == "unavailable" and e.get("HWLAT_SMI_UNAVAILABLE")):
            bad.append("summary: HWLAT_SMI_TOTAL=%r (HWLAT_SMI_UNAVAILABLE=%r)"
                       % (smi, e.get("HWLAT_SMI_UNAVAILABLE")))
        for f in stext:
            if f not in e:
                bad.append("summary: %s missing" % f)
print("journal: %d samples, %d summaries for scan %s" % (len(samples), len(summaries), scan))
if len(summaries) != 1:
    sys.exit("expected exactly 1 summary for scan %s, found %d" % (scan, len(summaries)))
s = summaries[0]
if entries[-1] is not s:
    bad.append("the summary is not the scan's last journal entry (last: %s)" % entries[-1].get("MESSAGE"))
if "status" in want and s.get("HWLAT_STATUS") != want["status"]:
    bad.append("summary: HWLAT_STATUS=%r, expected %s" % (s.get("HWLAT_STATUS"), want["status"]))
if len(samples) < int(want.get("min_samples", "1")):
    bad.append("%d sample entries, expected at least %s (TCG noise exceeds the threshold, so there must be some)"
               % (len(samples), want.get("min_samples", "1")))
if str(len(samples)) != s.get("HWLAT_SAMPLES"):
    bad.append("summary says HWLAT_SAMPLES=%s but the journal holds %d samples" % (s.get("HWLAT_SAMPLES"), len(samples)))
lat = [int(e["HWLAT_LATENCY_NS"]) for e in samples if e.get("HWLAT_LATENCY_NS", "").isdigit()]
if lat and str(max(lat)) != s.get("HWLAT_MAX_NS"):
    bad.append("summary HWLAT_MAX_NS=%s, largest sample %d" % (s.get("HWLAT_MAX_NS"), max(lat)))
# Sequence numbers: 1, 2, 3... per enable; a lost window leaves a gap and
# counts in HWLAT_DROPPED, so every gap must be explained by it.
# A skip record takes a number too, in its own entry.
seqs = [int(e["HWLAT_SEQ"]) for e in entries if e.get("MESSAGE_ID") in (SAMPLE, SKIP)
        and e.get("HWLAT_SEQ", "").isdigit()]
back = [(a, b) for a, b in zip(seqs, seqs[1:]) if b <= a]
if back:
    bad.append("sequence numbers do not rise strictly: %s" % ", ".join("%d then %d" % p for p in back[:5]))
missing = sorted(set(range(1, max(seqs) + 1)) - set(seqs)) if seqs else []
dropped = int(s["HWLAT_DROPPED"]) if s.get("HWLAT_DROPPED", "").isdigit() else -1
if len(missing) > dropped:
    bad.append("%d sequence numbers missing (first: %s) but HWLAT_DROPPED=%s"
               % (len(missing), missing[:10], s.get("HWLAT_DROPPED")))
if "threshold_ns" in want:
    wrong = [e for e in samples + [s] if e.get("HWLAT_THRESHOLD_NS") != want["threshold_ns"]]
    if wrong:
        bad.append("%d entries with HWLAT_THRESHOLD_NS other than %s (first: %s)"
                   % (len(wrong), want["threshold_ns"], wrong[0].get("HWLAT_THRESHOLD_NS")))
dur = int(s["HWLAT_DURATION_NS"]) if s.get("HWLAT_DURATION_NS", "").isdigit() else -1
if "min_duration_ns" in want and dur < int(want["min_duration_ns"]):
    bad.append("HWLAT_DURATION_NS=%d, expected at least %s" % (dur, want["min_duration_ns"]))
if "max_duration_ns" in want and dur > int(want["max_duration_ns"]):
    bad.append("HWLAT_DURATION_NS=%d, expected at most %s" % (dur, want["max_duration_ns"]))
print("summary: status %s, samples %s, seq %s..%s, %d missing, dropped %s, max %s ns, duration %.3f s, floor %s ns, clock %s"
      % (s.get("HWLAT_STATUS"), s.get("HWLAT_SAMPLES"), seqs[0] if seqs else "-", seqs[-1] if seqs else "-",
         len(missing), s.get("HWLAT_DROPPED"), s.get("HWLAT_MAX_NS"), dur / 1e9, s.get("HWLAT_FLOOR_NS"),
         s.get("HWLAT_CLOCK")))
print("summary: SMIs %s (%s%s, scope %s), hypervisor %s, clocksource %s, TSC stable %s, "
      "%s windows skipped, %d skip entries"
      % (s.get("HWLAT_SMI_TOTAL"), s.get("HWLAT_SMI_METHOD"),
         ", " + s["HWLAT_SMI_UNAVAILABLE"] if s.get("HWLAT_SMI_UNAVAILABLE") else "",
         s.get("HWLAT_SMI_SCOPE"), s.get("HWLAT_HYPERVISOR"), s.get("HWLAT_CLOCKSOURCE"),
         s.get("HWLAT_TSC_STABLE"), s.get("HWLAT_SKIPPED_WINDOWS"), len(skips)))
if bad:
    print("\n".join(bad[:20]))
    sys.exit(1)
PY
}

kver=$(uname -r)
# The kernel log before the test (boot-time TCG noise such as "failed to get
# a good estimate for loops_per_jiffy") is not ours: check only what follows.
dmesg_start=$(dmesg | wc -l)
echo "# guest kernel $kver, $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
mkdir -p /root/debs
cp ./hwlat-dkms_*.deb ./hwlat-tools_*.deb /root/debs/ 2>/dev/null ||
	bail "the payload has no hwlat-dkms_*.deb and hwlat-tools_*.deb: $(ls)"
if [ -n "$k2" ]; then
	[ -f ./second-kernel.sh ] || bail "--second-kernel given but the payload has no second-kernel.sh: $(ls)"
	# shellcheck source=tests/vm/guest/second-kernel.sh
	. ./second-kernel.sh
	second_kernel_precheck "$kver" "$k2"
fi

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
# DKMS 3 writes "hwlat/VERSION, KVER, x86_64: installed", DKMS 2.8 (bullseye)
# "hwlat, VERSION, KVER, x86_64: installed".
if grep -E '^hwlat(/|, )' "$res/dkms-status.txt" | grep -F ", $kver, " | grep -qF ": installed"; then
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
# DKMS signs the module with its own key, /var/lib/dkms/mok.key, whose
# certificate /var/lib/dkms/mok.pub (CN "DKMS module signing key") a Secure
# Boot machine must enrol with mokutil (README.md): the module's signature
# names that signer and that certificate's serial number.
signer=$(modinfo -F signer hwlat_detector 2>&1)
sig_key=$(modinfo -F sig_key hwlat_detector 2>&1 | tr -d ':' | tr 'a-f' 'A-F')
mok_serial=$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -serial 2>&1 | sed 's/^serial=//' | tr 'a-f' 'A-F')
mok_subject=$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -subject 2>&1)
echo "# modinfo -F signer hwlat_detector: $signer; sig_key $sig_key; sig_hashalgo $(modinfo -F sig_hashalgo hwlat_detector 2>&1)"
echo "# /var/lib/dkms/mok.pub: $mok_subject, serial $mok_serial"
# DKMS signs from version 3 on; 2.8 (bullseye) leaves the module unsigned and
# makes no key, which is what a bullseye user gets.
dkms_version=$(dpkg-query -W -f='${Version}' dkms 2>/dev/null)
if dpkg --compare-versions "$dkms_version" lt 3; then
	if [ -z "$signer" ] && [ -z "$sig_key" ] && [ ! -e /var/lib/dkms/mok.pub ]; then
		ok "DKMS $dkms_version does not sign: the module has no signature and there is no /var/lib/dkms/mok.pub"
	else
		not_ok "DKMS $dkms_version does not sign (signer '$signer', sig_key '$sig_key', mok.pub $([ -e /var/lib/dkms/mok.pub ] && echo present || echo absent))"
	fi
elif [ "$signer" = "DKMS module signing key" ] && [ -n "$sig_key" ] && [ "$sig_key" = "$mok_serial" ]; then
	ok "DKMS signed the module with its MOK key: signer '$signer', key serial $sig_key = /var/lib/dkms/mok.pub"
else
	not_ok "DKMS signed the module with its MOK key (signer '$signer', sig_key '$sig_key', /var/lib/dkms/mok.pub serial '$mok_serial')"
fi
# systemd names a unit file's line when it ignores or rejects a setting
# ("hwlat-scan.service:62: Unknown key name 'PrivateIPC'" on systemd 247):
# the installed units load on this suite's systemd without one.
systemctl daemon-reload
systemctl show -p LoadState hwlat-scan.service hwlat-monitor.service >"$res/unit-load.txt" 2>&1 || true
journalctl -b -o cat 2>&1 | grep -E 'hwlat-(scan|monitor)\.service:[0-9]+:' >"$res/unit-complaints.txt" || true
if [ ! -s "$res/unit-complaints.txt" ] && [ "$(grep -c '^LoadState=loaded$' "$res/unit-load.txt")" -eq 2 ]; then
	ok "systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') loads both units without a complaint about a line"
else
	not_ok "systemd loads both units without a complaint about a line"
	sed 's/^/#   /' "$res/unit-load.txt" "$res/unit-complaints.txt"
fi
# The packaged configuration, put back once the test's scans are done.
cp /etc/hwlat/hwlat-scan.conf /root/hwlat-scan.conf.packaged 2>/dev/null || true

# 2. One scan through systemd, configured by the conf file.
mkdir -p /etc/hwlat
write_conf "${conf[@]}"
echo "# scan config: ${conf[*]}"
loaded_before=0
module_loaded && loaded_before=1
t2=$(t)
systemctl start hwlat-scan >"$res/systemctl-start.txt" 2>&1 &
start_pid=$!
started=0 loaded_during=0
for _ in $(seq 1 600); do
	if detector_enabled; then
		started=1
		module_loaded && loaded_during=1
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
	unit_evidence
fi
# Left as found (hwlat-scan(8): "the module is unloaded if this scan loaded
# it", settings restored, detector disabled): /proc/modules before and
# during the scan tells what the unit did, and decides what must hold now.
echo "# hwlat_detector in /proc/modules: before the scan $loaded_before, during it $loaded_during"
if [ "$loaded_before" = 0 ]; then
	if [ "$loaded_during" = 1 ] && ! module_loaded && [ ! -e "$marker" ]; then
		ok "the unit loaded hwlat_detector for the scan and unloaded it afterwards ($marker gone)"
	else
		not_ok "the unit loaded hwlat_detector for the scan and unloaded it afterwards (loaded during: $loaded_during, loaded now: $(module_loaded && echo yes || echo no), marker: $(ls "$marker" 2>&1))"
		grep hwlat /proc/modules | sed 's/^/#   proc\/modules: /'
		unit_evidence
	fi
else
	if module_loaded && [ "$(cat "$det/enable" 2>&1)" = 0 ]; then
		ok "the module was loaded before the scan: it stays loaded and enable reads 0 again"
	else
		not_ok "the module was loaded before the scan: it stays loaded and enable reads 0 again ($(snapshot))"
		unit_evidence
	fi
fi
# The scan's id is the service's $INVOCATION_ID: take it from the summary,
# and check it against the invocation id journald attached to the entry.
journalctl --sync 2>/dev/null
read -r scan_id invocation < <(journalctl -b -o json \
	MESSAGE_ID="$SUMMARY_ID" | python3 -c '
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

# 3. The journal: sample and summary entries with every field, this scan;
# the summary counts the samples exactly and every gap in the sequence
# numbers is a dropped window it reports.
export_scan "$scan_id" "$res/journal-hwlat.json"
check_facts "journal holds this scan's samples and summary with every field, sequence numbers without unexplained gaps" \
	scan_check "$res/journal-hwlat.json" "$scan_id" status=completed

# 4. The report, three ways.
if hwlat-report --histogram >"$res/report-histogram.txt" 2>"$res/report-histogram.err" &&
	[ -s "$res/report-histogram.txt" ]; then
	ok "hwlat-report --histogram shows the scan"
else
	not_ok "hwlat-report --histogram shows the scan"
	cat "$res/report-histogram.txt" "$res/report-histogram.err" | tail -n 20 | sed 's/^/#   /'
fi
# The host boots the guest with CPUID's hypervisor bit (TCG's default) or
# without it (--hypervisor-bit=0, as bare metal looks): the kernel's flags
# must say which, or the scope checks above and below prove nothing.
if [ -n "$hv_bit" ]; then
	if grep -qw hypervisor /proc/cpuinfo; then seen=1; else seen=0; fi
	if [ "$seen" = "$hv_bit" ]; then
		ok "the kernel's CPU flags show the hypervisor bit the host set ($hv_bit)"
	else
		not_ok "the kernel's CPU flags show the hypervisor bit the host set ($hv_bit; /proc/cpuinfo says $seen)"
	fi
fi
# Under a hypervisor the SMI counts are the guest's: the report says the
# host's are not in them. Without one, they are the machine's: no such note,
# and the JSON calls the scope host.
if grep -qw hypervisor /proc/cpuinfo; then
	if grep -q "note: *SMIs counted in this guest only" "$res/report-histogram.txt"; then
		ok "the report notes that the SMIs are the guest's (kernel flag hypervisor)"
	else
		not_ok "the report notes that the SMIs are the guest's (kernel flag hypervisor)"
		grep -n "SMI" "$res/report-histogram.txt" | head -n 10 | sed 's/^/#   /'
	fi
else
	scope=$(hwlat-report --json 2>/dev/null | python3 -c 'import json, sys
print(json.load(sys.stdin)["scans"][-1].get("smi_scope"))' 2>&1)
	if ! grep -q "SMIs counted in this guest only" "$res/report-histogram.txt" && [ "$scope" = host ]; then
		ok "without the hypervisor bit the report calls the SMI counts the host's (smi_scope host, no guest note)"
	else
		not_ok "without the hypervisor bit the report calls the SMI counts the host's (smi_scope '$scope')"
		grep -n "SMI" "$res/report-histogram.txt" | head -n 10 | sed 's/^/#   /'
	fi
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
# A user outside systemd-journal cannot read the system journal: the report
# must call that a permission problem and give the fix, not claim that the
# journal holds no hwlat entries.
report_as_nobody() {
	local out rc=0
	out=$(runuser -u nobody -- hwlat-report 2>&1) || rc=$?
	if [ "$rc" -eq 4 ] && grep -q "this is a permission problem" <<<"$out" &&
		grep -q "usermod -aG systemd-journal" <<<"$out" &&
		! grep -q "holds no hwlat-scan entries" <<<"$out"; then
		return 0
	fi
	echo "exit $rc, wanted 4 and the permission hint:"
	printf '%s\n' "$out"
	return 1
}
check "hwlat-report as a user outside systemd-journal names the permission problem and the fix (exit 4)" \
	report_as_nobody

# 5. `systemctl stop` half-way through a long scan: the scan stops at once
# (well within the unit's stop timeout), its summary says "interrupted" and
# accounts for exactly the samples it journaled, and the module it loaded is
# unloaded again.
write_conf "duration = 120s" "threshold = 5us" "width = 100ms" "window = 200ms"
echo "# stop test: duration 120s, threshold 5us, width 100ms, window 200ms"
systemctl start --no-block hwlat-scan
stop_id=""
if wait_for 120 unit_activating && wait_for 120 detector_enabled; then
	stop_id=$(unit_prop InvocationID)
	mark stop-scan-started
fi
if [ -n "$stop_id" ] && wait_for 90 samples_at_least "$stop_id" 5; then
	ok "a 120 s scan started with --no-block journals samples (at least 5 for invocation $stop_id)"
else
	not_ok "a 120 s scan started with --no-block journals samples (invocation '${stop_id:-none}', $(count_entries "$SAMPLE_ID" HWLAT_SCAN_ID="${stop_id:-none}") samples, $(snapshot))"
	unit_evidence
fi
timeout_stop=$(unit_prop TimeoutStopUSec)
ts0=$(t)
systemctl stop hwlat-scan >"$res/systemctl-stop.txt" 2>&1
stop_rc=$?
ts1=$(t)
stop_s=$(secs "$ts0" "$ts1")
# Well under the stop timeout: at most a quarter of it and at most 20 s
# (hwlat-scan drains for at most a window plus 2 s).
limit_s=$(python3 -c '
import re, sys
t = sys.argv[1].strip()
units = {"us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}
v = sum(float(n) * units[u] for n, u in re.findall(r"([0-9.]+)(us|ms|min|s|h)", t)) if t != "infinity" else 1e9
print("%.1f" % min(v / 4, 20))' "$timeout_stop")
echo "# systemctl stop took $stop_s s (TimeoutStopSec $timeout_stop, limit $limit_s s)"
if [ "$stop_rc" -eq 0 ] && awk -v a="$stop_s" -v b="$limit_s" 'BEGIN { exit !(a < b) }'; then
	ok "systemctl stop ends the scan in $stop_s s, well under the unit's stop timeout $timeout_stop"
else
	not_ok "systemctl stop ends the scan in $stop_s s, well under the unit's stop timeout $timeout_stop (exit $stop_rc, limit $limit_s s)"
	sed 's/^/#   /' "$res/systemctl-stop.txt"
	unit_evidence
fi
# Exit 0 after SIGTERM (hwlat-scan(8), EXIT STATUS), so the unit is not failed.
unit_succeeded "the interrupted scan exited 0 and the unit is inactive, not failed"
export_scan "${stop_id:-none}" "$res/journal-stop.json"
check_facts "the stopped scan's summary says interrupted, counts exactly its journaled samples, sequence numbers without unexplained gaps" \
	scan_check "$res/journal-stop.json" "${stop_id:-none}" status=interrupted min_samples=5 \
	threshold_ns=5000 max_duration_ns=110000000000
if ! module_loaded && [ ! -e "$marker" ]; then
	ok "after the stop, the module the unit loaded is unloaded again ($marker gone)"
else
	not_ok "after the stop, the module the unit loaded is unloaded again ($(grep hwlat /proc/modules), marker: $(ls "$marker" 2>&1), $(snapshot))"
	unit_evidence
fi

# 6. Two scans at once. The module is loaded by hand first, with a threshold
# of 33 us, so this also proves the other half of "left as found": a module
# the scan did not load stays loaded, disabled, with its settings restored.
modprobe hwlat_detector && echo 33 >"$det/threshold"
before=$(snapshot)
echo "# busy test: module loaded by hand, detector before: $before"
write_conf "duration = 8s" "threshold = 10us" "width = 100ms" "window = 200ms"
summaries_before=$(count_entries "$SUMMARY_ID")
systemctl start --no-block hwlat-scan
busy_id=""
if wait_for 120 unit_activating && wait_for 60 detector_enabled; then
	busy_id=$(unit_prop InvocationID)
	mark busy-scan-started
fi
# The second scan, as root would run it from a shell (no INVOCATION_ID: the
# guest command runs under a cloud-init service), with a different threshold.
brc=0
env -u INVOCATION_ID hwlat-scan --duration=5 --threshold=1us \
	>"$res/second-scan.out" 2>"$res/second-scan.err" || brc=$?
during=$(snapshot)
if [ -n "$busy_id" ] && [ "$brc" -eq 3 ] && grep -qiE 'another .*(scan|hwlat-scan).* running' "$res/second-scan.err"; then
	ok "a second hwlat-scan while the unit scans exits 3 saying another scan is running"
	sed 's/^/#   stderr: /' "$res/second-scan.err"
else
	not_ok "a second hwlat-scan while the unit scans exits 3 saying another scan is running (exit $brc, unit scan id '${busy_id:-none}')"
	cat "$res/second-scan.err" "$res/second-scan.out" | sed 's/^/#   saw: /'
	unit_evidence
fi
if [[ "$during" == *"enable=1 threshold=10 "* ]]; then
	ok "the refused scan left the running scan's detector alone (still enabled, threshold 10 us)"
else
	not_ok "the refused scan left the running scan's detector alone (still enabled, threshold 10 us): $during"
fi
wait_for 90 unit_done
unit_succeeded "the first scan still ran to its end and succeeded"
export_scan "${busy_id:-none}" "$res/journal-busy.json"
check_facts "the undisturbed scan completed its 8 s with its own threshold, every sample accounted for" \
	scan_check "$res/journal-busy.json" "${busy_id:-none}" status=completed threshold_ns=10000 \
	min_duration_ns=8000000000
summaries_after=$(count_entries "$SUMMARY_ID")
if [ "$summaries_after" -eq $((summaries_before + 1)) ]; then
	ok "the refused scan wrote no summary (one new summary, the unit's)"
else
	not_ok "the refused scan wrote no summary (summaries before $summaries_before, after $summaries_after)"
	journalctl -b -o cat MESSAGE_ID="$SUMMARY_ID" | tail -n 3 | sed 's/^/#   /'
fi
after=$(snapshot)
if module_loaded && [ "$after" = "$before" ] && [ ! -e "$marker" ]; then
	ok "a module loaded before the scan stays loaded, disabled, settings restored ($after)"
else
	not_ok "a module loaded before the scan stays loaded, disabled, settings restored (before: $before; after: $after; loaded: $(module_loaded && echo yes || echo no))"
	unit_evidence
fi
# A scan run by hand from another service (a CI runner; cloud-init here)
# inherits that service's $INVOCATION_ID; only the unit (--unit) may use it
# as the scan id, so two such scans must get two fresh ids.
inv=$(tr -d '-' </proc/sys/kernel/random/uuid)
summaries_before=$(count_entries "$SUMMARY_ID")
for _ in 1 2; do
	INVOCATION_ID=$inv hwlat-scan --duration=1 -q >/dev/null 2>>"$res/inherited-id.err"
done
journalctl --sync 2>/dev/null
shared=$(count_entries "$SUMMARY_ID" HWLAT_SCAN_ID="$inv")
new_summaries=$(($(count_entries "$SUMMARY_ID") - summaries_before))
if [ "$shared" -eq 0 ] && [ "$new_summaries" -eq 2 ]; then
	ok "2 scans run by hand under another service's INVOCATION_ID wrote 2 summaries with fresh scan ids"
else
	not_ok "2 scans run by hand under another service's INVOCATION_ID: $new_summaries new summaries, $shared with the inherited id"
	sed 's/^/#   stderr: /' "$res/inherited-id.err"
fi

# 6b. An interactive scan on a terminal gets SIGHUP (an SSH session drops):
# it ends as on SIGTERM, exit 0; the detector (loaded by hand above) is
# disabled with its settings restored and the summary says "interrupted". On
# the terminal it showed its progress. Then hwlat-scan.service with a start
# timeout of 5 s runs a 12 s scan to its end: the scan extends the timeout
# itself (EXTEND_TIMEOUT_USEC, NotifyAccess=main).
# on_pty OUT PIDFILE CMD...: runs CMD with a new pty as its controlling
# terminal, stdout and stderr; copies what it shows to OUT, writes its pid to
# PIDFILE, exits with its exit status.
on_pty() {
	python3 - "$@" <<'PY'
import os, pty, sys
out, pidfile, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
with open(pidfile, "w") as f:
    f.write(str(pid))
with open(out, "wb") as f:
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        f.write(data)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st) & 255)
PY
}
hup_before=$(snapshot)
summaries_before=$(count_entries "$SUMMARY_ID")
samples_before=$(count_entries "$SAMPLE_ID")
new_sample() { [ "$(count_entries "$SAMPLE_ID")" -gt "$samples_before" ]; }
rm -f "$res/hup-scan.pid"
on_pty "$res/hup-scan.tty" "$res/hup-scan.pid" env -u INVOCATION_ID \
	hwlat-scan --duration=60 --threshold=5us --width=100ms --window=200ms &
hup_runner=$!
hup_during=""
if wait_for 60 detector_enabled && wait_for 10 test -s "$res/hup-scan.pid"; then
	wait_for 60 new_sample
	sleep 2
	hup_during=$(snapshot)
	kill -HUP "$(cat "$res/hup-scan.pid")"
fi
runner_gone() { ! kill -0 "$hup_runner" 2>/dev/null; }
wait_for 30 runner_gone || kill -TERM "$hup_runner"
hrc=0
wait "$hup_runner" || hrc=$?
hup_after=$(snapshot)
if [ "$hrc" -eq 0 ] && grep -q "received Hangup, stopping the scan" "$res/hup-scan.tty"; then
	ok "SIGHUP to an interactive scan: it says 'received Hangup' and exits 0"
else
	not_ok "SIGHUP to an interactive scan: it says 'received Hangup' and exits 0 (exit $hrc)"
	tr '\r' '\n' <"$res/hup-scan.tty" | tail -n 15 | sed 's/^/#   tty: /'
fi
if [[ "$hup_during" == *"enable=1 threshold=5 "* ]] && [ "$hup_after" = "$hup_before" ]; then
	ok "after SIGHUP the detector is disabled with its settings restored ($hup_after)"
else
	not_ok "after SIGHUP the detector is disabled with its settings restored (before: $hup_before; during: $hup_during; after: $hup_after)"
fi
journalctl --sync 2>/dev/null
hup_id=$(journalctl -b -o json -n 1 MESSAGE_ID="$SUMMARY_ID" 2>/dev/null |
	python3 -c 'import json, sys; print(json.loads(sys.stdin.readline()).get("HWLAT_SCAN_ID", ""))' 2>/dev/null)
if [ "$(count_entries "$SUMMARY_ID")" -eq $((summaries_before + 1)) ]; then
	export_scan "${hup_id:-none}" "$res/journal-hup.json"
	check_facts "the SIGHUP'd scan's summary says interrupted, counts exactly its journaled samples" \
		scan_check "$res/journal-hup.json" "${hup_id:-none}" status=interrupted min_samples=1 \
		threshold_ns=5000 max_duration_ns=30000000000
else
	not_ok "the SIGHUP'd scan wrote one summary ($(($(count_entries "$SUMMARY_ID") - summaries_before)) new)"
fi
if grep -qE 'hwlat-scan: [0-9dhms ]+ elapsed, [0-9dhms ]+ left, [0-9]+ samples?, max ' "$res/hup-scan.tty"; then
	ok "the interactive scan showed its progress on the terminal"
else
	not_ok "the interactive scan showed its progress on the terminal"
	tr '\r' '\n' <"$res/hup-scan.tty" | head -n 5 | sed 's/^/#   tty: /'
fi
dropin=/run/systemd/system/hwlat-scan.service.d
mkdir -p "$dropin" && printf '[Service]\nTimeoutStartSec=5s\n' >"$dropin/zz-short-timeout.conf"
systemctl daemon-reload
write_conf "duration = 12s" "threshold = 10us" "width = 100ms" "window = 200ms"
ext_rc=0
systemctl start hwlat-scan >"$res/extend-timeout.txt" 2>&1 || ext_rc=$?
ext_state="Result=$(unit_prop Result) ExecMainStatus=$(unit_prop ExecMainStatus)"
rm -rf "$dropin"
systemctl daemon-reload
journalctl --sync 2>/dev/null
ext_id=$(journalctl -b -o json -n 1 MESSAGE_ID="$SUMMARY_ID" 2>/dev/null |
	python3 -c 'import json, sys; print(json.loads(sys.stdin.readline()).get("HWLAT_SCAN_ID", ""))' 2>/dev/null)
export_scan "${ext_id:-none}" "$res/journal-extend.json"
if [ "$ext_rc" -eq 0 ] && [ "$ext_state" = "Result=success ExecMainStatus=0" ]; then
	ok "a 12 s scan under TimeoutStartSec=5s is not killed: it extends its start timeout ($ext_state)"
	check_facts "that scan completed its 12 s" scan_check "$res/journal-extend.json" "${ext_id:-none}" \
		status=completed min_samples=0 min_duration_ns=12000000000
else
	not_ok "a 12 s scan under TimeoutStartSec=5s is not killed: it extends its start timeout (systemctl start: $ext_rc, $ext_state)"
	sed 's/^/#   /' "$res/extend-timeout.txt"
	unit_evidence
fi
check "modprobe -r hwlat_detector after the busy test" modprobe -r hwlat_detector
if [ -f /root/hwlat-scan.conf.packaged ]; then
	cp /root/hwlat-scan.conf.packaged /etc/hwlat/hwlat-scan.conf
else
	rm -f /etc/hwlat/hwlat-scan.conf
fi

# 7. The 2009 ABI the way rt-tests' hwlatdetect drove it (its kmod driver,
# unmodified): legacy-client.py says step by step what it proves. The demo's
# payload does not carry it.
if [ -f ./legacy-client.py ]; then
	if check "modprobe hwlat_detector for the legacy client" modprobe hwlat_detector; then
		lc_rc=0
		lc_out=$(python3 ./legacy-client.py 8 2>&1) || lc_rc=$?
		while IFS= read -r line; do
			case "$line" in
			"ok "*) ok "${line#ok * - }" ;;
			"not ok "*) not_ok "${line#not ok * - }" ;;
			*) echo "$line" ;;
			esac
		done <<<"$lc_out"
		[ "$lc_rc" -eq 0 ] || not_ok "legacy client exited with status $lc_rc"
		check "modprobe -r hwlat_detector after the legacy client" modprobe -r hwlat_detector
	fi
fi

# 7b. The second kernel: DKMS must build the module for it too.
[ -z "$k2" ] || second_kernel_install "$kver" "$k2"

# 7c. Kernel lockdown: the module is loaded with settings from
# /etc/modprobe.d (enabled=1, so that it samples without a debugfs write),
# then lockdown is raised to integrity, as Secure Boot does at boot. A scan
# through the unit must run with those settings: the unit's journal says
# which file debugfs refused and which settings it used, the summary records
# the parameters and HWLAT_SETTINGS_SOURCE=module-parameters, and every
# sample carries the threshold in force. A scan by hand asking for other
# settings exits 7 naming each with the modprobe.d line. Lockdown stays until
# reboot, so this comes after every step that writes debugfs; and a module
# signed with a key the kernel does not trust (the DKMS MOK key, enrolled
# only through shim) can then no longer be loaded: hwlat-scan says so.
lockdown_file=/sys/kernel/security/lockdown
modconf=/etc/modprobe.d/hwlat.conf
modprobe -r hwlat_detector 2>/dev/null
printf '%s\n' "options hwlat_detector enabled=1 threshold=1 width=100000 window=200000" >"$modconf"
[ -e "$lockdown_file" ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
if check "modprobe hwlat_detector with $modconf (enabled=1 threshold=1 width=100000 window=200000)" modprobe hwlat_detector &&
	check "lockdown raised to integrity after loading" sh -c "echo integrity >$lockdown_file && grep -q '\[integrity\]' $lockdown_file"; then
	echo "# $lockdown_file: $(cat "$lockdown_file")"
	write_conf "duration = 6s" "threshold = 1us"
	lrc=0
	systemctl start hwlat-scan >"$res/lockdown-start.txt" 2>&1 || lrc=$?
	# A oneshot unit that has finished may be garbage-collected at once,
	# and then systemctl shows no InvocationID: the summary the unit
	# journaled last names its scan.
	lock_id=$(last_unit_scan_id)
	lock_state="Result=$(unit_prop Result) ExecMainStatus=$(unit_prop ExecMainStatus)"
	journalctl --sync 2>/dev/null
	journalctl -b -u hwlat-scan -o cat _SYSTEMD_INVOCATION_ID="$lock_id" >"$res/lockdown-unit.log" 2>&1
	export_scan "${lock_id:-none}" "$res/journal-lockdown.json"
	refused="cannot open $det/enable for writing (Operation not permitted): the kernel is locked down (integrity); hwlat-scan cannot change the detector's settings"
	using="scanning with the settings the module was loaded with (/sys/module/hwlat_detector/parameters): enabled 1, threshold 1 us, width 100000 us, window 200000 us, mode round-robin, CPUs "
	if [ "$lrc" -eq 0 ] && [ "$lock_state" = "Result=success ExecMainStatus=0" ] &&
		grep -qF "$refused" "$res/lockdown-unit.log" && grep -qF "$using" "$res/lockdown-unit.log"; then
		ok "under lockdown the unit scans with the module's parameters, saying what debugfs refused ($lock_state)"
		grep -F -e "cannot open" -e "scanning with" -e "discarded" "$res/lockdown-unit.log" | sed 's/^/#   journal: /'
	else
		not_ok "under lockdown the unit scans with the module's parameters, saying what debugfs refused (exit $lrc, $lock_state)"
		sed 's/^/#   systemctl: /' "$res/lockdown-start.txt"
		sed 's/^/#   unit journal: /' "$res/lockdown-unit.log"
		unit_evidence
	fi
	lockdown_check() {
		python3 - "$@" <<'PY'
import json, sys
path, scan = sys.argv[1], sys.argv[2]
SAMPLE, SUMMARY = "18debb1199484fcc965913f03f96d36e", "4ffb84af0b5d43dab64f8c6cd40251d6"
entries = [json.loads(l) for l in open(path) if l.strip()]
samples = [e for e in entries if e.get("MESSAGE_ID") == SAMPLE]
# A skip record (its own MESSAGE_ID) takes a sequence number too.
numbered = [e for e in entries if e.get("MESSAGE_ID") in (SAMPLE, "ab639cbb95654a4d8de1256da3c0ca68")]
sm = [e for e in entries if e.get("MESSAGE_ID") == SUMMARY]
if len(sm) != 1:
    sys.exit("expected 1 summary for scan %s, found %d" % (scan, len(sm)))
s = sm[0]
want = {"HWLAT_STATUS": "completed", "HWLAT_SETTINGS_SOURCE": "module-parameters",
        "HWLAT_THRESHOLD_NS": "1000", "HWLAT_WIDTH_NS": "100000000",
        "HWLAT_WINDOW_NS": "200000000", "HWLAT_MODE": "round-robin"}
got = {k: s.get(k) for k in want}
print("summary: %s, samples %s, dropped %s, duration %s ns, CPUs %s"
      % (" ".join("%s=%s" % kv for kv in got.items()), s.get("HWLAT_SAMPLES"),
         s.get("HWLAT_DROPPED"), s.get("HWLAT_DURATION_NS"), s.get("HWLAT_CPUS")))
bad = ["%s=%r, expected %s" % (k, got[k], v) for k, v in want.items() if got[k] != v]
if "HWLAT_SETTINGS_NOT_APPLIED" in s:
    bad.append("HWLAT_SETTINGS_NOT_APPLIED=%r" % s["HWLAT_SETTINGS_NOT_APPLIED"])
if len(samples) < 5 or str(len(samples)) != s.get("HWLAT_SAMPLES"):
    bad.append("%d samples journaled, summary says %s (expected at least 5: threshold 1 us)"
               % (len(samples), s.get("HWLAT_SAMPLES")))
if any(e.get("HWLAT_THRESHOLD_NS") != "1000" for e in samples):
    bad.append("samples with a threshold other than 1000 ns")
seqs = [int(e["HWLAT_SEQ"]) for e in numbered]
if any(b <= a for a, b in zip(seqs, seqs[1:])):
    bad.append("sequence numbers do not rise: %s" % seqs[:20])
elif seqs and seqs[-1] - seqs[0] + 1 - len(seqs) > int(s.get("HWLAT_DROPPED", "0")):
    bad.append("sequence %d..%d has %d gaps, HWLAT_DROPPED=%s"
               % (seqs[0], seqs[-1], seqs[-1] - seqs[0] + 1 - len(seqs), s.get("HWLAT_DROPPED")))
print("samples: seq %s..%s" % (seqs[0] if seqs else "-", seqs[-1] if seqs else "-"))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
	}
	check_facts "the lockdown scan's journal: summary with the module's settings (source module-parameters), samples at threshold 1 us" \
		lockdown_check "$res/journal-lockdown.json" "${lock_id:-none}"
	# By hand, asking for settings that are not in force.
	drc=0
	env -u INVOCATION_ID hwlat-scan --duration=3 --threshold=5us --mode=per-cpu \
		>"$res/lockdown-differ.out" 2>"$res/lockdown-differ.err" || drc=$?
	journalctl --sync 2>/dev/null
	not_applied=$(journalctl -b -o json -n 1 MESSAGE_ID="$SUMMARY_ID" 2>/dev/null |
		python3 -c 'import json, sys; e = json.loads(sys.stdin.readline()); print(e.get("HWLAT_SETTINGS_NOT_APPLIED", ""), e.get("HWLAT_THRESHOLD_NS", ""), e.get("HWLAT_MODE", ""), sep="|")' 2>/dev/null)
	differ="threshold 5 us requested (command line), 1 us in force; mode per-cpu requested (command line), round-robin in force"
	advice="put 'options hwlat_detector enabled=1 threshold=5 mode=per-cpu' in /etc/modprobe.d/hwlat.conf, then reload the module"
	if [ "$drc" -eq 7 ] && grep -qF "requested settings not in force: $differ" "$res/lockdown-differ.err" &&
		grep -qF "$advice" "$res/lockdown-differ.err" && [ "$not_applied" = "$differ|1000|round-robin" ]; then
		ok "under lockdown a scan asking for other settings exits 7, naming each and the modprobe.d line; the summary has the settings in force"
		grep -F "not in force" "$res/lockdown-differ.err" | sed 's/^/#   stderr: /'
	else
		not_ok "under lockdown a scan asking for other settings exits 7, naming each and the modprobe.d line (exit $drc, summary: '$not_applied')"
		cat "$res/lockdown-differ.err" "$res/lockdown-differ.out" | sed 's/^/#   saw: /'
	fi
	# The module's key is not trusted by this kernel (no shim, nothing
	# enrolled): under lockdown it cannot be loaded again.
	check "modprobe -r hwlat_detector under lockdown" modprobe -r hwlat_detector
	mrc=0
	modprobe hwlat_detector >"$res/lockdown-modprobe.err" 2>&1 || mrc=$?
	src=0
	env -u INVOCATION_ID hwlat-scan --duration=1 >/dev/null 2>"$res/lockdown-load.err" || src=$?
	# DKMS 3 signed the module with a key to enrol; 2.8 signed nothing, so
	# there is no key and the hint must say to sign the module instead.
	if [ -e /var/lib/dkms/mok.pub ]; then
		hint="Secure Boot: the DKMS signing key must be enrolled with mokutil --import /var/lib/dkms/mok.pub)"
	else
		hint="Secure Boot: this DKMS does not sign modules (no /var/lib/dkms/mok.pub); sign hwlat_detector.ko with a key enrolled with mokutil)"
	fi
	if [ "$mrc" -ne 0 ] && [ "$src" -eq 4 ] && grep -qF "$hint" "$res/lockdown-load.err"; then
		ok "under lockdown the module is refused, and hwlat-scan exits 4 with the hint for DKMS $dkms_version: ${hint%%;*}"
		sed 's/^/#   modprobe: /' "$res/lockdown-modprobe.err"
		dmesg | grep -i -e lockdown -e "hwlat_detector" | tail -n 3 | sed 's/^/#   dmesg: /'
	else
		not_ok "under lockdown the module is refused, and hwlat-scan exits 4 with the hint for DKMS $dkms_version: $hint (modprobe exit $mrc, scan exit $src)"
		cat "$res/lockdown-modprobe.err" "$res/lockdown-load.err" | sed 's/^/#   saw: /'
	fi
	modprobe -r hwlat_detector 2>/dev/null
fi
rm -f "$modconf"
if [ -f /root/hwlat-scan.conf.packaged ]; then
	cp /root/hwlat-scan.conf.packaged /etc/hwlat/hwlat-scan.conf
else
	rm -f /etc/hwlat/hwlat-scan.conf
fi

# 8. Purge. First hwlat-dkms alone (hwlat-tools only recommends it): then
# hwlat-scan must say that the module is missing for this kernel and how to
# fix it (status 4), both run by hand and through the unit; then
# hwlat-tools, and nothing may be left.
if [ "$keep" = 0 ]; then
	purge_dkms_only() {
		env DEBIAN_FRONTEND=noninteractive apt-get purge -y -o Dpkg::Use-Pty=0 hwlat-dkms 2>&1 |
			tee "$res/apt-purge-dkms.log" || return
		dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'hwlat*' 2>&1
		[ "$(dpkg-query -W -f='${db:Status-Abbrev}' hwlat-tools 2>&1)" = "ii " ] &&
			! dpkg-query -W -f='${db:Status-Abbrev}' hwlat-dkms 2>/dev/null | grep -q '^[ihr]'
	}
	check "apt-get purge hwlat-dkms alone removes it and keeps hwlat-tools" purge_dkms_only
	arc=0
	env -u INVOCATION_ID hwlat-scan --duration=2 >"$res/absent-scan.out" 2>"$res/absent-scan.err" || arc=$?
	missing_words=()
	for w in "$kver" hwlat-dkms "linux-headers-$kver" dkms; do
		grep -qF -- "$w" "$res/absent-scan.err" || missing_words+=("$w")
	done
	if [ "$arc" -eq 4 ] && [ ${#missing_words[@]} -eq 0 ] && ! module_loaded; then
		ok "without the module, hwlat-scan exits 4 naming kernel $kver and the fix (hwlat-dkms, linux-headers-$kver, dkms)"
		sed 's/^/#   stderr: /' "$res/absent-scan.err"
	else
		not_ok "without the module, hwlat-scan exits 4 naming kernel $kver and the fix (exit $arc; not in the message: ${missing_words[*]:-none})"
		cat "$res/absent-scan.err" "$res/absent-scan.out" | sed 's/^/#   saw: /'
	fi
	# The same command started from another service (INVOCATION_ID set)
	# must take the by-hand path too and give the same answer.
	src=0
	INVOCATION_ID=$inv hwlat-scan --duration=1 >/dev/null 2>"$res/absent-scan-service.err" || src=$?
	if [ "$src" -eq 4 ] && grep -qF "linux-headers-$kver" "$res/absent-scan-service.err"; then
		ok "the same, run from another service (INVOCATION_ID set): exit 4 with the same advice"
	else
		not_ok "the same, run from another service (INVOCATION_ID set): exit $src"
		sed 's/^/#   stderr: /' "$res/absent-scan-service.err"
	fi
	# The unit: ExecStartPre (--load-module) fails with the same message in
	# the journal, the unit fails, no summary is written.
	summaries_before=$(count_entries "$SUMMARY_ID")
	since=$(date +%s)
	urc=0
	systemctl start hwlat-scan >"$res/absent-unit.txt" 2>&1 || urc=$?
	journalctl --sync 2>/dev/null
	journalctl -b -u hwlat-scan -o cat --since "@$((since - 1))" >"$res/absent-unit.log" 2>&1
	ust="Result=$(unit_prop Result) ExecMainStatus=$(unit_prop ExecMainStatus)"
	if [ "$urc" -ne 0 ] && grep -qF "linux-headers-$kver" "$res/absent-unit.log" &&
		[ "$(count_entries "$SUMMARY_ID")" -eq "$summaries_before" ]; then
		ok "without the module, systemctl start hwlat-scan fails and the unit's journal says why ($ust)"
	else
		not_ok "without the module, systemctl start hwlat-scan fails and the unit's journal says why (exit $urc, $ust)"
		sed 's/^/#   systemctl: /' "$res/absent-unit.txt"
		sed 's/^/#   invocation journal: /' "$res/absent-unit.log"
		unit_evidence
	fi
	systemctl reset-failed hwlat-scan 2>/dev/null

	check "apt-get purge hwlat-tools removes the rest" \
		env DEBIAN_FRONTEND=noninteractive apt-get purge -y -o Dpkg::Use-Pty=0 hwlat-tools
	left=$( {
		dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'hwlat*' 2>/dev/null | grep '^[ihr]'
		dkms status hwlat 2>&1 | grep -v '^$'
		find /lib/modules /usr/lib/modules -name 'hwlat_detector.ko*' 2>/dev/null
		ls -d /usr/src/hwlat-* /var/lib/dkms/hwlat /etc/hwlat 2>/dev/null
		ls /lib/systemd/system/hwlat-scan.* /usr/lib/systemd/system/hwlat-scan.* 2>/dev/null
		hash -r
		command -v hwlat-report hwlat-scan
		systemctl list-unit-files 'hwlat*' --no-legend 2>/dev/null
	} )
	if [ -z "$left" ]; then
		ok "after purge: no package, dkms entry, module, source, config, units or tools"
	else
		not_ok "after purge: no package, dkms entry, module, source, config, units or tools"
		printf '%s\n' "$left" | sed 's/^/#   left: /'
	fi
	if ! modinfo hwlat_detector >/dev/null 2>&1; then
		ok "after purge: modinfo hwlat_detector fails"
	else
		not_ok "after purge: modinfo hwlat_detector fails"
	fi
	[ -z "$k2" ] || second_kernel_after_purge "$kver" "$k2"
fi

# 9. The kernel log: nothing went wrong in the kernel.
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
