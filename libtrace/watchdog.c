// SPDX-License-Identifier: MIT
/* The hang watchdog: NCCL operations in flight, as seen in the records the
 * writer encodes (watchdog.h). A task (collective or send/recv) is in
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

void ct_watch_record(int tid, const struct ct_rec *r)
{
	struct task *t;
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

int ct_watch_due(uint64_t now, struct ct_watch_hit *hit)
{
	uint64_t limit = (uint64_t)(ct.cfg.hang_timeout * 1e9);
	struct task *old = NULL;
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
	char me[48]; /* a process of no known rank says its pid */
	if (ct.rank.rank >= 0)
		snprintf(me, sizeof me, "rank %ld", ct.rank.rank);
	else
		snprintf(me, sizeof me, "pid %d", ct.pid);
	snprintf(hit->line, sizeof hit->line, "%s: %s%s of %s in flight for %.*f s", me,
	         fn ? fn : "an NCCL operation", seq, who, s < 10 ? 1 : 0, s);
	return 1;
}

void ct_watch_fork_child(void)
{
	/* The parent's operations are not the child's. */
	memset(&w, 0, sizeof w);
}
