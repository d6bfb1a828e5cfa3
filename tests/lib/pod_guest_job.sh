# SPDX-License-Identifier: MIT
# Sourced into the command each chassis of a POD test runs (its text is
# put before the test's own): job NAME [POD_JOB OPTIONS]: one pod_job rank
# a chip of this chassis, all at once; prints "JOB NAME status=S", S the
# ranks' worst (pod_job's: 2 an error, 3 a wrong element).
job() {
	name=$1; shift
	pids=
	for i in $(seq 0 $((NNP_POD_CHIPS - 1))); do
		pod_job "$@" "$name" "$i" & pids="$pids $!"
	done
	st=0
	for p in $pids; do wait "$p"; r=$?; [ "$r" -gt "$st" ] && st=$r; done
	echo "JOB $name status=$st"
}
