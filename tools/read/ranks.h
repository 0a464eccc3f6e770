// SPDX-License-Identifier: MIT
/* Which rank each input file is shown as (struct tfile's shown_rank, the
 * same in every output): the launcher's rank; else, for a process without
 * one, its rank in its largest NCCL communicator (the footer's, when no
 * other file has that number), or that of the process it was forked from;
 * else a number after the known ranks. Also warns, once, when the files
 * come from several runs. */
#ifndef CT_RANKS_H
#define CT_RANKS_H

#include "read/inputs.h"

/* Sorts in->v by shown rank (then host, start, pid, part) and sets each
 * file's index, shown_rank, claim, label, and in->nranks, world_size. */
void inputs_rank(struct inputs *in);

#endif
