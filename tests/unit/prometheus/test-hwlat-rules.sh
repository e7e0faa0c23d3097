#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Proves that service/prometheus/hwlat.rules.yml, the rules the packages
# install in /usr/share/hwlat/prometheus/, is what Prometheus loads
# (`promtool check rules`), that each of its rules has a test in
# hwlat.rules.test.yml, and that those tests pass (`promtool test rules`:
# what each alert and recording rule gives at its edges, stated there).
# TAP output; SKIP (77) only where promtool is absent and cannot be
# installed (a package build without root).
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
rules=$top/service/prometheus/hwlat.rules.yml
tests=$top/tests/unit/prometheus/hwlat.rules.test.yml
# shellcheck source=tests/unit/scan/tap.sh
. "$top/tests/unit/scan/tap.sh"

if ! command -v promtool >/dev/null; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
		echo "# SKIP: no promtool (Debian 12: apt-get install prometheus)"
		exit 77
	fi
	# shellcheck source=tests/lib/need.sh
	. "$top/tests/lib/need.sh"
	need_packages prometheus # Debian 12's prometheus holds promtool
fi

names=$(sed -n 's/^ *- \(record\|alert\): *//p' "$rules")
count=$(wc -l <<<"$names")
rc=0
out=$(promtool check rules "$rules" 2>&1) || rc=$?
st=1
[ "$rc" -ne 0 ] || ! grep -qxF "  SUCCESS: $count rules found" <<<"$out" || st=0
ok "$st" "promtool check rules: the $count rules of ${rules#"$top"/} load" "$out"

# Each rule is the subject of a test: an alert_rule_test's alertname, or
# the start of a promql_expr_test's expr.
untested=""
for name in $names; do
	grep -qE "(alertname|expr): ${name}([^[:alnum:]_:]|\$)" "$tests" || untested+=" $name"
done
st=0
[ -z "$untested" ] || st=1
ok "$st" "each of the $count rules is the subject of a test in ${tests#"$top"/}" \
	"untested:$untested"

rc=0
out=$(cd "$(dirname "$tests")" && promtool test rules "$(basename "$tests")" 2>&1) || rc=$?
st=1
[ "$rc" -ne 0 ] || ! grep -qx '  SUCCESS' <<<"$out" || st=0
ok "$st" "promtool test rules ${tests#"$top"/}" "$out"
tap_done
