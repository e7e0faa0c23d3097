#!/bin/bash
# Guest side of tests/vm/dkms-kernels (runs inside the QEMU guest as root,
# from the read-only payload share, cwd /mnt/payload). Proves DKMS's
# "second kernel" path for hwlat-dkms:
#   1. installing hwlat-dkms and hwlat-tools offline builds and installs
#      hwlat_detector for the running kernel K1;
#   2. installing a second kernel K2 with its headers, afterwards and with
#      no dkms command of ours, makes DKMS's kernel hooks build and install
#      the module for K2 as well (dkms status, modinfo -k K2 with vermagic
#      K2, the .ko under /lib/modules/K2/), while K1's module stays;
#   3. purging both packages removes the module for both kernels (dkms
#      status empty, no hwlat_detector.ko* under any /lib/modules/*);
#   4. the kernel log stays free of warnings, oopses, lockups and hung tasks.
# Prints TAP; on failure prints what it saw (dkms status, make.log, ls of
# /lib/modules/*/updates). Copies the evidence to /mnt/results.
#
#   dkms-kernels.sh K2
# K2 is the second kernel's release (uname -r form, e.g. 6.1.0-47-amd64).
# The payload holds hwlat/hwlat-dkms_*.deb, hwlat/hwlat-tools_*.deb and
# kernel2/*.deb (linux-image-K2, linux-headers-K2 and what they need).
set -uo pipefail

res=/mnt/results
[ $# -eq 1 ] || {
	echo "dkms-kernels.sh: expected one argument, the second kernel's release (got $#)" >&2
	exit 2
}
k2=$1
[[ "$k2" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || {
	echo "dkms-kernels.sh: '$k2' does not look like a kernel release" >&2
	exit 2
}
k1=$(uname -r)

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
bail() {
	echo "Bail out! $*"
	echo "1..$n"
	exit 1
}
mark() { echo "HWLAT-MARK $*" >/dev/ttyS0; }
t() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
apt_install() {
	env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		-o Dpkg::Use-Pty=0 "$@"
}

# What DKMS left, for a failure message: status, build logs, module dirs.
# Once per phase (shown=0 starts a phase): later failures refer to it.
shown=0
show_state() {
	if [ "$shown" = 1 ]; then
		echo "#   (DKMS state as shown above)"
		return
	fi
	shown=1
	echo "#   dkms status:"
	dkms status 2>&1 | sed 's/^/#     /'
	local log
	for log in /var/lib/dkms/hwlat/*/build/make.log /var/lib/dkms/hwlat/*/*/*/log/make.log; do
		[ -f "$log" ] || continue
		echo "#   last lines of $log:"
		tail -n 25 "$log" | sed 's/^/#     /'
	done
	echo "#   ls -lR /lib/modules/*/updates:"
	# shellcheck disable=SC2012 # a listing for a human, not parsed
	ls -lR /lib/modules/*/updates 2>&1 | sed 's/^/#     /'
}

# installed_for KVER: dkms status says hwlat is installed for KVER. Fixed
# strings: a release such as 6.12.117+deb13-amd64 is no regex.
installed_for() {
	dkms status hwlat 2>/dev/null | grep -F "hwlat/" | grep -F ", $1, " | grep -qF ": installed"
}

# module_ok KVER: modinfo -k KVER finds hwlat_detector in /lib/modules/KVER/
# and its vermagic names KVER. Prints what it saw.
module_ok() {
	local k=$1 vm file
	if ! vm=$(modinfo -k "$k" -F vermagic hwlat_detector 2>&1); then
		echo "modinfo -k $k hwlat_detector failed: $vm"
		return 1
	fi
	file=$(modinfo -k "$k" -n hwlat_detector 2>&1)
	echo "vermagic '$vm', file $file"
	[ "${vm%% *}" = "$k" ] || return 1
	case "$file" in
	/lib/modules/"$k"/* | /usr/lib/modules/"$k"/*) ;;
	*) return 1 ;;
	esac
	[ -f "$file" ]
}

# kos KVER: the hwlat_detector.ko* files under /lib/modules/KVER (/lib is
# /usr/lib on a merged-/usr system: one path is enough).
kos() {
	find "/lib/modules/$1/" -name 'hwlat_detector.ko*' 2>/dev/null | sort
}

# stamp: prefixes each line with the guest's clock in seconds, so that the
# apt logs tell how long each maintainer-script step took.
stamp() {
	local line
	while IFS= read -r line; do
		printf '%(%s)T %s\n' -1 "$line"
	done
}

# took LOG FROM TO: seconds from the last line of LOG holding the fixed
# string FROM before the first later line holding TO, to that line ("?" if
# either is missing).
took() {
	awk -v a="$2" -v b="$3" '
		!e && index($0, a) { s = $1 }
		s && !e && index($0, b) { e = $1 }
		END { if (s && e) print e - s; else print "?" }' "$1"
}

dmesg_start=$(dmesg | wc -l)
echo "# guest kernel K1 $k1, second kernel K2 $k2, $(nproc) CPUs, dkms $(dpkg-query -W -f='${Version}' dkms)"
[ "$k2" != "$k1" ] || bail "the second kernel $k2 is the running kernel; the host must pick another"
mkdir -p /root/debs/hwlat /root/debs/kernel2
cp ./hwlat/hwlat-dkms_*.deb ./hwlat/hwlat-tools_*.deb /root/debs/hwlat/ ||
	bail "the payload has no hwlat/hwlat-dkms_*.deb and hwlat/hwlat-tools_*.deb: $(ls -R)"
cp ./kernel2/*.deb /root/debs/kernel2/ || bail "the payload has no kernel2/*.deb: $(ls -R)"
ls /root/debs/kernel2/linux-image-"$k2"_*.deb /root/debs/kernel2/linux-headers-"$k2"_*.deb >/dev/null 2>&1 ||
	bail "kernel2/ lacks linux-image-${k2}_*.deb or linux-headers-${k2}_*.deb: $(ls /root/debs/kernel2)"
echo "# second kernel packages: $(cd /root/debs/kernel2 && echo *.deb)"

# 0. K2 is not there yet: whatever appears for it later comes from its install.
if [ ! -e "/lib/modules/$k2" ] && ! dpkg-query -W "linux-image-$k2" >/dev/null 2>&1; then
	ok "before: $k2 is not installed (no /lib/modules/$k2)"
else
	not_ok "before: $k2 is not installed (no /lib/modules/$k2)"
	# shellcheck disable=SC2012 # a listing for a human, not parsed
	ls -ld "/lib/modules/$k2" 2>&1 | sed 's/^/#   /'
fi

# 1. hwlat for the running kernel.
t0=$(t)
if apt_install /root/debs/hwlat/hwlat-dkms_*.deb /root/debs/hwlat/hwlat-tools_*.deb 2>&1 |
	stamp >"$res/apt-install-hwlat.log"; then
	ok "apt-get install of hwlat-dkms and hwlat-tools works offline"
else
	not_ok "apt-get install of hwlat-dkms and hwlat-tools works offline"
	tail -n 30 "$res/apt-install-hwlat.log" | sed 's/^/#   /'
	show_state
	bail "cannot install the hwlat packages"
fi
t1=$(t)
echo "# time: hwlat install + DKMS build for $k1: $(secs "$t0" "$t1") s"
dkms status >"$res/dkms-status-1.txt" 2>&1
if installed_for "$k1"; then
	ok "dkms status says hwlat installed for $k1"
else
	not_ok "dkms status says hwlat installed for $k1"
	show_state
fi
if seen=$(module_ok "$k1"); then
	ok "modinfo -k $k1 hwlat_detector works ($seen)"
else
	not_ok "modinfo -k $k1 hwlat_detector works with vermagic $k1"
	echo "#   saw: $seen"
fi

# 2. The second kernel, with its headers: DKMS's hooks must build for it.
shown=0
mark kernel2-install
# K2 is never booted, so its initramfs is not built: the kernel hook of
# initramfs-tools is made non-executable (run-parts skips it) for this
# install. That took 741 s of the 933 s on bookworm (gzip, no zstd in the
# image); DKMS's own hook, /etc/kernel/postinst.d/dkms, still runs.
irfs_hook=/etc/kernel/postinst.d/initramfs-tools
[ ! -x "$irfs_hook" ] || chmod -x "$irfs_hook"
t2=$(t)
if apt_install /root/debs/kernel2/*.deb 2>&1 | stamp >"$res/apt-install-kernel2.log"; then
	ok "apt-get install of linux-image-$k2 and linux-headers-$k2 works offline"
else
	not_ok "apt-get install of linux-image-$k2 and linux-headers-$k2 works offline"
	tail -n 40 "$res/apt-install-kernel2.log" | sed 's/^/#   /'
fi
t3=$(t)
[ ! -f "$irfs_hook" ] || chmod +x "$irfs_hook"
echo "# time: second kernel install: $(secs "$t2" "$t3") s, of which DKMS build for $k2 $(took "$res/apt-install-kernel2.log" "/dkms:" "/lib/modules/$k2/updates/dkms/") s and initramfs $(took "$res/apt-install-kernel2.log" "update-initramfs: Generating /boot/initrd.img-$k2" "Setting up ") s"
dkms status >"$res/dkms-status-2.txt" 2>&1
ls -lR /lib/modules/*/updates >"$res/modules-updates-2.txt" 2>&1
if installed_for "$k2" && installed_for "$k1"; then
	ok "dkms status says hwlat installed for both $k1 and $k2"
else
	not_ok "dkms status says hwlat installed for both $k1 and $k2"
	grep -iE 'dkms|hwlat|error' "$res/apt-install-kernel2.log" | tail -n 20 | sed 's/^/#   apt: /'
	show_state
fi
if seen=$(module_ok "$k2"); then
	ok "modinfo -k $k2 hwlat_detector works ($seen)"
else
	not_ok "modinfo -k $k2 hwlat_detector works with vermagic $k2"
	echo "#   saw: $seen"
	show_state
fi
if [ -n "$(kos "$k2")" ] && [ -n "$(kos "$k1")" ]; then
	ok "the module exists under /lib/modules of both kernels: $(kos "$k1" | tr '\n' ' ')$(kos "$k2" | tr '\n' ' ')"
else
	not_ok "the module exists under /lib/modules/$k1 and /lib/modules/$k2"
	show_state
fi

# 3. Purge: the module goes away for both kernels.
shown=0
t4=$(t)
if env DEBIAN_FRONTEND=noninteractive apt-get purge -y -o Dpkg::Use-Pty=0 hwlat-dkms hwlat-tools 2>&1 |
	stamp >"$res/apt-purge.log"; then
	ok "apt-get purge hwlat-dkms hwlat-tools works"
else
	not_ok "apt-get purge hwlat-dkms hwlat-tools works"
	tail -n 30 "$res/apt-purge.log" | sed 's/^/#   /'
fi
t5=$(t)
echo "# time: purge: $(secs "$t4" "$t5") s"
dkms status >"$res/dkms-status-3.txt" 2>&1
if ! grep -q '[^[:space:]]' "$res/dkms-status-3.txt"; then
	ok "after purge: dkms status is empty"
else
	not_ok "after purge: dkms status is empty"
	sed 's/^/#   /' "$res/dkms-status-3.txt"
fi
left=$(find /lib/modules/ /usr/lib/modules/ -name 'hwlat_detector.ko*' 2>/dev/null
	ls -d /var/lib/dkms/hwlat /usr/src/hwlat-* 2>/dev/null)
if [ -z "$left" ]; then
	ok "after purge: no hwlat_detector.ko* under any /lib/modules/*, no DKMS tree or source"
else
	not_ok "after purge: no hwlat_detector.ko* under any /lib/modules/*, no DKMS tree or source"
	printf '%s\n' "$left" | sed 's/^/#   left: /'
	show_state
fi
still=""
for k in "$k1" "$k2"; do
	modinfo -k "$k" hwlat_detector >/dev/null 2>&1 && still+=" $k"
done
if [ -z "$still" ]; then
	ok "after purge: modinfo -k hwlat_detector fails for $k1 and $k2"
else
	not_ok "after purge: modinfo -k hwlat_detector fails for $k1 and $k2 (still found for:$still)"
fi

# 4. The kernel log since the test began.
dmesg >"$res/dmesg-end.txt"
tail -n +"$((dmesg_start + 1))" "$res/dmesg-end.txt" >"$res/dmesg-test.txt"
# Case-sensitive, as the kernel prints them ("loops_per_jiffy" is no oops).
pat='WARNING:|BUG:|Oops:|general protection fault|soft lockup|hard LOCKUP|hung_task|blocked for more than|Call Trace:|rcu: INFO|detected stalls|self-detected stall'
if bad=$(grep -E "$pat" "$res/dmesg-test.txt"); then
	not_ok "dmesg has no warning, oops, lockup, stall or hung task"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/#   /'
else
	ok "dmesg has no warning, oops, lockup, stall or hung task ($(wc -l <"$res/dmesg-test.txt") lines since the test began)"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
