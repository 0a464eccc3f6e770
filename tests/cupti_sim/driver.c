// SPDX-License-Identifier: MIT
/* The simulated CUDA driver and runtime (cupti_sim.h). */
#include "cupti_sim.h"
#include "driver.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct driver D = {.lock = PTHREAD_MUTEX_INITIALIZER,
                   .next_context = 1,
                   .next_stream = 7,
                   .next_addr = 0x7f0000000000ull};

/* ---- JSON helpers for the truth log */
static void json_str(char *o, size_t n, const char *s)
{
	size_t k = 0;
	for (; *s && k + 8 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			o[k++] = '\\', o[k++] = (char)c;
		else if (c < 0x20)
			k += (size_t)snprintf(o + k, n - k, "\\u%04x", c);
		else
			o[k++] = (char)c;
	}
	o[k] = 0;
}

static uint32_t tid_of_caller(void)
{
	if (sim.thread_id_system)
		return (uint32_t)syscall(SYS_gettid);
	return (uint32_t)pthread_self();
}

/* ---- contexts and streams */

struct stream *stream_of(uint32_t id)
{
	for (int i = 0; i < D.nst; i++)
		if (D.st[i].id == id)
			return &D.st[i];
	abort(); /* a bug in the test program */
}

/* Primary context creation, on a device's first use. Lock held. */
static void ensure_context(int dev)
{
	struct dev *d = &D.dev[dev];
	if (d->context)
		return;
	d->context = D.next_context++;
	d->null_stream = D.next_stream++;
	D.st[D.nst++] = (struct stream){d->null_stream, dev, 0};
	if (sim_kind_on(CUPTI_ACTIVITY_KIND_CONTEXT)) {
		CUpti_ActivityContext3 c;
		memset(&c, 0, sizeof c);
		c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
		c.contextId = d->context;
		c.deviceId = (uint32_t)dev;
		c.nullStreamId = (uint16_t)d->null_stream;
		if (!sim_append(&c, sizeof c, NULL))
			sim_truth("{\"k\":\"context\",\"ctx\":%u,\"dev\":%d}", d->context, dev);
	}
	CUpti_ResourceData rd = {(CUcontext)(uintptr_t)d->context, {NULL}, NULL};
	sim_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
}

static void device_records(void)
{
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_DEVICE))
		return;
	for (int i = 0; i < D.ndev; i++) {
		CUpti_ActivityDevice5 d;
		memset(&d, 0, sizeof d);
		d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
		d.id = (uint32_t)i;
		/* CUPTI's string, gone once the buffer is returned */
		char *name = malloc(64);
		snprintf(name, 64, "Simulated GPU %d", i);
		d.name = name;
		d.globalMemorySize = 80ull << 30;
		d.computeCapabilityMajor = 9;
		d.computeCapabilityMinor = 0;
		d.numMultiprocessors = 132;
		d.maxThreadsPerBlock = 1024;
		d.maxWarpsPerMultiprocessor = 64;
		d.maxBlocksPerMultiprocessor = 32;
		d.maxRegistersPerBlock = 65536;
		d.maxRegistersPerMultiprocessor = 65536;
		d.maxSharedMemoryPerBlock = 49152;
		d.maxSharedMemoryPerMultiprocessor = 233472;
		d.numThreadsPerWarp = 32;
		d.l2CacheSize = 52428800;
		d.coreClockRate = 1980000;
		d.globalMemoryBandwidth = 3352000000ull;
		for (int k = 0; k < 16; k++)
			d.uuid.bytes[k] = (char)(0x10 * i + k);
		if (!sim_append(&d, sizeof d, name))
			sim_truth("{\"k\":\"device\",\"dev\":%d,\"name\":\"Simulated GPU "
			          "%d\",\"sms\":132}",
			          i, i);
	}
}

EXPORT void sim_init(int ndevices)
{
	sim_api_init();
	D.ndev = ndevices > MAX_DEV ? MAX_DEV : ndevices;
	/* What the driver does in cuInit when CUDA_INJECTION64_PATH is set. */
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && inj[0]) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*fn)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (fn)
			fn();
	}
	pthread_mutex_lock(&D.lock);
	device_records();
	pthread_mutex_unlock(&D.lock);
}

/* ---- API calls */

void call_begin(struct call *c, int runtime, uint32_t cbid, int dev, const char *symbol)
{
	memset(c, 0, sizeof *c);
	c->runtime = runtime;
	c->cbid = cbid;
	c->dev = dev;
	c->name =
	    sim_cbid_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid);
	pthread_mutex_lock(&D.lock);
	ensure_context(dev);
	c->corr = ++D.corr;
	pthread_mutex_unlock(&D.lock);
	c->cd.callbackSite = CUPTI_API_ENTER;
	c->cd.functionName = c->name;
	c->cd.functionParams = &c->cdata;
	c->cd.functionReturnValue = &c->ret;
	c->cd.symbolName = symbol;
	c->cd.context = (CUcontext)(uintptr_t)D.dev[dev].context;
	c->cd.contextUid = D.dev[dev].context;
	c->cd.correlationData = &c->cdata;
	c->cd.correlationId = c->corr;
	/* As CUPTI: the ids pushed on this thread, ahead of the call's records */
	sim_ext_corr(runtime, cbid, c->corr);
	sim_callback(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid,
	             &c->cd);
	c->start = sim_now();
}

void call_end(struct call *c)
{
	uint64_t end = sim_now();
	c->cd.callbackSite = CUPTI_API_EXIT;
	sim_callback(c->runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, c->cbid,
	             &c->cd);
	uint32_t tid = tid_of_caller();
	int on = sim_api_on(c->runtime, c->cbid), lost = 0;
	if (on) {
		CUpti_ActivityAPI a;
		memset(&a, 0, sizeof a);
		a.kind = c->runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
		a.cbid = c->cbid;
		a.start = c->start;
		a.end = end;
		a.processId = (uint32_t)getpid();
		a.threadId = tid;
		a.correlationId = c->corr;
		a.returnValue = (uint32_t)c->ret;
		lost = sim_append(&a, sizeof a, NULL) != 0;
	}
	sim_truth(
	    "{\"k\":\"api\",\"runtime\":%d,\"cbid\":%u,\"name\":\"%s\",\"corr\":%u,\"tid\":%u,"
	    "\"start\":%llu,\"end\":%llu,\"recorded\":%d,\"lost\":%d}",
	    c->runtime, c->cbid, c->name, c->corr, (unsigned)syscall(SYS_gettid),
	    (unsigned long long)c->start, (unsigned long long)end, on, lost);
}

/* When GPU work launched now on stream s starts and ends. Lock held. */
static void schedule(struct stream *s, uint64_t dur, uint64_t *start, uint64_t *end)
{
	uint64_t t = sim_now() + LAUNCH_LATENCY_NS;
	*start = s->ready > t ? s->ready : t;
	*end = *start + dur;
	s->ready = *end;
}

void wait_until(uint64_t t)
{
	while (sim_now() < t)
		sched_yield();
}

static const char *kernel_name(const char *name, char **owned)
{
	*owned = NULL;
	if (sim.volatile_names) {
		*owned = strdup(name);
		return *owned;
	}
	/* CUPTI keeps one string per kernel for the process's life. */
	for (struct kname *k = D.names; k; k = k->next)
		if (!strcmp(k->s, name))
			return k->s;
	struct kname *k = malloc(sizeof *k);
	k->s = strdup(name);
	k->next = D.names;
	D.names = k;
	return k->s;
}

static void kernel_record(struct stream *s, uint32_t corr, const char *name, struct sim_dim g,
                          struct sim_dim b, int regs, int ss, int ds, uint64_t dur, uint32_t graph,
                          uint64_t node)
{
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
		return;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	schedule(s, dur, &k.start, &k.end);
	k.completed = k.end;
	k.deviceId = (uint32_t)s->dev;
	k.contextId = D.dev[s->dev].context;
	k.streamId = s->id;
	k.gridX = (int32_t)g.x, k.gridY = (int32_t)g.y, k.gridZ = (int32_t)g.z;
	k.blockX = (int32_t)b.x, k.blockY = (int32_t)b.y, k.blockZ = (int32_t)b.z;
	k.registersPerThread = (uint16_t)regs;
	k.staticSharedMemory = ss;
	k.dynamicSharedMemory = ds;
	k.correlationId = corr;
	k.graphId = graph;
	k.graphNodeId = node;
	char *owned;
	k.name = kernel_name(name, &owned);
	int lost = sim_append(&k, sizeof k, owned) != 0;
	char esc[1024];
	json_str(esc, sizeof esc, name);
	sim_truth(
	    "{\"k\":\"kernel\",\"corr\":%u,\"dev\":%d,\"ctx\":%u,\"stream\":%u,\"name\":\"%s\","
	    "\"start\":%llu,\"end\":%llu,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"regs\":%d,"
	    "\"smem\":%d,\"graph\":%u,\"node\":%llu,\"lost\":%d}",
	    corr, s->dev, k.contextId, s->id, esc, (unsigned long long)k.start,
	    (unsigned long long)k.end, g.x, g.y, g.z, b.x, b.y, b.z, regs, ss + ds, graph,
	    (unsigned long long)node, lost);
}

EXPORT uint32_t sim_stream_create(int dev)
{
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020, dev, NULL);
	pthread_mutex_lock(&D.lock);
	uint32_t id = D.next_stream++;
	D.st[D.nst++] = (struct stream){id, dev, 0};
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return id;
}

EXPORT int sim_get_device(void)
{
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, D.current_dev, NULL);
	call_end(&c);
	return D.current_dev;
}

EXPORT void sim_set_device(int dev)
{
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020, dev, NULL);
	D.current_dev = dev;
	call_end(&c);
}

EXPORT uint32_t sim_launch(uint32_t stream, const char *name, struct sim_dim grid,
                           struct sim_dim block, int regs, int ss, int ds, uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, s->dev, name);
	pthread_mutex_lock(&D.lock);
	kernel_record(s, c.corr, name, grid, block, regs, ss, ds, dur, 0, 0);
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return c.corr;
}

EXPORT uint32_t sim_launch_driver(uint32_t stream, const char *name, struct sim_dim grid,
                                  struct sim_dim block, int regs, uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 0, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, s->dev, name);
	pthread_mutex_lock(&D.lock);
	kernel_record(s, c.corr, name, grid, block, regs, 0, 0, dur, 0, 0);
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return c.corr;
}

EXPORT uint32_t sim_graph_launch(uint32_t stream, int n, const char *name, uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, s->dev, NULL);
	pthread_mutex_lock(&D.lock);
	for (int i = 0; i < n; i++)
		kernel_record(s, c.corr, name, (struct sim_dim){64, 1, 1},
		              (struct sim_dim){256, 1, 1}, 32, 0, 0, dur, 1, ++D.graph_node);
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return c.corr;
}

static void copy_record(struct stream *s, uint32_t corr, int kind, int sk, int dk, uint64_t bytes,
                        int async, uint64_t dur, uint64_t *end_out)
{
	uint64_t start, end;
	schedule(s, dur, &start, &end);
	*end_out = end;
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_MEMCPY))
		return;
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = (uint8_t)kind;
	m.srcKind = (uint8_t)sk;
	m.dstKind = (uint8_t)dk;
	m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m.bytes = bytes;
	m.start = start;
	m.end = end;
	m.deviceId = (uint32_t)s->dev;
	m.contextId = D.dev[s->dev].context;
	m.streamId = s->id;
	m.correlationId = corr;
	m.copyCount = 1;
	int lost = sim_append(&m, sizeof m, NULL) != 0;
	sim_truth("{\"k\":\"memcpy\",\"corr\":%u,\"dev\":%d,\"stream\":%u,\"copy_kind\":%d,"
	          "\"src_kind\":%d,\"dst_kind\":%d,\"src_dev\":%d,\"dst_dev\":%d,\"bytes\":%llu,"
	          "\"start\":%llu,\"end\":%llu,\"lost\":%d}",
	          corr, s->dev, s->id, kind, sk, dk, s->dev, s->dev, (unsigned long long)bytes,
	          (unsigned long long)start, (unsigned long long)end, lost);
}

EXPORT uint32_t sim_memcpy(uint32_t stream, int kind, int sk, int dk, uint64_t bytes, int async,
                           uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 1,
	           async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
	                 : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	           s->dev, NULL);
	uint64_t end;
	pthread_mutex_lock(&D.lock);
	copy_record(s, c.corr, kind, sk, dk, bytes, async, dur, &end);
	pthread_mutex_unlock(&D.lock);
	if (!async)
		wait_until(end);
	call_end(&c);
	return c.corr;
}

EXPORT uint32_t sim_memcpy_peer(uint32_t stream, int src, int dst, uint64_t bytes, uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, s->dev, NULL);
	pthread_mutex_lock(&D.lock);
	ensure_context(src);
	ensure_context(dst);
	uint64_t start, end;
	schedule(s, dur, &start, &end);
	if (sim_kind_on(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
		CUpti_ActivityMemcpyPtoP4 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
		m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
		m.bytes = bytes;
		m.start = start;
		m.end = end;
		m.deviceId = (uint32_t)s->dev;
		m.contextId = D.dev[s->dev].context;
		m.streamId = s->id;
		m.srcDeviceId = (uint32_t)src;
		m.dstDeviceId = (uint32_t)dst;
		m.srcContextId = D.dev[src].context;
		m.dstContextId = D.dev[dst].context;
		m.correlationId = c.corr;
		int lost = sim_append(&m, sizeof m, NULL) != 0;
		sim_truth(
		    "{\"k\":\"memcpy\",\"corr\":%u,\"dev\":%d,\"stream\":%u,\"copy_kind\":%d,"
		    "\"src_kind\":3,\"dst_kind\":3,\"src_dev\":%d,\"dst_dev\":%d,\"bytes\":%llu,"
		    "\"start\":%llu,\"end\":%llu,\"lost\":%d}",
		    c.corr, s->dev, s->id, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, src, dst,
		    (unsigned long long)bytes, (unsigned long long)start, (unsigned long long)end,
		    lost);
	}
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return c.corr;
}

EXPORT uint32_t sim_memset(uint32_t stream, uint64_t bytes, uint32_t value, uint64_t dur)
{
	struct call c;
	pthread_mutex_lock(&D.lock);
	struct stream *s = stream_of(stream);
	pthread_mutex_unlock(&D.lock);
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, s->dev, NULL);
	pthread_mutex_lock(&D.lock);
	uint64_t start, end;
	schedule(s, dur, &start, &end);
	if (sim_kind_on(CUPTI_ACTIVITY_KIND_MEMSET)) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.value = value;
		m.bytes = bytes;
		m.start = start;
		m.end = end;
		m.deviceId = (uint32_t)s->dev;
		m.contextId = D.dev[s->dev].context;
		m.streamId = s->id;
		m.correlationId = c.corr;
		m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		int lost = sim_append(&m, sizeof m, NULL) != 0;
		sim_truth("{\"k\":\"memset\",\"corr\":%u,\"dev\":%d,\"stream\":%u,\"bytes\":%llu,"
		          "\"value\":%u,\"start\":%llu,\"end\":%llu,\"lost\":%d}",
		          c.corr, s->dev, s->id, (unsigned long long)bytes, value,
		          (unsigned long long)start, (unsigned long long)end, lost);
	}
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return c.corr;
}

static void memory_record(uint32_t corr, int op, uint64_t addr, uint64_t bytes, int dev)
{
	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_MEMORY2))
		return;
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = (CUpti_ActivityMemoryOperationType)op;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = corr;
	m.address = addr;
	m.bytes = bytes;
	m.timestamp = sim_now();
	m.processId = (uint32_t)getpid();
	m.deviceId = (uint32_t)dev;
	m.contextId = D.dev[dev].context;
	m.streamId = CUPTI_INVALID_STREAM_ID;
	int lost = sim_append(&m, sizeof m, NULL) != 0;
	sim_truth("{\"k\":\"memory\",\"corr\":%u,\"op\":%d,\"addr\":%llu,\"bytes\":%llu,\"dev\":%d,"
	          "\"ts\":%llu,\"lost\":%d}",
	          corr, op, (unsigned long long)addr, (unsigned long long)bytes, dev,
	          (unsigned long long)m.timestamp, lost);
}

EXPORT uint64_t sim_malloc(int dev, uint64_t bytes)
{
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, dev, NULL);
	pthread_mutex_lock(&D.lock);
	uint64_t addr = D.next_addr;
	D.next_addr += (bytes + 0xfffff) & ~0xfffffull;
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (!D.al[i].addr) {
			D.al[i] = (struct alloc){addr, bytes, dev};
			break;
		}
	memory_record(c.corr, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, addr, bytes, dev);
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
	return addr;
}

EXPORT void sim_free(uint64_t addr)
{
	pthread_mutex_lock(&D.lock);
	struct alloc a = {0, 0, 0};
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (D.al[i].addr == addr) {
			a = D.al[i];
			D.al[i].addr = 0;
			break;
		}
	pthread_mutex_unlock(&D.lock);
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, a.dev, NULL);
	pthread_mutex_lock(&D.lock);
	if (a.addr)
		memory_record(c.corr, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, addr, a.bytes,
		              a.dev);
	pthread_mutex_unlock(&D.lock);
	call_end(&c);
}

EXPORT void sim_device_reset(int dev)
{
	struct call c;
	call_begin(&c, 1, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, dev, NULL);
	pthread_mutex_lock(&D.lock);
	uint32_t ctx = D.dev[dev].context;
	pthread_mutex_unlock(&D.lock);
	CUpti_ResourceData rd = {(CUcontext)(uintptr_t)ctx, {NULL}, NULL};
	sim_callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &rd);
	/* Whatever the tool did not take before the context goes. */
	sim_truth("{\"k\":\"reset\",\"dev\":%d,\"pending\":%zu}", dev, sim_pending_records());
	call_end(&c);
}

static void profiler_call(uint32_t rt, uint32_t drv)
{
	struct call c, d;
	call_begin(&c, 1, rt, D.current_dev, NULL);
	/* the runtime calls the driver's entry point inside */
	call_begin(&d, 0, drv, D.current_dev, NULL);
	d.cd.callbackSite = CUPTI_API_EXIT;
	sim_callback(CUPTI_CB_DOMAIN_DRIVER_API, drv, &d.cd);
	call_end(&c);
}

EXPORT void sim_profiler_start(void)
{
	profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000,
	              CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
}

EXPORT void sim_profiler_stop(void)
{
	profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000,
	              CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
}

EXPORT size_t sim_pending(void)
{
	return sim_pending_records();
}

EXPORT void sim_cpu(uint64_t ns)
{
	uint64_t t = sim_now() + ns;
	while (sim_now() < t)
		;
}
