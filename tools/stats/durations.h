// SPDX-License-Identifier: MIT
/* Durations by name, for the summary reports (nvtx_sum, the nsys-like GPU
 * reports): every duration is kept so the median is exact. The tables
 * need no sort of them (a selection for the median, integer sums for the
 * standard deviation): with many files, that work would come after the
 * parallel reading, on one core. */
#ifndef CT_DURATIONS_H
#define CT_DURATIONS_H

#include "stats/quant.h"
#include "stats/table.h"
#include "util/hmap.h"
#include "util/pack.h"

#include <stddef.h>
#include <stdint.h>

struct dur_agg {
	char *key;
	const char *style; /* optional extra column (nvtx_sum's Style) */
	uint64_t *d; /* in the order added (the median is selected, not sorted for) */
	size_t n, cap;
	uint64_t total, min, max;
	sumsq_t sumsq; /* for the standard deviation (moments_stddev) */
	size_t next; /* the next aggregate whose key hashes alike, plus 1 */
};

struct durations {
	struct dur_agg *v;
	size_t n, cap;
	struct hmap index; /* key's hash -> its first aggregate, plus 1 */
};

/* Adds one duration under (key, style); style is compared by pointer. */
void dur_add(struct durations *s, const char *key, const char *style, uint64_t d);

/* Appends src's durations to dst's, as if dst had seen them after its
 * own, and frees src's aggregates. */
void dur_merge(struct durations *dst, struct durations *src);

/* Frees s's aggregates (s is empty after). */
void dur_free(struct durations *s);

/* s as bytes (util/pack.h) for another process, and back into an empty
 * s; styles (NULL-terminated) lists every style s may hold (styles are
 * told by pointer, which differs between processes). */
void dur_pack(const struct durations *s, struct pack *b, const char *const *styles);
void dur_unpack(struct durations *s, struct pack *b, const char *const *styles);

/* The table: Time (%), Total Time (ns), <count_col>, Avg, Med, Min, Max,
 * StdDev (ns), [Style,] <name_col>, rows by total time, largest first,
 * each with its durations (table_samples).
 * Time (%) is each row's share of the rows for which in_total says yes
 * (NULL: all), null for the others. Frees the aggregates. */
struct table *dur_table(struct durations *s, const char *title, const char *count_col,
			const char *name_col, int with_style,
			int (*in_total)(const struct dur_agg *a));

#endif
