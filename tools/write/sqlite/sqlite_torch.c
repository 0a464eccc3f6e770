// SPDX-License-Identifier: MIT
/* PyTorch's rows (docs/SQLITE.md): CUPTRACE_TORCH_OPS (operators and
 * record_function scopes), CUPTRACE_TORCH_CORRELATION (a CUDA call's
 * correlationId -> the externalId of the operator it was made in: kernels,
 * copies and memsets join their operator through it) and
 * CUPTRACE_TORCH_MEMORY (torch's allocations and frees). External ids are
 * numbered per file as correlation ids are (sq_corr). */
#include "cuptrace/torch_abi.h"
#include "write/sqlite/sqlite_int.h"

static const char *scope_name(uint32_t scope)
{
	switch (scope) {
	case CUPTRACE_TORCH_SCOPE_OP: return "op";
	case CUPTRACE_TORCH_SCOPE_BACKWARD: return "backward";
	case CUPTRACE_TORCH_SCOPE_USER: return "user";
	default: return "other";
	}
}

static void opt_text(struct sdb_row s, int i, const struct sref *r)
{
	if (r->len)
		SB_T(s, i, r->s, r->len);
	else
		SB_NULL(s, i);
}

void sq_torch_op(struct sq *q, const struct m_event *ev)
{
	const struct m_torch *t = &ev->torch;
	struct sdb_row s = sdb_ins(q->db, T_TORCH_OPS);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, q->gpid);
	SB_I(s, 4, gtid(q, ev->track->tid));
	sq_opt_i(s, 5, t->end_track ? gtid(q, t->end_track->tid) : 0, t->end_track != NULL);
	SB_I(s, 6, q->t->shown_rank);
	SB_I(s, 7, sdb_string(q->db, t->name.s, t->name.len));
	SB_I(s, 8, sq_corr(q, t->id));
	const char *sc = scope_name(t->scope);
	SB_T(s, 9, sc, strlen(sc));
	sq_opt_i(s, 10, (int64_t)t->seq - 1, t->seq != 0);
	SB_I(s, 11, t->rf_tid);
	sq_opt_i(s, 12, (int64_t)t->fwd_tid, t->fwd_tid != 0);
	opt_text(s, 13, &t->dims);
	opt_text(s, 14, &t->types);
	opt_text(s, 15, &t->stack);
	sdb_row(q->db, T_TORCH_OPS);
}

void sq_torch_corr(struct sq *q, uint64_t corr, uint64_t ext)
{
	struct sdb_row s = sdb_ins(q->db, T_TORCH_CORR);
	SB_I(s, 1, sq_corr(q, corr));
	SB_I(s, 2, sq_corr(q, ext));
	sdb_row(q->db, T_TORCH_CORR);
}

void sq_torch_mem(struct sq *q, const struct m_event *ev)
{
	const struct m_tmem *a = &ev->tmem;
	struct sdb_row s = sdb_ins(q->db, T_TORCH_MEM);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, q->gpid);
	SB_I(s, 3, gtid(q, ev->track->tid));
	SB_I(s, 4, a->device);
	SB_I(s, 5, a->ptr);
	SB_I(s, 6, a->bytes);
	SB_I(s, 7, a->allocated);
	SB_I(s, 8, a->reserved);
	sq_opt_i(s, 9, sq_corr(q, a->op), a->op != 0);
	sdb_row(q->db, T_TORCH_MEM);
}
