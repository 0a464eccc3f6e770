// SPDX-License-Identifier: MIT
/* NCCL kernels recorded by CUPTI, kept until a launch claims them. */
#include "model/nccl_ops_int.h"
#include "util/xalloc.h"
#include "read/gpu_fields.h"
#include "read/nccl_names.h"

#include <stdlib.h>
#include <string.h>

void nops_kernel_event(struct nccl_ops *e, const struct ct_event *ev)
{
	const char *name = ev->s[F_KERNEL_NAME];
	uint32_t len = ev->sl[F_KERNEL_NAME];
	/* Most kernels are not NCCL's: interned names are classified once. */
	uint64_t sid = ev->v[F_KERNEL_NAME];
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
	k->k.ts = ev->v[F_KERNEL_TS];
	k->k.end = ev->v[F_KERNEL_END];
	k->k.device = ev->v[F_KERNEL_DEVICE];
	k->k.context = ev->v[F_KERNEL_CONTEXT];
	k->k.stream = ev->v[F_KERNEL_STREAM];
	k->k.correlation = ev->v[F_KERNEL_CORRELATION];
	size_t dn;
	k->k.name = gpu_demangle(name, len, &dn); /* as the kernel's slice names it */
	if (!k->k.name)
		xoom();
	if (k->k.end > e->now)
		e->now = k->k.end;
}

/* ---- kernels to launches ---- */

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
		struct node *l = nops_find(e, g->link);
		if (!l || l->kind != CT_EV_NCCL_LAUNCH)
			continue;
		for (int32_t t = g->tasks; t >= 0; t = e->n[t].sib)
			l->fmask |= func_bit(e->names[e->n[t].func], strlen(e->names[e->n[t].func]));
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

static int unmatched_launch(const struct node *x, uint64_t limit)
{
	return x->kind == CT_EV_NCCL_LAUNCH && !(x->flags & F_MATCHED) && x->ts <= limit;
}

/* Each launch gets the earliest free NCCL kernel that started after it on
 * a stream consistent with what earlier matches taught: kernels of a
 * stream run in launch order, so on one stream this pairs them in order.
 * The first match of a cudaStream_t value fixes its CUPTI stream. */
void nops_match_kernels(struct nccl_ops *e, uint64_t limit)
{
	if (!e->nkern)
		return;
	if (e->nkern > 1)
		qsort(e->kern, e->nkern, sizeof *e->kern, cmp_kern);
	plan_masks(e);
	size_t nl;
	struct node **l = nops_sorted(e, unmatched_launch, limit, &nl);
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
		nops_set_kernel(e, x, &kk->k); /* the launch owns the name from now on */
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
