#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A job asking its chips as a torus (NNP_SHAPE=RxC) under Slurm: in one VM
# of 4 chips wired as a 2x2 torus (two links between each pair of a row
# or a column), the host's Debian Slurm through --host-root, the one-node
# cluster of tests/lib/slurm_node.sh (chips named gpu,
# tools/slurm/nnp-task-prolog as TaskProlog).
#
# In detail (docs/testing.md has the summary): a job of --gres=gpu:4 with
# NNP_SHAPE=2x2 gets the chips row by row (0,1,2,3) and runs an exact
# 1 MiB allreduce on them; with NNP_SHAPE=4x2 (not 4 chips), 2x (no
# columns) or 1x$(id) (as a hostile job would) it is stopped before its
# command runs, exit 1, the reason naming NNP_SHAPE; a job whose chips
# are 1 and 2 of its own 3 (chip 0 held by another job) asked as a 1x2
# torus is stopped, the reason naming the shape; nothing of it ran.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 5

guest='
. tests/lib/slurm_node.sh
slurm_node_start || exit 1
run='"'"'echo "ran vis=$NNP_VISIBLE_DEVICES"; nnptool bench allreduce --min 1M --max 1M --iters 5 --trials 1 | grep "^ *1048576 "'"'"'
NNP_SHAPE=2x2 job T --gres=gpu:4 sh -c "$run"
NNP_SHAPE=4x2 job R --gres=gpu:4 sh -c "$run"
NNP_SHAPE=2x job X --gres=gpu:4 sh -c "$run"
NNP_SHAPE="1x\$(id)" job H --gres=gpu:4 sh -c "$run"
job C --gres=gpu:1 sleep 20 & c=$!
sleep 2
NNP_SHAPE=3x1 job B --gres=gpu:3 sh -c "$run"
scancel -u root; wait
echo "=== end"'
"$root/tools/nnp-vm" --chips 4 --fabric torus:2x2 --mem-size 16M --host-root \
	--lan "listen:unix:$tmp/lan:10.0.0.1/24" -- sh -c "$guest" >"$tmp/out" 2>&1
echo "vm-status=$?" >>"$tmp/out"
tap_context=$tmp/out tap_check "a job of gpu:4 with NNP_SHAPE=2x2 gets the torus row by row, an exact allreduce" \
	sh -c "test \"\$(sed -n 's/^T: //p' '$tmp/out' | awk '/^ran / || /^ *1048576 / { print (\$1 == \"ran\" ? \$2 : \$9 \" \" \$(NF-2)) } /^status=/ { print }' | paste -sd' ' -)\" = 'vis=0,1,2,3 0 0 status=0'"
tap_context=$tmp/out tap_check "NNP_SHAPE 4x2, 2x and 1x\$(id) on 4 chips: stopped, exit 1, the shape named, nothing ran" \
	sh -c "for n in R:4x2 X:2x 'H:1x\$(id)'; do
		out=\$(sed -n \"s/^\${n%%:*}: //p\" '$tmp/out')
		echo \"\$out\" | grep -qxF \"nnp: NNP_SHAPE=\${n#*:} is not ROWSxCOLUMNS of the 4 chips this job asked for\" &&
		echo \"\$out\" | tail -n 1 | grep -qx status=1 &&
		! echo \"\$out\" | grep -q '^ran ' || exit 1
	done"
tap_context=$tmp/out tap_check "chips 1,2,3 asked as a 3x1 torus (a ring of 3 in a 2x2 torus: none): stopped, the shape named" \
	sh -c "sed -n 's/^B: //p' '$tmp/out' | grep -q '^nnp: the 3 chips Slurm gave this job on nnp-vm (1,2,3) form no 3x1 torus of links that are up: ' &&
	sed -n 's/^B: //p' '$tmp/out' | tail -n 1 | grep -qx status=1 &&
	! grep -q '^B: ran ' '$tmp/out'"
tap_context=$tmp/out tap_grep "the node came up" "$tmp/out" '^=== up$'
tap_context=$tmp/out tap_grep "and the VM exits 0" "$tmp/out" '^vm-status=0$'
tap_done
