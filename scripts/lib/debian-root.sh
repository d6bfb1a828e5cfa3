# SPDX-License-Identifier: MIT
# A clean Debian 12 root for checks that must not see what this machine has
# installed (make check-fresh, make check-deb). Sourced (bash); needs root.
#   debian_root_create ROOT LOG PKG,PKG...  debootstrap minbase plus PKGs,
#                                           with bookworm-updates and -security
#   debian_root_mount ROOT                  proc, sys, dev, dev/pts inside it
#   debian_root_unmount ROOT                all of those, safe to call twice
debian_root_mirror=http://deb.debian.org/debian
debian_root_mounts=(proc sys dev dev/pts)

debian_root_create() {
	local root=$1 log=$2 include=$3
	command -v debootstrap >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
	debian_root_unmount "$root"
	rm -rf "$root"
	mkdir -p "$(dirname "$root")"
	debootstrap --variant=minbase --include="$include" \
		bookworm "$root" "$debian_root_mirror" >"$log" 2>&1 ||
		{ tail -n 20 "$log"; return 1; }
	cat >"$root/etc/apt/sources.list" <<SOURCES
deb $debian_root_mirror bookworm main
deb $debian_root_mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
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
