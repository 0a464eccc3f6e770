// SPDX-License-Identifier: MIT
/* The hang watchdog: NCCL operations and MPI collectives in flight, as
 * seen in the records the writer encodes (watchdog.h). A task (collective or send/recv) is in
 * flight from its record until every channel it started has reported its
 * GPU end (at least one channel: NCCL reports a channel only once the GPU
 * runs it). Records of one operation come from several threads' rings,
 * so a channel may come before its task: entries are made on first
 * mention, whichever it is. Tables are small and fixed: NCCL keeps at
 * most a few hundred operations queued; past the table, the older half
 * is given up (never reported). An operation is in flight from its task
 * record (its enqueue), so a timeout must exceed how far the host runs
 * ahead of the GPU. */
#include "watchdog.h"
#include "cuptrace/format.h"
#include "trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NTASK 1024
#define NCH 4096
#define NCOMM 64
#define NMPI 256 /* MPI collectives in flight: a few per thread */

const char *(*_Atomic ct_watch_name_hook)(uint64_t handle);
const char *(*_Atomic ct_watch_mpi_name_hook)(uint64_t handle);

struct task {
	uint64_t h, ctx, seq, func, ts; /* ts 0: only its channels seen so far */
	unsigned nch, started, ended;
	int has_seq, tid, reported;
};

struct chan {
	uint64_t h, task;
};

struct comm {
	uint64_t ctx, hash;
	char name[64];
};

/* An MPI collective in flight: a blocking one from its mpi_enter to the
 * mpi_call of its thread, a non-blocking one (req) from its mpi_call to
 * its request's mpi_done. */
struct mwait {
	uint64_t ts, func, comm, seq, req;
	int tid, reported;
};

static struct {
	struct mwait m[NMPI];
	size_t n;
	struct comm c[NCOMM]; /* ctx: the communicator's id */
	size_t nc;
} mw;

static struct {
	struct task t[NTASK];
	size_t nt;
	struct chan c[NCH];
	size_t nc;
	struct comm m[NCOMM];
	size_t nm;
	int seen_end; /* a channel reported its end: operations can be told done */
} w;

int ct_watch_on(void)
{
	return ct.cfg.hang_timeout > 0;
}

static struct task *task_of(uint64_t h)
{
	for (size_t i = w.nt; i-- > 0;) /* the newest are asked for most */
		if (w.t[i].h == h)
			return &w.t[i];
	if (w.nt == NTASK) { /* full: give the older half up (one move per NTASK / 2 tasks) */
		memmove(w.t, w.t + NTASK / 2, (NTASK - NTASK / 2) * sizeof *w.t);
		w.nt -= NTASK / 2;
	}
	struct task *t = &w.t[w.nt++];
	memset(t, 0, sizeof *t);
	t->h = h;
	return t;
}

static void task_done(struct task *t)
{
	for (size_t i = 0; i < w.nc;) /* its channels go with it */
		if (w.c[i].task == t->h)
			w.c[i] = w.c[--w.nc];
		else
			i++;
	size_t i = (size_t)(t - w.t);
	memmove(t, t + 1, (w.nt - i - 1) * sizeof *t);
	w.nt--;
}

static void channel(uint64_t h, uint64_t task)
{
	if (w.nc == NCH)
		w.c[0] = w.c[--w.nc];
	w.c[w.nc++] = (struct chan){h, task};
	task_of(task)->started++;
}

static void channel_end(uint64_t h)
{
	for (size_t i = 0; i < w.nc; i++) {
		if (w.c[i].h != h)
			continue;
		struct task *t = task_of(w.c[i].task);
		w.c[i] = w.c[--w.nc];
		t->ended++;
		w.seen_end = 1;
		if (t->ts && t->ended >= t->started && t->ended >= (t->nch ? t->nch : 1))
			task_done(t);
		return;
	}
}

/* A communicator's definition. Each file a rotation begins repeats every
 * definition: a communicator already known is updated in place, so the
 * table holds each once however many files the process writes. Past
 * NCOMM, the oldest entry makes room. */
static void comm(const struct ct_rec *r)
{
	struct comm *m = NULL;
	for (size_t i = 0; i < w.nm && !m; i++)
		if (w.m[i].ctx == r->f[F_NCCL_COMM_CTX])
			m = &w.m[i];
	if (!m) {
		if (w.nm == NCOMM)
			memmove(w.m, w.m + 1, --w.nm * sizeof *w.m);
		m = &w.m[w.nm++];
	}
	m->ctx = r->f[F_NCCL_COMM_CTX];
	m->hash = r->f[F_NCCL_COMM_COMM];
	uint64_t n = r->f[F_NCCL_COMM_NAME]; /* the name's bytes follow the fields */
	size_t len = n < sizeof m->name - 1 ? (size_t)n : sizeof m->name - 1;
	memcpy(m->name, &r->f[F_NCCL_COMM_N], len);
	m->name[len] = 0;
}

static void mpi_wait(const struct mwait *x)
{
	if (mw.n == NMPI) /* full: the oldest is given up */
		memmove(mw.m, mw.m + 1, --mw.n * sizeof *mw.m);
	mw.m[mw.n++] = *x;
}

static void mpi_done(size_t i)
{
	memmove(&mw.m[i], &mw.m[i + 1], (mw.n - i - 1) * sizeof *mw.m);
	mw.n--;
}

static void mpi_comm(const struct ct_rec *r)
{
	struct comm *m = NULL;
	for (size_t i = 0; i < mw.nc && !m; i++)
		if (mw.c[i].ctx == r->f[F_MPI_COMM_ID])
			m = &mw.c[i];
	if (!m) {
		if (mw.nc == NCOMM)
			memmove(mw.c, mw.c + 1, --mw.nc * sizeof *mw.c);
		m = &mw.c[mw.nc++];
	}
	m->ctx = m->hash = r->f[F_MPI_COMM_ID];
	uint64_t n = r->f[F_MPI_COMM_NAME]; /* the name's bytes follow the fields */
	size_t len = n < sizeof m->name - 1 ? (size_t)n : sizeof m->name - 1;
	memcpy(m->name, &r->f[F_MPI_COMM_N], len);
	m->name[len] = 0;
}

/* MPI records: collectives entered, returned, their requests done. */
static void mpi_record(int tid, const struct ct_rec *r)
{
	const uint64_t *f = r->f;
	switch (r->kind) {
	case CT_EV_MPI_COMM:
		mpi_comm(r);
		break;
	case CT_EV_MPI_ENTER:
		if (f[F_MPI_ENTER_SEQ])
			mpi_wait(&(struct mwait){f[F_MPI_ENTER_TS], f[F_MPI_ENTER_FUNC],
			                         f[F_MPI_ENTER_COMM], f[F_MPI_ENTER_SEQ], 0, tid, 0});
		break;
	case CT_EV_MPI_CALL:
		for (size_t i = mw.n; i-- > 0;) /* its mpi_enter: the thread's latest */
			if (mw.m[i].tid == tid && !mw.m[i].req && mw.m[i].func == f[F_MPI_CALL_FUNC]) {
				mpi_done(i);
				break;
			}
		if (f[F_MPI_CALL_REQ] && f[F_MPI_CALL_SEQ] && !f[F_MPI_CALL_STATUS])
			mpi_wait(&(struct mwait){f[F_MPI_CALL_TS], f[F_MPI_CALL_FUNC], f[F_MPI_CALL_COMM],
			                         f[F_MPI_CALL_SEQ], f[F_MPI_CALL_REQ], tid, 0});
		break;
	case CT_EV_MPI_DONE:
		for (size_t i = 0; i < mw.n; i++)
			if (mw.m[i].req && mw.m[i].req == f[F_MPI_DONE_REQ]) {
				mpi_done(i);
				break;
			}
		break;
	default:
		break;
	}
}

void ct_watch_record(int tid, const struct ct_rec *r)
{
	struct task *t;
	if (r->kind >= CT_EV_MPI_FIRST && r->kind < CT_EV_MPI_END) {
		mpi_record(tid, r);
		return;
	}
	switch (r->kind) {
	case CT_EV_NCCL_COMM:
		comm(r);
		break;
	case CT_EV_NCCL_COLL:
	case CT_EV_NCCL_P2P:
		t = task_of(r->f[F_NCCL_START_ID]);
		t->ts = r->f[F_NCCL_START_TS] ? r->f[F_NCCL_START_TS] : 1;
		t->ctx = r->f[F_NCCL_START_CTX];
		t->tid = tid;
		t->has_seq = r->kind == CT_EV_NCCL_COLL;
		t->seq = t->has_seq ? r->f[F_NCCL_COLL_SEQ] : 0;
		t->func = t->has_seq ? r->f[F_NCCL_COLL_FUNC] : r->f[F_NCCL_P2P_FUNC];
		t->nch =
		    (unsigned)(t->has_seq ? r->f[F_NCCL_COLL_CHANNELS] : r->f[F_NCCL_P2P_CHANNELS]);
		if (t->started && t->ended >= t->started && t->ended >= (t->nch ? t->nch : 1))
			task_done(t); /* its channels came first and all ended */
		break;
	case CT_EV_NCCL_KERNEL_CH: /* parent: the task */
		channel(r->f[F_NCCL_KERNEL_CH_ID], r->f[F_NCCL_KERNEL_CH_PARENT]);
		break;
	case CT_EV_NCCL_STATE:
		if (r->f[F_NCCL_STATE_STATE] == 22) /* the channel's GPU end */
			channel_end(r->f[F_NCCL_STATE_ID]);
		break;
	default:
		break;
	}
}

/* "rank 2" or, a process of no known rank, "pid 1234" */
static void me(char *buf, size_t len)
{
	if (ct.rank.rank >= 0)
		snprintf(buf, len, "rank %ld", ct.rank.rank);
	else
		snprintf(buf, len, "pid %d", ct.pid);
}

/* The oldest MPI collective in flight too long (an MPI call's end is
 * always recorded: no need to have seen one). */
static int mpi_due(uint64_t now, uint64_t limit, struct ct_watch_hit *hit)
{
	struct mwait *old = NULL;
	for (size_t i = 0; i < mw.n; i++) {
		struct mwait *x = &mw.m[i];
		if (!x->reported && now > x->ts && now - x->ts >= limit && (!old || x->ts < old->ts))
			old = x;
	}
	if (!old)
		return 0;
	old->reported = 1;
	memset(hit, 0, sizeof *hit);
	hit->mpi = 1;
	hit->task = old->req, hit->ctx = old->comm, hit->seq = old->seq, hit->func = old->func;
	hit->ts = old->ts, hit->in_flight = now - old->ts, hit->has_seq = 1, hit->tid = old->tid;
	const char *(*name)(uint64_t) = ct_watch_mpi_name_hook;
	const char *fn = name ? name(old->func) : NULL;
	const struct comm *m = NULL;
	for (size_t i = 0; i < mw.nc && !m; i++)
		if (mw.c[i].ctx == old->comm)
			m = &mw.c[i];
	char who[96] = "an unknown communicator", rank[48];
	if (m)
		snprintf(who, sizeof who, "%s%s%016" PRIx64, m->name, m->name[0] ? " " : "", m->hash);
	me(rank, sizeof rank);
	double s = (double)hit->in_flight / 1e9;
	snprintf(hit->line, sizeof hit->line, "%s: %s #%" PRIu64 " of %s in flight for %.*f s", rank,
	         fn ? fn : "an MPI collective", old->seq, who, s < 10 ? 1 : 0, s);
	return 1;
}

int ct_watch_due(uint64_t now, struct ct_watch_hit *hit)
{
	uint64_t limit = (uint64_t)(ct.cfg.hang_timeout * 1e9);
	struct task *old = NULL;
	if (mpi_due(now, limit, hit))
		return 1;
	if (!w.seen_end) /* no operation ever ended: nothing says "in flight" */
		return 0;
	for (size_t i = 0; i < w.nt; i++) {
		struct task *t = &w.t[i];
		if (t->ts && !t->reported && now > t->ts && now - t->ts >= limit &&
		    (!old || t->ts < old->ts))
			old = t;
	}
	if (!old)
		return 0;
	old->reported = 1;
	memset(hit, 0, sizeof *hit);
	hit->task = old->h, hit->ctx = old->ctx, hit->seq = old->seq, hit->func = old->func;
	hit->ts = old->ts, hit->in_flight = now - old->ts, hit->has_seq = old->has_seq;
	hit->tid = old->tid;
	const char *(*name)(uint64_t) = ct_watch_name_hook;
	const char *fn = name ? name(old->func) : NULL;
	const struct comm *m = NULL;
	for (size_t i = 0; i < w.nm && !m; i++)
		if (w.m[i].ctx == old->ctx)
			m = &w.m[i];
	char seq[32] = "", who[96] = "an unknown communicator";
	if (old->has_seq)
		snprintf(seq, sizeof seq, " #%" PRIu64, old->seq);
	if (m)
		snprintf(who, sizeof who, "%s%s%016" PRIx64, m->name, m->name[0] ? " " : "", m->hash);
	double s = (double)hit->in_flight / 1e9;
	char rank[48];
	me(rank, sizeof rank);
	snprintf(hit->line, sizeof hit->line, "%s: %s%s of %s in flight for %.*f s", rank,
	         fn ? fn : "an NCCL operation", seq, who, s < 10 ? 1 : 0, s);
	return 1;
}

void ct_watch_fork_child(void)
{
	/* The parent's operations are not the child's. */
	memset(&w, 0, sizeof w);
	memset(&mw, 0, sizeof mw);
}
