// SPDX-License-Identifier: MIT
/* The driver that runs the model over a job's files on threads, for
 * `cuptrace convert`, `stats` and `report`. Every thread of those
 * commands is here: the workers and the counter they take work from; the
 * shares (with cores to spare, several workers on one file, each running
 * the whole model, since matching needs every record, but owning only the
 * events that the records of its blocks produce); the files handed back
 * in file order; the lockstep (a chunk of the file furthest behind at a
 * time). The caller gives a consumer of the model and hooks, and sees one
 * file (or share of a file) at a time in each call. */
#ifndef CT_DRIVE_H
#define CT_DRIVE_H

#include "model/model.h"
#include "read/inputs.h"

#include <stddef.h>
#include <stdint.h>

struct drive;

/* A file, or a share of it, as one worker reads it. */
struct drive_file {
	struct tfile *t; /* what is read: the input, or a share's own reader of it */
	size_t index;    /* the input's place in in->v */
	unsigned share, nshares; /* this share of the file's (share 0 of 1: all of it) */
	/* The model's event at hand is this share's to write: block b's
	 * events are share (b - 1) % nshares's, what the file's end produces
	 * share 0's. Always 1 with one share. Consumers that write share-wise
	 * test it for each event. */
	uint8_t mine;
	int rc;    /* the model's: -1 when the file turned out corrupt */
	void *ctx; /* the consumer's context: open sets it */
	void *w;   /* the state of the worker reading it (drive_ops.worker_begin) */
	struct drive *d; /* the driver's */
};

/* What the caller runs on the driver; a hook left NULL is not called. All
 * take `arg` first. */
struct drive_ops {
	const struct m_consumer *consumer;
	void *arg;
	/* Each worker thread's state, made and ended on that thread: what
	 * the files it reads share (an output buffer). */
	void *(*worker_begin)(void *arg);
	void (*worker_end)(void *arg, void *w);
	/* On the worker, before file (share) f is read: sets f->ctx. Not 0:
	 * the file is not read (close, chunk and merge still come). */
	int (*open)(void *arg, struct drive_file *f);
	/* On the worker, once f is read to its end (f->rc) or was not read,
	 * before its decoding state is freed. Not 0: a failure (drive
	 * returns 1). */
	int (*close)(void *arg, struct drive_file *f);
	/* With several shares: before the events of block `block` (from 1)
	 * whenever it changes, and with the file's block count + 1 before
	 * what its end produces; f->mine is already set for them. */
	void (*block)(void *arg, struct drive_file *f, uint64_t block);
	/* Once every share of a file is closed: the files in their order,
	 * one call at a time (f: share 0; f->ctx is as open left it). */
	void (*merge)(void *arg, struct drive_file *f);
	/* In lockstep: after each chunk of f, one call at a time. */
	void (*chunk)(void *arg, struct drive_file *f);
	/* by_output: around the files of each output (lead: the file whose
	 * output it is). Not 0: a failure; from output_begin, the output's
	 * files are not read. */
	int (*output_begin)(void *arg, void *w, struct tfile *lead);
	int (*output_end)(void *arg, void *w, struct tfile *lead);
};

/* How the files are shared out. */
struct drive_how {
	int jobs;         /* -j: worker threads, 0 for the CPUs this process may use */
	unsigned nshares; /* workers per file (0 or 1: a file is one worker's) */
	/* A chunk of one file at a time (no shares, not by_output), the one
	 * furthest behind in the job's time first, so that what is matched
	 * across files is what is in flight across them, not a whole file's.
	 * Every file's model is alive at once: above a few dozen files they
	 * are read whole instead. */
	int lockstep;
	/* A worker takes a lead file and reads the files of its output
	 * (tfile_in_output, in their order) one after another. */
	int by_output;
	/* Not NULL: the files k with only[k] are read, the others left to
	 * other processes (an MPI job's ranks); by_output: the outputs of
	 * the leads marked, which mark their files too. Not with merge or
	 * lockstep. */
	const unsigned char *only;
	/* The progress line's word ("converting"); NULL: none. On a
	 * terminal, the calling thread shows it while the workers run. */
	const char *progress;
};

/* Reads every input through the model into ops->consumer. Returns 0, or 1
 * when a hook said a failure or a share's reader could not be opened
 * (said on stderr). */
int drive(struct inputs *in, const struct drive_ops *ops, const struct drive_how *how);

/* Worker threads for n units of work: jobs when > 0, else the CPUs this
 * process may use; at most n, at least 1. */
int drive_jobs(int jobs, size_t n);

#endif
