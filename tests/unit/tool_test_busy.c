// SPDX-License-Identifier: MIT
/* The streamed union of GPU work (stats/busy.c) against a union computed
 * from all the intervals at once: the time of each set of categories, with
 * the intervals fed as the tracer writes them (each CUPTI buffer's GPU
 * records regrouped stream by stream, a stream first seen possibly last in
 * its buffer), and work that comes later than the sweep can wait for:
 * counted as late, never silently. */
#include "stats/busy.h"
#include "check.h"

struct iv {
	uint64_t ts, end;
	unsigned cat, stream;
};

struct tot {
	uint64_t by_mask[8], late_calls;
};

static void on_seg(void *ctx, uint64_t a, uint64_t b, unsigned mask, const struct busy_iv *next)
{
	(void)next;
	struct tot *t = ctx;
	CHECK(b > a && mask < 8);
	t->by_mask[mask] += b - a;
}

struct edge {
	uint64_t t;
	int cat, d; /* d: +1 start, -1 end */
};

static int by_t(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

/* The time of each set of categories, from the first start to the last end. */
static void truth(const struct iv *v, size_t n, uint64_t *by_mask)
{
	struct edge *e = calloc(2 * n, sizeof *e);
	for (size_t i = 0; i < n; i++) {
		e[2 * i] = (struct edge){v[i].ts, (int)v[i].cat, 1};
		e[2 * i + 1] = (struct edge){v[i].end, (int)v[i].cat, -1};
	}
	qsort(e, 2 * n, sizeof *e, by_t);
	int cnt[8] = {0};
	memset(by_mask, 0, 8 * sizeof *by_mask);
	for (size_t i = 0; i + 1 < 2 * n; i++) {
		cnt[e[i].cat] += e[i].d;
		unsigned m = (cnt[1] ? 1u : 0) | (cnt[2] ? 2u : 0) | (cnt[4] ? 4u : 0);
		by_mask[m] += e[i + 1].t - e[i].t;
	}
	free(e);
}

static struct tot feed(const struct iv *v, size_t n, struct busy_late *late)
{
	struct tot t = {0};
	struct busy *b = busy_new(on_seg, &t);
	static const char streams[64];
	for (size_t i = 0; i < n; i++)
		busy_add(b, &streams[v[i].stream], v[i].ts, v[i].end, v[i].cat, 0);
	busy_finish(b);
	*late = busy_late(b);
	busy_free(b);
	return t;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static int by_ts(const void *x, const void *y)
{
	const struct iv *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Random work on `ns` streams (each stream's in start order, overlapping
 * the others'), written in buffers of up to 2048 records, each buffer's
 * records grouped by stream in the order the streams first appear in it. */
static void tracer_order(uint64_t seed, unsigned ns, size_t n)
{
	struct iv *v = calloc(n, sizeof *v), *w = calloc(n, sizeof *w);
	uint64_t s = seed, next[16] = {0};
	static const unsigned cats[] = {BUSY_COMPUTE, BUSY_COMM, BUSY_MEMORY};
	for (size_t i = 0; i < n; i++) {
		/* the last stream is rare: one record in 50, as a communicator's */
		unsigned st = rnd(&s) % 50 == 0 ? ns - 1 : (unsigned)(rnd(&s) % (ns - 1));
		next[st] += rnd(&s) % 3000;
		v[i] = (struct iv){next[st], next[st] + 1 + rnd(&s) % 2500, cats[st % 3], st};
	}
	qsort(v, n, sizeof *v, by_ts);
	size_t k = 0;
	for (size_t a = 0; a < n;) {
		size_t len = 1 + rnd(&s) % 2048, e = a + len < n ? a + len : n;
		unsigned order[16], no = 0;
		for (size_t i = a; i < e; i++) {
			unsigned j = 0;
			while (j < no && order[j] != v[i].stream)
				j++;
			if (j == no)
				order[no++] = v[i].stream;
		}
		for (unsigned j = 0; j < no; j++)
			for (size_t i = a; i < e; i++)
				if (v[i].stream == order[j])
					w[k++] = v[i];
		a = e;
	}
	CHECK_EQ(k, n);
	uint64_t want[8];
	truth(w, n, want);
	struct busy_late late;
	struct tot got = feed(w, n, &late);
	for (unsigned m = 0; m < 8; m++)
		CHECK_EQ(got.by_mask[m], want[m]);
	CHECK_EQ(late.n, 0);
	free(v), free(w);
}

/* Stream 0's work, then one interval of a stream not seen before that
 * starts before all of it: within BUSY_ORDER intervals it is waited for;
 * further away the sweep has passed its start, and it is counted late. */
static void new_stream_after(size_t before, int in_time)
{
	struct iv *v = calloc(before + 1, sizeof *v);
	for (size_t i = 0; i < before; i++)
		v[i] = (struct iv){1000 + 10 * i, 1000 + 10 * i + 5, BUSY_COMPUTE, 0};
	v[before] = (struct iv){100, 1003, BUSY_COMM, 1};
	struct busy_late late;
	struct tot got = feed(v, before + 1, &late);
	uint64_t want[8];
	truth(v, before + 1, want);
	if (in_time) {
		for (unsigned m = 0; m < 8; m++)
			CHECK_EQ(got.by_mask[m], want[m]);
		CHECK_EQ(got.by_mask[BUSY_COMM], 900);
		CHECK_EQ(late.n, 0);
	} else {
		/* the sweep had released the first of stream 0 and stood at a
		 * start of it (past 1003): the whole interval is cut */
		CHECK_EQ(got.by_mask[BUSY_COMM] + got.by_mask[BUSY_COMM | BUSY_COMPUTE], 0);
		CHECK_EQ(late.n, 1);
		CHECK_EQ(late.ns, 903);
		CHECK_EQ(got.by_mask[BUSY_COMPUTE], 5 * before);
	}
	free(v);
}

int main(void)
{
	new_stream_after(BUSY_ORDER - 1, 1);
	new_stream_after(BUSY_ORDER + 200, 0);
	for (uint64_t seed = 1; seed <= 6; seed++)
		tracer_order(seed * 0x9e3779b97f4a7c15ull, 2 + (unsigned)(seed % 5), 60000);
	char note[BUSY_LATE_NOTE];
	busy_late_note(note, sizeof note, (struct busy_late){3, 1234});
	CHECK(strstr(note, "3 GPU operations") && strstr(note, "1234 ns"));
	printf("busy: ok\n");
	return 0;
}
