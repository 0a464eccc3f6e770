// SPDX-License-Identifier: MIT
/* A part of the hang diagnosis (one file's) as bytes, for the ranks of an
 * MPI job (nccl_hang.h): what nh_merge takes from a part, its strings as
 * text (their numbers are the part's own, as in memory). */
#include "job/nccl_hang_int.h"
#include "util/pack.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void nh_pack(struct nh *h, struct pack *b)
{
	nh_files_done(h);
	PK(b, h->min_wait);
	pk_u64(b, h->nstr);
	for (size_t i = 0; i < h->nstr; i++)
		pk_str(b, h->str[i]);
	pk_u64(b, h->nrc);
	for (size_t i = 0; i < h->nrc; i++)
		pk_bytes(b, h->rc[i], sizeof *h->rc[i]);
	pk_array(b, h->f, h->nf, sizeof *h->f);
	for (size_t i = 0; i < h->nf; i++)
		pk_str(b, h->f[i].ranges);
	pk_u64(b, h->colls);
}

struct nh *nh_unpack(int mpi, struct pack *b)
{
	struct nh *h = mpi ? nh_new_mpi() : nh_new();
	UP(b, h->min_wait);
	uint64_t n = up_u64(b);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		char *s = up_str(b);
		nh_str(h, s ? s : "", s ? strlen(s) : 0);
		free(s);
	}
	n = up_u64(b);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		struct nh_rc *r = xmalloc(sizeof *r);
		up_bytes(b, r, sizeof *r);
		if (h->nrc == h->rccap) {
			h->rccap = h->rccap ? 2 * h->rccap : 16;
			h->rc = xrealloc(h->rc, h->rccap * sizeof *h->rc);
		}
		h->rc[h->nrc++] = r;
	}
	h->f = up_array(b, &h->nf, sizeof *h->f);
	h->fcap = h->nf;
	for (size_t i = 0; i < h->nf; i++)
		h->f[i].ranges = up_str(b);
	h->colls = (size_t)up_u64(b);
	return h;
}
