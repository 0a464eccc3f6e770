// SPDX-License-Identifier: MIT
/* The piece of a job a command was asked for (model/piece.h), chosen and
 * cut: --ranks slowest:N takes its ranks from the reports' own figures
 * (nccl_skew's wait imposed, else steps' step times), which need every
 * rank's file; a list takes the ranks it names. */
#ifndef CT_PIECE_SLOW_H
#define CT_PIECE_SLOW_H

#include "model/piece.h"

/* Chooses the ranks, leaves the other files out and cuts the kept ones
 * (model/piece.h), on inputs placed on one timeline already (the clocks
 * stay). 0; -1 (said on stderr) when the files tell no piece (no step of
 * --steps, nothing that says which rank is slow; bad input); -2 when
 * --ranks names no rank of the inputs (a usage error). jobs: -j. */
int piece_apply(struct inputs *in, struct piece *p, int jobs);

#endif
