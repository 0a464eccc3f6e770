// SPDX-License-Identifier: MIT
/* Chrome trace JSON writer. A conversion writes the head (metadata and the
 * processes of the files), then each file's events (chrome_file, possibly
 * from several threads into one sink), then the tail. */
#ifndef CT_CHROME_H
#define CT_CHROME_H

#include "read/inputs.h"
#include "write/out.h"

#include <stdatomic.h>
#include <stdint.h>

#define CHROME_CHUNK (1u << 20) /* bytes of whole events handed to the sink at once */

struct chrome {
	struct out *o;
	struct inputs *in;
	struct tfile *t; /* file being converted */
	int kineto;	 /* per-rank Kineto layout: OS pids, GPU pid = device */
	uint64_t nevents;
	/* A file may be converted by several workers at once, each decoding
	 * all of it (the matching state needs every event) but writing only
	 * what the events of its blocks produce: block b belongs to share
	 * b % nshares. mine: the event at hand belongs to this share. */
	unsigned share, nshares;
	void (*block)(void *ctx, uint64_t block); /* see struct m_share */
	void *block_ctx;
	int mine;
	_Atomic uint64_t *progress; /* events converted, for the progress line */
	struct cfile *cf;	    /* formatting caches of the file (chrome_int.h) */
};

/* Head of the document for all files of in, or (split output) those of
 * one rank's output: `only`, its lead, and the files that join it. */
void chrome_head(struct out *o, struct inputs *in, const struct tfile *only, int kineto);
/* Converts one file's events (the resolved events of model/model.h) into
 * c->o. -1 when the file turned out corrupt (what came before the damage
 * is written). */
int chrome_file(struct chrome *c, struct tfile *t);
void chrome_tail(struct out *o, struct inputs *in, const struct tfile *only);

#endif
