#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench's Open MPI baseline program (tests/bench/mpi_coll), on the
# host under mpirun -np 2: each collective over 64-256 bytes prints one
# row per size with 0 wrong elements; a value with a suffix ("64M" is not
# 64 MiB), an option it does not know, a missing value and an unknown
# collective each stop the job (mpirun fails) with a message naming the
# argument, rather than a benchmark of something else.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
colls="allreduce broadcast allgather reduce_scatter alltoall gather"
tap_plan 10

run() { timeout 60 mpirun -np 2 --oversubscribe "$root/build/bench/mpi_coll" "$@"; }

for c in $colls; do
	run --coll "$c" --min 64 --max 256 >"$tmp/out" 2>&1
	echo "status=$?" >>"$tmp/out"
	# Rows: size count time algbw busbw #wrong.
	tap_context=$tmp/out tap_check "$c: exit 0, rows for 64, 128 and 256 bytes, none wrong" sh -c "
		grep -qx 'status=0' '$tmp/out' &&
		test \"\$(awk '!/^#/ && NF == 6 && \$6 == 0 { print \$1 }' '$tmp/out' | tr '\n' ' ')\" = '64 128 256 '"
done

# refuses WHAT ARGS...: mpirun fails and rank 0 names WHAT.
refuses() {
	local what=$1
	shift
	run "$@" >"$tmp/bad" 2>&1
	echo "status=$?" >>"$tmp/bad"
	! grep -qx 'status=0' "$tmp/bad" &&
		grep -qxF "mpi_coll: bad option or value at '$what'" "$tmp/bad"
}
tap_context=$tmp/bad tap_check "--max 64M refused, naming --max" refuses --max --max 64M
tap_context=$tmp/bad tap_check "an unknown option refused, naming it" refuses --size --size 64
tap_context=$tmp/bad tap_check "a missing value refused, naming the option" refuses --iters --min 64 --iters
tap_context=$tmp/bad tap_check "an unknown collective refused, naming --coll" refuses --coll --coll allreduse
tap_done
