#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Proves that the systemd units of hwlat-scan (with @sbindir@ substituted)
# pass `systemd-analyze verify` without a single message, that the service's
# `systemd-analyze security --offline=yes` exposure stays at or below 1.5,
# that it keeps the settings the design depends on (oneshot, bounded
# timeout, privileged module helpers, no journald rate limit, no [Install]),
# that the man page renders without warnings and documents every option and
# exit status, and that the config file documents every key, commented out,
# and says what an unset cpus means.
# TAP output.
set -euo pipefail

srcdir=${srcdir:-.}
scan=$(realpath "${HWLAT_SCAN:-service/hwlat-scan}")
[ -x "$scan" ] || { echo "Bail out! $scan is not built"; exit 1; }
svc=$srcdir/service
for t in systemd-analyze groff; do
	command -v "$t" >/dev/null || { echo "Bail out! $t missing (tests/install-deps)"; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/unit/scan/tap.sh
. "$(dirname "$0")/tap.sh"

# Every config key, as the key table prints them (--check-config names each
# key, set or not): the man page and the config file must document each.
: >"$tmp/empty.conf"
mapfile -t keys < <("$scan" --check-config --config "$tmp/empty.conf" | sed -n 's/^# \([a-z_]*\): .*/\1/p')
if [ "${#keys[@]}" -ge 10 ]; then r=0; else r=1; fi
ok $r "--check-config names the config keys (${#keys[@]}: ${keys[*]})"

sed "s|@sbindir@|$(dirname "$scan")|g" "$svc/hwlat-scan.service.in" >"$tmp/hwlat-scan.service"
cp "$svc/hwlat-scan.timer" "$tmp/"

# verify_unit PREFIX UNIT [FILE...]: systemd-analyze verify says nothing of
# UNIT and FILEs, and its exposure is at most 1.5 (sets level).
verify_unit() {
	local prefix=$1 unit=$2 out rc
	shift 2
	out=$(cd "$tmp" && systemd-analyze verify --man=no "./$unit" "${@/#/./}" 2>&1) && rc=0 || rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then r=0; else r=1; fi
	ok $r "${prefix}systemd-analyze verify: no message" "$out"
	out=$(cd "$tmp" && systemd-analyze security --offline=yes --threshold=15 "./$unit" 2>&1) && rc=0 || rc=$?
	level=$(sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p" <<<"$out")
	if [ "$rc" -eq 0 ] && [ -n "$level" ]; then r=0; else r=1; fi
	ok $r "${prefix}systemd-analyze security: exposure $level <= 1.5" "$(tail -15 <<<"$out")"
	echo "# ${prefix}exposure level: $level"
}
verify_unit "" hwlat-scan.service hwlat-scan.timer

unit=$tmp/hwlat-scan.service
check_line() { # check_line REGEX DESCRIPTION
	if grep -qE "$1" "$unit"; then r=0; else r=1; fi
	ok $r "unit: $2"
}
check_line '^Type=oneshot$' "Type=oneshot"
check_line '^TimeoutStartSec=[0-9]+min$' "bounded TimeoutStartSec"
check_line '^NotifyAccess=main$' "NotifyAccess=main: the scan extends its start timeout (EXTEND_TIMEOUT_USEC)"
check_line '^Documentation=man:hwlat-scan\(8\)$' "Documentation=man:hwlat-scan(8)"
check_line '^ExecStartPre=\+/.*/hwlat-scan --load-module$' "privileged --load-module before the scan"
check_line '^ExecStopPost=\+/.*/hwlat-scan --unload-module$' "privileged --unload-module after the scan"
check_line '^LogRateLimitIntervalSec=1s$' "journald rate limit per second..."
check_line '^LogRateLimitBurst=1000000$' "...of a million entries: never reached (0 would mean journald's default)"
check_line '^ProtectKernelModules=yes$' "ProtectKernelModules"
check_line '^CapabilityBoundingSet=$' "no capabilities"
if ! grep -q '^\[Install\]' "$unit"; then r=0; else r=1; fi
ok $r "service has no [Install]: packages never start or enable it"
if grep -q '^OnCalendar=' "$svc/hwlat-scan.timer"; then r=0; else r=1; fi
ok $r "timer has a schedule"

# The monitor's unit: verified and hardened as the scan's, with what its
# design needs (docs/design.md, "The monitor").
sed "s|@sbindir@|$(dirname "$scan")|g" "$svc/hwlat-monitor.service.in" >"$tmp/hwlat-monitor.service"
verify_unit "monitor: " hwlat-monitor.service
unit=$tmp/hwlat-monitor.service
check_line '^Type=notify$' "monitor: Type=notify (READY=1 once it samples)"
check_line '^NotifyAccess=main$' "monitor: NotifyAccess=main"
check_line '^WatchdogSec=[0-9]+s$' "monitor: a watchdog (pinged every second)"
# shellcheck disable=SC2016 # a literal $MAINPID
check_line '^ExecReload=/bin/kill -HUP \$MAINPID$' "monitor: reload is SIGHUP"
check_line '^ExecStartPre=\+/.*/hwlat-scan --monitor --load-module$' "monitor: privileged --monitor --load-module (module and msr)"
check_line '^ExecStart=/.*/hwlat-scan --monitor --unit$' "monitor: hwlat-scan --monitor --unit"
check_line '^LogRateLimitIntervalSec=1s$' "monitor: journald rate limit per second..."
check_line '^LogRateLimitBurst=1000000$' "monitor: ...of a million entries: never reached (0 would mean journald's default)"
check_line '^CapabilityBoundingSet=CAP_SYS_RAWIO$' "monitor: only CAP_SYS_RAWIO (MSR_SMI_COUNT)"
check_line '^DeviceAllow=char-cpu/msr r$' "monitor: the msr devices only, read"
check_line '^After=modprobe@msr.service$' "monitor: msr loaded before DeviceAllow= is resolved"
check_line '^ReadOnlyPaths=/sys /proc/sys ' "monitor: /sys and /proc/sys read-only"
check_line '^ReadWritePaths=-/sys/kernel/debug$' "monitor: debugfs writable whole (a reloaded module's new directory)"
check_line '^WantedBy=multi-user.target$' "monitor: can be enabled (packages never do)"
unit=$tmp/hwlat-scan.service

# The default duration (120 s) plus drain fits in TimeoutStartSec.
timeout_min=$(sed -n 's/^TimeoutStartSec=\([0-9]*\)min$/\1/p' "$unit")
if [ "$((timeout_min * 60))" -gt 125 ]; then r=0; else r=1; fi
ok $r "TimeoutStartSec (${timeout_min}min) exceeds the default duration 120 s + drain"

# Man page: renders cleanly, documents every option of --help and 0-6.
warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$svc/hwlat-scan.8" 2>&1)
if [ -z "$warn" ]; then r=0; else r=1; fi
ok $r "man page renders without warnings" "$warn"
text=$(LC_ALL=C.UTF-8 groff -man -Tutf8 "$svc/hwlat-scan.8" 2>/dev/null | sed 's/.\x08//g')
missing=""
for opt in $("$scan" --help | grep -oE -- '--[a-z-]+' | sort -u) --detector-dir --journal-export; do
	grep -q -- "$opt" <<<"$text" || missing="$missing $opt"
done
for key in "${keys[@]}"; do
	grep -qw -- "$key" <<<"$text" || missing="$missing key:$key"
done
for st in 0 1 2 3 4 5 6; do
	grep -qE "^ {7}$st {2,}[A-Z]" <<<"$text" || missing="$missing status:$st"
done
if [ -z "$missing" ]; then r=0; else r=1; fi
ok $r "man page documents every option, key and exit status" "missing:$missing"

# Config file: every key documented, none active, and it parses as is.
conf=$svc/hwlat-scan.conf
missing=""
for key in "${keys[@]}"; do
	grep -qE "^#$key = " "$conf" || missing="$missing $key"
done
if [ -z "$missing" ] && ! grep -qvE '^(#.*)?$' "$conf"; then r=0; else r=1; fi
ok $r "config file documents every key, all commented out" "missing:$missing"
# The default CPU list is the housekeeping CPUs (the module leaves out
# nohz_full= and isolcpus= CPUs), not every online CPU.
cpus_doc=$(sed -n '/^# CPUs the samplers may use/,/^#cpus = /p' "$conf")
if grep -q 'nohz_full= or isolcpus=' <<<"$cpus_doc" && ! grep -qi 'all online' <<<"$cpus_doc"; then
	r=0
else
	r=1
fi
ok $r "config file: the default cpus are the housekeeping CPUs, not all online ones" "$cpus_doc"
# Uncommented, the documented examples are a valid configuration.
sed -n 's/^#\([a-z_]* = .*\)$/\1/p' "$conf" >"$tmp/active.conf"
mkdir "$tmp/det"
out=$("$scan" --config "$tmp/active.conf" --detector-dir "$tmp/det" 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 4 ] && ! grep -q "invalid" <<<"$out"; then r=0; else r=1; fi
ok $r "the documented example values are all valid" "exit $rc: $out"

tap_done
