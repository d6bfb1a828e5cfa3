#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nnptool gres read back by Slurm itself: in one VM of 4 chips on a ring,
# with the host's root (--host-root, for Debian's slurmd), nnptool gres
# writes the chips' gres.conf lines and `slurmd -G` parses them; then the
# host takes three links down from the QEMU monitor and both are asked
# again.
#
# In detail (docs/testing.md has the summary): `nnptool gres -o FILE`
# writes exactly the header (slurm.conf's `GresTypes=nnp` and
# `Gres=nnp:nnpt:4`) and one line a chip, `Name=nnp Type=nnpt
# File=/dev/accel/accelN Links=...` with the ring's exact link counts,
# mode 644 and no temporary file left; `slurmd -G` (Slurm 22.05 on Debian
# 12, with a slurm.conf naming that node and gres.conf) exits 0 and lists
# the 4 chips with Index 0-3, their files and the same Links; a FILE in a
# missing directory exits 1 naming it, an extra operand or a --name other
# than nnp or gpu exits 2, `--name gpu` writes the same lines with
# Name=gpu (GresTypes=gpu, Gres=gpu:nnpt:4), --no-links the same lines
# without Links= and a header saying so, and a FILE that is a symbolic link is replaced, what it named left as it was
# (the file is written beside FILE and renamed over it). With the
# links chip 1 to 2, 2 to 3 and 3 to 0 down: Links count only links up
# (accel2 and accel3 all 0), each chip's down ports named in a comment
# after its line, from both ends, and accel2 and accel3 marked as having
# no link up; slurmd -G reads the new Links.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
tap_needs_host_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 11

# In the guest, in the host's root read-only: Slurm's files under /tmp
# (tests/lib/slurm_node.sh).
guest='
. tests/lib/slurm_node.sh
s=$SLURM_DIR
# Slurm 24.11 (Debian 13) makes its auth context before `slurmd -G` reads
# anything: munged must be up, as for a node that runs (22.05 did not ask).
slurm_node_conf && slurm_munge_up || exit 1
ask() {
	echo "=== gres $1"; nnptool gres -o $s/gres.conf; echo "status=$?"
	cat $s/gres.conf
	echo "=== slurmd $1"; slurmd -G 2>&1; echo "status=$?"
}
ask up
echo "=== file"; stat -c "mode=%a" $s/gres.conf; ls $s | grep -c "^gres.conf."
echo "=== errors"
nnptool gres -o /tmp/no/such/dir/gres.conf; echo "status=$?"
nnptool gres extra; echo "status=$?"
nnptool gres --name foo; echo "status=$?"
echo "=== gpu"; nnptool gres --name gpu; echo "status=$?"
echo "=== no links"; nnptool gres --name gpu --no-links; echo "status=$?"
echo "=== symlink"
echo keep >/tmp/victim; ln -s /tmp/victim $s/link.conf
nnptool gres -o $s/link.conf; echo "status=$?"
cat /tmp/victim; [ -L $s/link.conf ] && echo "still a link"; grep -c "^Name=nnp " $s/link.conf
echo "LINK nnp1 down 0"; echo "LINK nnp3 down 0"; echo "LINK nnp3 down 1"
for p in accel1/device/port0 accel3/device/port0 accel3/device/port1; do
	i=0
	while [ "$(cat /sys/class/accel/$p/state)" = up ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
done
ask down
echo "GRES END"'
fault_vm "$tmp" "GRES END" 300 --chips 4 --fabric ring --mem-size 16M \
	--host-root -- sh -c "$guest"
host=$?
tap_context=$tmp/host tap_check "the host took the three links down" test $host = 0
python3 - "$tmp/out" >"$tmp/checks" <<'PY'
import re, sys

text = open(sys.argv[1], errors="replace").read()


def section(name):
    m = re.search(r"^=== %s\n(.*?)(?=^=== |^LINK |^GRES END)" % re.escape(name), text, re.M | re.S)
    return m.group(1) if m else ""


def check(name, ok, why=""):
    """One TAP verdict a line: @why (what was seen) on the same line."""
    print("%s %s%s" % ("ok" if ok else "not ok", name,
                       "" if ok else ": " + why.replace("\n", "\\n")))


header = ("# nnp chips of this node, written by nnptool gres.\n"
          "# slurm.conf needs GresTypes=nnp and, on this node's line, Gres=nnp:nnpt:4\n"
          "# Links: the links up from a chip to each chip, in the order of these lines; -1 is itself.\n")


def line(i, links):
    return "Name=nnp Type=nnpt File=/dev/accel/accel%d Links=%s\n" % (i, links)


def down(i, port, peer, peer_port):
    return ("# /dev/accel/accel%d (chip %d): port %d to chip %d port %d is down, not counted in Links\n"
            % (i, i, port, peer, peer_port))


def alone(i):
    return ("# /dev/accel/accel%d (chip %d): no link up to another chip of this node: fit for a job of one chip only\n"
            % (i, i))


ring = ["-1,1,0,1", "1,-1,1,0", "0,1,-1,1", "1,0,1,-1"]
want_up = "status=0\n" + header + "".join(line(i, l) for i, l in enumerate(ring))
got = section("gres up")
check("gres.conf of the ring of 4", got == want_up, repr(got))
want_gpu = (header + "".join(line(i, l) for i, l in enumerate(ring))) \
    .replace("GresTypes=nnp ", "GresTypes=gpu ").replace("Gres=nnp:", "Gres=gpu:") \
    .replace("Name=nnp ", "Name=gpu ") + "status=0\n"
got = section("gpu")
check("--name gpu: the same lines as gres of Slurm's gres/gpu", got == want_gpu, repr(got))
no_links = re.sub(r" Links=\S+", "", want_gpu).replace(
    "# Links: the links up from a chip to each chip, in the order of these lines; -1 is itself.\n",
    "# No Links (--no-links): Slurm then gives a job the lowest free chips, in the order of these lines.\n")
got = section("no links")
check("--no-links: the same lines without Links= (Slurm 24.05 to 24.11 sort by them the wrong way)",
      got == no_links, repr(got))


def slurmd_reads(name, links):
    got = section("slurmd " + name)
    gres = re.findall(r"Gres Name=nnp Type=nnpt Count=1 Index=(\d+) ID=\d+ "
                      r"File=(\S+) Links=(\S+)", got)
    want = [(str(i), "/dev/accel/accel%d" % i, l) for i, l in enumerate(links)]
    # slurmd -G says each line twice, before and after its log opens.
    check("slurmd -G %s: exit 0, the 4 chips and their Links" % name,
          got.rstrip().endswith("status=0") and gres[:4] == want and
          gres[4:] in ([], want), got)


slurmd_reads("up", ring)
check("the file: mode 644, no temporary file left",
      section("file") == "mode=644\n0\n", repr(section("file")))
check("a file in a missing directory: exit 1, named; an extra operand or a --name but nnp or gpu: exit 2",
      section("errors") == "nnptool: gres: /tmp/no/such/dir/gres.conf: No such file or directory\n"
      "status=1\nnnptool: gres: extra operand 'extra'\nusage: nnptool gres [-o FILE] [--name nnp|gpu] [--no-links]\n"
      "status=2\nnnptool: gres: bad --name 'foo'\nusage: nnptool gres [-o FILE] [--name nnp|gpu] [--no-links]\n"
      "status=2\n",
      repr(section("errors")))
check("a FILE that is a link: replaced by the file, what it pointed to untouched",
      section("symlink") == "status=0\nkeep\n4\n", repr(section("symlink")))
links = ["-1,1,0,0", "1,-1,0,0", "0,0,-1,0", "0,0,0,-1"]
want_down = ("status=0\n" + header +
             line(0, links[0]) + down(0, 1, 3, 0) +
             line(1, links[1]) + down(1, 0, 2, 1) +
             line(2, links[2]) + down(2, 0, 3, 1) + down(2, 1, 1, 0) + alone(2) +
             line(3, links[3]) + down(3, 0, 0, 1) + down(3, 1, 2, 0) + alone(3))
got = section("gres down")
check("links down: counted out, named from both ends, chips without one marked",
      got == want_down, repr(got))
slurmd_reads("down", links)
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then tap_ok "$rest"; else tap_not_ok "${rest#ok }"; fi
done <"$tmp/checks"
tap_context=$tmp/out tap_grep "and the VM exits 0" "$tmp/out" '^vm-status=0$'
tap_done
