// SPDX-License-Identifier: MIT
/* The model's driver: one file's records in order, dispatched to the
 * parts that match them (spans.c, model_gpu.c, model_nccl.c); NVTX spans
 * and drops as events. */
#include "model/model_int.h"
#include "read/gpu_fields.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

const char *const m_cat_name[MC_N] = {
    [MC_NVTX] = "nvtx",          [MC_STEP] = "step",           [MC_MARK] = "mark",
    [MC_CAPTURE] = "capture",    [MC_KERNEL] = "kernel",       [MC_MEMCPY] = "memcpy",
    [MC_MEMSET] = "memset",      [MC_SYNC] = "sync",           [MC_RUNTIME] = "runtime",
    [MC_DRIVER] = "driver",      [MC_GPU_MEMORY] = "gpu_memory", [MC_NCCL] = "nccl",
    [MC_NCCL_GROUP] = "nccl_group", [MC_NCCL_GPU] = "nccl_gpu", [MC_DROPS] = "drops",
    [MC_LAUNCH] = "launch",      [MC_NCCL_FLOW] = "nccl_flow", [MC_NONE] = "none",
    [MC_GPU_ANNOTATION] = "gpu_annotation", [MC_HANG] = "hang_suspected",
    [MC_TORCH_OP] = "torch_op",  [MC_TORCH_SCOPE] = "torch_scope", [MC_TORCH_MEM] = "torch_mem",
    [MC_FWDBWD] = "fwdbwd",
    [MC_MPI] = "mpi",          [MC_MPI_FLOW] = "mpi_flow",  [MC_MPI_COMM] = "mpi_comm",
    [MC_MPI_HANG] = "mpi_hang",
};

/* ---- NVTX spans */

static void on_span(void *ctx, const struct span *s)
{
	struct model *m = ctx;
	struct m_event ev;
	model_head(&ev, ME_SLICE, MC_NVTX, NULL, s->ts, s->end, NULL);
	ev.span = s;
	switch (s->kind) {
	case SP_RANGE:
		ev.cat = MC_NVTX;
		break;
	case SP_ASYNC:
		ev.type = ME_ASYNC, ev.cat = MC_NVTX;
		ev.end_track = model_thread(m, s->end_tid);
		break;
	case SP_STEP:
		ev.cat = MC_STEP;
		break;
	case SP_MARK:
		ev.type = ME_INSTANT, ev.cat = MC_MARK;
		break;
	case SP_CAPTURE:
		ev.type = ME_INSTANT, ev.cat = MC_CAPTURE;
		break;
	case SP_THREAD: {
		if (s->tid <= 0 || (!s->id && !s->name.len))
			return;
		struct m_track *tr = model_thread(m, s->tid);
		if (s->name.len)
			model_track_name(tr, s->name.s, s->name.len);
		else
			model_track_name(tr, "thread", 6);
		ev.type = ME_TRACK, ev.cat = MC_NONE;
		ev.track = tr;
		model_emit(m, &ev);
		return;
	}
	}
	ev.track = model_thread(m, s->tid);
	model_emit(m, &ev);
	if (s->kind == SP_RANGE && m->project)
		model_annot_range(m, s);
}

/* ---- the file */

static void drops(struct model *m, uint64_t last_ts)
{
	const struct ct_file *f = &m->t->f;
	uint64_t total = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		total += f->drops[k];
	if (!total)
		return;
	struct m_event ev = {.type = ME_INSTANT, .cat = MC_DROPS, .ts = last_ts, .end = last_ts};
	ev.track = model_thread(m, (int64_t)f->h.pid);
	ev.dropped = total;
	model_emit(m, &ev);
}

/* The NVTX range that marks steps, from the file's configuration. */
static void step_range(struct model *m)
{
	const char *cfg = m->t->f.h.config, *k = "CUPTRACE_STEP_RANGE=";
	for (const char *p = cfg; p && (p = strstr(p, k)); p++)
		if (p == cfg || p[-1] == '\n') {
			p += strlen(k);
			size_t n = strcspn(p, "\n");
			if (n)
				spans_step_range(m->spans, p, n);
			return;
		}
}

/* A cleanly closed file's footer, read at open, tells whether any GPU work
 * was launched at all: without it the NVTX GPU projection (which keeps
 * every closed range a while) has nothing to do. */
static int no_launches(const struct ct_file *f, unsigned ranges)
{
	if (!f->final_footer)
		return 0;
	return !f->f_events[CT_EV_CUDA_API] ||
	       !(f->f_events[CT_EV_KERNEL] + f->f_events[CT_EV_MEMCPY] + f->f_events[CT_EV_MEMSET]) ||
	       !f->f_events[ranges]; /* no range to project onto */
}

/* One file being read (model.h): the model and where the reading stands. */
struct model_run {
	struct model m;
	void (*on_block)(void *ctx, uint64_t block); /* m_watch */
	void *block_ctx;
	_Atomic uint64_t *progress;
	uint64_t block, n;
	int ended;
};

struct model_run *model_open(struct tfile *t, const struct m_consumer *c, void *ctx,
                             const struct m_watch *w)
{
	struct model_run *r = xcalloc(1, sizeof *r);
	struct model *m = &r->m;
	m->t = t, m->c = c, m->ctx = ctx;
	m->spans = spans_new(on_span, m);
	step_range(m);
	int cuda = gpu_file_traces_cuda(&t->f.h);
	m->project = cuda && !no_launches(&t->f, CT_EV_NVTX_PUSH);
	m->project_torch = cuda && gpu_file_traces_torch(&t->f.h) && !no_launches(&t->f, CT_EV_TORCH_OP);
	if (c->begin_file)
		c->begin_file(ctx, t);
	if (w) {
		r->on_block = w->block, r->block_ctx = w->ctx;
		r->progress = w->progress;
	}
	return r;
}

/* What the file's end produces. */
static void file_end(struct model_run *r)
{
	struct model *m = &r->m;
	if (r->on_block)
		r->on_block(r->block_ctx, m->t->f.nblocks + 1);
	spans_finish(m->spans);
	model_annot_end(m);
	model_gpu_end(m);
	model_torch_end(m);
	model_nccl_end(m);
	model_mpi_end(m, spans_last_ts(m->spans));
	drops(m, spans_last_ts(m->spans));
	if (m->c->end_file)
		m->c->end_file(m->ctx, m->t);
	r->ended = 1;
}

int model_step(struct model_run *r, uint64_t max)
{
	struct model *m = &r->m;
	struct tfile *t = m->t;
	struct ct_event ev;
	if (r->ended)
		return 0;
	for (uint64_t i = 0; i < max; i++) {
		if (ct_file_next(&t->f, &ev) != 1) {
			file_end(r);
			return 0;
		}
		if (r->on_block && t->f.nblocks != r->block) {
			r->block = t->f.nblocks;
			r->on_block(r->block_ctx, r->block);
		}
		if (r->progress && !(++r->n & 0xffff))
			atomic_fetch_add_explicit(r->progress, 0x10000, memory_order_relaxed);
		if (ev.kind >= CT_EV_CUPTI_FIRST && ev.kind < CT_EV_CUPTI_END) {
			model_gpu_record(m, &ev);
			if (ev.kind == CT_EV_KERNEL)
				model_nccl_record(m, &ev); /* NCCL kernels join their operations */
		} else if (ev.kind >= CT_EV_TORCH_FIRST && ev.kind < CT_EV_TORCH_END) {
			model_torch_record(m, &ev);
		} else if ((ev.kind >= CT_EV_NCCL_FIRST && ev.kind < CT_EV_NCCL_END) ||
		           ev.kind == CT_EV_HANG) {
			model_nccl_record(m, &ev);
		} else if (ev.kind >= CT_EV_MPI_FIRST && ev.kind < CT_EV_MPI_END) {
			model_mpi_record(m, &ev);
		} else {
			spans_event(m->spans, &ev);
			if (ev.kind == CT_EV_STEP)
				model_nccl_record(m, &ev);
		}
	}
	return 1;
}

int model_close(struct model_run *r)
{
	if (!r->ended)
		file_end(r);
	struct model *m = &r->m;
	/* events lost to damage: the command's answer is incomplete (docs/CHOICES.md) */
	int rc = m->t->f.status == CT_CORRUPT || m->t->f.status == CT_DAMAGED ? -1 : 0;
	spans_free(m->spans);
	model_free_tracks(m);
	free(r);
	return rc;
}

int model_file(struct tfile *t, const struct m_consumer *c, void *ctx, const struct m_watch *w)
{
	struct model_run *r = model_open(t, c, ctx, w);
	model_step(r, UINT64_MAX);
	return model_close(r);
}
