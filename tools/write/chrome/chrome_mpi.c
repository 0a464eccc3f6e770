// SPDX-License-Identifier: MIT
/* MPI calls of the model as Chrome trace events (cat mpi): each call a
 * slice on its thread's MPI track, named by its function, with its
 * arguments; the watchdog's mpi_hang an instant there. The arrows from a
 * request's call to the call that completed it are flows (chrome_tracks.c,
 * cat mpi). */
#include "write/chrome/chrome_int.h"

#include <stdio.h>
#include <string.h>

#define NUM(k, v)                                                                                  \
	do {                                                                                       \
		out_lit(o, ",\"" k "\":");                                                         \
		out_i64(o, (int64_t)(v));                                                          \
	} while (0)

static void comm_args(struct out *o, const struct m_mpi *x)
{
	char h[24];
	snprintf(h, sizeof h, "\"0x%llx\"", (unsigned long long)x->comm_id);
	out_lit(o, ",\"comm\":");
	out_str(o, h);
	if (!x->comm)
		return;
	if (x->comm->name[0]) {
		out_lit(o, ",\"comm_name\":");
		out_json_str(o, x->comm->name, strlen(x->comm->name));
	}
	NUM("nranks", x->comm->size);
	NUM("rank", x->comm->rank);
}

/* A rank as MPI names the special ones. */
static void rank_arg(struct out *o, const char *key, int64_t r)
{
	out_lit(o, ",\"");
	out_str(o, key);
	out_lit(o, "\":");
	switch (r) {
	case CT_MPI_ANY_SOURCE:
		out_lit(o, "\"MPI_ANY_SOURCE\"");
		break;
	case CT_MPI_PROC_NULL:
		out_lit(o, "\"MPI_PROC_NULL\"");
		break;
	case CT_MPI_ROOT:
		out_lit(o, "\"MPI_ROOT\"");
		break;
	default:
		out_i64(o, r);
	}
}

static void call_args(struct chrome *c, const struct m_mpi *x)
{
	struct out *o = c->o;
	out_lit(o, ",\"args\":{\"op\":");
	out_json_str(o, x->func.s, x->func.len);
	if (x->comm_id)
		comm_args(o, x);
	if (x->seq)
		NUM("seq", x->seq);
	if (x->peer != CT_MPI_NO_PEER) {
		rank_arg(o, x->seq ? "root" : "peer", x->peer);
		if (x->world_peer >= 0)
			rank_arg(o, x->seq ? "world root" : "world peer", x->world_peer);
	}
	if (x->tag != CT_MPI_NO_TAG)
		NUM("tag", x->tag);
	if (x->datatype.len) {
		NUM("count", x->count);
		out_lit(o, ",\"datatype\":");
		out_json_str(o, x->datatype.s, x->datatype.len);
	} else if (x->count) {
		NUM("count", x->count);
	}
	if (x->bytes)
		NUM("bytes", x->bytes);
	if (x->recv_bytes)
		NUM("recv bytes", x->recv_bytes);
	if (x->req)
		NUM("request", x->req);
	if (x->done)
		NUM("requests completed", x->done);
	if (x->status)
		NUM("return", x->status);
	if (x->unfinished)
		out_lit(o, ",\"unfinished\":true");
	out_lit(o, "}}");
}

void chrome_mpi(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	const struct m_mpi *x = ev->mpi;
	if (!chrome_sep(c))
		return;
	if (ev->cat == MC_MPI_HANG) {
		out_lit(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mpi\",\"name\":\"hang_suspected\"");
		chrome_track_pt(c, ev->track);
		chrome_ts(c, ev->ts);
		out_lit(o, ",\"args\":{\"operation\":");
		out_json_str(o, x->func.s ? x->func.s : "", x->func.s ? x->func.len : 0);
		if (x->seq)
			NUM("seq", x->seq);
		NUM("in flight (ns)", x->in_flight);
		if (x->comm_id)
			comm_args(o, x);
		out_lit(o, "}}");
		return;
	}
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":");
	out_json_str(o, x->func.s, x->func.len);
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"dur\":");
	out_us(o, ev->end > ev->ts ? (int64_t)(ev->end - ev->ts) : 0);
	call_args(c, x);
}
