#!/usr/bin/env bash
# Benchmark, not a test: in one VM of N chips on a ring, the devices'
# allreduce (nnptool bench allreduce, device memory over the links) and,
# as baselines in the same run, Open MPI's MPI_Allreduce between N
# processes of the guest (host memory, shared memory transport; its CPU is
# emulated, like the guest's) and between N native processes on this
# machine (what the same CPUs do without emulation). Prints the tables and
# the ratios of bus bandwidths per size.
# usage: tests/bench/allreduce_vs_mpi.sh [CHIPS] [MAX_BYTES]
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-4} max=${2:-16M}
max_bytes=$(numfmt --from=iec "$max") || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$root/tools/nnp-vm" --chips "$n" --mem-size 256M --guest-mem 2048 --fabric ring -- sh -c "
	echo '## device'; nnptool bench allreduce --min 64K --max $max --iters 5
	echo '## mpi'; mpirun -np $n mpi_allreduce --min 65536 --max $max_bytes --iters 5" \
	>"$out" 2>&1 || { cat "$out"; exit 1; }
echo '## host-mpi' >>"$out"
mpirun --allow-run-as-root --oversubscribe -np "$n" --mca btl self,vader \
	"$root/build/tests/guest/mpi_allreduce" --min 65536 --max "$max_bytes" --iters 5 \
	>>"$out" 2>&1 || { cat "$out"; exit 1; }
sed -n '/^## device/,$p' "$out" | grep -v '^\['
python3 - "$out" <<'PY'
import sys
dev, mpi, host, part = {}, {}, {}, None
for line in open(sys.argv[1]):
    if line.startswith("## "):
        part = line.split()[1]
        continue
    f = line.split()
    if not f or not f[0].isdigit():
        continue
    if part == "device" and len(f) >= 8:
        dev[int(f[0])] = float(f[6])        # out-of-place busbw
    elif part in ("mpi", "host-mpi") and len(f) >= 5:
        (mpi if part == "mpi" else host)[int(f[0])] = float(f[4])
print("# busbw (GB/s)      device  guest-mpi  host-mpi  device/guest-mpi  device/host-mpi")
for size in sorted(set(dev) & set(mpi) & set(host)):
    print("%12d %11.3f %10.3f %9.3f %16.2fx %16.2fx" % (size, dev[size], mpi[size], host[size],
          dev[size] / mpi[size], dev[size] / host[size]))
PY
