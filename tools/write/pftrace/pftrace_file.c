// SPDX-License-Identifier: MIT
/* The .pftrace writer's entry points: each (file, share) is one packet
 * sequence, its events handed by the model to pftrace.c; the head names
 * the files' processes. */
#include "write/pftrace/pftrace.h"
#include "write/pftrace/pftrace_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void begin_file(void *ctx, struct tfile *t)
{
	(void)t;
	seq_start(ctx);
}

static void end_file(void *ctx, struct tfile *t)
{
	(void)t;
	close_open(ctx);
}

const struct m_consumer pftrace_consumer = {begin_file, pftrace_event, end_file};

struct pft *pftrace_begin(struct out *o, struct inputs *in, struct tfile *t, unsigned share,
                          unsigned nshares, int plain, const uint8_t *mine)
{
	struct pft *p = xcalloc(1, sizeof *p);
	p->o = o, p->in = in, p->t = t, p->plain = plain, p->mine = mine;
	p->seq = 2 + (uint32_t)t->index * (nshares ? nshares : 1) + share;
	p->next_iid = 1;
	return p;
}

void pftrace_end(struct pft *p)
{
	close_open(p);
	pack_chunk(p, 0); /* this share's last packets */
	pack_free(p);
	hmap_free(&p->by_sid);
	hmap_free(&p->by_text);
	free(p->tr);
	free(p);
}

void pftrace_head(struct out *o, struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		process_descriptor(o, 1, 0, in->v[i].pid, in->v[i].label, (int64_t)in->v[i].index * 16);
}
