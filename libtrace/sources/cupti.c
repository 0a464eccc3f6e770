// SPDX-License-Identifier: MIT
/* CUPTI injection: the CUDA driver calls InitializeInjection when
 * CUDA_INJECTION64_PATH names this library (lifecycle.c points it here under
 * LD_PRELOAD), so CUPTI starts when the program initialises CUDA and
 * processes that never touch CUDA pay nothing.
 *
 * Set-up, once per process: subscribe (refused when another CUPTI client,
 * such as Nsight Systems or torch.profiler, got there first), a few
 * callbacks (cudaDeviceReset and context teardown flush; cudaProfilerStart
 * and Stop drive CUPTRACE_CAPTURE=api), CUPTI's timestamps on the tracer
 * clock, the buffer callbacks (cupti_buf.c), then the activity kinds of
 * CUPTRACE_TRACE, enabled only while capture is on.
 *
 * A flush thread asks CUPTI every half second for the buffers it has
 * completed, so GPU events reach the file about as fast as CPU ones; it
 * also carries out forced flushes asked for where CUPTI must not be called
 * synchronously (capture switched off by the writer's timer).
 *
 * Failure handling: any CUPTI error switches the GPU part off with one
 * message; the program and the other sources go on. */
#include "capture.h"
#include "clock.h"
#include "cupti_int.h"
#include "lifecycle.h"
#include "log.h"
#include "thread.h"
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define FLUSH_PERIOD_MS 500
#define EXIT_WAIT_S     3

static struct {
	pthread_mutex_t lock; /* enabled kinds, subscription */
	CUpti_SubscriberHandle sub;
	int subscribed;
	int enabled; /* the CUPTRACE_TRACE kinds are enabled in CUPTI */
	pthread_t flusher;
	int flusher_started;
	sem_t wake, exited; /* exited: posted as the flush thread returns */
	_Atomic int stop, force, cleaned;
	/* flushes asked for before the process leaves (leaving) and the last
	 * one done: a flush that read asked == n before calling CUPTI covers
	 * every request up to n */
	_Atomic uint64_t asked, done;
} cupti_st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* optional: a kind that only adds detail (which cudaEventRecord an event
 * sync waited for); a CUPTI that refuses it keeps tracing the rest. */
static const struct {
	unsigned source;
	CUpti_ActivityKind kind;
	int optional;
} kinds[] = {
    {CT_SRC_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 0},
    {CT_SRC_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, 0},
    {CT_SRC_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, 0},
    {CT_SRC_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, 0},
    {CT_SRC_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 0},
    {CT_SRC_SYNC, CUPTI_ACTIVITY_KIND_CUDA_EVENT, 1},
    {CT_SRC_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2, 0},
    {CT_SRC_API, CUPTI_ACTIVITY_KIND_RUNTIME, 0},
    {CT_SRC_API, CUPTI_ACTIVITY_KIND_DRIVER, 0},
    /* which PyTorch operator made each CUDA call (the ids the torch
     * source pushes, ct_cupti_ext_on) */
    {CT_SRC_TORCH, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, 1},
};
#define NKINDS       (sizeof kinds / sizeof *kinds)
#define CUDA_SOURCES (CT_SRC_KERNEL | CT_SRC_MEMCPY | CT_SRC_API | CT_SRC_SYNC | CT_SRC_MEMORY)

/* Calls a CUPTI function; on error the GPU part goes off. */
#define CALL(fn, ...)                                                                              \
	({                                                                                         \
		CUptiResult r_ = ct_cu.fn(__VA_ARGS__);                                            \
		if (r_ != CUPTI_SUCCESS)                                                           \
			ct_cupti_fail(fn##_name, r_);                                              \
		r_ == CUPTI_SUCCESS;                                                               \
	})
static const char enable_name[] = "cuptiActivityEnable", disable_name[] = "cuptiActivityDisable",
                  flush_all_name[] = "cuptiActivityFlushAll",
                  enable_callback_name[] = "cuptiEnableCallback",
                  register_callbacks_name[] = "cuptiActivityRegisterCallbacks",
                  register_timestamp_name[] = "cuptiActivityRegisterTimestampCallback",
                  get_timestamp_name[] = "cuptiGetTimestamp",
                  set_thread_id_type_name[] = "cuptiSetThreadIdType";

/* Noisy calls are also left out by CUPTI itself where it can (less
 * overhead); errors here are not worth stopping for, cupti_rec.c filters
 * them anyway. */
static void quiet_noisy_calls(void)
{
	if (!(ct.cfg.sources & CT_SRC_API))
		return;
	for (size_t i = 0; ct_cu.enable_runtime_api && i < ct_cupti_n_noisy_runtime; i++)
		ct_cu.enable_runtime_api(ct_cupti_noisy_runtime[i], 0);
	for (size_t i = 0; ct_cu.enable_driver_api && i < ct_cupti_n_noisy_driver; i++)
		ct_cu.enable_driver_api(ct_cupti_noisy_driver[i], 0);
}

/* Brings CUPTI's enabled kinds in line with the capture gate. */
static void sync_enabled(void)
{
	pthread_mutex_lock(&cupti_st.lock);
	int want = ct_capturing() && atomic_load(&ct_cupti_on);
	if (want && !cupti_st.enabled) {
		cupti_st.enabled = 1;
		for (size_t i = 0; i < NKINDS; i++) {
			if (!(ct.cfg.sources & kinds[i].source))
				continue;
			if (kinds[i].optional) {
				static int told;
				CUptiResult r = ct_cu.enable(kinds[i].kind);
				if (r != CUPTI_SUCCESS && !told++)
					ct_info("CUPTI activity kind %d not traced: %s",
					        (int)kinds[i].kind, ct_cupti_strerror(r));
			} else if (!CALL(enable, kinds[i].kind)) {
				break;
			}
		}
		quiet_noisy_calls();
		ct_debug("GPU activity on");
	} else if (!want && cupti_st.enabled && atomic_load(&ct_cupti_on)) {
		cupti_st.enabled = 0;
		for (size_t i = 0; i < NKINDS; i++) {
			if (!(ct.cfg.sources & kinds[i].source))
				continue;
			if (kinds[i].optional)
				ct_cu.disable(kinds[i].kind); /* refused at enable, maybe */
			else if (!CALL(disable, kinds[i].kind))
				break;
		}
		/* What was launched in the window is written out now, not at
		 * exit; CUPTI may not be called back from here (the writer's
		 * timer, or inside a CUDA call), so the flush thread does it. */
		atomic_store(&cupti_st.force, 1);
		if (cupti_st.flusher_started)
			sem_post(&cupti_st.wake);
		ct_debug("GPU activity off");
	}
	pthread_mutex_unlock(&cupti_st.lock);
}

static void on_capture_switch(int on)
{
	(void)on; /* the gate is read again under our lock */
	if (ct.pid == ct_cupti_pid)
		sync_enabled();
}

/* After a failure (ct_cupti_fail): the flush thread undoes the set-up. */
static void wake_flusher(void)
{
	if (cupti_st.flusher_started)
		sem_post(&cupti_st.wake);
}

static void flush_now(void)
{
	if (atomic_load(&ct_cupti_on))
		CALL(flush_all, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* After a failure: best effort, errors ignored (CUPTI may be broken). */
static void undo_setup(void)
{
	if (atomic_exchange(&cupti_st.cleaned, 1))
		return;
	atomic_store(&ct_cupti_ext_on, 0);
	atomic_store(&ct_capture_hook, NULL);
	if (!cupti_st.subscribed)
		return; /* nothing was set up */
	pthread_mutex_lock(&cupti_st.lock);
	for (size_t i = 0; cupti_st.enabled && i < NKINDS; i++)
		if (ct.cfg.sources & kinds[i].source)
			ct_cu.disable(kinds[i].kind);
	cupti_st.enabled = 0;
	ct_cu.disable(CUPTI_ACTIVITY_KIND_DEVICE);
	ct_cu.disable(CUPTI_ACTIVITY_KIND_CONTEXT);
	if (cupti_st.subscribed)
		ct_cu.unsubscribe(cupti_st.sub);
	cupti_st.subscribed = 0;
	pthread_mutex_unlock(&cupti_st.lock);
}

static void *flusher_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "cuptrace-cupti", 0, 0, 0);
	while (!atomic_load(&cupti_st.stop)) {
		struct timespec ts = ct_deadline(FLUSH_PERIOD_MS);
		while (sem_clockwait(&cupti_st.wake, CLOCK_MONOTONIC, &ts) && errno == EINTR)
			;
		if (atomic_load(&ct_cupti_failed)) {
			undo_setup();
			break;
		}
		if (atomic_load(&cupti_st.stop))
			break;
		uint64_t asked = atomic_load(&cupti_st.asked);
		int forced = atomic_exchange(&cupti_st.force, 0);
		CALL(flush_all, forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
		atomic_store(&cupti_st.done, asked);
	}
	sem_post(&cupti_st.exited);
	return NULL;
}

/* ct_leaving_hook: the process is about to leave (a signal, _exit, exec)
 * with up to a flush period of completed records in CUPTI's buffers. CUPTI
 * may not be called from a signal handler, nor from inside a CUDA call the
 * handler interrupted, so the flush thread does it; this only asks and
 * waits, with async-signal-safe calls, at most timeout_ms (CUPTI may be
 * held by the very thread the signal interrupted). */
static void flush_before_leaving(int timeout_ms)
{
	if (!cupti_st.flusher_started || ct.pid != ct_cupti_pid || !atomic_load(&ct_cupti_on))
		return;
	uint64_t want = atomic_fetch_add(&cupti_st.asked, 1) + 1;
	atomic_store(&cupti_st.force, 1);
	sem_post(&cupti_st.wake);
	for (int ms = 0; atomic_load(&cupti_st.done) < want && ms < timeout_ms; ms++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static void stop_flusher(void)
{
	if (!cupti_st.flusher_started)
		return;
	atomic_store(&cupti_st.stop, 1);
	sem_post(&cupti_st.wake);
	/* Bounded, on CLOCK_MONOTONIC (pthread_clockjoin_np would do, but
	 * ThreadSanitizer does not see it as a join) */
	struct timespec ts = ct_deadline(EXIT_WAIT_S * 1000L);
	int r;
	while ((r = sem_clockwait(&cupti_st.exited, CLOCK_MONOTONIC, &ts)) && errno == EINTR)
		;
	if (r)
		ct_warn("the CUPTI flush thread did not stop; GPU events may be missing at exit");
	else
		pthread_join(cupti_st.flusher, NULL);
	cupti_st.flusher_started = 0;
}

/* Registered at injection, i.e. after the CUDA runtime's own exit handler,
 * so it runs first, while contexts still exist. */
static void at_exit(void)
{
	if (ct.pid != ct_cupti_pid)
		return; /* a forked child: CUPTI is the parent's */
	stop_flusher();
	if (atomic_load(&ct_cupti_failed))
		undo_setup();
	flush_now();
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data)
{
	(void)ud;
	if (!atomic_load_explicit(&ct_cupti_on, memory_order_relaxed) || ct.pid != ct_cupti_pid)
		return;
	if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			flush_now(); /* records of a context die with it */
		return;
	}
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	const CUpti_CallbackData *cd = data;
	int enter = cd->callbackSite == CUPTI_API_ENTER;
	int rt = dom == CUPTI_CB_DOMAIN_RUNTIME_API;
	if (rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
		if (enter)
			flush_now();
	} else if ((rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
	           (!rt && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
		if (!enter)
			ct_capture_api(1);
	} else if ((rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
	           (!rt && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
		if (enter)
			ct_capture_api(0);
	}
}

static uint64_t CUPTIAPI tracer_clock(void)
{
	return ct_now();
}

/* Without the timestamp callback (CUPTI older than 12.4), CUPTI stamps
 * with CLOCK_REALTIME: measure the offset to our clock once. */
static int map_clock(void)
{
	uint64_t best = ~0ull;
	for (int i = 0; i < 5; i++) {
		uint64_t c, a = ct_now();
		if (!CALL(get_timestamp, &c))
			return -1;
		uint64_t b = ct_now();
		if (b - a < best) {
			best = b - a;
			ct_cupti_clock_offset = (int64_t)(c - (a + (b - a) / 2));
		}
	}
	ct_info("CUPTI has no timestamp callback; its clock is mapped onto ours (offset %lld ns, "
	        "read within %llu ns)",
	        (long long)ct_cupti_clock_offset, (unsigned long long)best);
	return 0;
}

static int subscribe(void)
{
	CUptiResult r;
	char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	if (ct_cu.subscribe_v2) {
		CUpti_SubscriberParams p;
		memset(&p, 0, sizeof p);
		p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		p.subscriberName = "cuptrace";
		p.oldSubscriberName = other;
		p.oldSubscriberSize = sizeof other - 1;
		r = ct_cu.subscribe_v2(&cupti_st.sub, on_callback, NULL, &p);
	} else {
		r = ct_cu.subscribe(&cupti_st.sub, on_callback, NULL);
	}
	if (r == CUPTI_SUCCESS) {
		cupti_st.subscribed = 1;
		return 0;
	}
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		ct_warn(
		    "another CUPTI client%s%s%s is active in this process (Nsight Systems, Nsight "
		    "Compute, torch.profiler and cuda-gdb are such clients); GPU activity is not "
		    "traced, NVTX ranges still are",
		    other[0] ? " (" : "", other, other[0] ? ")" : "");
	else
		ct_info("GPU activity not traced: CUPTI cannot start here (cuptiSubscribe: %s); no "
		        "CUDA driver or GPU?",
		        ct_cupti_strerror(r));
	return -1;
}

static int setup(void)
{
	if (subscribe())
		return -1;
	atomic_store(&ct_cupti_on, 1);
	if (!CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	          CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) ||
	    !CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_RESOURCE,
	          CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING))
		return -1;
	if (ct.cfg.capture == CT_CAPTURE_API &&
	    (!CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	           CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
	     !CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	           CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
	     !CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_DRIVER_API,
	           CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) ||
	     !CALL(enable_callback, 1, cupti_st.sub, CUPTI_CB_DOMAIN_DRIVER_API,
	           CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)))
		return -1;
	/* OS thread ids in API records, as the rest of the trace has. */
	if (ct_cu.set_thread_id_type &&
	    !CALL(set_thread_id_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM))
		return -1;
	/* Before any kind is enabled, as CUPTI requires. */
	if (ct_cu.register_timestamp) {
		if (!CALL(register_timestamp, tracer_clock))
			return -1;
	} else if (map_clock()) {
		return -1;
	}
	if (!CALL(register_callbacks, ct_cupti_buffer_requested, ct_cupti_buffer_completed) ||
	    !CALL(enable, CUPTI_ACTIVITY_KIND_DEVICE) || !CALL(enable, CUPTI_ACTIVITY_KIND_CONTEXT))
		return -1;
	/* The torch source's operator ids, pushed around each operator:
	 * every CUDA call made inside one gets an EXTERNAL_CORRELATION record
	 * with the id of the innermost. Pushed whether capture is on or not,
	 * so that pushes and pops always pair. */
	if (ct.cfg.sources & CT_SRC_TORCH) {
		if (ct_cu.push_ext && ct_cu.pop_ext)
			atomic_store_explicit(&ct_cupti_ext_on, 1, memory_order_release);
		else
			ct_info("PyTorch operators are not tied to their GPU work: this CUPTI has no "
			        "external correlation");
	}
	atomic_store(&ct_capture_hook, on_capture_switch);
	sync_enabled();
	if (!atomic_load(&ct_cupti_on))
		return -1;
	sem_init(&cupti_st.wake, 0, 0);
	sem_init(&cupti_st.exited, 0, 0);
	if (pthread_create(&cupti_st.flusher, NULL, flusher_main, NULL)) {
		ct_warn("cannot start the CUPTI flush thread; GPU events are written at exit only");
	} else {
		cupti_st.flusher_started = 1;
		atomic_store(&ct_leaving_hook, flush_before_leaving);
		ct_source_started();
	}
	atexit(at_exit);
	return 0;
}

static void inject(void)
{
	if (!ct.active || !(ct.cfg.sources & CUDA_SOURCES)) {
		ct_debug("InitializeInjection: no CUDA source selected");
		return;
	}
	char from[4200];
	if (ct_cupti_resolve(from, sizeof from)) {
		ct_info("GPU activity not traced: %s", from);
		return;
	}
	ct_cupti_pid = ct.pid;
	atomic_store(&ct_cupti_fail_hook, wake_flusher);
	if (setup()) {
		atomic_store(&ct_cupti_on, 0);
		undo_setup();
		return;
	}
	char src[128];
	ct_sources_str(ct.cfg.sources & CUDA_SOURCES, src, sizeof src);
	ct_info("GPU activity traced (%s) through CUPTI from %s", src, from);
}

static pthread_once_t inject_once = PTHREAD_ONCE_INIT;

/* The driver's entry point: non-zero means success to the driver, which we
 * always report, whatever happened (the program must run as untraced). */
CT_API int InitializeInjection(void)
{
	ct_enter();
	pthread_once(&inject_once, inject);
	return 1;
}
