# shellcheck shell=bash
# Guest side of DKMS's "second kernel" path, sourced by user-path.sh when the
# host passes --second-kernel=K2 (tests/vm/user-path --second-kernel). With
# hwlat-dkms installed and built for the running kernel K1, it proves that:
#   - installing a second kernel K2 with its headers, with no dkms command of
#     ours, makes DKMS's kernel hooks build and install the module for K2 as
#     well (dkms status, modinfo -k K2 with vermagic K2, the .ko under
#     /lib/modules/K2/), while K1's module stays;
#   - purging hwlat removes the module for both kernels (dkms status empty,
#     no hwlat_detector.ko* under any /lib/modules/*, modinfo -k fails for
#     K1 and K2).
# On failure it prints what it saw (dkms status, make.log tails, ls of
# /lib/modules/*/updates). Evidence goes to $res (/mnt/results): the apt log
# of K2's install, dkms status after it (dkms-status-2.txt) and after the
# purge (dkms-status-3.txt). Needs from user-path.sh: ok, not_ok, bail, mark,
# t, secs and res. The payload holds kernel2/*.deb (linux-image-K2,
# linux-headers-K2 and what they need).

# What DKMS left, for a failure message: status, build logs, module dirs.
# Once per phase (sk_shown=0 starts a phase): later failures refer to it.
sk_shown=0
sk_show_state() {
	if [ "$sk_shown" = 1 ]; then
		echo "#   (DKMS state as shown above)"
		return
	fi
	sk_shown=1
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

# sk_installed_for KVER: dkms status says hwlat is installed for KVER. Fixed
# strings: a release such as 6.12.117+deb13-amd64 is no regex.
sk_installed_for() {
	dkms status hwlat 2>/dev/null | grep -F "hwlat/" | grep -F ", $1, " | grep -qF ": installed"
}

# sk_module_ok KVER: modinfo -k KVER finds hwlat_detector in
# /lib/modules/KVER/ and its vermagic names KVER. Prints what it saw.
sk_module_ok() {
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

# sk_kos KVER: the hwlat_detector.ko* files under /lib/modules/KVER (/lib is
# /usr/lib on a merged-/usr system: one path is enough).
sk_kos() {
	find "/lib/modules/$1/" -name 'hwlat_detector.ko*' 2>/dev/null | sort
}

# sk_stamp: prefixes each line with the guest's clock in seconds, so that the
# apt logs tell how long each maintainer-script step took.
sk_stamp() {
	local line
	while IFS= read -r line; do
		printf '%(%s)T %s\n' -1 "$line"
	done
}

# sk_took LOG FROM TO: seconds from the last line of LOG holding the fixed
# string FROM before the first later line holding TO, to that line ("?" if
# either is missing).
sk_took() {
	awk -v a="$2" -v b="$3" '
		!e && index($0, a) { s = $1 }
		s && !e && index($0, b) { e = $1 }
		END { if (s && e) print e - s; else print "?" }' "$1"
}

# second_kernel_precheck K1 K2: the arguments and the payload are usable;
# bails out (before anything is installed) when they are not.
second_kernel_precheck() {
	local k1=$1 k2=$2
	[ "$k2" != "$k1" ] || bail "the second kernel $k2 is the running kernel; the host must pick another"
	ls ./kernel2/linux-image-"$k2"_*.deb ./kernel2/linux-headers-"$k2"_*.deb >/dev/null 2>&1 ||
		bail "the payload's kernel2/ lacks linux-image-${k2}_*.deb or linux-headers-${k2}_*.deb: $(ls ./kernel2 2>&1)"
	echo "# second kernel K2 $k2, packages: $(cd ./kernel2 && echo *.deb), dkms $(dpkg-query -W -f='${Version}' dkms)"
}

# second_kernel_install K1 K2: installs K2 and its headers offline and checks
# that DKMS built hwlat for K2 while K1's module stays.
second_kernel_install() {
	local k1=$1 k2=$2 k seen t2 t3 irfs_hook=/etc/kernel/postinst.d/initramfs-tools
	sk_shown=0
	# K2 is not there yet: whatever appears for it later comes from its install.
	if [ ! -e "/lib/modules/$k2" ] && ! dpkg-query -W "linux-image-$k2" >/dev/null 2>&1; then
		ok "before the second kernel: $k2 is not installed (no /lib/modules/$k2)"
	else
		not_ok "before the second kernel: $k2 is not installed (no /lib/modules/$k2)"
		# shellcheck disable=SC2012 # a listing for a human, not parsed
		ls -ld "/lib/modules/$k2" 2>&1 | sed 's/^/#   /'
	fi
	mkdir -p /root/debs/kernel2
	cp ./kernel2/*.deb /root/debs/kernel2/ || bail "cannot copy the payload's kernel2/*.deb"
	mark kernel2-install
	# K2 is never booted, so its initramfs is not built: the kernel hook of
	# initramfs-tools is made non-executable (run-parts skips it) for this
	# install. That took 741 s of the 933 s on bookworm (gzip, no zstd in the
	# image); DKMS's own hook, /etc/kernel/postinst.d/dkms, still runs.
	[ ! -x "$irfs_hook" ] || chmod -x "$irfs_hook"
	t2=$(t)
	# shellcheck disable=SC2154 # res: user-path.sh
	if env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		-o Dpkg::Use-Pty=0 /root/debs/kernel2/*.deb 2>&1 | sk_stamp >"$res/apt-install-kernel2.log"; then
		ok "apt-get install of linux-image-$k2 and linux-headers-$k2 works offline"
	else
		not_ok "apt-get install of linux-image-$k2 and linux-headers-$k2 works offline"
		tail -n 40 "$res/apt-install-kernel2.log" | sed 's/^/#   /'
	fi
	t3=$(t)
	[ ! -f "$irfs_hook" ] || chmod +x "$irfs_hook"
	echo "# time: second kernel install: $(secs "$t2" "$t3") s, of which DKMS build for $k2 $(sk_took "$res/apt-install-kernel2.log" "/dkms:" "/lib/modules/$k2/updates/dkms/") s and initramfs $(sk_took "$res/apt-install-kernel2.log" "update-initramfs: Generating /boot/initrd.img-$k2" "Setting up ") s"
	dkms status >"$res/dkms-status-2.txt" 2>&1
	ls -lR /lib/modules/*/updates >"$res/modules-updates-2.txt" 2>&1
	if sk_installed_for "$k2" && sk_installed_for "$k1"; then
		ok "dkms status says hwlat installed for both $k1 and $k2"
	else
		not_ok "dkms status says hwlat installed for both $k1 and $k2"
		grep -iE 'dkms|hwlat|error' "$res/apt-install-kernel2.log" | tail -n 20 | sed 's/^/#   apt: /'
		sk_show_state
	fi
	for k in "$k2" "$k1"; do
		if seen=$(sk_module_ok "$k"); then
			ok "modinfo -k $k hwlat_detector works ($seen)"
		else
			not_ok "modinfo -k $k hwlat_detector works with vermagic $k"
			echo "#   saw: $seen"
			sk_show_state
		fi
	done
	if [ -n "$(sk_kos "$k2")" ] && [ -n "$(sk_kos "$k1")" ]; then
		ok "the module exists under /lib/modules of both kernels: $(sk_kos "$k1" | tr '\n' ' ')$(sk_kos "$k2" | tr '\n' ' ')"
	else
		not_ok "the module exists under /lib/modules/$k1 and /lib/modules/$k2"
		sk_show_state
	fi
}

# second_kernel_after_purge K1 K2: with hwlat purged, nothing of the module
# is left for either kernel.
second_kernel_after_purge() {
	local k1=$1 k2=$2 left still="" k
	sk_shown=0
	dkms status >"$res/dkms-status-3.txt" 2>&1
	left=$(find /lib/modules/ /usr/lib/modules/ -name 'hwlat_detector.ko*' 2>/dev/null)
	if ! grep -q '[^[:space:]]' "$res/dkms-status-3.txt" && [ -z "$left" ]; then
		ok "after purge: dkms status is empty and no hwlat_detector.ko* is left under /lib/modules/$k1 or /lib/modules/$k2"
	else
		not_ok "after purge: dkms status is empty and no hwlat_detector.ko* is left under /lib/modules/$k1 or /lib/modules/$k2"
		sed 's/^/#   dkms status: /' "$res/dkms-status-3.txt"
		printf '%s\n' "$left" | sed 's/^/#   left: /'
		sk_show_state
	fi
	for k in "$k1" "$k2"; do
		modinfo -k "$k" hwlat_detector >/dev/null 2>&1 && still+=" $k"
	done
	if [ -z "$still" ]; then
		ok "after purge: modinfo -k hwlat_detector fails for $k1 and $k2"
	else
		not_ok "after purge: modinfo -k hwlat_detector fails for $k1 and $k2 (still found for:$still)"
	fi
}
