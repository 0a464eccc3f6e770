/* Events arrive in file order, which is per-thread order only: the proxy
 * thread's kernel-channel events can come before the task they belong to,
 * a plan's events before its launch. So every id names a node, created on
 * first mention (as a placeholder when only referenced), filled in as its
 * events come, and plans are put together only when handed out. */
#include "model/nccl_ops.h"
#include "util/xalloc.h"
#include "read/gpu.h"
#include "read/nccl_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HORIZON_NS  (30ull * 1000000000ull)
#define SWEEP_EVERY 8192

enum { N_NONE = 0 }; /* node kind 0: only referenced so far */
enum { F_STOPPED = 1, F_REPORTED = 2, F_MATCHED = 4 };

struct node {
	uint64_t id;
	int32_t next;       /* hash chain, or free list */
	int32_t tasks, sib; /* plan: first task; task: next task of its plan */
	uint8_t kind, flags;
	uint64_t ctx, parent, link; /* task: its plan; plan: its launch */
	uint64_t ts, end, last;
	int64_t tid;
	char func[NCCL_NAME], dtype[NCCL_NAME], algo[NCCL_NAME], proto[NCCL_NAME];
	uint64_t count, seq, stream, depth;
	int64_t root, rank;
	unsigned nch, nwarps, members, gch;
	uint64_t gmin, gmax; /* task: GPU timer span; channel: its start */
	unsigned fmask;      /* launch: operations of its plan (func_bit) */
	int has_kernel;      /* launch: the NCCL kernel that ran it */
	struct nccl_kernel kernel;
};

struct kern {
	struct nccl_kernel k;
	int used;
};

struct smap { /* cudaStream_t value <-> CUPTI (device, stream) */
	uint64_t ptr, device, stream;
};

struct nccl_ops {
	nccl_plan_fn fn;
	void *ctx;
	struct node *n;
	size_t nn, cap;
	int32_t free;
	int32_t *bucket;
	size_t nbucket, live;
	struct nccl_comm *comm;
	size_t ncomm, commcap;
	struct kern *kern;
	size_t nkern, kerncap;
	struct smap *sm;
	size_t nsm;
	struct {
		uint64_t ts;
		int64_t step;
	} * steps;
	size_t nsteps, stepcap;
	int step_range;
	unsigned kkind;
	int kf[KF_N];
	uint8_t *is_nccl; /* per kernel-name string id: 0 not yet seen, 1 NCCL's, 2 not */
	size_t nis;
	int64_t gpu_offset; /* tracer clock - GPU timer, best estimate */
	int have_offset;
	uint64_t now, horizon;
	unsigned since_sweep;
	struct nccl_op *ops;
	size_t opcap;
};

static size_t hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v;
}

struct nccl_ops *nccl_ops_new(nccl_plan_fn fn, void *ctx)
{
	struct nccl_ops *e = calloc(1, sizeof *e);
	if (!e)
		exit(1);
	e->fn = fn;
	e->ctx = ctx;
	e->free = -1;
	e->nbucket = 1024;
	e->bucket = xrealloc(NULL, e->nbucket * sizeof *e->bucket);
	for (size_t i = 0; i < e->nbucket; i++)
		e->bucket[i] = -1;
	e->horizon = HORIZON_NS;
	e->kkind = 0;
	/* The GPU kernel kind, wherever the CUPTI source put it. */
	for (unsigned k = CT_EV_CUPTI_FIRST; k < CT_EV_CUPTI_END; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (!s || strcmp(s->name, "kernel"))
			continue;
		static const char *const want[KF_N] = {"ts",     "end",         "device", "context",
		                                       "stream", "correlation", "name"};
		int f[KF_N];
		for (int w = 0; w < KF_N; w++) {
			f[w] = -1;
			for (unsigned i = 0; i < s->nfields; i++)
				if (!strcmp(s->field[i], want[w]))
					f[w] = (int)i;
		}
		nccl_ops_kernel_kind(e, k, f);
		break;
	}
	return e;
}

void nccl_ops_kernel_kind(struct nccl_ops *e, unsigned kind, const int field[KF_N])
{
	/* Without a start, an end and a name a kernel cannot be placed. */
	if (field[KF_TS] < 0 || field[KF_END] < 0 || field[KF_NAME] < 0)
		return;
	e->kkind = kind;
	memcpy(e->kf, field, sizeof e->kf);
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

size_t nccl_ops_ncomms(const struct nccl_ops *e)
{
	return e->ncomm;
}

const struct nccl_comm *nccl_ops_comm(const struct nccl_ops *e, size_t i)
{
	return i < e->ncomm ? &e->comm[i] : NULL;
}

void nccl_ops_free(struct nccl_ops *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nkern; i++)
		free(e->kern[i].k.name);
	free(e->n), free(e->bucket), free(e->comm), free(e->kern), free(e->sm), free(e->steps);
	free(e->ops);
	free(e->is_nccl);
	free(e);
}

/* ---- nodes ---- */

static struct node *find(struct nccl_ops *e, uint64_t id)
{
	if (!id)
		return NULL;
	for (int32_t i = e->bucket[hash64(id) & (e->nbucket - 1)]; i >= 0; i = e->n[i].next)
		if (e->n[i].id == id)
			return &e->n[i];
	return NULL;
}

static void rehash(struct nccl_ops *e)
{
	e->nbucket *= 2;
	e->bucket = xrealloc(e->bucket, e->nbucket * sizeof *e->bucket);
	for (size_t i = 0; i < e->nbucket; i++)
		e->bucket[i] = -1;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (!x->id)
			continue;
		int32_t *b = &e->bucket[hash64(x->id) & (e->nbucket - 1)];
		x->next = *b;
		*b = (int32_t)i;
	}
}

/* The node of id, created empty when new. Pointers into e->n stay valid
 * until the next call (the array may move). */
static struct node *get(struct nccl_ops *e, uint64_t id)
{
	struct node *x = find(e, id);
	if (x || !id)
		return x;
	int32_t i;
	if (e->free >= 0) {
		i = e->free;
		e->free = e->n[i].next;
	} else {
		if (e->nn == e->cap) {
			e->cap = e->cap ? e->cap * 2 : 256;
			e->n = xrealloc(e->n, e->cap * sizeof *e->n);
		}
		i = (int32_t)e->nn++;
	}
	x = &e->n[i];
	memset(x, 0, sizeof *x);
	x->id = id;
	x->tasks = x->sib = -1;
	x->rank = x->root = -1;
	x->gmin = UINT64_MAX;
	int32_t *b = &e->bucket[hash64(id) & (e->nbucket - 1)];
	x->next = *b;
	*b = i;
	if (++e->live > e->nbucket * 2)
		rehash(e);
	return &e->n[i];
}

static void drop(struct nccl_ops *e, struct node *x)
{
	int32_t i = (int32_t)(x - e->n);
	for (int32_t *p = &e->bucket[hash64(x->id) & (e->nbucket - 1)]; *p >= 0; p = &e->n[*p].next)
		if (*p == i) {
			*p = x->next;
			break;
		}
	if (x->has_kernel)
		free(x->kernel.name);
	x->id = 0;
	x->next = e->free;
	e->free = i;
	e->live--;
}

static void touch(struct nccl_ops *e, uint64_t id, uint64_t ts)
{
	struct node *x = find(e, id);
	if (x && ts > x->last)
		x->last = ts;
}

static void copy_name(char *dst, const struct ct_event *ev, unsigned i)
{
	size_t n = ev->sl[i] < NCCL_NAME - 1 ? ev->sl[i] : NCCL_NAME - 1;
	memcpy(dst, ev->s[i], n);
	dst[n] = 0;
}

/* ---- events ---- */

static void define_comm(struct nccl_ops *e, const struct ct_event *ev)
{
	struct nccl_comm *c = NULL;
	for (size_t i = 0; i < e->ncomm; i++)
		if (e->comm[i].ctx == ev->v[1])
			c = &e->comm[i]; /* a fork child's file repeats definitions */
	if (!c) {
		if (e->ncomm == e->commcap) {
			e->commcap = e->commcap ? e->commcap * 2 : 8;
			e->comm = xrealloc(e->comm, e->commcap * sizeof *e->comm);
		}
		c = &e->comm[e->ncomm];
		c->index = (int)e->ncomm++;
	}
	c->ctx = ev->v[1];
	c->hash = ev->v[2];
	c->nnodes = (int64_t)ev->v[3];
	c->nranks = (int64_t)ev->v[4];
	c->rank = (int64_t)ev->v[5];
	c->abi = (unsigned)ev->v[6];
	size_t n = ev->sl[7] < sizeof c->name - 1 ? ev->sl[7] : sizeof c->name - 1;
	memcpy(c->name, ev->s[7], n);
	c->name[n] = 0;
}

static const struct nccl_comm *comm_of(const struct nccl_ops *e, uint64_t ctx)
{
	for (size_t i = 0; i < e->ncomm; i++)
		if (e->comm[i].ctx == ctx)
			return &e->comm[i];
	return NULL;
}

static void add_task(struct nccl_ops *e, struct node *x)
{
	uint64_t id = x->id, plan = x->link, parent = x->parent, ts = x->ts;
	if (plan) {
		struct node *p = get(e, plan);
		x = find(e, id);
		x->sib = p->tasks;
		p->tasks = (int32_t)(x - e->n);
		p->members++;
		if (ts > p->last)
			p->last = ts;
	}
	touch(e, parent, ts);
}

static void kernel_channel(struct nccl_ops *e, const struct ct_event *ev)
{
	uint64_t ts = ev->v[0], raw = ev->v[5];
	/* The proxy sees a channel start after it happened: the smallest
	 * (host time - GPU time) is the closest to the clocks' offset. */
	int64_t off = (int64_t)(ts - raw);
	if (raw && (!e->have_offset || off < e->gpu_offset)) {
		e->gpu_offset = off;
		e->have_offset = 1;
	}
	struct node *c = get(e, ev->v[1]);
	c->kind = CT_EV_NCCL_KERNEL_CH;
	c->ts = c->last = ts;
	c->parent = ev->v[3];
	c->gmin = raw;
	uint64_t parent = c->parent;
	struct node *t = get(e, parent);
	if (!t)
		return;
	if (raw && raw < t->gmin)
		t->gmin = raw;
	t->gch++;
	if (ts > t->last)
		t->last = ts;
	touch(e, t->link, ts);
}

static void state(struct nccl_ops *e, const struct ct_event *ev)
{
	struct node *x = find(e, ev->v[1]);
	if (!x)
		return;
	if (ev->v[2] == 22 && x->kind == CT_EV_NCCL_KERNEL_CH) { /* a channel's GPU end */
		uint64_t ts = ev->v[0], raw = ev->v[3], parent = x->parent;
		drop(e, x);
		struct node *t = get(e, parent);
		if (!t)
			return;
		if (raw > t->gmax)
			t->gmax = raw;
		if (ts > t->last)
			t->last = ts;
		touch(e, t->link, ts);
	}
}

static void kernel_event(struct nccl_ops *e, const struct ct_event *ev)
{
	const int *f = e->kf;
	const char *name = ev->s[f[KF_NAME]];
	uint32_t len = ev->sl[f[KF_NAME]];
	/* Most kernels are not NCCL's: interned names are classified once. */
	uint64_t sid = ev->v[f[KF_NAME]];
	if (sid >= CT_SID_FIRST && sid < (1u << 28)) {
		size_t k = sid - CT_SID_FIRST;
		if (k >= e->nis) {
			size_t n = e->nis ? e->nis : 1024;
			while (n <= k)
				n *= 2;
			e->is_nccl = xrealloc(e->is_nccl, n);
			memset(e->is_nccl + e->nis, 0, n - e->nis);
			e->nis = n;
		}
		if (!e->is_nccl[k])
			e->is_nccl[k] = nccl_kernel_is_comm(name, len) ? 1 : 2;
		if (e->is_nccl[k] != 1)
			return;
	} else if (!nccl_kernel_is_comm(name, len)) {
		return;
	}
	if (e->nkern == e->kerncap) {
		e->kerncap = e->kerncap ? e->kerncap * 2 : 64;
		e->kern = xrealloc(e->kern, e->kerncap * sizeof *e->kern);
	}
	struct kern *k = &e->kern[e->nkern++];
	memset(k, 0, sizeof *k);
	k->k.ts = ev->v[f[KF_TS]];
	k->k.end = ev->v[f[KF_END]];
	k->k.device = f[KF_DEVICE] >= 0 ? ev->v[f[KF_DEVICE]] : 0;
	k->k.context = f[KF_CONTEXT] >= 0 ? ev->v[f[KF_CONTEXT]] : 0;
	k->k.stream = f[KF_STREAM] >= 0 ? ev->v[f[KF_STREAM]] : 0;
	k->k.correlation = f[KF_CORR] >= 0 ? ev->v[f[KF_CORR]] : 0;
	size_t dn;
	k->k.name = gpu_demangle(name, len, &dn); /* as the kernel's slice names it */
	if (k->k.end > e->now)
		e->now = k->k.end;
}

static void sweep(struct nccl_ops *e, int final);

/* The node of a start event (id in field 1, context in field 2), with what
 * every start records. */
static struct node *start_node(struct nccl_ops *e, const struct ct_event *ev, uint64_t ts)
{
	struct node *x = get(e, ev->v[1]);
	if (x) {
		x->kind = (uint8_t)ev->kind;
		x->ts = ts;
		x->last = ts > x->last ? ts : x->last;
		x->ctx = ev->v[2];
		x->tid = ev->tid;
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
		e->steps[e->nsteps].ts = ev->v[0];
		e->steps[e->nsteps++].step = (int64_t)ev->v[1];
		return;
	}
	if (e->kkind && kind == e->kkind) {
		kernel_event(e, ev);
		return;
	}
	if (kind < CT_EV_NCCL_FIRST || kind >= CT_EV_NCCL_END || !ct_schema_of(kind))
		return;
	uint64_t ts = ev->v[0];
	if (ts > e->now)
		e->now = ts;
	struct node *x;
	switch (kind) {
	case CT_EV_NCCL_COMM:
		define_comm(e, ev);
		break;
	case CT_EV_NCCL_GROUP_API:
		if (!(x = start_node(e, ev, ts)))
			break;
		x->depth = ev->v[3];
		break;
	case CT_EV_NCCL_COLL_API:
	case CT_EV_NCCL_P2P_API: {
		int coll = kind == CT_EV_NCCL_COLL_API;
		if (!(x = start_node(e, ev, ts)))
			break;
		x->parent = ev->v[3];
		copy_name(x->func, ev, 4);
		copy_name(x->dtype, ev, 5);
		x->count = ev->v[6];
		x->root = coll ? (int64_t)ev->v[7] : -1;
		x->stream = ev->v[coll ? 8 : 7];
		uint64_t parent = x->parent;
		struct node *g = get(e, parent);
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
		x->parent = ev->v[3];
		x->stream = ev->v[4];
		break;
	case CT_EV_NCCL_GROUP:
		if (!(x = start_node(e, ev, ts)))
			break;
		x->link = ev->v[3];
		touch(e, x->link, ts);
		break;
	case CT_EV_NCCL_COLL:
	case CT_EV_NCCL_P2P: {
		int coll = kind == CT_EV_NCCL_COLL;
		if (!(x = start_node(e, ev, ts)))
			break;
		x->parent = ev->v[3];
		x->link = ev->v[4];
		if (coll) {
			x->seq = ev->v[5];
			copy_name(x->func, ev, 6);
			copy_name(x->dtype, ev, 7);
			x->count = ev->v[8];
			x->root = (int64_t)ev->v[9];
			x->nch = (unsigned)ev->v[10];
			x->nwarps = (unsigned)ev->v[11];
			copy_name(x->algo, ev, 12);
			copy_name(x->proto, ev, 13);
			x->rank = (int64_t)ev->v[14];
		} else {
			copy_name(x->func, ev, 5);
			copy_name(x->dtype, ev, 6);
			x->count = ev->v[7];
			x->root = (int64_t)ev->v[8]; /* the peer */
			x->nch = (unsigned)ev->v[9];
			x->rank = (int64_t)ev->v[10];
		}
		add_task(e, x);
		break;
	}
	case CT_EV_NCCL_KERNEL_CH:
		kernel_channel(e, ev);
		break;
	case CT_EV_NCCL_STOP:
		x = find(e, ev->v[1]);
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
		sweep(e, 0);
	}
}

/* ---- kernels to launches ---- */

static int cmp_ts(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;
	return x->k.ts < y->k.ts ? -1 : x->k.ts > y->k.ts;
}

/* NCCL kernels are named after what they run (ncclDevKernel_AllGather_..)
 * or not (..._Generic_.., SendRecv for all point-to-point). A kernel that
 * names another operation than its plan's is not the plan's. */
static unsigned func_bit(const char *s, size_t n)
{
	static const char *const f[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
	                                "Reduce",    "Send",      "Recv",          "SendRecv"};
	static const unsigned bit[] = {1, 2, 4, 8, 16, 32, 32, 32};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		if (strlen(f[i]) == n && !memcmp(f[i], s, n))
			return bit[i];
	return 0;
}

static unsigned kernel_bit(const char *name)
{
	const char *p = strstr(name, "Kernel_");
	if (!p)
		return 0;
	p += 7;
	size_t n = strcspn(p, "_(<");
	return func_bit(p, n);
}

static void plan_masks(struct nccl_ops *e)
{
	for (size_t i = 0; i < e->nn; i++) {
		struct node *g = &e->n[i];
		if (!g->id || g->tasks < 0)
			continue;
		struct node *l = find(e, g->link);
		if (!l || l->kind != CT_EV_NCCL_LAUNCH)
			continue;
		for (int32_t t = g->tasks; t >= 0; t = e->n[t].sib)
			l->fmask |= func_bit(e->n[t].func, strlen(e->n[t].func));
	}
}

static struct smap *stream_of_ptr(struct nccl_ops *e, uint64_t ptr)
{
	for (size_t i = 0; i < e->nsm; i++)
		if (e->sm[i].ptr == ptr)
			return &e->sm[i];
	return NULL;
}

static int stream_taken(struct nccl_ops *e, uint64_t device, uint64_t stream)
{
	for (size_t i = 0; i < e->nsm; i++)
		if (e->sm[i].device == device && e->sm[i].stream == stream)
			return 1;
	return 0;
}

/* Each launch gets the earliest free NCCL kernel that started after it on
 * a stream consistent with what earlier matches taught: kernels of a
 * stream run in launch order, so on one stream this pairs them in order.
 * The first match of a cudaStream_t value fixes its CUPTI stream. */
static void match_kernels(struct nccl_ops *e, uint64_t limit)
{
	if (!e->nkern)
		return;
	if (e->nkern > 1)
		qsort(e->kern, e->nkern, sizeof *e->kern, cmp_kern);
	plan_masks(e);
	size_t nl = 0;
	struct node **l = NULL;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (x->id && x->kind == CT_EV_NCCL_LAUNCH && !(x->flags & F_MATCHED) &&
		    x->ts <= limit) {
			l = xrealloc(l, (nl + 1) * sizeof *l);
			l[nl++] = x;
		}
	}
	if (nl)
		qsort(l, nl, sizeof *l, cmp_ts);
	for (size_t i = 0; i < nl; i++) {
		struct node *x = l[i];
		struct smap *m = stream_of_ptr(e, x->stream);
		size_t lo = 0, hi = e->nkern; /* first kernel starting at or after the launch */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (e->kern[mid].k.ts < x->ts)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t k;
		for (k = lo; k < e->nkern; k++) {
			struct kern *kk = &e->kern[k];
			unsigned kb = kernel_bit(kk->k.name);
			if (kk->used || (kb && x->fmask && !(kb & x->fmask)))
				continue;
			if (m ? kk->k.device == m->device && kk->k.stream == m->stream
			      : !stream_taken(e, kk->k.device, kk->k.stream))
				break;
		}
		if (k == e->nkern)
			continue;
		struct kern *kk = &e->kern[k];
		kk->used = 1;
		x->kernel = kk->k; /* the launch owns the name from now on */
		x->has_kernel = 1;
		x->flags |= F_MATCHED;
		if (!m) {
			e->sm = xrealloc(e->sm, (e->nsm + 1) * sizeof *e->sm);
			e->sm[e->nsm++] = (struct smap){x->stream, kk->k.device, kk->k.stream};
		}
	}
	free(l);
	/* Claimed kernels leave the list. */
	size_t w = 0;
	for (size_t k = 0; k < e->nkern; k++)
		if (!e->kern[k].used)
			e->kern[w++] = e->kern[k];
	e->nkern = w;
}

/* ---- handing out plans ---- */

static int64_t step_of(const struct nccl_ops *e, uint64_t ts)
{
	int64_t s = e->step_range ? -1 : 0;
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
	struct node *api = find(e, t->parent);
	if (api && api->kind != CT_EV_NCCL_COLL_API && api->kind != CT_EV_NCCL_P2P_API)
		api = NULL;
	/* The user's view of the call when there is one: the task of an
	 * AllGather or Broadcast counts bytes of ncclInt8. */
	const struct node *src = api && api->func[0] ? api : t;
	memcpy(o->func, src->func, NCCL_NAME);
	memcpy(o->datatype, src->dtype, NCCL_NAME);
	o->count = src->count;
	memcpy(o->algo, t->algo, NCCL_NAME);
	memcpy(o->proto, t->proto, NCCL_NAME);
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
	uint64_t gid = api ? api->parent : launch ? launch->parent : 0;
	struct node *g = find(e, gid);
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
	struct node *launch = p ? find(e, p->link) : NULL;
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
		pl.has_kernel = launch->has_kernel;
		pl.kernel = launch->kernel;
	}
	e->fn(e->ctx, &pl);
	/* Forget the tasks, the plan, and the launch with its kernel. */
	int32_t i = p ? p->tasks : (int32_t)(lone - e->n);
	while (i >= 0) {
		int32_t nx = p ? e->n[i].sib : -1;
		drop(e, &e->n[i]);
		i = nx;
	}
	if (launch)
		drop(e, launch);
	if (p)
		drop(e, p);
}

static int is_task(const struct node *x)
{
	return x->kind == CT_EV_NCCL_COLL || x->kind == CT_EV_NCCL_P2P;
}

/* Hands out plans quiet since before the horizon (all when final), then
 * forgets other nodes twice as old and kernels nobody claimed. */
static void sweep(struct nccl_ops *e, int final)
{
	uint64_t limit = final ? UINT64_MAX : e->now > e->horizon ? e->now - e->horizon : 0;
	if (!final && !limit)
		return;
	match_kernels(e, limit);
	/* Plans in the order they were made, so output is stable. */
	size_t np = 0;
	struct node **ps = NULL;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (!x->id || x->last > limit)
			continue;
		if (x->tasks >= 0 || (is_task(x) && !x->link)) {
			ps = xrealloc(ps, (np + 1) * sizeof *ps);
			ps[np++] = x;
		}
	}
	if (np)
		qsort(ps, np, sizeof *ps, cmp_ts);
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
	uint64_t old = final ? UINT64_MAX : limit > e->horizon ? limit - e->horizon : 0;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (x->id && x->last <= old && !is_task(x) && x->tasks < 0)
			drop(e, x);
	}
	/* Kernels nobody claimed for that long never will be. */
	size_t w = 0;
	for (size_t k = 0; k < e->nkern; k++) {
		if (e->kern[k].k.ts > old)
			e->kern[w++] = e->kern[k];
		else
			free(e->kern[k].k.name);
	}
	e->nkern = w;
}

void nccl_ops_finish(struct nccl_ops *e)
{
	sweep(e, 1);
}
