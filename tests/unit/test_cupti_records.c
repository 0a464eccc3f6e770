// SPDX-License-Identifier: MIT
/* CUPTI records built with the real struct types of the installed headers,
 * walked by the real libcupti's cuptiActivityGetNextRecord (it needs no GPU
 * for that), translated by libtrace/sources/cupti_rec.c, and read back from the
 * ring field by field. Also: the fields the translation reads sit at the
 * same offsets in the older record versions an older CUPTI writes. */
#include "check.h"
#include "cupti_int.h"
#include "defs.h"
#include "ring.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- older CUPTIs write older record versions: same offsets wanted */
#define SAME(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f)
#define K10           CUpti_ActivityKernel10
SAME(K10, CUpti_ActivityKernel5, start);
SAME(K10, CUpti_ActivityKernel5, end);
SAME(K10, CUpti_ActivityKernel5, deviceId);
SAME(K10, CUpti_ActivityKernel5, contextId);
SAME(K10, CUpti_ActivityKernel5, streamId);
SAME(K10, CUpti_ActivityKernel5, gridX);
SAME(K10, CUpti_ActivityKernel5, blockZ);
SAME(K10, CUpti_ActivityKernel5, registersPerThread);
SAME(K10, CUpti_ActivityKernel5, staticSharedMemory);
SAME(K10, CUpti_ActivityKernel5, dynamicSharedMemory);
SAME(K10, CUpti_ActivityKernel5, correlationId);
SAME(K10, CUpti_ActivityKernel5, name);
SAME(K10, CUpti_ActivityKernel5, graphNodeId);
SAME(K10, CUpti_ActivityKernel6, graphId);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, correlationId);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, graphId);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, graphNodeId);
SAME(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy4, streamId);
SAME(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP3, dstDeviceId);
SAME(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP3, correlationId);
SAME(CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemcpyPtoP3, graphId);
SAME(CUpti_ActivityMemset4, CUpti_ActivityMemset3, memoryKind);
SAME(CUpti_ActivityMemset4, CUpti_ActivityMemset3, graphId);
SAME(CUpti_ActivityMemory4, CUpti_ActivityMemory3, memoryKind);
SAME(CUpti_ActivityMemory4, CUpti_ActivityMemory3, streamId);
SAME(CUpti_ActivityMemory4, CUpti_ActivityMemory3, timestamp);
SAME(CUpti_ActivitySynchronization2, CUpti_ActivitySynchronization, cudaEventId);
SAME(CUpti_ActivityCudaEvent2, CUpti_ActivityCudaEvent, correlationId);
SAME(CUpti_ActivityCudaEvent2, CUpti_ActivityCudaEvent, contextId);
SAME(CUpti_ActivityCudaEvent2, CUpti_ActivityCudaEvent, streamId);
SAME(CUpti_ActivityCudaEvent2, CUpti_ActivityCudaEvent, eventId);
SAME(CUpti_ActivityDevice5, CUpti_ActivityDevice4, numMultiprocessors);
SAME(CUpti_ActivityDevice5, CUpti_ActivityDevice4, name);
SAME(CUpti_ActivityDevice5, CUpti_ActivityDevice4, uuid);

#ifndef HAVE_REAL_CUPTI
int main(void)
{
	printf("test_cupti_records: skipped: no libcupti in the CUDA toolkit\n");
	return 0;
}
#else

/* ---- collecting what the translation wrote */
#define MAXREC 256
static struct {
	unsigned kind;
	uint64_t f[CT_MAX_FIELDS];
} got[MAXREC];
static int ngot;
static struct {
	uint64_t h;
	char s[512];
} handles[64];
static int nhandles;

static void on_rec(void *ctx, const struct ct_rec *r)
{
	(void)ctx;
	CHECK(ngot < MAXREC);
	got[ngot].kind = r->kind;
	const struct ct_schema *s = ct_schema_of(r->kind);
	CHECK(s);
	memcpy(got[ngot].f, r->f, s->nfields * sizeof(uint64_t));
	ngot++;
}

static void on_handle(void *ctx, uint64_t h, const char *s, uint32_t len)
{
	(void)ctx;
	CHECK(nhandles < 64 && len < 512);
	handles[nhandles].h = h;
	memcpy(handles[nhandles].s, s, len);
	handles[nhandles].s[len] = 0;
	nhandles++;
}

static void on_def_rec(void *ctx, int tid, const struct ct_rec *r)
{
	(void)tid;
	on_rec(ctx, r);
}

static const char *text(uint64_t h)
{
	for (int i = 0; i < nhandles; i++)
		if (handles[i].h == h)
			return handles[i].s;
	return NULL;
}

static uint64_t field(int i, const char *name)
{
	const struct ct_schema *s = ct_schema_of(got[i].kind);
	for (unsigned k = 0; k < s->nfields; k++)
		if (!strcmp(s->field[k], name))
			return got[i].f[k];
	fprintf(stderr, "no field %s in %s\n", name, s->name);
	exit(1);
}

static int find(unsigned kind, uint64_t corr, int nth)
{
	for (int i = 0; i < ngot; i++)
		if (got[i].kind == kind &&
		    (kind == CT_EV_GPU_DEVICE || kind == CT_EV_GPU_CONTEXT ||
		     field(i, "correlation") == corr) &&
		    nth-- == 0)
			return i;
	return -1;
}

/* ---- building a buffer */
static _Alignas(8) uint8_t buf[1 << 16];
static size_t used;

static void add(const void *rec, size_t n)
{
	CHECK(used + n <= sizeof buf);
	memcpy(buf + used, rec, n);
	used += n;
}

static void kernel(uint32_t stream, uint32_t corr, const char *name, uint64_t t0)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = t0;
	k.end = t0 + 5000;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = stream;
	k.gridX = 128, k.gridY = 2, k.gridZ = 1;
	k.blockX = 256, k.blockY = 1, k.blockZ = 1;
	k.registersPerThread = 72;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = corr;
	k.name = name;
	k.graphId = corr == 99 ? 5 : 0;
	k.graphNodeId = corr == 99 ? 77 : 0;
	add(&k, sizeof k);
}

static void api(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint64_t t0)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind;
	a.cbid = cbid;
	a.start = t0;
	a.end = t0 + 700;
	a.processId = 1;
	a.threadId = 4242;
	a.correlationId = corr;
	a.returnValue = corr == 3 ? 2 : 0;
	add(&a, sizeof a);
}

static void translate(void)
{
	struct ct_thread t;
	memset(&t, 0, sizeof t);
	t.cur = -1, t.rhead = -1, t.tid = 4242;
	atomic_store(&t.first, -1);
	CUptiResult err;
	size_t n = ct_cupti_translate(&t, buf, used, &err);
	CHECK_EQ(err, CUPTI_SUCCESS);
	CHECK(n > 0);
	ngot = 0;
	struct ct_defs_sink sink = {on_handle, on_def_rec, NULL};
	ct_defs_drain(&sink);
	ct_drain(&t, on_rec, NULL, 1);
	for (unsigned k = 0; k < CT_NKINDS; k++)
		if (k != CT_EV_KERNEL)
			CHECK_EQ(atomic_load(&t.drops[k]), 0);
	used = 0;
}

int main(void)
{
	CHECK_EQ(ct_pool_init(16u << 20), 0);
	ct_cu.next_record = cuptiActivityGetNextRecord;
	ct_cu.callback_name = cuptiGetCallbackName;
	ct_cu.result_string = cuptiGetResultString;

	/* Two streams interleaved as CUPTI interleaves them, API records in
	 * between, one kernel without timestamps. */
	static char name_a[] = "_Z6kernelPfi", name_b[] = "_Z5otherv";
	uint64_t t0 = 1000000000ull;
	kernel(7, 1, name_a, t0);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1,
	    t0 - 3000);
	kernel(13, 2, name_b, t0 + 100);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2,
	    t0 - 2000);
	kernel(7, 3, name_a, t0 + 6000);
	api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 3, t0 - 1000);
	api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 4, t0 - 500);
	kernel(7, 99, name_a, t0 + 12000);
	CUpti_ActivityKernel10 untimed;
	memset(&untimed, 0, sizeof untimed);
	untimed.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	untimed.correlationId = 5;
	untimed.name = name_a;
	add(&untimed, sizeof untimed);

	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m.bytes = 1 << 20;
	m.start = t0 + 20000, m.end = t0 + 30000;
	m.deviceId = 1, m.contextId = 2, m.streamId = 9, m.correlationId = 10;
	add(&m, sizeof m);
	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof p);
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 4096;
	p.start = t0 + 40000, p.end = t0 + 41000;
	p.deviceId = 1, p.contextId = 2, p.streamId = 9, p.srcDeviceId = 1, p.dstDeviceId = 3;
	p.correlationId = 11;
	add(&p, sizeof p);
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 512;
	s.start = t0 + 50000, s.end = t0 + 50100;
	s.deviceId = 1, s.contextId = 2, s.streamId = 7, s.correlationId = 12;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	add(&s, sizeof s);
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof y);
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
	y.start = t0 + 60000, y.end = t0 + 70000;
	y.correlationId = 13, y.contextId = 2, y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y.cudaEventId = 6;
	add(&y, sizeof y);
	CUpti_ActivityCudaEvent2 ce;
	memset(&ce, 0, sizeof ce);
	ce.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	ce.correlationId = 15, ce.contextId = 2, ce.streamId = 9, ce.eventId = 6, ce.deviceId = 1;
	add(&ce, sizeof ce);
	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof x);
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	x.externalId = 0x123456789ull, x.correlationId = 16;
	add(&x, sizeof x);
	CUpti_ActivityMemory4 mm;
	memset(&mm, 0, sizeof mm);
	mm.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mm.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mm.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mm.correlationId = 14, mm.address = 0x7f0000000000ull, mm.bytes = 1 << 30;
	mm.timestamp = t0 + 80000, mm.deviceId = 1, mm.contextId = 2, mm.streamId = 7;
	add(&mm, sizeof mm);
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof d);
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 1;
	char devname[] = "NVIDIA H100 80GB HBM3";
	d.name = devname;
	d.numMultiprocessors = 132, d.computeCapabilityMajor = 9, d.numThreadsPerWarp = 32;
	d.globalMemorySize = 85ull << 30, d.maxWarpsPerMultiprocessor = 64;
	for (int i = 0; i < 16; i++)
		d.uuid.bytes[i] = (char)(0xa0 + i);
	add(&d, sizeof d);
	CUpti_ActivityContext3 c;
	memset(&c, 0, sizeof c);
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 2, c.deviceId = 1, c.nullStreamId = 7;
	add(&c, sizeof c);

	translate();
	/* device names are copied: the caller's string may go away */
	memset(devname, 'X', sizeof devname - 1);

	int i = find(CT_EV_KERNEL, 1, 0);
	CHECK(i >= 0);
	CHECK_EQ(field(i, "ts"), t0);
	CHECK_EQ(field(i, "end"), t0 + 5000);
	CHECK_EQ(field(i, "device"), 1);
	CHECK_EQ(field(i, "context"), 2);
	CHECK_EQ(field(i, "stream"), 7);
	CHECK_EQ(field(i, "grid_x"), 128);
	CHECK_EQ(field(i, "grid_y"), 2);
	CHECK_EQ(field(i, "block_x"), 256);
	CHECK_EQ(field(i, "registers"), 72);
	CHECK_EQ(field(i, "static_smem"), 1024);
	CHECK_EQ(field(i, "dynamic_smem"), 4096);
	CHECK(!strcmp(text(field(i, "name")), "_Z6kernelPfi")); /* mangled in the file */
	CHECK_EQ(field(find(CT_EV_KERNEL, 2, 0), "name") == field(i, "name"), 0);
	CHECK_EQ(field(find(CT_EV_KERNEL, 3, 0), "name"), field(i, "name"));
	int g = find(CT_EV_KERNEL, 99, 0);
	CHECK_EQ(field(g, "graph_id"), 5);
	CHECK_EQ(field(g, "graph_node"), 77);
	CHECK_EQ(find(CT_EV_KERNEL, 5, 0), -1); /* no timestamps: dropped */

	/* GPU records grouped by stream, each stream in its order */
	int order[4], n = 0;
	for (int k = 0; k < ngot; k++)
		if (got[k].kind == CT_EV_KERNEL)
			order[n++] = (int)field(k, "correlation");
	CHECK_EQ(n, 4);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 3);
	CHECK_EQ(order[2], 99);
	CHECK_EQ(order[3], 2);

	i = find(CT_EV_CUDA_API, 1, 0);
	CHECK(!strcmp(text(field(i, "name")), "cudaLaunchKernel"));
	CHECK_EQ(field(i, "ts"), t0 - 3000);
	CHECK_EQ(field(i, "end"), t0 - 2300);
	CHECK_EQ(field(i, "tid"), 4242);
	CHECK_EQ(field(i, "api"), CUPTI_CB_DOMAIN_RUNTIME_API);
	CHECK_EQ(field(i, "cbid"), CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	i = find(CT_EV_CUDA_API, 3, 0);
	CHECK(!strcmp(text(field(i, "name")), "cuLaunchKernel"));
	CHECK_EQ(field(i, "api"), CUPTI_CB_DOMAIN_DRIVER_API);
	CHECK_EQ(field(i, "status"), 2);
	CHECK_EQ(find(CT_EV_CUDA_API, 4, 0), -1); /* cudaGetDevice: left out */

	i = find(CT_EV_MEMCPY, 10, 0);
	CHECK_EQ(field(i, "bytes"), 1 << 20);
	CHECK_EQ(field(i, "copy_kind"), CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	CHECK_EQ(field(i, "src_kind"), CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
	CHECK_EQ(field(i, "dst_kind"), CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	CHECK_EQ(field(i, "src_device"), 1);
	CHECK_EQ(field(i, "dst_device"), 1);
	CHECK_EQ(field(i, "flags"), CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
	i = find(CT_EV_MEMCPY, 11, 0);
	CHECK_EQ(field(i, "copy_kind"), CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	CHECK_EQ(field(i, "dst_device"), 3);
	i = find(CT_EV_MEMSET, 12, 0);
	CHECK_EQ(field(i, "value"), 0xab);
	CHECK_EQ(field(i, "bytes"), 512);
	i = find(CT_EV_SYNC, 13, 0);
	CHECK_EQ(field(i, "type"), CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
	CHECK_EQ(field(i, "event"), 6);
	CHECK_EQ(field(i, "stream"), CUPTI_SYNCHRONIZATION_INVALID_VALUE);
	CHECK_EQ(field(i, "end"), t0 + 70000);
	i = find(CT_EV_CUDA_EVENT, 15, 0);
	CHECK_EQ(field(i, "context"), 2);
	CHECK_EQ(field(i, "stream"), 9);
	CHECK_EQ(field(i, "event"), 6);
	i = find(CT_EV_EXT_CORR, 16, 0); /* a torch operator's id around a CUDA call */
	CHECK_EQ(field(i, "external"), 0x123456789ull);
	CHECK_EQ(field(i, "kind"), CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	i = find(CT_EV_GPU_MEMORY, 14, 0);
	CHECK_EQ(field(i, "op"), CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
	CHECK_EQ(field(i, "bytes"), 1 << 30);
	CHECK_EQ(field(i, "address"), 0x7f0000000000ull);
	CHECK_EQ(field(i, "ts"), t0 + 80000);
	i = find(CT_EV_GPU_DEVICE, 0, 0);
	CHECK_EQ(field(i, "device"), 1);
	CHECK_EQ(field(i, "sms"), 132);
	CHECK_EQ(field(i, "name"), strlen("NVIDIA H100 80GB HBM3")); /* STR: its length */
	i = find(CT_EV_GPU_CONTEXT, 0, 0);
	CHECK_EQ(field(i, "context"), 2);
	CHECK_EQ(field(i, "device"), 1);
	CHECK_EQ(field(i, "null_stream"), 7);

	/* A second buffer: the pointer of name_a now holds another name (a
	 * module unloaded and its memory reused). */
	strcpy(name_a, "_Z6reusedv");
	kernel(7, 20, name_a, t0 + 100000);
	kernel(7, 21, name_b, t0 + 110000);
	translate();
	CHECK(!strcmp(text(field(find(CT_EV_KERNEL, 20, 0), "name")), "_Z6reusedv"));
	CHECK(!strcmp(text(field(find(CT_EV_KERNEL, 21, 0), "name")), "_Z5otherv"));

	/* Clock mapping when CUPTI has no timestamp callback */
	ct_cupti_clock_offset = 1000;
	kernel(7, 30, name_b, t0);
	translate();
	CHECK_EQ(field(find(CT_EV_KERNEL, 30, 0), "ts"), t0 - 1000);
	ct_cupti_clock_offset = 0;

	/* An incomplete record after a forced flush ends the buffer quietly */
	kernel(7, 40, name_b, t0);
	CUpti_Activity bad = {CUPTI_ACTIVITY_KIND_INVALID};
	add(&bad, sizeof bad);
	translate();
	CHECK(find(CT_EV_KERNEL, 40, 0) >= 0);
	printf("test_cupti_records: ok\n");
	return 0;
}
#endif
