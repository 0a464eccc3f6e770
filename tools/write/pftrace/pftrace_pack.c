// SPDX-License-Identifier: MIT
/* The .pftrace writer's chunks, compressed: a worker's buffer of whole
 * packets becomes one TracePacket whose `zstd_compressed_packets` (field
 * 133 of trace_packet.proto) holds them as a single zstd frame. Perfetto
 * (v58 on: trace processor, the UI) expands such a packet into the packets
 * it holds, in order, as if they were written inline, so sequences,
 * interning and timestamps mean what they mean uncompressed.
 * trace_packet.proto asks each compressed packet to stay under 512 KB; a
 * chunk that would not (it never happens with our packets, whose bytes
 * repeat) goes out uncompressed, which is valid too: a trace may mix plain
 * and zstd packets (only zstd with deflate is refused: Perfetto's
 * tokenizer expands each bundle where it stands and takes a plain packet
 * as it is).
 * Size bought with speed: zstd costs a third of the conversion (0.27 s of
 * NVTX 10M's 0.89 s) and its time follows its input, while the protobuf
 * alone is 1/2.9-1/3.5 of the JSON; so a chunk goes out plain whenever that
 * keeps the share's output within 1/PF_KEEP of its protobuf (1/7 of the
 * JSON; about 40 % of the chunks and half of zstd's time spared). Level and
 * figures: bench/JOURNAL.md. */
#include "write/pftrace/pftrace_int.h"
#include "write/sink.h"

#include <stdlib.h>
#include <zstd.h>

#define TP_ZSTD_PACKETS 133
#define PACKET_MAX (500u << 10) /* compressed packet and its header: under 512 KB */
#define HEAD 12                 /* room for the headers: 1 + 3 + 2 + 3 bytes at most */

void pack_chunk(struct pft *p, size_t threshold)
{
	struct out *o = p->o;
	if (!o->sink || !o->len || o->len < threshold)
		return;
	/* The size target bought with speed: a chunk whose plain bytes keep
	 * this share's output within PF_KEEP of its protobuf goes out plain
	 * (no zstd). Whole packets either way: any Perfetto reads them. */
	p->pb_bytes += o->len;
	if (p->plain || (p->file_bytes + o->len) * PF_KEEP <= p->pb_bytes) {
		p->file_bytes += o->len;
		out_hand_over(o);
		return;
	}
	size_t bound = ZSTD_compressBound(o->len) + HEAD;
	if (p->zcap < bound) {
		char *b = realloc(p->zbuf, bound); /* raw: without it the chunk goes plain */
		if (!b) {
			out_hand_over(o);
			return;
		}
		p->zbuf = b, p->zcap = bound;
	}
	if (!p->zctx)
		p->zctx = ZSTD_createCCtx();
	size_t zn = p->zctx ? ZSTD_compressCCtx(p->zctx, p->zbuf + HEAD, p->zcap - HEAD, o->buf, o->len,
	                                        PF_ZSTD_LEVEL)
	                    : 0;
	/* TracePacket { zstd_compressed_packets = frame } inside Trace.packet */
	size_t inner = 2 + pb_varint_size(zn) + zn;
	size_t head = 1 + pb_varint_size(inner) + 2 + pb_varint_size(zn);
	if (!p->zctx || ZSTD_isError(zn) || head + zn > PACKET_MAX) {
		p->file_bytes += o->len;
		out_hand_over(o);
		return;
	}
	p->file_bytes += head + zn;
	memmove(p->zbuf + head, p->zbuf + HEAD, zn);
	char *q = pb_varint(pb_tag(p->zbuf, TRACE_PACKET, PB_LEN), inner);
	pb_varint(pb_tag(q, TP_ZSTD_PACKETS, PB_LEN), zn);
	sink_put(o->sink, o->key, &p->zbuf, &p->zcap, head + zn);
	o->written += o->len;
	o->len = 0;
}

void pack_free(struct pft *p)
{
	ZSTD_freeCCtx(p->zctx);
	free(p->zbuf);
	p->zctx = NULL, p->zbuf = NULL, p->zcap = 0;
}
