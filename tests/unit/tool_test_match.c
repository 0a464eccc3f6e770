// SPDX-License-Identifier: MIT
/* The cross-rank matcher (job/nccl_match.h) gives the same collectives
 * whatever order the ranks' arrivals reach it (files read in lockstep hand
 * them over in no fixed order): every permutation of a 3-rank job's
 * arrivals, whose files disagree on the step, hands out the same times,
 * processes and step (the first file's); a collective is handed out as
 * soon as its last rank arrives (the window), the rest at nm_finish. A
 * rank reported twice while its collective is held keeps the lower
 * order's report. */
#include "check.h"
#include "job/nccl_match.h"

#include <stdint.h>

#define NR 3
#define NA 4

struct got {
	int64_t seq, t[NR], who[NR], step;
	int seen;
};

static struct got out[4];
static int nout;

static void on_coll(void *ctx, const struct nm_coll *c)
{
	(void)ctx;
	CHECK(nout < 4);
	struct got *g = &out[nout++];
	g->seq = (int64_t)c->seq;
	for (int i = 0; i < NR; i++)
		g->t[i] = c->t[i], g->who[i] = c->who[i];
	g->step = c->step;
	g->seen = c->seen;
}

/* Seq 1 on every rank (order = the file's index; each file its own idea
 * of the step), seq 2 on rank 0 only. */
static const struct nm_arrival arr[NA] = {
	{7, 1, "world", "AllReduce", NR, 0, 10, 5, 100, 0},
	{7, 1, "world", "AllReduce", NR, 1, 11, 6, 130, 1},
	{7, 1, "world", "AllReduce", NR, 2, 12, 7, 900, 2},
	{7, 2, "world", "AllReduce", NR, 0, 10, 8, 200, 0},
};

static void check_seq1(const struct got *a)
{
	CHECK_EQ(a->seq, 1);
	CHECK_EQ(a->seen, NR);
	CHECK_EQ(a->t[0], 100);
	CHECK_EQ(a->t[1], 130);
	CHECK_EQ(a->who[1], 11);
	CHECK_EQ(a->t[2], 900);
	CHECK_EQ(a->who[2], 12);
	CHECK_EQ(a->step, 5); /* order 0's */
}

int main(void)
{
	int p[NA] = {0, 1, 2, 3}, c[NA] = {0}, perms = 0;
	/* Heap's algorithm, iteratively: every order of the NA arrivals. */
	for (int i = 0;;) {
		nout = 0;
		struct nm *m = nm_new(1000, on_coll, NULL);
		for (int k = 0; k < NA; k++)
			nm_put(m, &arr[p[k]]);
		/* seq 1 went out once its three ranks arrived, before the end */
		CHECK_EQ(nout, 1);
		check_seq1(&out[0]);
		CHECK(nm_peak(m) <= 2);
		CHECK_EQ(nm_finish(m), 1); /* seq 2 lacked ranks */
		CHECK_EQ(nout, 2);
		CHECK_EQ(out[1].seq, 2);
		CHECK_EQ(out[1].seen, 1);
		CHECK_EQ(out[1].t[2], NM_NONE);
		perms++;
		while (i < NA && c[i] >= i)
			c[i++] = 0;
		if (i == NA)
			break;
		int j = i % 2 ? c[i] : 0, tmp = p[j];
		p[j] = p[i], p[i] = tmp;
		c[i]++;
		i = 0;
	}
	CHECK_EQ(perms, 24);

	/* A stray copy of rank 1 (a later file) comes first; the file of order
	 * 1 replaces it while seq 1 is held. */
	nout = 0;
	struct nm *m = nm_new(1000, on_coll, NULL);
	struct nm_arrival copy = arr[1];
	copy.who = 14, copy.t = 999, copy.order = 4, copy.step = 9;
	nm_put(m, &copy);
	nm_put(m, &arr[0]);
	nm_put(m, &arr[1]);
	CHECK_EQ(nout, 0);
	nm_put(m, &arr[2]);
	CHECK_EQ(nout, 1);
	check_seq1(&out[0]);
	CHECK_EQ(nm_finish(m), 0);
	printf("tool_test_match: ok (%d orders)\n", perms);
	return 0;
}
