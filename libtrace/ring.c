// SPDX-License-Identifier: MIT
#include "ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

struct ct_pool ct_pool;
void (*_Atomic ct_pool_taken_hook)(void);

#ifdef CT_RING_TEST_HOOKS
void (*ct_ring_hook)(int point);
#endif

int ct_pool_init(size_t bytes)
{
	uint32_t n = (uint32_t)(bytes / CT_CHUNK_SIZE);
	if (n < 2)
		n = 2;
	/* Pages are touched only as rings fill, so RSS follows use. */
	void *mem = mmap(NULL, (size_t)n * CT_CHUNK_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *meta = mmap(NULL, n * sizeof(struct ct_chunk), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || meta == MAP_FAILED) {
		if (mem != MAP_FAILED)
			munmap(mem, (size_t)n * CT_CHUNK_SIZE);
		if (meta != MAP_FAILED)
			munmap(meta, n * sizeof(struct ct_chunk));
		return -1;
	}
	ct_pool.mem = mem;
	ct_pool.meta = meta;
	ct_pool.nchunks = n;
	ct_pool_reset();
	return 0;
}

void ct_pool_reset(void)
{
	/* Relaxed: one thread runs this (start-up, or the child after fork);
	 * the release CAS of each ct_pool_put below hands the chunks to
	 * ct_pool_get. */
	atomic_store_explicit(&ct_pool.free_top, 0, memory_order_relaxed);
	atomic_store_explicit(&ct_pool.nfree, 0, memory_order_relaxed);
	atomic_store_explicit(&ct_pool.hiwater, 0, memory_order_relaxed);
	ct_pool.prefaulted = 0; /* after fork, the parent's pages are copy-on-write */
	for (int32_t i = (int32_t)ct_pool.nchunks - 1; i >= 0; i--)
		ct_pool_put(i);
}

int32_t ct_pool_get(void)
{
	/* Acquire (here and on the CAS, success or failure): pairs with the
	 * release CAS in ct_pool_put that pushed the chunk on top, so that its
	 * free_next, and everything its last user did with it, is seen.
	 * CASes of other ct_pool_get calls in between continue that release
	 * sequence, so ours needs no release half. */
	uint64_t top = atomic_load_explicit(&ct_pool.free_top, memory_order_acquire);
	for (;;) {
		uint32_t low = (uint32_t)top;
		if (!low)
			return -1;
		int32_t idx = (int32_t)low - 1;
		uint32_t next = atomic_load_explicit(&ct_pool.meta[idx].free_next, memory_order_relaxed);
		uint64_t ntop = (((top >> 32) + 1) << 32) | next;
		if (atomic_compare_exchange_weak_explicit(&ct_pool.free_top, &top, ntop,
							  memory_order_acquire, memory_order_acquire))
			break;
	}
	CT_RING_HOOK(CT_HOOK_GET_TAKE);
	/* Relaxed: no other thread looks at the chunk until the caller links it
	 * in with a release store (`first` or the full chunk's `sealed`). */
	int32_t idx = (int32_t)(uint32_t)top - 1;
	struct ct_chunk *c = &ct_pool.meta[idx];
	atomic_store_explicit(&c->used, 0, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_USED);
	atomic_store_explicit(&c->sealed, 0, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_SEALED);
	atomic_store_explicit(&c->next, -1, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_NEXT);
	uint32_t g = atomic_load_explicit(&c->gen, memory_order_relaxed) + 1;
	atomic_store_explicit(&c->gen, g, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_GEN);
	atomic_store_explicit(&c->consumed, (uint64_t)g << 32, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_CONSUMED);
	atomic_fetch_sub_explicit(&ct_pool.nfree, 1, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_GET_NFREE);
	/* Relaxed: a hint for the writer's prefault, which is safe whatever
	 * it reads. */
	uint32_t hw = atomic_load_explicit(&ct_pool.hiwater, memory_order_relaxed);
	while (hw < (uint32_t)idx + 1 &&
	       !atomic_compare_exchange_weak_explicit(&ct_pool.hiwater, &hw, (uint32_t)idx + 1,
						      memory_order_relaxed, memory_order_relaxed))
		;
	CT_RING_HOOK(CT_HOOK_GET_HIWATER);
	return idx;
}

void ct_pool_prefault(uint32_t ahead)
{
	uint32_t want = atomic_load_explicit(&ct_pool.hiwater, memory_order_relaxed) + ahead;
	if (want > ct_pool.nchunks)
		want = ct_pool.nchunks;
	if (want <= ct_pool.prefaulted)
		return;
	/* MADV_POPULATE_WRITE maps the pages as a write would without writing
	 * to them, so a chunk a producer took meanwhile is left as it is. A
	 * kernel without it (before 5.14) says EINVAL: then never again. */
	uint8_t *from = ct_chunk_data((int32_t)ct_pool.prefaulted);
	size_t len = (size_t)(want - ct_pool.prefaulted) * CT_CHUNK_SIZE;
	if (madvise(from, len, MADV_POPULATE_WRITE) && errno == EINVAL)
		want = ct_pool.nchunks;
	ct_pool.prefaulted = want;
}

void ct_pool_put(int32_t idx)
{
	uint64_t top = atomic_load_explicit(&ct_pool.free_top, memory_order_relaxed);
	for (;;) {
		atomic_store_explicit(&ct_pool.meta[idx].free_next, (uint32_t)top, memory_order_relaxed);
		uint64_t ntop = (((top >> 32) + 1) << 32) | (uint32_t)(idx + 1);
		/* Release: pairs with the acquire load and CAS of free_top in
		 * ct_pool_get; the next owner sees free_next and is ordered
		 * after everything we did with the chunk. */
		if (atomic_compare_exchange_weak_explicit(&ct_pool.free_top, &top, ntop,
							  memory_order_release, memory_order_relaxed))
			break;
	}
	atomic_fetch_add_explicit(&ct_pool.nfree, 1, memory_order_relaxed);
}

/* The pool is empty: reuse the current chunk if the writer has read all of
 * it. `used` goes back to 0 before the generation moves on, as in a
 * seqlock, and the writer reads gen, used, gen (ct_drain_max):
 *  - a writer that sees the new gen sees used = 0 or later (the release
 *    store of gen orders the store of used before it), so it never counts
 *    the old generation's records as the new one's;
 *  - a writer that sees a `used` of the new generation sees the new gen on
 *    its second read, and comes back later;
 *  - a writer that sees the old gen with used = 0 finds nothing to read.
 * The other order (gen first) would let a writer pair the new gen with
 * the old `used`: it would hand the old records out again from offset 0
 * while we write over them, then claim that many bytes of the new
 * generation as read, so that they would be skipped and, once the chunk
 * looks read, overwritten. */
static uint8_t *restart_chunk(struct ct_thread *t)
{
	if (t->cur < 0)
		return NULL;
	struct ct_chunk *c = &ct_pool.meta[t->cur];
	uint64_t want = (uint64_t)t->cur_gen << 32 | t->pos;
	/* Acquire: pairs with the release store of `consumed` in ct_drain_max;
	 * the writer's reads of the records come before our overwriting them. */
	if (atomic_load_explicit(&c->consumed, memory_order_acquire) != want)
		return NULL;
	t->cur_gen++;
	atomic_store_explicit(&c->used, 0, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_RESTART_USED);
	/* Release: pairs with the first (acquire) load of `gen` in
	 * ct_drain_max, so that a writer that sees this generation sees
	 * used = 0 too. */
	atomic_store_explicit(&c->gen, t->cur_gen, memory_order_release);
	CT_RING_HOOK(CT_HOOK_RESTART_GEN);
	t->pos = 0;
	return t->base;
}

uint8_t *ct_reserve_slow(struct ct_thread *t, uint32_t size)
{
	if (size > CT_REC_MAX || !ct_pool.mem || t->tid < 0)
		return NULL;
	int32_t n = ct_pool_get();
	if (n < 0)
		return restart_chunk(t);
	void (*taken)(void) = atomic_load_explicit(&ct_pool_taken_hook, memory_order_relaxed);
	if (taken)
		taken();
	if (t->cur >= 0) {
		struct ct_chunk *c = &ct_pool.meta[t->cur];
		atomic_store_explicit(&c->next, n, memory_order_relaxed);
		CT_RING_HOOK(CT_HOOK_LINK);
		/* Release: pairs with the acquire load of `sealed` in
		 * ct_drain_max; the writer that sees `sealed` sees `next`, the
		 * final `used`, and chunk n as ct_pool_get left it. */
		atomic_store_explicit(&c->sealed, 1, memory_order_release);
		CT_RING_HOOK(CT_HOOK_SEAL);
	} else {
		/* Release: pairs with the acquire load of `first` in
		 * ct_drain_max, which then sees chunk n as ct_pool_get left it. */
		atomic_store_explicit(&t->first, n, memory_order_release);
		CT_RING_HOOK(CT_HOOK_FIRST);
	}
	t->cur = n;
	t->cur_gen = atomic_load_explicit(&ct_pool.meta[n].gen, memory_order_relaxed);
	t->base = ct_chunk_data(n);
	t->pos = 0;
	return t->base;
}

size_t ct_drain(struct ct_thread *t, ct_rec_fn fn, void *ctx, int final)
{
	size_t bytes;
	return ct_drain_max(t, fn, ctx, final, SIZE_MAX, &bytes);
}

size_t ct_drain_max(struct ct_thread *t, ct_rec_fn fn, void *ctx, int final, size_t max_bytes,
		    size_t *bytes)
{
	size_t count = 0;
	*bytes = 0;
	/* A producer that stays ahead would keep a live thread's drain going
	 * forever (the writer could not write blocks, bound its buffer or serve
	 * other threads): take at most a pool's worth of chunks per call. An
	 * exited thread's list is finite and is drained whole. */
	uint32_t budget = ct_pool.nchunks;
	if (t->rhead < 0) {
		/* Acquire: pairs with the release store of `first` in
		 * ct_reserve_slow. */
		t->rhead = atomic_load_explicit(&t->first, memory_order_acquire);
		t->rpos = 0;
		t->rgen = UINT32_MAX;
		if (t->rhead < 0)
			return 0;
	}
	for (;;) {
		struct ct_chunk *c = &ct_pool.meta[t->rhead];
		/* Acquire: pairs with the release store of `sealed` in
		 * ct_reserve_slow (a sealed chunk is never restarted). */
		int sealed = atomic_load_explicit(&c->sealed, memory_order_acquire);
		/* gen, used, gen again (restart_chunk stores used = 0, then
		 * gen): a producer restarting the chunk between the two reads of
		 * gen makes us come back next time.
		 * Acquire: pairs with the release store of `gen` in
		 * restart_chunk: seeing a new generation, we see its used = 0 or
		 * later, never the old generation's `used`. */
		uint32_t g1 = atomic_load_explicit(&c->gen, memory_order_acquire);
		/* Acquire: pairs with the release store of `used` in ct_commit:
		 * the records up to `used` are there to read, and if they are of
		 * a newer generation than g1, that generation's store of `gen`
		 * (before them) is seen by the read of g2. */
		uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
		/* Relaxed: the acquire load above keeps it after the read of
		 * `used`, which is all it needs. */
		uint32_t g2 = atomic_load_explicit(&c->gen, memory_order_relaxed);
		if (g1 != g2)
			return count;
		if (g1 != t->rgen) {
			t->rgen = g1;
			t->rpos = 0;
		}
		const uint8_t *data = ct_chunk_data(t->rhead);
		int full = 0;
		while (t->rpos + 8 <= used) {
			const struct ct_rec *r = (const struct ct_rec *)(data + t->rpos);
			if (r->size < 8 || t->rpos + r->size > used)
				break; /* cannot happen; stop rather than read garbage */
			fn(ctx, r);
			t->rpos += r->size;
			*bytes += r->size;
			count++;
			if (*bytes >= max_bytes) {
				full = 1;
				break;
			}
		}
		/* Release: pairs with the acquire load of `consumed` in
		 * restart_chunk; our reads of the records come before the
		 * producer writes over them. */
		atomic_store_explicit(&c->consumed, (uint64_t)g1 << 32 | t->rpos, memory_order_release);
		if (full)
			return count;
		if (sealed) {
			int32_t next = atomic_load_explicit(&c->next, memory_order_relaxed);
			ct_pool_put(t->rhead);
			t->rhead = next;
			t->rpos = 0;
			t->rgen = UINT32_MAX;
			if (next < 0 || (!final && --budget == 0))
				return count;
			continue;
		}
		if (final) {
			ct_pool_put(t->rhead);
			t->rhead = -1;
			/* so that a later drain cannot pick the chunk up again */
			atomic_store_explicit(&t->first, -1, memory_order_relaxed);
		}
		return count;
	}
}
