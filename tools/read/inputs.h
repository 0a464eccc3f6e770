// SPDX-License-Identifier: MIT
/* The .ctr files named on a command line (files or directories), opened,
 * sorted by rank, and placed on one timeline. */
#ifndef CT_INPUTS_H
#define CT_INPUTS_H

#include "dec.h"
#include "util/strcache.h"

#include <stddef.h>
#include <stdint.h>

/* A file's part of a piece of the job (model/piece.h): when cut, the
 * model hands out only the events that start in [from, to) of the file's
 * clock, and counts those it leaves out. */
struct tpiece {
	uint8_t cut;
	uint64_t from, to;
	uint64_t outside, inside; /* the events it left out, and kept */
	uint64_t end; /* the last time the step pass saw (UINT64_MAX: none) */
	int place;    /* cut: its index among all the job's files */
};

struct tfile {
	struct ct_file f;
	int index;	 /* position after sorting */
	int64_t rank;	 /* header rank, or -1 */
	/* The rank every output shows: the header's, or for a file without
	 * one (no launcher) its NCCL rank (claim below), else a number of its
	 * own process's (files of one process, such as its capture windows,
	 * share it), after the known ranks: 0, 1, ... where no file has one. */
	int64_t shown_rank;
	/* For a file without a launcher rank: the rank its process had in its
	 * largest NCCL communicator (the footer's), when shown as its rank
	 * (nccl_shown: no other process has that number); else -1. */
	int64_t claim;
	int nccl_shown;
	int64_t off_ns;	 /* event ts + off_ns = ns since the job's base time */
	/* The file whose --split-ranks output holds this one's events (an
	 * index): its own, or for a forked child (a DataLoader worker) its
	 * parent's file of the same rank, so that a rank is one file there
	 * (HTA reads one file per rank). */
	int lead;
	uint64_t pid;	 /* pid of its CPU process in merged output */
	char label[320]; /* "rank R (host:pid)" */
	struct strcache esc; /* escaped strings by id */
	struct tpiece piece;
};

struct inputs {
	struct tfile *v;
	size_t n;
	char **logs; /* NCCL_DEBUG logs (inputs_open_logs only) */
	size_t nlogs;
	uint64_t base_ns; /* CLOCK_REALTIME ns that ts 0 stands for */
	int64_t world_size;
	size_t nranks; /* distinct shown ranks (struct tfile) */
	/* A piece of the job (model/piece.h) when the command was asked for
	 * one (the files of ranks not kept are left out of v); else NULL. */
	const struct piece *piece;
};

/* Expands args into files (directories: their *.ctr files, recursively)
 * and reads their headers. An unusable input (missing, unreadable, empty,
 * not a trace, a damaged header, a directory without traces) is skipped
 * with one warning each and a summary line; the same file twice, or two
 * files of the same process (a copy), are read once, with a warning.
 * Returns -1 (exit status 1 for the caller) when nothing usable is left,
 * or, with strict, when any input was unusable; the lines are printed.
 * The files hold no descriptor until read: a file is opened when its
 * first block is read and closed by tfile_release, so that any number of
 * inputs works under a small limit of open files. */
int inputs_open(struct inputs *in, char **args, int nargs, int strict);
/* The same, but inputs that are NCCL_DEBUG logs (by content) go to
 * in->logs; directories contribute their logs too. Logs alone are
 * enough. */
int inputs_open_logs(struct inputs *in, char **args, int nargs, int strict);
void inputs_close(struct inputs *in);
/* Frees what reading file t needed (buffers, strings, the escape cache,
 * its descriptor) once it has been read to its end; header, status and
 * counts stay. Every reader of many files calls it after each. */
void tfile_release(struct tfile *t);
/* 1 (said on stderr, as the command's) when path names one of the inputs (trace
 * or log, by device and inode): an output there would destroy it. */
int inputs_hold(const struct inputs *in, const char *path);
/* Who wrote the trace file at path, from its header: its rank (-1 when
 * none), host, pid and job id ("" when none; job may be NULL). -1 when the
 * file cannot be read. */
int trace_file_who(const char *path, int64_t *rank, char *host, size_t hlen, uint64_t *pid,
                   char *job, size_t jlen);
/* Closes and reopens file i at its first event (for a second pass); as
 * after inputs_open, it holds no descriptor until read. */
int inputs_rewind(struct inputs *in, size_t i);

/* The name of file i's output in a --split-ranks directory (its lead's:
 * forked children are in their parent's): DIR/rank<R><ext>; when other
 * processes that are not forked children have its rank (a restart, two
 * runs) the pid is added (rank<R>.<pid>), and a window after a rotation
 * adds its number (.w<N>). */
void inputs_split_path(const struct inputs *in, size_t i, const char *dir, const char *ext,
                       char *buf, size_t len);

/* Whether file t goes into the split output led by `lead` (every file
 * when lead is NULL: one output for all). */
static inline int tfile_in_output(const struct tfile *t, const struct tfile *lead)
{
	return !lead || t->lead == lead->index;
}

/* File t's index among all the job's files, a piece's or not (what a
 * merged output numbers its processes by, so that a piece's are the
 * whole job's). */
static inline size_t tfile_place(const struct tfile *t)
{
	return (size_t)(t->piece.cut ? t->piece.place : t->index);
}

/* Escaped JSON text of a string reference (cached for interned strings). */
const char *tfile_esc(struct tfile *t, uint64_t sid, const char *s, uint32_t len, uint32_t *outlen);

#endif
