// SPDX-License-Identifier: MIT
/* The NCCL parts of the tools on inputs built by hand: joining events
 * that arrive out of order, attributing CUPTI kernels to launches, handing
 * plans out as the trace moves on, NCCL's vocabulary, log lines and their
 * step marks, and the totals per message size. */
#include "check.h"
#include "read/nccl_log.h"
#include "read/nccl_names.h"
#include "model/nccl_ops.h"
#include "stats/nccl_agg.h"

#include <string.h>

static struct ct_event ev(unsigned kind, int64_t tid)
{
	struct ct_event e;
	memset(&e, 0, sizeof e);
	e.kind = kind;
	e.tid = tid;
	for (int i = 0; i < CT_MAX_FIELDS; i++)
		e.s[i] = "";
	return e;
}

static void str(struct ct_event *e, int i, const char *s)
{
	e->v[i] = CT_SREF_INLINE;
	e->s[i] = s;
	e->sl[i] = (uint32_t)strlen(s);
}

static struct nccl_plan got[64];
static struct nccl_op got_ops[64][4];
static char got_kernel[64][128];
static int ngot;

static void on_plan(void *ctx, const struct nccl_plan *p)
{
	(void)ctx;
	CHECK(p->n <= 4);
	if (ngot < 64) { /* the first ones are looked at */
		got[ngot] = *p;
		memcpy(got_ops[ngot], p->ops, p->n * sizeof *p->ops);
		snprintf(got_kernel[ngot], sizeof got_kernel[ngot], "%s",
		         p->has_kernel ? p->kernel.name : "");
	}
	ngot++;
}

static void comm(struct nccl_ops *e, uint64_t ctx, const char *name)
{
	struct ct_event c = ev(CT_EV_NCCL_COMM, 1);
	c.v[F_NCCL_COMM_TS] = 1, c.v[F_NCCL_COMM_CTX] = ctx, c.v[F_NCCL_COMM_COMM] = 0xabc0 + ctx;
	c.v[F_NCCL_COMM_NNODES] = 1, c.v[F_NCCL_COMM_NRANKS] = 4, c.v[F_NCCL_COMM_RANK] = 2;
	c.v[F_NCCL_COMM_ABI] = 5;
	str(&c, F_NCCL_COMM_NAME, name);
	nccl_ops_event(e, &c);
}

static void launch(struct nccl_ops *e, uint64_t ts, uint64_t id, uint64_t ctx, uint64_t stream)
{
	struct ct_event l = ev(CT_EV_NCCL_LAUNCH, 1);
	l.v[F_NCCL_LAUNCH_TS] = ts, l.v[F_NCCL_LAUNCH_ID] = id, l.v[F_NCCL_LAUNCH_CTX] = ctx;
	l.v[F_NCCL_LAUNCH_PARENT] = 0, l.v[F_NCCL_LAUNCH_STREAM] = stream;
	nccl_ops_event(e, &l);
	struct ct_event s = ev(CT_EV_NCCL_STOP, 1);
	s.v[F_NCCL_STOP_TS] = ts + 5, s.v[F_NCCL_STOP_ID] = id;
	nccl_ops_event(e, &s);
}

static void plan(struct nccl_ops *e, uint64_t ts, uint64_t id, uint64_t ctx, uint64_t launch_id)
{
	struct ct_event g = ev(CT_EV_NCCL_GROUP, 1);
	g.v[F_NCCL_GROUP_TS] = ts, g.v[F_NCCL_GROUP_ID] = id, g.v[F_NCCL_GROUP_CTX] = ctx;
	g.v[F_NCCL_GROUP_LAUNCH] = launch_id;
	nccl_ops_event(e, &g);
}

static void coll(struct nccl_ops *e, uint64_t ts, uint64_t id, uint64_t ctx, uint64_t group,
                 const char *func, const char *dtype, uint64_t count, uint64_t seq)
{
	struct ct_event c = ev(CT_EV_NCCL_COLL, 1);
	c.v[F_NCCL_COLL_TS] = ts, c.v[F_NCCL_COLL_ID] = id, c.v[F_NCCL_COLL_CTX] = ctx;
	c.v[F_NCCL_COLL_PARENT] = 0, c.v[F_NCCL_COLL_GROUP] = group, c.v[F_NCCL_COLL_SEQ] = seq;
	str(&c, F_NCCL_COLL_FUNC, func);
	str(&c, F_NCCL_COLL_DATATYPE, dtype);
	c.v[F_NCCL_COLL_COUNT] = count, c.v[F_NCCL_COLL_ROOT] = 0;
	c.v[F_NCCL_COLL_CHANNELS] = 2, c.v[F_NCCL_COLL_WARPS] = 8;
	str(&c, F_NCCL_COLL_ALGO, "RING");
	str(&c, F_NCCL_COLL_PROTO, "LL");
	c.v[F_NCCL_COLL_RANK] = 2;
	nccl_ops_event(e, &c);
}

static void channel(struct nccl_ops *e, uint64_t ts, uint64_t id, uint64_t task, uint64_t g0,
                    uint64_t g1)
{
	struct ct_event c = ev(CT_EV_NCCL_KERNEL_CH, 2);
	c.v[F_NCCL_KERNEL_CH_TS] = ts, c.v[F_NCCL_KERNEL_CH_ID] = id, c.v[F_NCCL_KERNEL_CH_CTX] = 1;
	c.v[F_NCCL_KERNEL_CH_PARENT] = task, c.v[F_NCCL_KERNEL_CH_CHANNEL] = 0;
	c.v[F_NCCL_KERNEL_CH_GPU_START] = g0;
	nccl_ops_event(e, &c);
	struct ct_event s = ev(CT_EV_NCCL_STATE, 2);
	s.v[F_NCCL_STATE_TS] = ts + 1, s.v[F_NCCL_STATE_ID] = id;
	s.v[F_NCCL_STATE_STATE] = 22, s.v[F_NCCL_STATE_VALUE] = g1;
	nccl_ops_event(e, &s);
}

static void kernel(struct nccl_ops *e, uint64_t ts, uint64_t end, uint64_t stream, uint64_t corr,
                   const char *name)
{
	struct ct_event k = ev(CT_EV_KERNEL, 3);
	k.v[F_KERNEL_TS] = ts, k.v[F_KERNEL_END] = end, k.v[F_KERNEL_CORRELATION] = corr;
	k.v[F_KERNEL_DEVICE] = 0, k.v[F_KERNEL_CONTEXT] = 1, k.v[F_KERNEL_STREAM] = stream;
	str(&k, F_KERNEL_NAME, name);
	nccl_ops_event(e, &k);
}

/* Two streams, launches interleaved, kernels recorded in another order
 * than the launches, other kernels in between, the proxy's channel
 * events ahead of their tasks. */
static void test_attribution(void)
{
	ngot = 0;
	struct nccl_ops *e = nccl_ops_new(on_plan, NULL);
	comm(e, 1, "world");
	/* kernels first (CUPTI's buffers may come early or late) */
	kernel(e, 1300, 1900, 7, 101,
	       "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP17ncclDevKernelArgs");
	kernel(e, 1250, 1260, 7, 100, "my_gemm_kernel");
	kernel(e, 1210, 1800, 9, 102,
	       "void ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	kernel(e, 2200, 2600, 7, 103, "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)");
	kernel(e, 2100, 2150, 9, 104, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	/* channel events before their task */
	channel(e, 1950, 0x1008, 0x1006, 500, 1100);
	launch(e, 1000, 0x1004, 1, 0xaaa); /* stream A */
	launch(e, 1100, 0x2004, 1, 0xbbb); /* stream B */
	plan(e, 1010, 0x1005, 1, 0x1004);
	coll(e, 1011, 0x1006, 1, 0x1005, "AllReduce", "ncclFloat32", 1024, 3);
	plan(e, 1110, 0x2005, 1, 0x2004);
	coll(e, 1111, 0x2006, 1, 0x2005, "AllGather", "ncclInt8", 8192, 0);
	launch(e, 2000, 0x3004, 1, 0xaaa);
	plan(e, 2010, 0x3005, 1, 0x3004);
	coll(e, 2011, 0x3006, 1, 0x3005, "AllReduce", "ncclFloat32", 4096, 4);
	nccl_ops_finish(e);
	CHECK_EQ(ngot, 3);
	/* plans in the order they were made */
	CHECK_EQ(got[0].id, 0x1005);
	/* demangled, as the kernel's own slice is named */
	CHECK(!strcmp(got_kernel[0], "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs*)"));
	CHECK_EQ(got[1].id, 0x2005);
	CHECK(strstr(got_kernel[1], "AllGather") != NULL);
	/* stream A was learnt as CUPTI stream 7: the later launch gets the
	 * kernel of stream 7, not the earlier AllReduce of stream 9 */
	CHECK_EQ(got[2].id, 0x3005);
	CHECK(strstr(got_kernel[2], "Generic") != NULL);
	CHECK_EQ(got[2].kernel.correlation, 103);
	CHECK_EQ(got_ops[0][0].gpu_raw_start, 500);
	CHECK_EQ(got_ops[0][0].gpu_raw_end, 1100);
	CHECK_EQ(got_ops[0][0].gpu_channels, 1);
	CHECK_EQ(got_ops[0][0].seq, 3);
	CHECK_EQ(got_ops[0][0].bytes, 4096);
	/* no API event: the task's view, AllGather in bytes, x nranks */
	CHECK_EQ(got_ops[1][0].bytes, 8192 * 4);
	CHECK_EQ(got_ops[1][0].gpu_raw_start, 0);
	CHECK(got_ops[0][0].comm && !strcmp(got_ops[0][0].comm->name, "world"));
	CHECK_EQ(got_ops[0][0].comm->rank, 2);
	/* clock offset from the channel: host 1950 - GPU 500 */
	CHECK_EQ(got_ops[0][0].gpu_start, 1950);
	nccl_ops_free(e);
}

/* Plans quiet for longer than the horizon leave before the end. */
static void test_horizon(void)
{
	ngot = 0;
	struct nccl_ops *e = nccl_ops_new(on_plan, NULL);
	nccl_ops_horizon(e, 1000);
	comm(e, 1, "w");
	for (uint64_t i = 0; i < 20000; i++) {
		uint64_t base = (i + 1) << 8, ts = 100 * i;
		launch(e, ts, base | 4, 1, 0xaaa);
		plan(e, ts + 1, base | 5, 1, base | 4);
		coll(e, ts + 2, base | 6, 1, base | 5, "AllReduce", "ncclFloat32", i, i);
	}
	int before = ngot;
	CHECK(before > 0 && before < 20000);
	nccl_ops_finish(e);
	CHECK_EQ(ngot, 20000);
	CHECK_EQ(got_ops[5][0].count, 5); /* in order */
	nccl_ops_free(e);
}

/* More nodes than the hold: the oldest plans leave, quiet or not, in order. */
static void test_hold(void)
{
	ngot = 0;
	struct nccl_ops *e = nccl_ops_new(on_plan, NULL);
	nccl_ops_hold(e, 1000);
	comm(e, 1, "w");
	for (uint64_t i = 0; i < 20000; i++) {
		uint64_t base = (i + 1) << 8, ts = 100 * i;
		launch(e, ts, base | 4, 1, 0xaaa);
		plan(e, ts + 1, base | 5, 1, base | 4);
		coll(e, ts + 2, base | 6, 1, base | 5, "AllReduce", "ncclFloat32", i, i);
	}
	int before = ngot;
	CHECK(before > 10000 && before < 20000);
	nccl_ops_finish(e);
	CHECK_EQ(ngot, 20000);
	CHECK_EQ(got_ops[5][0].count, 5); /* in order */
	nccl_ops_free(e);
}

static void test_names(void)
{
	CHECK(nccl_kernel_is_comm("ncclKernel_AllReduce_RING_LL_Sum_float", 38));
	CHECK(nccl_kernel_is_comm("_Z24ncclDevKernel_Generic_4P24ncclDevKernelArgs", 46));
	CHECK(nccl_kernel_is_comm("ncclSymDevKernel_AllReduce_AGxLL_R", 34));
	CHECK(nccl_kernel_is_comm("ncclSymkDevKernel_AllGather_LL", 30));
	CHECK(nccl_kernel_is_comm("void ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)",
	                          60));
	CHECK(!nccl_kernel_is_comm("my_nccl_like_kernel", 19));
	CHECK(!nccl_kernel_is_comm("nccl", 4));
	CHECK_EQ(nccl_msg_bytes("AllGather", 10, 4, 8), 320);
	CHECK_EQ(nccl_msg_bytes("ReduceScatter", 10, 2, 4), 80);
	CHECK_EQ(nccl_msg_bytes("AllReduce", 10, 2, 4), 20);
	CHECK_EQ(nccl_msg_bytes("Send", 10, 8, 4), 80);
	CHECK(nccl_bus_factor("AllReduce", 8) == 2.0 * 7 / 8);
	CHECK(nccl_bus_factor("AllGather", 8) == 7.0 / 8);
	CHECK(nccl_bus_factor("Broadcast", 8) == 1);
	CHECK(nccl_bus_factor("Recv", 2) == 1);
	CHECK_EQ(nccl_type_size("ncclBfloat16"), 2);
	CHECK_EQ(nccl_type_size("Unknown"), 0);
	CHECK(!strcmp(nccl_type_name(7), "ncclFloat32"));
	CHECK(nccl_type_name(12) == NULL && nccl_type_name(-1) == NULL);
}

static enum nccl_line parse(const char *s, struct nccl_log_line *l)
{
	return nccl_log_parse(s, strlen(s), l);
}

static void test_log_lines(void)
{
	struct nccl_log_line l;
	CHECK_EQ(
	    parse("h-1.x:12:34 [3] NCCL INFO ReduceScatter: opCount 1e7 sendbuff (nil) recvbuff "
	          "0x7f00 count 18816 datatype 7 op 2 root -1 comm 0x5595 [nranks=16] stream "
	          "0x55a9\r",
	          &l),
	    NL_COLL);
	CHECK(!strcmp(l.host, "h-1.x") && l.pid == 12 && l.tid == 34);
	CHECK(!strcmp(l.func, "ReduceScatter"));
	CHECK_EQ(l.opcount, 0x1e7);
	CHECK_EQ(l.count, 18816);
	CHECK_EQ(l.datatype, 7);
	CHECK_EQ(l.root, -1);
	CHECK_EQ(l.comm, 0x5595);
	CHECK_EQ(l.nranks, 16);
	CHECK_EQ(l.stream, 0x55a9);
	CHECK_EQ(l.globalrank, -1);
	/* RCCL: its timestamp after the device, task and globalrank after */
	CHECK_EQ(parse("rocm-3:24888:25056 [1] 1558545003174220 NCCL INFO AllReduce: opCount 1 "
	               "sendbuff 0x7f80 recvbuff 0x7f81 count 1001 datatype 7 op 0 root 0 comm "
	               "0x7f80 [nranks=2] stream 0x7f80 task 0 globalrank 170 extra",
	               &l),
	         NL_COLL);
	CHECK_EQ(l.globalrank, 170);
	CHECK_EQ(l.pid, 24888);
	/* No prefix at all (a log copied from a web page) */
	CHECK_EQ(parse("[7] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 1 "
	               "datatype 1 op 0 root 0 comm 0x5 [nranks=128] stream 0x5",
	               &l),
	         NL_COLL);
	CHECK_EQ(l.pid, -1);
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 1 "
	               "datatype 1 op 0 root 0 comm 0x5 [nranks=0] stream 0x5",
	               &l),
	         NL_BAD);
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff", &l), NL_BAD);
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO AllReduce:", &l), NL_BAD);
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO Channel 00/02 : 0 1", &l), NL_OTHER);
	CHECK_EQ(parse("AllReduce: opCount 2 sendbuff 0x1", &l), NL_OTHER); /* not NCCL's */
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO ncclCommInitRank comm 0x5e30 rank 3 nranks 4 cudaDev 0 "
	               "nvmlDev 0 busId 57000 commId 0xadcb - Init COMPLETE",
	               &l),
	         NL_RANK);
	CHECK_EQ(l.rank, 3);
	CHECK_EQ(l.nranks, 4);
	CHECK_EQ(l.comm, 0x5e30);
	CHECK_EQ(
	    parse("x:1:1 [5] NCCL INFO Init timings - ncclCommInitRank: rank 5 nranks 16 total 1",
	          &l),
	    NL_RANK);
	CHECK_EQ(l.rank, 5);
	CHECK_EQ(l.comm, 0);
	CHECK_EQ(parse("x:1:1 [0] NCCL INFO comm 0x55 rank 9 nranks 4 cudaDev 0", &l), NL_OTHER);
	CHECK(nccl_log_sniff("foo\nx:1:1 [0] NCCL INFO hi\n", 26));
	CHECK(!nccl_log_sniff("NCCL is great\n", 14));
}

/* The step mark of a line: its number, -1 when counted, -2 when no mark. */
static int64_t mark(const struct nccl_log_steps *s, const char *line)
{
	int64_t n;
	return nccl_log_step_mark(s, line, strlen(line), &n) ? n : -2;
}

static void test_step_marks(void)
{
	struct nccl_log_steps d, u;
	char err[128];
	CHECK_EQ(nccl_log_steps_init(&d, NULL, err, sizeof err), 0);
	/* what training loops print once per iteration */
	CHECK_EQ(mark(&d, " [2024-06-03 14:22:02] iteration       10/    1000 | consumed samples: "
	                  "640 | elapsed time per iteration (ms): 812.4 |\n"), 10);
	CHECK_EQ(mark(&d, "[rank0]:[titan] 2025-01-01 - root - INFO - step:  2  loss: 10.9"), 2);
	CHECK_EQ(mark(&d, "[Rank 0] step=3, skipped=0, lr=[0.0001]"), 3);
	CHECK_EQ(mark(&d, "iter 4: loss 4.2, time 51.2ms"), 4);
	CHECK_EQ(mark(&d, "Step 12/100"), 12);
	/* a number too long for a step is no number: counted */
	CHECK_EQ(mark(&d, "step 1234567890123456789"), -1);
	/* not marks: words inside others, no number, NCCL's own lines */
	CHECK_EQ(mark(&d, "substeps 7 stepSize 9 warmup steps 100"), -2);
	CHECK_EQ(mark(&d, "Epoch: [0][ 10/625]\tTime  1.425"), -2);
	CHECK_EQ(mark(&d, "elapsed time per iteration (ms): 812.4"), -2);
	CHECK_EQ(mark(&d, "x:1:1 [0] NCCL INFO Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1 count "
	                  "5 datatype 7 op 0 root 0 comm 0x1 [nranks=4] stream 0x1 step 5"), -2);
	CHECK_EQ(mark(&d, "x:1:1 [0] NCCL WARN step 5"), -2);
	/* a NUL inside the line: the bytes after it are read too */
	CHECK_EQ(nccl_log_step_mark(&d, "ab\0 step 6", 10, &(int64_t){0}), 1);
	nccl_log_steps_free(&d);
	/* a user's pattern: NCCL's lines may mark; the first group that
	 * matched digits numbers the step; none: counted */
	CHECK_EQ(nccl_log_steps_init(&u, "(AllReduce): opCount ([0-9a-f]+) .* count 1 |BEGIN", err,
	                             sizeof err), 0);
	CHECK_EQ(mark(&u, "x:1:1 [0] NCCL INFO AllReduce: opCount 17 sendbuff 0x1 recvbuff 0x1 count "
	                  "1 datatype 7"), 17);
	CHECK_EQ(mark(&u, "x:1:1 [0] NCCL INFO AllReduce: opCount 1f sendbuff 0x1 recvbuff 0x1 count "
	                  "1 datatype 7"), -1);
	CHECK_EQ(mark(&u, "BEGIN"), -1);
	CHECK_EQ(mark(&u, "begin"), -2); /* case kept */
	nccl_log_steps_free(&u);
	CHECK_EQ(nccl_log_steps_init(&u, "step (", err, sizeof err), -1);
	CHECK(err[0] != 0);
}

static const struct nccl_size_row *find_size(const struct nccl_agg *a, const char *func,
                                             const char *dtype, uint64_t bytes, int64_t nranks)
{
	for (size_t i = 0; i < a->ns; i++)
		if (!strcmp(a->s[i].func, func) && !strcmp(a->s[i].dtype, dtype) &&
		    a->s[i].bytes == bytes && a->s[i].nranks == nranks)
			return &a->s[i];
	return NULL;
}

/* nccl_calls' rows: one per (operation, datatype, size, communicator
 * size), found again among thousands, and folded by merges. */
static void test_size_rows(void)
{
	struct nccl_agg a, b, c;
	memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&c, 0, sizeof c);
	for (int rank = 0; rank < 3; rank++)
		for (uint64_t k = 0; k < 5000; k++)
			nccl_agg_add(&a, rank, k & 1 ? "AllReduce" : "AllGather", "ncclFloat32", k * 4, 8,
			             rank == 2, 100 + k);
	CHECK_EQ(a.ns, 5000);
	CHECK_EQ(a.n, 6); /* the per-rank rows as before */
	for (uint64_t k = 0; k < 5000; k += 499) {
		const struct nccl_size_row *r =
		    find_size(&a, k & 1 ? "AllReduce" : "AllGather", "ncclFloat32", k * 4, 8);
		CHECK(r != NULL);
		CHECK_EQ(r->calls, 3);
		CHECK_EQ(r->timed, 1);
		CHECK(r->time_ns == 100 + k && r->min_ns == 100 + k && r->max_ns == 100 + k);
	}
	nccl_agg_add(&b, 0, "AllReduce", "ncclFloat32", 4, 8, 1, 50);
	nccl_agg_add(&b, 0, "AllReduce", "ncclFloat32", 4, 16, 0, 0); /* another communicator size */
	nccl_agg_merge(&b, &a);
	CHECK_EQ(b.ns, 5001);
	const struct nccl_size_row *r = find_size(&b, "AllReduce", "ncclFloat32", 4, 8);
	CHECK(r && r->calls == 4 && r->timed == 2 && r->time_ns == 151);
	CHECK(r->min_ns == 50 && r->max_ns == 101);
	r = find_size(&b, "AllReduce", "ncclFloat32", 4, 16);
	CHECK(r && r->calls == 1 && r->timed == 0);
	/* the key's strings are not run together */
	nccl_agg_add(&c, 0, "ab", "c", 1, 2, 0, 0);
	nccl_agg_add(&c, 0, "a", "bc", 1, 2, 0, 0);
	CHECK_EQ(c.ns, 2);
	nccl_agg_free(&a);
	nccl_agg_free(&b);
	nccl_agg_free(&c);
}

/* Communicators defined after plans were handed out (torch makes its
 * process groups' communicators lazily): a communicator the model holds
 * (ops, tracks) stays where it was. */
static void test_late_communicators(void)
{
	ngot = 0;
	struct nccl_ops *e = nccl_ops_new(on_plan, NULL);
	comm(e, 1, "world");
	launch(e, 1000, 0x1004, 1, 0xaaa);
	plan(e, 1010, 0x1005, 1, 0x1004);
	coll(e, 1011, 0x1006, 1, 0x1005, "AllReduce", "ncclFloat32", 1024, 0);
	const struct nccl_comm *held = nccl_ops_comm(e, 0); /* as a track keeps it */
	char name[16];
	for (uint64_t k = 2; k < 40; k++) {
		snprintf(name, sizeof name, "pg%llu", (unsigned long long)k);
		comm(e, k, name);
	}
	CHECK(held == nccl_ops_comm(e, 0)); /* not moved by the 38 others */
	CHECK(!strcmp(held->name, "world"));
	CHECK(!strcmp(nccl_ops_comm(e, 38)->name, "pg39"));
	nccl_ops_finish(e);
	CHECK_EQ(ngot, 1);
	CHECK(got_ops[0][0].comm == held);
	nccl_ops_free(e);
}

int main(void)
{
	test_size_rows();
	test_step_marks();
	test_late_communicators();
	test_attribution();
	test_horizon();
	test_hold();
	test_names();
	test_log_lines();
	return 0;
}
