// SPDX-License-Identifier: MIT
/* The Mann-Whitney U test (Wilcoxon rank-sum) of two samples of
 * durations: is one run's instances' time shifted against the other's,
 * beyond the spread of each? Two-sided, with the normal approximation,
 * the correction for ties and the continuity correction, as
 * scipy.stats.mannwhitneyu(x, y, method="asymptotic") computes it. */
#ifndef CT_MWU_H
#define CT_MWU_H

#include <stddef.h>
#include <stdint.h>

/* Below this many values on either side a caller should not make the
 * test (the normal approximation is poor, and few values cannot show
 * much): cuptrace diff says n/a then. */
#define MWU_MIN_N 5

struct mwu {
	double u; /* U of the first sample: pairs (a, b) with a > b, ties half */
	double z; /* its standard score, continuity-corrected (0: no spread) */
	double p; /* two-sided p-value */
};

/* The test of a[0..na) against b[0..nb); -1 (out untouched) when either
 * is empty. Neither array is changed. */
int mwu_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, struct mwu *out);

#endif
