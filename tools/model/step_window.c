// SPDX-License-Identifier: MIT
#include "model/step_window.h"

#include <errno.h>
#include <stdlib.h>

int step_range_parse(const char *s, int64_t *lo, int64_t *hi)
{
	char *end;
	errno = 0; /* a number out of range (2^64) was taken as the largest */
	long long a = strtoll(s, &end, 10), b = a;
	if (end == s || a < 0 || errno)
		return -1;
	if (*end == '-') {
		const char *q = end + 1;
		b = strtoll(q, &end, 10);
		if (end == q || errno)
			return -1;
	}
	if (*end || b < a)
		return -1;
	*lo = a;
	*hi = b;
	return 0;
}

uint64_t step_window(struct tfile *t, int64_t lo, int64_t hi, uint64_t *from, uint64_t *to)
{
	uint64_t marks = 0;
	*from = UINT64_MAX, *to = UINT64_MAX;
	uint64_t after = UINT64_MAX; /* start of the first step after hi */
	struct ct_event ev;
	while (ct_file_next(&t->f, &ev) == 1) {
		if (ev.kind != CT_EV_STEP)
			continue;
		marks++;
		int64_t step = (int64_t)ev.v[F_STEP_STEP];
		uint64_t ts = ev.v[F_STEP_TS];
		if (step >= lo && step <= hi && ts < *from)
			*from = ts;
		else if (step > hi && ts < after)
			after = ts;
	}
	if (*from == UINT64_MAX)
		*to = 0; /* empty: no step of the range */
	else
		*to = after;
	return marks;
}

uint64_t event_start(const struct ct_event *ev)
{
	const struct ct_schema *s = ct_schema_of(ev->kind);
	for (unsigned i = 0; s && i < s->nfields; i++)
		if (s->type[i] == CT_F_TS)
			return ev->v[i];
	return 0;
}
