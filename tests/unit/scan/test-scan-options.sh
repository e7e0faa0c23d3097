#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Proves that hwlat-scan's command line and config file are validated before
# anything is touched: every bad value, unknown option or key, width >= window
# (given or current), a mode/cpus the detector lacks, an offline CPU, a
# missing --config file gives one message naming the key and value and exit
# status 2, and the fake detector's files are byte-for-byte unchanged (its
# stream FIFO never opened). Also --help/--version, exit 4 for a missing
# detector directory. TAP output.
set -euo pipefail

scan=$(realpath "${HWLAT_SCAN:-service/hwlat-scan}")
[ -x "$scan" ] || { echo "Bail out! $scan is not built"; exit 1; }
unset INVOCATION_ID

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
det=$tmp/hwlat_detector
mkdir "$det"
printf '10\n' >"$det/threshold"
printf '500000\n' >"$det/width"
printf '1000000\n' >"$det/window"
printf 'none [round-robin] per-cpu stop-machine\n' >"$det/mode"
printf '0\n' >"$det/cpus"
printf '0\n' >"$det/enable"
mkfifo "$det/stream"
# A detector of the 2009 ABI: no mode, no cpus.
old=$tmp/old_detector
mkdir "$old"
cp "$det/threshold" "$det/width" "$det/window" "$det/enable" "$old/"
mkfifo "$old/stream"

# shellcheck source=tests/unit/scan/tap.sh
. "$(dirname "$0")/tap.sh"

# Content of every regular file (not the FIFO: opening it would block).
state() { find "$1" -maxdepth 1 -type f -exec md5sum {} + | sort; }

# expect_fail STATUS PATTERN DIR ARGS...: the scan exits STATUS, stderr
# matches PATTERN (grep -E), and DIR is unchanged.
expect_fail() {
	local want=$1 pattern=$2 dir=$3 before rc=0 err
	shift 3
	before=$(state "$dir")
	# --config /dev/null first: an installed config must not matter.
	err=$(timeout 20 "$scan" --config /dev/null --detector-dir "$dir" --duration 1 "$@" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$pattern" <<<"$err" &&
		[ "$(state "$dir")" = "$before" ]; then
		ok 0 "$* -> exit $want, '$pattern', nothing changed"
	else
		ok 1 "$* -> exit $want, '$pattern', nothing changed" "exit $rc: $err"
	fi
}

# Command-line values.
expect_fail 2 "invalid value 'abc' for 'threshold'" "$det" --threshold abc
expect_fail 2 "invalid value '0' for 'threshold'" "$det" --threshold 0
expect_fail 2 "invalid value '-5' for 'threshold'" "$det" --threshold=-5
expect_fail 2 "invalid value '2.5us' for 'threshold'.*whole microseconds" "$det" --threshold 2.5us
expect_fail 2 "invalid value '2s' for 'width'.*at most 1s" "$det" --width 2s
expect_fail 2 "invalid value '1e6' for 'window'" "$det" --window 1e6
expect_fail 2 "invalid value '99999999999999999999' for 'window'.*too large" "$det" --window 99999999999999999999
expect_fail 2 "invalid value 'forever' for 'duration'" "$det" --duration forever
expect_fail 2 "invalid value '0' for 'duration'" "$det" --duration 0
expect_fail 2 "invalid value 'turbo' for 'mode'" "$det" --mode turbo
expect_fail 2 "invalid value '0-' for 'cpus'" "$det" --cpus 0-
expect_fail 2 "invalid value '5000' for 'cpus'.*below 1024" "$det" --cpus 5000
expect_fail 2 "invalid value '1023' for 'cpus': CPU 1023 is not online" "$det" --cpus 1023
expect_fail 2 "invalid value 'x' for 'hardlimit'" "$det" --hardlimit x
expect_fail 2 "unrecognized option '--bogus'" "$det" --bogus
expect_fail 2 "unexpected argument 'extra'" "$det" extra
# width against window: both given, or one against the detector's current.
expect_fail 2 "width 800000 us must be smaller than window 800000 us" "$det" --width 800000 --window 800000
expect_fail 2 "width 1000000 us must be smaller than window 1000000 us \(current\)" "$det" --width 1s
expect_fail 2 "width 500000 us \(current\) must be smaller than window 400000 us" "$det" --window 400ms
expect_fail 2 "must be at most 95% of window" "$det" --width 960000
expect_fail 2 "must leave at least 1000 us" "$det" --width 9500 --window 10000
# Extended settings on a 2009-ABI detector.
expect_fail 2 "invalid key 'mode': this detector has no mode file" "$old" --mode per-cpu
expect_fail 2 "invalid key 'cpus': this detector has no cpus file" "$old" --cpus 0

# Config file.
conf=$tmp/scan.conf
# expect_conf_fail TEXT PATTERN: with a config file of TEXT (backslash
# escapes as printf %b), the scan exits 2 matching PATTERN, nothing changed.
expect_conf_fail() {
	printf '%b' "$1" >"$conf"
	expect_fail 2 "$2" "$det" --config "$conf"
}
expect_conf_fail '# comment\nthreshold = 20\ncolour = blue\n' "$conf:3: unknown key 'colour'"
expect_conf_fail 'width = 700000\nwindow = 700000\n' "width 700000 us must be smaller than window 700000 us"
expect_conf_fail 'threshold = 20\nthreshold = 30\n' "$conf:2: key 'threshold' given twice"
expect_conf_fail 'threshold: 20\n' "$conf:1: expected 'key = value'"
expect_conf_fail 'mode = fast\n' "$conf:1: invalid value 'fast' for 'mode'"
# The command line overrides the file, but a bad file value is still an error.
expect_conf_fail 'window = 400000\n' "width 500000 us \(current\) must be smaller than window 400000 us"
expect_fail 2 "cannot read config file $tmp/missing.conf: No such file" "$det" --config "$tmp/missing.conf"

# Width and window both given are refused before any detector is opened.
expect_fail 2 "width 800000 us must be smaller than window 800000 us" "$det" \
	--detector-dir "$tmp/none" --width 800000 --window 800000

# No detector.
expect_fail 4 "cannot open the detector directory $tmp/none" "$tmp" --detector-dir "$tmp/none"

# --help and --version.
out=$("$scan" --help)
rc=$?
if [ $rc -eq 0 ] && grep -q -- '--duration=SPAN' <<<"$out" && grep -q -- '--hardlimit' <<<"$out" &&
	! grep -q -- '--detector-dir' <<<"$out"; then
	ok 0 "--help lists the options, hides the test options"
else
	ok 1 "--help lists the options, hides the test options" "$out"
fi
out=$("$scan" --version)
if grep -qE '^hwlat-scan [0-9]' <<<"$out"; then
	ok 0 "--version prints the version"
else
	ok 1 "--version prints the version" "$out"
fi

tap_done
