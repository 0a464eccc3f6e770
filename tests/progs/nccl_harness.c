// SPDX-License-Identifier: MIT
/* Plays NCCL 2.28's part for a profiler plugin: finds the plugin through
 * NCCL_PROFILER_PLUGIN, looks up ncclProfiler_v5 (then v4), and for a
 * scripted job calls init / startEvent / recordEventState / stopEvent /
 * finalize in the order, on the threads and with the descriptors NCCL
 * uses (src/plugin/profiler.cc, src/enqueue.cc, src/group.cc):
 *
 *   user thread  GroupApi start, state GroupStartApiStop, CollApi/P2pApi
 *                start..stop per call, state GroupEndApiStart, then per
 *                plan: KernelLaunch start..stop, Group start, task starts
 *                (Coll: seq, algo, proto; P2p: peer), task stops, Group
 *                stop; GroupApi stop.
 *   proxy thread per task and channel: KernelCh start (GPU start timer),
 *                state KernelChStop (GPU end timer), stop.
 *
 * with NCCL's gating on the activation mask the plugin returned and its
 * quirks (API events carry rank 0; AllGather/Broadcast tasks report
 * bytes as ncclInt8; handles reused as parents after their stop).
 * There is no GPU: the "GPU" runs each plan for a duration derived from
 * its size, on a globaltimer that is CLOCK_REALTIME plus a skew.
 *
 * usage: nccl_harness [ITERATIONS]
 * env:   RANK/OMPI_COMM_WORLD_RANK, WORLD_SIZE/OMPI_COMM_WORLD_SIZE (even,
 *        default 4; HARNESS_RANK/HARNESS_WORLD before them: ranks the
 *        tracer cannot see), HARNESS_ABI (5, 6 or 4), HARNESS_STEPS=1 (cuptrace_step
 *        before each iteration), CT_TEST_TRUTH (JSON lines of what was
 *        done, for the tests).
 *        Timing (pace.h): HARNESS_PACE_US, HARNESS_LATE, HARNESS_STEP_LATE;
 *        HARNESS_PACE_US=P: every collective call (or group) and every step
 *        mark has a slot P us apart, from HARNESS_T0 (CLOCK_REALTIME ns,
 *        default now), and waits for it; HARNESS_LATE=R:D:E: rank R comes
 *        D us after its slot at every E-th collective slot (0, E, 2E, ...);
 *        HARNESS_STEP_LATE=R:D: rank R marks the step of every odd iteration
 *        D us after its slot (so its odd-numbered steps last D longer, the
 *        others D shorter). With pacing, a step mark also closes the last
 *        step and each mark is written to the truth. HARNESS_LATE_WAITS=1:
 *        the other members' kernels of a late collective start when the late
 *        rank comes (as NCCL's do; without it each rank's GPU runs at once).
 *        Hangs (hang.h): HARNESS_HANG=R:K[:MODE] makes collective slot K
 *        (0, 1, ... in call order; 9 per iteration) never complete on any
 *        communicator of rank R: R stops at it (MODE absent, the default:
 *        inside NVTX ranges step > save_checkpoint), or calls AllGather
 *        there instead (op), or the same operation with one more element
 *        (count); every rank that enters a collective that cannot complete
 *        blocks there (its "GPU" never finishes it) until killed.
 * Built a second time with -DHARNESS_SIM (build/tests/cupti_sim/nccl_harness_sim,
 * linked with the CUPTI simulator): each plan's kernel is also launched on
 * a simulated GPU (one stream per communicator, mangled NCCL kernel names),
 * each iteration launches two compute kernels, records a CUDA event that
 * the communication stream waits for and ends with a stream sync, inside an
 * NVTX range "step" (so CUPTRACE_STEP_RANGE=step marks steps); the first
 * compute kernel runs HARNESS_GEMM_US us (default 30; the demo makes its
 * GPUs busy with it). */
#include "hang.h"
#include "nccl_plugin.h"
#include "pace.h"
#include "truth.h"
#ifdef HARNESS_SIM
#include "../cupti_sim/cupti_sim.h"
#include <nvtx3/nvToolsExt.h>
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The GPU's globaltimer: another clock than the host's. */
#define GPU_SKEW 987654321ull
static uint64_t gpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + GPU_SKEW;
}

struct comm {
	void *ctx;
	uint64_t hash;
	const char *name;
	int rank, nranks, nnodes;
	uint64_t seq[16]; /* comm->seqNumber[func] */
	void *stream;
	int with_late; /* the late rank (HARNESS_LATE) is a member */
};

enum { F_ALLREDUCE, F_ALLGATHER, F_REDUCESCATTER, F_BROADCAST, F_REDUCE, F_SEND, F_RECV };
/* ncclFuncToString / ncclDatatypeToString / ncclAlgoToString /
 * ncclProtoToString: NCCL passes pointers to these constants. */
static const char *const fname[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                    "Reduce",    "Send",      "Recv"};
static const char *const tname[] = {"ncclInt8",    "Unknown",     "ncclInt32",   "ncclUint32",
                                    "ncclInt64",   "ncclUint64",  "ncclFloat16", "ncclFloat32",
                                    "ncclFloat64", "ncclBfloat16"};
static const int tsize[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
enum { T_INT8 = 0, T_INT32 = 2, T_F16 = 6, T_F32 = 7, T_F64 = 8, T_BF16 = 9 };
static const char *const algo_s[] = {"RING", "TREE"};
static const char *const proto_s[] = {"SIMPLE", "LL", "LL128"};

static int late_waits; /* HARNESS_LATE_WAITS */

/* A task queued in the planner (ncclTaskColl / ncclTaskP2p). */
struct task {
	struct comm *c;
	int func, dtype, root; /* root: peer for send/recv */
	size_t count;
	void *api; /* collApiEventHandle / p2pApiEventHandle */
	void *group_api;
	int mask; /* eActivationMask at enqueue */
	void *handle;
	int nch;
	uint64_t size; /* nccl-tests size, for the GPU duration */
	uint64_t gpu_start, gpu_end;
	int step;
	long seq; /* -1 for send/recv */
	uint64_t api_t0, api_t1;
};

#define MAXT 16
struct plan {
	struct task t[MAXT];
	int n;
	void *launch, *group;
	struct comm *c;
	int stuck; /* its collective cannot complete: the GPU never ends it */
	uint64_t not_before; /* GPU time: the late rank came (HARNESS_LATE_WAITS) */
};

/* ncclProfilerApiState (thread-local in NCCL; one user thread here). */
static struct {
	int profilerGroupDepth, eActivationMask, state; /* 0 reset, 1 started, 2 stopped */
	void *groupApi, *p2pApi, *collApi;
} api;
static int group_depth; /* ncclGroupDepth */
static struct task pending[MAXT];
static int npending;
static int cur_step;

/* ---- the proxy thread: kernel-channel events with GPU timers ---- */

static struct plan *queue[1024];
static int qhead, qtail, qdone, qfinished;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t qroom = PTHREAD_COND_INITIALIZER; /* the queue has room */
static pthread_cond_t qidle = PTHREAD_COND_INITIALIZER; /* a plan was run */
static uint64_t gpu_busy_until;

static void sleep_until_gpu(uint64_t t)
{
	for (;;) {
		uint64_t now = gpu_now();
		if (now >= t)
			return;
		struct timespec ts = {0, (long)(t - now)};
		nanosleep(&ts, NULL);
	}
}

static int world_rank;

static void write_op(const struct task *t, int group_size)
{
	truth("{\"kind\": \"op\", \"rank\": %d, \"world_rank\": %d, \"comm\": %llu, "
	      "\"comm_name\": \"%s\", \"nranks\": %d, \"func\": \"%s\", \"count\": %zu, "
	      "\"datatype\": \"%s\", \"root\": %d, \"size\": %llu, \"step\": %d, "
	      "\"channels\": %d, \"gpu_start\": %llu, \"gpu_end\": %llu, "
	      "\"api_start\": %llu, \"api_end\": %llu, \"group_size\": %d, \"seq\": %ld}",
	      t->c->rank, world_rank, (unsigned long long)t->c->hash, t->c->name, t->c->nranks,
	      fname[t->func], t->count, tname[t->dtype], t->root, (unsigned long long)t->size,
	      t->step, t->nch, (unsigned long long)t->gpu_start, (unsigned long long)t->gpu_end,
	      (unsigned long long)t->api_t0, (unsigned long long)t->api_t1, group_size, t->seq);
}

#ifdef HARNESS_SIM
static uint32_t sim_compute, sim_stream[2]; /* per communicator: world, pair */

static void sim_nccl_launch(const struct plan *p)
{
	char base[96], name[160];
	int f = p->t[0].func;
	if (f == F_SEND || f == F_RECV)
		snprintf(base, sizeof base, "ncclDevKernel_SendRecv");
	else
		snprintf(base, sizeof base, "ncclDevKernel_%s_Sum_f32_RING_LL", fname[f]);
	snprintf(name, sizeof name, "_Z%zu%sP17ncclDevKernelArgs", strlen(base), base);
	uint64_t dur = 0;
	for (int i = 0; i < p->n; i++)
		dur += 10000 + p->t[i].size / 50;
	uint32_t s = sim_stream[strcmp(p->c->name, "world") != 0];
	sim_launch(s, name, (struct sim_dim){2, 1, 1}, (struct sim_dim){512, 1, 1}, 96, 0, 0, dur);
}
#endif

static void run_plan(struct plan *p)
{
	if (p->stuck) /* a hung kernel: no channel ever reports */
		return;
	/* The kernel runs its tasks one after the other, each for a time
	 * derived from its size; channels start a little apart. */
	uint64_t t0 = gpu_now();
	if (t0 < gpu_busy_until)
		t0 = gpu_busy_until;
	if (t0 < p->not_before)
		t0 = p->not_before;
	t0 += 2000;
	for (int i = 0; i < p->n; i++) {
		struct task *t = &p->t[i];
		t->gpu_start = t0;
		t->gpu_end = t0 + 10000 + t->size / 50 + 100 * (uint64_t)world_rank;
		t0 = t->gpu_end;
	}
	gpu_busy_until = t0;
	sleep_until_gpu(t0);
	for (int i = 0; i < p->n; i++) {
		struct task *t = &p->t[i];
		for (int ch = 0; ch < t->nch; ch++) {
			if (!(t->mask & ncclProfileKernelCh) || !loaded())
				break;
			descr_v5 d = {0};
			d.type = ncclProfileKernelCh;
			d.parentObj = t->handle;
			d.kernelCh.channelId = (uint8_t)ch;
			d.kernelCh.pTimer = t->gpu_start + (uint64_t)ch * 7;
			void *h;
			start(t->c->ctx, &h, &d);
			if (h) {
				state_args a = {0};
				a.kernelCh.pTimer = t->gpu_end - (uint64_t)ch * 3;
				record(h, ncclProfilerKernelChStop, &a);
				stop(h);
			}
		}
		write_op(t, p->n);
	}
}

static void *proxy_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&qlock);
	for (;;) {
		while (qhead == qtail && !qdone)
			pthread_cond_wait(&qcond, &qlock);
		if (qhead == qtail)
			break;
		struct plan *p = queue[qhead++ % 1024];
		pthread_cond_signal(&qroom);
		pthread_mutex_unlock(&qlock);
		run_plan(p);
		free(p);
		pthread_mutex_lock(&qlock);
		qfinished++;
		pthread_cond_broadcast(&qidle);
	}
	pthread_mutex_unlock(&qlock);
	return NULL;
}

/* ---- API calls ---- */

static void launch_plans(void);
static void group_end(void);

static uint64_t nccl_tests_size(int func, size_t count, int dtype, int nranks)
{
	uint64_t b = (uint64_t)count * (uint64_t)tsize[dtype];
	return func == F_ALLGATHER || func == F_REDUCESCATTER ? b * (uint64_t)nranks : b;
}

/* ncclProfilerStartGroupApiEvent + RecordGroupApiEventState(StartApiStop) */
static void group_api_begin(struct comm *c)
{
	api.eActivationMask = __atomic_load_n(&event_mask, __ATOMIC_RELAXED);
	int groupApiMask = ncclProfileGroupApi | ncclProfileP2pApi | ncclProfileCollApi |
	                   ncclProfileKernelLaunch | ncclProfileGroup | ncclProfileColl |
	                   ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep |
	                   ncclProfileKernelCh | ncclProfileNetPlugin;
	if (loaded() && (api.eActivationMask & groupApiMask) && api.profilerGroupDepth == 0) {
		descr_v5 d = {0};
		d.type = ncclProfileGroupApi;
		d.groupApi.graphCaptured = false;
		d.groupApi.groupDepth = group_depth;
		if (P5) /* v4 has no API events */
			start(c->ctx, &api.groupApi, &d);
		api.profilerGroupDepth = group_depth;
		api.state = 1;
	}
	if (api.state == 1) {
		api.state = 2;
		if (loaded() && api.groupApi)
			record(api.groupApi, ncclProfilerGroupStartApiStop, NULL);
	}
}

static void enqueue(struct comm *c, int func, size_t count, int dtype, int root)
{
	uint64_t t0 = mono_ns();
	/* ncclEnqueueCheck */
	if (api.profilerGroupDepth > 0)
		api.profilerGroupDepth++;
	group_depth++;
	group_api_begin(c);
	int is_p2p = func == F_SEND || func == F_RECV;
	struct task *t = &pending[npending++];
	memset(t, 0, sizeof *t);
	if (loaded() && P5) {
		descr_v5 d = {0};
		if (is_p2p) {
			d.type = ncclProfileP2pApi;
			d.parentObj = api.groupApi;
			d.p2pApi.func = fname[func];
			d.p2pApi.count = count;
			d.p2pApi.datatype = tname[dtype];
			d.p2pApi.stream = c->stream;
			int m = ncclProfileP2pApi | ncclProfileP2p | ncclProfileProxyOp |
			        ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
			if (api.eActivationMask & m)
				start(c->ctx, &api.p2pApi, &d);
		} else {
			d.type = ncclProfileCollApi;
			d.parentObj = api.groupApi;
			d.collApi.func = fname[func];
			d.collApi.count = count;
			d.collApi.datatype = tname[dtype];
			d.collApi.stream = c->stream;
			d.collApi.root = root;
			int m = ncclProfileCollApi | ncclProfileColl | ncclProfileProxyOp |
			        ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin;
			if (api.eActivationMask & m)
				start(c->ctx, &api.collApi, &d);
		}
	}
	t->c = c;
	t->func = func;
	t->count = count;
	t->dtype = dtype;
	t->root = root;
	t->api = is_p2p ? api.p2pApi : api.collApi;
	t->group_api = api.groupApi;
	t->mask = api.eActivationMask;
	t->nch = is_p2p ? 2 : (int)(1 + (count % 4));
	t->size = nccl_tests_size(func, count, dtype, c->nranks);
	t->step = cur_step;
	if (loaded()) {
		if (is_p2p && api.p2pApi) {
			stop(api.p2pApi);
			api.p2pApi = NULL; /* NCCL clears it; the collective one it keeps */
		} else if (!is_p2p && api.collApi) {
			stop(api.collApi);
		}
	}
	t->api_t0 = t0;
	t->api_t1 = mono_ns();
	group_end(); /* ncclEnqueueCheck's own ncclGroupEndInternal */
}

static void group_start(void)
{
	group_depth++;
}

/* ncclGroupEndInternal */
static void group_end(void)
{
	if (api.profilerGroupDepth > 0)
		api.profilerGroupDepth--;
	if (api.profilerGroupDepth == 0 && api.state == 2) {
		api.state = 0;
		if (loaded() && api.groupApi)
			record(api.groupApi, ncclProfilerGroupEndApiStart, NULL);
	}
	if (--group_depth > 0)
		return;
	launch_plans();
	if (loaded() && api.groupApi && api.profilerGroupDepth == 0) {
		stop(api.groupApi);
		api.groupApi = NULL;
	}
}

static void coll(struct comm *c, int func, size_t count, int dtype, int root)
{
	enqueue(c, func, count, dtype, root);
}

/* doLaunches: one plan per communicator, tasks in reverse call order
 * (NCCL sorts collectives by size; the plugin must not rely on order). */
static void launch_plans(void)
{
	while (npending) {
		struct comm *c = pending[0].c;
		struct plan *p = calloc(1, sizeof *p);
		p->c = c;
		p->stuck = hang.now;
		if (late_waits && c->with_late) /* its kernel waits for every member */
			p->not_before = pacing.arrival + GPU_SKEW;
		int keep = 0;
		for (int i = npending - 1; i >= 0; i--) {
			if (pending[i].c == c)
				p->t[p->n++] = pending[i];
		}
		for (int i = 0; i < npending; i++)
			if (pending[i].c != c)
				pending[keep++] = pending[i];
		npending = keep;
		int mask = p->t[0].mask;
		/* ncclLaunchKernel */
		if (loaded() && P5 && (mask & ncclProfileKernelLaunch)) {
			descr_v5 d = {0};
			d.type = ncclProfileKernelLaunch;
			d.parentObj = p->t[0].group_api;
			d.kernelLaunch.stream = c->stream;
			start(c->ctx, &p->launch, &d);
		}
		/* cuLaunchKernel would be here */
#ifdef HARNESS_SIM
		if (!p->stuck) /* a hung kernel never ends: CUPTI never reports it */
			sim_nccl_launch(p);
#endif
		if (p->launch)
			stop(p->launch);
		/* hostStreamPlanTask */
		if (loaded() && (mask & (ncclProfileGroup | ncclProfileColl | ncclProfileP2p |
		                         ncclProfileProxyOp | ncclProfileProxyStep |
		                         ncclProfileKernelCh | ncclProfileNetPlugin))) {
			descr_v5 d = {0};
			d.type = ncclProfileGroup;
			start(c->ctx, &p->group, &d);
		}
		for (int i = 0; i < p->n; i++) {
			struct task *t = &p->t[i];
			int is_p2p = t->func == F_SEND || t->func == F_RECV;
			descr_v5 d = {0};
			t->seq = -1;
			if (!is_p2p) {
				/* collTaskAppend: AllGather and Broadcast become bytes */
				size_t cnt = t->count;
				int dt = t->dtype;
				if (t->func == F_ALLGATHER || t->func == F_BROADCAST)
					cnt *= (size_t)tsize[dt], dt = T_INT8;
				if (loaded() &&
				    (t->mask &
				     (ncclProfileColl | ncclProfileProxyOp | ncclProfileProxyStep |
				      ncclProfileKernelCh | ncclProfileNetPlugin))) {
					d.type = ncclProfileColl;
					d.coll.parentGroup = p->group;
					d.parentObj = t->api;
					d.rank = c->rank;
					d.coll.seqNumber = c->seq[t->func];
					d.coll.func = fname[t->func];
					d.coll.sendBuff = (void *)0x100000;
					d.coll.recvBuff = (void *)0x200000;
					d.coll.count = cnt;
					d.coll.root = t->root;
					d.coll.datatype = tname[dt];
					d.coll.nChannels = (uint8_t)t->nch;
					d.coll.nWarps = 16;
					d.coll.algo = algo_s[t->count % 2];
					d.coll.proto = proto_s[t->count % 3];
					start(c->ctx, &t->handle, &d);
				}
				t->seq = (long)c->seq[t->func]++;
			} else if (loaded() &&
			           (t->mask &
			            (ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep |
			             ncclProfileKernelCh | ncclProfileNetPlugin))) {
				d.type = ncclProfileP2p;
				d.p2p.parentGroup = p->group;
				d.parentObj = t->api;
				d.rank = c->rank;
				d.p2p.func = fname[t->func];
				d.p2p.buff = (void *)0x300000;
				d.p2p.count = t->count;
				d.p2p.datatype = tname[t->dtype];
				d.p2p.peer = t->root;
				d.p2p.nChannels = (uint8_t)t->nch;
				start(c->ctx, &t->handle, &d);
			}
		}
		for (int i = 0; i < p->n; i++)
			if (p->t[i].handle)
				stop(p->t[i].handle);
		if (p->group)
			stop(p->group);
		pthread_mutex_lock(&qlock);
		while (qtail - qhead >= 1024) /* the "GPU" is 1024 plans behind: wait */
			pthread_cond_wait(&qroom, &qlock);
		queue[qtail++ % 1024] = p;
		pthread_cond_signal(&qcond);
		pthread_mutex_unlock(&qlock);
	}
}

static void comm_init(struct comm *c, uint64_t hash, const char *name, int rank, int nranks)
{
	memset(c, 0, sizeof *c);
	c->hash = hash;
	c->name = name;
	c->rank = rank;
	c->nranks = nranks;
	c->nnodes = 1;
	/* one stream per communicator, as the simulated GPU has them */
	c->stream = (void *)(uintptr_t)(0x7f0000001000ull + (strcmp(name, "world") != 0) * 0x100ull);
	int err = 0;
	if (P5)
		err = P5->init(&c->ctx, hash, &event_mask, name, c->nnodes, nranks, rank, NULL);
	else if (P4)
		err = P4->init(&c->ctx, &event_mask, name, hash, c->nnodes, nranks, rank, NULL);
	if (err)
		fprintf(stderr, "nccl_harness: plugin init failed (%d)\n", err);
	truth("{\"kind\": \"comm\", \"rank\": %d, \"nranks\": %d, \"comm\": %llu, "
	      "\"name\": \"%s\", \"mask\": %d}",
	      rank, nranks, (unsigned long long)hash, name, event_mask);
}

static void comm_fini(struct comm *c)
{
	if (loaded() && c->ctx) {
		if (P5)
			P5->finalize(c->ctx);
		else
			P4->finalize(c->ctx);
	}
}

/* ---- collective slots, and hangs (hang.h) ---- */

/* Waits until the "GPU" has run every plan queued (a hung one returns at
 * once): a rank that blocks has its earlier work done, as a real GPU
 * would before it sits in the kernel that cannot complete. */
static void gpu_idle(void)
{
	pthread_mutex_lock(&qlock);
	while (qfinished != qtail)
		pthread_cond_wait(&qidle, &qlock);
	pthread_mutex_unlock(&qlock);
}

/* The next collective slot on c: paced, and whether it hangs (rank R may
 * change what it calls there: another operation, another count). */
static int slot(struct comm *c, int it, int *func, size_t *count)
{
	pace(1, it);
	int member = strcmp(c->name, "pair") || world_rank / 2 == hang.rank / 2, is_r;
	if (member && world_rank == hang.rank && hang.k == hang.slot && hang.mode == HANG_ABSENT)
		gpu_idle(); /* it stops here: what it launched before runs to its end */
	int h = hang_at(member, world_rank, &is_r);
	if (is_r && func && hang.mode == HANG_OP)
		*func = *func == F_ALLGATHER ? F_ALLREDUCE : F_ALLGATHER;
	if (is_r && count && hang.mode == HANG_COUNT)
		*count += 1;
	hang.now = h;
	return h;
}

/* After the calls of a slot that cannot complete: says so and blocks. */
static void hung(int h, struct comm *c, int func, size_t count)
{
	hang.now = 0;
	if (!h)
		return;
	gpu_idle();
	truth("{\"kind\": \"hung\", \"rank\": %d, \"pid\": %d, \"comm\": %llu, "
	      "\"comm_name\": \"%s\", \"func\": \"%s\", \"seq\": %llu, \"count\": %zu, "
	      "\"t\": %llu}",
	      world_rank, (int)getpid(), (unsigned long long)c->hash, c->name, fname[func],
	      (unsigned long long)(c->seq[func] - 1), count, (unsigned long long)mono_ns());
	hang_block();
}

static void slot_coll(struct comm *c, int func, size_t count, int dtype, int root, int it)
{
	int h = slot(c, it, &func, &count);
	coll(c, func, count, dtype, root);
	hung(h, c, func, count);
}

static int env_int(const char *a, const char *b, int dflt)
{
	const char *v = getenv(a);
	if (!v)
		v = getenv(b);
	return v ? atoi(v) : dflt;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 2;
	/* HARNESS_RANK/HARNESS_WORLD: a rank the tracer does not see (a job
	 * started without launcher variables, as torch.multiprocessing does) */
	int rank = env_int("HARNESS_RANK", "OMPI_COMM_WORLD_RANK", env_int("RANK", "RANK", 0));
	world_rank = rank;
	int world = env_int("HARNESS_WORLD", "OMPI_COMM_WORLD_SIZE", env_int("WORLD_SIZE", "WORLD_SIZE", 4));
	truth_open();
	void (*step)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "cuptrace_step");
	int use_steps = getenv("HARNESS_STEPS") != NULL;

	plugin_load();
	if (plugin_lib && !step)
		step = (void (*)(void))dlsym(plugin_lib, "cuptrace_step");
	pthread_t proxy;
	pthread_create(&proxy, NULL, proxy_main, NULL);

	struct comm world_c, pair_c;
	comm_init(&world_c, 0x5eed0001c0ffee00ull, "world", rank, world);
	comm_init(&pair_c, 0x9a170000ull + (uint64_t)(rank / 2), "pair", rank % 2, 2);

	int next = (rank + 1) % world, prev = (rank + world - 1) % world;
#ifdef HARNESS_SIM
	sim_init(1);
	sim_compute = sim_stream_create(0);
	uint64_t gemm_ns = (uint64_t)env_int("HARNESS_GEMM_US", "HARNESS_GEMM_US", 30) * 1000;
	sim_stream[0] = sim_stream_create(0);
	sim_stream[1] = sim_stream_create(0);
#endif
	pace_init(world_rank);
	late_waits = getenv("HARNESS_LATE_WAITS") != NULL;
	world_c.with_late = 1;
	pair_c.with_late = pacing.late_rank >= 0 && pacing.late_rank / 2 == world_rank / 2;
	hang_init(plugin_lib);
	pace_start();
	for (int it = 0; it < iters; it++) {
		if (use_steps && step) {
			mark_step(step, it);
			cur_step = it + 1;
		}
#ifdef HARNESS_SIM
		nvtxRangePushA("step");
		nvtxRangePushA("forward");
		sim_launch(sim_compute, "_Z4gemmPKfS0_Pfi", (struct sim_dim){64, 1, 1},
		           (struct sim_dim){256, 1, 1}, 64, 0, 0, gemm_ns);
		sim_launch(sim_compute, "_Z7softmaxPKfPfi", (struct sim_dim){32, 1, 1},
		           (struct sim_dim){128, 1, 1}, 32, 0, 0, 8000);
		nvtxRangePop();
		sim_stream_wait_event(sim_stream[0], sim_event_record(sim_compute));
#else
		hang_push("step"); /* with HARNESS_HANG (the sim build has its NVTX step) */
#endif
		slot_coll(&world_c, F_ALLREDUCE, 1024, T_F32, 0, it);
		slot_coll(&world_c, F_ALLREDUCE, 262144, T_F32, 0, it);
		slot_coll(&world_c, F_ALLGATHER, 32768, T_BF16, 0, it);
		slot_coll(&world_c, F_REDUCESCATTER, 1048576, T_F32, 0, it);
		slot_coll(&world_c, F_BROADCAST, 100000, T_INT8, 0, it);
		slot_coll(&world_c, F_REDUCE, 4096, T_F64, 1, it);
		/* a ring exchange: send and recv in one group */
		int h = slot(&world_c, it, NULL, NULL);
		group_start();
		enqueue(&world_c, F_SEND, 65536, T_F32, next);
		enqueue(&world_c, F_RECV, 65536, T_F32, prev);
		group_end();
		hung(h, &world_c, F_SEND, 65536);
		/* two collectives fused into one kernel */
		h = slot(&world_c, it, NULL, NULL);
		group_start();
		enqueue(&world_c, F_ALLREDUCE, 2048, T_F16, 0);
		enqueue(&world_c, F_ALLREDUCE, 2049, T_F16, 0);
		group_end();
		hung(h, &world_c, F_ALLREDUCE, 2049);
		slot_coll(&pair_c, F_ALLREDUCE, 8, T_INT32, 0, it);
#ifdef HARNESS_SIM
		sim_stream_sync(sim_stream[0]);
		nvtxRangePop();
#else
		hang_pop();
#endif
	}
	if (use_steps && step && pacing.ns) /* closes the last step */
		mark_step(step, iters);

	pthread_mutex_lock(&qlock);
	qdone = 1;
	pthread_cond_signal(&qcond);
	pthread_mutex_unlock(&qlock);
	pthread_join(proxy, NULL);
	comm_fini(&pair_c);
	comm_fini(&world_c);
	/* ncclProfilerPluginUnload: the last communicator closes the plugin. */
	if (plugin_lib)
		dlclose(plugin_lib);
	printf("nccl_harness rank %d done\n", rank);
	return 0;
}
