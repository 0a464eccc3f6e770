// SPDX-License-Identifier: MIT
/* Completed CUPTI buffers translated into ring records (schema_cupti.c).
 *
 * This is the only per-record work the tracer does for the GPU, on CUPTI's
 * thread, so it is kept to copying integers: strings CUPTI owns (kernel
 * and API names) become string handles through caches, each distinct text
 * copied once before the buffer goes back; device names are copied into
 * their record. Records are read with the struct types of the CUDA 13
 * headers; only fields that older CUPTIs place at the same offsets are
 * used (tests/unit/test_cupti_records.c checks this), so a process that
 * brought its own older CUPTI is read correctly too.
 *
 * GPU activity records (kernels, copies, memsets) are written grouped by
 * stream, in their order within each stream: CUPTI interleaves streams and
 * CPU-side API records in launch order, and the file's timestamp deltas
 * are much smaller (and compress far better) along one stream. */
#include "cupti_int.h"
#include "defs.h"
#include "log.h"
#include "record.h"
#include "thread.h"

#include <string.h>

/* ---- API names: a handle per (domain, cbid), made on first sight. */
#define API_CACHE 2048
static uint64_t api_cache[2][API_CACHE]; /* handle << 1 | noisy; 0 = not yet */

static inline uint64_t api_entry(CUpti_CallbackDomain domain, uint32_t cbid)
{
	unsigned d = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	if (cbid >= API_CACHE)
		return ct_cupti_api_lookup(domain, cbid);
	uint64_t e = api_cache[d][cbid];
	if (__builtin_expect(!e, 0))
		e = api_cache[d][cbid] = ct_cupti_api_lookup(domain, cbid);
	return e;
}

/* ---- Kernel names: CUPTI shares one string per kernel, so a cache keyed
 * by pointer finds the handle; the text is compared once per buffer in
 * case a module was unloaded and its memory reused for another name. Texts
 * seen under several pointers share a handle through the text table. */
#define PTR_SLOTS 4096
struct pslot {
	const char *ptr;
	uint64_t h;
	const char *text; /* our copy, in the text table */
	uint32_t checked; /* buffer generation of the last comparison */
};
static struct pslot pslots[PTR_SLOTS];
static uint32_t generation = 1;

static inline uint64_t name_handle(const char *p)
{
	if (!p)
		return 0;
	struct pslot *ps = &pslots[((uintptr_t)p >> 3) * 0x9e3779b1u >> 20 & (PTR_SLOTS - 1)];
	if (__builtin_expect(ps->ptr == p && ps->checked == generation, 1))
		return ps->h;
	if (ps->ptr == p && !strcmp(ps->text, p)) {
		ps->checked = generation;
		return ps->h;
	}
	size_t n = strnlen(p, CT_MAX_STR);
	struct ct_cupti_text *ts = ct_cupti_text_handle(p, n);
	if (!ts)
		return 0;
	*ps = (struct pslot){p, ts->h, ts->text, generation};
	return ts->h;
}

/* ---- Records. Timestamps: CUPTI's clock is ours when the timestamp
 * callback is registered (offset 0); otherwise mapped by the offset. */
static inline uint64_t ts_of(uint64_t t)
{
	return (uint64_t)((int64_t)t - ct_cupti_clock_offset);
}

static void put_kernel(struct ct_thread *t, const CUpti_ActivityKernel10 *k)
{
	if (!k->start && !k->end) {
		ct_count_drop(t, CT_EV_KERNEL); /* CUPTI had no timing for it */
		return;
	}
	uint64_t name = name_handle(k->name);
	struct ct_rec *r = ct_rec_begin(t, CT_EV_KERNEL, F_KERNEL_N, 0);
	if (!r)
		return;
	uint64_t *f = r->f;
	f[F_KERNEL_TS] = ts_of(k->start);
	f[F_KERNEL_END] = ts_of(k->end);
	f[F_KERNEL_CORRELATION] = k->correlationId;
	f[F_KERNEL_DEVICE] = k->deviceId;
	f[F_KERNEL_CONTEXT] = k->contextId;
	f[F_KERNEL_STREAM] = k->streamId;
	f[F_KERNEL_NAME] = name;
	f[F_KERNEL_GRID_X] = (uint32_t)k->gridX;
	f[F_KERNEL_GRID_Y] = (uint32_t)k->gridY;
	f[F_KERNEL_GRID_Z] = (uint32_t)k->gridZ;
	f[F_KERNEL_BLOCK_X] = (uint32_t)k->blockX;
	f[F_KERNEL_BLOCK_Y] = (uint32_t)k->blockY;
	f[F_KERNEL_BLOCK_Z] = (uint32_t)k->blockZ;
	f[F_KERNEL_REGISTERS] = k->registersPerThread;
	f[F_KERNEL_STATIC_SMEM] = (uint32_t)k->staticSharedMemory;
	f[F_KERNEL_DYNAMIC_SMEM] = (uint32_t)k->dynamicSharedMemory;
	f[F_KERNEL_GRAPH_ID] = k->graphId;
	f[F_KERNEL_GRAPH_NODE] = k->graphNodeId;
	ct_commit(t, r->size);
}

/* Copies and peer-to-peer copies: two CUPTI structs with the same field
 * names, one record layout; only the devices differ. */
#define PUT_COPY(t, m, src_device, dst_device)                                                     \
	do {                                                                                       \
		if (!(m)->start && !(m)->end) {                                                    \
			ct_count_drop(t, CT_EV_MEMCPY);                                            \
			return;                                                                    \
		}                                                                                  \
		struct ct_rec *r = ct_rec_begin(t, CT_EV_MEMCPY, F_MEMCPY_N, 0);                   \
		if (!r)                                                                            \
			return;                                                                    \
		uint64_t *f = r->f;                                                                \
		f[F_MEMCPY_TS] = ts_of((m)->start);                                                \
		f[F_MEMCPY_END] = ts_of((m)->end);                                                 \
		f[F_MEMCPY_CORRELATION] = (m)->correlationId;                                      \
		f[F_MEMCPY_BYTES] = (m)->bytes;                                                    \
		f[F_MEMCPY_DEVICE] = (m)->deviceId;                                                \
		f[F_MEMCPY_CONTEXT] = (m)->contextId;                                              \
		f[F_MEMCPY_STREAM] = (m)->streamId;                                                \
		f[F_MEMCPY_COPY_KIND] = (m)->copyKind;                                             \
		f[F_MEMCPY_SRC_KIND] = (m)->srcKind;                                               \
		f[F_MEMCPY_DST_KIND] = (m)->dstKind;                                               \
		f[F_MEMCPY_SRC_DEVICE] = (src_device);                                             \
		f[F_MEMCPY_DST_DEVICE] = (dst_device);                                             \
		f[F_MEMCPY_FLAGS] = (m)->flags;                                                    \
		f[F_MEMCPY_GRAPH_ID] = (m)->graphId;                                               \
		f[F_MEMCPY_GRAPH_NODE] = (m)->graphNodeId;                                         \
		ct_commit(t, r->size);                                                             \
	} while (0)

static void put_memcpy(struct ct_thread *t, const CUpti_ActivityMemcpy6 *m)
{
	PUT_COPY(t, m, m->deviceId, m->deviceId);
}

static void put_p2p(struct ct_thread *t, const CUpti_ActivityMemcpyPtoP4 *m)
{
	PUT_COPY(t, m, m->srcDeviceId, m->dstDeviceId);
}

static void put_memset(struct ct_thread *t, const CUpti_ActivityMemset4 *m)
{
	if (!m->start && !m->end) {
		ct_count_drop(t, CT_EV_MEMSET);
		return;
	}
	struct ct_rec *r = ct_rec_begin(t, CT_EV_MEMSET, F_MEMSET_N, 0);
	if (!r)
		return;
	uint64_t *f = r->f;
	f[F_MEMSET_TS] = ts_of(m->start);
	f[F_MEMSET_END] = ts_of(m->end);
	f[F_MEMSET_CORRELATION] = m->correlationId;
	f[F_MEMSET_BYTES] = m->bytes;
	f[F_MEMSET_DEVICE] = m->deviceId;
	f[F_MEMSET_CONTEXT] = m->contextId;
	f[F_MEMSET_STREAM] = m->streamId;
	f[F_MEMSET_VALUE] = m->value;
	f[F_MEMSET_MEMORY_KIND] = m->memoryKind;
	f[F_MEMSET_GRAPH_ID] = m->graphId;
	f[F_MEMSET_GRAPH_NODE] = m->graphNodeId;
	ct_commit(t, r->size);
}

static void put_sync(struct ct_thread *t, const CUpti_ActivitySynchronization2 *s)
{
	uint64_t f[F_SYNC_N] = {
	    [F_SYNC_TS] = ts_of(s->start),           [F_SYNC_END] = ts_of(s->end),
	    [F_SYNC_CORRELATION] = s->correlationId, [F_SYNC_CONTEXT] = s->contextId,
	    [F_SYNC_STREAM] = s->streamId,           [F_SYNC_TYPE] = (uint64_t)s->type,
	    [F_SYNC_EVENT] = s->cudaEventId,
	};
	ct_rec_simple(t, CT_EV_SYNC, f, F_SYNC_N);
}

/* Read with the fields CUpti_ActivityCudaEvent (before CUDA 12.8) and its
 * successors share at the same offsets: no device id (the tools take it
 * from the context) and no sync id (the tools pair a sync with the latest
 * record of its event by correlation id, which every version has). */
static void put_cuda_event(struct ct_thread *t, const CUpti_ActivityCudaEvent2 *e)
{
	uint64_t f[F_CUDA_EVENT_N] = {
	    [F_CUDA_EVENT_CORRELATION] = e->correlationId,
	    [F_CUDA_EVENT_CONTEXT] = e->contextId,
	    [F_CUDA_EVENT_STREAM] = e->streamId,
	    [F_CUDA_EVENT_EVENT] = e->eventId,
	};
	ct_rec_simple(t, CT_EV_CUDA_EVENT, f, F_CUDA_EVENT_N);
}

/* The id the program pushed on its thread around a CUDA call (the torch
 * source's operator id, kind CUSTOM0), and the call's correlation id. */
static void put_ext_corr(struct ct_thread *t, const CUpti_ActivityExternalCorrelation *e)
{
	uint64_t f[F_EXT_CORR_N] = {
	    [F_EXT_CORR_CORRELATION] = e->correlationId,
	    [F_EXT_CORR_EXTERNAL] = e->externalId,
	    [F_EXT_CORR_KIND] = (uint64_t)e->externalKind,
	};
	ct_rec_simple(t, CT_EV_EXT_CORR, f, F_EXT_CORR_N);
}

static void put_api(struct ct_thread *t, const CUpti_ActivityAPI *a, CUpti_CallbackDomain domain)
{
	uint64_t e = api_entry(domain, a->cbid);
	if (e & CT_CUPTI_API_NOISY)
		return;
	uint64_t f[F_CUDA_API_N] = {
	    [F_CUDA_API_TS] = ts_of(a->start),
	    [F_CUDA_API_END] = ts_of(a->end),
	    [F_CUDA_API_CORRELATION] = a->correlationId,
	    [F_CUDA_API_TID] = a->threadId,
	    [F_CUDA_API_NAME] = e >> 1,
	    [F_CUDA_API_STATUS] = a->returnValue,
	    [F_CUDA_API_API] = (uint64_t)domain,
	    [F_CUDA_API_CBID] = a->cbid,
	};
	ct_rec_simple(t, CT_EV_CUDA_API, f, F_CUDA_API_N);
}

static void put_memory(struct ct_thread *t, const CUpti_ActivityMemory4 *m)
{
	uint64_t f[F_GPU_MEMORY_N] = {
	    [F_GPU_MEMORY_TS] = ts_of(m->timestamp),
	    [F_GPU_MEMORY_CORRELATION] = m->correlationId,
	    [F_GPU_MEMORY_OP] = (uint64_t)m->memoryOperationType,
	    [F_GPU_MEMORY_BYTES] = m->bytes,
	    [F_GPU_MEMORY_ADDRESS] = m->address,
	    [F_GPU_MEMORY_DEVICE] = m->deviceId,
	    [F_GPU_MEMORY_CONTEXT] = m->contextId,
	    [F_GPU_MEMORY_STREAM] = m->streamId,
	    [F_GPU_MEMORY_MEMORY_KIND] = (uint64_t)m->memoryKind,
	};
	ct_rec_simple(t, CT_EV_GPU_MEMORY, f, F_GPU_MEMORY_N);
}

/* Device and context records go through the definition queue: they reach
 * the file ahead of every GPU record translated after them, which lets the
 * converter list devices before traceEvents after reading only the
 * beginning of a file. */
static void put_device(struct ct_thread *t, const CUpti_ActivityDevice5 *d)
{
	char uuid[33];
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		uuid[2 * i] = hex[(uint8_t)d->uuid.bytes[i] >> 4];
		uuid[2 * i + 1] = hex[(uint8_t)d->uuid.bytes[i] & 15];
	}
	const char *name = d->name ? d->name : "";
	size_t nlen = strnlen(name, 256);
	_Alignas(8) uint8_t buf[8 + 8 * F_GPU_DEVICE_N + 256 + 32 + 8];
	struct ct_rec *r = (struct ct_rec *)buf;
	r->size = ct_rec_size(F_GPU_DEVICE_N, (uint32_t)(nlen + 32));
	r->kind = CT_EV_GPU_DEVICE;
	r->reserved = 0;
	uint64_t *f = r->f;
	f[F_GPU_DEVICE_TS] = ct_now();
	f[F_GPU_DEVICE_DEVICE] = d->id;
	f[F_GPU_DEVICE_NAME] = nlen;
	f[F_GPU_DEVICE_GLOBAL_MEMORY] = d->globalMemorySize;
	f[F_GPU_DEVICE_CC_MAJOR] = d->computeCapabilityMajor;
	f[F_GPU_DEVICE_CC_MINOR] = d->computeCapabilityMinor;
	f[F_GPU_DEVICE_SMS] = d->numMultiprocessors;
	f[F_GPU_DEVICE_MAX_THREADS_PER_BLOCK] = d->maxThreadsPerBlock;
	f[F_GPU_DEVICE_MAX_WARPS_PER_SM] = d->maxWarpsPerMultiprocessor;
	f[F_GPU_DEVICE_MAX_BLOCKS_PER_SM] = d->maxBlocksPerMultiprocessor;
	f[F_GPU_DEVICE_REGS_PER_BLOCK] = d->maxRegistersPerBlock;
	f[F_GPU_DEVICE_REGS_PER_SM] = d->maxRegistersPerMultiprocessor;
	f[F_GPU_DEVICE_SMEM_PER_BLOCK] = d->maxSharedMemoryPerBlock;
	f[F_GPU_DEVICE_SMEM_PER_SM] = d->maxSharedMemoryPerMultiprocessor;
	f[F_GPU_DEVICE_WARP_SIZE] = d->numThreadsPerWarp;
	f[F_GPU_DEVICE_L2_CACHE] = d->l2CacheSize;
	f[F_GPU_DEVICE_CORE_CLOCK_KHZ] = d->coreClockRate;
	f[F_GPU_DEVICE_MEMORY_BANDWIDTH_KBS] = d->globalMemoryBandwidth;
	f[F_GPU_DEVICE_UUID] = 32;
	/* the strings' bytes follow the fields: name, then uuid */
	memcpy(&f[F_GPU_DEVICE_N], name, nlen);
	memcpy((char *)&f[F_GPU_DEVICE_N] + nlen, uuid, 32);
	ct_defs_add_record(t->tid, r);
	ct_debug("GPU %u: %.*s", d->id, (int)nlen, name);
}

static void put_context(struct ct_thread *t, const CUpti_ActivityContext3 *c)
{
	_Alignas(8) uint8_t buf[8 + 8 * F_GPU_CONTEXT_N];
	struct ct_rec *r = (struct ct_rec *)buf;
	r->size = ct_rec_size(F_GPU_CONTEXT_N, 0);
	r->kind = CT_EV_GPU_CONTEXT;
	r->reserved = 0;
	r->f[F_GPU_CONTEXT_TS] = ct_now();
	r->f[F_GPU_CONTEXT_CONTEXT] = c->contextId;
	r->f[F_GPU_CONTEXT_DEVICE] = c->deviceId;
	r->f[F_GPU_CONTEXT_NULL_STREAM] = c->nullStreamId;
	ct_defs_add_record(t->tid, r);
}

/* ---- GPU records held back to be written stream by stream. */
#define HOLD_MAX (CT_CHUNK_SIZE / 64)
#define NSLOT    16
static const CUpti_Activity *held[HOLD_MAX];
static uint8_t held_slot[HOLD_MAX];
static uint16_t order[HOLD_MAX];
static size_t nheld;
static uint32_t slot_stream[NSLOT];
static unsigned nslots;
int ct_cupti_group_streams = 1;

static void put_gpu(struct ct_thread *t, const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		put_kernel(t, (const CUpti_ActivityKernel10 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		put_memcpy(t, (const CUpti_ActivityMemcpy6 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		put_p2p(t, (const CUpti_ActivityMemcpyPtoP4 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		put_memset(t, (const CUpti_ActivityMemset4 *)a);
		break;
	default:
		break;
	}
}

static void release_held(struct ct_thread *t)
{
	size_t count[NSLOT + 1] = {0};
	for (size_t i = 0; i < nheld; i++)
		count[held_slot[i] + 1]++;
	for (unsigned s = 1; s <= NSLOT; s++)
		count[s] += count[s - 1];
	for (size_t i = 0; i < nheld; i++)
		order[count[held_slot[i]]++] = (uint16_t)i;
	for (size_t i = 0; i < nheld; i++)
		put_gpu(t, held[order[i]]);
	nheld = 0;
	nslots = 0;
}

static inline void hold(struct ct_thread *t, const CUpti_Activity *a, uint32_t stream)
{
	if (!ct_cupti_group_streams) {
		put_gpu(t, a);
		return;
	}
	unsigned s = 0;
	while (s < nslots && slot_stream[s] != stream)
		s++;
	if (s == nslots) {
		if (nslots < NSLOT)
			slot_stream[nslots++] = stream;
		else
			s = NSLOT - 1; /* many streams: the rest share a slot */
	}
	held[nheld] = a;
	held_slot[nheld] = (uint8_t)s;
	if (++nheld == HOLD_MAX)
		release_held(t);
}

size_t ct_cupti_translate(struct ct_thread *t, uint8_t *buf, size_t valid, CUptiResult *err)
{
	CUpti_Activity *a = NULL;
	size_t n = 0;
	generation++;
	*err = CUPTI_SUCCESS;
	for (;;) {
		CUptiResult r = ct_cu.next_record(buf, valid, &a);
		if (r != CUPTI_SUCCESS) {
			/* The end, or an incomplete record after a forced flush:
			 * both end the buffer, as CUPTI says to. */
			if (r != CUPTI_ERROR_MAX_LIMIT_REACHED && r != CUPTI_ERROR_INVALID_KIND)
				*err = r;
			break;
		}
		n++;
		switch (a->kind) {
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			hold(t, a, ((const CUpti_ActivityKernel10 *)a)->streamId);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			hold(t, a, ((const CUpti_ActivityMemcpy6 *)a)->streamId);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY2:
			hold(t, a, ((const CUpti_ActivityMemcpyPtoP4 *)a)->streamId);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			hold(t, a, ((const CUpti_ActivityMemset4 *)a)->streamId);
			break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
			put_sync(t, (const CUpti_ActivitySynchronization2 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
			put_cuda_event(t, (const CUpti_ActivityCudaEvent2 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
			put_ext_corr(t, (const CUpti_ActivityExternalCorrelation *)a);
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
			put_api(t, (const CUpti_ActivityAPI *)a, CUPTI_CB_DOMAIN_RUNTIME_API);
			break;
		case CUPTI_ACTIVITY_KIND_DRIVER:
			put_api(t, (const CUpti_ActivityAPI *)a, CUPTI_CB_DOMAIN_DRIVER_API);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			put_memory(t, (const CUpti_ActivityMemory4 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_DEVICE:
			put_device(t, (const CUpti_ActivityDevice5 *)a);
			break;
		case CUPTI_ACTIVITY_KIND_CONTEXT:
			put_context(t, (const CUpti_ActivityContext3 *)a);
			break;
		default:
			break;
		}
	}
	release_held(t);
	return n;
}
