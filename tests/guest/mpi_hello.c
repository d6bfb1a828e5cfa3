// SPDX-License-Identifier: MIT
/*
 * mpi_hello: the smallest MPI job of the guest, run by tests/vm/mpi_smoke.sh
 * as `mpirun -np N mpi_hello`. Each rank opens nnp device <rank> (one
 * process per device, as training jobs run), prints one line
 *
 *   mpi_hello: rank R of N on HOST, device R chip C
 *
 * (or why it could not open the device), and takes part in an
 * MPI_Allreduce of the ranks and of the chip ids; rank 0 prints both sums.
 * Every rank exits 1 if any rank failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <nnp/nnp.h>

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME];
	struct nnp_device_info info = { .size = sizeof(info) };
	long mine[2], sum[2];
	nnp_device_t *dev;
	int rank, size, len, ok = 1, all_ok;
	nnp_result_t r;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &len);

	r = nnp_device_open(rank, &dev);
	if (r == NNP_SUCCESS) {
		r = nnp_device_get_info(dev, &info);
		nnp_device_close(dev);
	}
	if (r == NNP_SUCCESS) {
		printf("mpi_hello: rank %d of %d on %s, device %d chip %u\n", rank,
		       size, host, rank, info.chip_id);
	} else {
		printf("mpi_hello: rank %d of %d on %s, device %d: %s\n", rank, size,
		       host, rank, nnp_strerror(r));
		ok = 0;
		info.chip_id = 0;
	}
	fflush(stdout);

	mine[0] = rank;
	mine[1] = info.chip_id;
	MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_hello: sum of ranks %ld, sum of chip ids %ld\n", sum[0],
		       sum[1]);
	MPI_Finalize();
	return all_ok ? 0 : 1;
}
