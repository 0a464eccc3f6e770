// SPDX-License-Identifier: MIT
/* PyTorch in the model:
 *   - operators and record_function scopes (torch_op) become slices on
 *     the track of the thread they began on (the record's tid field when
 *     set: a scope ended on another thread; else the thread whose ring
 *     holds it). The observer writes each one when it ends, so an outer
 *     operator comes after the ones inside it, as NVTX ranges do;
 *   - a scope is also handed to the GPU projection (model_annot.c);
 *   - allocations and frees (torch_mem) become an instant on their thread
 *     and the allocator's total as a counter of their device;
 *   - CUPTI's external correlation (ext_corr: a CUDA call's correlation id
 *     and the operator id pushed on its thread) is kept in a bounded table
 *     that the CUDA call, kernel, copy, memset and sync of that correlation
 *     id read (model_gpu.c): CUPTI writes the record just before the
 *     call's own API record, in the same buffer, so the call and its GPU
 *     work find it there. GPU work handed out in an earlier buffer than
 *     its call (rare) carries no operator, as in Kineto;
 *   - a forward operator and the backward one torch gave its sequence
 *     number (fwd_tid: the forward's thread) are joined by a flow, as
 *     torch.profiler joins them: of the forward ops of a (thread, sequence
 *     number) the one that started last, of the backward ops the one
 *     that started first. Records come as ops end, so a pair waits in a
 *     bounded table until the file ends or its slot is wanted. */
#include "cuptrace/torch_abi.h"
#include "model/model_int.h"
#include "model/torch_tree.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

#define EXT_SLOTS (1u << 16) /* correlation ids kept: 64K calls back */
#define MEM_SLOTS (1u << 14) /* operators whose allocations wait for their record */
#define EXT_KIND_CUSTOM0 3   /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: the operators' ids */
#define LINK_SLOTS (1u << 14) /* forward ops waiting for their backward op */

struct ext_slot {
	uint64_t corr, ext;
};

struct link_slot { /* a forward op (thread number, sequence number) and its backward op */
	uint64_t rf_tid, seq; /* seq 0: empty */
	const struct m_track *fwd, *bwd; /* NULL: none yet */
	uint64_t fwd_ts, bwd_ts;
};

/* Allocations made inside an operator, by its id, until its record comes
 * (after them: it is written when the operator ends). */
struct mem_slot {
	uint64_t op, n, bytes;
};

struct model_torch {
	struct ext_slot *ext;   /* by correlation id; NULL until the first ext_corr */
	struct link_slot *link; /* NULL until the first op with a sequence number */
	struct mem_slot *mem;   /* by operator id; NULL until the first torch_mem */
	struct torch_tree tree;
};

static struct model_torch *state(struct model *m)
{
	if (!m->torch)
		m->torch = xcalloc(1, sizeof *m->torch);
	return m->torch;
}

/* A pair's flow, once no better one can come (its slot is wanted, or the
 * file ended). */
static void link_out(struct model *m, struct link_slot *l)
{
	if (l->seq && l->fwd && l->bwd)
		model_flow(m, MC_FWDBWD, l->fwd, l->fwd_ts, l->bwd, l->bwd_ts);
	l->seq = 0;
}

static void link_op(struct model *m, const struct m_event *e)
{
	const struct m_torch *o = &e->torch;
	struct model_torch *t = state(m);
	if (!t->link)
		t->link = xcalloc(LINK_SLOTS, sizeof *t->link);
	uint64_t rf_tid = o->fwd_tid ? o->fwd_tid : o->rf_tid; /* the forward op's thread */
	struct link_slot *l = &t->link[hmap_mix(rf_tid * 0x9e3779b97f4a7c15ull ^ o->seq) &
	                               (LINK_SLOTS - 1)];
	if (l->seq != o->seq || l->rf_tid != rf_tid) {
		link_out(m, l);
		*l = (struct link_slot){rf_tid, o->seq, NULL, NULL, 0, 0};
	}
	/* either may come first: the threads' records lie apart in the file */
	if (!o->fwd_tid) { /* a forward op: the one that started last */
		if (!l->fwd || e->ts >= l->fwd_ts)
			l->fwd = e->track, l->fwd_ts = e->ts;
	} else if (!l->bwd || e->ts < l->bwd_ts) { /* the backward op that started first */
		l->bwd = e->track, l->bwd_ts = e->ts;
	}
}

void model_torch_end(struct model *m)
{
	struct model_torch *t = m->torch;
	if (!t)
		return;
	for (size_t i = 0; t->link && i < LINK_SLOTS; i++)
		link_out(m, &t->link[i]);
	free(t->link);
	free(t->ext);
	free(t->mem);
	torch_tree_free(&t->tree);
	free(t);
	m->torch = NULL;
}

uint64_t model_torch_ext_slow(struct model *m, uint64_t corr)
{
	const struct ext_slot *e = m->torch->ext;
	if (!e || !corr)
		return 0;
	e += corr & (EXT_SLOTS - 1);
	return e->corr == corr ? e->ext : 0;
}

static void ext_corr(struct model *m, const struct ct_event *ev)
{
	uint64_t corr = ev->v[F_EXT_CORR_CORRELATION], ext = ev->v[F_EXT_CORR_EXTERNAL];
	if (!corr || !ext || ev->v[F_EXT_CORR_KIND] != EXT_KIND_CUSTOM0)
		return;
	struct model_torch *t = state(m);
	if (!t->ext)
		t->ext = xcalloc(EXT_SLOTS, sizeof *t->ext);
	t->ext[corr & (EXT_SLOTS - 1)] = (struct ext_slot){corr, ext};
}

static struct sref text(const struct ct_event *ev, unsigned i)
{
	return (struct sref){ev->v[i], ev->s[i] ? ev->s[i] : "", ev->s[i] ? ev->sl[i] : 0};
}

static void op_rec(struct model *m, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	/* the thread it began on: never 0 or negative (track keys) */
	int64_t began = (int64_t)v[F_TORCH_OP_TID];
	int64_t tid = began > 0 ? began : ev->tid;
	uint64_t ts = v[F_TORCH_OP_TS], end = v[F_TORCH_OP_END];
	if (end < ts)
		end = ts;
	uint32_t scope = v[F_TORCH_OP_SCOPE] <= CUPTRACE_TORCH_SCOPE_OTHER
	                     ? (uint32_t)v[F_TORCH_OP_SCOPE]
	                     : CUPTRACE_TORCH_SCOPE_OTHER;
	struct m_event e;
	model_head(&e, ME_SLICE, scope == CUPTRACE_TORCH_SCOPE_USER ? MC_TORCH_SCOPE : MC_TORCH_OP,
	           model_thread(m, tid), ts, end, ev);
	struct m_torch *o = &e.torch;
	o->id = v[F_TORCH_OP_ID];
	o->seq = v[F_TORCH_OP_SEQ];
	o->rf_tid = v[F_TORCH_OP_RF_TID];
	o->fwd_tid = v[F_TORCH_OP_FWD_TID];
	o->scope = scope;
	o->name = text(ev, F_TORCH_OP_NAME);
	o->dims = text(ev, F_TORCH_OP_DIMS);
	o->types = text(ev, F_TORCH_OP_TYPES);
	o->stack = text(ev, F_TORCH_OP_STACK);
	o->end_track = tid != ev->tid && ev->tid > 0 ? model_thread(m, ev->tid) : NULL;
	struct model_torch *t = state(m);
	torch_tree_add(&t->tree, tid, ts, end, o);
	o->allocs = o->alloc_bytes = 0;
	if (t->mem && o->id) {
		struct mem_slot *ms = &t->mem[o->id & (MEM_SLOTS - 1)];
		if (ms->op == o->id) {
			o->allocs = ms->n;
			o->alloc_bytes = ms->bytes;
			ms->op = 0;
		}
	}
	model_emit(m, &e);
	if (o->seq && scope != CUPTRACE_TORCH_SCOPE_USER)
		link_op(m, &e);
	if (scope == CUPTRACE_TORCH_SCOPE_USER && m->project_torch)
		model_annot_scope(m, tid, ts, end, &o->name);
}

static void mem_rec(struct model *m, const struct ct_event *ev)
{
	const uint64_t *v = ev->v;
	struct m_event e;
	model_head(&e, ME_INSTANT, MC_TORCH_MEM, model_thread(m, ev->tid), v[F_TORCH_MEM_TS],
	           v[F_TORCH_MEM_TS], ev);
	struct m_tmem *a = &e.tmem;
	a->ptr = v[F_TORCH_MEM_PTR];
	a->bytes = (int64_t)v[F_TORCH_MEM_BYTES];
	a->device = (int64_t)v[F_TORCH_MEM_DEVICE];
	if (a->device < -1)
		a->device = -1;
	a->allocated = v[F_TORCH_MEM_ALLOCATED];
	a->reserved = v[F_TORCH_MEM_RESERVED];
	a->op = v[F_TORCH_MEM_OP];
	if (a->device >= 0)
		model_process(m, (uint64_t)a->device); /* the counter lives there */
	if (a->op && a->bytes > 0) {
		struct model_torch *t = state(m);
		if (!t->mem)
			t->mem = xcalloc(MEM_SLOTS, sizeof *t->mem);
		struct mem_slot *ms = &t->mem[a->op & (MEM_SLOTS - 1)];
		if (ms->op != a->op)
			*ms = (struct mem_slot){a->op, 0, 0};
		ms->n++;
		ms->bytes += (uint64_t)a->bytes;
	}
	model_emit(m, &e);
	e.type = ME_COUNTER;
	e.track = NULL;
	model_emit(m, &e);
}

void model_torch_record(struct model *m, const struct ct_event *ev)
{
	switch (ev->kind) {
	case CT_EV_TORCH_OP:
		op_rec(m, ev);
		break;
	case CT_EV_TORCH_MEM:
		mem_rec(m, ev);
		break;
	case CT_EV_EXT_CORR:
		ext_corr(m, ev);
		break;
	default:
		break;
	}
}
