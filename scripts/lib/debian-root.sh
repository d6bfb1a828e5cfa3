# SPDX-License-Identifier: MIT
# A clean Debian root for checks that must not see what this machine has
# installed (make check-fresh, make check-deb). Sourced (bash); needs root.
#   debian_root_create ROOT LOG PKG,PKG... [SUITE]
#                                 debootstrap minbase of SUITE (bookworm,
#                                 the default, or trixie) plus PKGs, with
#                                 SUITE-updates and SUITE-security
#   debian_root_mount ROOT                  proc, sys, dev, dev/pts inside it
#   debian_root_unmount ROOT                all of those, safe to call twice
debian_root_mirror=http://deb.debian.org/debian
debian_root_mounts=(proc sys dev dev/pts)

debian_root_create() {
	local root=$1 log=$2 include=$3 suite=${4:-bookworm}
	case $suite in
	bookworm | trixie) ;;
	*)
		echo "debian-root: suite '$suite' is not one nnp supports (bookworm, trixie)" >&2
		return 1
		;;
	esac
	command -v debootstrap >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
	debian_root_unmount "$root"
	rm -rf "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase --include="$include" \
		"$suite" "$root" "$debian_root_mirror" >"$log" 2>&1 ||
		{ tail -n 20 "$log"; return 1; }
	cat >"$root/etc/apt/sources.list" <<SOURCES
deb $debian_root_mirror $suite main
deb $debian_root_mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
SOURCES
	cp /etc/resolv.conf "$root/etc/resolv.conf"
}

debian_root_mount() {
	mount -t proc proc "$1/proc"
	mount -t sysfs sys "$1/sys"
	mount --bind /dev "$1/dev"
	mount --bind /dev/pts "$1/dev/pts"
}

debian_root_unmount() {
	local i
	for ((i = ${#debian_root_mounts[@]} - 1; i >= 0; i--)); do
		if mountpoint -q "$1/${debian_root_mounts[i]}"; then
			umount -l "$1/${debian_root_mounts[i]}"
		fi
	done
	return 0
}
