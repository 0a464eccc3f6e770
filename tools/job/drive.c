// SPDX-License-Identifier: MIT
/* The driver of the model over a job's files (drive.h): worker threads
 * taking units of work (a file, a share of one, or an output's files)
 * from one counter; a share's reader of its own and whose events are
 * whose; the progress line. */
#include "job/drive.h"
#include "util/progress.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct drive {
	struct inputs *in;
	const struct drive_ops *ops;
	const struct drive_how *how;
	unsigned k; /* shares per file */
	_Atomic size_t next; /* the next unit: file next / k, share next % k */
	_Atomic int rc;
	_Atomic int running; /* workers not ended */
	_Atomic uint64_t progress; /* records read */
};

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

/* Reads share `share` of file k through the model; not 0 on a failure. */
static int read_file(struct drive *d, size_t k, unsigned share, void *w)
{
	const struct drive_ops *ops = d->ops;
	struct tfile *t = &d->in->v[k], u;
	struct drive_file f = {.t = t, .index = k, .share = share, .nshares = d->k, .mine = 1,
	                       .w = w, .d = d};
	if (share) {
		/* A reader of its own, the same placing. Share 0 reports the
		 * file's problems. */
		memset(&u, 0, sizeof u);
		u.index = t->index, u.rank = t->rank, u.shown_rank = t->shown_rank, u.off_ns = t->off_ns;
		u.pid = t->pid;
		memcpy(u.label, t->label, sizeof u.label);
		if (ct_file_open(&u.f, t->f.path)) {
			fprintf(stderr, "cuptrace: %s\n", u.f.err); /* its blocks would be missing */
			return 1;
		}
		f.t = &u;
	}
	int read = !ops->open || !ops->open(ops->arg, &f);
	if (read) {
		struct m_watch watch = {share == 0 && d->how->progress ? &d->progress : NULL,
		                        d->k > 1 ? on_block : NULL, &f};
		f.rc = model_file(f.t, ops->consumer, f.ctx,
		                  watch.progress || watch.block ? &watch : NULL);
	}
	int bad = ops->close && ops->close(ops->arg, &f);
	/* Memory follows the workers, not the number of files. */
	if (read)
		tfile_release(f.t);
	if (share)
		ct_file_close(&u.f);
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
		int bad = d->how->by_output ? read_output(d, k, w) : read_file(d, k, (unsigned)(u % d->k), w);
		if (bad)
			atomic_store(&d->rc, 1);
	}
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
	const char *what = d->how->progress;
	int watch = what && isatty(STDERR_FILENO);
	if (what)
		progress(what, 0, 0); /* the clock starts */
	atomic_store(&d->running, jobs);
	int started = 0;
	for (int k = watch ? 0 : 1; k < jobs; k++)
		if (!pthread_create(&th[started], NULL, worker, d))
			started++;
		else
			atomic_fetch_sub(&d->running, 1);
	if (!watch || !started) {
		if (watch) /* no thread could be made: read here, no progress */
			atomic_fetch_add(&d->running, 1);
		worker(d);
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
	run_workers(&d, drive_jobs(how->jobs, in->n * d.k));
	return atomic_load(&d.rc);
}
