// SPDX-License-Identifier: MIT
/* The nodes of the NCCL join by id. */
#include "model/nccl_ops_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct node *nops_get(struct nccl_ops *e, uint64_t id)
{
	struct node *x = nops_find(e, id);
	if (x || !id)
		return x;
	int32_t i;
	if (e->nfree) {
		i = e->free[--e->nfree];
		/* The next node to be made: cold, about to be written whole. */
		if (e->nfree)
			for (int l = 0; l < 3; l++)
				__builtin_prefetch((char *)&e->n[e->free[e->nfree - 1]] + 64 * l, 1);
	} else {
		if (e->nn == e->cap) {
			/* On cache-line boundaries (see struct node), so not
			 * grown by realloc: room for twice HOLD_NODES at once
			 * (pages untouched cost nothing), copied only beyond. */
			size_t cap = e->cap ? e->cap * 2 : 2 * HOLD_NODES;
			struct node *n = aligned_alloc(64, cap * sizeof *n);
			if (!n)
				xoom();
			if (e->nn)
				memcpy(n, e->n, e->nn * sizeof *n);
			free(e->n);
			e->n = n, e->cap = cap;
		}
		i = (int32_t)e->nn++;
	}
	e->live++;
	x = &e->n[i];
	memset(x, 0, sizeof *x);
	x->id = id;
	x->tasks = x->sib = -1;
	x->rank = x->root = -1;
	x->gmin = UINT64_MAX;
	idmap_put(&e->ids, id, i);
	return &e->n[i];
}

void nops_drop(struct nccl_ops *e, struct node *x)
{
	int32_t i = (int32_t)(x - e->n);
	idmap_del(&e->ids, x->id);
	if (x->kernel) {
		struct launch_kernel *k = &e->lk[x->kernel - 1];
		free(k->k.name);
		k->next = e->lkfree;
		e->lkfree = (int32_t)(x->kernel - 1);
	}
	x->id = 0;
	e->live--;
	nops_free_push(e, i);
}

void nops_free_push(struct nccl_ops *e, int32_t i)
{
	if (e->nfree == e->freecap) {
		e->freecap = e->freecap ? 2 * e->freecap : 1024;
		e->free = xrealloc(e->free, e->freecap * sizeof *e->free);
	}
	e->free[e->nfree++] = i;
}

void nops_set_kernel(struct nccl_ops *e, struct node *x, const struct nccl_kernel *k)
{
	int32_t i = e->lkfree;
	if (i >= 0 && (size_t)i < e->nlk) {
		e->lkfree = e->lk[i].next;
	} else {
		if (e->nlk == e->lkcap) {
			e->lkcap = e->lkcap ? 2 * e->lkcap : 64;
			e->lk = xrealloc(e->lk, e->lkcap * sizeof *e->lk);
		}
		i = (int32_t)e->nlk++;
	}
	e->lk[i].k = *k;
	x->kernel = (uint32_t)i + 1;
}

uint16_t nops_name(struct nccl_ops *e, const char *s, size_t len)
{
	len = len < NCCL_NAME - 1 ? len : NCCL_NAME - 1;
	len = len ? strnlen(s, len) : 0;
	if (!e->nnames) { /* name 0: "" */
		e->namecap = 64;
		e->names = xcalloc(e->namecap, sizeof *e->names);
		e->nnames = 1;
	}
	if (!len)
		return 0;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	size_t i = (size_t)(h ^ h >> 29) & (NAME_SLOTS - 1);
	for (; e->name_slot[i]; i = (i + 1) & (NAME_SLOTS - 1)) {
		const char *n = e->names[e->name_slot[i] - 1];
		if (!memcmp(n, s, len) && !n[len])
			return (uint16_t)(e->name_slot[i] - 1);
	}
	if (e->nnames >= NAME_SLOTS / 2) /* absurd for NCCL's enumerations */
		return 0;
	if (e->nnames == e->namecap) {
		e->names = xrealloc(e->names, 2 * e->namecap * sizeof *e->names);
		memset(e->names + e->namecap, 0, e->namecap * sizeof *e->names);
		e->namecap *= 2;
	}
	memcpy(e->names[e->nnames], s, len);
	e->name_slot[i] = (uint16_t)(e->nnames + 1);
	return (uint16_t)e->nnames++;
}

/* Sorted with their keys beside them: comparing never reads a node (the
 * held set is far larger than the caches). */
struct sort_key {
	uint64_t ts, id;
	struct node *x;
};

static int cmp_ts(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The nodes of keys v[0..k) by start time, then id, as an array of
 * pointers in the place of v. */
static struct node **by_start(struct sort_key *v, size_t k, size_t *n)
{
	if (k)
		qsort(v, k, sizeof *v, cmp_ts);
	/* The pointers, in place of the keys (each fits where its key was). */
	struct node **out = (struct node **)v;
	for (size_t i = 0; i < k; i++)
		out[i] = v[i].x;
	*n = k;
	return out;
}

static void add_key(struct sort_key **v, size_t *k, size_t *cap, struct node *x)
{
	if (*k == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof **v);
	}
	(*v)[(*k)++] = (struct sort_key){x->ts, x->id, x};
}

struct node **nops_sorted(struct nccl_ops *e, int (*want)(const struct node *x, uint64_t limit),
                          uint64_t limit, size_t *n)
{
	size_t k = 0, cap = 0;
	struct sort_key *v = NULL;
	for (size_t i = 0; i < e->nn; i++) {
		struct node *x = &e->n[i];
		if (x->id && want(x, limit))
			add_key(&v, &k, &cap, x);
	}
	return by_start(v, k, n);
}

/* Keeps the entries of e->cand that are live plans, once each. */
static void cand_compact(struct nccl_ops *e)
{
	size_t w = 0;
	for (size_t i = 0; i < e->ncand; i++) {
		if (i + 16 < e->ncand) /* plans made long ago: cold */
			__builtin_prefetch(&e->n[e->cand[i + 16]]);
		struct node *x = &e->n[e->cand[i]];
		if (!(x->flags & F_CAND) || (x->flags & F_SEEN))
			continue; /* dropped (the slot cleared or reused), or a repeat */
		if (!x->id || !plan_like(x)) {
			x->flags &= (uint8_t)~F_CAND; /* listed again if it becomes one */
			continue;
		}
		x->flags |= F_SEEN;
		e->cand[w++] = e->cand[i];
	}
	e->ncand = w;
	for (size_t i = 0; i < w; i++)
		e->n[e->cand[i]].flags &= (uint8_t)~F_SEEN;
}

void nops_cand_add(struct nccl_ops *e, struct node *x)
{
	if (e->ncand == e->candcap) {
		/* Entries of dropped plans pile up only while no sweep looks
		 * for plans; bounded by the nodes held all the same. */
		if (e->ncand > 2 * e->live + 64)
			cand_compact(e);
		if (e->ncand == e->candcap) {
			e->candcap = e->candcap ? 2 * e->candcap : 1024;
			e->cand = xrealloc(e->cand, e->candcap * sizeof *e->cand);
		}
	}
	x->flags |= F_CAND;
	e->cand[e->ncand++] = (int32_t)(x - e->n);
}

struct node **nops_plans(struct nccl_ops *e, int (*want)(const struct node *x, uint64_t limit),
                         uint64_t limit, size_t *n)
{
	cand_compact(e);
	size_t k = 0, cap = e->ncand;
	struct sort_key *v = xrealloc(NULL, (cap ? cap : 1) * sizeof *v);
	for (size_t i = 0; i < e->ncand; i++) {
		struct node *x = &e->n[e->cand[i]];
		if (want(x, limit))
			add_key(&v, &k, &cap, x);
	}
	return by_start(v, k, n);
}
