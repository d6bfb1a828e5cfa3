#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make check-fresh: the README's two commands, `make demo` then `make check`,
# from a clean clone of HEAD inside a clean Debian root made with
# debootstrap: what a newcomer's first run sees, with nothing this machine
# has installed to hide a missing step. The root holds only what a fresh
# Debian machine has that the README takes as given (make, gcc, git,
# ca-certificates); everything else must come from the project's scripts.
# Prints how long each step took and, for each command, when its long
# steps began (scripts/lib/phases.sh); each line of a command's log bears
# the seconds since the command began. Exits non-zero if either fails.
# Usage: [DIST=bookworm|trixie] check-fresh.sh [WORKDIR]
#   DIST is the Debian release of the root (default bookworm, Debian 12);
#   WORKDIR defaults to build/fresh (build/fresh-trixie for trixie). Root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=${DIST:-bookworm}
default_work=$repo/build/fresh
[ "$dist" = bookworm ] || default_work=$repo/build/fresh-$dist
work=$(realpath -m "${1:-$default_work}")
root=$work/root
. "$repo/scripts/lib/debian-root.sh"
. "$repo/scripts/lib/phases.sh"

log() { printf '%s check-fresh: %s\n' "$(date +%T)" "$*"; }

trap 'debian_root_unmount "$root"' EXIT

[ "$(id -u)" = 0 ] || { echo "check-fresh: needs root (debootstrap, chroot)" >&2; exit 1; }

mkdir -p "$work"
start=$SECONDS
log "debootstrap $dist into $root"
debian_root_create "$root" "$work/debootstrap.log" make,gcc,git,ca-certificates "$dist"
log "root ready after $((SECONDS - start)) s"

git clone -q --no-local "$repo" "$root/root/nnp"
debian_root_mount "$root"

status=0
for cmd in demo check; do
	t=$SECONDS
	log "make $cmd (log: $work/make-$cmd.log)"
	if chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 CI=true bash -c "cd /root/nnp && make $cmd" 2>&1 |
		phases_stamp >"$work/make-$cmd.log"; then
		log "make $cmd passed in $((SECONDS - t)) s; its phases (s from its start):"
		phases_of "$work/make-$cmd.log"
	else
		log "make $cmd FAILED after $((SECONDS - t)) s"
		tail -n 30 "$work/make-$cmd.log"
		status=1
		break
	fi
done
[ "$status" = 0 ] && tail -n 1 "$work/make-check.log" | sed 's/^ *[0-9]* //'
log "total $((SECONDS - start)) s"
exit "$status"
