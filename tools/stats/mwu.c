// SPDX-License-Identifier: MIT
#include "stats/mwu.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>

struct val {
	uint64_t v;
	int first; /* from a */
};

static int cmp_val(const void *x, const void *y)
{
	const struct val *p = x, *q = y;
	return p->v < q->v ? -1 : p->v > q->v;
}

int mwu_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, struct mwu *out)
{
	if (!na || !nb)
		return -1;
	size_t n = na + nb;
	struct val *v = xcalloc(n, sizeof *v);
	for (size_t i = 0; i < na; i++)
		v[i] = (struct val){a[i], 1};
	for (size_t i = 0; i < nb; i++)
		v[na + i] = (struct val){b[i], 0};
	qsort(v, n, sizeof *v, cmp_val);
	/* Ranks from 1, a run of equal values each the mean of its ranks;
	 * tie_sum is the sum of t^3 - t over the runs (t their lengths). */
	double rank_a = 0, tie_sum = 0;
	for (size_t i = 0, j; i < n; i = j) {
		size_t in_a = 0;
		for (j = i; j < n && v[j].v == v[i].v; j++)
			in_a += (size_t)v[j].first;
		double t = (double)(j - i), mid = ((double)i + 1 + (double)j) / 2;
		rank_a += mid * (double)in_a;
		tie_sum += t * t * t - t;
	}
	free(v);
	double n1 = (double)na, n2 = (double)nb, nn = (double)n;
	double u = rank_a - n1 * (n1 + 1) / 2;
	double mu = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((nn + 1) - tie_sum / (nn * (nn - 1)));
	double z = 0, p = 1;
	if (var > 0) {
		/* the continuity correction: half a step of U toward the mean */
		double d = fabs(u - mu) - 0.5;
		z = (d > 0 ? d : 0) / sqrt(var) * (u < mu ? -1 : 1);
		p = erfc(fabs(z) / sqrt(2.0));
		p = p > 1 ? 1 : p;
	}
	*out = (struct mwu){u, z, p};
	return 0;
}
