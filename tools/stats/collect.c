// SPDX-License-Identifier: MIT
/* The reports over the inputs (collect.h): clocks, one pass over each
 * file through the model on the driver's workers (job/drive.h), each
 * file's events into report parts of its own, the parts merged in file
 * order, NCCL logs, then the tables. When a report matches across files
 * (report.drain: nccl_skew, mpi_skew), the driver reads the files in lockstep and
 * the parts are drained after each chunk. */
#include "stats/collect.h"
#include "stats/nccl_collect.h"
#include "job/clocks.h"
#include "job/drive.h"
#include "model/step_window.h"
#include "read/live.h"
#include "read/tfile_pack.h"
#include "util/mpirt.h"
#include "util/pack.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* How a file's reading went, said when its parts are merged (in file
 * order, so that messages come in the same order however many workers). */
enum { F_STEPLESS = 1, F_REWIND = 2, F_OUTSIDE = 4 };

/* One file being read: its parts of the reports. */
struct run {
	const struct report *const *r;
	void **st;
	size_t n;
	struct tfile *t;
	const struct stats_opts *opts;
	uint64_t from, to; /* --steps: the file's window, [from, to) */
	int how;	   /* F_* */
};

struct job {
	struct inputs *in;
	const struct report *const *r;
	size_t n;
	void **st; /* the reports' states, parts merged into them */
	const struct stats_opts *opts;
	size_t stepless;
	size_t outside; /* files with steps, none of them in the range */
	const char *first_outside;
	int rc;
	/* An MPI job's ranks: the files [lo, ...) of in are this rank's; a
	 * rank above 0 packs each file's parts into out for rank 0. */
	size_t lo;
	struct pack *out;
	int shared; /* the files were shared out (read_files) */
};

static int outside(const struct run *run, const struct report *r, uint64_t ts)
{
	return run->opts->steps && !r->own_steps && (ts < run->from || ts >= run->to);
}

/* The reports are consumers of the model's events. */
static void on_event(void *ctx, const struct m_event *ev)
{
	struct run *run = ctx;
	for (size_t i = 0; i < run->n; i++)
		if (!outside(run, run->r[i], ev->ts))
			run->r[i]->event(run->st[i], run->t, ev);
}

static const struct m_consumer reports_consumer = {NULL, on_event, NULL};

int stats_parse_steps(struct stats_opts *o, const char *s)
{
	if (step_range_parse(s, &o->step_lo, &o->step_hi))
		return -1;
	o->steps = 1;
	return 0;
}

/* Each host's clock offset, when estimated (more than one host). */
static struct table *clocks_table(const struct clocks *c)
{
	if (c->mode != ALIGN_COLLECTIVES || c->n < 2)
		return NULL;
	static const char *cols[] = {"Host", "Files", "First Rank", "Last Rank", "Offset (ns)",
				     "Rank Ends", "Collectives"};
	struct table *t = table_new("clocks: offset of each host's clock (estimated from "
				    "collective ends; subtracted)", 7, cols);
	char note[160];
	snprintf(note, sizeof note,
		 "--align collectives: the first host is the reference; %llu collectives matched "
		 "across hosts", (unsigned long long)c->colls);
	table_note(t, note);
	for (size_t i = 0; i < c->n; i++) {
		const struct clock_host *h = &c->h[i];
		table_row(t);
		table_str(t, h->host);
		table_u64(t, h->files);
		if (h->rank_lo >= 0) {
			table_i64(t, h->rank_lo);
			table_i64(t, h->rank_hi);
		} else {
			table_null(t);
			table_null(t);
		}
		if (h->known)
			table_i64(t, h->offset_ns);
		else
			table_null(t);
		table_u64(t, h->samples);
		table_u64(t, c->colls);
	}
	return t;
}

/* Merges a file's parts (the files in their order), after saying how its
 * reading went. */
static void merge_run(struct job *j, struct run *run, struct tfile *t)
{
	int how = run->how;
	if (how & F_STEPLESS) {
		j->stepless++;
		if (j->in->n > 1)
			say_cmd_warning("%s holds no steps", t->f.path);
	}
	if ((how & F_OUTSIDE) && !j->outside++)
		j->first_outside = t->f.path;
	if (how & F_REWIND) {
		j->rc = 1;
	} else if (t->f.status == CT_CORRUPT || t->f.status == CT_DAMAGED) {
		say("%s", t->f.err);
		j->rc = 1;
	} else if (t->f.status == CT_TRUNCATED) {
		say_warning("%s", tfile_err(t));
	}
	for (size_t i = 0; i < j->n; i++)
		j->r[i]->merge(j->st[i], run->st[i]);
	free(run->st);
	free(run);
}

/* A file read on a rank above 0, for rank 0: its index, how its reading
 * went (the model's, the decoder's), its parts. */
static void pack_file(struct job *j, size_t index, struct run *run)
{
	struct pack *b = j->out;
	const struct tfile *t = run->t;
	pk_u64(b, index);
	pk_u64(b, (uint64_t)run->how);
	tfile_pack_state(b, t); /* its counts, status, footer: report's header */
	for (size_t i = 0; i < j->n; i++)
		j->r[i]->pack(run->st[i], b);
}

/* A rank above 0: file f's parts packed for rank 0, then freed. */
static void pack_drop(struct job *j, struct drive_file *f)
{
	struct run *run = f->ctx;
	pack_file(j, j->lo + f->index, run);
	for (size_t i = 0; i < j->n; i++) {
		if (j->r[i]->drop)
			j->r[i]->drop(run->st[i]);
		else
			j->r[i]->merge(j->st[i], run->st[i]);
	}
	free(run->st);
	free(run);
}

/* Merges file f's parts (the files in their order). */
static void merge_file(void *arg, struct drive_file *f)
{
	struct job *j = arg;
	if (j->out)
		pack_drop(j, f);
	else
		merge_run(j, f->ctx, f->t);
}

/* Rank 0: the files of ranks 1, 2, ... (theirs follow its own in file
 * order), each merged as it comes. */
static void merge_ranks(struct job *j)
{
	for (int r = 1; r < mpirt_size(); r++) {
		struct pack b = {0};
		if (mpirt_recv(r, (void **)&b.b, &b.n)) {
			say_cmd("rank %d's reports did not come (MPI)", r);
			j->rc = 1;
			continue;
		}
		while (b.at < b.n && !b.bad) {
			uint64_t k = up_u64(&b);
			struct run *run = xcalloc(1, sizeof *run);
			run->how = (int)up_u64(&b);
			struct tfile *t = k < j->in->n ? &j->in->v[k] : NULL;
			if (!t) {
				b.bad = 1;
				free(run);
				break;
			}
			tfile_unpack_state(&b, t);
			run->st = xcalloc(j->n, sizeof *run->st);
			for (size_t i = 0; i < j->n; i++)
				run->st[i] = j->r[i]->unpack(j->st[i], &b, j->in);
			merge_run(j, run, t);
		}
		if (b.bad) {
			say_cmd("rank %d's reports came damaged", r);
			j->rc = 1;
		}
		pk_free(&b);
	}
}

/* Whether the files are shared out among the ranks of an MPI job: every
 * report can send its parts (else rank 0 reads every file). */
static int par_shared(const struct job *j)
{
	if (mpirt_size() < 2)
		return 0;
	for (size_t i = 0; i < j->n; i++)
		if (!j->r[i]->pack || !j->r[i]->unpack) {
			if (j->opts->verbose)
				say_cmd_note("%d MPI ranks: %s cannot be shared out; rank 0 reads "
				             "every file", mpirt_size(), j->r[i]->name);
			return 0;
		}
	if (j->opts->verbose)
		say_cmd_note("%d MPI ranks: each reads its share of the %zu files", mpirt_size(),
		             j->in->n);
	return 1;
}

/* Reads the files: all of them, or in an MPI job this rank's share (its
 * parts sent to rank 0, or those of the other ranks merged after its
 * own). Not 0 on a rank above 0, which has nothing more to do. */
static int read_files(struct job *j, const struct drive_ops *ops, struct drive_how *how)
{
	struct inputs view = *j->in;
	int shared = j->shared = par_shared(j), rank = mpirt_rank();
	if (shared) {
		size_t lo, hi;
		mpirt_share(j->in->n, &lo, &hi);
		view.v += lo, view.n = hi - lo, j->lo = lo;
	} else if (rank) {
		return 1; /* rank 0 reads every file */
	}
	struct pack out = {0};
	if (rank) {
		j->out = &out;
		how->lockstep = 0; /* parts keep what they gather, for rank 0 */
	}
	drive(&view, ops, how);
	if (!rank) {
		if (shared)
			merge_ranks(j);
		return 0;
	}
	if (mpirt_send(0, out.b, out.n))
		say_cmd("rank %d: its reports could not be sent (MPI)", rank);
	pk_free(&out);
	return 1;
}

/* Readies file f for reading into parts of the reports of its own; not 0
 * when it cannot be read. */
static int open_file(void *arg, struct drive_file *f)
{
	struct job *j = arg;
	struct run *run = xcalloc(1, sizeof *run);
	*run = (struct run){.r = j->r, .n = j->n, .opts = j->opts, .t = f->t};
	run->st = xcalloc(j->n, sizeof *run->st);
	for (size_t i = 0; i < j->n; i++)
		run->st[i] = j->r[i]->part ? j->r[i]->part(j->st[i]) : j->r[i]->begin(j->opts);
	f->ctx = run;
	if (j->opts->steps) {
		/* A first pass for the window of the steps. */
		if (!step_window(run->t, j->opts->step_lo, j->opts->step_hi, &run->from, &run->to))
			run->how |= F_STEPLESS;
		else if (run->from == UINT64_MAX)
			run->how |= F_OUTSIDE;
		if (inputs_rewind(j->in, j->lo + f->index))
			run->how |= F_REWIND;
	}
	return run->how & F_REWIND;
}

/* In lockstep: hands the reports what file f's parts gathered so far. */
static void drain_file(void *arg, struct drive_file *f)
{
	struct job *j = arg;
	struct run *run = f->ctx;
	for (size_t i = 0; i < j->n; i++)
		if (j->r[i]->drain)
			j->r[i]->drain(j->st[i], run->st[i]);
}

/* Whether file t may hold NCCL records: a cleanly closed file's footer
 * counts them; any other file may. */
/* Whether a file may hold collectives to match: NCCL's, or MPI's. */
static int may_hold_nccl(const struct tfile *t)
{
	if (!t->f.final_footer)
		return 1;
	for (int k = CT_EV_NCCL_FIRST; k < CT_EV_NCCL_END; k++)
		if (t->f.f_events[k])
			return 1;
	return t->f.f_events[CT_EV_MPI_CALL] != 0;
}

/* Whether the files are read in lockstep: a report matches across them
 * and at least two files may have something to match (every file's state
 * is alive at once in lockstep: NVTX-only traces stay one after another). */
static int lockstep(const struct job *j)
{
	int drains = 0;
	for (size_t i = 0; i < j->n; i++)
		drains |= j->r[i]->drain != NULL;
	size_t nccl = 0;
	for (size_t k = 0; drains && k < j->in->n && nccl < 2; k++)
		nccl += may_hold_nccl(&j->in->v[k]);
	return nccl >= 2;
}

/* An MPI job's ranks learn rank 0's finding that no file held the steps
 * asked for (its tables left out, -1): a command that reads again (diff's
 * second run, report --base) stops on every rank alike, not on rank 0
 * alone while the others send it parts that it never receives. */
static int agree_none(int none)
{
	unsigned char v = (unsigned char)none;
	void *b = &v;
	size_t n = 1;
	if (mpirt_bcast(&b, &n))
		return none;
	if (mpirt_rank() > 0) {
		v = n == 1 && *(unsigned char *)b;
		free(b);
	}
	return v;
}

/* A rank above 0 ends its reports' states all the same, their tables
 * unprinted: some hold state of the process's (the NCCL collection's
 * count of users), which the next read in this process (diff's second
 * run, report --base's new run) must find released. */
static void end_unprinted(struct job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		struct table *tabs[4];
		int nt = j->r[i]->end(j->st[i], tabs);
		for (int k = 0; k < nt; k++)
			table_free(tabs[k]);
	}
	free(j->st);
}

int reports_collect(struct inputs *in, const struct report *const *r, size_t n,
		    const struct stats_opts *opts, int align, int jobs, const char *steps_arg,
		    collect_fn fn, void *ctx)
{
	struct job j = {.in = in, .r = r, .n = n, .opts = opts};
	j.st = xcalloc(n, sizeof *j.st);
	struct clocks ck;
	if (clocks_align(in, align, 1, &ck))
		j.rc = 1;
	for (size_t i = 0; i < n; i++)
		j.st[i] = r[i]->begin(opts);
	struct drive_ops ops = {.consumer = &reports_consumer, .arg = &j, .open = open_file,
	                        .merge = merge_file, .chunk = drain_file};
	struct drive_how how = {.jobs = jobs, .lockstep = lockstep(&j)};
	if (read_files(&j, &ops, &how)) { /* a rank above 0: rank 0 prints */
		clocks_free(&ck);
		end_unprinted(&j);
		return j.shared && agree_none(0) ? -1 : 0;
	}
	int rc = j.rc;
	size_t stepless = j.stepless;
	if (j.outside == 1) /* their figures are all empty: say why */
		say_cmd_warning("--steps %s: %s has no step in that range", steps_arg,
		                j.first_outside);
	else if (j.outside)
		say_cmd_warning("--steps %s: %zu files have no step in that range (%s, ...)",
		                steps_arg, j.outside, j.first_outside);
	void **st = j.st;
	int none = in->n && stepless == in->n;
	/* Logs: their steps are lines of their own (nccl_collect.c). */
	if (!none || in->nlogs)
		for (size_t k = 0; k < in->nlogs; k++)
			for (size_t i = 0; i < n; i++)
				if (r[i]->log)
					r[i]->log(st[i], in->logs[k]);
	if (opts->steps && in->nlogs) {
		int logs_none = nccl_collect_stepless_logs() == in->nlogs;
		if (none && !logs_none && in->n == 1) /* said per file with several */
			say_cmd_warning("%s holds no steps", in->v[0].f.path);
		none = (!in->n || none) && logs_none;
		if (none)
			say_cmd("--steps %s: no input holds steps (traces: cuptrace_step() or "
			        "CUPTRACE_STEP_RANGE; NCCL logs: lines matching the step pattern)",
			        steps_arg);
	} else if (none) {
		/* Tables of nothing would only say "(no rows)". */
		if (in->n == 1)
			say_cmd("--steps %s: %s holds no steps (steps come from cuptrace_step() or "
			        "CUPTRACE_STEP_RANGE)",
			        steps_arg, in->v[0].f.path);
		else
			say_cmd("--steps %s: none of the %zu files holds steps (steps come from "
			        "cuptrace_step() or CUPTRACE_STEP_RANGE)",
			        steps_arg, in->n);
	}
	if (j.shared)
		agree_none(none);
	struct table *clk = none ? NULL : clocks_table(&ck);
	clocks_free(&ck);
	if (clk)
		fn(ctx, -1, clk);
	for (size_t i = 0; i < n; i++) {
		struct table *tabs[4];
		int nt = r[i]->end(st[i], tabs);
		for (int k = 0; k < nt; k++) {
			if (none)
				table_free(tabs[k]);
			else
				fn(ctx, (int)i, tabs[k]);
		}
	}
	free(st);
	return none ? -1 : rc;
}
