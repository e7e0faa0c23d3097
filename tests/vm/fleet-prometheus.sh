# shellcheck shell=bash
# The Prometheus part of the fleet test (tests/vm/fleet, which sources this
# after lib.sh and prometheus.sh and defines ok, not_ok, show, finish, $out
# and $work). A real Prometheus on the host's loopback scrapes each guest's
# node-exporter through a QEMU forward and evaluates the packaged rules.
#
# Always, with node-exporter's own metrics and the one-shot scan's file:
# the server listens on 127.0.0.1 only and loaded the rules; through the
# forward it reaches the right guest (node_uname_info's nodename, and
# node_boot_time_seconds equal to what the guest's own scrape read); a
# harness alert on node_uname_info fires for the running guest alone in
# /api/v1/alerts; and the scan's hwlat_samples and hwlat_latency_max_seconds
# reach Prometheus with the summary's values.
#
# With the always-on monitor (only when the tested hwlat-tools has
# `hwlat-scan --monitor` and hwlat-monitor.service; else a SKIP that says
# so): each guest runs it after its scan; the host stalls guest B again
# while Prometheus watches, then asks Prometheus for rate(hwlat_gaps_total),
# the gaps above the fleet's alert edge and histogram_quantile(0.99, ...),
# expects the stalls in B and not in A and HwlatGapAbove100us firing for B
# alone, and compares every hwlat_ series Prometheus holds with the
# monitor's file once the monitor has stopped.
#
# Files: $out/prometheus/ (configuration, rules, log, monitor.txt: whether
# the monitor part ran) and $out/NAME.prom-*.json (Prometheus's answers),
# judged after the run, so --recheck judges them again.

# Scrapes and rule evaluations this often (and the scrape timeout): a
# 2-minute rate has 24 points. A TCG guest on a loaded host whose monitor
# samples answered no 2 s scrape for minutes.
fp_interval=5s
# node-exporter's port in the guests, each forwarded from a host port.
# shellcheck disable=SC2034 # tests/vm/fleet's
fp_guest_port=9100
# The monitor samples half of each second (a stall that starts in a width
# is caught whole: about half of them), leaving node-exporter time to
# answer, and rewrites its file every 2 s.
# shellcheck disable=SC2034 # tests/vm/fleet's
fp_monitor_conf=(monitor_interval=2s monitor_threshold=50us monitor_width=500ms monitor_window=1s)
# The gap alert's edge in the fleet: a TCG guest on a loaded 2-core host has
# gaps of 100 us and more of its own (the quiet guest's scan saw 310 ms
# once with a load average of 8). So the fleet loads the packaged rules with
# the 100 us bucket edge moved to the 500 ms one (the file's header invites
# such a copy), and the stalls while the monitor runs are 600 ms, in the
# bucket (0.5, 1] above it.
fp_edge=0.5 fp_edge_top=1 fp_stall_ms=600
fp_harness_alert=FleetGuestScraped
# The quiet guest's monitor runs this long where the other one is stalled
# (14 stalls of 600 ms, one every 0.5-1 s).
fp_quiet_s=20

# fp_monitor_gate TOOLS: whether the unpacked hwlat-tools in TOOLS has the
# monitor; sets fp_monitor (1 or 0) and writes the reason to
# $out/prometheus/monitor.txt.
fp_monitor_gate() {
	local tools=$1 why=""
	fp_monitor=0
	if [ ! -e "$tools/lib/systemd/system/hwlat-monitor.service" ]; then
		why="hwlat-tools has no hwlat-monitor.service"
	elif ! "$tools/usr/sbin/hwlat-scan" --help 2>/dev/null | grep -q -- '--monitor '; then
		why="its hwlat-scan --help lists no --monitor"
	else
		fp_monitor=1
	fi
	mkdir -p "$out/prometheus"
	if [ "$fp_monitor" = 1 ]; then
		echo "available" >"$out/prometheus/monitor.txt"
	else
		echo "absent: $why" >"$out/prometheus/monitor.txt"
	fi
}

# fp_start TSDB RULES NAME=PORT...: the packaged RULES with the fleet's
# edge and a harness rule file, then prom_start (its TSDB in the folder
# TSDB) with the guests' forwarded ports as targets; one TAP line; finishes
# the test when it fails.
fp_start() {
	local tsdb=$1 rules=$2 dir="$out/prometheus" rc=0 listening want got=""
	shift 2
	sed "s/le=\"0\\.0001\"/le=\"$fp_edge\"/" "$rules" >"$dir/hwlat.rules.yml"
	cat >"$dir/fleet-harness.rules.yml" <<-EOF
		# The fleet test's own rule: node-exporter answers through the
		# forward; proves rule evaluation and /api/v1/alerts per guest.
		groups:
		  - name: fleet-harness
		    rules:
		      - alert: $fp_harness_alert
		        expr: node_uname_info{job="node"} == 1
		        for: 6s
	EOF
	prom_start "$dir" "$tsdb" "$fp_interval" "$dir/hwlat.rules.yml" \
		"$dir/fleet-harness.rules.yml" "$@" >"$dir/start.txt" 2>&1 || rc=$?
	listening=$([ -z "$prom_port" ] || ss -Hltn "sport = :$prom_port" | awk '{print $4}')
	want=$(sed -n 's/^ *- \(record\|alert\): *//p' "$dir/hwlat.rules.yml" "$dir/fleet-harness.rules.yml" |
		sort | tr '\n' ' ')
	if [ "$rc" -eq 0 ] && prom_get "$dir/rules.json" /api/v1/rules >>"$dir/start.txt"; then
		got=$(/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(r["name"] for g in d["data"]["groups"] for r in g["rules"])))' "$dir/rules.json")
	fi
	if [ "$rc" -eq 0 ] && [ "$listening" = "127.0.0.1:$prom_port" ] &&
		[ "$(grep -c 'le="0.0001"' "$rules")" = 1 ] && [ "$(grep -c "le=\"$fp_edge\"" "$dir/hwlat.rules.yml")" = 1 ] &&
		[ "$got " = "$want" ]; then
		ok "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') listens on $listening and nowhere else, scrapes ${*%%=*} through their forwards every $fp_interval, and loaded the $(wc -w <<<"$got") rules (the packaged ones, the gap edge at ${fp_edge} s, and $fp_harness_alert)"
	else
		not_ok "prometheus listens on 127.0.0.1 only and loaded the packaged rules with one edge moved (ss: '${listening:-nothing}'; rules: want '$want', got '$got')"
		show "prometheus start" "$dir/start.txt"
		show "prometheus log" "$dir/prometheus.log"
		finish
	fi
}

# fp_alerts OUT NAME ALERT LIMIT: polls /api/v1/alerts until ALERT fires for
# the instance NAME, for at most LIMIT seconds (0: one look); the last
# answer in OUT.
fp_alerts() {
	local out=$1 name=$2 alert=$3 end=$((SECONDS + $4))
	while :; do
		if prom_get "$out" /api/v1/alerts >/dev/null &&
			/usr/bin/python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["data"]["alerts"]
sys.exit(not any(x["labels"].get("alertname") == sys.argv[3] and x["labels"].get("instance") == sys.argv[2]
                 and x["state"] == "firing" for x in a))' "$out" "$name" "$alert"; then
			return 0
		fi
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 2
	done
}

# fp_capture NAME: once the guest's node-exporter serves the scan's file,
# what Prometheus holds of it and of node-exporter there.
fp_capture() {
	local name=$1 p="$out/$1.prom" sel="{instance=\"$1\"}"
	prom_wait "$p-samples.json" "hwlat_samples$sel" 60
	prom_query "$p-max.json" "hwlat_latency_max_seconds$sel"
	prom_query "$p-uname.json" "node_uname_info$sel"
	prom_query "$p-boot.json" "node_boot_time_seconds$sel"
	fp_alerts "$p-alerts.json" "$name" "$fp_harness_alert" 60
}

# fp_fresh OUT EXPR SINCE LIMIT: waits (prom_wait, at most LIMIT s) until
# EXPR has a sample scraped after SINCE (the host's Unix time) and prints
# the time of that answer, for the queries that follow to look at. A scrape
# that timed out leaves its target's series stale, absent from an instant
# query: a TCG guest sampling 90 % of the time with interrupts off, or
# stopped by the host, may not answer within the scrape timeout.
fp_fresh() {
	prom_wait "$1" "timestamp($2) > $3" "$4" || return 1
	/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["data"]["result"][0]["value"][0])' "$1"
}

# fp_monitor_run NAME RES COUNT PID: the monitor's part for the guest NAME
# (results in RES, booted by PID), once it has said monitor-started: waits
# until Prometheus has the monitor's first interval, stalls the guest COUNT
# times (stall_guest of tests/vm/fleet) or, for COUNT 0, waits about as
# long (fp_quiet_s), and saves the queries at the first scrape at least 4 s
# after (the last stall's interval written); then has the guest stop its
# monitor and saves every hwlat_ series Prometheus holds of it once it has
# scraped the guest after that. Rates over 2 minutes: the stalls and the
# scrapes the guest could not answer fit in them.
fp_monitor_run() {
	local name=$1 res=$2 count=$3 pid=$4 p="$out/$1.prom-monitor" sel="{instance=\"$1\"}" at=""
	local edge="hwlat_gap_seconds_bucket{instance=\"$1\",le=\"$fp_edge\"}"
	prom_wait "$p-start.json" "hwlat_monitor_last_interval_timestamp_seconds$sel" 120
	if [ "$count" -gt 0 ]; then
		stall_guest "$res" "$count" monitor "$fp_stall_ms"
	else
		sleep "$fp_quiet_s"
	fi
	at=$(fp_fresh "$p-fresh.json" "hwlat_monitor_last_interval_timestamp_seconds$sel" \
		$(($(date +%s) + 4)) 120) || at=""
	prom_query "$p-rate.json" "rate(hwlat_gaps_total${sel}[2m])" "$at"
	prom_query "$p-above.json" "hwlat_gap_seconds_count$sel - ignoring(le) $edge" "$at"
	prom_query "$p-p99.json" "histogram_quantile(0.99, rate(hwlat_gap_seconds_bucket${sel}[2m]))" "$at"
	if [ "$count" -gt 0 ]; then
		fp_alerts "$p-alerts.json" "$name" HwlatGapAbove100us 60
	else
		fp_alerts "$p-alerts.json" "$name" HwlatGapAbove100us 0
	fi
	touch "$res/guest/monitor-stop"
	vm_wait_mark "$res/serial.log" 'HWLAT-MARK monitor-stopped' 120 "$pid"
	at=$(fp_fresh "$p-final-fresh.json" "hwlat_gaps_total$sel" "$(date +%s)" 60) || at=""
	prom_query "$p-final.json" "{__name__=~\"hwlat_.*\",instance=\"$1\"}" "$at"
	prom_query "$p-mtime.json" "node_textfile_mtime_seconds$sel" "$at"
}

# fp_judge KIND NAME [ARG...]: judges the saved answers of the guest NAME;
# prints what it found, or why it fails (status 1).
fp_judge() {
	/usr/bin/python3 - "$out" "$@" <<'PY'
import json, math, sys
out, kind, name, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
guest = "%s/%s/guest" % (out, name)


def fail(msg):
    print(msg)
    sys.exit(1)


def answer(what):
    try:
        return json.load(open("%s/%s.prom-%s.json" % (out, name, what)))["data"]
    except (OSError, ValueError, KeyError) as e:
        fail("%s: no answer from Prometheus (%s)" % (what, e))


def one(what):
    r = answer(what)["result"]
    if len(r) != 1 or r[0]["metric"].get("instance") != name:
        fail("%s: want one series of instance %s, got %s" % (what, name, r))
    return r[0]["metric"], float(r[0]["value"][1])


def scrape(path, prefix):
    """A node-exporter text file's samples: {(name, labels): value}."""
    got = {}
    for line in open(path):
        if not line.startswith(prefix):
            continue
        key, value = line.rsplit(None, 1)
        got[key] = float(value)
    return got


def firing(what, alert):
    return sorted(a["labels"]["instance"] for a in answer(what)["alerts"]
                  if a["labels"].get("alertname") == alert and a["state"] == "firing")


if kind == "node":
    # The forward reached this guest: its own host name, and the boot time
    # its own scrape read on its loopback.
    labels, _ = one("uname")
    if labels.get("nodename") != name:
        fail("node_uname_info's nodename is %r, not %s" % (labels.get("nodename"), name))
    _, boot = one("boot")
    own = scrape(guest + "/metrics.txt", "node_boot_time_seconds ").get("node_boot_time_seconds")
    if own != boot:
        fail("node_boot_time_seconds %r, the guest's own scrape read %r" % (boot, own))
    # args: the harness alert
    fired = firing("alerts", args[0])
    if fired != [name]:
        fail("%s fires for %s, want %s alone" % (args[0], fired, name))
    print("nodename %s, node_boot_time_seconds %r as the guest read it, %s firing for %s alone"
          % (name, boot, args[0], name))
elif kind == "scan":
    s = json.load(open(guest + "/summary.json"))
    _, samples = one("samples")
    _, mx = one("max")
    if samples != int(s["HWLAT_SAMPLES"]):
        fail("hwlat_samples %s, summary %s" % (samples, s["HWLAT_SAMPLES"]))
    if round(mx * 1e9) != int(s["HWLAT_MAX_NS"]):
        fail("hwlat_latency_max_seconds %r, summary HWLAT_MAX_NS %s" % (mx, s["HWLAT_MAX_NS"]))
    print("hwlat_samples %d, hwlat_latency_max_seconds %r" % (samples, mx))
elif kind == "monitor-file":
    # Every series of the monitor's last file, in Prometheus with its value.
    try:
        want = scrape(guest + "/hwlat-monitor.prom", "hwlat_")
    except OSError as e:
        fail("no copy of the monitor's file (%s)" % e)
    got = {}
    for r in answer("monitor-final")["result"]:
        m = dict(r["metric"])
        n = m.pop("__name__")
        m.pop("instance", None)
        m.pop("job", None)
        key = n + ("{%s}" % ",".join('%s="%s"' % kv for kv in sorted(m.items())) if m else "")
        got[key] = float(r["value"][1])
    norm = {}
    for k, v in want.items():
        if "{" in k:
            n, rest = k.split("{", 1)
            pairs = sorted(p.split("=", 1) for p in rest.rstrip("}").split(",") if p)
            k = n + "{%s}" % ",".join("%s=%s" % (a, b) for a, b in pairs)
        norm[k] = v
    missing = sorted(k for k in norm if got.get(k) != norm[k] and not (math.isnan(norm[k]) and math.isnan(got.get(k, 0.0))))
    if not norm or missing:
        fail("%d series in the file; not in Prometheus with the file's value: %s"
             % (len(norm), ", ".join("%s (file %r, Prometheus %r)" % (k, norm[k], got.get(k)) for k in missing[:8])))
    files = [r["metric"].get("file", "") for r in answer("monitor-mtime")["result"]]
    if not any(f.endswith("hwlat-monitor.prom") for f in files):
        fail("node_textfile_mtime_seconds has no hwlat-monitor.prom (files: %s)" % files)
    print("all %d hwlat_ series of the monitor's last file, with its values" % len(norm))
elif kind == "monitor-rates":
    # args: the stalls injected while the monitor ran (0 for the quiet
    # guest), the alert's edge and the top of the bucket above it.
    stalls, edge, top = int(args[0]), float(args[1]), float(args[2])
    _, rate = one("monitor-rate")
    _, above = one("monitor-above")
    p99 = answer("monitor-p99")["result"]
    p99 = float(p99[0]["value"][1]) if p99 else float("nan")
    fired = firing("monitor-alerts", "HwlatGapAbove100us")
    if stalls:
        if not 1 <= above <= stalls:
            fail("%d gaps above %g s, want 1 to the %d stalls" % (above, edge, stalls))
        if not rate > 0:
            fail("rate(hwlat_gaps_total[2m]) is %r" % rate)
        if not edge < p99 <= top:
            fail("p99 %r not in (%g, %g]" % (p99, edge, top))
        if fired != [name]:
            fail("HwlatGapAbove100us (edge %g s) fires for %s, want %s alone" % (edge, fired, name))
    else:
        if above != 0:
            fail("%d gaps above %g s without a stall" % (above, edge))
        if p99 > edge:
            fail("p99 %r above %g s without a stall" % (p99, edge))
        if fired:
            fail("HwlatGapAbove100us (edge %g s) fires for %s" % (edge, fired))
    print("rate(hwlat_gaps_total[2m]) %.3g/s, %d gaps above %g s (%d stalls), p99 %r s, HwlatGapAbove100us firing for %s"
          % (rate, above, edge, stalls, p99, fired or "nobody"))
PY
}

# fp_check NAME STALLS: the TAP lines of the guest NAME (after the run;
# STALLS: how many stalls the monitor's part injected).
fp_check() {
	local name=$1 stalls=$2 verdict kind what
	for kind in node scan; do
		case "$kind" in
		node) what="the host's Prometheus scrapes $name's node-exporter through its forward" ;;
		scan) what="the host's Prometheus holds $name's scan file with the summary's values" ;;
		esac
		if verdict=$(fp_judge "$kind" "$name" "$fp_harness_alert" 2>&1); then
			ok "$what: $verdict"
		else
			not_ok "$what: $verdict"
			show "$name: capture" "$out/$name.prom-capture.txt" 10
		fi
	done
	if ! grep -q '^available' "$out/prometheus/monitor.txt" 2>/dev/null; then
		ok "$name: the monitor in Prometheus # SKIP $(cat "$out/prometheus/monitor.txt" 2>/dev/null || echo 'not run')"
		return 0
	fi
	if verdict=$(fp_judge monitor-rates "$name" "$stalls" "$fp_edge" "$fp_edge_top" 2>&1); then
		ok "$name: the monitor in Prometheus: $verdict"
	else
		not_ok "$name: the monitor's gaps in Prometheus: $verdict"
		show "$name: monitor journal" "$out/$name/guest/monitor-journal.txt" 20
	fi
	if verdict=$(fp_judge monitor-file "$name" 2>&1); then
		ok "$name: the host's Prometheus holds $verdict"
	else
		not_ok "$name: the host's Prometheus holds the monitor's file: $verdict"
		head -n 30 "$out/$name/guest/hwlat-monitor.prom" 2>/dev/null | sed 's/^/#   /' || true
	fi
}
