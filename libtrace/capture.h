// SPDX-License-Identifier: MIT
/* When events are recorded: CUPTRACE_CAPTURE (always / api / nvtx range),
 * CUPTRACE_DELAY and CUPTRACE_DURATION, and the CUPTRACE_STEPS schedule.
 * Recording is on when all of them agree. The hot path reads one word,
 * ct_gate: bit 0 says on, the rest counts switches, so that a thread can
 * tell that capture stopped and started again since its last event. */
#ifndef CT_CAPTURE_H
#define CT_CAPTURE_H

#include "thread.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern _Atomic uint32_t ct_gate;
/* Set when NVTX range names must be looked at even while capture is off
 * (nvtx capture mode or a step range). */
extern int ct_nvtx_watch;

static inline int ct_capturing(void)
{
	return atomic_load_explicit(&ct_gate, memory_order_relaxed) & 1;
}

/* The calling thread's recorder, or NULL when not capturing: the hot path of
 * every source. A thread's first record of a capture window starts a new
 * epoch (ranges left open from an earlier window are cut). */
static inline struct ct_thread *ct_recorder(void)
{
	uint32_t g = atomic_load_explicit(&ct_gate, memory_order_relaxed);
	if (!(g & 1))
		return NULL;
	struct ct_thread *t = ct_self();
	if (__builtin_expect(t && t->epoch != g, 0))
		ct_thread_new_epoch(t, g);
	return t;
}

/* Called, under the capture lock, each time recording switches on or off:
 * the CUPTI source enables and disables GPU activity with it. */
extern void (*_Atomic ct_capture_hook)(int on);

void ct_capture_init(void);
/* cuptrace_start / cuptrace_stop, cudaProfilerStart / Stop (api mode). */
void ct_capture_api(int on);
/* A step boundary (cuptrace_step or a step range opening). */
void ct_capture_step(void);
/* Called by the writer about every 50 ms, for delay and duration and for
 * a forked child that follows its parent. */
int ct_capture_tick(uint64_t now);
/* When the next tick is due, or 0 when no timer is set. */
int ct_capture_has_timer(void);

/* NVTX hooks, called only when ct_nvtx_watch is set. They return 1 when
 * the range is the capture range (the caller remembers where it ends). */
int ct_capture_range_begins(const char *name, size_t len, uint64_t handle, uint64_t domain);
/* A registered string: remembered when its text names a watched range. */
void ct_capture_note_string(uint64_t handle, const char *s, size_t len);
void ct_capture_range_ends(void);

/* A forked child records while its parent does, until it switches capture
 * itself: the parent shows its state in a shared page, which the child
 * reads at its entries (this; NVTX ranges, the control API) and at the
 * writer's pass (ct_capture_tick). */
void ct_capture_follow(void);

/* Around fork (lifecycle.c): the capture lock is held across it, and the
 * page the children read is mapped at the first. */
void ct_capture_fork_prepare(void);
void ct_capture_fork_parent(void);
void ct_capture_fork_child(void);

#endif
