// SPDX-License-Identifier: MIT
/* Per-thread single-producer/single-consumer rings built from fixed-size
 * chunks of one pool that CUPTRACE_BUFFER_MB sizes once. A thread fills its
 * current chunk; when a record does not fit it takes a new chunk from the
 * pool's lock-free free list and links it after the full one. The writer
 * reads each thread's chunks in order and gives drained ones back. So busy
 * threads get more memory, idle ones hold one chunk, and the total never
 * grows. No lock, allocation or system call after a thread's first event.
 */
#ifndef CT_RING_H
#define CT_RING_H

#include "rec.h"
#include "cuptrace/format.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CT_CHUNK_SIZE (128u << 10)
#define CT_REC_MAX (CT_CHUNK_SIZE - 64)

/* Test-only: tests/unit/test_ring.c builds ring.c with CT_RING_TEST_HOOKS
 * and gets a call after every store a producer makes to shared state, so
 * that it can stop the producer there and drain. The library has none. */
enum {
	CT_HOOK_COMMIT,		/* ct_commit: used */
	CT_HOOK_DROP,		/* ct_count_drop: drops[kind] */
	CT_HOOK_GET_TAKE,	/* ct_pool_get: free_top */
	CT_HOOK_GET_USED,	/* ct_pool_get: used = 0 */
	CT_HOOK_GET_SEALED,	/* ct_pool_get: sealed = 0 */
	CT_HOOK_GET_NEXT,	/* ct_pool_get: next = -1 */
	CT_HOOK_GET_GEN,	/* ct_pool_get: gen + 1 */
	CT_HOOK_GET_CONSUMED,	/* ct_pool_get: consumed */
	CT_HOOK_GET_NFREE,	/* ct_pool_get: nfree - 1 */
	CT_HOOK_GET_HIWATER,	/* ct_pool_get: hiwater */
	CT_HOOK_LINK,		/* ct_reserve_slow: next of the full chunk */
	CT_HOOK_SEAL,		/* ct_reserve_slow: sealed of the full chunk */
	CT_HOOK_FIRST,		/* ct_reserve_slow: first */
	CT_HOOK_RESTART_USED,	/* restart_chunk: used = 0 */
	CT_HOOK_RESTART_GEN,	/* restart_chunk: gen + 1 */
	CT_HOOK_N
};
#ifdef CT_RING_TEST_HOOKS
extern void (*ct_ring_hook)(int point);
#define CT_RING_HOOK(point)                                                                        \
	do {                                                                                       \
		if (ct_ring_hook)                                                                  \
			ct_ring_hook(point);                                                       \
	} while (0)
#else
#define CT_RING_HOOK(point) ((void)0)
#endif

struct ct_chunk {
	_Atomic uint32_t used;	 /* bytes committed by the producer */
	_Atomic uint32_t sealed; /* the producer moved on to `next` */
	_Atomic int32_t next;	 /* next chunk of the same thread, -1 none */
	_Atomic uint32_t free_next;
	/* A producer that finds the pool empty may start its current chunk
	 * over once the writer has read all of it: `gen` counts such restarts
	 * (and never goes back, across owners), `consumed` is what the writer
	 * has read, as gen << 32 | bytes. Without this, threads that each hold
	 * one full chunk could starve the pool for good. A restart stores
	 * used = 0 before the new gen, and the writer reads gen, used, gen
	 * (seqlock-style), so that it never counts one generation's `used` in
	 * another's (ring.c, restart_chunk). */
	_Atomic uint32_t gen;
	_Atomic uint64_t consumed;
	char pad[32]; /* one cache line each: producers of different threads */
};

struct ct_pool {
	uint8_t *mem;
	struct ct_chunk *meta;
	uint32_t nchunks;
	_Atomic uint64_t free_top; /* ABA tag << 32 | (index + 1); low 0 = empty */
	_Atomic uint32_t nfree;
	/* One past the highest chunk index ever handed out: chunks are handed
	 * out most recently freed first, so those at and above it were never
	 * touched (ct_pool_prefault). */
	_Atomic uint32_t hiwater;
	uint32_t prefaulted; /* chunks [0, prefaulted) populated: the writer's */
};

/* Called by a producer each time it takes a chunk from the pool (its slow
 * path, once per CT_CHUNK_SIZE bytes): the writer sets it to wake itself,
 * so that drained chunks go back to the pool, and are taken again, while
 * their pages are mapped and in cache. Async-signal-safe. */
extern void (*_Atomic ct_pool_taken_hook)(void);

extern struct ct_pool ct_pool;

int ct_pool_init(size_t bytes);
/* After fork: every chunk free again (the parent's data is the parent's). */
void ct_pool_reset(void);
int32_t ct_pool_get(void);
void ct_pool_put(int32_t idx);
/* The writer: maps the pages of the next `ahead` chunks a producer would
 * take for the first time, so that no recording thread takes a page fault
 * (the pool is reserved, not touched, so that memory follows use). */
void ct_pool_prefault(uint32_t ahead);

static inline uint8_t *ct_chunk_data(int32_t idx)
{
	return ct_pool.mem + (size_t)idx * CT_CHUNK_SIZE;
}

/* Thread states in the registry (thread.c claims and hands back, the
 * writer drains):
 *   FREE -> CLAIMING -> ACTIVE      a new thread takes a slot with no chunk
 *   ACTIVE -> EXITED                its thread exited
 *   EXITED -> CLAIMING -> ACTIVE    a new thread goes on in the exited one's
 *                                   chunk, after a CT_K_THREAD ring record
 *                                   with its tid (the writer reads on)
 *   EXITED -> DRAINING -> FREE      the writer takes the last chunks back
 *                                   (-> EXITED again if it could not) */
enum { CT_T_FREE, CT_T_CLAIMING, CT_T_ACTIVE, CT_T_EXITED, CT_T_DRAINING };

struct ct_thread {
	/* Producer side: only the owning thread writes these. */
	uint8_t *base; /* data of the current chunk */
	uint32_t pos;
	int32_t cur; /* current chunk, -1 none */
	uint32_t cur_gen;
	uint32_t epoch;
	int32_t depth;	    /* NVTX push depth, all domains together */
	int32_t drop_depth; /* > 0: a push at depth drop_depth - 1 was dropped */
	int32_t trigger_depth; /* > 0: the capture range was pushed at depth - 1 */
	_Atomic uint64_t drops[CT_NKINDS];

	/* Consumer side: only the writer thread touches these. */
	int32_t rhead;
	uint32_t rpos;
	uint32_t rgen; /* generation of rhead that rpos counts in */
	uint64_t drops_reported[CT_NKINDS];
	uint64_t drops_base[CT_NKINDS]; /* drops_reported when wtid took over */
	int wtid; /* thread of the records at the read position; -1: tid0 */

	_Atomic int32_t first; /* first chunk, published once for the writer */
	_Atomic int state;
	int tid;
	int tid0; /* tid of the slot's first thread since it was FREE */
	struct ct_thread *next; /* registry list */
};

/* Slow path of ct_reserve: takes a new chunk. NULL when the pool is empty
 * or the record can never fit. */
uint8_t *ct_reserve_slow(struct ct_thread *t, uint32_t size);

static inline uint8_t *ct_reserve(struct ct_thread *t, uint32_t size)
{
	if (__builtin_expect(t->cur >= 0 && t->pos + size <= CT_CHUNK_SIZE, 1))
		return t->base + t->pos;
	return ct_reserve_slow(t, size);
}

static inline void ct_commit(struct ct_thread *t, uint32_t size)
{
	t->pos += size;
	/* Release: pairs with the acquire load of `used` in ct_drain_max, which
	 * then sees the record's bytes. */
	atomic_store_explicit(&ct_pool.meta[t->cur].used, t->pos, memory_order_release);
	CT_RING_HOOK(CT_HOOK_COMMIT);
}

static inline void ct_count_drop(struct ct_thread *t, unsigned kind)
{
	uint64_t v = atomic_load_explicit(&t->drops[kind], memory_order_relaxed);
	atomic_store_explicit(&t->drops[kind], v + 1, memory_order_relaxed);
	CT_RING_HOOK(CT_HOOK_DROP);
}

/* Consumer: hands every committed record of t to fn, and gives drained
 * chunks back. Returns the number of records. When final is set (the
 * thread exited), the current chunk is given back too. fn may write into
 * the record (the writer converts TSC ticks in place): its bytes are the
 * consumer's until the release of `consumed` after fn returns. */
typedef void (*ct_rec_fn)(void *ctx, const struct ct_rec *r);
size_t ct_drain(struct ct_thread *t, ct_rec_fn fn, void *ctx, int final);
/* The same, but stops once it has handed over max_bytes of records (it
 * may go over by one record), so that the caller can write a block in
 * between: a thread that records faster than the writer drains would
 * otherwise keep one drain going, and the block growing, without end.
 * Drained everything when it returns less than max_bytes in *bytes. */
size_t ct_drain_max(struct ct_thread *t, ct_rec_fn fn, void *ctx, int final, size_t max_bytes,
		    size_t *bytes);

#endif
