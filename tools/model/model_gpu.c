// SPDX-License-Identifier: MIT
/* CUDA calls and GPU activity in the model:
 *   - kernels, copies, memsets on the track of their (GPU, stream); syncs
 *     on a track beside the stream's (a sync spans the host's wait, which
 *     overlaps the stream's kernels: both stay properly nested);
 *   - calls on the calling thread's track;
 *   - a launch flow from each call to the GPU work it made (same
 *     correlation id);
 *   - the GPU memory in use per GPU, from allocations and frees.
 * The file holds GPU records grouped by stream and call records in call
 * order, so GPU work can come before or after its call: both sides wait
 * in bounded tables (memory stays flat in the length of the trace; a call
 * and its GPU work more than 64K calls apart lose their arrow). */
#include "model/cuda_events.h"
#include "model/model_int.h"
#include "read/gpu_fields.h"
#include "read/nccl_names.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define API_SLOTS  (1u << 16)
#define PEND_SLOTS (1u << 14)
#define PEND_PROBE 8

struct api_slot { /* a call GPU work may point back to */
	uint64_t corr, ts, end;
	const struct m_track *track;
};

struct pend_slot { /* GPU work whose call has not been seen yet (its id: pend_corr) */
	uint64_t ts, end;
	const struct m_track *track;
	uint64_t sid;      /* a kernel's interned name (its demangled text in names) */
	uint8_t cat, proj; /* proj: an NVTX range may project it (not syncs) */
};

struct dname { /* a kernel's demangled name */
	char *s;
	size_t n;
	int comm; /* an NCCL kernel */
};

struct model_gpu {
	int64_t mem[MODEL_MAXDEV];
	uint64_t dev_sms[MODEL_MAXDEV], dev_warp[MODEL_MAXDEV];
	struct {
		uint64_t ctx, dev;
	} ctxmap[64];
	unsigned nctx;
	struct api_slot *api;
	/* Waiting GPU work: the correlation ids apart from the rest, so that
	 * every call's look (work whose call never came keeps npend above 0)
	 * reads one cache line. */
	uint64_t *pend_corr;
	struct pend_slot *pend;
	size_t npend; /* slots of pend in use: calls need not look when 0 */
	struct hmap names; /* struct dname by string id */
	struct cuda_events *events; /* cudaEventRecord calls; NULL until the first */
	const struct m_track *last; /* the last GPU track used, and its key */
	uint64_t last_dev;
	int64_t last_tid;
};

static struct model_gpu *state(struct model *m)
{
	if (m->gpu)
		return m->gpu;
	struct model_gpu *g = xcalloc(1, sizeof *g);
	g->api = xcalloc(API_SLOTS, sizeof *g->api);
	g->pend = xcalloc(PEND_SLOTS, sizeof *g->pend);
	g->pend_corr = xcalloc(PEND_SLOTS, sizeof *g->pend_corr);
	return m->gpu = g;
}

void model_gpu_end(struct model *m)
{
	struct model_gpu *g = m->gpu;
	if (!g)
		return;
	for (size_t i = 0; i < g->names.cap; i++)
		if (g->names.keys[i]) {
			struct dname *d = g->names.vals[i];
			free(d->s);
			free(d);
		}
	hmap_free(&g->names);
	cuda_events_free(g->events);
	free(g->api);
	free(g->pend);
	free(g->pend_corr);
	free(g);
	m->gpu = NULL;
}

static unsigned dev_index(uint64_t dev)
{
	return dev < MODEL_MAXDEV ? (unsigned)dev : MODEL_MAXDEV - 1;
}

/* The track of GPU work on (device, tid): a stream, a stream's syncs, or
 * work of no stream. */
static const struct m_track *gpu_track(struct model *m, struct model_gpu *g, uint64_t dev,
                                       int64_t tid)
{
	if (g->last && g->last_dev == dev && g->last_tid == tid)
		return g->last;
	g->last = model_gpu_track(m, dev, tid);
	g->last_dev = dev, g->last_tid = tid;
	return g->last;
}

/* ---- launch flows */

static void flow_to(struct model *m, struct model_gpu *g, uint64_t corr, const struct m_track *tr,
                    uint64_t ts, uint64_t end, int proj, enum m_cat cat, const struct sref *name)
{
	if (!corr)
		return;
	struct api_slot *a = &g->api[corr & (API_SLOTS - 1)];
	if (a->corr == corr) {
		model_launch_flow(m, a->track, a->ts, a->end, tr, ts, end, cat, name);
		if (proj && (m->project || m->project_torch))
			model_annot_launch(m, a->track->tid, a->ts, tr, ts, end);
		return;
	}
	/* The call comes later in the file: wait for it. A name the file
	 * gave inline is not kept. */
	struct pend_slot w = {ts, end, tr, name && name->sid >= CT_SID_FIRST ? name->sid : 0,
	                      (uint8_t)cat, (uint8_t)proj};
	size_t h = hmap_mix(corr);
	for (unsigned p = 0; p < PEND_PROBE; p++) {
		size_t i = (h + p) & (PEND_SLOTS - 1);
		if (!g->pend_corr[i]) {
			g->pend_corr[i] = corr;
			g->pend[i] = w;
			g->npend++;
			return;
		}
	}
	/* full around here: the oldest guess is overwritten, its arrow lost */
	g->pend_corr[h & (PEND_SLOTS - 1)] = corr;
	g->pend[h & (PEND_SLOTS - 1)] = w;
}

static void call_seen(struct model *m, struct model_gpu *g, uint64_t corr,
                      const struct m_track *tr, uint64_t ts, uint64_t end)
{
	if (!corr)
		return;
	struct api_slot *a = &g->api[corr & (API_SLOTS - 1)];
	*a = (struct api_slot){corr, ts, end, tr};
	if (!g->npend)
		return; /* the usual case: calls come before their GPU work */
	size_t h = hmap_mix(corr);
	for (unsigned p = 0; p < PEND_PROBE; p++) {
		size_t i = (h + p) & (PEND_SLOTS - 1);
		if (g->pend_corr[i] == corr) {
			const struct pend_slot *e = &g->pend[i];
			const struct dname *dn = e->sid ? hmap_get(&g->names, e->sid) : NULL;
			struct sref name = {dn ? e->sid : 0, dn ? dn->s : "", dn ? (uint32_t)dn->n : 0};
			model_launch_flow(m, tr, ts, end, e->track, e->ts, e->end, (enum m_cat)e->cat,
			                  &name);
			if (e->proj && (m->project || m->project_torch))
				model_annot_launch(m, tr->tid, ts, e->track, e->ts, e->end);
			g->pend_corr[i] = 0;
			g->npend--;
		}
	}
}

/* ---- records */

static struct dname *demangled(struct model_gpu *g, const struct ct_event *ev, unsigned i,
                               struct dname *tmp)
{
	uint64_t sid = ev->v[i];
	struct dname *d = sid >= CT_SID_FIRST ? hmap_get(&g->names, sid) : NULL;
	if (d)
		return d;
	d = sid >= CT_SID_FIRST ? xcalloc(1, sizeof *d) : tmp;
	d->s = gpu_demangle(ev->s[i], ev->sl[i], &d->n);
	/* NCCL's kernels are communication, whatever their grid says. */
	d->comm = nccl_kernel_is_comm(d->s, d->n);
	if (sid >= CT_SID_FIRST)
		hmap_put(&g->names, sid, d);
	return d;
}

static void kernel(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_SLICE, MC_KERNEL, NULL, 0, 0, ev);
	struct m_gpu *k = &e.gpu;
	e.ts = v[F_KERNEL_TS];
	e.end = v[F_KERNEL_END];
	k->device = v[F_KERNEL_DEVICE];
	k->context = v[F_KERNEL_CONTEXT];
	k->stream = v[F_KERNEL_STREAM];
	k->corr = v[F_KERNEL_CORRELATION];
	k->ext = model_torch_ext(m, k->corr);
	k->grid[0] = v[F_KERNEL_GRID_X];
	k->grid[1] = v[F_KERNEL_GRID_Y];
	k->grid[2] = v[F_KERNEL_GRID_Z];
	k->block[0] = v[F_KERNEL_BLOCK_X];
	k->block[1] = v[F_KERNEL_BLOCK_Y];
	k->block[2] = v[F_KERNEL_BLOCK_Z];
	k->regs = v[F_KERNEL_REGISTERS];
	k->ssmem = v[F_KERNEL_STATIC_SMEM];
	k->dsmem = v[F_KERNEL_DYNAMIC_SMEM];
	k->graph = v[F_KERNEL_GRAPH_ID];
	k->node = v[F_KERNEL_GRAPH_NODE];
	unsigned d = dev_index(k->device);
	k->sms = g->dev_sms[d], k->warp = g->dev_warp[d];
	struct dname tmp, *dn = demangled(g, ev, F_KERNEL_NAME, &tmp);
	k->name = (struct sref){v[F_KERNEL_NAME], dn->s, (uint32_t)dn->n};
	k->comm = dn->comm;
	e.track = gpu_track(m, g, k->device, gpu_stream_tid(k->stream));
	model_emit(m, &e);
	flow_to(m, g, k->corr, e.track, e.ts, e.end, 1, MC_KERNEL, &k->name);
	if (dn == &tmp)
		free(tmp.s);
}

static void memcpy_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_SLICE, MC_MEMCPY, NULL, 0, 0, ev);
	struct m_gpu *c = &e.gpu;
	e.ts = v[F_MEMCPY_TS];
	e.end = v[F_MEMCPY_END];
	c->device = v[F_MEMCPY_DEVICE];
	c->context = v[F_MEMCPY_CONTEXT];
	c->stream = v[F_MEMCPY_STREAM];
	c->corr = v[F_MEMCPY_CORRELATION];
	c->ext = model_torch_ext(m, c->corr);
	c->bytes = v[F_MEMCPY_BYTES];
	c->kind = v[F_MEMCPY_COPY_KIND];
	c->src_kind = v[F_MEMCPY_SRC_KIND];
	c->dst_kind = v[F_MEMCPY_DST_KIND];
	c->src_dev = v[F_MEMCPY_SRC_DEVICE];
	c->dst_dev = v[F_MEMCPY_DST_DEVICE];
	e.track = gpu_track(m, g, c->device, gpu_stream_tid(c->stream));
	model_emit(m, &e);
	flow_to(m, g, c->corr, e.track, e.ts, e.end, 1, MC_MEMCPY, NULL);
}

static void memset_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_SLICE, MC_MEMSET, NULL, 0, 0, ev);
	struct m_gpu *s = &e.gpu;
	e.ts = v[F_MEMSET_TS];
	e.end = v[F_MEMSET_END];
	s->device = v[F_MEMSET_DEVICE];
	s->context = v[F_MEMSET_CONTEXT];
	s->stream = v[F_MEMSET_STREAM];
	s->corr = v[F_MEMSET_CORRELATION];
	s->ext = model_torch_ext(m, s->corr);
	s->bytes = v[F_MEMSET_BYTES];
	s->value = v[F_MEMSET_VALUE];
	s->mem_kind = v[F_MEMSET_MEMORY_KIND];
	e.track = gpu_track(m, g, s->device, gpu_stream_tid(s->stream));
	model_emit(m, &e);
	flow_to(m, g, s->corr, e.track, e.ts, e.end, 1, MC_MEMSET, NULL);
}

static uint64_t device_of_context(struct model_gpu *g, uint64_t ctx)
{
	for (unsigned i = 0; i < g->nctx; i++)
		if (g->ctxmap[i].ctx == ctx)
			return g->ctxmap[i].dev;
	return 0;
}

static void sync_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_SLICE, MC_SYNC, NULL, 0, 0, ev);
	struct m_gpu *y = &e.gpu;
	e.ts = v[F_SYNC_TS];
	e.end = v[F_SYNC_END];
	y->context = v[F_SYNC_CONTEXT];
	y->stream = v[F_SYNC_STREAM];
	y->corr = v[F_SYNC_CORRELATION];
	y->ext = model_torch_ext(m, y->corr);
	y->sync_type = v[F_SYNC_TYPE];
	y->event = v[F_SYNC_EVENT];
	y->device = device_of_context(g, y->context);
	/* An event sync or a stream wait: the cudaEventRecord it waited for. */
	uint64_t corr, stream;
	y->wait_stream = y->wait_corr = -1;
	if (gpu_sync_on_event(y->sync_type) &&
	    cuda_events_find(g->events, y->context, y->event, y->corr, &corr, &stream))
		y->wait_stream = (int64_t)stream, y->wait_corr = (int64_t)corr;
	int64_t tid = gpu_stream_tid(y->stream);
	if (tid != GPU_TID_NONE && tid < GPU_TID_SYNC)
		tid += GPU_TID_SYNC;
	e.track = gpu_track(m, g, y->device, tid);
	model_emit(m, &e);
	flow_to(m, g, y->corr, e.track, e.ts, e.end, 0, MC_SYNC, NULL);
}

static void api_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_SLICE, v[F_CUDA_API_API] == 1 ? MC_DRIVER : MC_RUNTIME, NULL, 0, 0, ev);
	e.ts = v[F_CUDA_API_TS];
	e.end = v[F_CUDA_API_END];
	e.api.corr = v[F_CUDA_API_CORRELATION];
	e.api.cbid = v[F_CUDA_API_CBID];
	e.api.status = v[F_CUDA_API_STATUS];
	e.api.ext = model_torch_ext(m, e.api.corr);
	e.api.name =
	    (struct sref){v[F_CUDA_API_NAME], ev->s[F_CUDA_API_NAME], ev->sl[F_CUDA_API_NAME]};
	e.track = model_thread(m, (int64_t)v[F_CUDA_API_TID]);
	model_emit(m, &e);
	call_seen(m, g, e.api.corr, e.track, e.ts, e.end);
}

static void memory_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	if (!gpu_memory_on_device(v[F_GPU_MEMORY_MEMORY_KIND]))
		return;
	uint64_t dev = v[F_GPU_MEMORY_DEVICE];
	unsigned d = dev_index(dev);
	if (v[F_GPU_MEMORY_OP] == 1)
		g->mem[d] += (int64_t)v[F_GPU_MEMORY_BYTES];
	else if (v[F_GPU_MEMORY_OP] == 2)
		g->mem[d] -= (int64_t)v[F_GPU_MEMORY_BYTES];
	else
		return;
	if (g->mem[d] < 0)
		g->mem[d] = 0; /* freed what was allocated before tracing began */
	model_process(m, dev);
	struct m_event e = {.type = ME_COUNTER, .cat = MC_GPU_MEMORY, .rec = ev};
	e.ts = e.end = v[F_GPU_MEMORY_TS];
	e.counter.device = dev;
	e.counter.value = g->mem[d];
	e.counter.op = v[F_GPU_MEMORY_OP], e.counter.bytes = v[F_GPU_MEMORY_BYTES];
	e.counter.address = v[F_GPU_MEMORY_ADDRESS], e.counter.context = v[F_GPU_MEMORY_CONTEXT];
	e.counter.stream = v[F_GPU_MEMORY_STREAM], e.counter.mem_kind = v[F_GPU_MEMORY_MEMORY_KIND];
	e.counter.corr = v[F_GPU_MEMORY_CORRELATION];
	model_emit(m, &e);
}

static void device_rec(struct model *m, struct model_gpu *g, const struct ct_event *ev)
{
	uint64_t dev = ev->v[F_GPU_DEVICE_DEVICE];
	unsigned d = dev_index(dev);
	free(m->dev_name[d]);
	m->dev_name[d] = xstrndup(ev->s[F_GPU_DEVICE_NAME], ev->sl[F_GPU_DEVICE_NAME]);
	g->dev_sms[d] = ev->v[F_GPU_DEVICE_SMS];
	g->dev_warp[d] = ev->v[F_GPU_DEVICE_WARP_SIZE];
	model_process(m, dev);
}

void model_gpu_record(struct model *m, const struct ct_event *ev)
{
	struct model_gpu *g = state(m);
	switch (ev->kind) {
	case CT_EV_KERNEL:
		kernel(m, g, ev);
		break;
	case CT_EV_MEMCPY:
		memcpy_rec(m, g, ev);
		break;
	case CT_EV_MEMSET:
		memset_rec(m, g, ev);
		break;
	case CT_EV_SYNC:
		sync_rec(m, g, ev);
		break;
	case CT_EV_CUDA_API:
		api_rec(m, g, ev);
		break;
	case CT_EV_GPU_MEMORY:
		memory_rec(m, g, ev);
		break;
	case CT_EV_GPU_DEVICE:
		device_rec(m, g, ev);
		break;
	case CT_EV_CUDA_EVENT:
		if (!g->events)
			g->events = cuda_events_new();
		cuda_events_record(g->events, ev->v[F_CUDA_EVENT_CONTEXT],
		                   ev->v[F_CUDA_EVENT_EVENT], ev->v[F_CUDA_EVENT_CORRELATION],
		                   ev->v[F_CUDA_EVENT_STREAM]);
		break;
	case CT_EV_EXT_CORR:
		model_torch_record(m, ev);
		break;
	case CT_EV_GPU_CONTEXT:
		if (g->nctx < sizeof g->ctxmap / sizeof *g->ctxmap) {
			g->ctxmap[g->nctx].ctx = ev->v[F_GPU_CONTEXT_CONTEXT];
			g->ctxmap[g->nctx++].dev = ev->v[F_GPU_CONTEXT_DEVICE];
		}
		break;
	default:
		break;
	}
}
