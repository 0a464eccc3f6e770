// SPDX-License-Identifier: MIT
/* The CUPTI API as libcuptrace sees it (see sim.h). Built twice: the
 * default is CUDA 13's CUPTI; -DSIM_OLD_CUPTI leaves out what older CUPTIs
 * lack (timestamp callback, cuptiSubscribe_v2, per-API enabling), so the
 * library's fallbacks run too. */
#include "sim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct sim sim = {.lock = PTHREAD_MUTEX_INITIALIZER,
                  .cv = PTHREAD_COND_INITIALIZER,
                  .idle = PTHREAD_COND_INITIALIZER};

static size_t cur_count, queue_count;
static int in_child; /* set in a forked child (getpid() is a system call) */
static pthread_t worker;
static int worker_started;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void report(void)
{
	const char *p = getenv("CUPTI_SIM_STATS");
	if (!p || getpid() != sim.init_pid)
		return;
	FILE *f = fopen(p, "w");
	if (!f)
		return;
	fprintf(
	    f, "{\"calls\": %lu, \"records\": %lu, \"buffers\": %lu, \"completed_cpu_ns\": %llu}\n",
	    sim.calls, sim.delivered_records, sim.delivered_buffers,
	    (unsigned long long)sim.completed_cpu_ns);
	fclose(f);
}

static void on_fork_child(void)
{
	in_child = 1;
}

static void read_env(void)
{
	const char *v;
	pthread_atfork(NULL, NULL, on_fork_child);
	sim.init_pid = getpid();
	sim.queue_tail = &sim.queue;
	if ((v = getenv("CUPTI_SIM_FAIL_AT")))
		sim.fail_at = strtoul(v, NULL, 10);
	sim.fail_code = CUPTI_ERROR_UNKNOWN;
	if ((v = getenv("CUPTI_SIM_FAIL_CODE")))
		sim.fail_code = (CUptiResult)atoi(v);
	if ((v = getenv("CUPTI_SIM_OTHER_SUBSCRIBER")))
		snprintf(sim.other_subscriber, sizeof sim.other_subscriber, "%s", v);
	sim.volatile_names = getenv("CUPTI_SIM_VOLATILE_NAMES") != NULL;
	sim.hold = getenv("CUPTI_SIM_HOLD") != NULL;
	if ((v = getenv("CUPTI_SIM_TRUTH")))
		sim.truth = fopen(v, "w");
	atexit(report);
}

void sim_api_init(void)
{
	pthread_once(&once, read_env);
}

void sim_truth(const char *fmt, ...)
{
	if (!sim.truth)
		return;
	va_list ap;
	va_start(ap, fmt);
	flockfile(sim.truth);
	vfprintf(sim.truth, fmt, ap);
	fputc('\n', sim.truth);
	fflush(sim.truth);
	funlockfile(sim.truth);
	va_end(ap);
}

uint64_t sim_now(void)
{
	if (sim.timestamp)
		return sim.timestamp();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Every entry point counts as a call; the Nth fails when asked to. A call
 * from a forked child is reported: the library must never make one. */
#define ENTER()                                                                                    \
	do {                                                                                       \
		sim_api_init();                                                                    \
		if (in_child)                                                                      \
			sim_truth("{\"k\":\"child_call\",\"fn\":\"%s\"}", __func__);               \
		unsigned long n_ = __atomic_add_fetch(&sim.calls, 1, __ATOMIC_RELAXED);            \
		if (sim.fail_at && n_ == sim.fail_at) {                                            \
			sim_truth("{\"k\":\"failed\",\"fn\":\"%s\",\"call\":%lu}", __func__, n_);  \
			return sim.fail_code;                                                      \
		}                                                                                  \
	} while (0)

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void free_names(struct names *n)
{
	while (n) {
		struct names *next = n->next;
		/* Poison first: a client still pointing here reads garbage. */
		memset(n->s, 'X', strlen(n->s));
		free(n->s);
		free(n);
		n = next;
	}
}

/* Hands one buffer to the client. Called without the lock. */
static void deliver(struct pending *p)
{
	uint64_t t0 = thread_cpu_ns();
	sim.completed(NULL, 0, p->buf, p->size, p->used);
	uint64_t dt = thread_cpu_ns() - t0;
	pthread_mutex_lock(&sim.lock);
	sim.completed_cpu_ns += dt;
	sim.delivered_buffers++;
	pthread_mutex_unlock(&sim.lock);
	free_names(p->names);
	free(p);
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sim.lock);
	for (;;) {
		while (!sim.queue)
			pthread_cond_wait(&sim.cv, &sim.lock);
		struct pending *p = sim.queue;
		sim.queue = p->next;
		if (!sim.queue)
			sim.queue_tail = &sim.queue;
		sim.worker_busy = 1;
		pthread_mutex_unlock(&sim.lock);
		deliver(p);
		pthread_mutex_lock(&sim.lock);
		sim.worker_busy = 0;
		pthread_cond_broadcast(&sim.idle);
	}
	return NULL;
}

/* Moves the current buffer to the delivery queue. Lock held. */
static void retire_locked(void)
{
	if (!sim.cur)
		return;
	struct pending *p = calloc(1, sizeof *p);
	p->buf = sim.cur;
	p->size = sim.cur_size;
	p->used = sim.cur_used;
	p->names = sim.cur_names;
	*sim.queue_tail = p;
	sim.queue_tail = &p->next;
	queue_count += cur_count;
	sim.delivered_records += cur_count;
	sim.cur = NULL;
	sim.cur_used = sim.cur_size = 0;
	sim.cur_names = NULL;
	cur_count = 0;
}

int sim_append(const void *rec, size_t size, char *name)
{
	pthread_mutex_lock(&sim.lock);
	int retired = 0;
	if (sim.cur && sim.cur_used + size > sim.cur_size) {
		retire_locked();
		retired = 1;
	}
	if (!sim.cur && sim.requested) {
		/* As CUPTI does: the thread that needs a buffer asks for it. */
		uint8_t *b = NULL;
		size_t sz = 0, max = 0;
		sim.requested(&b, &sz, &max);
		if (b && sz >= size) {
			sim.cur = b;
			sim.cur_size = sz;
		} else if (b) {
			/* too small: CUPTI would not use it either */
			sim_truth("{\"k\":\"small_buffer\",\"size\":%zu}", sz);
		}
	}
	int rc = -1;
	if (sim.cur) {
		memcpy(sim.cur + sim.cur_used, rec, size);
		sim.cur_used += size;
		cur_count++;
		if (name) {
			struct names *n = malloc(sizeof *n);
			n->s = name;
			n->next = sim.cur_names;
			sim.cur_names = n;
		}
		rc = 0;
	} else {
		sim.dropped++;
		free(name);
	}
	if (retired && !sim.hold) {
		if (!worker_started) {
			pthread_create(&worker, NULL, worker_main, NULL);
			worker_started = 1;
		}
		pthread_cond_signal(&sim.cv);
	}
	pthread_mutex_unlock(&sim.lock);
	return rc;
}

size_t sim_pending_records(void)
{
	pthread_mutex_lock(&sim.lock);
	size_t n = cur_count + queue_count;
	pthread_mutex_unlock(&sim.lock);
	return n;
}

void sim_callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	if (!sim.subscribed || cbid >= SIM_MAX_CBID || !sim.cb_enabled[dom][cbid])
		return;
	sim.callback(sim.userdata, dom, cbid, data);
}

int sim_kind_on(CUpti_ActivityKind k)
{
	return sim.kind_enabled[k] && sim.completed;
}

int sim_api_on(int runtime, uint32_t cbid)
{
	CUpti_ActivityKind k = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
	return sim_kind_on(k) && !(cbid < SIM_MAX_CBID && sim.api_disabled[runtime][cbid]);
}

/* ---- subscription and callbacks */

static CUptiResult subscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud, char *old,
                             size_t oldsz)
{
	pthread_mutex_lock(&sim.lock);
	CUptiResult r = CUPTI_SUCCESS;
	if (sim.subscribed || sim.other_subscriber[0]) {
		if (old && oldsz)
			snprintf(old, oldsz, "%s",
			         sim.other_subscriber[0] ? sim.other_subscriber : "cuptrace");
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		sim.subscribed = 1;
		sim.callback = cb;
		sim.userdata = ud;
		*s = (CUpti_SubscriberHandle)&sim;
	}
	pthread_mutex_unlock(&sim.lock);
	return r;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
	ENTER();
	if (!s)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return subscribe(s, cb, ud, NULL, 0);
}

#ifndef SIM_OLD_CUPTI
EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud,
                                     CUpti_SubscriberParams *p)
{
	ENTER();
	if (!s || !p || p->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return subscribe(s, cb, ud, p->oldSubscriberName, p->oldSubscriberSize);
}
#endif

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	ENTER();
	if (s != (CUpti_SubscriberHandle)&sim || !sim.subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.subscribed = 0;
	memset(sim.cb_enabled, 0, sizeof sim.cb_enabled);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle s,
                                       CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	ENTER();
	if (s != (CUpti_SubscriberHandle)&sim || dom <= 0 || dom >= CUPTI_CB_DOMAIN_SIZE ||
	    cbid >= SIM_MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.cb_enabled[dom][cbid] = enable != 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
	ENTER();
	const char *n = sim_cbid_name(dom, cbid);
	if (!n || !name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = n;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	/* Not counted: a message about a failure must not fail again. */
	static const struct {
		CUptiResult r;
		const char *s;
	} tab[] = {
	    {CUPTI_SUCCESS, "CUPTI_SUCCESS"},
	    {CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER"},
	    {CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION"},
	    {CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED"},
	    {CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED"},
	    {CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND"},
	    {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
	     "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
	    {CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN"},
	};
	for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
		if (tab[i].r == r) {
			*s = tab[i].s;
			return CUPTI_SUCCESS;
		}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- activity API */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
	ENTER();
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.requested = req;
	sim.completed = done;
	return CUPTI_SUCCESS;
}

#ifndef SIM_OLD_CUPTI
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	ENTER();
	if (!fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.timestamp = fn;
	return CUPTI_SUCCESS;
}
#endif

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	ENTER();
	if (!ts)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*ts = sim_now();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	ENTER();
	sim.thread_id_system = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	ENTER();
	if (k <= 0 || k >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	/* A CUPTI that does not have this kind (CUPTI_SIM_REFUSE_KIND=N). */
	const char *refuse = getenv("CUPTI_SIM_REFUSE_KIND");
	if (refuse && atoi(refuse) == (int)k)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	sim.kind_enabled[k] = 1;
	/* As CUPTI does, a (re-)enabled kind undoes per-API settings. */
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER)
		memset(sim.api_disabled[k == CUPTI_ACTIVITY_KIND_RUNTIME], 0, SIM_MAX_CBID);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	ENTER();
	if (k <= 0 || k >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	sim.kind_enabled[k] = 0;
	return CUPTI_SUCCESS;
}

#ifndef SIM_OLD_CUPTI
EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	ENTER();
	if (cbid >= SIM_MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.api_disabled[1][cbid] = !enable;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	ENTER();
	if (cbid >= SIM_MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	sim.api_disabled[0][cbid] = !enable;
	return CUPTI_SUCCESS;
}
#endif

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag; /* every simulated record is complete: forced or not, the same */
	ENTER();
	if (!sim.completed)
		return CUPTI_ERROR_INVALID_OPERATION;
	pthread_mutex_lock(&sim.lock);
	retire_locked();
	struct pending *list = sim.queue;
	sim.queue = NULL;
	sim.queue_tail = &sim.queue;
	queue_count = 0;
	pthread_mutex_unlock(&sim.lock);
	/* Delivered on the caller's thread, before returning. */
	while (list) {
		struct pending *next = list->next;
		deliver(list);
		list = next;
	}
	pthread_mutex_lock(&sim.lock);
	while (sim.worker_busy)
		pthread_cond_wait(&sim.idle, &sim.lock);
	pthread_mutex_unlock(&sim.lock);
	return CUPTI_SUCCESS;
}

/* ---- external correlation: a stack of ids per kind and thread, as CUPTI
 * keeps them; a CUDA call made while one is pushed gets, when its API
 * record is made, one EXTERNAL_CORRELATION record per kind with an id,
 * ahead of every record of the call (sim_ext_corr). */

#define EXT_DEPTH 64
static __thread struct {
	uint64_t id[EXT_DEPTH];
	unsigned n; /* may exceed EXT_DEPTH: the ids beyond are not kept */
} ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
	ENTER();
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
	    kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (ext[kind].n < EXT_DEPTH)
		ext[kind].id[ext[kind].n] = id;
	ext[kind].n++;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
	ENTER();
	if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
	    kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!ext[kind].n) {
		sim_truth("{\"k\":\"ext_pop_empty\",\"kind\":%d}", (int)kind);
		return CUPTI_ERROR_QUEUE_EMPTY;
	}
	ext[kind].n--;
	if (last)
		*last = ext[kind].n < EXT_DEPTH ? ext[kind].id[ext[kind].n] : 0;
	return CUPTI_SUCCESS;
}

void sim_ext_corr(int runtime, uint32_t cbid, uint32_t corr)
{
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) || !sim_api_on(runtime, cbid))
		return;
	for (int k = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
	     k++) {
		unsigned n = ext[k].n;
		if (!n)
			continue;
		CUpti_ActivityExternalCorrelation e;
		memset(&e, 0, sizeof e);
		e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		e.externalKind = (CUpti_ExternalCorrelationKind)k;
		e.externalId = n <= EXT_DEPTH ? ext[k].id[n - 1] : 0;
		e.correlationId = corr;
		int lost = sim_append(&e, sizeof e, NULL) != 0;
		sim_truth("{\"k\":\"ext_corr\",\"corr\":%u,\"kind\":%d,\"id\":%llu,\"lost\":%d}",
		          corr, k, (unsigned long long)e.externalId, lost);
	}
}

static size_t record_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
		return sizeof(CUpti_ActivityCudaEvent2);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	default:
		return 0;
	}
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	ENTER();
	if (!buf || !rec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	uint8_t *p = buf;
	if (*rec) {
		size_t sz = record_size((*rec)->kind);
		if (!sz)
			return CUPTI_ERROR_INVALID_KIND;
		p = (uint8_t *)*rec + sz;
	}
	if (p + sizeof(CUpti_Activity) > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size_t sz = record_size(((CUpti_Activity *)p)->kind);
	if (!sz || p + sz > buf + valid)
		return CUPTI_ERROR_INVALID_KIND;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx, (void)stream;
	ENTER();
	if (!n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&sim.lock);
	*n = sim.dropped;
	sim.dropped = 0;
	pthread_mutex_unlock(&sim.lock);
	return CUPTI_SUCCESS;
}
