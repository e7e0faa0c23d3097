#!/bin/bash
# Guest side of tests/vm/fleet (runs inside a bookworm-fleet QEMU guest as
# root, cwd /mnt/payload). One machine of the fleet: installs hwlat-dkms and
# hwlat-tools offline as a user does, points systemd-journal-upload at the
# host's collector, runs one `systemctl start hwlat-scan` (the host may stall
# this guest meanwhile), waits until the upload has passed the scan's summary,
# and with --node-exporter also has prometheus-node-exporter serve the scan's
# textfile, scrapes its /metrics on the guest's loopback, says so on the
# serial console ("HWLAT-MARK exporter-ready") and keeps serving until the
# host's Prometheus is done with this guest (the host creates
# /mnt/results/host-done). With --monitor it also starts hwlat-monitor
# ("HWLAT-MARK monitor-started", or monitor-failed), stops it when the host
# creates /mnt/results/monitor-stop, and says monitor-stopped. Prints TAP;
# leaves the facts the host checks in /mnt/results: identity.txt,
# summary.json (the scan's summary entry), samples.count (its sample
# entries in this guest's own journal), metrics.txt (the scrape),
# hwlat.prom (the textfile) and, with --monitor, hwlat-monitor.prom (the
# monitor's last file) and monitor-journal.txt.
#
#   fleet.sh --collector=URL [--node-exporter [--monitor]] KEY=VALUE...
# KEY=VALUE lines go to /etc/hwlat/hwlat-scan.conf.
set -uo pipefail

res=/mnt/results
url="" node_exporter=0 monitor=0 conf=()
for a in "$@"; do
	case "$a" in
	--collector=*) url=${a#*=} ;;
	--node-exporter) node_exporter=1 ;;
	--monitor) monitor=1 ;;
	*=*) conf+=("${a%%=*} = ${a#*=}") ;;
	*) echo "fleet.sh: bad argument '$a'" >&2; exit 2 ;;
	esac
done

SAMPLE_ID=18debb1199484fcc965913f03f96d36e
SUMMARY_ID=4ffb84af0b5d43dab64f8c6cd40251d6
textfile_dir=/var/lib/prometheus/node-exporter
upload_state=/var/lib/systemd/journal-upload/state

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
mark() { echo "HWLAT-MARK $*" >/dev/ttyS0; }
bail() {
	echo "Bail out! $*"
	echo "1..$n"
	exit 1
}
[ -n "$url" ] || bail "no --collector=URL"
[ "$monitor" = 0 ] || [ "$node_exporter" = 1 ] || bail "--monitor needs --node-exporter"
# wait_for FILE LIMIT: until the host creates FILE in the results folder, at
# most LIMIT seconds; prints how long it waited; fails at the limit.
wait_for() {
	local waited=0
	while [ ! -e "$1" ] && [ "$waited" -lt "$2" ]; do
		sleep 1
		waited=$((waited + 1))
	done
	echo "$waited"
	[ -e "$1" ]
}

# 1. The network: QEMU's user-mode NIC, a static address and no gateway, so
# the only host this guest can reach is 10.0.2.2, QEMU's alias of the host's
# loopback (tests/vm/boot --net).
nic=""
for d in /sys/class/net/*; do
	[ "${d##*/}" = lo ] || nic=${d##*/}
done
[ -n "$nic" ] || bail "no network interface (tests/vm/boot --net missing?)"
mkdir -p /etc/systemd/network
printf '[Match]\nName=%s\n\n[Network]\nAddress=10.0.2.15/24\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' \
	"$nic" >/etc/systemd/network/10-fleet.network
systemctl start systemd-networkd
for _ in $(seq 1 100); do
	ip -4 addr show dev "$nic" | grep -q '10\.0\.2\.15/' && break
	sleep 0.2
done
if ip -4 addr show dev "$nic" | grep -q '10\.0\.2\.15/' && ! ip route | grep -q '^default'; then
	ok "$nic has 10.0.2.15/24 and no default route: $(ip route | tr '\n' ';')"
else
	not_ok "$nic has 10.0.2.15/24 and no default route ($(ip -4 addr show dev "$nic" | tr '\n' ' '); routes: $(ip route | tr '\n' ';'))"
fi

# 2. Identity: what the scan's summary will name this machine by.
{
	echo "hostname $(hostname)"
	echo "machine_id $(cat /etc/machine-id)"
	for f in bios_vendor bios_version bios_date sys_vendor product_name; do
		echo "$f $(cat "/sys/class/dmi/id/$f" 2>/dev/null)"
	done
} >"$res/identity.txt"
sed 's/^/# identity: /' "$res/identity.txt"

# 3. Offline install, as the user's path does (tests/vm/guest/user-path.sh).
mkdir -p /root/debs
cp ./hwlat-dkms_*.deb ./hwlat-tools_*.deb /root/debs/ || bail "the payload has no .debs: $(ls)"
if env DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Use-Pty=0 \
	/root/debs/hwlat-dkms_*.deb /root/debs/hwlat-tools_*.deb >"$res/apt-install.log" 2>&1; then
	ok "apt-get install of both .debs works offline"
else
	not_ok "apt-get install of both .debs works offline"
	tail -n 30 "$res/apt-install.log" | sed 's/^/#   /'
	bail "cannot install the packages"
fi

# 4. The collector: journal-upload's own configuration file and service.
# Plain http because the collector listens on the host's loopback only and
# the bytes never leave the machine; a real fleet uses https (README.md).
mkdir -p /etc/systemd/journal-upload.conf.d
printf '[Upload]\nURL=%s\n' "$url" >/etc/systemd/journal-upload.conf.d/fleet.conf
systemctl restart systemd-journal-upload.service
sleep 1
if systemctl is-active -q systemd-journal-upload.service; then
	ok "systemd-journal-upload.service runs with URL=$url"
else
	not_ok "systemd-journal-upload.service runs with URL=$url"
	journalctl -b -u systemd-journal-upload --no-pager | tail -n 20 | sed 's/^/#   /'
fi

# 5. One scan through systemd.
mkdir -p /etc/hwlat
if [ "$node_exporter" = 1 ]; then
	conf+=("openmetrics_file = $textfile_dir/hwlat.prom")
fi
printf '%s\n' "# written by tests/vm/guest/fleet.sh" "${conf[@]}" >/etc/hwlat/hwlat-scan.conf
echo "# scan config: ${conf[*]}"
systemctl start hwlat-scan >"$res/systemctl-start.txt" 2>&1 &
start_pid=$!
for _ in $(seq 1 600); do
	[ "$(cat /sys/kernel/debug/hwlat_detector/enable 2>/dev/null)" = 1 ] && break
	kill -0 "$start_pid" 2>/dev/null || break
	sleep 0.1
done
mark scan-started
src=0
wait "$start_pid" || src=$?
mark scan-done rc=$src
if [ "$src" -eq 0 ]; then
	ok "systemctl start hwlat-scan succeeds"
else
	not_ok "systemctl start hwlat-scan succeeds (exit $src)"
	journalctl -b -u hwlat-scan --no-pager | tail -n 20 | sed 's/^/#   /'
fi
journalctl --sync 2>/dev/null
journalctl -b -o json MESSAGE_ID="$SUMMARY_ID" | tail -n 1 >"$res/summary.json"
scan_id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["HWLAT_SCAN_ID"])' \
	"$res/summary.json" 2>/dev/null)
[[ "$scan_id" =~ ^[0-9a-f]{32}$ ]] || bail "no summary with a scan id in the journal"
journalctl -b -o cat MESSAGE_ID="$SAMPLE_ID" HWLAT_SCAN_ID="$scan_id" | wc -l >"$res/samples.count"
echo "# scan $scan_id: $(cat "$res/samples.count") sample entries in this guest's journal"

# 6. The upload has passed the summary once no summary of this scan follows
# the cursor journal-upload saved (it uploads in journal order).
uploaded=0
for _ in $(seq 1 300); do
	cursor=$(sed -n 's/^LAST_CURSOR=//p' "$upload_state" 2>/dev/null)
	if [ -n "$cursor" ] && [ -z "$(journalctl -q -o cat --after-cursor="$cursor" \
		MESSAGE_ID="$SUMMARY_ID" HWLAT_SCAN_ID="$scan_id" 2>/dev/null)" ]; then
		uploaded=1
		break
	fi
	sleep 0.5
done
if [ "$uploaded" = 1 ]; then
	ok "systemd-journal-upload has sent the scan's summary (state $upload_state)"
else
	not_ok "systemd-journal-upload has sent the scan's summary within 150 s"
	journalctl -b -u systemd-journal-upload --no-pager | tail -n 20 | sed 's/^/#   /'
fi

# 7. Prometheus: node-exporter's textfile collector serves hwlat-scan's file.
if [ "$node_exporter" = 1 ]; then
	cp "$textfile_dir/hwlat.prom" "$res/hwlat.prom" 2>/dev/null
	systemctl is-active -q prometheus-node-exporter.service || systemctl start prometheus-node-exporter.service
	scraped=0
	for _ in $(seq 1 60); do
		if python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=10).read().decode())' \
			>"$res/metrics.txt" 2>"$res/metrics.err" && grep -q '^hwlat_samples ' "$res/metrics.txt"; then
			scraped=1
			break
		fi
		sleep 1
	done
	if [ "$scraped" = 1 ]; then
		ok "node-exporter's /metrics on 127.0.0.1:9100 has the hwlat_ series: $(grep -c '^hwlat_' "$res/metrics.txt") lines"
	else
		not_ok "node-exporter's /metrics on 127.0.0.1:9100 has the hwlat_ series"
		sed 's/^/#   /' "$res/metrics.err"
		journalctl -b -u prometheus-node-exporter --no-pager | tail -n 20 | sed 's/^/#   /'
	fi

	# 8. The host's Prometheus scrapes this guest through QEMU's forward;
	# with --monitor, the monitor runs until the host has watched it.
	mark exporter-ready
	if [ "$monitor" = 1 ]; then
		# The collector keeps the one-shot scan alone: the host's report
		# checks count its samples, not the monitor's.
		systemctl stop systemd-journal-upload.service
		if systemctl start hwlat-monitor.service >"$res/monitor-start.txt" 2>&1; then
			ok "systemctl start hwlat-monitor succeeds"
			mark monitor-started
			if waited=$(wait_for "$res/monitor-stop" 900); then
				ok "the monitor ran until the host had watched it ($waited s)"
			else
				not_ok "the host was done with the monitor within 900 s (no $res/monitor-stop)"
			fi
			if systemctl stop hwlat-monitor.service && ! systemctl is-failed -q hwlat-monitor.service; then
				ok "systemctl stop hwlat-monitor: it ends cleanly"
			else
				not_ok "systemctl stop hwlat-monitor: it ends cleanly ($(systemctl show -P Result hwlat-monitor.service))"
			fi
		else
			not_ok "systemctl start hwlat-monitor succeeds"
			sed 's/^/#   /' "$res/monitor-start.txt"
			journalctl -b -u hwlat-monitor --no-pager | tail -n 15 | sed 's/^/#   /'
			mark monitor-failed
		fi
		cp "$textfile_dir/hwlat-monitor.prom" "$res/hwlat-monitor.prom" 2>/dev/null
		journalctl -b -u hwlat-monitor --no-pager >"$res/monitor-journal.txt" 2>&1
		mark monitor-stopped
	fi
	if waited=$(wait_for "$res/host-done" 900); then
		ok "node-exporter served the host's Prometheus until it was done ($waited s)"
	else
		not_ok "the host's Prometheus was done with this guest within 900 s (no $res/host-done)"
	fi
fi
systemctl stop systemd-journal-upload.service
echo "1..$n"
[ "$failed" -eq 0 ]
