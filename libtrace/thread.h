// SPDX-License-Identifier: MIT
/* Per-thread recording state: registration on a thread's first event,
 * hand-back of its ring when the thread exits. */
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include "ring.h"

extern __thread struct ct_thread *ct_tls __attribute__((tls_model("initial-exec")));
extern _Atomic(struct ct_thread *) ct_threads; /* registry, newest first */

/* Called on a thread's first event, once it is registered: lifecycle.c
 * starts the writer and installs the signal handlers there. */
extern void (*_Atomic ct_thread_hook)(void);

/* NULL when tracing is off for this process or memory is exhausted. */
struct ct_thread *ct_thread_register(void);

static inline struct ct_thread *ct_self(void)
{
	struct ct_thread *t = ct_tls;
	if (__builtin_expect(t != NULL, 1))
		return t;
	return ct_thread_register();
}

/* The thread's first record since capture last switched on: its ranges
 * still open from an earlier window are cut (a RESET record tells the
 * converter), and its nesting count starts over. */
void ct_thread_new_epoch(struct ct_thread *t, uint32_t gate);

/* The writer, when a rotation begins a new file: each thread's drop
 * counts start over from what was reported so far. Slots being claimed by
 * a new thread are left to it (it zeroes them while the writer may run). */
void ct_threads_rebase_drops(void);

/* In a forked child: forget the parent's threads. */
void ct_threads_fork_child(void);

/* Marks the calling thread as never recording (the writer thread). */
void ct_thread_mark_internal(void);

#endif
