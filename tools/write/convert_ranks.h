// SPDX-License-Identifier: MIT
/* A conversion as the ranks of an MPI job (docs/parallel-tools.md): which
 * files are this rank's, and what a rank above 0 tells rank 0 once its
 * files are converted (its status, the lines it said, each file's reading
 * outcome, the piece of a merged output it wrote), so that rank 0 says
 * and writes what the serial command says and writes. */
#ifndef CT_CONVERT_RANKS_H
#define CT_CONVERT_RANKS_H

#include "read/inputs.h"
#include "write/sink.h"

#include <stdio.h>

struct cranks {
	unsigned char *mine; /* of in->n: this rank's files; NULL when serial */
	size_t lo, hi;	     /* merged output: mine are [lo, hi) */
	const char *out;     /* merged output: its name */
	FILE *said;	     /* a rank above 0: the lines it says */
	char *text;
	size_t ntext;
};

/* Shares the files out (by_output: whole outputs, their leads in order)
 * when this process is one of N > 1 ranks; a rank above 0 keeps what it
 * says from now on for rank 0. */
void cranks_begin(struct cranks *c, const struct inputs *in, int by_output);
/* Rank 0's err (0: it goes on) on every rank. */
int cranks_agree(const struct cranks *c, int err);
/* A rank above 0: its outcome to rank 0 (pc: its piece, or NULL). */
void cranks_send(struct cranks *c, const struct inputs *in, int rc, size_t written,
                 const struct sink_piece *pc, int failed);
/* Rank 0: rank r's outcome, its lines said on stderr, its files'
 * outcomes into in; *written grows by its count, *pc is its piece (tmp
 * NULL: none). Returns its status (1 also when it did not come), and
 * *failed when its piece could not be written. */
int cranks_recv(int r, struct inputs *in, size_t *written, struct sink_piece *pc, int *failed);
/* The end of --split-ranks DIR on every rank (rc, *written: its own):
 * a rank above 0 sends its outcome, rank 0 takes every rank's (their
 * files' counts into *written) and keeps DIR only when something was
 * written (made: tmp_mkdir's guard); then cranks_end. Returns the
 * status. */
int cranks_split_end(struct cranks *c, struct inputs *in, int rc, size_t *written,
                     const char *dir, int made);
/* The files [*lo, *hi) of rank r (merged output). */
void cranks_range(const struct inputs *in, int r, size_t *lo, size_t *hi);
/* Every rank, once: with N ranks, returns when all have come (rank 0
 * has then taken every rank's outcome). */
void cranks_end(struct cranks *c);

/* --split-ranks DIR: made once (rank 0, which says whether it could), as
 * tmp_mkdir (util/tmp_guard.h). */
int cranks_mkdir(const char *dir, int *guard_slot);

#endif
