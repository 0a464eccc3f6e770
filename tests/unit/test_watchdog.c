// SPDX-License-Identifier: MIT
/* The hang watchdog (libtrace/watchdog.c) fed records as the writer
 * shows them: communicators defined again by every file a rotation
 * begins are known once, and an operation in flight on a communicator
 * defined after many rotations is named by its communicator; MPI
 * collectives entered and not returned, and non-blocking ones whose
 * request is not done, are reported once each. */
#include "check.h"
#include "rec.h"
#include "trace.h"
#include "watchdog.h"
#include "cuptrace/format.h"

#include <string.h>

static uint64_t buf[64];

static const struct ct_rec *rec(unsigned kind, const uint64_t *f, unsigned n, const char *str)
{
	struct ct_rec *r = (struct ct_rec *)buf;
	memset(buf, 0, sizeof buf);
	size_t len = str ? strlen(str) : 0;
	r->size = ct_rec_size(n, (uint32_t)len);
	r->kind = (uint16_t)kind;
	memcpy(r->f, f, n * sizeof *f);
	if (len)
		memcpy(&r->f[n], str, len);
	return r;
}

static void define(uint64_t ctx, uint64_t hash, const char *name)
{
	uint64_t f[F_NCCL_COMM_N] = {
	    [F_NCCL_COMM_TS] = 1,     [F_NCCL_COMM_CTX] = ctx,           [F_NCCL_COMM_COMM] = hash,
	    [F_NCCL_COMM_NNODES] = 1, [F_NCCL_COMM_NRANKS] = 2,          [F_NCCL_COMM_RANK] = 0,
	    [F_NCCL_COMM_ABI] = 5,    [F_NCCL_COMM_NAME] = strlen(name),
	};
	ct_watch_record(7, rec(CT_EV_NCCL_COMM, f, F_NCCL_COMM_N, name));
}

/* A collective task. */
static void task(uint64_t h, uint64_t ctx, uint64_t seq, uint64_t ts)
{
	uint64_t f[F_NCCL_COLL_N] = {
	    [F_NCCL_COLL_TS] = ts,   [F_NCCL_COLL_ID] = h,    [F_NCCL_COLL_CTX] = ctx,
	    [F_NCCL_COLL_SEQ] = seq, [F_NCCL_COLL_COUNT] = 8, [F_NCCL_COLL_CHANNELS] = 1,
	    [F_NCCL_COLL_WARPS] = 8,
	};
	ct_watch_record(7, rec(CT_EV_NCCL_COLL, f, F_NCCL_COLL_N, NULL));
}

/* A channel of a task, and its GPU end when end. */
static void channel(uint64_t h, uint64_t task_h, uint64_t ts, int end)
{
	uint64_t f[F_NCCL_KERNEL_CH_N] = {
	    [F_NCCL_KERNEL_CH_TS] = ts,
	    [F_NCCL_KERNEL_CH_ID] = h,
	    [F_NCCL_KERNEL_CH_CTX] = 1,
	    [F_NCCL_KERNEL_CH_PARENT] = task_h,
	};
	ct_watch_record(8, rec(CT_EV_NCCL_KERNEL_CH, f, F_NCCL_KERNEL_CH_N, NULL));
	if (end) {
		uint64_t s[F_NCCL_STATE_N] = {
		    [F_NCCL_STATE_TS] = ts + 10,
		    [F_NCCL_STATE_ID] = h,
		    [F_NCCL_STATE_STATE] = 22, /* a channel's GPU end */
		};
		ct_watch_record(8, rec(CT_EV_NCCL_STATE, s, F_NCCL_STATE_N, NULL));
	}
}

/* MPI: a communicator, a collective entered (and returned at end, when
 * not 0) on thread tid; a non-blocking one made request req. */
static void mpi_define(uint64_t id, const char *name)
{
	uint64_t f[F_MPI_COMM_N] = {[F_MPI_COMM_TS] = 1, [F_MPI_COMM_ID] = id, [F_MPI_COMM_SIZE] = 4,
	                            [F_MPI_COMM_NAME] = strlen(name)};
	ct_watch_record(7, rec(CT_EV_MPI_COMM, f, F_MPI_COMM_N, name));
}

static void mpi_coll(int tid, uint64_t func, uint64_t comm, uint64_t seq, uint64_t ts,
                     uint64_t end, uint64_t req)
{
	if (!req) {
		uint64_t e[F_MPI_ENTER_N] = {[F_MPI_ENTER_TS] = ts, [F_MPI_ENTER_FUNC] = func,
		                             [F_MPI_ENTER_COMM] = comm, [F_MPI_ENTER_SEQ] = seq};
		ct_watch_record(tid, rec(CT_EV_MPI_ENTER, e, F_MPI_ENTER_N, NULL));
	}
	if (!end && !req)
		return;
	uint64_t c[F_MPI_CALL_N] = {[F_MPI_CALL_TS] = ts,     [F_MPI_CALL_END] = end,
	                            [F_MPI_CALL_FUNC] = func, [F_MPI_CALL_COMM] = comm,
	                            [F_MPI_CALL_SEQ] = seq,   [F_MPI_CALL_REQ] = req};
	ct_watch_record(tid, rec(CT_EV_MPI_CALL, c, F_MPI_CALL_N, NULL));
}

static void mpi_req_done(int tid, uint64_t req, uint64_t ts)
{
	uint64_t d[F_MPI_DONE_N] = {[F_MPI_DONE_TS] = ts, [F_MPI_DONE_REQ] = req};
	ct_watch_record(tid, rec(CT_EV_MPI_DONE, d, F_MPI_DONE_N, NULL));
}

static const char *mpi_name(uint64_t h)
{
	return h == 5 ? "MPI_Allreduce" : h == 6 ? "MPI_Iallreduce" : NULL;
}

/* MPI collectives: one returned is not in flight; one still entered is
 * reported once, on its thread, named; a non-blocking one from its call
 * until its request is done. */
static void test_mpi(void)
{
	struct ct_watch_hit hit;
	uint64_t s = 100000000000ull;
	atomic_store(&ct_watch_mpi_name_hook, mpi_name);
	mpi_define(0x77, "MPI_COMM_WORLD");
	mpi_coll(11, 5, 0x77, 1, s, s + 10, 0); /* returned */
	mpi_coll(11, 5, 0x77, 2, s + 20, 0, 0); /* still waiting */
	mpi_coll(12, 6, 0x77, 3, s + 30, s + 40, 0x99); /* non-blocking, done later */
	CHECK(!ct_watch_due(s + 500000000ull, &hit));
	CHECK(ct_watch_due(s + 1500000000ull, &hit));
	CHECK(hit.mpi && hit.seq == 2 && hit.tid == 11 && hit.ctx == 0x77 && !hit.task);
	CHECK(strstr(hit.line, "rank 3: MPI_Allreduce #2 of MPI_COMM_WORLD 0000000000000077 in "
	                       "flight for 1.5 s") == hit.line);
	CHECK(ct_watch_due(s + 1500000000ull, &hit)); /* the request: still not done */
	CHECK(hit.mpi && hit.seq == 3 && hit.task == 0x99 && hit.tid == 12);
	CHECK(!ct_watch_due(s + 3000000000ull, &hit)); /* each reported once */
	mpi_coll(12, 6, 0x77, 4, s + 50, s + 60, 0x9a);
	mpi_req_done(13, 0x9a, s + 70); /* completed on another thread */
	CHECK(!ct_watch_due(s + 5000000000ull, &hit));
}

int main(void)
{
	ct.cfg.hang_timeout = 1;
	ct.rank.rank = 3;
	CHECK(ct_watch_on());
	/* Two communicators, defined again by 40 rotations: 80 definitions,
	 * more than the table's 64 entries. */
	for (int i = 0; i < 40; i++) {
		define(0x11, 0xaaaa, "world");
		define(0x22, 0xbbbb, "pair");
	}
	/* A communicator made after them, with one operation that ends and
	 * one that never does. */
	define(0x33, 0xcccc, "late");
	uint64_t s = 1000000000ull;
	task(0x100, 0x33, 1, s);
	channel(0x200, 0x100, s + 5, 1);
	task(0x101, 0x33, 2, s + 100);
	channel(0x201, 0x101, s + 105, 0);
	struct ct_watch_hit hit;
	CHECK(!ct_watch_due(s + 500000000ull, &hit)); /* not yet a second */
	CHECK(ct_watch_due(s + 2000000000ull, &hit));
	CHECK_EQ(hit.task, 0x101);
	CHECK_EQ(hit.seq, 2);
	CHECK(strstr(hit.line, "rank 3: ") == hit.line);
	CHECK(strstr(hit.line, "of late 000000000000cccc in flight"));
	CHECK(!ct_watch_due(s + 3000000000ull, &hit)); /* reported once */
	/* The first two are still known by name. */
	task(0x102, 0x11, 9, s + 200);
	CHECK(ct_watch_due(s + 4000000000ull, &hit));
	CHECK(strstr(hit.line, "of world 000000000000aaaa in flight"));
	test_mpi();
	printf("test_watchdog: ok\n");
	return 0;
}
