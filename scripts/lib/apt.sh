# SPDX-License-Identifier: MIT
# Debian packages for the install scripts (sourced; bash).

# missing PKG...: those of PKG not installed, one a line.
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

# apt_add WHO PKG...: install PKG from the configured sources (root only:
# else WHO says so and this fails), updating the lists once if the first
# try finds them stale.
apt_add() {
	local who=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		echo "$who: need root to install: $*" >&2
		return 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" ||
		{ apt-get update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"; }
}
