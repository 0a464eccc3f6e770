// SPDX-License-Identifier: MIT
/* Flush requests to the writer (ct_writer_flush), from any thread or
 * signal handler: `req` holds the strongest kind asked for, req_seq counts
 * requests and done_seq is the last one served, so that a waiter that timed
 * out leaves nothing behind that a later waiter could take for its own
 * answer (`flushed` only wakes waiters up; each checks done_seq).
 * Async-signal-safe on the asking side (atomics and semaphores). */
#ifndef CT_FLUSHREQ_H
#define CT_FLUSHREQ_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>

struct ct_flushreq {
	_Atomic int req;
	_Atomic uint32_t req_seq, done_seq;
	_Atomic int waiters;
	sem_t flushed; /* posted for waiters, and once when the writer is gone */
};

void ct_flushreq_init(struct ct_flushreq *q);
/* Asks for `what` (wakes the writer through `wake`) and waits at most
 * timeout_ms for it to be served: 0 when it was, else -1. */
int ct_flushreq_ask(struct ct_flushreq *q, int what, sem_t *wake, int timeout_ms);
/* Writer: the request to serve in this pass (0: none) and its *seq. */
int ct_flushreq_take(struct ct_flushreq *q, uint32_t *seq, int least);
/* Whether a request waits to be taken (leaves it there). */
int ct_flushreq_pending(struct ct_flushreq *q);
/* Writer: the requests up to seq are served. */
void ct_flushreq_served(struct ct_flushreq *q, uint32_t seq);
/* Waits on `flushed` until *flag is set, at most until the deadline ms
 * from now: 1 when it was set. */
int ct_flushreq_wait_flag(struct ct_flushreq *q, _Atomic int *flag, long ms);
/* In a forked child: no request, nobody waiting. */
void ct_flushreq_reset(struct ct_flushreq *q);

#endif
