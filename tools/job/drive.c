// SPDX-License-Identifier: MIT
/* The driver of the model over a job's files (drive.h): worker threads
 * taking units of work (a file, a share of one, or an output's files)
 * from one counter; a share's reader of its own and whose events are
 * whose; the files handed back in their order; the lockstep; the
 * progress line. */
#include "job/drive.h"
#include "util/progress.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file in lockstep. */
struct lfile {
	/* The worker that reads it (busy) alone touches these: */
	struct model_run *mr;
	int begun;
	/* Under d->mu: */
	int64_t pos; /* job time read up to (the decoder's latest TS); INT64_MIN: none yet */
	uint8_t busy, read; /* read: to its end */
};

struct drive {
	struct inputs *in;
	const struct drive_ops *ops;
	const struct drive_how *how;
	unsigned k; /* shares per file */
	_Atomic size_t next; /* the next unit: file next / k, share next % k */
	_Atomic int rc;
	_Atomic int running; /* workers not ended */
	_Atomic uint64_t progress; /* records read */
	struct drive_file *files; /* share 0 of each file (its ctx waits for merge) */
	pthread_mutex_t mu;	   /* merge, lockstep */
	/* Under mu: */
	unsigned *closed; /* shares of each file closed */
	size_t merged;	  /* files merged so far */
	/* Lockstep (NULL: files read whole). */
	struct lfile *lf;
	size_t left;	   /* files not yet read to their end */
	pthread_cond_t cv; /* a chunk was read */
};

/* Records read from a file at a time in lockstep, and how far (ns of job
 * time) a file may be read ahead of the one furthest behind: workers need
 * some room to read files side by side; what is matched across files
 * grows with it (what AHEAD ns and one chunk hold). */
#define CHUNK 4096
#define AHEAD 100000000
/* Lockstep holds every file's decoder and model at once: above this many
 * files, they are read one after another. */
#define LOCKSTEP_MAX 64

int drive_jobs(int jobs, size_t n)
{
	if (jobs <= 0) {
		cpu_set_t set;
		jobs = sched_getaffinity(0, sizeof set, &set) ? (int)sysconf(_SC_NPROCESSORS_ONLN)
							       : CPU_COUNT(&set);
	}
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > n)
		jobs = (int)n;
	return jobs < 1 ? 1 : jobs;
}

/* The model's block hook for a share: whose the events that follow are. */
static void on_block(void *ctx, uint64_t block)
{
	struct drive_file *f = ctx;
	if (block > f->t->f.nblocks) /* the file's end */
		f->mine = f->share == 0;
	else
		f->mine = (block - 1) % f->nshares == f->share;
	if (f->d->ops->block)
		f->d->ops->block(f->d->ops->arg, f, block);
}

/* f is read to its end (read: through the model) or was not read: the
 * caller's close, then its decoding state is freed (memory follows the
 * workers, not the number of files). Not 0 on a failure. */
static int end_file(struct drive *d, struct drive_file *f, int read)
{
	int bad = d->ops->close && d->ops->close(d->ops->arg, f);
	if (read)
		tfile_release(f->t);
	return bad;
}

/* Hands back, in file order, the files whose shares are all closed, from
 * the first not merged yet (d->mu held). */
static void merge_ready_locked(struct drive *d)
{
	for (; d->merged < d->in->n && d->closed[d->merged] == d->k; d->merged++)
		d->ops->merge(d->ops->arg, &d->files[d->merged]);
}

static void closed(struct drive *d, size_t k)
{
	if (!d->ops->merge)
		return;
	pthread_mutex_lock(&d->mu);
	d->closed[k]++;
	merge_ready_locked(d);
	pthread_mutex_unlock(&d->mu);
}

/* Reads share `share` of file k through the model; not 0 on a failure. */
static int read_file(struct drive *d, size_t k, unsigned share, void *w)
{
	const struct drive_ops *ops = d->ops;
	struct tfile *t = &d->in->v[k], u;
	struct drive_file sf, *f = share ? &sf : &d->files[k];
	*f = (struct drive_file){.t = t, .index = k, .share = share, .nshares = d->k, .mine = 1,
	                         .w = w, .d = d};
	if (share) {
		/* A reader of its own, the same placing. Share 0 reports the
		 * file's problems. */
		memset(&u, 0, sizeof u);
		u.index = t->index, u.rank = t->rank, u.shown_rank = t->shown_rank, u.off_ns = t->off_ns;
		u.pid = t->pid;
		/* its window (what it leaves out is share 0's to count) */
		u.piece.cut = t->piece.cut, u.piece.from = t->piece.from, u.piece.to = t->piece.to;
		memcpy(u.label, t->label, sizeof u.label);
		if (ct_file_open(&u.f, t->f.path)) {
			say("%s", u.f.err); /* its blocks would be missing */
			closed(d, k);
			return 1;
		}
		f->t = &u;
	}
	int read = !ops->open || !ops->open(ops->arg, f);
	if (read) {
		struct m_watch watch = {share == 0 && d->how->progress ? &d->progress : NULL,
		                        d->k > 1 ? on_block : NULL, f};
		f->rc = model_file(f->t, ops->consumer, f->ctx,
		                   watch.progress || watch.block ? &watch : NULL);
	}
	int bad = end_file(d, f, read);
	if (share) {
		ct_file_close(&u.f);
		f->t = t;
	}
	closed(d, k);
	return bad;
}

/* Reads the files of lead file k's output, when k is a lead. */
static int read_output(struct drive *d, size_t k, void *w)
{
	const struct drive_ops *ops = d->ops;
	struct tfile *lead = &d->in->v[k];
	if (lead->lead != lead->index)
		return 0; /* in its lead's output */
	if (ops->output_begin && ops->output_begin(ops->arg, w, lead))
		return 1;
	int bad = 0;
	for (size_t i = 0; i < d->in->n; i++) /* the lead, its children: sorted order */
		if (tfile_in_output(&d->in->v[i], lead))
			bad |= read_file(d, i, 0, w);
	if (ops->output_end && ops->output_end(ops->arg, w, lead))
		bad = 1;
	return bad;
}

static void *worker(void *arg)
{
	struct drive *d = arg;
	const struct drive_ops *ops = d->ops;
	void *w = ops->worker_begin ? ops->worker_begin(ops->arg) : NULL;
	for (size_t u; (u = atomic_fetch_add(&d->next, 1)) < d->in->n * d->k;) {
		size_t k = u / d->k;
		if (d->how->only && !d->how->only[k])
			continue; /* another process's */
		int bad = d->how->by_output ? read_output(d, k, w) : read_file(d, k, (unsigned)(u % d->k), w);
		if (bad)
			atomic_store(&d->rc, 1);
	}
	if (ops->worker_end)
		ops->worker_end(ops->arg, w);
	atomic_fetch_sub(&d->running, 1);
	return NULL;
}

/* ---- lockstep */

/* The file to read a chunk of next (d->mu held), or -1: the one furthest
 * behind that no worker reads, if it is not more than AHEAD past the
 * furthest behind of all (which a worker then reads: wait for it). Files
 * not begun come first. */
static ptrdiff_t pick(struct drive *d)
{
	int64_t floor = INT64_MAX, best_pos = INT64_MAX;
	ptrdiff_t best = -1;
	for (size_t k = 0; k < d->in->n; k++) {
		const struct lfile *f = &d->lf[k];
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

/* Reads a chunk of file k (d->mu not held; the caller made it busy); 0
 * once it is read whole. *pos: how far it is read now. */
static int read_chunk(struct drive *d, size_t k, int64_t *pos, void *w)
{
	const struct drive_ops *ops = d->ops;
	struct lfile *l = &d->lf[k];
	struct drive_file *f = &d->files[k];
	f->w = w;
	if (!l->begun) {
		l->begun = 1;
		*f = (struct drive_file){.t = &d->in->v[k], .index = k, .nshares = 1, .mine = 1,
		                         .w = w, .d = d};
		if (ops->open && ops->open(ops->arg, f)) {
			if (end_file(d, f, 0))
				atomic_store(&d->rc, 1);
			return 0;
		}
		l->mr = model_open(f->t, ops->consumer, f->ctx, NULL);
	}
	struct tfile *t = f->t;
	int more = model_step(l->mr, CHUNK);
	if (t->f.last_ts) {
		int64_t at = (int64_t)t->f.last_ts + t->off_ns;
		if (at > *pos)
			*pos = at;
	}
	if (!more) {
		f->rc = model_close(l->mr);
		l->mr = NULL;
		if (end_file(d, f, 1))
			atomic_store(&d->rc, 1);
	}
	return more;
}

static void *lockstep_worker(void *arg)
{
	struct drive *d = arg;
	const struct drive_ops *ops = d->ops;
	void *w = ops->worker_begin ? ops->worker_begin(ops->arg) : NULL;
	pthread_mutex_lock(&d->mu);
	while (d->left) {
		ptrdiff_t k = pick(d);
		if (k < 0) {
			pthread_cond_wait(&d->cv, &d->mu);
			continue;
		}
		struct lfile *f = &d->lf[k];
		int64_t pos = f->pos;
		f->busy = 1;
		pthread_mutex_unlock(&d->mu);
		int more = read_chunk(d, (size_t)k, &pos, w);
		pthread_mutex_lock(&d->mu);
		if (ops->chunk)
			ops->chunk(ops->arg, &d->files[k]);
		f->busy = 0;
		f->pos = pos;
		if (!more) {
			f->read = 1;
			d->left--;
			d->closed[k] = 1;
			if (ops->merge)
				merge_ready_locked(d);
		}
		pthread_cond_broadcast(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
	if (ops->worker_end)
		ops->worker_end(ops->arg, w);
	atomic_fetch_sub(&d->running, 1);
	return NULL;
}

/* Runs the workers. With a progress line on a terminal the calling thread
 * shows it meanwhile (had it run a worker itself first, the line would
 * never come); elsewhere it is one of the workers. */
static void run_workers(struct drive *d, int jobs)
{
	pthread_t th[256];
	if (jobs > 256)
		jobs = 256;
	void *(*fn)(void *) = d->lf ? lockstep_worker : worker;
	const char *what = d->how->progress;
	int watch = what && isatty(STDERR_FILENO);
	if (what)
		progress(what, 0, 0); /* the clock starts */
	atomic_store(&d->running, jobs);
	int started = 0;
	for (int k = watch ? 0 : 1; k < jobs; k++)
		if (!pthread_create(&th[started], NULL, fn, d))
			started++;
		else
			atomic_fetch_sub(&d->running, 1);
	if (!watch || !started) {
		if (watch) /* no thread could be made: read here, no progress */
			atomic_fetch_add(&d->running, 1);
		fn(d);
	}
	while (watch && atomic_load(&d->running) > 0) {
		progress(what, (unsigned long long)atomic_load(&d->progress), 0);
		usleep(100000);
	}
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	if (what)
		progress(what, (unsigned long long)atomic_load(&d->progress), 1);
}

int drive(struct inputs *in, const struct drive_ops *ops, const struct drive_how *how)
{
	struct drive d = {.in = in, .ops = ops, .how = how};
	d.k = how->nshares > 1 ? how->nshares : 1;
	d.files = xcalloc(in->n, sizeof *d.files);
	d.closed = xcalloc(in->n, sizeof *d.closed);
	pthread_mutex_init(&d.mu, NULL);
	if (how->lockstep && in->n && in->n <= LOCKSTEP_MAX && !how->by_output) {
		d.k = 1;
		d.lf = xcalloc(in->n, sizeof *d.lf);
		for (size_t k = 0; k < in->n; k++)
			d.lf[k].pos = INT64_MIN;
		d.left = in->n;
		pthread_cond_init(&d.cv, NULL);
	}
	size_t units = in->n;
	for (size_t k = 0; how->only && k < in->n; k++)
		units -= !how->only[k];
	run_workers(&d, drive_jobs(how->jobs, units * d.k));
	if (ops->merge) { /* every file is read: merges what another worker left */
		pthread_mutex_lock(&d.mu);
		merge_ready_locked(&d);
		pthread_mutex_unlock(&d.mu);
	}
	if (d.lf) {
		pthread_cond_destroy(&d.cv);
		free(d.lf);
	}
	pthread_mutex_destroy(&d.mu);
	free(d.closed);
	free(d.files);
	return atomic_load(&d.rc);
}
