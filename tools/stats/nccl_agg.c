// SPDX-License-Identifier: MIT
#include "stats/nccl_agg.h"
#include "read/nccl_names.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const nccl_bucket_name[NB_N] = {"<64KB", "64KB-1MB", "1MB-16MB", ">16MB"};

int nccl_bucket(uint64_t b)
{
	return b < (64u << 10)   ? NB_64K
	       : b < (1u << 20)  ? NB_1M
	       : b < (16u << 20) ? NB_16M
	                         : NB_BIG;
}

static struct nccl_row *row(struct nccl_agg *a, int64_t rank, const char *func, const char *dtype)
{
	/* Few rows (ranks x operations x datatypes): a scan from the end,
	 * where the last one used usually is, is enough. */
	for (size_t i = a->n; i-- > 0;) {
		struct nccl_row *r = &a->v[i];
		if (r->rank == rank && !strcmp(r->func, func) && !strcmp(r->dtype, dtype))
			return r;
	}
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 32;
		a->v = xrealloc(a->v, a->cap * sizeof *a->v);
	}
	struct nccl_row *r = &a->v[a->n++];
	memset(r, 0, sizeof *r);
	r->rank = rank;
	snprintf(r->func, sizeof r->func, "%s", func);
	snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
	r->min = UINT64_MAX;
	return r;
}

/* FNV-1a over the key of a size row; never 0 (hmap's empty key). */
static uint64_t size_hash(const char *func, const char *dtype, uint64_t bytes, int64_t nranks)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = func; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull; /* "ab"+"c" is not "a"+"bc" */
	for (const char *p = dtype; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	h ^= bytes * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)nranks * 0xc2b2ae3d27d4eb4full;
	return h | 1;
}

/* The size row of (func, dtype, bytes, nranks), made when new. Sizes can
 * be many (AllToAllv, varying buckets): a hash finds them. */
static struct nccl_size_row *size_row(struct nccl_agg *a, const char *func, const char *dtype,
                                      uint64_t bytes, int64_t nranks)
{
	uint64_t h = size_hash(func, dtype, bytes, nranks);
	size_t head = (size_t)(uintptr_t)hmap_get(&a->sidx, h);
	for (size_t k = head; k; k = a->s[k - 1].next) {
		struct nccl_size_row *r = &a->s[k - 1];
		if (r->bytes == bytes && r->nranks == nranks && !strcmp(r->func, func) &&
		    !strcmp(r->dtype, dtype))
			return r;
	}
	if (a->ns == a->scap) {
		a->scap = a->scap ? a->scap * 2 : 32;
		a->s = xrealloc(a->s, a->scap * sizeof *a->s);
	}
	struct nccl_size_row *r = &a->s[a->ns++];
	memset(r, 0, sizeof *r);
	snprintf(r->func, sizeof r->func, "%s", func);
	snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
	r->bytes = bytes;
	r->nranks = nranks;
	r->min_ns = UINT64_MAX;
	r->next = head;
	hmap_put(&a->sidx, h, (void *)(uintptr_t)a->ns);
	return r;
}

/* Adds size row x's totals to r. */
static void fold_size(struct nccl_size_row *r, const struct nccl_size_row *x)
{
	r->calls += x->calls;
	r->timed += x->timed;
	r->time_ns += x->time_ns;
	r->min_ns = x->min_ns < r->min_ns ? x->min_ns : r->min_ns;
	r->max_ns = x->max_ns > r->max_ns ? x->max_ns : r->max_ns;
}

void nccl_agg_add(struct nccl_agg *a, int64_t rank, const char *func, const char *dtype,
                  uint64_t bytes, int64_t nranks, int has_time, uint64_t time_ns)
{
	struct nccl_size_row *z = size_row(a, func, dtype, bytes, nranks);
	z->calls++;
	if (has_time) {
		z->timed++;
		z->time_ns += time_ns;
		z->min_ns = time_ns < z->min_ns ? time_ns : z->min_ns;
		z->max_ns = time_ns > z->max_ns ? time_ns : z->max_ns;
	}
	struct nccl_row *r = row(a, rank, func, dtype);
	r->calls++;
	r->bytes += bytes;
	if (bytes < r->min)
		r->min = bytes;
	if (bytes > r->max)
		r->max = bytes;
	r->bucket[nccl_bucket(bytes)]++;
	if (has_time) {
		r->timed++;
		r->timed_bytes += bytes;
		r->time_ns += time_ns;
		r->bus_bytes += (double)bytes * nccl_bus_factor(func, nranks);
	}
}

/* Adds row x's totals to r. */
static void fold(struct nccl_row *r, const struct nccl_row *x)
{
	r->calls += x->calls;
	r->bytes += x->bytes;
	r->min = x->min < r->min ? x->min : r->min;
	r->max = x->max > r->max ? x->max : r->max;
	r->timed += x->timed;
	r->timed_bytes += x->timed_bytes;
	r->time_ns += x->time_ns;
	r->bus_bytes += x->bus_bytes;
	for (int b = 0; b < NB_N; b++)
		r->bucket[b] += x->bucket[b];
}

void nccl_agg_merge(struct nccl_agg *a, const struct nccl_agg *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct nccl_row *x = &from->v[i];
		fold(row(a, x->rank, x->func, x->dtype), x);
	}
	for (size_t i = 0; i < from->ns; i++) {
		const struct nccl_size_row *x = &from->s[i];
		fold_size(size_row(a, x->func, x->dtype, x->bytes, x->nranks), x);
	}
}

void nccl_agg_rerank(struct nccl_agg *a, int64_t from, int64_t to)
{
	if (from == to)
		return;
	size_t n = a->n;
	for (size_t i = 0; i < n; i++) {
		struct nccl_row x = a->v[i];
		if (x.rank != from)
			continue;
		a->v[i].rank = INT64_MIN; /* emptied below */
		fold(row(a, to, x.func, x.dtype), &x);
	}
	size_t w = 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].rank != INT64_MIN)
			a->v[w++] = a->v[i];
	a->n = w;
}

void nccl_agg_free(struct nccl_agg *a)
{
	free(a->v);
	free(a->s);
	hmap_free(&a->sidx);
	memset(a, 0, sizeof *a);
}
