// SPDX-License-Identifier: MIT
#include "flushreq.h"
#include "clock.h"

#include <errno.h>

void ct_flushreq_init(struct ct_flushreq *q)
{
	sem_init(&q->flushed, 0, 0);
}

int ct_flushreq_ask(struct ct_flushreq *q, int what, sem_t *wake, int timeout_ms)
{
	int cur = atomic_load(&q->req);
	while (cur < what && !atomic_compare_exchange_weak(&q->req, &cur, what))
		;
	uint32_t seq = atomic_fetch_add(&q->req_seq, 1) + 1;
	atomic_fetch_add(&q->waiters, 1);
	sem_post(wake);
	struct timespec ts = ct_deadline(timeout_ms);
	int done;
	/* Served once done_seq reaches seq (counted modulo 2^32). */
	while (!(done = (int32_t)(atomic_load(&q->done_seq) - seq) >= 0))
		if (sem_clockwait(&q->flushed, CLOCK_MONOTONIC, &ts) && errno == ETIMEDOUT)
			break;
	atomic_fetch_sub(&q->waiters, 1);
	return done ? 0 : -1;
}

int ct_flushreq_take(struct ct_flushreq *q, uint32_t *seq, int least)
{
	/* Requests first, then the rings: what a requester recorded before
	 * asking is drained by this pass. */
	*seq = atomic_load(&q->req_seq);
	int req = atomic_exchange(&q->req, 0);
	if (!req && *seq != atomic_load_explicit(&q->done_seq, memory_order_relaxed))
		req = least; /* counted, its kind taken by the last pass */
	return req;
}

int ct_flushreq_pending(struct ct_flushreq *q)
{
	return atomic_load(&q->req) != 0 ||
	       atomic_load(&q->req_seq) != atomic_load_explicit(&q->done_seq, memory_order_relaxed);
}

void ct_flushreq_served(struct ct_flushreq *q, uint32_t seq)
{
	atomic_store(&q->done_seq, seq);
	int w = atomic_load(&q->waiters);
	for (int i = 0; i < w; i++)
		sem_post(&q->flushed);
}

int ct_flushreq_wait_flag(struct ct_flushreq *q, _Atomic int *flag, long ms)
{
	struct timespec ts = ct_deadline(ms);
	while (!atomic_load(flag))
		if (sem_clockwait(&q->flushed, CLOCK_MONOTONIC, &ts) && errno == ETIMEDOUT)
			break;
	return atomic_load(flag);
}

void ct_flushreq_reset(struct ct_flushreq *q)
{
	atomic_store(&q->req, 0);
	atomic_store(&q->req_seq, 0);
	atomic_store(&q->done_seq, 0);
	atomic_store(&q->waiters, 0);
}
