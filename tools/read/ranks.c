// SPDX-License-Identifier: MIT
/* Which rank each input file is shown as (ranks.h). */
#include "read/ranks.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int one_process(const struct ct_header *a, const struct ct_header *b)
{
	return a->pid == b->pid && !strcmp(a->host, b->host);
}

/* Processes started inside one launcher task (a batch script's
 * torch.multiprocessing.spawn under Slurm: every worker inherits
 * SLURM_PROCID=0 and SLURM_NTASKS=1) all claim that task's rank. Where two
 * such processes (not forked one from the other) have different ranks in
 * NCCL communicators of more than one rank, the launcher's rank says
 * nothing of theirs: they are taken as having none (their NCCL ranks then
 * count, below). */
static void one_task_ranks(struct inputs *in)
{
	char *drop = xcalloc(in->n, 1);
	for (size_t i = 0; i < in->n; i++) {
		const struct tfile *t = &in->v[i];
		if (t->rank < 0 || t->f.h.world_size > 1 || t->f.nccl_nranks < 2)
			continue;
		for (size_t j = 0; j < in->n && !drop[i]; j++) {
			const struct tfile *o = &in->v[j];
			drop[i] = o->rank == t->rank && o->f.h.world_size <= 1 && o->f.nccl_nranks >= 2 &&
			          o->f.nccl_rank != t->f.nccl_rank && !one_process(&o->f.h, &t->f.h) &&
			          o->f.h.forked_from != t->f.h.pid && t->f.h.forked_from != o->f.h.pid;
		}
	}
	/* and the process that started them in that task (the batch script's
	 * python, which may trace too): its rank is theirs no more than theirs */
	for (size_t i = 0; i < in->n; i++) {
		const struct tfile *t = &in->v[i];
		for (size_t j = 0; j < in->n && !drop[i] && t->rank >= 0 && t->f.h.world_size <= 1; j++) {
			const struct tfile *o = &in->v[j];
			if (drop[j] == 1 && o->rank == t->rank && o->f.h.ppid == t->f.h.pid &&
			    !strcmp(o->f.h.host, t->f.h.host))
				drop[i] = 2; /* (2: not a worker; its own parent keeps its rank) */
		}
	}
	for (size_t i = 0; i < in->n; i++)
		if (drop[i])
			in->v[i].rank = -1;
	free(drop);
}

/* A process without a launcher rank (torch.multiprocessing.spawn) takes the
 * rank its footer names in its largest NCCL communicator, when no file with
 * a launcher rank has that number and no other process claims it (two jobs'
 * files mixed). All files of a process take the claim of the one that saw
 * the largest communicator. */
static void nccl_claims(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		t->claim = -1;
		if (t->rank >= 0)
			continue;
		uint64_t best = 0;
		for (size_t j = 0; j < in->n; j++) {
			const struct ct_file *o = &in->v[j].f;
			if (in->v[j].rank < 0 && one_process(&o->h, &t->f.h) && o->nccl_nranks > best) {
				best = o->nccl_nranks;
				t->claim = (int64_t)o->nccl_rank;
			}
		}
	}
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		int taken = 0;
		for (size_t j = 0; j < in->n && t->claim >= 0 && !taken; j++) {
			const struct tfile *o = &in->v[j];
			taken = o->rank == t->claim ||
			        (o->claim == t->claim && !one_process(&o->f.h, &t->f.h));
		}
		t->nccl_shown = !taken && t->claim >= 0;
	}
	for (size_t i = 0; i < in->n; i++)
		if (!in->v[i].nccl_shown)
			in->v[i].claim = -1;
}

/* The rank a file is sorted and shown under when it has one: the launcher's,
 * else its NCCL claim; -1 when it is numbered after them. */
static int64_t known_rank(const struct tfile *t)
{
	return t->rank >= 0 ? t->rank : t->claim;
}

/* The number shown for file i, which has no rank: that of an earlier file
 * of the same process, or of the process it was forked from (a DataLoader
 * worker is its parent's rank, not a rank of its own), else
 * the next free one. */
static int64_t unranked(struct inputs *in, size_t i, int64_t next)
{
	struct tfile *t = &in->v[i];
	const struct ct_header *h = &t->f.h;
	for (size_t j = 0; j < i; j++) {
		const struct ct_header *o = &in->v[j].f.h;
		if (in->v[j].rank < 0 && strcmp(o->host, h->host) == 0 &&
		    (o->pid == h->pid || (h->forked_from && o->pid == h->forked_from))) {
			t->nccl_shown = in->v[j].nccl_shown;
			return in->v[j].shown_rank;
		}
	}
	return next;
}

static int cmp_files(const void *a, const void *b)
{
	const struct tfile *x = a, *y = b;
	int64_t rx = known_rank(x) < 0 ? INT64_MAX : known_rank(x),
	        ry = known_rank(y) < 0 ? INT64_MAX : known_rank(y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	int c = strcmp(x->f.h.host, y->f.h.host);
	if (c)
		return c;
	if (x->f.h.rt_anchor != y->f.h.rt_anchor)
		return x->f.h.rt_anchor < y->f.h.rt_anchor ? -1 : 1;
	if (x->f.h.pid != y->f.h.pid)
		return x->f.h.pid < y->f.h.pid ? -1 : 1;
	return x->f.h.part < y->f.h.part ? -1 : x->f.h.part > y->f.h.part;
}

/* The oldest process of file j's family among files [lo, hi) (one rank):
 * its parent's file, that one's parent's, ... (a forked DataLoader worker
 * has its parent's rank). */
static const struct ct_header *family_root(const struct inputs *in, size_t lo, size_t hi, size_t j)
{
	const struct ct_header *h = &in->v[j].f.h;
	for (size_t steps = 0; steps < hi - lo; steps++) {
		const struct ct_header *up = NULL;
		for (size_t i = lo; i < hi && !up; i++) {
			const struct ct_header *a = &in->v[i].f.h;
			if (a->pid == h->ppid && !strcmp(a->host, h->host))
				up = a;
		}
		if (!up)
			break;
		h = up;
	}
	return h;
}

/* Files of several runs read together are shown as one job; said once:
 * from the launchers' job ids, else from a rank written by processes that
 * are neither one process (its capture windows) nor parent and child. */
static void warn_mixed_runs(const struct inputs *in)
{
	const char *job = NULL;
	for (size_t i = 0; i < in->n; i++) {
		const char *id = in->v[i].f.h.job_id;
		if (!id || !*id)
			continue;
		if (!job) {
			job = id;
		} else if (strcmp(job, id)) {
			say_warning("the files come from more than one job (job "
			            "ids %.64s and %.64s); they are shown as one job",
			            job, id);
			return;
		}
	}
	for (size_t lo = 0, hi; lo < in->n; lo = hi) { /* sorted by rank */
		for (hi = lo + 1; hi < in->n && in->v[hi].rank == in->v[lo].rank; hi++)
			;
		if (in->v[lo].rank < 0)
			continue;
		const struct ct_header *a = family_root(in, lo, hi, lo);
		for (size_t j = lo + 1; j < hi; j++) {
			const struct ct_header *b = family_root(in, lo, hi, j);
			if (one_process(a, b))
				continue;
			say_warning(
			    "rank %lld was written by two processes that "
			    "are not parent and child (%.64s:%llu and %.64s:%llu): files of "
			    "more than one run?",
			    (long long)in->v[lo].rank, a->host, (unsigned long long)a->pid, b->host,
			    (unsigned long long)b->pid);
			return;
		}
	}
}

/* The file of child i's parent in its rank (of the same part when the
 * parent has one, else its first), or -1: the process it was forked from,
 * or its parent process (a worker spawned by exec: multiprocessing's
 * spawn DataLoader workers, which keep the rank's RANK). */
static int parent_file(const struct inputs *in, size_t i)
{
	const struct tfile *t = &in->v[i];
	uint64_t parent = t->f.h.forked_from ? t->f.h.forked_from : t->f.h.ppid;
	int found = -1;
	for (size_t j = 0; j < in->n; j++) {
		const struct tfile *o = &in->v[j];
		if (j == i || o->shown_rank != t->shown_rank || o->f.h.pid != parent ||
		    strcmp(o->f.h.host, t->f.h.host))
			continue;
		if (o->f.h.part == t->f.h.part)
			return (int)j;
		if (found < 0 || o->f.h.part < in->v[found].f.h.part)
			found = (int)j;
	}
	return found;
}

/* Each file's lead (struct tfile): forked children join their parent's
 * output, and its parent's, ... (a worker's worker). */
static void set_leads(struct inputs *in)
{
	int *up = xmalloc((in->n + 1) * sizeof *up);
	for (size_t i = 0; i < in->n; i++)
		up[i] = parent_file(in, i);
	for (size_t i = 0; i < in->n; i++) {
		int at = (int)i;
		size_t hops = 0;
		for (; hops < in->n && up[at] >= 0; hops++)
			at = up[at];
		in->v[i].lead = up[at] >= 0 ? (int)i : at; /* in a loop (pid reuse): its own */
	}
	free(up);
}

void inputs_rank(struct inputs *in)
{
	one_task_ranks(in);
	nccl_claims(in);
	if (in->n) /* none when the inputs are logs only */
		qsort(in->v, in->n, sizeof *in->v, cmp_files);
	int64_t next = 0; /* the first number after the known ranks (sorted first) */
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		const struct ct_header *h = &t->f.h;
		t->index = (int)i;
		t->shown_rank = known_rank(t) >= 0 ? known_rank(t) : unranked(in, i, next);
		/* ranks come sorted, then the unranked numbers count up from
		 * next: a rank not seen before is at least next */
		if (t->shown_rank >= next) {
			next = t->shown_rank + 1;
			in->nranks++;
		}
		snprintf(t->label, sizeof t->label, "rank %lld (%.200s:%llu)", (long long)t->shown_rank,
			 h->host, (unsigned long long)h->pid);
		if (h->world_size > in->world_size)
			in->world_size = h->world_size;
	}
	if (in->world_size < next)
		in->world_size = next;
	set_leads(in);
	warn_mixed_runs(in);
}
