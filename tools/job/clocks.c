// SPDX-License-Identifier: MIT
#include "job/clocks.h"
#include "job/nccl_match.h"
#include "model/nccl_ops.h"
#include "util/hmap.h"
#include "util/term_escape.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sample of the collectives is enough for a median: the first PER_COMM
 * of each communicator in each file, and MAX_SAMPLES rank ends in all
 * (memory stays bounded whatever the trace's length). */
#define PER_COMM 4096
#define MAX_SAMPLES (1u << 21)
#define ITERATIONS 8

struct sample {
	uint32_t host;
	int64_t t; /* the rank's GPU end on the job's timeline (anchors alone) */
};

struct est {
	struct inputs *in;
	uint32_t *host_of; /* file -> host */
	struct nm *m;
	struct hmap per_comm; /* comm hash + 1 -> collectives taken from this file */
	size_t file;
	struct sample *s;
	size_t ns, scap;
	size_t *coll; /* where each collective's samples begin in s */
	size_t ncoll, ccap;
};

int clocks_parse(const char *arg, int *mode)
{
	if (!strcmp(arg, "none"))
		*mode = ALIGN_NONE;
	else if (!strcmp(arg, "collectives"))
		*mode = ALIGN_COLLECTIVES;
	else
		return -1;
	return 0;
}

/* A collective matched across the files: kept when two hosts saw it. */
static void on_coll(void *ctx, const struct nm_coll *c)
{
	struct est *e = ctx;
	uint32_t first = UINT32_MAX;
	int hosts = 0;
	for (int i = 0; i < c->nranks && hosts < 2; i++) {
		if (c->t[i] == NM_NONE)
			continue;
		uint32_t h = e->host_of[c->who[i]];
		if (first == UINT32_MAX)
			first = h, hosts = 1;
		else if (h != first)
			hosts = 2;
	}
	if (hosts < 2 || e->ns + (size_t)c->seen > MAX_SAMPLES)
		return;
	if (e->ncoll + 1 >= e->ccap) {
		e->ccap = e->ccap ? e->ccap * 2 : 1024;
		e->coll = xrealloc(e->coll, e->ccap * sizeof *e->coll);
	}
	if (e->ns + (size_t)c->seen > e->scap) {
		e->scap = e->scap ? e->scap * 2 : 4096;
		while (e->scap < e->ns + (size_t)c->seen)
			e->scap *= 2;
		e->s = xrealloc(e->s, e->scap * sizeof *e->s);
	}
	e->coll[e->ncoll++] = e->ns;
	for (int i = 0; i < c->nranks; i++)
		if (c->t[i] != NM_NONE)
			e->s[e->ns++] = (struct sample){e->host_of[c->who[i]], c->t[i]};
	e->coll[e->ncoll] = e->ns;
}

/* The NCCL join's operations of one plan: collectives with a sequence
 * number and a GPU end (NCCL's kernel-channel timers). */
static void on_plan(void *ctx, const struct nccl_plan *p)
{
	struct est *e = ctx;
	struct tfile *t = &e->in->v[e->file];
	for (size_t i = 0; i < p->n; i++) {
		const struct nccl_op *o = &p->ops[i];
		const struct nccl_comm *cm = o->comm;
		if (!cm || o->is_p2p || !o->has_seq || !o->gpu_end || cm->nranks < 2)
			continue;
		uint64_t k = cm->hash + 1 + !(cm->hash + 1);
		uintptr_t taken = (uintptr_t)hmap_get(&e->per_comm, k);
		if (taken >= PER_COMM)
			continue;
		hmap_put(&e->per_comm, k, (void *)(taken + 1));
		int64_t crank = o->rank >= 0 ? o->rank : cm->rank;
		nm_add(e->m, cm->hash, cm->name, (int)cm->nranks, (int)crank, (int64_t)e->file, o->func,
		       o->seq, -1, (int64_t)o->gpu_end + t->off_ns);
	}
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_i64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->host != b->host)
		return a->host < b->host ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}

/* A first guess at each host's offset: the median over the collectives
 * that host 0 and host h both saw of the difference of their ranks'
 * median ends. It moves exactly with a host's clock, so the refinement
 * below starts from the same place whatever the shift, and gives the
 * same answer for the same ends. */
static void first_guess(struct est *e, size_t nh, int64_t *off, int64_t *tmp, int64_t *res,
			const size_t *count)
{
	size_t *n = xcalloc(nh, sizeof *n);
	struct sample *by = xrealloc(NULL, (e->ns ? e->ns : 1) * sizeof *by);
	for (size_t k = 0; k < e->ncoll; k++) {
		size_t a = e->coll[k], len = e->coll[k + 1] - a;
		memcpy(by, e->s + a, len * sizeof *by);
		qsort(by, len, sizeof *by, cmp_sample);
		int have0 = 0;
		int64_t m0 = 0;
		for (size_t i = 0; i < len;) {
			size_t j = i;
			while (j < len && by[j].host == by[i].host)
				j++;
			for (size_t q = i; q < j; q++)
				tmp[q - i] = by[q].t;
			int64_t med = median(tmp, j - i);
			uint32_t h = by[i].host;
			if (h == 0)
				m0 = med, have0 = 1;
			else if (have0)
				res[count[h] + n[h]++] = med - m0;
			i = j;
		}
	}
	for (size_t h = 1; h < nh; h++)
		if (n[h])
			off[h] = median(res + count[h], n[h]);
	free(n);
	free(by);
}

/* Each host's offset from the samples: the median of its ranks' ends
 * minus their collectives' median end, with the offsets found so far
 * taken out, until nothing moves. */
static void estimate(struct est *e, struct clocks *c)
{
	size_t nh = c->n;
	int64_t *off = xcalloc(nh, sizeof *off);
	size_t *count = xcalloc(nh + 1, sizeof *count);
	int64_t *res = xrealloc(NULL, (e->ns ? e->ns : 1) * sizeof *res);
	int64_t *tmp = xrealloc(NULL, (e->ns ? e->ns : 1) * sizeof *tmp);
	size_t *at = xcalloc(nh, sizeof *at);
	for (size_t j = 0; j < e->ns; j++)
		count[e->s[j].host + 1]++;
	for (size_t h = 0; h < nh; h++)
		count[h + 1] += count[h]; /* host h's residuals: res[count[h] .. count[h+1]) */
	if (nh > 1)
		first_guess(e, nh, off, tmp, res, count);
	for (int it = 0; it < ITERATIONS; it++) {
		memcpy(at, count, nh * sizeof *at);
		for (size_t k = 0; k < e->ncoll; k++) {
			size_t a = e->coll[k], b = e->coll[k + 1];
			for (size_t j = a; j < b; j++)
				tmp[j - a] = e->s[j].t - off[e->s[j].host];
			int64_t m = median(tmp, b - a);
			for (size_t j = a; j < b; j++)
				res[at[e->s[j].host]++] = e->s[j].t - off[e->s[j].host] - m;
		}
		int64_t moved = 0;
		for (size_t h = 0; h < nh; h++) {
			size_t n = count[h + 1] - count[h];
			if (!n)
				continue;
			int64_t d = median(res + count[h], n);
			off[h] += d;
			moved |= d < -50 || d > 50;
		}
		int64_t ref = off[0];
		for (size_t h = 0; h < nh; h++)
			off[h] -= ref;
		if (!moved)
			break;
	}
	for (size_t h = 0; h < nh; h++) {
		c->h[h].samples = count[h + 1] - count[h];
		c->h[h].known = h == 0 || (c->h[h].samples && count[1]);
		c->h[h].offset_ns = c->h[h].known ? off[h] : 0;
	}
	c->colls = e->ncoll;
	free(off);
	free(count);
	free(res);
	free(tmp);
	free(at);
}

/* The hosts, in the order of their first file (files are sorted by rank). */
static uint32_t *group_hosts(struct inputs *in, struct clocks *c)
{
	uint32_t *host_of = xcalloc(in->n ? in->n : 1, sizeof *host_of);
	for (size_t i = 0; i < in->n; i++) {
		const struct tfile *t = &in->v[i];
		size_t h;
		for (h = 0; h < c->n && strcmp(c->h[h].host, t->f.h.host); h++)
			;
		if (h == c->n) {
			c->h = xrealloc(c->h, (c->n + 1) * sizeof *c->h);
			c->h[h] = (struct clock_host){.host = xstrdup(t->f.h.host), .rank_lo = -1,
			                              .rank_hi = -1, .known = 1};
			c->n++;
		}
		struct clock_host *ch = &c->h[h];
		ch->files++;
		if (t->rank >= 0 && (ch->rank_lo < 0 || t->rank < ch->rank_lo))
			ch->rank_lo = t->rank;
		if (t->rank > ch->rank_hi)
			ch->rank_hi = t->rank;
		host_of[i] = (uint32_t)h;
	}
	return host_of;
}

static void apply_offsets(struct inputs *in, const struct clocks *c, const uint32_t *host_of)
{
	uint64_t base = UINT64_MAX;
	for (size_t i = 0; i < in->n; i++) {
		uint64_t a = in->v[i].f.h.rt_anchor - (uint64_t)c->h[host_of[i]].offset_ns;
		if (a < base)
			base = a;
	}
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		uint64_t a = t->f.h.rt_anchor - (uint64_t)c->h[host_of[i]].offset_ns;
		t->off_ns = (int64_t)(a - base) - (int64_t)t->f.h.mono_anchor;
	}
	in->base_ns = base;
}

int clocks_align(struct inputs *in, int mode, int apply, struct clocks *c)
{
	memset(c, 0, sizeof *c);
	uint32_t *host_of = group_hosts(in, c);
	if (mode == ALIGN_AUTO)
		mode = c->n > 1 ? ALIGN_COLLECTIVES : ALIGN_NONE;
	c->mode = mode;
	if (mode == ALIGN_NONE || c->n < 2) {
		free(host_of);
		return 0;
	}
	struct est e = {.in = in, .host_of = host_of};
	e.m = nm_new((size_t)1 << 22, on_coll, &e);
	int rc = 0;
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		e.file = i;
		struct nccl_ops *ops = nccl_ops_new(on_plan, &e);
		struct ct_event ev;
		/* Only NCCL's records: the rest is skipped as soon as decoded. */
		while (ct_file_next(&t->f, &ev) == 1)
			if (ev.kind >= CT_EV_NCCL_FIRST && ev.kind < CT_EV_NCCL_END)
				nccl_ops_event(ops, &ev);
		nccl_ops_finish(ops);
		nccl_ops_free(ops);
		hmap_free(&e.per_comm);
		if (inputs_rewind(in, i))
			rc = -1;
	}
	nm_finish(e.m);
	estimate(&e, c);
	if (apply) {
		apply_offsets(in, c, host_of);
		c->applied = 1;
	}
	free(e.s);
	free(e.coll);
	free(host_of);
	return rc;
}

void clocks_free(struct clocks *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->h[i].host);
	free(c->h);
	memset(c, 0, sizeof *c);
}

void clocks_print(const struct clocks *c, FILE *f, const char *lead)
{
	if (c->mode != ALIGN_COLLECTIVES || c->n < 2)
		return;
	fprintf(f, "%sclocks: %zu hosts; offsets estimated from %llu collective%s matched across "
	           "hosts (--align collectives)%s\n",
	        lead, c->n, (unsigned long long)c->colls, c->colls == 1 ? "" : "s",
	        c->applied && c->colls ? "; each host's files moved back by its offset" : "");
	for (size_t i = 0; i < c->n; i++) {
		const struct clock_host *h = &c->h[i];
		char ranks[64] = "";
		if (h->rank_lo >= 0 && h->rank_hi > h->rank_lo)
			snprintf(ranks, sizeof ranks, " (ranks %lld-%lld)", (long long)h->rank_lo,
			         (long long)h->rank_hi);
		else if (h->rank_lo >= 0)
			snprintf(ranks, sizeof ranks, " (rank %lld)", (long long)h->rank_lo);
		char *name = term_escape(h->host, strlen(h->host), NULL);
		fprintf(f, "%s  host %s%s: ", lead, name, ranks);
		free(name);
		if (!h->known)
			fprintf(f, "unknown (no collective shared with the reference; left on its "
			           "anchor)\n");
		else
			fprintf(f, "offset %+.6f ms%s (%llu rank ends)\n", (double)h->offset_ns / 1e6,
			        i ? "" : ", the reference", (unsigned long long)h->samples);
	}
}
