/* The nodes of the NCCL join by id. */
#include "model/nccl_ops_int.h"
#include "util/xalloc.h"

#include <string.h>

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

struct node *nops_get(struct nccl_ops *e, uint64_t id)
{
	struct node *x = nops_find(e, id);
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

void nops_drop(struct nccl_ops *e, struct node *x)
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

int nops_cmp_ts(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}
