#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tools that start guests and PODs, tried as a hostile user would
# (docs/security.md, "The tools"): a guest user against root's command
# and the job's secret in nnp-vm's guests, a host user other than the
# POD's against its secret and its LAN.
#
# In detail (docs/testing.md has the summary):
# `nnp-vm --env K` with K unset exits 2 naming it; an `--icl-secret` file
# of mode 644 is refused (exit 2); a guest user's escape sequences come
# out of nnp-vm with their control bytes as '?', and its `NNP-VM-EXIT=0`
# printed before the command hangs does not hide the timeout (124);
# `nnp-pod --control`
# naming a FIFO that exists exits 2 saying so, before any chassis starts;
# in a guest without
# --host-root the command sees the secret given as `--env
# NNP_COMM_SECRET` (its SHA-256 the host's), and user 65534 finds it in
# no file of /nnp-vm and no process's command line or environment; with
# --host-root root's HOME is a directory of mode 700 that user 65534
# cannot write into, so a Python .pth file it plants for root's python3
# does not run (on main before this suite it ran as uid 0), and every 9p
# mount of the host's root is nosuid and nodev; in a POD of 2 chassis of
# 1 chip, user 65534 on the host finds the job's secret on no command
# line or environment it can read, and gets no frame of the POD's LAN
# from the POD's TCP ports or nnp-pod's unix sockets while chassis 0
# broadcasts ARP requests for 12 s
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 17
vm=("$root/tools/nnp-vm" --chips 1 --mem-size 16M --timeout 300)
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
NNP_COMM_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export NNP_COMM_SECRET
sha=$(printf %s "$NNP_COMM_SECRET" | sha256sum | cut -d' ' -f1)

env -u NNP_NOT_SET "${vm[@]}" --env NNP_NOT_SET -- true >"$tmp/unset" 2>&1
echo "vm-status=$?" >>"$tmp/unset"
tap_check "--env K with K unset: exit 2, naming it" test "$(cat "$tmp/unset")" = \
	"nnp-vm: --env NNP_NOT_SET: no such variable in nnp-vm's environment
vm-status=2"

# An ICL secret file that others may read.
printf 'job-secret' >"$tmp/open-secret"
chmod 644 "$tmp/open-secret"
"${vm[@]}" --icl-secret "$tmp/open-secret" --remote 0.0-1.0=listen:unix:"$tmp/icl" \
	-- true >"$tmp/open" 2>&1
echo "vm-status=$?" >>"$tmp/open"
tap_check "--icl-secret readable by others: exit 2, saying so" test "$(cat "$tmp/open")" = \
	"nnp-vm: --icl-secret $tmp/open-secret: group or others may use it (mode 644): chmod 600 it
vm-status=2"

# A guest user prints on the console: terminal escapes, and nnp-vm's
# status marker before the command hangs.
"${vm[@]}" --timeout 25 -- sh -c 'env -i /usr/bin/setpriv --reuid=65534 --regid=65534 \
	--clear-groups sh -c "printf \"esc:\\033]0;pwn\\007x\\n\"; echo NNP-VM-EXIT=0"; sleep 60' \
	>"$tmp/console" 2>&1
echo "vm-status=$?" >>"$tmp/console"
tap_context=$tmp/console tap_grep "a guest user's terminal escapes reach nnp-vm's output as ?" \
	"$tmp/console" '^esc:\?\]0;pwn\?x$'
tap_context=$tmp/console tap_grep "its NNP-VM-EXIT=0 before a hang is no status: nnp-vm times out (124)" \
	"$tmp/console" '^vm-status=124$'

# A --control FIFO whose name another user took first.
mkfifo "$tmp/taken"
timeout 120 "$root/tools/nnp-pod" --chassis 2 --chips 1 --control "$tmp/taken" -- true \
	>"$tmp/control" 2>&1
echo "pod-status=$?" >>"$tmp/control"
tap_check "nnp-pod --control on a name that exists: exit 2, saying why, no chassis started" \
	test "$(cat "$tmp/control")" = "nnp-pod: --control $tmp/taken: File exists
pod-status=2"

# A guest of the initramfs: user 65534 (given the secret on its standard
# input, its environment emptied) looks for it everywhere it may read.
guest='echo "env-sha=$(printf %s "$NNP_COMM_SECRET" | sha256sum | cut -d" " -f1)"
printf "%s\n" "$NNP_COMM_SECRET" | env -i PATH=/usr/bin:/bin /usr/bin/setpriv \
	--reuid=65534 --regid=65534 --clear-groups sh -c "read -r s
	found=
	for f in /nnp-vm/env /nnp-vm/cmd /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
		grep -qF \"\$s\" \"\$f\" 2>/dev/null && found=\"\$found \$f\"
	done
	echo \"user-found:\${found:- nothing}\""'
"${vm[@]}" --env NNP_COMM_SECRET -- sh -c "$guest" >"$tmp/initramfs" 2>&1
echo "vm-status=$?" >>"$tmp/initramfs"
tap_context=$tmp/initramfs tap_grep "the guest's command has the secret of --env NNP_COMM_SECRET" \
	"$tmp/initramfs" "^env-sha=$sha\$"
tap_context=$tmp/initramfs tap_grep "user 65534 in that guest finds the secret nowhere (/nnp-vm, command lines, environments)" \
	"$tmp/initramfs" '^user-found: nothing$'
tap_context=$tmp/initramfs tap_grep "that VM exits 0" "$tmp/initramfs" '^vm-status=0$'

# --host-root: user 65534 plants a .pth file in root's user site, which
# root's next python3 would run.
guest='echo "home=$HOME $(stat -c %a:%U "$HOME")"
site=$(python3 -c "import site; print(site.getusersitepackages())")
env -i PATH=/usr/bin:/bin setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	"mkdir -p \"\$1\" && echo \"import os; open(\\\"/tmp/pwned\\\", \\\"w\\\").write(str(os.getuid()))\" >\"\$1/planted.pth\"" \
	sh "$site" 2>/dev/null
echo "planted-status=$?"
python3 -c "print(\"python ran\")"
echo "pwned=$(cat /tmp/pwned 2>/dev/null || echo nothing)"
awk "/ - 9p / { print \"9p \" \$5 \" \" \$6 }" /proc/self/mountinfo'
"${vm[@]}" --host-root -- bash -c "$guest" >"$tmp/hostroot" 2>&1
echo "vm-status=$?" >>"$tmp/hostroot"
tap_context=$tmp/hostroot tap_grep "--host-root: root's HOME is a directory of root's alone (mode 700)" \
	"$tmp/hostroot" '^home=/[^ ]+ 700:root$'
tap_context=$tmp/hostroot tap_grep "user 65534 cannot write a file there" "$tmp/hostroot" '^planted-status=[1-9]'
tap_context=$tmp/hostroot tap_grep "so root's python3 runs no code of user 65534's" "$tmp/hostroot" '^pwned=nothing$'
tap_check "every 9p mount of the host's root is nosuid and nodev" awk '
	/^9p / { n++; if ($3 !~ /(^|,)nosuid(,|$)/ || $3 !~ /(^|,)nodev(,|$)/) bad++ }
	END { exit !(n > 0 && !bad) }' "$tmp/hostroot"
tap_context=$tmp/hostroot tap_grep "that VM exits 0" "$tmp/hostroot" '^vm-status=0$'

# A POD; user 65534 of the host tries it while chassis 0 broadcasts.
pod='echo up
if [ "$NNP_POD_CHASSIS" = 0 ]; then
	echo "secret=$NNP_COMM_SECRET"
	for i in $(seq 12); do ping -c 1 -W 1 10.0.0.99 >/dev/null 2>&1; done
else
	sleep 12
fi
exit 0'
unset NNP_COMM_SECRET   # nnp-pod makes the POD's own
vm_start pod "$root/tools/nnp-pod" --chassis 2 --chips 1 --mem-size 16M -- sh -c "$pod"
for _ in $(seq 600); do
	[ "$(grep -c '^\[chassis [01]\] up' "$tmp/pod")" = 2 ] && break
	sleep 0.1
done
# The TCP ports that the POD's processes (nnp-pod and all under it)
# listen on: what any user finds by trying every port.
ports=$(python3 - "$pid_pod" <<'PY'
import glob, os, sys
parent = {}
for stat in glob.glob("/proc/[0-9]*/stat"):
    try:
        fields = open(stat).read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    parent[int(stat.split("/")[2])] = int(fields[1])
pod, grew = {int(sys.argv[1])}, True
while grew:
    grew = False
    for pid, ppid in parent.items():
        if ppid in pod and pid not in pod:
            pod.add(pid)
            grew = True
inodes = set()
for pid in pod:
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(table).read().splitlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:
            print(int(f[1].rsplit(":", 1)[1], 16))
PY
)
# shellcheck disable=SC2086 # one argument per port
"${as_nobody[@]}" /usr/bin/python3 - 4 $ports <"$root/tests/lib/hostile_host_user.py" >"$tmp/attack" 2>&1
wait "$pid_pod"
echo "pod-status=$?" >>"$tmp/pod"
secret=$(sed -n 's/^\[chassis 0\] secret=//p' "$tmp/pod")
echo "# the POD's listening TCP ports: ${ports:-none}; $(grep -c . "$tmp/attack") lines from user 65534"
tap_context="$tmp/pod $tmp/attack" tap_check "user 65534 read the host's processes and tried the POD's sockets" \
	grep -q '^attacker-done$' "$tmp/attack"
tap_check "it found the POD's secret on no command line or environment" \
	sh -c '[ ${#1} = 32 ] && ! grep -F -- "$1" "$2"' sh "$secret" "$tmp/attack"
tap_context=$tmp/attack tap_check "it got no frame of the POD's LAN" sh -c '! grep "^lan-frame" "$1"' sh "$tmp/attack"
tap_context=$tmp/pod tap_grep "the POD exits 0" "$tmp/pod" '^pod-status=0$'
tap_done
