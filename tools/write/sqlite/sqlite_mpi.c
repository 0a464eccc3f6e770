// SPDX-License-Identifier: MIT
/* Nsight Systems' MPI tables from the model's MPI calls (docs/SQLITE.md):
 * each call a row of the table of its kind, as nsys sorts them (point to
 * point, collectives, starts and waits, the others), and MPI_RANKS the
 * rank of each thread that called MPI, which nsys's MPI reports join on
 * globalTid. */
#include "write/sqlite/sqlite_int.h"

enum { K_P2P, K_COLL, K_WAIT, K_OTHER };

static int listed(const char *f, size_t n, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && !memcmp(names[i], f, n))
			return 1;
	return 0;
}

#define LISTED(f, n, a) listed(f, n, a, sizeof a / sizeof *a)

static int kind_of(const char *f, size_t n)
{
	static const char *const coll[] = {"Barrier",
	                                   "Bcast",
	                                   "Reduce",
	                                   "Allreduce",
	                                   "Scan",
	                                   "Exscan",
	                                   "Gather",
	                                   "Gatherv",
	                                   "Allgather",
	                                   "Allgatherv",
	                                   "Scatter",
	                                   "Scatterv",
	                                   "Alltoall",
	                                   "Alltoallv",
	                                   "Alltoallw",
	                                   "Reduce_scatter",
	                                   "Reduce_scatter_block"};
	static const char *const wait[] = {"Wait",  "Waitall", "Waitany", "Waitsome",
	                                   "Test",  "Testall", "Testany", "Testsome",
	                                   "Start", "Startall"};
	static const char *const p2p[] = {
	    "Send",     "Ssend",  "Bsend",     "Rsend",      "Recv",       "Isend",
	    "Issend",   "Ibsend", "Irsend",    "Irecv",      "Sendrecv",   "Sendrecv_replace",
	    "Probe",    "Iprobe", "Send_init", "Ssend_init", "Bsend_init", "Rsend_init",
	    "Recv_init"};
	if (n < 5 || memcmp(f, "MPI_", 4))
		return K_OTHER;
	f += 4, n -= 4;
	if (n > 2 && !memcmp(f + n - 2, "_c", 2)) /* MPI 4's large counts */
		n -= 2;
	char b[32]; /* a non-blocking collective: MPI_Iallreduce is MPI_Allreduce's */
	if (n > 1 && n < sizeof b && f[0] == 'I' && f[1] >= 'a' && f[1] <= 'z') {
		memcpy(b, f + 1, n - 1);
		b[0] = (char)(b[0] - 'a' + 'A');
		if (LISTED(b, n - 1, coll))
			return K_COLL;
	}
	if (LISTED(f, n, coll))
		return K_COLL;
	if (LISTED(f, n, wait))
		return K_WAIT;
	return LISTED(f, n, p2p) ? K_P2P : K_OTHER;
}

static void opt_comm(struct sdb_row s, int i, const struct m_mpi *x)
{
	sq_opt_i(s, i, (int64_t)x->comm_id, x->comm_id != 0);
}

void sq_mpi(struct sq *q, const struct m_event *ev)
{
	const struct m_mpi *x = ev->mpi;
	int64_t tid = ev->track->thread, g = gtid(q, tid);
	if (!hmap_get(&q->mpi_tids, (uint64_t)tid + 1)) {
		hmap_put(&q->mpi_tids, (uint64_t)tid + 1, (void *)1);
		struct sdb_row r = sdb_ins(q->db, T_MPI_RANKS);
		SB_I(r, 1, q->t->shown_rank);
		SB_I(r, 2, g);
		sdb_row(q->db, T_MPI_RANKS);
	}
	const char *f = x->func.s ? x->func.s : "";
	size_t n = x->func.s ? x->func.len : 0;
	int k = kind_of(f, n);
	static const enum sdb_table table[] = {T_MPI_P2P, T_MPI_COLL, T_MPI_WAIT, T_MPI_OTHER};
	struct sdb_row s = sdb_ins(q->db, table[k]);
	SB_I(s, 1, at(q, ev->ts));
	sq_opt_i(s, 2, at(q, ev->end), !x->unfinished); /* one that never ended has no end */
	SB_I(s, 3, g);
	SB_I(s, 4, sdb_string(q->db, f, n));
	switch (k) {
	case K_P2P:
		opt_comm(s, 5, x);
		sq_opt_i(s, 6, x->tag, x->tag != CT_MPI_NO_TAG);
		sq_opt_i(s, 7, x->world_peer, x->world_peer >= 0);
		SB_I(s, 8, x->bytes ? x->bytes : x->recv_bytes);
		break;
	case K_COLL:
		opt_comm(s, 5, x);
		sq_opt_i(s, 6, x->world_peer, x->world_peer >= 0);
		SB_I(s, 7, x->bytes);
		SB_I(s, 8, x->bytes);
		SB_I(s, 9, x->recv_bytes);
		sq_opt_i(s, 10, (int64_t)x->seq, x->seq != 0);
		break;
	case K_WAIT:
		SB_I(s, 5, x->count);
		SB_I(s, 6, x->bytes + x->recv_bytes);
		break;
	default:
		opt_comm(s, 5, x);
		break;
	}
	sdb_row(q->db, table[k]);
}
