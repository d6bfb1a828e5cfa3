#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/dist_mnist_mlp as a user runs it: `mpirun -np 4` in a VM with 4
# chips on a ring fabric, one process per device, gradients averaged by
# nnp_allreduce device to device. 1024 training images for 3 epochs keep it
# near 20 s under TCG. Checked on the host from its output: a loss
# per epoch, falling; a test accuracy well above chance; the gradients
# really crossed the links (at least 2(n-1) x the buffer per allreduce);
# bit-identical weights on every rank; exit 0. Then a short run on 4 ranks
# and the same on 1 rank must train alike (the same losses to rounding):
# the devices average the shards' gradients into the global batch's.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 7
short='dist_mnist_mlp --train 512 --test 200 --epochs 2'
start=$(date +%s)
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric ring -- sh -c "
	mpirun -np 4 dist_mnist_mlp --train 1024 --test 500 --epochs 3; s=\$?;
	for n in 4 1; do mpirun -np \$n $short >/tmp/np\$n 2>&1; echo np\$n-status=\$? >>/tmp/np\$n;
		sed \"s/^/np\$n: /\" /tmp/np\$n; done; exit \$s" >"$out" 2>&1
echo "vm-status=$?" >>"$out"
echo "# $(($(date +%s) - start)) s in all, boot included"
grep -E '^(dist_mnist_mlp:|epoch |training:|links:|weights:|loss:)' "$out" | sed 's/^/# /'
# On any failure the whole output follows, once.
tap_context=/dev/null
tap_grep "mpirun -np 4 dist_mnist_mlp exits 0" "$out" '^vm-status=0$'
tap_check "a training loss for each of the 3 epochs, the last lower than the first" awk '
	/^epoch [0-9]+\/3: train loss / { loss[++n] = $5 }
	END { exit !(n == 3 && loss[3] + 0 < loss[1] + 0) }' "$out"
tap_check "test accuracy after the last epoch above 50% (chance is 10%)" awk '
	/^epoch 3\/3: / { for (i = 1; i < NF; i++) if ($i == "test") acc = $(i + 4) }
	END { sub(/%/, "", acc); exit !(acc + 0 > 50) }' "$out"
tap_check "gradients crossed the links: at least 2(n-1) x the buffer per allreduce" awk '
	/^links: / { sent = $2; least = $NF; sub(/\)/, "", least) }
	END { exit !(least + 0 > 0 && sent + 0 >= least + 0) }' "$out"
tap_grep "bit-identical weights on all 4 ranks" "$out" '^weights: identical on all 4 ranks'
tap_grep "the program's own verdict: ok" "$out" '^dist_mnist_mlp: ok$'
tap_check "4 ranks and 1 rank, same global batch: the same loss each epoch (within 0.002)" awk '
	/^np[14]: np[14]-status=0$/ { ok[substr($1, 3, 1)] = 1 }
	/^np[14]: epoch [0-9]+\/2: train loss / { loss[$1, $3] = $6 }
	END {
		if (!ok[1] || !ok[4] || !(("np4:", "1/2:") in loss) || !(("np4:", "2/2:") in loss))
			exit 1
		for (e = 1; e <= 2; e++) {
			d = loss["np4:", e "/2:"] - loss["np1:", e "/2:"]
			if (!(("np1:", e "/2:") in loss) || d > 0.002 || d < -0.002)
				exit 1
		}
	}' "$out"
if ! tap_done; then
	sed 's/^/# /' "$out"
	exit 1
fi
