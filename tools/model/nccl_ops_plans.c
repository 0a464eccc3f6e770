// SPDX-License-Identifier: MIT
/* Plans handed out once quiet, with their operations filled in. */
#include "model/nccl_ops_int.h"
#include "util/xalloc.h"
#include "read/nccl_names.h"

#include <stdlib.h>
#include <string.h>

/* ---- handing out plans ---- */

static const struct nccl_comm *comm_of(const struct nccl_ops *e, uint64_t ctx)
{
	for (size_t i = 0; i < e->ncomm; i++)
		if (e->comm[i]->ctx == ctx)
			return e->comm[i];
	return NULL;
}

static int64_t step_of(const struct nccl_ops *e, uint64_t ts)
{
	int64_t s = e->step_range ? -1 : 0;
	if (!e->steps_unsorted) {
		/* In time order (as one thread records them): the last step
		 * at or before ts, by binary search. */
		size_t lo = 0, hi = e->nsteps;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (e->steps[mid].ts <= ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo ? e->steps[lo - 1].step : s;
	}
	uint64_t best = 0;
	for (size_t i = 0; i < e->nsteps; i++)
		if (e->steps[i].ts <= ts && e->steps[i].ts >= best) {
			best = e->steps[i].ts;
			s = e->steps[i].step;
		}
	return s;
}

static uint64_t to_host(const struct nccl_ops *e, uint64_t raw)
{
	return raw && e->have_offset ? (uint64_t)((int64_t)raw + e->gpu_offset) : 0;
}

static void fill_op(struct nccl_ops *e, struct nccl_op *o, struct node *t, struct node *plan,
                    struct node *launch)
{
	memset(o, 0, sizeof *o);
	o->id = t->id;
	o->comm = comm_of(e, t->ctx);
	struct node *api = nops_find(e, t->parent);
	if (api && api->kind != CT_EV_NCCL_COLL_API && api->kind != CT_EV_NCCL_P2P_API)
		api = NULL;
	/* The user's view of the call when there is one: the task of an
	 * AllGather or Broadcast counts bytes of ncclInt8. */
	const struct node *src = api && api->func ? api : t;
	memcpy(o->func, e->names[src->func], NCCL_NAME);
	memcpy(o->datatype, e->names[src->dtype], NCCL_NAME);
	o->count = src->count;
	memcpy(o->algo, e->names[t->algo], NCCL_NAME);
	memcpy(o->proto, e->names[t->proto], NCCL_NAME);
	o->is_p2p = t->kind == CT_EV_NCCL_P2P;
	o->root = o->is_p2p ? -1 : t->root;
	o->peer = o->is_p2p ? t->root : -1;
	if (api && !o->is_p2p)
		o->root = api->root;
	o->has_seq = t->kind == CT_EV_NCCL_COLL;
	o->seq = t->seq;
	o->channels = t->nch;
	o->warps = t->nwarps;
	o->rank = t->rank >= 0 ? t->rank : o->comm ? o->comm->rank : -1;
	o->type_size = nccl_type_size(o->datatype);
	o->bytes = nccl_msg_bytes(o->func, o->count, o->type_size, o->comm ? o->comm->nranks : 0);
	o->stream = api ? api->stream : launch ? launch->stream : 0;
	o->tid = api ? api->tid : t->tid;
	if (api) {
		o->api_start = api->ts;
		o->api_end = api->flags & F_STOPPED ? api->end : 0;
	}
	o->enqueue_start = api ? api->ts : plan ? plan->ts : t->ts;
	o->enqueue_end = launch && (launch->flags & F_STOPPED) ? launch->end
	                 : o->api_end                          ? o->api_end
	                                                       : t->ts;
	if (t->gmin != UINT64_MAX && t->gmax >= t->gmin) {
		o->gpu_raw_start = t->gmin;
		o->gpu_raw_end = t->gmax;
		o->gpu_start = to_host(e, t->gmin);
		o->gpu_end = to_host(e, t->gmax);
	}
	o->gpu_channels = t->gch;
	o->gpu_done = (t->gch && t->gdone >= t->gch) ||
	              (launch && launch->kernel && nops_kernel(e, launch)->end);
	uint64_t gid = api ? api->parent : launch ? launch->parent : 0;
	struct node *g = nops_find(e, gid);
	if (g && g->kind == CT_EV_NCCL_GROUP_API) {
		o->group = g->id;
		o->group_start = g->ts;
		o->group_end = g->flags & F_STOPPED ? g->end : 0;
		o->group_size = g->members;
		o->group_depth = (unsigned)g->depth;
		o->group_first = !(g->flags & F_REPORTED);
		g->flags |= F_REPORTED;
	}
	o->step = step_of(e, o->enqueue_start);
}

static int cmp_op(const void *a, const void *b)
{
	const struct nccl_op *x = a, *y = b;
	uint64_t gx = x->gpu_start ? x->gpu_start : UINT64_MAX;
	uint64_t gy = y->gpu_start ? y->gpu_start : UINT64_MAX;
	if (gx != gy)
		return gx < gy ? -1 : 1;
	if (x->enqueue_start != y->enqueue_start)
		return x->enqueue_start < y->enqueue_start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Hands out plan p (or the lone task t) and forgets its tasks and itself. */
static void emit(struct nccl_ops *e, struct node *p, struct node *lone)
{
	size_t n = 0;
	for (int32_t i = p ? p->tasks : (int32_t)(lone - e->n); i >= 0; i = p ? e->n[i].sib : -1)
		n++;
	if (n > e->opcap) {
		e->opcap = n * 2;
		e->ops = xrealloc(e->ops, e->opcap * sizeof *e->ops);
	}
	struct node *launch = p ? nops_find(e, p->link) : NULL;
	if (launch && launch->kind != CT_EV_NCCL_LAUNCH)
		launch = NULL;
	struct nccl_plan pl;
	memset(&pl, 0, sizeof pl);
	size_t k = 0;
	for (int32_t i = p ? p->tasks : (int32_t)(lone - e->n); i >= 0; i = p ? e->n[i].sib : -1) {
		struct nccl_op *o = &e->ops[k++];
		fill_op(e, o, &e->n[i], p, launch);
		if (o->gpu_start && (!pl.gpu_start || o->gpu_start < pl.gpu_start))
			pl.gpu_start = o->gpu_start;
		if (o->gpu_end > pl.gpu_end)
			pl.gpu_end = o->gpu_end;
	}
	if (n > 1)
		qsort(e->ops, n, sizeof *e->ops, cmp_op);
	struct node *t0 = p ? &e->n[p->tasks] : lone;
	pl.comm = comm_of(e, p ? p->ctx : t0->ctx);
	pl.id = p ? p->id : 0;
	pl.ops = e->ops;
	pl.n = n;
	if (launch) {
		pl.launch = launch->id;
		pl.launch_start = launch->ts;
		pl.launch_end = launch->flags & F_STOPPED ? launch->end : 0;
		pl.stream = launch->stream;
		pl.has_kernel = launch->kernel != 0;
		if (launch->kernel)
			pl.kernel = *nops_kernel(e, launch);
	}
	e->fn(e->ctx, &pl);
	/* Forget the tasks, the plan, and the launch with its kernel. */
	int32_t i = p ? p->tasks : (int32_t)(lone - e->n);
	while (i >= 0) {
		int32_t nx = p ? e->n[i].sib : -1;
		nops_drop(e, &e->n[i]);
		i = nx;
	}
	if (launch)
		nops_drop(e, launch);
	if (p)
		nops_drop(e, p);
}

/* A plan, or a task without one, untouched since limit. */
static int quiet_plan(const struct node *x, uint64_t limit)
{
	return x->last <= limit && plan_like(x);
}

static int any_plan(const struct node *x, uint64_t limit)
{
	(void)limit;
	return plan_like(x);
}

static void keep(struct nccl_ops *e, uint64_t id)
{
	struct node *x = nops_find(e, id);
	if (x)
		x->kept = e->epoch;
}

/* A new mark for the nodes to keep: no pass clears the last one. */
static void new_epoch(struct nccl_ops *e)
{
	if (++e->epoch == 0) { /* wrapped: old marks could match again */
		for (size_t i = 0; i < e->nn; i++)
			e->n[i].kept = 0;
		e->epoch = 1;
	}
}

/* Prefetches a node: its three lines, or (whole = 0) line 0 alone. */
static void pf_node(const struct node *x, int whole)
{
	const char *c = (const char *)x;
	__builtin_prefetch(c);
	if (whole) {
		__builtin_prefetch(c + 64);
		__builtin_prefetch(c + 128);
	}
}

/* Emitting a plan reads its nodes long after they were made (cold):
 * stage 1 fetches a plan's first task and its launch, stage 2 (later,
 * with those in cache) the task's call and that call's group. Marking
 * what held plans refer to (whole = 0) reads line 0 of the task, launch
 * and call alone. */
static void ahead(struct nccl_ops *e, struct node *p, int stage, int whole)
{
	if (!p)
		return;
	struct node *t = p->tasks >= 0 ? &e->n[p->tasks] : p;
	if (stage == 1) {
		pf_node(t, whole);
		struct node *l = nops_find(e, p->tasks >= 0 ? p->link : 0);
		if (l)
			pf_node(l, whole);
		return;
	}
	struct node *a = nops_find(e, t->parent);
	if (a) {
		pf_node(a, whole);
		struct node *g = whole ? nops_find(e, a->parent) : NULL;
		if (g)
			pf_node(g, whole);
	}
}

/* More than e->hold nodes held: hands out the older half of the plans (by
 * start, then id, as a sweep would), quiet or not, then forgets the nodes
 * no held task refers to that are older than the plans handed out, and
 * kernels that started before them (no held launch can claim those: a
 * kernel starts after its launch). A record that arrives later than that
 * finds its plan gone and makes a plan of its own, as after the horizon. */
static void force(struct nccl_ops *e)
{
	size_t np;
	struct node **ps = nops_plans(e, any_plan, 0, &np);
	size_t k = (np + 1) / 2;
	if (!k) {
		free(ps);
		return;
	}
	uint64_t cut = ps[0]->ts, limit = 0;
	for (size_t i = 0; i < k; i++) {
		if (i + 8 < k)
			__builtin_prefetch(nops_find(e, ps[i + 8]->link));
		struct node *l = nops_find(e, ps[i]->link);
		if (ps[i]->last > limit)
			limit = ps[i]->last;
		if (l && l->ts > limit)
			limit = l->ts;
	}
	nops_match_kernels(e, limit);
	for (size_t i = 0; i < k; i++) {
		ahead(e, i + 16 < k ? ps[i + 16] : NULL, 1, 1);
		ahead(e, i + 8 < k ? ps[i + 8] : NULL, 2, 1);
		emit(e, ps[i]->tasks >= 0 ? ps[i] : NULL, ps[i]->tasks >= 0 ? NULL : ps[i]);
	}
	/* What the plans still held refer to stays. */
	new_epoch(e);
	uint8_t ep = e->epoch;
	for (size_t i = k; i < np; i++) {
		ahead(e, i + 16 < np ? ps[i + 16] : NULL, 1, 0);
		ahead(e, i + 8 < np ? ps[i + 8] : NULL, 2, 0);
		struct node *x = ps[i];
		x->kept = ep;
		uint64_t link = x->tasks >= 0 ? x->link : 0;
		keep(e, link);
		struct node *l = nops_find(e, link);
		if (l)
			keep(e, l->parent);
		for (int32_t t = x->tasks >= 0 ? x->tasks : (int32_t)(x - e->n); t >= 0;
		     t = x->tasks >= 0 ? e->n[t].sib : -1) {
			uint64_t api = e->n[t].parent;
			e->n[t].kept = ep;
			keep(e, api);
			struct node *a = nops_find(e, api);
			if (a)
				keep(e, a->parent);
		}
	}
	free(ps);
	/* One pass over the held set (far larger than the caches): forgets,
	 * and stacks the free nodes lowest index on top (so the pass runs
	 * down): the nodes made next (in the order their records come) then
	 * lie one after another in memory, as they are read again when their
	 * plan is handed out. */
	e->nfree = 0;
	for (size_t i = e->nn; i-- > 0;) {
		struct node *x = &e->n[i];
		if (!x->id) {
			nops_free_push(e, (int32_t)i);
		} else if (x->kept != ep && x->last < cut) {
			struct node *t = x->kind == CT_EV_NCCL_KERNEL_CH ? nops_find(e, x->parent) : NULL;
			if (!t || t->kept != ep) /* (else: an open channel of a held task) */
				nops_drop(e, x); /* (which stacks it) */
		}
	}
	size_t w = 0;
	for (size_t j = 0; j < e->nkern; j++) {
		if (e->kern[j].k.ts >= cut)
			e->kern[w++] = e->kern[j];
		else
			free(e->kern[j].k.name);
	}
	e->nkern = w;
}

/* Kernels nobody claimed for that long never will be. */
static void drop_old_kernels(struct nccl_ops *e, uint64_t old)
{
	size_t w = 0;
	for (size_t k = 0; k < e->nkern; k++) {
		if (e->kern[k].k.ts > old)
			e->kern[w++] = e->kern[k];
		else
			free(e->kern[k].k.name);
	}
	e->nkern = w;
}

/* Hands out plans quiet since before the horizon (all when final), then
 * forgets other nodes twice as old and kernels nobody claimed; with more
 * than e->hold nodes still held, forces the oldest plans out. */
void nops_sweep(struct nccl_ops *e, int final)
{
	if (!final && e->live > e->hold)
		force(e);
	uint64_t limit = final ? UINT64_MAX : e->now > e->horizon ? e->now - e->horizon : 0;
	if (!final && !limit)
		return;
	nops_match_kernels(e, limit);
	uint64_t old = final ? UINT64_MAX : limit > e->horizon ? limit - e->horizon : 0;
	if (!final && e->min_last > limit) {
		/* Nothing quiet since limit (nor since old, earlier): only the
		 * kernels nobody claimed are looked at. */
		drop_old_kernels(e, old);
		return;
	}
	/* Plans in the order they were made, so output is stable. */
	size_t np;
	struct node **ps = nops_plans(e, quiet_plan, limit, &np);
	/* Indices, not pointers: emitting frees nodes (it never grows the
	 * array, so the pointers above stay valid). */
	for (size_t i = 0; i < np; i++) {
		struct node *x = ps[i];
		if (!x->id)
			continue;
		if (x->tasks >= 0) {
			/* Tasks of a plan that is still busy wait with it. */
			int busy = 0;
			for (int32_t t = x->tasks; t >= 0; t = e->n[t].sib)
				busy |= e->n[t].last > limit;
			if (!busy)
				emit(e, x, NULL);
		} else {
			emit(e, NULL, x);
		}
	}
	free(ps);
	uint64_t min = UINT64_MAX;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (!x->id)
			continue;
		if (x->last <= old && !is_task(x) && x->tasks < 0)
			nops_drop(e, x);
		else if (x->last < min)
			min = x->last;
	}
	e->min_last = min;
	drop_old_kernels(e, old);
}
