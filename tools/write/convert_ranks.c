// SPDX-License-Identifier: MIT
/* A conversion as the ranks of an MPI job (convert_ranks.h). A rank above
 * 0 sends one message: its status, its count of outputs written, what it
 * said (the lines, as said), the reading outcome of each of its files,
 * and where it wrote its piece of a merged output. Rank 0 takes them in
 * rank order: the files' in file order, as the serial command reads them
 * (-j 1), so its lines come in the serial command's order. */
#include "write/convert_ranks.h"
#include "read/tfile_pack.h"
#include "util/mpirt.h"
#include "util/pack.h"
#include "util/say.h"
#include "util/tmp_guard.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void cranks_range(const struct inputs *in, int r, size_t *lo, size_t *hi)
{
	mpirt_share_of(r, in->n, lo, hi);
}

/* by_output: the leads shared out in order, each with its output's files. */
static void share_outputs(struct cranks *c, const struct inputs *in)
{
	size_t leads = 0, lo, hi;
	for (size_t i = 0; i < in->n; i++)
		leads += in->v[i].lead == (int)i;
	mpirt_share(leads, &lo, &hi);
	for (size_t i = 0, k = 0; i < in->n; i++)
		if (in->v[i].lead == (int)i)
			c->mine[i] = k >= lo && k < hi, k++;
	for (size_t i = 0; i < in->n; i++)
		c->mine[i] = c->mine[in->v[i].lead];
}

void cranks_begin(struct cranks *c, const struct inputs *in, int by_output)
{
	memset(c, 0, sizeof *c);
	if (mpirt_size() < 2)
		return;
	c->mine = xcalloc(in->n + 1, 1);
	if (by_output) {
		share_outputs(c, in);
	} else {
		cranks_range(in, mpirt_rank(), &c->lo, &c->hi);
		memset(c->mine + c->lo, 1, c->hi - c->lo);
	}
	if (mpirt_rank() > 0) {
		c->said = open_memstream(&c->text, &c->ntext);
		if (!c->said)
			xoom();
		say_into(c->said);
	}
}

void cranks_send(struct cranks *c, const struct inputs *in, int rc, size_t written,
                 const struct sink_piece *pc, int failed)
{
	say_into(NULL);
	if (fclose(c->said))
		xoom();
	c->said = NULL;
	struct pack b = {0};
	pk_u64(&b, (uint64_t)rc);
	pk_u64(&b, written);
	pk_u64(&b, (uint64_t)failed);
	pk_bytes(&b, &c->ntext, sizeof c->ntext);
	pk_bytes(&b, c->text, c->ntext);
	pk_str(&b, pc ? pc->tmp : NULL);
	if (pc) {
		pk_u64(&b, pc->len);
		pk_u64(&b, pc->ulen);
		PK(&b, pc->crc);
	}
	for (size_t i = 0; i < in->n; i++)
		if (c->mine[i]) {
			pk_u64(&b, i);
			tfile_pack_state(&b, &in->v[i]);
		}
	mpirt_send(0, b.b, b.n); /* (rank 0 says when it does not come) */
	pk_free(&b);
}

int cranks_recv(int r, struct inputs *in, size_t *written, struct sink_piece *pc, int *failed)
{
	struct pack b = {0};
	memset(pc, 0, sizeof *pc);
	*failed = 0;
	if (mpirt_recv(r, (void **)&b.b, &b.n)) {
		say_cmd("rank %d's conversion did not come (MPI)", r);
		*failed = EIO;
		return 1;
	}
	int rc = (int)up_u64(&b);
	*written += up_u64(&b);
	*failed = (int)up_u64(&b);
	size_t n = 0;
	UP(&b, n);
	if (!b.bad && n <= b.n - b.at) {
		fwrite(b.b + b.at, 1, n, stderr); /* its lines, as it said them */
		b.at += n;
	}
	pc->tmp = up_str(&b);
	if (pc->tmp) {
		pc->len = up_u64(&b);
		pc->ulen = up_u64(&b);
		UP(&b, pc->crc);
	}
	while (b.at < b.n && !b.bad) {
		uint64_t k = up_u64(&b);
		if (k >= in->n)
			b.bad = 1;
		else
			tfile_unpack_state(&b, &in->v[k]);
	}
	if (b.bad) {
		say_cmd("rank %d's conversion came damaged (MPI)", r);
		*failed = EIO;
		rc = 1;
	}
	pk_free(&b);
	return rc;
}

int cranks_split_end(struct cranks *c, struct inputs *in, int rc, size_t *written,
                     const char *dir, int made)
{
	if (mpirt_rank()) {
		cranks_send(c, in, rc, *written, NULL, 0);
	} else {
		for (int r = 1; r < mpirt_size(); r++) {
			struct sink_piece pc;
			int failed;
			rc |= cranks_recv(r, in, written, &pc, &failed);
		}
		tmp_mkdir_done(dir, made, *written > 0);
	}
	cranks_end(c);
	return rc;
}

void cranks_end(struct cranks *c)
{
	if (c->mine)
		mpirt_barrier();
	if (c->said) {
		say_into(NULL);
		fclose(c->said);
	}
	free(c->text);
	free(c->mine);
	memset(c, 0, sizeof *c);
}

/* Rank 0's err on every rank. */
static int bcast_err(int32_t err)
{
	void *p = &err;
	size_t n = sizeof err;
	if (mpirt_bcast(&p, &n)) /* (rank 0 made it, or says why not) */
		err = EIO;
	else if (p != &err) {
		memcpy(&err, p, sizeof err);
		free(p);
	}
	return err;
}

int cranks_agree(const struct cranks *c, int err)
{
	return c->mine ? bcast_err(err) : err;
}

int cranks_mkdir(const char *dir, int *guard_slot)
{
	if (mpirt_size() < 2)
		return tmp_mkdir(dir, guard_slot);
	*guard_slot = -1;
	int32_t err = 0;
	if (!mpirt_rank() && tmp_mkdir(dir, guard_slot))
		err = errno ? errno : EIO;
	errno = bcast_err(err);
	return errno ? -1 : 0;
}
