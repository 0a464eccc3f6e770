// SPDX-License-Identifier: MIT
/* A file's reading outcome as bytes (tfile_pack.h). */
#include "read/tfile_pack.h"

#include <string.h>

/* The plain fields of struct ct_file that reading sets, in one order. */
#define STATE_FIELDS(X)                                                                            \
	X(status) X(err) X(have_footer) X(f_events) X(f_drops) X(rt_end) X(mono_end)               \
	X(trunc_str) X(end_how) X(end_detail) X(nccl_rank) X(nccl_nranks) X(drops) X(events)       \
	X(damaged) X(damaged_bytes) X(lost_refs) X(damage) X(nblocks) X(bytes) X(last_ts)

void tfile_pack_state(struct pack *p, const struct tfile *t)
{
#define X(field) PK(p, t->f.field);
	STATE_FIELDS(X)
#undef X
	PK(p, t->piece.outside); /* a piece's events left out */
	PK(p, t->piece.inside);  /* and kept */
}

void tfile_unpack_state(struct pack *p, struct tfile *t)
{
#define X(field) UP(p, t->f.field);
	STATE_FIELDS(X)
#undef X
	UP(p, t->piece.outside);
	UP(p, t->piece.inside);
	t->f.err[sizeof t->f.err - 1] = 0;
	t->f.damage[sizeof t->f.damage - 1] = 0;
}
