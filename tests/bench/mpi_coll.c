// SPDX-License-Identifier: MIT
/*
 * The host baseline of `make bench`: one of Open MPI's collectives of
 * floats between the ranks of one machine, host memory to host memory,
 * timed by size with nnptool bench's sizes, busbw factors and inputs, and
 * checked. Run with mpirun -np N.
 * usage: mpi_coll [--coll allreduce|broadcast|allgather|reduce_scatter|
 *                         alltoall|gather]
 *                 [--min BYTES] [--max BYTES] [--step F] [--iters N]
 *                 [--bytes BYTES] [--trials T]
 * The best of T timings of at most N iterations per size (with --bytes,
 * fewer, to move about BYTES): on a shared machine, the least disturbed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

enum coll { ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER, ALLTOALL, GATHER, NCOLL };

static const char *const coll_name[NCOLL] = {
	"allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall", "gather",
};

struct opts {
	enum coll coll;
	size_t min, max, step, iters, bytes, trials;
};

static float input(int rank, size_t i)
{
	return (float)((i * 3 + (size_t)rank) % 5);
}

/*
 * @count as the collective's count: a rank's part for allgather and RS.
 * Returns where the output is: the root broadcasts its input in place.
 */
static float *coll(enum coll c, int rank, float *in, float *out, int count)
{
	switch (c) {
	case ALLREDUCE:
		MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	case BROADCAST:
		MPI_Bcast(rank ? out : in, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
		return rank ? out : in;
	case ALLGATHER:
		MPI_Allgather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		MPI_Alltoall(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD);
		break;
	case GATHER:
		MPI_Gather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, 0, MPI_COMM_WORLD);
		break;
	default:
		MPI_Reduce_scatter_block(in, out, count, MPI_FLOAT, MPI_SUM,
					 MPI_COMM_WORLD);
	}
	return out;
}

/* Element @i of rank @rank's output. */
static float want(enum coll c, int n, int rank, size_t count, size_t i)
{
	float sum = 0;
	int k;

	if (c == BROADCAST)
		return input(0, i);
	if (c == ALLGATHER || c == GATHER)
		return input((int)(i / count), i % count);
	if (c == ALLTOALL)
		return input((int)(i / count), rank * count + i % count);
	if (c == REDUCE_SCATTER)
		i += rank * count;
	for (k = 0; k < n; k++)
		sum += input(k, i);
	return sum;
}

/* @s as a whole number, or false ("64M" is not 64). */
static bool number(const char *s, size_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return false;
	*v = n;
	return true;
}

/* False, with a message on rank 0, for an option or value it does not know. */
static bool parse(int argc, char **argv, struct opts *o, int rank)
{
	static const char *const names[] = {
		"--min", "--max", "--step", "--iters", "--bytes", "--trials",
	};
	size_t *const values[] = {
		&o->min, &o->max, &o->step, &o->iters, &o->bytes, &o->trials,
	};
	size_t k;
	int i;

	for (i = 1; i < argc; i += 2) {
		if (i + 1 == argc)
			goto bad;
		if (!strcmp(argv[i], "--coll")) {
			for (o->coll = 0; o->coll < NCOLL; o->coll++)
				if (!strcmp(argv[i + 1], coll_name[o->coll]))
					break;
			if (o->coll == NCOLL)
				goto bad;
			continue;
		}
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(argv[i], names[k]))
				break;
		if (k == sizeof(names) / sizeof(names[0]) || !number(argv[i + 1], values[k]))
			goto bad;
	}
	return true;
bad:
	if (!rank)
		fprintf(stderr, "mpi_coll: bad option or value at '%s'\n", argv[i]);
	return false;
}

/* The best of @o->trials timings of @reps collectives: the slowest rank's. */
static double best_time(const struct opts *o, int rank, float *in, float *out,
			int count, size_t reps)
{
	double best = 0, t, t0;
	size_t trial, r;

	for (trial = 0; trial < o->trials; trial++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (r = 0; r < reps; r++)
			coll(o->coll, rank, in, out, count);
		t0 = (MPI_Wtime() - t0) / reps;
		MPI_Allreduce(&t0, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		best = !trial || t < best ? t : best;
	}
	return best;
}

int main(int argc, char **argv)
{
	struct opts o = { ALLREDUCE, 8, 16u << 20, 2, 5, 0, 1 };
	int rank, n, parts;
	float *in, *out, *got;
	size_t size, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (!parse(argc, argv, &o, rank) || o.iters < 1 || o.step < 2 ||
	    o.min < sizeof(float) || o.trials < 1 || o.max < o.min)
		MPI_Abort(MPI_COMM_WORLD, 2);
	in = malloc(o.max);
	out = malloc(o.max);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < o.max / sizeof(float); i++)
		in[i] = input(rank, i);
	parts = o.coll == BROADCAST || o.coll == ALLREDUCE ? 1 : n;
	if (!rank)
		printf("# mpi_coll %s: %d ranks, float, host memory\n"
		       "#       size    count   time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n",
		       coll_name[o.coll], n);
	for (size = o.min; size <= o.max; size *= o.step) {
		size_t count = size / sizeof(float) / parts, bytes = count * parts * sizeof(float);
		size_t out_n = o.coll == ALLGATHER || o.coll == ALLTOALL ||
			       (o.coll == GATHER && !rank) ? count * n :
			       o.coll == GATHER ? 0 : count;
		size_t reps = o.bytes ? o.bytes / size : o.iters;
		double t, bus = o.coll == BROADCAST ? 1 : (double)(n - 1) / n;
		long wrong = 0, all = 0;

		if (!count)
			continue;
		reps = reps > o.iters ? o.iters : reps ? reps : 1;
		bus *= o.coll == ALLREDUCE ? 2 : 1;
		got = coll(o.coll, rank, in, out, (int)count);
		for (i = 0; i < out_n; i++)
			wrong += got[i] != want(o.coll, n, rank, count, i);
		t = best_time(&o, rank, in, out, (int)count, reps);
		MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
		if (!rank)
			printf("%12zu %8zu %10.2f %12.3f %12.3f %7ld\n", bytes,
			       bytes / sizeof(float), t * 1e6, bytes / t / 1e9,
			       bytes / t / 1e9 * bus, all);
		fflush(stdout);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
