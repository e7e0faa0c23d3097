# SPDX-License-Identifier: GPL-2.0-or-later
# TAP output for the shell tests of tests/unit/scan, sourced by them:
#   ok STATUS DESCRIPTION [SAW]  one TAP line, passing when STATUS is 0; a
#                                failing one prints SAW as "#   saw: " lines
#   tap_done                     prints the plan; fails when any test failed
# shellcheck shell=bash

n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ $# -lt 3 ] || printf '%s\n' "$3" | sed 's/^/#   saw: /'
	fi
}

tap_done() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
