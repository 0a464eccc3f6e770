// SPDX-License-Identifier: MIT
#include "write/convert.h"
#include "write/chrome/chrome.h"
#include "write/pftrace/pftrace.h"
#include "util/progress.h"
#include "util/tmp_guard.h"
#include "write/sink.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct job {
	struct inputs *in;
	struct sink *sink; /* merged output, or NULL for split */
	const char *dir;   /* split output */
	int gz;
	int pftrace; /* merged output as Perfetto protobuf: PF_ZSTD or PF_PLAIN (0: JSON) */
	unsigned nshares; /* workers per file (merged output, fewer files than workers) */
	_Atomic size_t next;
	_Atomic int rc;
	_Atomic uint64_t progress;
	_Atomic int running;
	_Atomic size_t written; /* outputs completed */
};

int convert_jobs(int jobs, size_t nfiles)
{
	if (jobs <= 0) {
		cpu_set_t set;
		jobs = sched_getaffinity(0, sizeof set, &set) ? (int)sysconf(_SC_NPROCESSORS_ONLN)
							       : CPU_COUNT(&set);
	}
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > nfiles)
		jobs = (int)nfiles;
	return jobs < 1 ? 1 : jobs;
}

/* Where a share's JSON is cut (several workers on one file): the sink's
 * pieces of the file are its blocks, piece p (block p + 1) written by
 * share p % nshares, then piece B (B blocks) with what the file's end
 * produces, share 0's. In key order they hold the events in the order
 * one worker writes them: the document is the same for any -j. */
struct cutter {
	struct out *o;
	uint32_t unit;
	unsigned share, k;
	uint64_t next; /* the first piece not done yet */
};

static void piece_done(struct cutter *c, uint64_t piece, int last)
{
	c->o->key = SINK_KEY(c->unit, piece);
	out_hand_over(c->o);
	sink_done(c->o->sink, c->o->key, last);
}

static void on_block(void *ctx, uint64_t block)
{
	struct cutter *c = ctx;
	for (; c->next + 1 < block; c->next++)
		if (c->next % c->k == c->share)
			piece_done(c, c->next, 0);
	c->o->key = SINK_KEY(c->unit, block - 1);
}

static int convert_one(struct job *j, struct tfile *t, struct out *o, unsigned share)
{
	struct chrome c;
	memset(&c, 0, sizeof c);
	c.o = o;
	c.in = j->in;
	c.kineto = j->sink == NULL;
	c.progress = &j->progress;
	c.share = share;
	c.nshares = j->nshares;
	/* pieces: the whole file or share (pftrace: a sequence per share, so
	 * -j changes the file anyway), or its blocks (above) */
	unsigned k = j->nshares ? j->nshares : 1;
	struct cutter cut = {o, (uint32_t)t->index + 1, share, k, 0};
	int blocks = j->sink && k > 1 && !j->pftrace;
	if (j->sink) /* (a split output's sink holds one file: key 0) */
		o->key = SINK_KEY(cut.unit, blocks ? 0 : share);
	if (blocks)
		c.block = on_block, c.block_ctx = &cut;
	int rc = 0;
	if (share == 0) {
		rc = j->pftrace ? pftrace_file(o, j->in, t, 0, j->nshares, j->pftrace == PF_PLAIN, &j->progress)
		                : chrome_file(&c, t);
		/* Memory follows the workers, not the number of files. */
		tfile_release(t);
	} else {
		/* Another share of the file: a reader of its own, the same
		 * placing. Share 0 reports the file's problems. */
		struct tfile u;
		memset(&u, 0, sizeof u);
		u.index = t->index, u.rank = t->rank, u.shown_rank = t->shown_rank, u.off_ns = t->off_ns;
		u.pid = t->pid;
		memcpy(u.label, t->label, sizeof u.label);
		if (ct_file_open(&u.f, t->f.path)) {
			fprintf(stderr, "cuptrace: %s\n", u.f.err); /* its blocks would be missing */
			return 1;
		}
		if (j->pftrace)
			pftrace_file(o, j->in, &u, share, j->nshares, j->pftrace == PF_PLAIN, &j->progress);
		else
			chrome_file(&c, &u);
		tfile_release(&u);
		ct_file_close(&u.f);
	}
	if (!j->sink)
		return rc;
	if (!blocks)
		piece_done(&cut, share, share + 1 == k);
	else if (share == 0)
		piece_done(&cut, cut.next, 1); /* the file's end */
	return rc;
}

static int split_one(struct job *j, struct tfile *t)
{
	char path[4096];
	inputs_split_path(j->in, (size_t)(t - j->in->v), j->dir, j->gz ? ".json.gz" : ".json", path,
	                  sizeof path);
	struct sink *s = sink_open(path);
	if (!s) {
		fprintf(stderr, "cuptrace: %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct out o;
	out_init_sink(&o, s);
	chrome_head(&o, j->in, t, 1);
	int rc = 0;
	size_t files = 0;
	for (size_t i = 0; i < j->in->n; i++) /* the lead, its children: sorted order */
		if (tfile_in_output(&j->in->v[i], t)) {
			rc |= convert_one(j, &j->in->v[i], &o, 0) ? 1 : 0;
			files++;
		}
	chrome_tail(&o, j->in, t);
	out_close(&o);
	if (sink_close(s)) {
		fprintf(stderr, "cuptrace: writing %s: %s\n", path, strerror(errno));
		return 1;
	}
	atomic_fetch_add(&j->written, files);
	return rc;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct out o;
	if (j->sink)
		out_init_sink(&o, j->sink);
	unsigned k = j->nshares ? j->nshares : 1;
	for (;;) {
		size_t u = atomic_fetch_add(&j->next, 1);
		if (u >= j->in->n * k)
			break;
		struct tfile *t = &j->in->v[u / k];
		if (!j->sink && t->lead != t->index)
			continue; /* in its lead's output */
		int rc = j->sink ? (convert_one(j, t, &o, (unsigned)(u % k)) ? 1 : 0) : split_one(j, t);
		if (rc)
			atomic_store(&j->rc, 1);
	}
	if (j->sink)
		out_close(&o);
	sink_thread_done();
	atomic_fetch_sub(&j->running, 1);
	return NULL;
}

/* Runs the workers. Where stderr is a terminal the calling thread reports
 * progress meanwhile (it ran a worker itself first, and the line never
 * came); elsewhere it is one of the workers. */
static void run_workers(struct job *j, int jobs)
{
	pthread_t th[256];
	if (jobs > 256)
		jobs = 256;
	int watch = isatty(STDERR_FILENO);
	progress("converting", 0, 0); /* the clock starts */
	atomic_store(&j->running, jobs);
	int started = 0;
	for (int k = watch ? 0 : 1; k < jobs; k++)
		if (!pthread_create(&th[started], NULL, worker, j))
			started++;
		else
			atomic_fetch_sub(&j->running, 1);
	if (!watch || !started) {
		if (watch) /* no thread could be made: convert here, no progress */
			atomic_fetch_add(&j->running, 1);
		worker(j);
	}
	while (atomic_load(&j->running) > 0) {
		progress("converting", (unsigned long long)atomic_load(&j->progress), 0);
		usleep(100000);
	}
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	progress("converting", (unsigned long long)atomic_load(&j->progress), 1);
}

static int merged(struct inputs *in, const char *outpath, int jobs, int any_order, size_t *written,
		  int pftrace)
{
	*written = 0;
	struct sink *s = sink_open(outpath);
	if (!s) {
		fprintf(stderr, "cuptrace: %s: %s\n", outpath, strerror(errno));
		return 1;
	}
	if (any_order)
		sink_any_order(s);
	for (size_t i = 0; i < in->n; i++)
		in->v[i].pid = (uint64_t)(i + 1) * 1000000u;
	/* Cores to spare beyond one per file and one for the sink's writing
	 * thread: several workers share each file. A share decodes the whole
	 * file but formats only its blocks (about half the work of the whole),
	 * so two workers on a two-core machine lose to one worker beside the
	 * writing thread (measured, bench/JOURNAL.md). */
	size_t cores = (size_t)convert_jobs(jobs, (size_t)-1);
	unsigned k = in->n && cores > in->n + 1 ? (unsigned)((cores - 1) / in->n) : 1;
	struct job j = {.in = in, .sink = s, .nshares = k, .pftrace = pftrace};
	struct out o;
	out_init_sink(&o, s); /* the head: unit 0 of the sink's, files 1..n, the tail */
	if (pftrace)
		pftrace_head(&o, in);
	else
		chrome_head(&o, in, NULL, 0);
	out_chunk(&o, 0);
	sink_done(s, o.key, 1);
	run_workers(&j, convert_jobs(jobs, in->n * k));
	o.key = SINK_KEY(in->n + 1, 0);
	if (!pftrace)
		chrome_tail(&o, in, NULL);
	out_close(&o);
	int rc = atomic_load(&j.rc);
	sink_thread_done();
	if (sink_close(s)) {
		fprintf(stderr, "cuptrace: writing %s: %s\n", outpath, strerror(errno));
		rc = 1;
	} else {
		*written = 1;
	}
	return rc;
}

int convert_merged(struct inputs *in, const char *outpath, int jobs, int any_order, size_t *written)
{
	return merged(in, outpath, jobs, any_order, written, 0);
}

int convert_pftrace(struct inputs *in, const char *outpath, int jobs, int any_order, int plain,
		    size_t *written)
{
	return merged(in, outpath, jobs, any_order, written, plain ? PF_PLAIN : PF_ZSTD);
}

int convert_split(struct inputs *in, const char *dir, int gz, int jobs, size_t *written)
{
	*written = 0;
	int made;
	if (tmp_mkdir(dir, &made)) {
		fprintf(stderr, "cuptrace: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < in->n; i++)
		in->v[i].pid = in->v[i].f.h.pid;
	struct job j = {.in = in, .dir = dir, .gz = gz};
	run_workers(&j, convert_jobs(jobs, in->n));
	*written = atomic_load(&j.written);
	tmp_mkdir_done(dir, made, *written > 0);
	return atomic_load(&j.rc);
}
