// SPDX-License-Identifier: MIT
/* The driver of the reports (collect.h): clocks, one pass over each file
 * through the model (files shared out to worker threads, each file's
 * events into report parts of its own), the parts merged in file order,
 * NCCL logs, then the tables. When a report matches across files
 * (report.drain: nccl_skew), the files are read in lockstep instead: all
 * open, a chunk at a time, the file furthest behind in time first, so
 * that what the matcher holds is what is in flight across ranks, not a
 * whole rank's collectives. */
#include "stats/collect.h"
#include "job/clocks.h"
#include "model/step_window.h"
#include "read/live.h"

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* One file being read: its parts of the reports. */
struct run {
	const struct report *const *r;
	void **st;
	size_t n;
	struct tfile *t;
	const struct stats_opts *opts;
	uint64_t from, to; /* --steps: the file's window, [from, to) */
};

/* How a file's reading went, said when its parts are merged (in file
 * order, so that messages come in the same order however many workers). */
enum { F_PENDING, F_READ, F_STEPLESS = 2, F_REWIND = 4, F_OUTSIDE = 8 };

struct job {
	struct inputs *in;
	const struct report *const *r;
	size_t n;
	void **st; /* the reports' states, parts merged into them */
	const struct stats_opts *opts;
	const char *cmd;
	void ***parts;     /* per file, once read */
	_Atomic int *done; /* per file: F_* once read, else F_PENDING */
	_Atomic size_t next;
	pthread_mutex_t mu; /* merging */
	size_t merged;      /* files merged so far */
	size_t stepless;
	size_t outside; /* files with steps, none of them in the range */
	const char *first_outside;
	int rc;
	/* Lockstep (NULL: files read whole, one per worker at a time). */
	struct lfile *lf;
	size_t left;	   /* files not yet read to their end */
	pthread_cond_t cv; /* a chunk was read */
};

/* A file in lockstep. */
struct lfile {
	/* The worker that reads it (busy) alone touches these: */
	struct run run; /* the model's consumer context: stays put */
	struct model_run *mr;
	int begun, how;
	/* Under j->mu: */
	int64_t pos; /* job time read up to (the decoder's latest TS); INT64_MIN: none yet */
	uint8_t busy, read; /* read: to its end */
};

/* Records read from a file at a time in lockstep, and how far (ns of job
 * time) a file may be read ahead of the one furthest behind: workers need
 * some room to read files side by side; the matcher's window grows with
 * it (the collectives of AHEAD ns and one chunk). */
#define CHUNK 4096
#define AHEAD 100000000
/* Lockstep holds every file's decoder and model at once: above this many
 * files, they are read one after another (the matcher's cap bounds it). */
#define LOCKSTEP_MAX 64

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
	char *end;
	errno = 0; /* a number out of range (2^64) was taken as the largest */
	long long a = strtoll(s, &end, 10), b = a;
	if (end == s || a < 0 || errno)
		return -1;
	if (*end == '-') {
		const char *q = end + 1;
		b = strtoll(q, &end, 10);
		if (end == q || errno)
			return -1;
	}
	if (*end || b < a)
		return -1;
	o->steps = 1;
	o->step_lo = a;
	o->step_hi = b;
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

/* Merges what is read, in file order, from the first file not merged
 * (j->mu held). */
static void merge_ready_locked(struct job *j)
{
	for (; j->merged < j->in->n; j->merged++) {
		size_t k = j->merged;
		int how = atomic_load(&j->done[k]);
		if (how == F_PENDING)
			break;
		struct tfile *t = &j->in->v[k];
		if (how & F_STEPLESS) {
			j->stepless++;
			if (j->in->n > 1)
				fprintf(stderr, "cuptrace %s: warning: %s holds no steps\n", j->cmd,
					t->f.path);
		}
		if ((how & F_OUTSIDE) && !j->outside++)
			j->first_outside = t->f.path;
		if (how & F_REWIND) {
			j->rc = 1;
		} else if (t->f.status == CT_CORRUPT) {
			fprintf(stderr, "cuptrace: %s\n", t->f.err);
			j->rc = 1;
		} else if (t->f.status == CT_TRUNCATED || t->f.status == CT_DAMAGED) {
			fprintf(stderr, "cuptrace: warning: %s\n", tfile_err(t));
		}
		for (size_t i = 0; i < j->n; i++)
			j->r[i]->merge(j->st[i], j->parts[k][i]);
		free(j->parts[k]);
		j->parts[k] = NULL;
	}
}

static void merge_ready(struct job *j)
{
	pthread_mutex_lock(&j->mu);
	merge_ready_locked(j);
	pthread_mutex_unlock(&j->mu);
}

/* Readies file k for reading into parts of the reports of its own: F_*
 * (F_REWIND: it cannot be read). */
static int begin_file(struct job *j, size_t k, struct run *run)
{
	*run = (struct run){.r = j->r, .n = j->n, .opts = j->opts, .t = &j->in->v[k]};
	run->st = calloc(j->n ? j->n : 1, sizeof *run->st);
	if (!run->st)
		exit(1);
	for (size_t i = 0; i < j->n; i++)
		run->st[i] = j->r[i]->part ? j->r[i]->part(j->st[i]) : j->r[i]->begin(j->opts);
	j->parts[k] = run->st;
	int how = F_READ;
	if (j->opts->steps) {
		/* A first pass for the window of the steps. */
		if (!step_window(run->t, j->opts->step_lo, j->opts->step_hi, &run->from, &run->to))
			how |= F_STEPLESS;
		else if (run->from == UINT64_MAX)
			how |= F_OUTSIDE;
		if (inputs_rewind(j->in, k))
			how |= F_REWIND;
	}
	return how;
}

/* Reads file k whole. */
static int read_file(struct job *j, size_t k)
{
	struct run run;
	int how = begin_file(j, k, &run);
	if (how & F_REWIND)
		return how;
	model_file(run.t, &reports_consumer, &run, NULL);
	tfile_release(run.t);
	return how;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->in->n;) {
		atomic_store(&j->done[k], read_file(j, k));
		merge_ready(j);
	}
	return NULL;
}

/* ---- lockstep */

/* The file to read a chunk of next (j->mu held), or -1: the one furthest
 * behind that no worker reads, if it is not more than AHEAD past the
 * furthest behind of all (which a worker then reads: wait for it). Files
 * not begun come first. */
static ptrdiff_t pick(struct job *j)
{
	int64_t floor = INT64_MAX, best_pos = INT64_MAX;
	ptrdiff_t best = -1;
	for (size_t k = 0; k < j->in->n; k++) {
		const struct lfile *f = &j->lf[k];
		if (f->read)
			continue;
		if (f->pos < floor)
			floor = f->pos;
		if (!f->busy && (best < 0 || f->pos < best_pos))
			best = (ptrdiff_t)k, best_pos = f->pos;
	}
	if (best < 0 || best_pos == INT64_MIN)
		return best;
	if (floor == INT64_MIN || best_pos - floor > AHEAD)
		return -1;
	return best;
}

/* Reads a chunk of file k (j->mu not held; the caller made it busy); 0
 * once it is read whole. *pos: how far it is read now. */
static int read_chunk(struct job *j, size_t k, int64_t *pos)
{
	struct lfile *f = &j->lf[k];
	if (!f->begun) {
		f->begun = 1;
		f->how = begin_file(j, k, &f->run);
		if (f->how & F_REWIND)
			return 0;
		f->mr = model_open(f->run.t, &reports_consumer, &f->run, NULL);
	}
	struct tfile *t = f->run.t;
	int more = model_step(f->mr, CHUNK);
	if (t->f.last_ts) {
		int64_t at = (int64_t)t->f.last_ts + t->off_ns;
		if (at > *pos)
			*pos = at;
	}
	if (!more) {
		model_close(f->mr);
		f->mr = NULL;
		tfile_release(t);
	}
	return more;
}

static void *lockstep_worker(void *arg)
{
	struct job *j = arg;
	pthread_mutex_lock(&j->mu);
	while (j->left) {
		ptrdiff_t k = pick(j);
		if (k < 0) {
			pthread_cond_wait(&j->cv, &j->mu);
			continue;
		}
		struct lfile *f = &j->lf[k];
		int64_t pos = f->pos;
		f->busy = 1;
		pthread_mutex_unlock(&j->mu);
		int more = read_chunk(j, (size_t)k, &pos);
		pthread_mutex_lock(&j->mu);
		for (size_t i = 0; i < j->n; i++)
			if (j->r[i]->drain)
				j->r[i]->drain(j->st[i], j->parts[k][i]);
		f->busy = 0;
		f->pos = pos;
		if (!more) {
			f->read = 1;
			j->left--;
			atomic_store(&j->done[k], f->how);
			merge_ready_locked(j);
		}
		pthread_cond_broadcast(&j->cv);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Whether file t may hold NCCL records: a cleanly closed file's footer
 * counts them; any other file may. */
static int may_hold_nccl(const struct tfile *t)
{
	if (!t->f.final_footer)
		return 1;
	for (int k = CT_EV_NCCL_FIRST; k < CT_EV_NCCL_END; k++)
		if (t->f.f_events[k])
			return 1;
	return 0;
}

/* Whether the files are read in lockstep: a report matches across them
 * and at least two files may have something to match (every file's state
 * is alive at once in lockstep: NVTX-only traces stay one after another). */
static int lockstep(const struct job *j)
{
	if (!j->in->n || j->in->n > LOCKSTEP_MAX)
		return 0;
	int drains = 0;
	for (size_t i = 0; i < j->n; i++)
		drains |= j->r[i]->drain != NULL;
	size_t nccl = 0;
	for (size_t k = 0; drains && k < j->in->n && nccl < 2; k++)
		nccl += may_hold_nccl(&j->in->v[k]);
	return nccl >= 2;
}

/* The workers; the calling thread is one of them. */
static void run_workers(struct job *j, int jobs)
{
	pthread_t th[256];
	int started = 0;
	void *(*fn)(void *) = worker;
	if (lockstep(j)) {
		j->lf = calloc(j->in->n, sizeof *j->lf);
		if (!j->lf)
			exit(1);
		for (size_t k = 0; k < j->in->n; k++)
			j->lf[k].pos = INT64_MIN;
		j->left = j->in->n;
		pthread_cond_init(&j->cv, NULL);
		fn = lockstep_worker;
	}
	if (jobs > 256)
		jobs = 256;
	for (int k = 1; k < jobs; k++)
		if (!pthread_create(&th[started], NULL, fn, j))
			started++;
	fn(j);
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	merge_ready(j); /* (every file is read: merges what another left) */
	if (j->lf) {
		pthread_cond_destroy(&j->cv);
		free(j->lf);
	}
}

int reports_collect(struct inputs *in, const struct report *const *r, size_t n,
		    const struct stats_opts *opts, int align, int jobs, const char *cmd,
		    const char *steps_arg, collect_fn fn, void *ctx)
{
	struct job j = {.in = in, .r = r, .n = n, .opts = opts, .cmd = cmd};
	j.st = calloc(n ? n : 1, sizeof *j.st);
	j.parts = calloc(in->n ? in->n : 1, sizeof *j.parts);
	j.done = calloc(in->n ? in->n : 1, sizeof *j.done);
	if (!j.st || !j.parts || !j.done)
		exit(1);
	pthread_mutex_init(&j.mu, NULL);
	struct clocks ck;
	if (clocks_align(in, align, 1, &ck))
		j.rc = 1;
	for (size_t i = 0; i < n; i++)
		j.st[i] = r[i]->begin(opts);
	run_workers(&j, jobs < 1 ? 1 : jobs);
	pthread_mutex_destroy(&j.mu);
	free(j.parts);
	free((void *)j.done);
	int rc = j.rc;
	size_t stepless = j.stepless;
	if (j.outside == 1) /* their figures are all empty: say why */
		fprintf(stderr, "cuptrace %s: warning: --steps %s: %s has no step in that range\n",
			cmd, steps_arg, j.first_outside);
	else if (j.outside)
		fprintf(stderr, "cuptrace %s: warning: --steps %s: %zu files have no step in that "
			"range (%s, ...)\n", cmd, steps_arg, j.outside, j.first_outside);
	void **st = j.st;
	int none = in->n && stepless == in->n;
	if (none) {
		/* Tables of nothing would only say "(no rows)". */
		if (in->n == 1)
			fprintf(stderr, "cuptrace %s: --steps %s: %s holds no steps", cmd, steps_arg,
				in->v[0].f.path);
		else
			fprintf(stderr, "cuptrace %s: --steps %s: none of the %zu files holds steps", cmd,
				steps_arg, in->n);
		fprintf(stderr, " (steps come from cuptrace_step() or CUPTRACE_STEP_RANGE)\n");
	} else {
		for (size_t k = 0; k < in->nlogs; k++)
			for (size_t i = 0; i < n; i++)
				if (r[i]->log)
					r[i]->log(st[i], in->logs[k]);
	}
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
