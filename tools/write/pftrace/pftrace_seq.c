// SPDX-License-Identifier: MIT
/* The .pftrace writer's packet sequences: a packet's start, the first
 * packet of a (file, share) sequence, the ClockSnapshots that start its
 * incremental clocks (see pftrace.c) and the track descriptors. */
#include "write/pftrace/pftrace_int.h"
#include "util/utf8.h"

#include <stdlib.h>

/* Protobuf's strings are UTF-8 and Perfetto's readers decode them so: the
 * traced program's invalid bytes become U+FFFD, as the JSON has them, so
 * that names agree between the two (valid text is written as it is). */
void pf_put_text(struct out *o, unsigned field, const char *s, size_t n)
{
	char *tmp;
	s = utf8_clean(s, &n, &tmp);
	pb_put_bytes(o, field, s, n);
	free(tmp);
}

/* Starts a packet without a time; flags 0 outside the files' sequences. */
size_t bare_packet(struct out *o, uint32_t seq, unsigned flags)
{
	size_t at = pb_open(o, TRACE_PACKET);
	pb_put_uint(o, TP_SEQ_ID, seq);
	if (flags)
		pb_put_uint(o, TP_SEQ_FLAGS, flags);
	return at;
}

/* Track descriptors. */
void descriptor(struct out *o, uint32_t seq, uint64_t uuid, uint64_t parent, const char *name,
                size_t name_len, int64_t rank)
{
	size_t at = bare_packet(o, seq, SEQ_NEEDS_INCREMENTAL_STATE);
	size_t td = pb_open(o, TP_TRACK_DESCRIPTOR);
	pb_put_uint(o, TD_UUID, uuid);
	pb_put_uint(o, TD_PARENT, parent);
	pf_put_text(o, TD_NAME, name, name_len);
	pb_put_uint(o, TD_SIBLING_RANK, (uint64_t)rank);
	pb_close(o, td);
	pb_close(o, at);
}

void process_descriptor(struct out *o, uint32_t seq, unsigned flags, uint64_t pid,
                        const char *name, int64_t rank)
{
	size_t at = bare_packet(o, seq, flags);
	size_t td = pb_open(o, TP_TRACK_DESCRIPTOR);
	pb_put_uint(o, TD_UUID, proc_uuid(pid));
	size_t pd = pb_open(o, TD_PROCESS);
	pb_put_uint(o, PD_PID, pid);
	pf_put_text(o, PD_NAME, name, strlen(name));
	pb_close(o, pd);
	pb_put_uint(o, TD_CHILD_ORDERING, ORDER_EXPLICIT);
	pb_put_uint(o, TD_SIBLING_RANK, (uint64_t)rank);
	pb_close(o, td);
	pb_close(o, at);
}

/* A ClockSnapshot that starts incremental clock `id` at the file's start,
 * paired with BOOTTIME at the same value (the clock counts BOOTTIME ns). */
void clock_snapshot(struct pft *p, unsigned id)
{
	struct out *o = p->o;
	uint64_t t0 = p->clock_last[id - CLOCK_SEQ_DELTA] = ts_of(p, 0); /* no event is earlier */
	size_t cs = pb_open(o, TP_CLOCK_SNAPSHOT);
	size_t c = pb_open(o, CS_CLOCKS);
	pb_put_uint(o, CLK_ID, id);
	pb_put_uint(o, CLK_TIMESTAMP, t0);
	pb_put_uint(o, CLK_INCREMENTAL, 1);
	pb_close(o, c);
	c = pb_open(o, CS_CLOCKS);
	pb_put_uint(o, CLK_ID, CLOCK_BOOTTIME);
	pb_put_uint(o, CLK_TIMESTAMP, t0);
	pb_close(o, c);
	pb_close(o, cs);
}

/* The sequence's first packet: it clears the incremental state, makes
 * clock 64 its packets' default and starts that clock at the file's start
 * (the first track to need a clock gets it; later ones get 65, 66, ...).
 * Its default track (TrackEventDefaults.track_uuid, which an event without
 * a track_uuid is on) is the file's first track, lane 0: the model numbers
 * tracks in order of first sight, so it is the thread that made the most
 * of the events in the traces we know (NVTX ranges, CUDA calls); 2 bytes
 * less for each of its BEGIN and END packets. */
void seq_start(struct pft *p)
{
	struct out *o = p->o;
	pack_chunk(p, PF_CHUNK);
	size_t at = bare_packet(o, p->seq, SEQ_INCREMENTAL_STATE_CLEARED);
	size_t d = pb_open(o, TP_DEFAULTS);
	pb_put_uint(o, TPD_CLOCK_ID, CLOCK_SEQ_DELTA);
	p->def_track = track_id_uuid(p, 1, 0);
	size_t te = pb_open(o, TPD_TRACK_EVENT);
	pb_put_uint(o, TED_TRACK_UUID, p->def_track);
	pb_close(o, te);
	pb_close(o, d);
	clock_snapshot(p, CLOCK_SEQ_DELTA); /* the first track to need a clock gets it */
	pb_close(o, at);
	p->next_clock = CLOCK_SEQ_DELTA;
}
