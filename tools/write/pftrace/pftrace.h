// SPDX-License-Identifier: MIT
/* Perfetto's native trace format (TracePacket protobuf with TrackEvents),
 * written from the resolved events of model/model.h: the same processes,
 * tracks, slices, args, instants, counters and flows as the Chrome JSON
 * writer, in a tenth of the bytes or less (zstd-compressed packets). A conversion writes the head
 * (the processes of the files), then each file's packets (pftrace_consumer,
 * possibly from several threads into one sink: every worker's share of a
 * file is a packet sequence of its own, with its own interned strings). */
#ifndef CT_PFTRACE_H
#define CT_PFTRACE_H

#include "model/model.h"
#include "read/inputs.h"
#include "write/out.h"

#include <stdint.h>

/* The process tracks of every file. */
void pftrace_head(struct out *o, struct inputs *in);
enum { PF_ZSTD = 1, PF_PLAIN = 2 };
struct pft;
/* The packet sequence of share `share` of `nshares` of file t into o, its
 * packets in zstd-compressed chunks unless plain: the context of
 * pftrace_consumer while the model reads that share. mine: the event at
 * hand is this share's to write (job/drive.h). */
struct pft *pftrace_begin(struct out *o, struct inputs *in, struct tfile *t, unsigned share,
                          unsigned nshares, int plain, const uint8_t *mine);
extern const struct m_consumer pftrace_consumer;
/* Writes the share's last packets and frees p. */
void pftrace_end(struct pft *p);

#endif
