# shellcheck shell=bash
# need_packages PKG...: installs the Debian packages that are missing, running
# `apt-get update` at most once per machine boot of the test run.
need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "# installing: ${missing[*]}" >&2
	if [ ! -e /run/hwlat-tests-apt-updated ]; then
		apt-get update -q >&2
		touch /run/hwlat-tests-apt-updated
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >&2
}
