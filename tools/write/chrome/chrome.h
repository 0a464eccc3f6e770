// SPDX-License-Identifier: MIT
/* Chrome trace JSON writer. A conversion writes the head (metadata and the
 * processes of the files), then each file's events (chrome_consumer, possibly
 * from several threads into one sink), then the tail. */
#ifndef CT_CHROME_H
#define CT_CHROME_H

#include "model/model.h"
#include "read/inputs.h"
#include "write/out.h"

#include <stdint.h>

#define CHROME_CHUNK (1u << 20) /* bytes of whole events handed to the sink at once */

struct chrome {
	struct out *o;
	struct inputs *in;
	struct tfile *t; /* file being converted (set as it begins) */
	int kineto;	 /* per-rank Kineto layout: OS pids, GPU pid = device */
	uint64_t nevents;
	/* The event at hand is this worker's to write: several workers may
	 * convert one file at once, each writing only the events of its
	 * blocks (job/drive.h, shares). */
	const uint8_t *mine;
	struct cfile *cf; /* formatting caches of the file (chrome_int.h) */
};

/* Head of the document for all files of in, or (split output) those of
 * one rank's output: `only`, its lead, and the files that join it. */
void chrome_head(struct out *o, struct inputs *in, const struct tfile *only, int kineto);
/* The consumer of the model's events (model/model.h) that writes them
 * into c->o (its context: struct chrome), a file at a time. */
extern const struct m_consumer chrome_consumer;
void chrome_tail(struct out *o, struct inputs *in, const struct tfile *only);

#endif
