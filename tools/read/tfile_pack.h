// SPDX-License-Identifier: MIT
/* What reading a file found out (its status and message, its counts of
 * events and drops, its last footer, the damage read past, the events a
 * piece of the job left out), as bytes: an
 * MPI job's rank that reads a file sends it to rank 0, which says and
 * writes what the serial command says and writes of every file
 * (docs/parallel-tools.md). The header is not sent: every rank opens
 * every file's. */
#ifndef CT_TFILE_PACK_H
#define CT_TFILE_PACK_H

#include "read/inputs.h"
#include "util/pack.h"

void tfile_pack_state(struct pack *p, const struct tfile *t);
/* Into t (the same file, opened on this rank); p->bad when short. */
void tfile_unpack_state(struct pack *p, struct tfile *t);

#endif
