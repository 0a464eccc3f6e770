// SPDX-License-Identifier: MIT
/* Clocks across hosts: each host's clock offset, estimated from the trace
 * itself. Collectives end almost together on every rank of a communicator
 * (the last step needs every rank's data), so for each collective seen on
 * two hosts or more, each rank's GPU end minus the collective's median end
 * is a sample of its host's offset; the median of a host's samples is its
 * offset (refined a few times with the offsets applied, so communicators
 * that span different hosts agree). One offset per host: ranks of one
 * host keep their placement. The reference is the host of the lowest
 * rank (offset 0). docs/ANALYSIS.md, "Clocks across hosts". */
#ifndef CT_CLOCKS_H
#define CT_CLOCKS_H

#include "read/inputs.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum clock_align {
	ALIGN_AUTO,        /* collectives when the files come from more than one host */
	ALIGN_NONE,        /* the anchors alone (CLOCK_REALTIME of each host) */
	ALIGN_COLLECTIVES, /* estimated from collective ends */
};

struct clock_host {
	char *host;
	size_t files;
	int64_t rank_lo, rank_hi; /* its files' ranks (-1: none) */
	int64_t offset_ns;        /* its clock minus the reference host's */
	uint64_t samples;         /* rank ends the estimate used */
	int known;                /* estimated (the reference always is) */
};

struct clocks {
	struct clock_host *h; /* in rank order: h[0] is the reference */
	size_t n;
	int mode;        /* what was done: ALIGN_NONE or ALIGN_COLLECTIVES */
	uint64_t colls;  /* collectives matched across hosts and used */
	int applied;     /* the files were moved */
};

/* "none" or "collectives"; -1 for anything else. */
int clocks_parse(const char *arg, int *mode);
/* Groups the files by host; with mode collectives (ALIGN_AUTO: when more
 * than one host is present) estimates each host's offset in a first pass
 * over the NCCL records of every file (rewound after) and, with apply,
 * moves each file by its host's offset (off_ns, base_ns). -1 when a file
 * could not be rewound (said on stderr). */
int clocks_align(struct inputs *in, int mode, int apply, struct clocks *c);
/* The offsets for people: a line, then one per host, each after lead
 * (nothing unless estimated for more than one host). */
void clocks_print(const struct clocks *c, FILE *f, const char *lead);
void clocks_free(struct clocks *c);

#endif
