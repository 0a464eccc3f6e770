// SPDX-License-Identifier: MIT
/* The chunk pool and the per-thread SPSC rings (libtrace/ring.c).
 *
 * Producers write records of varying size (16 B .. 48 KiB, so that the
 * stream keeps moving to new chunks) carrying a producer id, a sequence
 * number and payload bytes derived from both; a consumer thread drains
 * concurrently with ct_drain and checks that every record arrives once, in
 * order and intact, that drops are counted when the pool runs dry, and that
 * every chunk is back in the pool at the end. Runs under ThreadSanitizer
 * too (make SAN=thread test-unit), with smaller counts.
 *
 * Built with CT_RING_TEST_HOOKS (tests/tests.mk): ring.c then calls
 * ct_ring_hook after every store a producer makes to shared state, which
 * test_stop_anywhere uses to stop the producer at each of those points in
 * turn and drain there. */
#include "check.h"
#include "ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 10 /* sanitizers are slow: fewer records */
#else
#define SCALE 1
#endif

#define KIND 16 /* any event kind: only used for drop counters */

static void pool_setup(uint32_t nchunks)
{
	if (ct_pool.mem) {
		munmap(ct_pool.mem, (size_t)ct_pool.nchunks * CT_CHUNK_SIZE);
		munmap(ct_pool.meta, ct_pool.nchunks * sizeof(struct ct_chunk));
		memset(&ct_pool, 0, sizeof ct_pool);
	}
	CHECK_EQ(ct_pool_init((size_t)nchunks * CT_CHUNK_SIZE), 0);
	CHECK_EQ(ct_pool.nchunks, nchunks);
	CHECK_EQ(atomic_load(&ct_pool.nfree), nchunks);
}

static void thread_setup(struct ct_thread *t, int tid)
{
	memset(t, 0, sizeof *t);
	t->cur = -1;
	t->rhead = -1;
	atomic_store(&t->first, -1);
	t->tid = tid;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Record layout: ct_rec header, one word (producer << 56 | seq), then
 * payload words mix(word + i). The size follows from the word, mostly
 * small, one in 64 up to 48 KiB. */
static uint32_t rec_size(uint64_t word)
{
	uint64_t h = mix(word ^ 0x5555);
	if (h % 64 == 0)
		return 16 + 8 * (uint32_t)((h >> 8) % 6144);
	return 16 + 8 * (uint32_t)((h >> 8) % 40);
}

static void fill(struct ct_rec *r, uint64_t word, uint32_t size)
{
	r->size = size;
	r->kind = KIND;
	r->reserved = 0;
	r->f[0] = word;
	for (uint32_t i = 1; i < (size - 8) / 8; i++)
		r->f[i] = mix(word + i);
}

/* The consumer writes into each record it is handed, as the library's
 * writer does (it turns TSC ticks into ns in place): the record is the
 * consumer's until the drain releases `consumed`. A record that comes
 * back with the mark was handed over twice, or the producer reused its
 * bytes while the consumer still wrote (ThreadSanitizer sees that too). */
#define CONSUMED_MARK 0x5a5au

static void mark_consumed(const struct ct_rec *r)
{
	((struct ct_rec *)r)->reserved = CONSUMED_MARK;
}

/* 0 when r is intact. */
static int intact(const struct ct_rec *r)
{
	uint64_t word = r->f[0];
	if (r->size != rec_size(word) || r->kind != KIND || r->reserved == CONSUMED_MARK)
		return -1;
	for (uint32_t i = 1; i < (r->size - 8) / 8; i++)
		if (r->f[i] != mix(word + i))
			return -1;
	return 0;
}

/* Consumer-side bookkeeping: the next sequence number expected from each
 * producer. With drops allowed, sequence numbers may skip but never go
 * back or repeat. */
struct sink {
	uint64_t next[8];
	uint64_t got[8];
	int allow_gaps;
	int bad;
};

static void on_rec(void *ctx, const struct ct_rec *r)
{
	struct sink *s = ctx;
	uint64_t word = r->f[0];
	unsigned p = (unsigned)(word >> 56);
	uint64_t seq = word & ((1ull << 56) - 1);
	if (p >= 8 || intact(r)) {
		fprintf(stderr, "record damaged: producer %u seq %llu size %u\n", p,
			(unsigned long long)seq, r->size);
		s->bad++;
		return;
	}
	if (seq != s->next[p] && !(s->allow_gaps && seq > s->next[p])) {
		fprintf(stderr, "producer %u: got seq %llu, expected %llu\n", p, (unsigned long long)seq,
			(unsigned long long)s->next[p]);
		s->bad++;
	}
	s->next[p] = seq + 1;
	s->got[p]++;
	mark_consumed(r);
}

/* ---- pool */

static void test_pool(void)
{
	enum { N = 8 };
	pool_setup(N);
	int32_t got[N];
	int seen[N] = {0};
	for (int i = 0; i < N; i++) {
		got[i] = ct_pool_get();
		CHECK(got[i] >= 0 && got[i] < N);
		CHECK(!seen[got[i]]);
		seen[got[i]] = 1;
		CHECK_EQ(atomic_load(&ct_pool.nfree), N - 1 - i);
	}
	CHECK_EQ(ct_pool_get(), -1);
	CHECK_EQ(ct_pool_get(), -1);
	CHECK_EQ(atomic_load(&ct_pool.nfree), 0);

	/* A chunk given back is handed out again, reset. */
	struct ct_chunk *c = &ct_pool.meta[got[3]];
	atomic_store(&c->used, 1234);
	atomic_store(&c->sealed, 1);
	atomic_store(&c->next, 5);
	ct_pool_put(got[3]);
	CHECK_EQ(atomic_load(&ct_pool.nfree), 1);
	CHECK_EQ(ct_pool_get(), got[3]);
	CHECK_EQ(atomic_load(&c->used), 0);
	CHECK_EQ(atomic_load(&c->sealed), 0);
	CHECK_EQ(atomic_load(&c->next), -1);
	CHECK_EQ(ct_pool_get(), -1);

	for (int i = 0; i < N; i++)
		ct_pool_put(got[i]);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);
	memset(seen, 0, sizeof seen);
	for (int i = 0; i < N; i++) {
		int32_t x = ct_pool_get();
		CHECK(x >= 0 && x < N && !seen[x]);
		seen[x] = 1;
	}
	CHECK_EQ(ct_pool_get(), -1);
	ct_pool_reset();
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);

	/* ct_pool_init never makes fewer than 2 chunks. */
	pool_setup(2);
	ct_pool_init(0);
	CHECK_EQ(ct_pool.nchunks, 2);
	munmap(ct_pool.mem, 2 * (size_t)CT_CHUNK_SIZE);
	munmap(ct_pool.meta, 2 * sizeof(struct ct_chunk));
	memset(&ct_pool, 0, sizeof ct_pool);
}

/* Several threads take and give back chunks as fast as they can; an owner
 * table catches a chunk handed to two threads at once (the ABA problem of
 * lock-free stacks). */
enum { POOL_N = 6, POOL_THREADS = 4 };
static _Atomic int owner[POOL_N];

static void *pool_worker(void *arg)
{
	int me = (int)(intptr_t)arg + 1;
	int32_t held[3];
	int bad = 0;
	for (int it = 0; it < 200000 / SCALE; it++) {
		int n = 0;
		for (int k = 0; k < 1 + it % 3; k++) {
			int32_t x = ct_pool_get();
			if (x < 0)
				break;
			int expect = 0;
			if (!atomic_compare_exchange_strong(&owner[x], &expect, me))
				bad++;
			held[n++] = x;
			/* The chunk's memory is ours now. */
			memcpy(ct_chunk_data(x), &me, sizeof me);
		}
		for (int k = 0; k < n; k++) {
			int v;
			memcpy(&v, ct_chunk_data(held[k]), sizeof v);
			if (v != me)
				bad++;
			atomic_store(&owner[held[k]], 0);
			ct_pool_put(held[k]);
		}
	}
	return (void *)(intptr_t)bad;
}

static void test_pool_threads(void)
{
	pool_setup(POOL_N);
	pthread_t th[POOL_THREADS];
	for (int i = 0; i < POOL_THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, pool_worker, (void *)(intptr_t)i), 0);
	for (int i = 0; i < POOL_THREADS; i++) {
		void *bad;
		pthread_join(th[i], &bad);
		CHECK_EQ((intptr_t)bad, 0);
	}
	CHECK_EQ(atomic_load(&ct_pool.nfree), POOL_N);
	int seen[POOL_N] = {0};
	for (int i = 0; i < POOL_N; i++) {
		int32_t x = ct_pool_get();
		CHECK(x >= 0 && x < POOL_N && !seen[x]);
		seen[x] = 1;
	}
	CHECK_EQ(ct_pool_get(), -1);
}

/* ---- single-threaded ring behaviour */

static void test_reserve_limits(void)
{
	pool_setup(4);
	struct ct_thread t;
	thread_setup(&t, 1);
	/* Too big for any chunk: refused without taking one. */
	CHECK(ct_reserve(&t, CT_REC_MAX + 8) == NULL);
	CHECK_EQ(atomic_load(&ct_pool.nfree), 4);
	CHECK_EQ(t.cur, -1);
	/* The largest record fits, in a chunk of its own. */
	uint8_t *p = ct_reserve(&t, CT_REC_MAX);
	CHECK(p != NULL);
	fill((struct ct_rec *)p, 7, 16);
	((struct ct_rec *)p)->size = CT_REC_MAX;
	ct_commit(&t, CT_REC_MAX);
	CHECK_EQ(atomic_load(&ct_pool.nfree), 3);
	CHECK_EQ(atomic_load(&t.first), t.cur);
	/* An internal thread (tid < 0) never takes a chunk. */
	struct ct_thread internal;
	thread_setup(&internal, -1);
	CHECK(ct_reserve(&internal, 16) == NULL);
	CHECK_EQ(atomic_load(&ct_pool.nfree), 3);
}

struct counter {
	size_t n;
	uint64_t sum;
};

static void count_rec(void *ctx, const struct ct_rec *r)
{
	struct counter *c = ctx;
	c->n++;
	c->sum += r->f[0];
}

static void put_rec(struct ct_thread *t, uint64_t word, uint32_t size)
{
	uint8_t *p = ct_reserve(t, size);
	CHECK(p != NULL);
	fill((struct ct_rec *)p, word, size);
	ct_commit(t, size);
}

/* A thread that exits: the final drain takes its last records and gives
 * its current chunk back. */
static void test_final_drain(void)
{
	enum { N = 8 };
	pool_setup(N);
	struct ct_thread t;
	thread_setup(&t, 42);
	struct counter c = {0};

	/* Nothing recorded: nothing to do, final or not. */
	CHECK_EQ(ct_drain(&t, count_rec, &c, 0), 0);
	CHECK_EQ(ct_drain(&t, count_rec, &c, 1), 0);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);

	put_rec(&t, 1, 64);
	put_rec(&t, 2, 64);
	CHECK_EQ(ct_drain(&t, count_rec, &c, 0), 2);
	CHECK_EQ(c.sum, 3);
	/* The thread is alive: it keeps its current chunk. */
	CHECK_EQ(atomic_load(&ct_pool.nfree), N - 1);
	CHECK_EQ(ct_drain(&t, count_rec, &c, 0), 0);

	/* Fill three chunks more; the drained full ones come back at once. */
	size_t big = 0;
	for (uint64_t w = 100; atomic_load(&ct_pool.nfree) > N - 4; w++, big++)
		put_rec(&t, w, 32 << 10);
	CHECK_EQ(ct_drain(&t, count_rec, &c, 0), big);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N - 1);

	put_rec(&t, 1000, 24);
	CHECK_EQ(ct_drain(&t, count_rec, &c, 1), 1);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);
	CHECK_EQ(c.n, 3 + big);
}

/* As many recording threads as chunks: every thread holds one chunk and
 * none is free to seal a full one with. Once the writer has read a
 * thread's chunk, the thread starts it over instead of dropping for good;
 * nothing is lost or read twice. */
static void test_restart_when_pool_empty(void)
{
	enum { N = 4, ROUNDS = 5 };
	pool_setup(N);
	struct ct_thread t[N];
	struct counter c = {0};
	uint64_t sent = 0, sum = 0, w = 1;
	for (int i = 0; i < N; i++) {
		thread_setup(&t[i], 10 + i);
		put_rec(&t[i], w, 64);
		sent++, sum += w++;
	}
	CHECK_EQ(atomic_load(&ct_pool.nfree), 0);
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < N; i++) {
			/* fill the chunk to the brim */
			uint8_t *p;
			while ((p = ct_reserve(&t[i], 4096)) && t[i].pos + 4096 <= CT_CHUNK_SIZE) {
				fill((struct ct_rec *)p, w, 4096);
				ct_commit(&t[i], 4096);
				sent++, sum += w++;
			}
			/* Full and not read yet: this one must be dropped. */
			CHECK(t[i].pos + 4096 > CT_CHUNK_SIZE);
			CHECK(ct_reserve(&t[i], 4096) == NULL);
		}
		for (int i = 0; i < N; i++)
			ct_drain(&t[i], count_rec, &c, 0);
		CHECK_EQ(c.n, sent);
		CHECK_EQ(c.sum, sum);
		/* Read: each thread may start its chunk over. */
		for (int i = 0; i < N; i++) {
			put_rec(&t[i], w, 64);
			sent++, sum += w++;
		}
		CHECK_EQ(atomic_load(&ct_pool.nfree), 0);
	}
	for (int i = 0; i < N; i++)
		ct_drain(&t[i], count_rec, &c, 1);
	CHECK_EQ(c.n, sent);
	CHECK_EQ(c.sum, sum);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);
}

/* A producer that keeps ahead of the consumer must not keep ct_drain from
 * returning: the writer has other threads to serve, blocks to write and
 * memory to keep bounded. Here the consumer's callback plays a producer
 * that writes one record for each it is handed, starting three chunks
 * ahead, so there is always a sealed chunk to move on to. */
struct chaser {
	struct ct_thread *t;
	uint64_t seq, handed, limit;
};

static void chase(void *ctx, const struct ct_rec *r)
{
	struct chaser *c = ctx;
	CHECK_EQ(r->size, 4096);
	CHECK_EQ(r->f[0], c->handed);
	CHECK_EQ(r->f[510], mix(c->handed + 510));
	if (++c->handed >= c->limit)
		return; /* unbounded: stop feeding so that the test ends */
	uint8_t *m = ct_reserve(c->t, 4096);
	CHECK(m != NULL);
	fill((struct ct_rec *)m, c->seq++, 4096);
	((struct ct_rec *)m)->size = 4096;
	ct_commit(c->t, 4096);
}

static void test_drain_bounded(void)
{
	enum { N = 8 };
	pool_setup(N);
	struct ct_thread t;
	thread_setup(&t, 43);
	const uint64_t per_chunk = CT_CHUNK_SIZE / 4096;
	struct chaser c = {.t = &t, .limit = 100 * N * per_chunk};
	for (uint64_t i = 0; i < 3 * per_chunk - 1; i++)
		put_rec(&t, c.seq++, 4096);
	size_t n = ct_drain(&t, chase, &c, 0);
	CHECK(c.handed < c.limit);
	CHECK(n <= N * per_chunk);
	CHECK(n >= per_chunk);
	/* The rest comes with later calls, in order and once. */
	while (c.handed < 3 * N * per_chunk)
		CHECK(ct_drain(&t, chase, &c, 0) > 0);
	c.limit = 0;
	ct_drain(&t, chase, &c, 1);
	CHECK_EQ(c.handed, c.seq);
	CHECK_EQ(atomic_load(&ct_pool.nfree), N);
}

/* ---- the producer stopped between any two of its stores
 *
 * One scripted run of three producer threads on a pool of three chunks
 * takes every path of the producer: first chunk, commit, new chunk (link,
 * seal), drop, and the start-over of a fully read chunk when the pool is
 * empty. The ring's hooks and three points of the test's own (record
 * reserved, half written, written but not committed) number the places
 * between two producer stores; for each place in turn the script is run
 * again from scratch, stopped there once for a drain, and let finish. The
 * drains must hand over exactly the committed records, each once, in
 * order and whole: a record reserved but not committed, one of an earlier
 * generation of a restarted chunk, or one handed over before, is an error,
 * and so is a committed one that never arrives. Everything runs on one
 * thread, so each run is one exact interleaving. */
enum { TP_RESERVED = CT_HOOK_N, TP_HALF, TP_FILLED, TP_N };
enum { DET_P = 3, DET_CHUNKS = 3, DET_MAX = 1024 };

struct det {
	struct ct_thread t[DET_P];
	uint64_t seq[DET_P];		   /* next sequence number to write */
	uint32_t size[DET_P][DET_MAX];	   /* size of each record written */
	uint8_t committed[DET_P][DET_MAX]; /* ct_commit reached */
	uint64_t ncommitted[DET_P], dropped[DET_P];
	uint64_t next[DET_P], got[DET_P]; /* consumer side */
	unsigned cur;			  /* producer now writing */
	unsigned long hits[TP_N];	  /* stops by place */
	unsigned long points, inject_at;
	int variant, injected, draining, bad;
};

static struct det *det_now;

/* A record: word (producer << 56 | seq) first, then mix(word + i) in the
 * middle and last words (a 16-byte record has none); the size comes from
 * the writer's table. */
static void det_on_rec(void *ctx, const struct ct_rec *r)
{
	struct det *d = ctx;
	uint64_t word = r->f[0];
	unsigned p = (unsigned)(word >> 56);
	uint64_t seq = word & ((1ull << 56) - 1);
	if (p >= DET_P || seq >= d->seq[p] || !d->committed[p][seq]) {
		fprintf(stderr, "stop %lu/%d: record never committed: producer %u seq %llu\n",
			d->inject_at, d->variant, p, (unsigned long long)seq);
		d->bad++;
		return;
	}
	uint32_t n = (d->size[p][seq] - 8) / 8, mid = n / 2;
	if (r->size != d->size[p][seq] || r->kind != KIND || r->reserved == CONSUMED_MARK ||
	    (mid && r->f[mid] != mix(word + mid)) || (n > 1 && r->f[n - 1] != mix(word + n - 1))) {
		fprintf(stderr, "stop %lu/%d: record torn: producer %u seq %llu\n", d->inject_at,
			d->variant, p, (unsigned long long)seq);
		d->bad++;
	}
	if (seq < d->next[p]) {
		fprintf(stderr, "stop %lu/%d: producer %u: seq %llu again or out of order (next %llu)\n",
			d->inject_at, d->variant, p, (unsigned long long)seq,
			(unsigned long long)d->next[p]);
		d->bad++;
		return;
	}
	d->next[p] = seq + 1;
	d->got[p]++;
	mark_consumed(r);
}

static void det_drain(struct det *d, unsigned p, int final)
{
	d->draining++;
	ct_drain(&d->t[p], det_on_rec, d, final);
	d->draining--;
}

/* Every place between two producer stores comes here. */
static void det_stop(int point)
{
	struct det *d = det_now;
	d->hits[point]++;
	if (d->draining || ++d->points != d->inject_at)
		return;
	d->injected = 1;
	d->draining++;
	if (d->variant == 0) {
		/* the writer's usual pass: every thread, all there is */
		for (unsigned p = 0; p < DET_P; p++)
			ct_drain(&d->t[p], det_on_rec, d, 0);
	} else {
		/* a writer whose block filled up: one record of this thread */
		size_t bytes;
		ct_drain_max(&d->t[d->cur], det_on_rec, d, 0, 1, &bytes);
	}
	d->draining--;
}

static void det_put(struct det *d, unsigned p, uint32_t size)
{
	uint64_t seq = d->seq[p]++;
	CHECK(seq < DET_MAX);
	uint64_t word = (uint64_t)p << 56 | seq;
	d->size[p][seq] = size;
	d->cur = p;
	struct ct_rec *r = (struct ct_rec *)ct_reserve(&d->t[p], size);
	if (!r) {
		d->dropped[p]++;
		ct_count_drop(&d->t[p], KIND);
		return;
	}
	det_stop(TP_RESERVED);
	uint32_t n = (size - 8) / 8, mid = n / 2;
	r->size = size;
	r->kind = KIND;
	r->reserved = 0;
	r->f[0] = word;
	if (mid)
		r->f[mid] = mix(word + mid);
	det_stop(TP_HALF);
	if (n > 1)
		r->f[n - 1] = mix(word + n - 1);
	det_stop(TP_FILLED);
	d->committed[p][seq] = 1;
	d->ncommitted[p]++;
	ct_commit(&d->t[p], size);
}

static uint32_t det_size(unsigned i)
{
	static const uint32_t sizes[] = {4096, 4096, 16, 4096, 24, 40960, 4096, 1000};
	return sizes[i % 8] + (sizes[i % 8] == 1000 ? 8 * (i % 5) : 0);
}

/* Thread 0 does the work; 1 and 2 each take a chunk so that the pool runs
 * empty, and 2 exits halfway so that it has one again. */
static void det_script(struct det *d)
{
	det_put(d, 1, 64); /* a first chunk */
	for (unsigned i = 0; i < 40; i++)
		det_put(d, 0, 4096); /* fills one chunk, seals it for a second */
	det_drain(d, 0, 0);	     /* the first comes back */
	det_put(d, 2, 64);	     /* and is gone again: the pool is empty */
	for (unsigned i = 0; i < 30; i++)
		det_put(d, 0, 4096); /* fills the chunk; then drops: not read */
	det_drain(d, 0, 0);
	for (unsigned i = 0; i < 10; i++)
		det_put(d, 0, 4096); /* read through: starts over */
	for (unsigned r = 0; r < 6; r++) {
		for (unsigned i = 0; i < 24; i++)
			det_put(d, 0, det_size(r * 24 + i));
		if (r < 4) /* read through: the next overflow starts over */
			det_drain(d, 0, 0);
	}
	det_put(d, 2, 64);
	det_drain(d, 2, 1); /* thread 2 exits: its chunk is free */
	for (unsigned i = 0; i < 40; i++)
		det_put(d, 0, det_size(i)); /* seals the restarted chunk */
	det_drain(d, 1, 0);
	for (unsigned i = 0; i < 40; i++)
		det_put(d, 0, 4096);
	/* the producers exit */
	for (unsigned p = 0; p < DET_P; p++)
		det_drain(d, p, 1);
}

static void det_run(struct det *d, int variant, unsigned long inject_at)
{
	memset(d, 0, sizeof *d);
	d->variant = variant;
	d->inject_at = inject_at;
	/* Zeroed memory: a record left by the last run is no record of this
	 * one. (Cheaper than a new mapping, under ThreadSanitizer above all.) */
	if (ct_pool.mem && ct_pool.nchunks == DET_CHUNKS) {
		memset(ct_pool.mem, 0, (size_t)DET_CHUNKS * CT_CHUNK_SIZE);
		ct_pool_reset();
	} else {
		pool_setup(DET_CHUNKS);
	}
	for (unsigned p = 0; p < DET_P; p++)
		thread_setup(&d->t[p], 500 + (int)p);
	det_now = d;
	ct_ring_hook = det_stop;
	det_script(d);
	ct_ring_hook = NULL;
	for (unsigned p = 0; p < DET_P; p++)
		if (d->got[p] != d->ncommitted[p])
			fprintf(stderr, "stop %lu/%d: producer %u: %llu records of %llu arrived\n",
				inject_at, variant, p, (unsigned long long)d->got[p],
				(unsigned long long)d->ncommitted[p]);
	CHECK_EQ(d->bad, 0);
	for (unsigned p = 0; p < DET_P; p++) {
		/* with no record seen twice, counts equal means sets equal */
		CHECK_EQ(d->got[p], d->ncommitted[p]);
		CHECK_EQ(d->ncommitted[p] + d->dropped[p], d->seq[p]);
		CHECK_EQ(atomic_load_explicit(&d->t[p].drops[KIND], memory_order_relaxed),
			 d->dropped[p]);
	}
	CHECK_EQ(atomic_load_explicit(&ct_pool.nfree, memory_order_relaxed), DET_CHUNKS);
}

static void test_stop_anywhere(void)
{
	static struct det d;
	/* Unstopped, the script takes every path of the producer. */
	det_run(&d, 0, 0);
	for (int k = 0; k < TP_N; k++) {
		if (!d.hits[k])
			fprintf(stderr, "the script never reaches stop %d\n", k);
		CHECK(d.hits[k] > 0);
	}
	CHECK(d.hits[CT_HOOK_RESTART_GEN] >= 3);
	CHECK(d.dropped[0] > 0);
	unsigned long runs = 0;
	for (int variant = 0; variant < 2; variant++) {
		for (unsigned long k = 1;; k++, runs++) {
			det_run(&d, variant, k);
			if (!d.injected)
				break; /* past the last place */
		}
	}
	if (getenv("CT_TEST_VERBOSE"))
		fprintf(stderr, "stop anywhere: %lu runs, %lu restarts, %llu drops a run\n", runs,
			d.hits[CT_HOOK_RESTART_GEN], (unsigned long long)d.dropped[0]);
	CHECK(runs > 1000);
}

/* ---- concurrent producers and consumer */

struct producer {
	struct ct_thread t;
	unsigned id;
	uint64_t count;
	int may_drop; /* 0: wait for room; 1: drop when full, and pause now
		       * and then so that the consumer drains in between */
	uint64_t dropped;
	_Atomic int done;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (uint64_t seq = 0; seq < p->count; seq++) {
		if (p->may_drop && seq % 200 == 199) {
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		uint64_t word = (uint64_t)p->id << 56 | seq;
		uint32_t size = rec_size(word);
		uint8_t *m;
		while (!(m = ct_reserve(&p->t, size))) {
			if (p->may_drop) {
				ct_count_drop(&p->t, KIND);
				p->dropped++;
				break;
			}
			sched_yield();
		}
		if (!m)
			continue;
		fill((struct ct_rec *)m, word, size);
		ct_commit(&p->t, size);
	}
	atomic_store_explicit(&p->done, 1, memory_order_release);
	return NULL;
}

static void run(struct producer *ps, unsigned np, uint32_t nchunks, int slow_consumer, struct sink *s)
{
	pool_setup(nchunks);
	pthread_t th[8];
	for (unsigned i = 0; i < np; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, produce, &ps[i]), 0);
	unsigned finished = 0;
	int fin[8] = {0};
	size_t overlapped = 0; /* passes that found records while producers ran */
	while (finished < np) {
		size_t n = 0;
		for (unsigned i = 0; i < np; i++) {
			if (fin[i])
				continue;
			/* Read `done` before draining: a producer seen done has
			 * committed everything, so this drain is its last. */
			int done = atomic_load_explicit(&ps[i].done, memory_order_acquire);
			n += ct_drain(&ps[i].t, on_rec, s, done);
			if (done)
				fin[i] = 1, finished++;
		}
		if (n && finished == 0)
			overlapped++;
		if (slow_consumer) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		} else if (!n) {
			sched_yield();
		}
	}
	for (unsigned i = 0; i < np; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(s->bad, 0);
	CHECK_EQ(atomic_load(&ct_pool.nfree), ct_pool.nchunks);
	/* Not a property of the ring: a check that this test really drained
	 * while producers were writing. */
	CHECK(overlapped >= 2);
}

static void test_one_producer(void)
{
	static struct producer p;
	memset(&p, 0, sizeof p);
	thread_setup(&p.t, 100);
	p.count = 2000000 / SCALE;
	struct sink s = {0};
	run(&p, 1, 8, 0, &s);
	CHECK_EQ(s.got[0], p.count);
	CHECK_EQ(s.next[0], p.count);
	CHECK_EQ(atomic_load(&p.t.drops[KIND]), 0);
}

static void test_drops(void)
{
	static struct producer p;
	memset(&p, 0, sizeof p);
	thread_setup(&p.t, 101);
	p.count = 100000;
	p.may_drop = 1;
	struct sink s = {.allow_gaps = 1};
	run(&p, 1, 2, 1, &s);
	CHECK(p.dropped > 0);
	CHECK(s.got[0] > 0);
	CHECK_EQ(atomic_load(&p.t.drops[KIND]), p.dropped);
	CHECK_EQ(s.got[0] + p.dropped, p.count);
	for (unsigned k = 0; k < CT_NKINDS; k++)
		if (k != KIND)
			CHECK_EQ(atomic_load(&p.t.drops[k]), 0);
}

static void test_four_producers(void)
{
	static struct producer ps[4];
	memset(ps, 0, sizeof ps);
	for (unsigned i = 0; i < 4; i++) {
		thread_setup(&ps[i].t, 200 + (int)i);
		ps[i].id = i;
		ps[i].count = 400000 / SCALE;
	}
	struct sink s = {0};
	run(ps, 4, 16, 0, &s);
	for (unsigned i = 0; i < 4; i++) {
		CHECK_EQ(s.got[i], ps[i].count);
		CHECK_EQ(s.next[i], ps[i].count);
	}

	/* Four droppers on a small pool: each stream stays in order, and
	 * what arrives plus what was dropped is what was written. (The pool
	 * has more chunks than producers: a thread that cannot get a second
	 * chunk can never seal its first one, see the report on ring.c.) */
	memset(ps, 0, sizeof ps);
	for (unsigned i = 0; i < 4; i++) {
		thread_setup(&ps[i].t, 300 + (int)i);
		ps[i].id = i;
		ps[i].count = 50000;
		ps[i].may_drop = 1;
	}
	struct sink s2 = {.allow_gaps = 1};
	run(ps, 4, 6, 1, &s2);
	uint64_t dropped = 0;
	for (unsigned i = 0; i < 4; i++) {
		CHECK_EQ(s2.got[i] + ps[i].dropped, ps[i].count);
		CHECK_EQ(atomic_load(&ps[i].t.drops[KIND]), ps[i].dropped);
		dropped += ps[i].dropped;
	}
	CHECK(dropped > 0);
}

/* Eight droppers on a pool with two chunks to spare: the pool is empty
 * most of the time, so chunks are sealed and handed back, and started over
 * when the pool is dry, all the time. Each stream arrives in order, once
 * and whole, and what arrives plus what was counted dropped is what was
 * written. The hooks count the paths taken, and yield on the way through a
 * restart so that the writer gets to run in between. */
static _Atomic unsigned long stress_hits[CT_HOOK_N];

static void stress_hook(int point)
{
	atomic_fetch_add_explicit(&stress_hits[point], 1, memory_order_relaxed);
	if (point == CT_HOOK_RESTART_USED || point == CT_HOOK_RESTART_GEN)
		sched_yield();
}

/* One round; returns through *restarts and *seals the paths it took. */
static void stress_round(unsigned long *restarts, unsigned long *seals)
{
	enum { NP = 8 };
	static struct producer ps[NP];
	memset(ps, 0, sizeof ps);
	for (unsigned k = 0; k < CT_HOOK_N; k++)
		atomic_store_explicit(&stress_hits[k], 0, memory_order_relaxed);
	for (unsigned i = 0; i < NP; i++) {
		thread_setup(&ps[i].t, 600 + (int)i);
		ps[i].id = i;
		ps[i].count = 400000 / SCALE;
		ps[i].may_drop = 1;
	}
	struct sink s = {.allow_gaps = 1};
	/* set before the threads start, cleared after they are joined */
	ct_ring_hook = stress_hook;
	run(ps, NP, NP + 2, 0, &s);
	ct_ring_hook = NULL;
	uint64_t dropped = 0, got = 0;
	for (unsigned i = 0; i < NP; i++) {
		CHECK_EQ(s.got[i] + ps[i].dropped, ps[i].count);
		CHECK_EQ(atomic_load_explicit(&ps[i].t.drops[KIND], memory_order_relaxed),
			 ps[i].dropped);
		dropped += ps[i].dropped;
		got += s.got[i];
	}
	*restarts += atomic_load_explicit(&stress_hits[CT_HOOK_RESTART_GEN], memory_order_relaxed);
	*seals += atomic_load_explicit(&stress_hits[CT_HOOK_SEAL], memory_order_relaxed);
	if (getenv("CT_TEST_VERBOSE"))
		fprintf(stderr, "stress: %llu delivered, %llu dropped, %lu restarts, %lu seals\n",
			(unsigned long long)got, (unsigned long long)dropped, *restarts, *seals);
	CHECK(dropped > 0);
}

/* Rounds until the restart and seal paths were taken a few times: how
 * often they are depends on the scheduler (under ASan on a busy machine a
 * round may take them only 4 times); what each round delivers is
 * checked whatever it took. */
static void test_stress_exhausted(void)
{
	unsigned long restarts = 0, seals = 0;
	for (int round = 0; round < 20 && (restarts < 5 || seals < 10); round++)
		stress_round(&restarts, &seals);
	CHECK(restarts >= 5);
	CHECK(seals >= 10);
}

int main(void)
{
	test_pool();
	test_pool_threads();
	test_reserve_limits();
	test_final_drain();
	test_restart_when_pool_empty();
	test_drain_bounded();
	test_one_producer();
	test_drops();
	test_four_producers();
	test_stop_anywhere();
	test_stress_exhausted();
	return 0;
}
