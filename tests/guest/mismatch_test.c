// SPDX-License-Identifier: MIT
/*
 * Ranks that call one collective differently fail fast (hardware
 * interface 1.16), across every nnp device of the VM, one process driving
 * all (nnp_comm_init_all), under the default 30-minute collective
 * timeout. Run by tests/vm/mismatch.sh on rings of 2, 4 and 8 chips.
 *
 * Each case has rank 1 call an allreduce of int32 sums differently from
 * the others' (in its type, its op, its count, or a broadcast instead),
 * a broadcast from another root (the last rank; on 2 chips two roots that
 * both only send, each failing on the chunk it never reads), or an
 * alltoall of another count (a relay's copy of a chunk carries its
 * lender's call). Every rank's nnp_stream_synchronize() returns within
 * 10 s of the submissions (the root of a broadcast may succeed: its part,
 * sending, can end before it learns); at least one rank returns
 * NNP_ERROR_MISMATCH, and each that does names, in nnp_get_last_error(),
 * its own call and exactly the call of the rank whose chunk it checked,
 * a neighbour on the ring (for the alltoall, any rank whose call differs
 * from its own); every other rank's failure is COMMAND_FAILED,
 * another rank's part failed; each rank's communicator then reports
 * NNP_ERROR_COMM_FAILED. With QEMU's call-check off (only then:
 * unchecked_type_runs), a type mismatch runs to success on every rank.
 */
#include <stdio.h>
#include <string.h>

#include <nnp/nnp.h>

#include "all_devices.h"
#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define COUNT	1000u

enum kind { ALLREDUCE, BROADCAST, ALLTOALL };

/* A call as the ranks make it; rank 1 makes @odd. */
struct call {
	enum kind kind;
	nnp_dtype_t dtype;
	nnp_redop_t op;
	int root;
	size_t count;
};

FIXTURE(mm) {
	struct all_devices d;
};

FIXTURE_SETUP(mm)
{
	const char *why = all_devices_open(&self->d, (size_t)GUEST_CHIPS * COUNT * 8);

	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(mm)
{
	all_devices_close(&self->d);
}

static nnp_result_t issue(struct all_devices *d, int r, const struct call *c)
{
	switch (c->kind) {
	case ALLREDUCE:
		return nnp_allreduce(d->a[r], 0, d->b[r], 0, c->count, c->dtype,
				     c->op, d->comm[r], d->s[r]);
	case BROADCAST:
		return nnp_broadcast(d->a[r], 0, d->b[r], 0, c->count, c->dtype,
				     c->root, d->comm[r], d->s[r]);
	default:
		return nnp_alltoall(d->a[r], 0, d->b[r], 0, c->count, c->dtype,
				    d->comm[r], d->s[r]);
	}
}

/* The call as libnnp names it: "allreduce of 1000 i32, sum", ... */
static void name_call(char *buf, size_t len, const struct call *c, bool count)
{
	static const char *const types[] = {
		[NNP_FLOAT32] = "f32", [NNP_INT32] = "i32",
	};
	static const char *const ops[] = {
		[NNP_SUM] = "sum", [NNP_MAX] = "max",
	};
	char n[24] = "another count";

	if (count)
		snprintf(n, sizeof(n), "%zu", c->count);
	if (c->kind == ALLREDUCE)
		snprintf(buf, len, "allreduce of %s %s, %s", n, types[c->dtype],
			 ops[c->op]);
	else if (c->kind == BROADCAST)
		snprintf(buf, len, "broadcast of %s %s, root %d", n,
			 types[c->dtype], c->root);
	else
		snprintf(buf, len, "alltoall of %s %s", n, types[c->dtype]);
}

/*
 * Whether @err, rank @r's MISMATCH of @n ranks (rank 1 calling @odd, the
 * others @base), names its own call and exactly that of a rank whose
 * chunk it checked and whose call differs: a neighbour on the ring
 * (either: the two-way ring libnnp picks on these fabrics sends both
 * ways, and a chunk is checked as it comes in), or for an alltoall,
 * whose ranks all send to each other, any.
 */
static bool names_peer(const char *err, int n, int r, const struct call *base,
		       const struct call *odd, bool count_differs)
{
	const struct call *own = r == 1 ? odd : base;
	char mine[64], theirs[64], want[256];
	int p;

	name_call(mine, sizeof(mine), own, true);
	for (p = 0; p < n; p++) {
		const struct call *c = p == 1 ? odd : base;

		if (c == own || (base->kind != ALLTOALL && p != (r + n - 1) % n &&
				 p != (r + 1) % n))
			continue;
		name_call(theirs, sizeof(theirs), c, !count_differs);
		snprintf(want, sizeof(want),
			 "the ranks called the collective differently: this rank %s, rank %d %s (status 0x16)",
			 mine, p, theirs);
		if (strstr(err, want))
			return true;
	}
	return false;
}

/*
 * Every rank issues @base's call, rank 1 @odd's, and the ranks fail as
 * the header says; @count_differs: the calls' counts differ.
 */
static void expect_mismatch(struct __test_metadata *_metadata,
			    struct all_devices *d, const struct call *base,
			    const struct call *odd, bool count_differs)
{
	int n = d->n, r, mismatched = 0;
	double t0, last = 0;

	t0 = now_s();
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, issue(d, r, r == 1 ? odd : base))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
	for (r = 0; r < n; r++) {
		nnp_result_t res = nnp_stream_synchronize(d->s[r]), async;

		/* Long before the 30-minute timeout, however loaded the host. */
		last = now_s() - t0;
		EXPECT_GT(10.0, last) TH_LOG("rank %d", r);
		if (res == NNP_ERROR_MISMATCH) {
			mismatched++;
			EXPECT_TRUE(names_peer(nnp_get_last_error(), n, r, base,
					       odd, count_differs))
				TH_LOG("rank %d: %s", r, nnp_get_last_error());
		} else if (!(base->kind == BROADCAST && r == base->root &&
			     res == NNP_SUCCESS)) {
			EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, res);
			EXPECT_NE(NULL, strstr(nnp_get_last_error(),
					       "another rank's part of the collective failed (status 0x15)"))
				TH_LOG("rank %d: %s", r, nnp_get_last_error());
		}
		EXPECT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(d->comm[r], &async));
		EXPECT_EQ(NNP_ERROR_COMM_FAILED, async) TH_LOG("rank %d", r);
	}
	EXPECT_LE(1, mismatched);
	TH_LOG("%d of %d ranks named the mismatch; all had failed in %.3f s",
	       mismatched, n, last);
}

static const struct call sum = { ALLREDUCE, NNP_INT32, NNP_SUM, 0, COUNT };

TEST_F(mm, type_differs)
{
	struct call odd = sum;

	odd.dtype = NNP_FLOAT32;
	expect_mismatch(_metadata, &self->d, &sum, &odd, false);
}

TEST_F(mm, op_differs)
{
	struct call odd = sum;

	odd.op = NNP_MAX;
	expect_mismatch(_metadata, &self->d, &sum, &odd, false);
}

TEST_F(mm, count_differs)
{
	struct call odd = sum;

	odd.count = COUNT + 8;
	expect_mismatch(_metadata, &self->d, &sum, &odd, true);
}

TEST_F(mm, collective_differs)
{
	struct call odd = sum;

	odd.kind = BROADCAST;
	expect_mismatch(_metadata, &self->d, &sum, &odd, false);
}

TEST_F(mm, root_differs)
{
	const struct call base = { BROADCAST, NNP_INT32, NNP_SUM, 0, COUNT };
	struct call odd = base;

	odd.root = self->d.n - 1;
	expect_mismatch(_metadata, &self->d, &base, &odd, false);
}

TEST_F(mm, exchange_count_differs)
{
	const struct call base = { ALLTOALL, NNP_INT32, NNP_SUM, 0, COUNT };
	struct call odd = base;

	odd.count = COUNT / 2;
	expect_mismatch(_metadata, &self->d, &base, &odd, true);
}

/*
 * Only with QEMU's call-check off on every chip (mismatch.sh runs it so,
 * alone): rank 1's allreduce of another type is then not caught, as
 * hardware 1.16 documents: every rank succeeds within 10 s and every
 * communicator stays healthy.
 */
TEST_F(mm, unchecked_type_runs)
{
	int r;
	double t0 = now_s();

	for (r = 0; r < self->d.n; r++)
		ASSERT_EQ(NNP_SUCCESS,
			  nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0, COUNT,
					r == 1 ? NNP_FLOAT32 : NNP_INT32,
					NNP_SUM, self->d.comm[r], self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
	for (r = 0; r < self->d.n; r++) {
		nnp_result_t async;

		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		EXPECT_GT(10.0, now_s() - t0) TH_LOG("rank %d", r);
		EXPECT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->d.comm[r],
								&async));
		EXPECT_EQ(NNP_SUCCESS, async) TH_LOG("rank %d", r);
	}
}

TEST_HARNESS_MAIN
