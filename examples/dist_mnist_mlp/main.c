// SPDX-License-Identifier: MIT
/*
 * dist_mnist_mlp: data-parallel training (synchronous SGD) of a small MLP on
 * Fashion-MNIST, one MPI process per nnp device:
 *
 *   mpirun -np 4 dist_mnist_mlp [--epochs 3] [--train 6000] ...
 *
 * Rank r opens device r. Rank 0 makes the job's unique id, MPI broadcasts
 * it, and every rank joins the device communicator with
 * nnp_comm_init_rank(). Each step every rank takes its shard of the global
 * batch, computes its mean gradient on the CPU into a buffer registered
 * with its device, and the devices average the gradients among themselves:
 * a copy into device memory, nnp_allreduce(NNP_AVG) device to device over
 * the inter-chip links, a copy back; then every rank applies the same
 * update. The shard's loss and accuracy ride along at the end of the
 * gradient vector, so the training loop makes no MPI call at all.
 *
 * At the end every rank's weights are compared with rank 0's (bit for bit),
 * and the exit status is non-zero if they differ or the loss did not fall.
 * The test set's totals, the link bytes and that comparison go through the
 * devices too, so MPI carries nothing but the id: a job across the chassis
 * of a POD runs one mpirun on each, NNP_JOB=BASE:N saying that its MPI
 * world is ranks BASE.. of an N-rank job, the id naming the rendezvous at
 * NNP_COMM_ID (tools/nnp-pod sets both).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <nnp/nnp.h>

#include "mlp.h"
#include "mnist.h"

/* Where the data may be: Debian's package, then the guest's subset. */
static const char *const data_dirs[] = {
	"/usr/share/datasets/fashion-mnist",
	"/usr/share/nnp/fashion-mnist",
};

struct opts {
	const char *data;
	int train, test, epochs, batch, hidden;
	float lr;
	uint64_t seed;
};

/* This rank of the job, and this process of the MPI world (device local). */
static int rank, nranks, local, local_n;

/* What every rank's exchanges go through: the gradient's buffers. */
static struct {
	nnp_stream_t *stream;
	nnp_comm_t *comm;
	nnp_mem_t *host, *dev;	/* buf, registered; its device copy */
	float *buf;
} job;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mpirun -np N dist_mnist_mlp [OPTIONS]\n"
		"  --data DIR     Fashion-MNIST IDX files (default: %s, else %s)\n"
		"  --train N      training images to use, the first N (default: all)\n"
		"  --test N       test images to evaluate on (default: all)\n"
		"  --epochs N     passes over the training images (default 3)\n"
		"  --batch N      global batch, a multiple of the ranks (default 64)\n"
		"  --hidden N     hidden units (default 64)\n"
		"  --lr X         learning rate of plain SGD (default 0.1)\n"
		"  --seed N       initial weights and shuffling (default 1)\n"
		"Rank r uses nnp device r. With NNP_JOB=BASE:N the MPI world is ranks\n"
		"BASE.. of an N-rank job across machines (its rendezvous at NNP_COMM_ID).\n",
		data_dirs[0], data_dirs[1]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fatal on this rank: say why and end the whole job (peers may be waiting). */
static void die(const char *what, const char *why)
{
	fprintf(stderr, "dist_mnist_mlp: rank %d: %s: %s\n", rank, what, why);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void check(nnp_result_t r, const char *what)
{
	if (r != NNP_SUCCESS)
		die(what, nnp_strerror(r));
}

static int parse_int(const char *s, int min, const char *name)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < min || v > 1000000000) {
		if (rank == 0)
			fprintf(stderr, "dist_mnist_mlp: bad %s '%s'\n", name, s);
		MPI_Finalize();
		exit(2);
	}
	return (int)v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "train", required_argument, NULL, 't' },
		{ "test", required_argument, NULL, 'T' },
		{ "epochs", required_argument, NULL, 'e' },
		{ "batch", required_argument, NULL, 'b' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "lr", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*o = (struct opts){ .epochs = 3, .batch = 64, .hidden = 64, .lr = 0.1f, .seed = 1 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->data = optarg; break;
		case 't': o->train = parse_int(optarg, 1, "--train"); break;
		case 'T': o->test = parse_int(optarg, 1, "--test"); break;
		case 'e': o->epochs = parse_int(optarg, 1, "--epochs"); break;
		case 'b': o->batch = parse_int(optarg, 1, "--batch"); break;
		case 'H': o->hidden = parse_int(optarg, 1, "--hidden"); break;
		case 's': o->seed = (uint64_t)parse_int(optarg, 0, "--seed"); break;
		case 'l':
			o->lr = strtof(optarg, &end);
			if (*end == '\0' && o->lr > 0)
				break;
			/* fall through */
		default:
			if (rank == 0)
				usage(stderr);
			MPI_Finalize();
			exit(2);
		case 'h':
			if (rank == 0)
				usage(stdout);
			MPI_Finalize();
			exit(0);
		}
	}
	if (optind != argc || o->batch % nranks != 0) {
		if (rank == 0) {
			if (optind != argc)
				usage(stderr);
			else
				fprintf(stderr, "dist_mnist_mlp: --batch %d is not a multiple of %d ranks\n",
					o->batch, nranks);
		}
		MPI_Finalize();
		exit(2);
	}
	if (!o->data) {
		char path[4096];
		size_t i;

		o->data = data_dirs[0];
		for (i = 0; i < sizeof(data_dirs) / sizeof(data_dirs[0]); i++) {
			snprintf(path, sizeof(path), "%s/train-images-idx3-ubyte.gz",
				 data_dirs[i]);
			if (access(path, R_OK) == 0) {
				o->data = data_dirs[i];
				break;
			}
		}
	}
}

/* The same permutation of 0..n-1 on every rank: Fisher-Yates from @seed. */
static void shuffle(int *perm, int n, uint64_t seed)
{
	uint64_t state = seed * 0xd1342543de82ef95ull + 0x9e3779b97f4a7c15ull;
	int i;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		int j = (int)(mlp_rand(&state) % (uint64_t)(i + 1));
		int t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Bytes this rank's chip has sent over its inter-chip links so far. */
static uint64_t link_tx_bytes(nnp_device_t *dev)
{
	struct nnp_port_info ports[NNP_MAX_PORTS] = { { .size = sizeof(ports[0]) } };
	unsigned int n = 0, i;
	uint64_t tx = 0;

	check(nnp_device_get_ports(dev, ports, NNP_MAX_PORTS, &n), "nnp_device_get_ports");
	for (i = 0; i < n && i < NNP_MAX_PORTS; i++)
		tx += ports[i].tx_bytes;
	return tx;
}

/*
 * The first @n elements of @type in job.buf, combined by the devices over
 * every rank: reduced by @op, in place, or rank 0's everywhere (@op -1).
 */
static void on_devices(size_t n, nnp_dtype_t type, int op, const char *what)
{
	size_t bytes = n * (type == NNP_FLOAT64 ? 8 : 4);

	check(nnp_memcpy_async(job.stream, job.dev, 0, job.host, 0, bytes), "copy to device");
	if (op < 0)
		check(nnp_broadcast(job.dev, 0, job.dev, 0, n, type, 0, job.comm, job.stream),
		      "nnp_broadcast");
	else
		check(nnp_allreduce(job.dev, 0, job.dev, 0, n, type, (nnp_redop_t)op, job.comm,
				    job.stream), "nnp_allreduce");
	check(nnp_memcpy_async(job.stream, job.host, 0, job.dev, 0, bytes), "copy to host");
	check(nnp_stream_synchronize(job.stream), what);
}

/* @n doubles summed over every rank, into @v on every rank. */
static void job_sum(double *v, size_t n, const char *what)
{
	memcpy(job.buf, v, n * sizeof(*v));
	on_devices(n, NNP_FLOAT64, NNP_SUM, what);
	memcpy(v, job.buf, n * sizeof(*v));
}

/* FNV-1a over the bytes of @n floats. */
static uint64_t fnv1a(const float *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n * sizeof(float); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int main(int argc, char **argv)
{
	struct mnist train, test;
	struct opts o;
	struct mlp m;
	char err[4352];
	nnp_device_t *dev;
	nnp_unique_id_t id;
	const char *in_job = getenv("NNP_JOB");
	float *params, *grad = NULL;
	void *buf;
	double *epoch_loss, t_start, t_ar = 0, t_wait = 0, tx[1], differ[1];
	size_t count, bytes;
	int *perm, ndev, per_rank, steps, epoch, status = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &local);
	MPI_Comm_size(MPI_COMM_WORLD, &local_n);
	rank = local;
	nranks = local_n;
	if (in_job) {
		if (sscanf(in_job, "%d:%d", &rank, &nranks) != 2 || rank < 0 ||
		    rank + local_n > nranks)
			die("NNP_JOB", "not BASE:N with this MPI world inside ranks 0..N-1");
		if (!getenv("NNP_COMM_ID"))
			die("NNP_JOB", "a job across machines needs its rendezvous in NNP_COMM_ID");
		rank += local;
	}
	parse(argc, argv, &o);
	per_rank = o.batch / nranks;

	/* Every rank reads the data set; shards are chosen by index. */
	if (mnist_load(&train, o.data, "train", o.train, err, sizeof(err)) < 0 ||
	    mnist_load(&test, o.data, "t10k", o.test, err, sizeof(err)) < 0)
		die("data", err);
	steps = train.n / o.batch;
	if (steps < 1 || test.n < nranks)
		die("data", "fewer training images than one batch, or test images than ranks");

	/* One device per rank, and a communicator of the devices. */
	check(nnp_device_count(&ndev), "nnp_device_count");
	if (ndev < local_n) {
		snprintf(err, sizeof(err), "%d devices for %d ranks", ndev, local_n);
		die("devices", err);
	}
	check(nnp_device_open(local, &dev), "nnp_device_open");
	check(nnp_stream_create(dev, &job.stream), "nnp_stream_create");
	if (local == 0)
		check(nnp_get_unique_id(&id), "nnp_get_unique_id");
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	check(nnp_comm_init_rank(&job.comm, nranks, &id, rank, dev), "nnp_comm_init_rank");

	/*
	 * The gradient, then the shard's mean loss and accuracy: one vector,
	 * in a page-aligned buffer the device reads and writes directly.
	 */
	if (mlp_init(&m, o.hidden) < 0)
		die("mlp", "out of memory");
	count = m.nparams + 2;
	bytes = (count * sizeof(float) + 4095) & ~(size_t)4095;
	params = malloc(m.nparams * sizeof(float));
	perm = malloc((size_t)train.n * sizeof(int));
	epoch_loss = calloc((size_t)o.epochs, sizeof(double));
	if (posix_memalign(&buf, 4096, bytes) == 0)
		grad = buf;
	if (!params || !perm || !epoch_loss || !grad)
		die("memory", "out of memory");
	memset(grad, 0, bytes);
	job.buf = grad;
	check(nnp_mem_register(dev, grad, bytes, 0, &job.host), "nnp_mem_register");
	check(nnp_mem_alloc(dev, NNP_MEM_DEVICE, bytes, 0, &job.dev), "nnp_mem_alloc");
	mlp_init_params(&m, params, o.seed);

	if (rank == 0) {
		printf("dist_mnist_mlp: %d ranks, %d training / %d test images from %s\n",
		       nranks, train.n, test.n, o.data);
		printf("dist_mnist_mlp: MLP %d-%d-%d (%zu parameters), global batch %d (%d per rank), "
		       "%d steps per epoch, lr %g, %d epochs, seed %" PRIu64 "\n",
		       MNIST_PIXELS, o.hidden, MNIST_CLASSES, m.nparams, o.batch, per_rank,
		       steps, (double)o.lr, o.epochs, o.seed);
		fflush(stdout);
	}

	t_start = now_s();
	tx[0] = (double)link_tx_bytes(dev);
	for (epoch = 0; epoch < o.epochs; epoch++) {
		double t0 = now_s(), train_loss = 0, train_acc = 0, total[2];
		int step, correct;

		shuffle(perm, train.n, o.seed << 20 | (uint64_t)epoch);
		for (step = 0; step < steps; step++) {
			const int *mine = perm + (size_t)step * o.batch + (size_t)rank * per_rank;
			double t1;

			grad[m.nparams] = (float)(mlp_grad(&m, params, grad, &train, mine,
							   per_rank, &correct) / per_rank);
			grad[m.nparams + 1] = (float)correct / (float)per_rank;

			/*
			 * Average over the ranks, device to device, once the
			 * slowest rank of this MPI world is there: the wait for
			 * it is timed apart (with ranks sharing CPUs it is most
			 * of a step's communication), so that t_ar is the
			 * allreduce's own (and another machine's ranks').
			 */
			t1 = now_s();
			MPI_Barrier(MPI_COMM_WORLD);
			t_wait += now_s() - t1;
			t1 = now_s();
			on_devices(count, NNP_FLOAT32, NNP_AVG, "allreduce step");
			t_ar += now_s() - t1;

			mlp_sgd(&m, params, grad, o.lr);
			train_loss += grad[m.nparams];
			train_acc += grad[m.nparams + 1];
		}
		epoch_loss[epoch] = train_loss / steps;

		/* Test set: each rank a slice, the sums on every rank. */
		{
			int first = (int)((long)test.n * rank / nranks);
			int n = (int)((long)test.n * (rank + 1) / nranks) - first;

			total[0] = mlp_eval(&m, params, &test, first, n, &correct);
			total[1] = correct;
		}
		job_sum(total, 2, "test set totals");
		if (rank == 0) {
			printf("epoch %d/%d: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% | %.1f s\n",
			       epoch + 1, o.epochs, epoch_loss[epoch],
			       100 * train_acc / steps, total[0] / test.n,
			       100 * total[1] / test.n, now_s() - t0);
			fflush(stdout);
		}
	}

	/* What the chips sent each other: a ring sends 2(n-1)/n of the buffer per rank. */
	tx[0] = (double)link_tx_bytes(dev) - tx[0];
	job_sum(tx, 1, "link bytes");

	/* Every rank's weights, bit for bit, against rank 0's. */
	memcpy(grad, params, m.nparams * sizeof(float));
	on_devices(m.nparams, NNP_FLOAT32, -1, "weights of rank 0");
	differ[0] = memcmp(grad, params, m.nparams * sizeof(float)) != 0;
	if (differ[0])
		fprintf(stderr, "dist_mnist_mlp: rank %d: weights differ from rank 0's\n", rank);
	job_sum(differ, 1, "ranks whose weights differ");
	if (rank == 0) {
		double t = now_s() - t_start;

		printf("training: %.1f s, of which %.1f s in %d device allreduces of %zu floats "
		       "(%.2f ms each, with the copies) and %.1f s waiting for the slowest rank\n",
		       t, t_ar, steps * o.epochs, count, 1e3 * t_ar / (steps * o.epochs), t_wait);
		printf("links: %" PRIu64 " bytes sent chip to chip (the allreduces' least, "
		       "2(n-1) x the buffer each: %" PRIu64 ")\n",
		       (uint64_t)tx[0], (uint64_t)2 * (uint64_t)(nranks - 1) * count * sizeof(float) *
		       (uint64_t)steps * (uint64_t)o.epochs);
		if (differ[0])
			printf("weights: differ from rank 0's on %d of %d ranks\n", (int)differ[0],
			       nranks);
		else
			printf("weights: identical on all %d ranks (fnv1a %016" PRIx64 ")\n",
			       nranks, fnv1a(params, m.nparams));
		if (o.epochs < 2)
			printf("loss: %.4f (one epoch: nothing to compare)\n", epoch_loss[0]);
		else
			printf("loss: %.4f -> %.4f, %s\n", epoch_loss[0],
			       epoch_loss[o.epochs - 1],
			       epoch_loss[o.epochs - 1] < epoch_loss[0] ? "fell" : "DID NOT FALL");
	}
	if (differ[0] || (o.epochs >= 2 && !(epoch_loss[o.epochs - 1] < epoch_loss[0])))
		status = 1;
	if (rank == 0)
		printf("dist_mnist_mlp: %s\n", status ? "FAILED" : "ok");

	nnp_mem_free(job.dev);
	nnp_mem_free(job.host);
	nnp_comm_destroy(job.comm);
	nnp_stream_destroy(job.stream);
	nnp_device_close(dev);
	free(grad);
	free(epoch_loss);
	free(perm);
	free(params);
	mlp_free(&m);
	mnist_free(&test);
	mnist_free(&train);
	MPI_Finalize();
	return status;
}
