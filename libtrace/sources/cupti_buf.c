// SPDX-License-Identifier: MIT
/* CUPTI's activity buffers. They are chunks of the ring pool, so GPU
 * tracing stays inside CUPTRACE_BUFFER_MB like everything else; CUPTI may
 * hold at most half of the pool so that the rings it is translated into
 * always have room. When no chunk is free CUPTI gets no buffer and drops
 * records itself; we read its count after each buffer and file it under
 * the cupti_dropped kind.
 *
 * Both callbacks run on CUPTI's threads or inside a CUDA call of the
 * program: they take a chunk, or translate one buffer and give it back.
 * A forked child never touches them: its pool is not the parent's. */
#include "cupti_int.h"
#include "log.h"
#include "ring.h"
#include "thread.h"
#include "trace.h"

#include <pthread.h>

static _Atomic unsigned out; /* chunks CUPTI holds */
/* Translation is serialised: buffers are rare (one per few thousand
 * records) and the name caches of cupti_rec.c and cupti_names.c are then
 * single-threaded. */
static pthread_mutex_t translate_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned ct_cupti_buffers_out(void)
{
	return atomic_load_explicit(&out, memory_order_relaxed);
}

/* Not in a forked child (whose pool is no longer CUPTI's). */
static int mine(void)
{
	return ct.pid == ct_cupti_pid;
}

void CUPTIAPI ct_cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = NULL;
	*size = 0;
	*max_records = 0;
	if (!atomic_load_explicit(&ct_cupti_on, memory_order_relaxed) || !mine())
		return;
	unsigned limit = ct_pool.nchunks / 2 ? ct_pool.nchunks / 2 : 1;
	if (atomic_fetch_add_explicit(&out, 1, memory_order_relaxed) >= limit) {
		atomic_fetch_sub_explicit(&out, 1, memory_order_relaxed);
		return; /* CUPTI drops and counts */
	}
	int32_t idx = ct_pool_get();
	if (idx < 0) {
		atomic_fetch_sub_explicit(&out, 1, memory_order_relaxed);
		return;
	}
	*buf = ct_chunk_data(idx);
	*size = CT_CHUNK_SIZE;
}

static void count_cupti_drops(struct ct_thread *t)
{
	size_t n = 0;
	CUptiResult r = ct_cu.dropped(NULL, 0, &n);
	if (r != CUPTI_SUCCESS) {
		ct_cupti_fail("cuptiActivityGetNumDroppedRecords", r);
		return;
	}
	if (!n)
		return;
	ct_debug("CUPTI dropped %zu records (no buffer)", n);
	if (t) {
		uint64_t v =
		    atomic_load_explicit(&t->drops[CT_EV_CUPTI_DROPPED], memory_order_relaxed);
		atomic_store_explicit(&t->drops[CT_EV_CUPTI_DROPPED], v + n, memory_order_relaxed);
	}
}

void CUPTIAPI ct_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                        size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	if (!buf || !mine())
		return;
	uint8_t *lo = ct_pool.mem, *hi = lo + (size_t)ct_pool.nchunks * CT_CHUNK_SIZE;
	if (buf < lo || buf >= hi || (size_t)(buf - lo) % CT_CHUNK_SIZE) {
		ct_once(foreign, CT_LOG_WARN, "CUPTI returned a buffer that is not ours; ignored");
		return;
	}
	if (atomic_load_explicit(&ct_cupti_on, memory_order_relaxed)) {
		struct ct_thread *t = ct_self();
		if (t && t->tid < 0)
			t = NULL; /* cuptrace's writer: cannot record */
		pthread_mutex_lock(&translate_lock);
		CUptiResult err = CUPTI_SUCCESS;
		if (t && valid)
			ct_cupti_translate(t, buf, valid, &err);
		pthread_mutex_unlock(&translate_lock);
		if (err != CUPTI_SUCCESS)
			ct_cupti_fail("cuptiActivityGetNextRecord", err);
		else if (atomic_load_explicit(&ct_cupti_on, memory_order_relaxed))
			count_cupti_drops(t);
	}
	ct_pool_put((int32_t)((size_t)(buf - lo) / CT_CHUNK_SIZE));
	atomic_fetch_sub_explicit(&out, 1, memory_order_relaxed);
}
