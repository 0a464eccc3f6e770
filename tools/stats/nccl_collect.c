// SPDX-License-Identifier: MIT
#include "stats/nccl_collect.h"
#include "read/nccl_log.h"
#include "read/nccl_names.h"
#include "model/model.h"
#include "stats/stats.h"
#include "util/hmap.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A process seen in the logs; its rank is settled at the end. */
struct proc {
	char host[128];
	long pid;
	int file; /* lines without a host:pid prefix count per file */
	int src;  /* the log it was first read from (collect.nfiles then) */
	long globalrank, rank, nranks;
	uint64_t calls; /* collective lines counted */
	/* --steps: the step its lines are in, once a line of its own began
	 * one (an NCCL line matching the step pattern); until then, its log's */
	int64_t step;
	int own_step;
};

static struct {
	int users, finished;
	struct nccl_agg agg;
	const struct stats_opts *opts;
	struct proc *p;
	size_t np;
	int nfiles;
	const struct tfile **traced; /* files that gave operations */
	size_t ntraced;
	struct hmap by_pid; /* pid + 1 -> the first traced file of that pid */
	/* --steps: the step pattern (the default compiled here when the
	 * options carry none), and the logs read that hold no step */
	struct nccl_log_steps own_steps;
	int steps_compiled;
	size_t stepless;
} collect;

int nccl_collect_begin(const struct stats_opts *opts)
{
	collect.opts = opts;
	return collect.users++ == 0;
}

/* The step pattern of --steps, NULL without --steps. */
static const struct nccl_log_steps *log_steps(void)
{
	const struct stats_opts *o = collect.opts;
	if (!o->steps)
		return NULL;
	if (o->log_steps)
		return o->log_steps;
	if (!collect.steps_compiled) {
		char err[128];
		if (nccl_log_steps_init(&collect.own_steps, NULL, err, sizeof err)) {
			say("the default step pattern: %s", err);
			exit(1);
		}
		collect.steps_compiled = 1;
	}
	return &collect.own_steps;
}

size_t nccl_collect_stepless_logs(void)
{
	return collect.stepless;
}

static int in_steps(int64_t step)
{
	const struct stats_opts *o = collect.opts;
	return !o->steps || (step >= o->step_lo && step <= o->step_hi);
}

void nccl_collect_event(struct nccl_adds *j, struct tfile *t, const struct m_event *ev)
{
	if (ev->cat != MC_NCCL || ev->type != ME_SLICE)
		return;
	const struct nccl_op *o = ev->nccl.op;
	const struct nccl_plan *p = ev->nccl.plan;
	if (!in_steps(o->step))
		return;
	/* GPU time: the channel timers; a kernel's whole duration only when it
	 * ran this operation alone. */
	int timed = o->gpu_raw_end > o->gpu_raw_start;
	uint64_t ns = timed ? o->gpu_raw_end - o->gpu_raw_start : 0;
	if (!timed && p->n == 1 && p->has_kernel && p->kernel.end > p->kernel.ts) {
		timed = 1;
		ns = p->kernel.end - p->kernel.ts;
	}
	/* the process's rank as every output shows it: an operation's rank is
	 * its communicator's, which differs between a process's communicators */
	j->t = t;
	nccl_agg_add(&j->agg, t->shown_rank, o->func, o->datatype[0] ? o->datatype : "?", o->bytes,
	             o->comm ? o->comm->nranks : 0, timed, ns);
}

void nccl_collect_merge(struct nccl_adds *j)
{
	nccl_agg_merge(&collect.agg, &j->agg);
	nccl_agg_free(&j->agg);
	if (!j->t)
		return;
	for (size_t i = 0; i < collect.ntraced; i++)
		if (collect.traced[i] == j->t)
			return;
	collect.traced = xrealloc(collect.traced, (collect.ntraced + 1) * sizeof *collect.traced);
	collect.traced[collect.ntraced++] = j->t;
	if (!hmap_get(&collect.by_pid, j->t->f.h.pid + 1))
		hmap_put(&collect.by_pid, j->t->f.h.pid + 1, (void *)j->t);
}

/* Whether traced file t is of host (NCCL names it up to its first dot). */
static int same_host(const struct tfile *t, const char *host)
{
	size_t n = strlen(host);
	const char *h = t->f.h.host;
	return h && !strncmp(h, host, n) && (h[n] == 0 || h[n] == '.');
}

/* The traced file of the log line's process, or NULL. NCCL names the host
 * up to its first dot. */
static const struct tfile *traced_of(const struct nccl_log_line *l)
{
	if (l->pid < 0)
		return NULL;
	/* by pid first (a log line each: a scan of the files per line would
	 * cost files x lines) */
	const struct tfile *t = hmap_get(&collect.by_pid, (uint64_t)l->pid + 1);
	if (!t || same_host(t, l->host))
		return t;
	for (size_t i = 0; i < collect.ntraced; i++) /* the same pid on another host */
		if (collect.traced[i]->f.h.pid == (uint64_t)l->pid && same_host(collect.traced[i], l->host))
			return collect.traced[i];
	return NULL;
}

static struct proc *proc_of(const struct nccl_log_line *l)
{
	int file = l->pid < 0 ? collect.nfiles : -1;
	for (size_t i = 0; i < collect.np; i++) {
		struct proc *p = &collect.p[i];
		if (p->pid == l->pid && p->file == file && !strcmp(p->host, l->host))
			return p;
	}
	collect.p = xrealloc(collect.p, (collect.np + 1) * sizeof *collect.p);
	struct proc *p = &collect.p[collect.np++];
	memset(p, 0, sizeof *p);
	snprintf(p->host, sizeof p->host, "%s", l->host);
	p->pid = l->pid;
	p->file = file;
	p->src = collect.nfiles;
	p->globalrank = p->rank = -1;
	return p;
}

/* Until ranks are known, a process's rows are filed under -(index + 1). */
static int64_t proc_key(const struct proc *p)
{
	return -(int64_t)(p - collect.p) - 1;
}

void nccl_collect_log(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		say("%s: %s", path, strerror(errno));
		return;
	}
	collect.nfiles++;
	static char buf[1 << 16];
	unsigned long lineno = 0, bad = 0, first_bad = 0, colls = 0, twice = 0, copied = 0;
	/* --steps: this log's calls go to fa first; a log without a step mark
	 * gives none of them (as a trace without steps) */
	const struct nccl_log_steps *steps = log_steps();
	struct nccl_agg fa = {0};
	int64_t fstep = 0; /* the step of the lines of processes without marks of their own */
	unsigned long marks = 0, kept = 0;
	char copy[160] = ""; /* a process read from an earlier log already: host:pid */
	const struct tfile *seen = NULL; /* the first traced process in this log */
	int several = 0;
	int cont = 0; /* inside a line longer than buf */
	while (fgets(buf, sizeof buf, f)) {
		size_t len = strlen(buf);
		int whole = len && buf[len - 1] == '\n';
		int skip = cont;
		cont = !whole && !feof(f);
		if (skip)
			continue;
		lineno++;
		struct nccl_log_line l;
		enum nccl_line kind = nccl_log_parse(buf, len, &l);
		int64_t num;
		int mark = steps && nccl_log_step_mark(steps, buf, len, &num);
		/* A line of a process: a collective, a rank, or an NCCL line of
		 * one that marks a step (its own step only). */
		int of_proc = kind == NL_COLL || kind == NL_RANK || (mark && l.pid >= 0);
		const struct tfile *tr = of_proc ? traced_of(&l) : NULL;
		if (tr) {
			twice += kind == NL_COLL;
			several |= seen && tr != seen;
			seen = seen ? seen : tr;
			continue;
		}
		struct proc *p = of_proc ? proc_of(&l) : NULL;
		if (p && l.pid >= 0 && p->src != collect.nfiles) { /* a copy, or stdout beside NCCL_DEBUG_FILE */
			copied += kind == NL_COLL;
			if (!copy[0])
				snprintf(copy, sizeof copy, "%s:%ld", p->host, p->pid);
			continue;
		}
		if (mark) {
			/* A process's own NCCL line begins its step alone; any
			 * other line (the training script's) every process's in
			 * this log that has no marks of its own. */
			int64_t *cur = &fstep;
			if (p && l.pid >= 0) {
				if (!p->own_step)
					p->step = fstep, p->own_step = 1;
				cur = &p->step;
			}
			*cur = num >= 0 ? num : *cur + 1;
			marks++;
		}
		switch (kind) {
		case NL_COLL: {
			colls++;
			if (l.globalrank >= 0)
				p->globalrank = l.globalrank;
			if (steps) {
				int64_t step = p->own_step ? p->step : fstep;
				if (step < collect.opts->step_lo || step > collect.opts->step_hi)
					break;
			}
			kept++;
			p->calls++;
			const char *tn = nccl_type_name(l.datatype);
			char other[32];
			if (!tn)
				snprintf(other, sizeof other, "datatype %ld", l.datatype),
				    tn = other;
			uint64_t bytes =
			    nccl_msg_bytes(l.func, l.count, nccl_type_size(tn), l.nranks);
			nccl_agg_add(&fa, proc_key(p), l.func, tn, bytes, l.nranks, 0, 0);
			break;
		}
		case NL_RANK: {
			/* A process's rank is its rank in its largest communicator. */
			if (l.nranks > p->nranks) {
				p->rank = l.rank;
				p->nranks = l.nranks;
			}
			break;
		}
		case NL_BAD:
			if (!bad++)
				first_bad = lineno;
			break;
		case NL_OTHER:
			break;
		}
	}
	if (ferror(f))
		say("%s: %s", path, strerror(errno));
	fclose(f);
	if (steps && !marks) {
		/* as a trace without steps: none of its calls is in a step */
		collect.stepless++;
		for (size_t i = 0; i < collect.np; i++)
			if (collect.p[i].src == collect.nfiles)
				collect.p[i].calls = 0;
		nccl_agg_free(&fa);
		kept = 0;
		if (colls)
			say_warning("%s: no line begins a step (%s%s); its %lu NCCL "
			            "collective line%s left out",
			            path,
			            collect.opts->log_step_pattern ? "--log-step-pattern " : "",
			            collect.opts->log_step_pattern ? collect.opts->log_step_pattern
			                                           : "the default step pattern",
			            colls, colls > 1 ? "s are" : " is");
	}
	char range[48] = ""; /* as --steps takes it */
	if (steps && collect.opts->step_lo == collect.opts->step_hi)
		snprintf(range, sizeof range, "%lld", (long long)collect.opts->step_lo);
	else if (steps)
		snprintf(range, sizeof range, "%lld-%lld", (long long)collect.opts->step_lo,
		         (long long)collect.opts->step_hi);
	if (steps && marks && colls && !kept)
		say_warning("%s: none of its %lu NCCL collective line%s is in steps %s "
		            "(%lu step mark%s)",
		            path, colls, colls > 1 ? "s" : "", range, marks, marks > 1 ? "s" : "");
	if (steps && collect.opts->verbose)
		say("%s: %lu step mark%s; %lu of %lu NCCL collective lines in steps %s", path,
		    marks, marks == 1 ? "" : "s", kept, colls, range);
	nccl_agg_merge(&collect.agg, &fa);
	nccl_agg_free(&fa);
	if (copied)
		say_warning("%s: %lu NCCL collective line%s left out: %s and any other "
		            "process in them was read from an earlier log already (a copy?)",
		            path, copied, copied > 1 ? "s" : "", copy);
	if (twice)
		say_note("%s: %lu NCCL collective line%s left out: %s process%s "
		         "traced (%s%s), and %s trace%s hold%s %s calls",
		         path, twice, twice > 1 ? "s" : "", several ? "their" : "its",
		         several ? "es are" : " is", several ? "first " : "", seen->f.path,
		         several ? "their" : "its", several ? "s" : "", several ? "" : "s",
		         several ? "their" : "its");
	if (bad)
		say_warning("%s: %lu NCCL collective line%s could not be parsed "
		            "(first at line %lu); %lu parsed",
		            path, bad, bad > 1 ? "s" : "", first_bad, colls);
}

/* Whether a traced process (a row from a trace file) has rank r. */
static int traced_rank(int64_t r)
{
	for (size_t i = 0; i < collect.agg.n; i++)
		if (collect.agg.v[i].rank == r)
			return 1;
	return 0;
}

/* Ranks of log processes: RCCL's globalrank, else the rank the process
 * has in its largest communicator, else (no INIT lines were logged) the
 * lowest rank nobody else has, in order of appearance: neither another
 * log process nor a trace read with the logs (its operations went under
 * a traced rank's). */
static void settle_ranks(void)
{
	int unknown = 0;
	for (size_t i = 0; i < collect.np; i++) {
		struct proc *p = &collect.p[i];
		if (p->globalrank >= 0)
			p->rank = p->globalrank;
	}
	for (size_t i = 0; i < collect.np; i++) {
		struct proc *p = &collect.p[i];
		if (p->rank >= 0 || !p->calls) /* no calls: no rows to number */
			continue;
		long r = 0;
		for (int clash = 1; clash; r += clash) {
			clash = 0;
			for (size_t k = 0; k < collect.np && !clash; k++)
				clash = collect.p[k].rank == r;
			clash = clash || traced_rank(r);
		}
		p->rank = r;
		unknown++;
	}
	for (size_t i = 0; i < collect.np; i++)
		if (collect.p[i].calls)
			nccl_agg_rerank(&collect.agg, proc_key(&collect.p[i]), collect.p[i].rank);
	if (unknown)
		say_note("%d process%s in the logs name%s no rank (no INIT lines); "
		         "numbered in order of appearance",
		         unknown, unknown > 1 ? "es" : "", unknown > 1 ? "" : "s");
}

const struct nccl_agg *nccl_collect_result(void)
{
	if (!collect.finished) {
		settle_ranks();
		collect.finished = 1;
	}
	return &collect.agg;
}

void nccl_collect_release(void)
{
	if (--collect.users > 0)
		return;
	nccl_agg_free(&collect.agg);
	free(collect.p);
	free(collect.traced);
	hmap_free(&collect.by_pid);
	if (collect.steps_compiled)
		nccl_log_steps_free(&collect.own_steps);
	memset(&collect, 0, sizeof collect);
}
