// SPDX-License-Identifier: MIT
/* The conversion's outputs, written on the driver's workers (job/drive.h):
 * one merged document whose pieces the sink puts in order (a file, or a
 * share's blocks, per piece), or one per rank. */
#include "write/convert.h"
#include "job/drive.h"
#include "write/chrome/chrome.h"
#include "write/convert_ranks.h"
#include "write/pftrace/pftrace.h"
#include "write/sink.h"
#include "util/mpirt.h"
#include "util/tmp_guard.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A conversion: its output and how files are written into it. */
struct conv {
	struct inputs *in;
	struct sink *sink; /* merged output, or NULL for split */
	const char *dir;   /* split output */
	int gz;
	int pftrace; /* merged output as Perfetto protobuf: PF_ZSTD or PF_PLAIN (0: JSON) */
	_Atomic size_t written; /* split: input files in outputs completed */
};

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

/* A worker's: its output buffer and the file (share) it converts. */
struct cworker {
	struct out o;
	struct sink *s;	/* split: the output being written */
	char path[4096];
	size_t files;	/* split: files in that output */
	struct chrome c;
	struct pft *p;
	struct cutter cut;
	int blocks; /* pieces: the file's blocks (above) */
};

static void *worker_begin(void *arg)
{
	struct conv *j = arg;
	struct cworker *w = xcalloc(1, sizeof *w);
	if (j->sink)
		out_init_sink(&w->o, j->sink);
	return w;
}

static void worker_end(void *arg, void *wp)
{
	struct conv *j = arg;
	struct cworker *w = wp;
	if (j->sink)
		out_close(&w->o);
	sink_thread_done();
	free(w);
}

static int open_file(void *arg, struct drive_file *f)
{
	struct conv *j = arg;
	struct cworker *w = f->w;
	struct out *o = &w->o;
	/* pieces: the whole file or share (pftrace: a sequence per share, so
	 * -j changes the file anyway), or its blocks (above) */
	w->cut = (struct cutter){o, (uint32_t)f->t->index + 1, f->share, f->nshares, 0};
	w->blocks = j->sink && f->nshares > 1 && !j->pftrace;
	if (j->sink) /* (a split output's sink holds one file: key 0) */
		o->key = SINK_KEY(w->cut.unit, w->blocks ? 0 : f->share);
	if (j->pftrace) {
		w->p = pftrace_begin(o, j->in, f->t, f->share, f->nshares, j->pftrace == PF_PLAIN,
		                     &f->mine);
		f->ctx = w->p;
	} else {
		memset(&w->c, 0, sizeof w->c);
		w->c.o = o;
		w->c.in = j->in;
		w->c.kineto = j->sink == NULL;
		w->c.mine = &f->mine;
		f->ctx = &w->c;
	}
	return 0;
}

static void on_block(void *arg, struct drive_file *f, uint64_t block)
{
	(void)arg;
	struct cworker *w = f->w;
	struct cutter *c = &w->cut;
	if (!w->blocks)
		return;
	for (; c->next + 1 < block; c->next++)
		if (c->next % c->k == c->share)
			piece_done(c, c->next, 0);
	c->o->key = SINK_KEY(c->unit, block - 1);
}

static int close_file(void *arg, struct drive_file *f)
{
	struct conv *j = arg;
	struct cworker *w = f->w;
	if (j->pftrace)
		pftrace_end(w->p);
	int rc = 0;
	if (f->rc && f->share == 0) { /* share 0 reports the file's problems */
		say("%s", f->t->f.err);
		rc = 1;
	}
	if (!j->sink) {
		w->files++;
		return rc;
	}
	if (!w->blocks)
		piece_done(&w->cut, f->share, f->share + 1 == f->nshares);
	else if (f->share == 0)
		piece_done(&w->cut, w->cut.next, 1); /* the file's end */
	return rc;
}

/* --split-ranks: one output per lead file. */
static int split_begin(void *arg, void *wp, struct tfile *lead)
{
	struct conv *j = arg;
	struct cworker *w = wp;
	inputs_split_path(j->in, (size_t)(lead - j->in->v), j->dir, j->gz ? ".json.gz" : ".json",
	                  w->path, sizeof w->path);
	w->s = sink_open(w->path);
	if (!w->s) {
		say("%s: %s", w->path, strerror(errno));
		return 1;
	}
	out_init_sink(&w->o, w->s);
	chrome_head(&w->o, j->in, lead, 1);
	w->files = 0;
	return 0;
}

static int split_end(void *arg, void *wp, struct tfile *lead)
{
	struct conv *j = arg;
	struct cworker *w = wp;
	chrome_tail(&w->o, j->in, lead);
	out_close(&w->o);
	if (sink_close(w->s)) {
		say("writing %s: %s", w->path, strerror(errno));
		return 1;
	}
	atomic_fetch_add(&j->written, w->files);
	return 0;
}

/* Rank 0 of an MPI job: each other rank's piece (its files' units, in
 * file order after rank 0's) into the output, or the output failed. */
static int gather_pieces(struct inputs *in, struct sink *s)
{
	int rc = 0;
	for (int r = 1; r < mpirt_size(); r++) {
		struct sink_piece pc;
		size_t lo, hi, none = 0;
		int failed, fd = -1;
		rc |= cranks_recv(r, in, &none, &pc, &failed);
		cranks_range(in, r, &lo, &hi);
		if (pc.tmp) { /* opened and removed: nothing is left behind */
			fd = open(pc.tmp, O_RDONLY | O_CLOEXEC);
			if (fd < 0 && !failed) {
				failed = errno;
				say("%s: rank %d's piece: %s (a folder its host does not share?)",
				    pc.tmp, r, strerror(errno));
			}
			unlink(pc.tmp);
			free(pc.tmp);
		} else if (!failed) {
			failed = EIO;
		}
		if (failed) {
			sink_fail(s, failed);
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (lo < hi)
			sink_put_fd(s, SINK_KEY(lo + 1, 0), fd, pc.len, pc.crc, pc.ulen);
		else
			close(fd);
		for (size_t u = lo; u < hi; u++)
			sink_done(s, SINK_KEY(u + 1, 0), 1);
	}
	return rc;
}

/* A rank above 0: its piece closed and said to rank 0. */
static int send_piece(struct cranks *cr, struct inputs *in, struct sink *s, int rc)
{
	struct sink_piece pc;
	int failed = sink_close_piece(s, &pc) ? errno : 0;
	if (failed)
		say("writing a piece of %s: %s", cr->out, strerror(failed));
	cranks_send(cr, in, rc, 0, failed ? NULL : &pc, failed);
	cranks_end(cr); /* rank 0 has taken every piece (or could not) */
	if (pc.tmp) /* rank 0 removes it; where it could not (another disk), here */
		unlink(pc.tmp);
	free(pc.tmp);
	return rc;
}

static int merged(struct inputs *in, const char *outpath, int jobs, int any_order, size_t *written,
		  int pftrace)
{
	*written = 0;
	int rank = mpirt_rank();
	struct cranks cr; /* an MPI job's: rank r's files into a piece for rank 0 */
	cranks_begin(&cr, in, 0);
	cr.out = outpath;
	struct sink *s = rank ? NULL : sink_open(outpath);
	if (!rank && !s)
		say("%s: %s", outpath, strerror(errno));
	if (cranks_agree(&cr, s ? 0 : EIO)) { /* rank 0 could not: none goes on */
		cranks_end(&cr);
		return 1;
	}
	if (rank && !(s = sink_open_piece(outpath))) {
		say("%s: %s", outpath, strerror(errno));
		cranks_send(&cr, in, 1, 0, NULL, errno ? errno : EIO);
		cranks_end(&cr);
		return 1;
	}
	if (any_order)
		sink_any_order(s);
	for (size_t i = 0; i < in->n; i++)
		in->v[i].pid = (uint64_t)(tfile_place(&in->v[i]) + 1) * 1000000u;
	/* Cores to spare beyond one per file and one for the sink's writing
	 * thread: several workers share each file. A share decodes the whole
	 * file but formats only its blocks (about half the work of the whole),
	 * so two workers on a two-core machine lose to one worker beside the
	 * writing thread (measured, bench/JOURNAL.md). */
	size_t cores = (size_t)drive_jobs(jobs, SIZE_MAX);
	/* (.pftrace: a sequence per share, numbered by their count; JSON: the
	 * same for any count, taken for a rank's files) */
	size_t n = pftrace || !cr.mine ? in->n : cr.hi - cr.lo;
	unsigned k = n && cores > n + 1 ? (unsigned)((cores - 1) / n) : 1;
	struct conv j = {.in = in, .sink = s, .pftrace = pftrace};
	struct out o;
	out_init_sink(&o, s); /* the head: unit 0 of the sink's, files 1..n, the tail */
	if (rank) /* a piece: its units, the first its first file's */
		for (size_t u = 0; u <= cr.lo; u++)
			sink_done(s, SINK_KEY(u, 0), 1);
	else if (pftrace)
		pftrace_head(&o, in);
	else
		chrome_head(&o, in, NULL, 0);
	if (!rank) {
		out_chunk(&o, 0);
		sink_done(s, o.key, 1);
	}
	struct drive_ops ops = {.consumer = pftrace ? &pftrace_consumer : &chrome_consumer,
	                        .arg = &j, .worker_begin = worker_begin, .worker_end = worker_end,
	                        .open = open_file, .close = close_file, .block = on_block};
	struct drive_how how = {.jobs = jobs, .nshares = k, .only = cr.mine,
	                        .progress = rank ? NULL : "converting"};
	int rc = drive(in, &ops, &how);
	if (rank) {
		out_close(&o);
		sink_thread_done();
		return send_piece(&cr, in, s, rc);
	}
	if (cr.mine)
		rc |= gather_pieces(in, s);
	cranks_end(&cr);
	o.key = SINK_KEY(in->n + 1, 0);
	if (!pftrace)
		chrome_tail(&o, in, NULL);
	out_close(&o);
	sink_thread_done();
	if (sink_close(s)) {
		say("writing %s: %s", outpath, strerror(errno));
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
	if (cranks_mkdir(dir, &made)) {
		if (!mpirt_rank())
			say("%s: %s", dir, strerror(errno));
		return 1;
	}
	struct cranks cr; /* an MPI job's: each rank writes its share of the outputs */
	cranks_begin(&cr, in, 1);
	for (size_t i = 0; i < in->n; i++)
		in->v[i].pid = in->v[i].f.h.pid;
	struct conv j = {.in = in, .dir = dir, .gz = gz};
	struct drive_ops ops = {.consumer = &chrome_consumer, .arg = &j, .worker_begin = worker_begin,
	                        .worker_end = worker_end, .open = open_file, .close = close_file,
	                        .output_begin = split_begin, .output_end = split_end};
	struct drive_how how = {.jobs = jobs, .by_output = 1, .only = cr.mine,
	                        .progress = mpirt_rank() ? NULL : "converting"};
	int rc = drive(in, &ops, &how);
	*written = atomic_load(&j.written);
	return cranks_split_end(&cr, in, rc, written, dir, made);
}
