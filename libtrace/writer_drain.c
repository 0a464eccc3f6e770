// SPDX-License-Identifier: MIT
/* The writer's pass over the rings: every thread's records into the block,
 * their TSC stamps made nanoseconds, its drops reported, the hang watchdog
 * shown the NCCL and MPI records. */
#include "writer_int.h"
#include "clock.h"
#include "defs.h"
#include "log.h"
#include "ring.h"
#include "thread.h"
#include "tnames.h"
#include "watchdog.h"

#include <string.h>

#define BLOCK_TARGET (1u << 20)
/* Ring bytes drained between checks of the block size. Encoded records
 * are smaller than ring records (strings become references), so a block
 * stays near BLOCK_TARGET and far below CT_BLOCK_RAW_MAX, which readers
 * reject beyond. */
#define DRAIN_STEP (1u << 20)
#define ANCHOR_NS 20000000ull

/* Drops of the slot's thread since the last report: DROPS items carry the
 * current thread's own cumulative count. */
static void report_drops(struct ct_thread *t)
{
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		uint64_t d = atomic_load_explicit(&t->drops[k], memory_order_relaxed);
		if (d != t->drops_reported[k]) {
			ct_wr.drops[k] += d - t->drops_reported[k];
			t->drops_reported[k] = d;
			ct_enc_drops(&ct_wr.enc, k, d - t->drops_base[k]);
		}
	}
}

/* A thread took the slot over from one that exited (thread.c): its
 * records follow. Drops counted so far go to the one before (the split
 * is as of now, not exact). */
static void new_owner(struct ct_thread *t, int tid)
{
	report_drops(t);
	memcpy(t->drops_base, t->drops_reported, sizeof t->drops_base);
	t->wtid = tid;
	ct_enc_thread(&ct_wr.enc, tid);
}

/* A definition made before a record was written is visible by the time the
 * writer reads that record, so fetching pending definitions first puts
 * every definition ahead of the records that use it. */
static void on_record(void *ctx, const struct ct_rec *r)
{
	if (r->reserved & CT_REC_TICKS) {
		/* In place, before anything reads it: the record is ours until
		 * ct_drain_max's release of `consumed` hands the chunk back. */
		struct ct_rec *w = (struct ct_rec *)r;
		w->f[F_TS] = ct_tickmap_ns(&ct_wr.map, w->f[F_TS]);
		for (uint32_t m = r->kind < CT_NKINDS ? ct_wr.more_ts[r->kind] : 0; m; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctz(m);
			w->f[i] = ct_tickmap_ns(&ct_wr.map, w->f[i]);
		}
	}
	if (r->kind == CT_K_THREAD) {
		new_owner(ctx, (int)r->f[0]);
		return;
	}
	if (ct_defs_pending())
		ct_defs_drain(&ct_wr_defs_sink);
	if (r->kind == CT_EV_THREAD_NAME)
		ct_tnames_keep(ct_wr.enc.tid, r);
	if (ct_wr.watch && ((r->kind >= CT_EV_NCCL_FIRST && r->kind < CT_EV_NCCL_END) ||
	                    (r->kind >= CT_EV_MPI_CALL && r->kind <= CT_EV_MPI_DONE)))
		ct_watch_record((int)ct_wr.enc.tid, r);
	ct_wr_encode(r);
}

void ct_wr_ts_fields(void)
{
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		ct_wr.more_ts[k] = 0;
		for (unsigned i = 1; s && i < s->nfields; i++)
			if (s->type[i] == CT_F_TS)
				ct_wr.more_ts[k] |= 1u << i;
	}
}

/* A (tick, ns) anchor for the map before a pass: the records this pass
 * takes were mostly stamped before it, and are interpolated. */
void ct_wr_anchor(int force)
{
	if (!ct_tick_flag)
		return;
	uint64_t tick, ns;
	ct_clock_pair(&tick, &ns);
	if (force || ct_tickmap_due(&ct_wr.map, tick, ns, ANCHOR_NS)) {
		int64_t j = ct_tickmap_anchor(&ct_wr.map, tick, ns);
		if (j)
			ct_debug("the TSC ran %.3f s %s CLOCK_MONOTONIC since the last anchor "
				 "(a suspend?): timestamps step there",
				 (double)(j < 0 ? -j : j) / 1e9, j > 0 ? "ahead of" : "behind");
	}
}

/* One pass over every thread. Returns the number of records taken. */
size_t ct_wr_cycle(void)
{
	size_t n = 0;
	ct_defs_drain(&ct_wr_defs_sink);
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		/* An exited thread's last chunks come back to the pool, unless
		 * a new thread took the slot over first (then it is ACTIVE or
		 * CLAIMING, and read on as a live one). */
		if (st == CT_T_EXITED &&
		    atomic_compare_exchange_strong_explicit(&t->state, &st, CT_T_DRAINING,
							    memory_order_acquire, memory_order_acquire))
			st = CT_T_DRAINING;
		if (st != CT_T_ACTIVE && st != CT_T_DRAINING)
			continue;
		/* tid0 stays put until the slot is FREE again (adopters announce
		 * themselves in the ring); t->tid is the live owner's. */
		if (t->wtid < 0)
			t->wtid = t->tid0;
		ct_enc_thread(&ct_wr.enc, t->wtid);
		/* At most one pool's worth per thread and cycle: a thread that
		 * records faster than we encode must not keep us from the other
		 * threads, from flush requests or from exiting. */
		size_t got, taken = 0, budget = (size_t)ct_pool.nchunks * CT_CHUNK_SIZE;
		do {
			n += ct_drain_max(t, on_record, t, st == CT_T_DRAINING, DRAIN_STEP, &got);
			taken += got;
			if (ct_enc_size(&ct_wr.enc) >= BLOCK_TARGET)
				ct_wr_write_block();
		} while (got >= DRAIN_STEP && taken < budget);
		report_drops(t);
		/* An exited thread's slot is free only once its last chunk is
		 * back in the pool; until then it can still be taken over. */
		if (st == CT_T_DRAINING)
			atomic_store_explicit(&t->state, t->rhead < 0 ? CT_T_FREE : CT_T_EXITED,
					      memory_order_release);
		if (ct_enc_size(&ct_wr.enc) >= BLOCK_TARGET)
			ct_wr_write_block();
	}
	return n;
}
