# shellcheck shell=bash
# The second kernel K2 of the DKMS "second kernel" test (tests/vm/user-path
# --second-kernel): chosen at run time from the machine's mirror (URIs: of
# /etc/apt/sources.list.d/debian.sources), downloaded once, put on a guest's
# payload. Sourced, not run; the caller provides the TAP helpers ok and
# not_ok, and sources tests/vm/lib.sh and tests/lib/need.sh.
#
# K2 is, in this order of preference:
#   1. the cloud flavour of the guest kernel K1's own ABI
#      (linux-image-ABI-cloud-amd64 and linux-headers-ABI-cloud-amd64), when
#      the index has it in K1's version (so its headers need only the
#      -common headers and kbuild already in the image) and its .config has
#      CONFIG_DEBUG_FS=y (dkms.conf's BUILD_EXCLUSIVE_CONFIG): a real second
#      kernel of about a third of the generic image's size;
#   2. otherwise the newest linux-image-ABI-amd64 of the suite whose ABI
#      differs from K1's and has linux-headers-ABI-amd64.
# Its packages, plus whatever they need that the guest image lacks (apt
# resolves against the image's own dpkg status), are downloaded once into
# $vm_cache/dkms-kernels-SUITE-K2-HASH/ (HASH: the .deb file names, so
# versions).

# sk_get K2: resolves linux-image-K2 and linux-headers-K2 against the guest
# image and downloads them unless cached. Uses the caller's apt_opts, suite
# and work. Sets sk_files, sk_kdir and sk_how; on failure sets sk_error and
# returns 1 (sk_error names what went wrong, its details are in sk_log).
sk_get() {
	local k2=$1 f has_image=0 has_headers=0 key tmp t_dl=$SECONDS missing=()
	sk_files=() sk_kdir="" sk_how="" sk_error="" sk_log=""
	# What to download: apt's own answer against the guest's package database.
	if ! apt-get -qq "${apt_opts[@]}" install --print-uris -y "linux-image-$k2" "linux-headers-$k2" \
		>"$work/uris" 2>"$work/uris.err"; then
		sk_error="apt resolves linux-image-$k2 and linux-headers-$k2 against the guest image"
		sk_log=$work/uris.err
		return 1
	fi
	mapfile -t sk_files < <(awk '/^\x27/ {print $2}' "$work/uris" | sort)
	for f in "${sk_files[@]}"; do
		case "$f" in
		"linux-image-${k2}_"*.deb) has_image=1 ;;
		"linux-headers-${k2}_"*.deb) has_headers=1 ;;
		esac
	done
	if [ "$has_image" -eq 0 ] || [ "$has_headers" -eq 0 ]; then
		sk_error="apt's download list names linux-image-$k2 and linux-headers-$k2 (got: ${sk_files[*]:-nothing})"
		return 1
	fi
	key=$(printf '%s\n' "${sk_files[@]}" | sha256sum | cut -c1-12)
	# shellcheck disable=SC2154 # vm_cache: tests/vm/lib.sh
	sk_kdir="$vm_cache/dkms-kernels-$suite-$k2-$key"
	if [ -f "$sk_kdir/complete" ]; then
		sk_how="cached in $sk_kdir"
		return 0
	fi
	tmp=$(mktemp -d "$vm_cache/.build-dkms-kernels-$suite.XXXXXX")
	mkdir -p "$tmp/partial"
	if ! apt-get -q "${apt_opts[@]}" -o "Dir::Cache::archives=$tmp" install --download-only -y \
		"linux-image-$k2" "linux-headers-$k2" >"$work/download.log" 2>&1; then
		rm -rf "$tmp"
		sk_error="download of $k2's packages"
		sk_log=$work/download.log
		return 1
	fi
	for f in "${sk_files[@]}"; do
		[ -s "$tmp/$f" ] || missing+=("$f")
	done
	if [ ${#missing[@]} -ne 0 ]; then
		rm -rf "$tmp"
		sk_error="download of $k2's packages (missing after apt: ${missing[*]})"
		return 1
	fi
	rm -rf "$tmp/partial" "$tmp/lock"
	printf '%s\n' "${sk_files[@]}" >"$tmp/complete"
	mv -T "$tmp" "$sk_kdir" || vm_die "cannot rename $tmp to $sk_kdir"
	sk_how="downloaded in $((SECONDS - t_dl)) s to $sk_kdir"
}

# sk_debugfs_config K2: the .config in sk_kdir's linux-headers-K2 .deb says
# CONFIG_DEBUG_FS=y.
sk_debugfs_config() {
	local deb
	deb=$(find "$sk_kdir" -maxdepth 1 -name "linux-headers-${1}_*.deb" | head -n 1)
	[ -n "$deb" ] || return 1
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/src/linux-headers-$1/.config" 2>/dev/null |
		grep -x 'CONFIG_DEBUG_FS=y' >/dev/null
}

# second_kernel_fetch SUITE IMG DEST WORK: chooses K2 for the guest image
# IMG (a directory of tests/vm/image) of SUITE, downloads it if not cached
# and copies its .debs into DEST. WORK is an empty scratch directory the
# caller removes. Reports each step as one TAP test. Sets second_kernel to
# K2's release (uname -r form); after a failed test it stays empty. Returns
# 0 either way, so that the caller's set -e stays in force in here.
second_kernel_fetch() {
	local suite=$1 img=$2 dest=$3 work=$4
	local k1 v1 vc apt_state abi1 a k2="" why="" f old apt_opts abis=()
	second_kernel=""
	need_packages apt e2fsprogs
	k1=$(cat "$img/kernel-release") || vm_die "no kernel-release in $img"

	# apt on the host, but aimed at SUITE on the machine's mirror and at the
	# guest image's package database: it never reads or changes the host's
	# own dpkg state, lists or archives. The lists stay in $work (they are
	# named after the mirror, which is never kept).
	apt_state="$work/state"
	mkdir -p "$apt_state/lists/partial" "$work/sources"
	vm_write_sources "$suite" "$work/sources/debian.sources"
	debugfs -R "dump /var/lib/dpkg/status $work/status" "$img/root.raw" >/dev/null 2>&1
	[ -s "$work/status" ] || vm_die "cannot read /var/lib/dpkg/status from $img/root.raw"
	apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/sources"
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
		-o "Dir::State=$apt_state" -o "Dir::State::status=$work/status"
		-o "Dir::Cache=$work/cache" -o APT::Architecture=amd64 -o APT::Architectures::=amd64
		-o APT::Install-Recommends=false)
	! vm_suite_expired "$suite" || apt_opts+=(-o Acquire::Check-Valid-Until=false)

	exec 9>"$vm_cache/dkms-kernels-$suite.lock"
	flock 9
	if ! apt-get -q "${apt_opts[@]}" update >"$work/apt-update.log" 2>&1; then
		sed 's/^/#   /' "$work/apt-update.log"
		not_ok "apt-get update for $suite from the machine's mirror (log above)"
		exec 9>&-
		return 0
	fi
	abi1=${k1%-amd64}
	mapfile -t abis < <(apt-cache "${apt_opts[@]}" pkgnames linux-image- |
		sed -nE 's/^linux-image-([0-9]+\.[0-9]+[0-9.]*(-[0-9]+|\+deb[0-9]+)?)-amd64$/\1/p' | sort -rV)

	# 1. The cloud flavour of K1's ABI, in K1's version.
	v1=$(apt-cache "${apt_opts[@]}" policy "linux-image-$k1" | sed -n 's/^  Installed: //p')
	vc=$(apt-cache "${apt_opts[@]}" policy "linux-headers-$abi1-cloud-amd64" "linux-image-$abi1-cloud-amd64" 2>/dev/null |
		sed -n 's/^  Candidate: //p' | sort -u)
	if [ -z "$vc" ] || [ "$vc" = "(none)" ] || [[ "$vc" == *$'\n'* ]]; then
		why="the $suite index has no linux-image/headers-$abi1-cloud-amd64 of one version"
	elif [ "$vc" != "$v1" ]; then
		why="$abi1-cloud-amd64 is version $vc on the mirror, $k1 is $v1 in the image"
	elif ! sk_get "$abi1-cloud-amd64"; then
		why="$sk_error"
	elif ! sk_debugfs_config "$abi1-cloud-amd64"; then
		why="its headers' .config lacks CONFIG_DEBUG_FS=y (dkms.conf's BUILD_EXCLUSIVE_CONFIG)"
	else
		k2=$abi1-cloud-amd64
		ok "second kernel $k2 chosen: the cloud flavour of the guest's $k1, version $v1, CONFIG_DEBUG_FS=y"
	fi

	# 2. Otherwise the newest ABI of the default flavour other than K1's,
	# with headers in the same index.
	if [ -z "$k2" ]; then
		echo "# no cloud flavour as the second kernel: $why"
		for a in "${abis[@]}"; do
			[ "$a" != "$abi1" ] || continue
			apt-cache "${apt_opts[@]}" show "linux-image-$a-amd64" "linux-headers-$a-amd64" >/dev/null 2>&1 || continue
			k2=$a-amd64
			break
		done
		if [ -z "$k2" ]; then
			not_ok "a second kernel: the $suite index has no linux-image-ABI-amd64 with headers other than $k1 (ABIs seen: ${abis[*]:-none})"
			exec 9>&-
			return 0
		fi
		ok "second kernel $k2 chosen (guest runs $k1; $suite offers ABIs ${abis[*]})"
		if ! sk_get "$k2"; then
			[ -z "$sk_log" ] || tail -n 20 "$sk_log" | sed 's/^/#   /'
			not_ok "$sk_error"
			exec 9>&-
			return 0
		fi
	fi
	# Other downloads of this suite's second kernel are never used again.
	for old in "$vm_cache"/dkms-kernels-"$suite"-*-*/; do
		[ "${old%/}" = "$sk_kdir" ] || [ ! -f "$old/complete" ] || rm -rf "${old%/}"
	done
	exec 9>&-
	ok "the second kernel's ${#sk_files[@]} packages ($(du -sh "$sk_kdir" | cut -f1)): ${sk_files[*]}; $sk_how"

	mkdir -p "$dest"
	for f in "${sk_files[@]}"; do
		ln "$sk_kdir/$f" "$dest/$f" 2>/dev/null || cp "$sk_kdir/$f" "$dest/$f" ||
			vm_die "cannot copy $sk_kdir/$f to $dest"
	done
	# shellcheck disable=SC2034 # read by the caller
	second_kernel=$k2
}
