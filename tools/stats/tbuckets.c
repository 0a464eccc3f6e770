// SPDX-License-Identifier: MIT
/* Time buckets that double their width as time goes on (tbuckets.h). */
#include "stats/tbuckets.h"

#include <string.h>

static void twice(struct tbuckets *t)
{
	unsigned n = (t->n + 1) / 2;
	for (unsigned i = 0; i < n; i++)
		t->v[i] = t->v[2 * i] + (2 * i + 1 < t->n ? t->v[2 * i + 1] : 0);
	memset(t->v + n, 0, (TB_MAX - n) * sizeof *t->v);
	t->n = n;
	t->width *= 2;
}

void tb_widen(struct tbuckets *t, uint64_t width)
{
	if (!t->width) {
		t->width = width;
		return;
	}
	while (t->width < width)
		twice(t);
}

void tb_add(struct tbuckets *t, uint64_t a, uint64_t b)
{
	if (b <= a)
		return;
	if (!t->width)
		t->width = TB_BASE_NS;
	while (b > (uint64_t)TB_MAX * t->width)
		twice(t);
	for (uint64_t i = a / t->width; i * t->width < b; i++) {
		uint64_t lo = i * t->width, hi = lo + t->width;
		lo = a > lo ? a : lo;
		hi = b < hi ? b : hi;
		t->v[i] += hi - lo;
		if (i + 1 > t->n)
			t->n = (unsigned)(i + 1);
	}
}
