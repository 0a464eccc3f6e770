// SPDX-License-Identifier: MIT
/* The CUPTI source: GPU activity (kernels, copies, memsets, syncs, memory)
 * and CUDA API calls. The library never links libcupti; it resolves the
 * functions below when the driver calls InitializeInjection (cupti_load.c),
 * preferring the CUPTI the process already holds. The parts, each using
 * only those below it (and the torch source, sources/torch.c, pushes its
 * operator ids through ct_cu while ct_cupti_ext_on says so):
 *   cupti.c        injection, subscription, enabling per capture window,
 *                  the flush thread, exit handling
 *   cupti_buf.c    CUPTI's buffers: taken from the ring pool, given back
 *   cupti_rec.c    completed buffers translated into ring records
 *   cupti_names.c  API call and kernel names made handles on first sight
 *   cupti_state.c  shared state: on, failed, pid, clock offset; failure
 *   cupti_load.c   finding CUPTI and filling ct_cu
 */
#ifndef CT_CUPTI_INT_H
#define CT_CUPTI_INT_H

#include <cupti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ct_thread;

/* The CUPTI functions the library calls. Optional ones may be NULL (an
 * older CUPTI); the others are all there once ct_cupti_resolve succeeded. */
struct ct_cupti_fns {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
	                            CUpti_SubscriberParams *); /* optional */
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
	                               CUpti_CallbackId);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
	                                  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc); /* optional */
	CUptiResult (*get_timestamp)(uint64_t *);                       /* optional */
	CUptiResult (*set_thread_id_type)(CUpti_ActivityThreadIdType);  /* optional */
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*enable_runtime_api)(CUpti_CallbackId, uint8_t); /* optional */
	CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);  /* optional */
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*result_string)(CUptiResult, const char **);
	CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult (*push_ext)(CUpti_ExternalCorrelationKind, uint64_t);  /* optional */
	CUptiResult (*pop_ext)(CUpti_ExternalCorrelationKind, uint64_t *); /* optional */
};

extern struct ct_cupti_fns ct_cu;

/* cupti_load.c: fills ct_cu. 0, with `from` naming where CUPTI came from,
 * or -1 with `from` saying what was tried. */
int ct_cupti_resolve(char *from, size_t n);

/* cupti_state.c: what the parts share, at the bottom of their order. */
extern _Atomic int ct_cupti_on;     /* the GPU part is working */
extern _Atomic int ct_cupti_failed; /* ct_cupti_fail was called */
extern int ct_cupti_pid;            /* the process that set CUPTI up */
/* CUPTI's clock minus the tracer clock, when no timestamp callback could
 * be registered (0 otherwise). */
extern int64_t ct_cupti_clock_offset;
/* Set (release) once CUPTI is set up with the torch source on and has
 * external correlation (ct_cu.push_ext, pop_ext): the torch source's
 * cuptrace_torch_enter/exit push and pop its operator ids (kind CUSTOM0)
 * while it is set, in the process that set CUPTI up. Cleared when the
 * GPU part gives up. */
extern _Atomic int ct_cupti_ext_on;
/* An unexpected CUPTI error: switches the GPU part off (once, with one
 * message); the program goes on. Safe on any thread, in any callback. */
void ct_cupti_fail(const char *call, CUptiResult r);
/* Called by the first ct_cupti_fail after its message (cupti.c wakes its
 * flush thread, which undoes the set-up). */
extern void (*_Atomic ct_cupti_fail_hook)(void);
const char *ct_cupti_strerror(CUptiResult r);

/* cupti_buf.c: CUPTI's buffer callbacks. */
void CUPTIAPI ct_cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records);
void CUPTIAPI ct_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                        size_t valid);
/* Buffers CUPTI holds now (tests, debugging). */
unsigned ct_cupti_buffers_out(void);

/* cupti_rec.c: translates every record of a completed buffer into ring
 * records of thread t. Returns the number of records read; *err is set
 * to the CUPTI error that stopped the walk early (CUPTI_SUCCESS when the
 * buffer was read to its end). */
size_t ct_cupti_translate(struct ct_thread *t, uint8_t *buf, size_t valid, CUptiResult *err);
/* 1 (default): GPU records are written grouped by stream; 0: in CUPTI's
 * order (only benchmarks change it, to measure what grouping saves). */
extern int ct_cupti_group_streams;

/* cupti_names.c: which CUDA API calls are left out (cudaGetDevice & co.). */
int ct_cupti_api_noisy(CUpti_CallbackDomain domain, uint32_t cbid);
/* The list behind it, for disabling them in CUPTI itself. */
extern const uint32_t ct_cupti_noisy_runtime[], ct_cupti_noisy_driver[];
extern const size_t ct_cupti_n_noisy_runtime, ct_cupti_n_noisy_driver;
/* The name of an API call, made a string handle on its first sight:
 * handle << 1 | CT_CUPTI_API_NOISY when the call is left out. */
#define CT_CUPTI_API_NOISY 1ull
uint64_t ct_cupti_api_lookup(CUpti_CallbackDomain domain, uint32_t cbid);
/* A kernel name's text, copied, and its string handle: one per distinct
 * text, whatever pointers CUPTI gave it under; NULL when out of memory. */
struct ct_cupti_text {
	char *text;
	uint32_t len, hash;
	uint64_t h;
};
struct ct_cupti_text *ct_cupti_text_handle(const char *s, size_t n);

#endif
