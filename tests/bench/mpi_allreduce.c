// SPDX-License-Identifier: MIT
/*
 * The baseline for nnptool bench allreduce: Open MPI's MPI_Allreduce of
 * floats (sum) between the ranks of one machine, host memory to host
 * memory, timed by size in the same columns. Run with mpirun -np N.
 * usage: mpi_allreduce [--min BYTES] [--max BYTES] [--iters N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	size_t min = 8, max = 16u << 20, size;
	int iters = 5, rank, n, i;
	float *in, *out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--min"))
			min = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--max"))
			max = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
	}
	in = malloc(max);
	out = malloc(max);
	if (!in || !out || iters < 1 || min < 4)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (size = 0; size < max / sizeof(float); size++)
		in[size] = (float)((size * 3 + (size_t)rank) % 5);
	if (!rank)
		printf("# mpi_allreduce: %d ranks, float sum, host memory\n"
		       "#       size    count   time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n", n);
	for (size = min; size <= max; size *= 2) {
		size_t count = size / sizeof(float), j;
		long wrong = 0, all = 0;
		double t0, t;

		MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (i = 0; i < iters; i++)
			MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		t = (MPI_Wtime() - t0) / iters;
		MPI_Allreduce(&t, &t0, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		for (j = 0; j < count; j++) {
			size_t k;
			float want = 0;

			for (k = 0; k < (size_t)n; k++)
				want += (float)((j * 3 + k) % 5);
			wrong += out[j] != want;
		}
		MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (!rank)
			printf("%12zu %8zu %10.1f %12.3f %12.3f %7ld\n", size, count, t0 * 1e6,
			       size / t0 / 1e9, size / t0 / 1e9 * 2 * (n - 1) / n, all);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
