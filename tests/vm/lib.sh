# shellcheck shell=bash
# Shared helpers of the QEMU guest harness (tests/vm/). Sourced, not run.

# shellcheck disable=SC2034 # used by the scripts that source this file
vm_cache=${HWLAT_TEST_CACHE:-/var/cache/hwlat-tests}
vm_host_sources=${HWLAT_APT_SOURCES:-/etc/apt/sources.list.d/debian.sources}

vm_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# vm_note MSG: a progress line with the wall-clock time, on stderr.
vm_note() {
	printf '# [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

# A guest is a Debian suite, or a suite with a variant: bookworm-rt is
# bookworm with linux-image-rt-amd64 (PREEMPT_RT; it builds the kernel's
# hwlat tracer in, which Debian's generic kernels do not), bullseye-rt the
# same on bullseye (5.10-rt, the oldest kernel we support); bookworm-fleet is
# bookworm with the fleet's packages (vm_variant_packages), which a guest
# without a mirror cannot install at run time.
vm_suite_ok() {
	case "$1" in
	bullseye | bookworm | trixie | sid | bullseye-rt | bookworm-rt | bookworm-fleet) return 0 ;;
	*) return 1 ;;
	esac
}

# vm_suite_expired SUITE: true when the mirror's Release file of the Debian
# SUITE is past its Valid-Until date, so that apt must be told not to check
# it: sid's is not refreshed there, and bullseye is an old suite whose
# Release is no longer re-signed.
vm_suite_expired() {
	case "$1" in
	bullseye | sid) return 0 ;;
	*) return 1 ;;
	esac
}

# vm_debian_suite GUEST: the Debian suite of a guest name (bookworm-rt: bookworm).
vm_debian_suite() {
	echo "${1%%-*}"
}

# vm_variant_packages GUEST: the packages a variant adds to its suite's image.
# bookworm-fleet: journal upload (systemd-journal-remote holds
# systemd-journal-upload) and Prometheus' node exporter (tests/vm/fleet).
vm_variant_packages() {
	case "$1" in
	*-fleet) echo systemd-journal-remote prometheus-node-exporter ;;
	esac
}

# vm_kernel_flavour GUEST: the linux-image-*/linux-headers-* flavour (amd64, rt-amd64).
vm_kernel_flavour() {
	case "$1" in
	*-rt) echo rt-amd64 ;;
	*) echo amd64 ;;
	esac
}

# vm_write_sources SUITE FILE: a deb822 sources file for SUITE reusing the
# URIs: (and Signed-By:) of the machine's main, non-security Debian entry.
# The mirror is read here, at run time, and never written into the tree.
vm_write_sources() {
	local suite=$1 out=$2 stanza uris signed
	[ -r "$vm_host_sources" ] ||
		vm_die "cannot read $vm_host_sources (needed for the mirror's URIs: line)"
	stanza=$(awk -v RS= '!/debian-security/ && /URIs:/ {print; exit}' "$vm_host_sources")
	uris=$(sed -n 's/^URIs:[[:space:]]*//p' <<<"$stanza")
	signed=$(sed -n 's/^Signed-By:[[:space:]]*//p' <<<"$stanza")
	[ -n "$uris" ] || vm_die "no URIs: line for the main archive in $vm_host_sources"
	{
		echo "Types: deb"
		echo "URIs: $uris"
		echo "Suites: $suite"
		echo "Components: main"
		[ -z "$signed" ] || echo "Signed-By: $signed"
	} >"$out"
}

# vm_wait_mark LOG PATTERN TIMEOUT [PID]: waits until a line of LOG matches
# the extended regex PATTERN. Fails after TIMEOUT seconds, or as soon as PID
# (the runner or QEMU) has exited without the line appearing.
vm_wait_mark() {
	local log=$1 pat=$2 limit=$3 pid=${4:-} end
	end=$((SECONDS + limit))
	while [ "$SECONDS" -lt "$end" ]; do
		if [ -f "$log" ] && tr -d '\r' <"$log" | grep -qE "$pat"; then
			return 0
		fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			tr -d '\r' <"$log" 2>/dev/null | grep -qE "$pat" && return 0
			echo "vm_wait_mark: process $pid ended before '$pat' appeared in $log" >&2
			return 1
		fi
		sleep 0.2
	done
	echo "vm_wait_mark: '$pat' did not appear in $log within $limit s" >&2
	return 1
}

# vm_qmp SOCKET JSON...: sends qmp_capabilities then each JSON command to the
# QMP socket of a running guest and prints the replies.
vm_qmp() {
	local sock=$1
	shift
	/usr/bin/python3 - "$sock" "$@" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
f = s.makefile("rw")
def reply():
    while True:
        line = f.readline()
        if not line:
            sys.exit("qmp: connection closed")
        msg = json.loads(line)
        if "event" in msg:
            continue
        return msg
reply()  # greeting
for cmd in ['{"execute":"qmp_capabilities"}'] + sys.argv[2:]:
    f.write(cmd + "\n")
    f.flush()
    r = reply()
    if "error" in r:
        sys.exit("qmp: %s failed: %s" % (cmd, r["error"]))
    print(json.dumps(r))
PY
}

# vm_free_port: a TCP port that is free on 127.0.0.1 now (the kernel's pick).
vm_free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# vm_newest DIR PATTERN: the newest file matching PATTERN in DIR (none: "").
vm_newest() {
	find "$1" -maxdepth 1 -name "$2" -printf '%T@ %p\n' 2>/dev/null |
		sort -rn | head -n 1 | cut -d' ' -f2-
}

# vm_stall PID MS [WAITS]: stops the QEMU process PID for MS milliseconds
# (SIGSTOP, sleep, SIGCONT): the guest's clocks jump, as under a
# hypervisor's stall. Prints how long every thread of PID stayed stopped, in
# ms with 3 decimals. One process does it all, started and raised to
# SCHED_FIFO (when allowed) before the stop: no fork or exec happens while
# QEMU is stopped. (The shell version this replaces ran awk and sleep
# between the kills, and their start-up made each stall 16-48 ms longer than
# asked on a loaded machine.) kill() only starts a stop: the kernel hands
# SIGSTOP to one thread, usually QEMU's sleeping main thread, and the
# others, the vCPUs too, run on until that one gets a CPU and stops them
# all, up to 16 ms later on a loaded host. So the stall is timed from the
# moment every thread reads as stopped (state T in /proc/PID/task/*/stat,
# polled), to the SIGCONT: a lower bound of what a vCPU missed
# (docs/design.md, "Stalls injected by the QEMU harness").
# With WAITS, it also appends to that file what the guest missed beyond the
# stop: the host run-queue waits of the vCPU threads (named "CPU n/TCG" by
# tests/vm/boot) from just before the kill() to the stop ("before"), and
# from the SIGCONT until each had run again ("after"), the largest of each,
# in ms: "BEFORE AFTER". The accuracy suite bounds a stall the same way.
vm_stall() {
	/usr/bin/python3 - "$@" <<'PY'
import os, signal, sys, time
pid, ms = int(sys.argv[1]), int(sys.argv[2])
waits = sys.argv[3] if len(sys.argv) > 3 else None
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass


def all_stopped():
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if state not in "Tt":
            return False
    return True


def vcpu_stats():
    """{tid: (ns on a CPU, ns waiting for one)} of the vCPU threads."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if not f.read().endswith("/TCG\n"):
                    continue
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                ran, wait = f.read().split()[:2]
        except (FileNotFoundError, ValueError):
            continue
        out[tid] = (int(ran), int(wait))
    return out


base = vcpu_stats() if waits else {}
os.kill(pid, signal.SIGSTOP)
limit = time.monotonic_ns() + 2_000_000_000
while not all_stopped() and time.monotonic_ns() < limit:
    time.sleep(0.0002)
t1 = time.monotonic_ns()
stopped = vcpu_stats() if waits else {}
time.sleep(ms / 1000)
t2 = time.monotonic_ns()
os.kill(pid, signal.SIGCONT)
after = {}
limit = time.monotonic_ns() + 30_000_000
while waits and len(after) < len(stopped) and time.monotonic_ns() < limit:
    time.sleep(0.0003)
    for tid, (ran, wait) in vcpu_stats().items():
        if tid in stopped and tid not in after and ran > stopped[tid][0]:
            after[tid] = wait - stopped[tid][1]
print("%.3f" % ((t2 - t1) / 1e6))
if waits:
    before = max((stopped[t][1] - base[t][1] for t in stopped if t in base), default=0)
    with open(waits, "a") as f:
        f.write("%.3f %.3f\n" % (before / 1e6, max(after.values(), default=0) / 1e6))
PY
}

# vm_guest_tap LOG: replays the guest's TAP lines of LOG through the
# caller's ok and not_ok (renumbered into its plan), echoes its comments,
# and sets vm_guest_plan to the guest's plan count ("" without a plan).
vm_guest_tap() {
	local line
	vm_guest_plan=""
	[ -f "$1" ] || return 0
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "${line#ok * - }" ;;
		"not ok "*) not_ok "${line#not ok * - }" ;;
		1..*) vm_guest_plan=${line#1..} ;;
		"Bail out!"*) not_ok "guest: $line" ;;
		"#"*) echo "$line" ;;
		esac
	done < <(tr -d '\r' <"$1")
}
