// SPDX-License-Identifier: MIT
#include "model/nccl_ops_int.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The node array and id map of the join this thread finished last, for
 * its next one: files are read one after another, and a fresh array of
 * tens of MB costs a page fault per 4 KB every time (a tenth of the join's
 * time on the NCCL benchmark). One per thread, no bigger than a join's
 * own bound (HOLD_NODES), so memory stays flat; freed when the thread
 * ends. */
struct spare {
	struct node *n;
	size_t cap;
	struct idmap ids;
};
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void spare_free(void *p)
{
	struct spare *s = p;
	free(s->n);
	idmap_free(&s->ids);
	free(s);
}

static void spare_init(void)
{
	if (pthread_key_create(&spare_key, spare_free))
		exit(1);
}

static struct spare *spare_of_thread(void)
{
	pthread_once(&spare_once, spare_init);
	struct spare *s = pthread_getspecific(spare_key);
	if (!s) {
		s = xcalloc(1, sizeof *s);
		if (pthread_setspecific(spare_key, s)) /* ENOMEM */
			xoom();
	}
	return s;
}

struct nccl_ops *nccl_ops_new(nccl_plan_fn fn, void *ctx)
{
	struct nccl_ops *e = xcalloc(1, sizeof *e);
	struct spare *sp = spare_of_thread();
	e->n = sp->n, e->cap = sp->cap, e->ids = sp->ids;
	*sp = (struct spare){0};
	e->fn = fn;
	e->ctx = ctx;
	e->horizon = HORIZON_NS;
	e->hold = HOLD_NODES;
	e->min_last = UINT64_MAX;
	nops_name(e, "", 0); /* the table, with name 0 */
	e->lkfree = -1;
	/* The NCCL source's handles are a counter (handed out to each thread
	 * in blocks) above a 4-bit type code: ids of one thread's records
	 * come in runs, which the id map keeps together. */
	e->ids.shift = 4;
	return e;
}

void nccl_ops_step_range(struct nccl_ops *e, int on)
{
	e->step_range = on;
}

int nccl_step_range_of(const struct ct_header *h)
{
	const char *k = "CUPTRACE_STEP_RANGE=";
	const char *p = h->config ? strstr(h->config, k) : NULL;
	return p && (p == h->config || p[-1] == '\n') && p[strlen(k)] && p[strlen(k)] != '\n';
}

void nccl_ops_horizon(struct nccl_ops *e, uint64_t ns)
{
	e->horizon = ns;
}

void nccl_ops_hold(struct nccl_ops *e, size_t nodes)
{
	e->hold = nodes;
}

size_t nccl_ops_ncomms(const struct nccl_ops *e)
{
	return e->ncomm;
}

const struct nccl_comm *nccl_ops_comm(const struct nccl_ops *e, size_t i)
{
	return i < e->ncomm ? e->comm[i] : NULL;
}

void nccl_ops_free(struct nccl_ops *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nkern; i++)
		free(e->kern[i].k.name);
	/* What is left in them is dropped: the ids (none is live after the
	 * final sweep, but a join can be freed before it) and nothing else
	 * (nodes are cleared when taken). */
	if (e->live)
		idmap_clear(&e->ids);
	struct spare *s = spare_of_thread();
	free(s->n);
	idmap_free(&s->ids);
	*s = (struct spare){e->n, e->cap, e->ids};
	for (size_t i = 0; i < e->ncomm; i++)
		free(e->comm[i]);
	free(e->comm), free(e->kern), free(e->sm), free(e->steps);
	free(e->ops);
	free(e->cand);
	free(e->free);
	free(e->is_nccl);
	free(e->lk);
	free(e->names);
	free(e);
}

static uint16_t name_of(struct nccl_ops *e, const struct ct_event *ev, unsigned i)
{
	return nops_name(e, ev->s[i], ev->sl[i]);
}

/* ---- events ---- */

static void define_comm(struct nccl_ops *e, const struct ct_event *ev)
{
	struct nccl_comm *c = NULL;
	for (size_t i = 0; i < e->ncomm; i++)
		if (e->comm[i]->ctx == ev->v[F_NCCL_COMM_CTX])
			c = e->comm[i]; /* a fork child's file repeats definitions */
	if (!c) {
		if (e->ncomm == e->commcap) {
			e->commcap = e->commcap ? e->commcap * 2 : 8;
			e->comm = xrealloc(e->comm, e->commcap * sizeof *e->comm);
		}
		c = e->comm[e->ncomm] = xcalloc(1, sizeof *c);
		c->index = (int)e->ncomm++;
	}
	c->ctx = ev->v[F_NCCL_COMM_CTX];
	c->hash = ev->v[F_NCCL_COMM_COMM];
	c->nnodes = (int64_t)ev->v[F_NCCL_COMM_NNODES];
	c->nranks = (int64_t)ev->v[F_NCCL_COMM_NRANKS];
	c->rank = (int64_t)ev->v[F_NCCL_COMM_RANK];
	c->abi = (unsigned)ev->v[F_NCCL_COMM_ABI];
	uint32_t len = ev->sl[F_NCCL_COMM_NAME];
	size_t n = len < sizeof c->name - 1 ? len : sizeof c->name - 1;
	memcpy(c->name, ev->s[F_NCCL_COMM_NAME], n);
	c->name[n] = 0;
}

static void add_task(struct nccl_ops *e, struct node *x)
{
	uint64_t id = x->id, plan = x->link, parent = x->parent, ts = x->ts;
	if (plan) {
		struct node *p = nops_get(e, plan);
		x = nops_find(e, id);
		x->sib = p->tasks;
		p->tasks = (int32_t)(x - e->n);
		nops_cand(e, p);
		p->members++;
		if (ts > p->last)
			p->last = ts;
	}
	nops_touch(e, parent, ts);
}

static void kernel_channel(struct nccl_ops *e, const struct ct_event *ev)
{
	uint64_t ts = ev->v[F_NCCL_KERNEL_CH_TS], raw = ev->v[F_NCCL_KERNEL_CH_GPU_START];
	/* The proxy sees a channel start after it happened: the smallest
	 * (host time - GPU time) is the closest to the clocks' offset. */
	int64_t off = (int64_t)(ts - raw);
	if (raw && (!e->have_offset || off < e->gpu_offset)) {
		e->gpu_offset = off;
		e->have_offset = 1;
	}
	struct node *c = nops_get(e, ev->v[F_NCCL_KERNEL_CH_ID]);
	c->kind = CT_EV_NCCL_KERNEL_CH;
	c->ts = c->last = ts;
	c->parent = ev->v[F_NCCL_KERNEL_CH_PARENT];
	c->gmin = raw;
	uint64_t parent = c->parent;
	struct node *t = nops_get(e, parent);
	if (!t)
		return;
	if (raw && raw < t->gmin)
		t->gmin = raw;
	t->gch++;
	if (ts > t->last)
		t->last = ts;
	nops_touch(e, t->link, ts);
}

static void state(struct nccl_ops *e, const struct ct_event *ev)
{
	struct node *x = nops_find(e, ev->v[F_NCCL_STATE_ID]);
	if (!x)
		return;
	/* a channel's GPU end */
	if (ev->v[F_NCCL_STATE_STATE] == 22 && x->kind == CT_EV_NCCL_KERNEL_CH) {
		uint64_t ts = ev->v[F_NCCL_STATE_TS], raw = ev->v[F_NCCL_STATE_VALUE];
		uint64_t parent = x->parent;
		nops_drop(e, x);
		struct node *t = nops_get(e, parent);
		if (!t)
			return;
		if (raw > t->gmax)
			t->gmax = raw;
		t->gdone++;
		if (ts > t->last)
			t->last = ts;
		nops_touch(e, t->link, ts);
	}
}

/* The node of a start event (its id and context at F_NCCL_START_*), with
 * what every start records. */
static struct node *start_node(struct nccl_ops *e, const struct ct_event *ev, uint64_t ts)
{
	struct node *x = nops_get(e, ev->v[F_NCCL_START_ID]);
	if (x) {
		x->kind = (uint8_t)ev->kind;
		x->ts = ts;
		x->last = ts > x->last ? ts : x->last;
		x->ctx = ev->v[F_NCCL_START_CTX];
		x->tid = ev->tid;
		nops_cand(e, x);
	}
	return x;
}

void nccl_ops_event(struct nccl_ops *e, const struct ct_event *ev)
{
	unsigned kind = ev->kind;
	if (kind == CT_EV_STEP) {
		if (e->nsteps == e->stepcap) {
			e->stepcap = e->stepcap ? e->stepcap * 2 : 64;
			e->steps = xrealloc(e->steps, e->stepcap * sizeof *e->steps);
		}
		if (e->nsteps && ev->v[F_STEP_TS] < e->steps[e->nsteps - 1].ts)
			e->steps_unsorted = 1;
		e->steps[e->nsteps].ts = ev->v[F_STEP_TS];
		e->steps[e->nsteps++].step = (int64_t)ev->v[F_STEP_STEP];
		return;
	}
	if (kind == CT_EV_KERNEL) {
		nops_kernel_event(e, ev);
		return;
	}
	if (kind < CT_EV_NCCL_FIRST || kind >= CT_EV_NCCL_END || !ct_schema_of(kind))
		return;
	uint64_t ts = ev->v[F_TS];
	if (ts > e->now)
		e->now = ts;
	if (ts < e->min_last)
		e->min_last = ts; /* whatever this record touches gets a last >= ts */
	struct node *x;
	switch (kind) {
	case CT_EV_NCCL_COMM:
		define_comm(e, ev);
		break;
	case CT_EV_NCCL_GROUP_API:
		if (!(x = start_node(e, ev, ts)))
			break;
		x->depth = ev->v[F_NCCL_GROUP_API_DEPTH];
		break;
	case CT_EV_NCCL_COLL_API:
	case CT_EV_NCCL_P2P_API: {
		int coll = kind == CT_EV_NCCL_COLL_API;
		if (!(x = start_node(e, ev, ts)))
			break;
		if (coll) {
			x->parent = ev->v[F_NCCL_COLL_API_PARENT];
			x->func = name_of(e, ev, F_NCCL_COLL_API_FUNC);
			x->dtype = name_of(e, ev, F_NCCL_COLL_API_DATATYPE);
			x->count = ev->v[F_NCCL_COLL_API_COUNT];
			x->root = (int64_t)ev->v[F_NCCL_COLL_API_ROOT];
			x->stream = ev->v[F_NCCL_COLL_API_STREAM];
		} else {
			x->parent = ev->v[F_NCCL_P2P_API_PARENT];
			x->func = name_of(e, ev, F_NCCL_P2P_API_FUNC);
			x->dtype = name_of(e, ev, F_NCCL_P2P_API_DATATYPE);
			x->count = ev->v[F_NCCL_P2P_API_COUNT];
			x->root = -1;
			x->stream = ev->v[F_NCCL_P2P_API_STREAM];
		}
		uint64_t parent = x->parent;
		struct node *g = nops_get(e, parent);
		if (g) {
			g->members++;
			if (ts > g->last)
				g->last = ts;
		}
		break;
	}
	case CT_EV_NCCL_LAUNCH:
		if (!(x = start_node(e, ev, ts)))
			break;
		x->parent = ev->v[F_NCCL_LAUNCH_PARENT];
		x->stream = ev->v[F_NCCL_LAUNCH_STREAM];
		break;
	case CT_EV_NCCL_GROUP:
		if (!(x = start_node(e, ev, ts)))
			break;
		x->link = ev->v[F_NCCL_GROUP_LAUNCH];
		nops_cand(e, x);
		nops_touch(e, x->link, ts);
		break;
	case CT_EV_NCCL_COLL:
	case CT_EV_NCCL_P2P: {
		int coll = kind == CT_EV_NCCL_COLL;
		if (!(x = start_node(e, ev, ts)))
			break;
		if (coll)
			x->parent = ev->v[F_NCCL_COLL_PARENT], x->link = ev->v[F_NCCL_COLL_GROUP];
		else
			x->parent = ev->v[F_NCCL_P2P_PARENT], x->link = ev->v[F_NCCL_P2P_GROUP];
		nops_cand(e, x);
		if (coll) {
			x->seq = ev->v[F_NCCL_COLL_SEQ];
			x->func = name_of(e, ev, F_NCCL_COLL_FUNC);
			x->dtype = name_of(e, ev, F_NCCL_COLL_DATATYPE);
			x->count = ev->v[F_NCCL_COLL_COUNT];
			x->root = (int64_t)ev->v[F_NCCL_COLL_ROOT];
			x->nch = (unsigned)ev->v[F_NCCL_COLL_CHANNELS];
			x->nwarps = (unsigned)ev->v[F_NCCL_COLL_WARPS];
			x->algo = name_of(e, ev, F_NCCL_COLL_ALGO);
			x->proto = name_of(e, ev, F_NCCL_COLL_PROTO);
			x->rank = (int64_t)ev->v[F_NCCL_COLL_RANK];
		} else {
			x->func = name_of(e, ev, F_NCCL_P2P_FUNC);
			x->dtype = name_of(e, ev, F_NCCL_P2P_DATATYPE);
			x->count = ev->v[F_NCCL_P2P_COUNT];
			x->root = (int64_t)ev->v[F_NCCL_P2P_PEER]; /* the peer */
			x->nch = (unsigned)ev->v[F_NCCL_P2P_CHANNELS];
			x->rank = (int64_t)ev->v[F_NCCL_P2P_RANK];
		}
		add_task(e, x);
		break;
	}
	case CT_EV_NCCL_KERNEL_CH:
		kernel_channel(e, ev);
		break;
	case CT_EV_NCCL_STOP:
		x = nops_find(e, ev->v[F_NCCL_STOP_ID]);
		if (x) {
			x->end = ts;
			x->flags |= F_STOPPED;
			if (ts > x->last)
				x->last = ts;
		}
		break;
	case CT_EV_NCCL_STATE:
		state(e, ev);
		break;
	}
	if (++e->since_sweep >= SWEEP_EVERY) {
		e->since_sweep = 0;
		nops_sweep(e, 0);
	}
}

void nccl_ops_finish(struct nccl_ops *e)
{
	nops_sweep(e, 1);
}
