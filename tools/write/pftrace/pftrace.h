// SPDX-License-Identifier: MIT
/* Perfetto's native trace format (TracePacket protobuf with TrackEvents),
 * written from the resolved events of model/model.h: the same processes,
 * tracks, slices, args, instants, counters and flows as the Chrome JSON
 * writer, in a tenth of the bytes or less (zstd-compressed packets). A conversion writes the head
 * (the processes of the files), then each file's packets (pftrace_file,
 * possibly from several threads into one sink: every worker's share of a
 * file is a packet sequence of its own, with its own interned strings). */
#ifndef CT_PFTRACE_H
#define CT_PFTRACE_H

#include "write/out.h"
#include "read/inputs.h"

#include <stdatomic.h>

/* The process tracks of every file. */
void pftrace_head(struct out *o, struct inputs *in);
enum { PF_ZSTD = 1, PF_PLAIN = 2 };
/* Writes share `share` of `nshares` of file t into o, its packets in
 * zstd-compressed chunks unless plain. -1 when the file turned out corrupt
 * (what came before the damage is written). */
int pftrace_file(struct out *o, struct inputs *in, struct tfile *t, unsigned share,
                 unsigned nshares, int plain, _Atomic uint64_t *progress);

#endif
