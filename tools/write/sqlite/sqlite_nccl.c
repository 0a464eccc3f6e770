// SPDX-License-Identifier: MIT
/* CUPTRACE_NCCL_OPERATIONS rows and the watchdog's CUPTRACE_HANG_SUSPECTED
 * (docs/SQLITE.md). */
#include "write/sqlite/sqlite_int.h"

void sq_nccl(struct sq *q, const struct m_event *ev)
{
	const struct nccl_op *op = ev->nccl.op;
	const struct nccl_plan *p = ev->nccl.plan;
	const struct nccl_comm *c = op->comm;
	struct sdb_row s = sdb_ins(q->db, T_NCCL);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, q->gpid);
	SB_I(s, 4, gtid(q, op->tid));
	SB_I(s, 5, q->t->shown_rank);
	SB_I(s, 6, sdb_string(q->db, op->func, strlen(op->func)));
	SB_I(s, 7, op->id);
	sq_opt_i(s, 8, c ? (int64_t)c->hash : 0, c != NULL);
	if (c)
		sq_opt_text(s, 9, c->name);
	else
		SB_NULL(s, 9);
	sq_opt_i(s, 10, op->rank, op->rank >= 0);
	sq_opt_i(s, 11, c ? c->nranks : 0, c != NULL);
	sq_opt_i(s, 12, c ? c->nnodes : 0, c != NULL);
	sq_opt_i(s, 13, (int64_t)op->seq, op->has_seq);
	SB_I(s, 14, op->count);
	sq_opt_text(s, 15, op->datatype);
	sq_opt_i(s, 16, op->type_size, op->type_size != 0);
	SB_I(s, 17, op->bytes);
	sq_opt_i(s, 18, op->root, op->root >= 0);
	sq_opt_i(s, 19, op->peer, op->peer >= 0);
	SB_I(s, 20, op->is_p2p);
	sq_opt_text(s, 21, op->algo);
	sq_opt_text(s, 22, op->proto);
	SB_I(s, 23, op->channels);
	sq_opt_i(s, 24, op->warps, op->warps != 0);
	sq_opt_i(s, 25, (int64_t)op->stream, op->stream != 0);
	sq_opt_ts(q, s, 26, op->enqueue_start);
	sq_opt_ts(q, s, 27, op->enqueue_end);
	int gpu = op->gpu_start && op->gpu_end >= op->gpu_start;
	sq_opt_ts(q, s, 28, gpu ? op->gpu_start : 0);
	sq_opt_ts(q, s, 29, gpu ? op->gpu_end : 0);
	sq_opt_i(s, 30, op->gpu_channels, gpu);
	sq_opt_i(s, 31, (int64_t)op->group, op->group != 0);
	sq_opt_ts(q, s, 32, op->group ? op->group_start : 0);
	sq_opt_ts(q, s, 33, op->group ? op->group_end : 0);
	sq_opt_i(s, 34, op->group_size, op->group != 0);
	sq_opt_i(s, 35, op->group_depth, op->group != 0);
	sq_opt_i(s, 36, op->step, op->step >= 0);
	int k = p && p->has_kernel;
	sq_opt_i(s, 37, k ? (int64_t)p->kernel.device : 0, k);
	sq_opt_i(s, 38, k ? sq_corr(q, p->kernel.correlation) : 0, k);
	sq_opt_ts(q, s, 39, k ? p->kernel.ts : 0);
	sq_opt_ts(q, s, 40, k ? p->kernel.end : 0);
	sq_opt_i(s, 41, k ? id32(p->kernel.stream) : 0, k);
	sdb_row(q->db, T_NCCL);
}


/* The watchdog's line in the file: the operation that had been in flight
 * longer than CUPTRACE_HANG_TIMEOUT when the process looked. */
void sq_hang(struct sq *q, const struct m_event *ev)
{
	const struct nccl_comm *c = ev->hang.comm;
	struct sdb_row s = sdb_ins(q->db, T_HANG);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, q->gpid);
	SB_I(s, 3, q->t->shown_rank);
	SB_I(s, 4, sdb_string(q->db, ev->hang.func.s ? ev->hang.func.s : "", ev->hang.func.len));
	sq_opt_i(s, 5, c ? (int64_t)c->hash : 0, c != NULL);
	size_t nl = c ? strnlen(c->name, sizeof c->name) : 0;
	if (nl)
		SB_T(s, 6, c->name, nl);
	else
		SB_NULL(s, 6);
	sq_opt_i(s, 7, (int64_t)ev->hang.seq, ev->hang.has_seq);
	SB_I(s, 8, ev->hang.in_flight);
	sdb_row(q->db, T_HANG);
}
