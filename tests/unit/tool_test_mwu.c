// SPDX-License-Identifier: MIT
/* The Mann-Whitney U test of cuptrace diff (stats/mwu.c) against known
 * values: scipy's documented example (scipy.stats.mannwhitneyu, method
 * "asymptotic": U = 17, p = 0.11134688653314041), a sample with ties
 * worked by the textbook formulas (average ranks, tie-corrected variance,
 * continuity correction), equal samples (p = 1) and the order of the
 * arguments (U of the other side, the same p). */
#include "check.h"
#include "stats/mwu.h"

#include <math.h>

#define N(a) (sizeof(a) / sizeof *(a))

static void near(double got, double want, double tol, int line)
{
	if (!(fabs(got - want) <= tol)) {
		fprintf(stderr, "%s:%d: %.17g != %.17g\n", __FILE__, line, got, want);
		exit(1);
	}
}

int main(void)
{
	struct mwu r;
	/* scipy's docs: males' and females' ranks of a study */
	const uint64_t male[] = {19, 22, 16, 29, 24}, female[] = {20, 11, 17, 12};
	CHECK(!mwu_test(male, N(male), female, N(female), &r));
	near(r.u, 17, 0, __LINE__);
	near(r.p, 0.11134688653314041, 1e-12, __LINE__);
	CHECK(!mwu_test(female, N(female), male, N(male), &r));
	near(r.u, 20 - 17, 0, __LINE__);
	near(r.p, 0.11134688653314041, 1e-12, __LINE__);
	CHECK(r.z < 0); /* the first sample is the smaller */

	/* ties within and across the samples: U = 11, tie term 180,
	 * sigma = sqrt(8 * 9 / 12 * (18 - 180 / 272)), p = 0.016302008297070 */
	const uint64_t a[] = {1, 2, 2, 3, 3, 3, 4, 5}, b[] = {3, 3, 4, 4, 5, 5, 6, 7, 7};
	CHECK(!mwu_test(a, N(a), b, N(b), &r));
	near(r.u, 11, 0, __LINE__);
	near(r.p, 0.01630200829707018, 1e-12, __LINE__);

	/* no spread at all: nothing to tell apart */
	const uint64_t same[] = {10, 10, 10, 10, 10, 10};
	CHECK(!mwu_test(same, N(same), same, N(same), &r));
	near(r.p, 1, 0, __LINE__);
	/* equal samples with spread: U at its mean, p = 1 */
	const uint64_t s1[] = {1, 2, 3, 4, 5, 6};
	CHECK(!mwu_test(s1, N(s1), s1, N(s1), &r));
	near(r.u, 18, 0, __LINE__);
	near(r.p, 1, 0, __LINE__);
	/* fully apart, 20 against 20: far beyond the noise */
	uint64_t lo[20], hi[20];
	for (int i = 0; i < 20; i++)
		lo[i] = 1000 + (uint64_t)i, hi[i] = 2000 + (uint64_t)i;
	CHECK(!mwu_test(lo, 20, hi, 20, &r));
	near(r.u, 0, 0, __LINE__);
	CHECK(r.p < 1e-6);
	CHECK(mwu_test(lo, 0, hi, 20, &r) == -1);
	puts("mwu: ok");
	return 0;
}
