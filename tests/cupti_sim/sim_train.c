// SPDX-License-Identifier: MIT
/* Plays a CUDA training job through the CUPTI simulator, with the library
 * injected the way the CUDA driver injects it. usage:
 *   sim_train train STEPS   two GPUs, four streams, a loader thread, NVTX
 *                           steps: kernels (runtime, driver and graph
 *                           launches), copies of every kind incl. peer to
 *                           peer, memsets, syncs of every type, allocations,
 *                           noisy calls; ends with cudaDeviceReset
 *   sim_train small         a few calls of each kind (failure injection)
 *   sim_train burst N       N launches without a pause (buffer pressure)
 *   sim_train term N        N launches, synchronised; prints "ready" and waits
 *                           for a signal (what CUPTI holds must reach the file)
 *   sim_train window        launches outside and inside cudaProfilerStart/Stop
 *   sim_train fork          a child forked after CUDA started exits normally
 *   sim_train known N       N steps whose GPU timings are known by construction
 *                           (the analyses' tests, docs/ANALYSIS.md): on GPU 0,
 *                           two streams after an anchor kernel ending at T0:
 *                             A: gemm [T0, T0+100us], HtoD copy 1 MB [+100, +130]
 *                             B: memset 2 MB [T0, +50], NCCL kernel [+50, +150]
 *                           then GPU 0 idles 2 ms (A waits for a 2 ms kernel on
 *                           GPU 1) and A runs layernorm [+2150, +2190]; the main
 *                           thread waits in cudaStreamSynchronize inside the
 *                           NVTX range "host_wait" meanwhile
 *   sim_train events N      N NVTX "step" ranges on GPU 0 with two streams
 *                           ordered by CUDA events (two events, recorded
 *                           again every step): gemm on A, event 1 recorded
 *                           on A, B waits for it, softmax on B; layernorm on
 *                           A, event 2 recorded on A, the host waits for it
 *                           (cudaEventSynchronize)
 * The NVTX ranges it opens go to $CT_TEST_TRUTH (truth.h); what CUPTI
 * produced goes to $CUPTI_SIM_TRUTH (the simulator). SIM_STEPS=1: train
 * calls cuptrace_step() (found at run time) before each step. For
 * cuptrace diff's tests, train's gemm can be another instance of its
 * template (SIM_GEMM_TILE=N: gemm_tiled<N>) and take SIM_GEMM_EXTRA_NS
 * longer, and its NCCL kernel another algorithm (SIM_NCCL_ALGO=TREE). */
#include "../progs/truth.h"
#include "cupti_sim.h"

#include <cupti.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define K_GEMM "_Z10gemm_tiledILi128EEvPKfS1_Pfiii"
#define K_FILL                                                                                     \
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"                                    \
	"11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
#define K_NORM    "_Z9layernormPfS_i"
#define K_SOFTMAX "_Z7softmaxPKfPfi"
#define K_NCCL    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP11ncclDevCommmP8ncclWork"
#define K_GRAPH   "_Z12graph_kernelv"
#define K_TRITON  "triton_poi_fused_add_0"
#define K_WEIRD   "weird\"name\\kernel"

static const struct {
	const char *name;
	struct sim_dim grid, block;
	int regs, ss, ds;
	uint64_t dur;
} layer[] = {
    {K_GEMM, {128, 8, 1}, {256, 1, 1}, 128, 32768, 16384, 9000},
    {K_FILL, {1024, 1, 1}, {128, 1, 1}, 24, 0, 0, 2500},
    {K_NORM, {512, 1, 1}, {512, 1, 1}, 40, 4096, 0, 4000},
    {K_SOFTMAX, {256, 4, 1}, {128, 2, 1}, 32, 0, 8192, 3000},
};
#define NLAYER (sizeof layer / sizeof *layer)

static void range(const char *name, void (*fn)(void *), void *arg)
{
	uint64_t a = mono_ns();
	nvtxRangePushA(name);
	uint64_t b = mono_ns();
	fn(arg);
	uint64_t c = mono_ns();
	nvtxRangePop();
	uint64_t d = mono_ns();
	truth(
	    "{\"kind\":\"range\",\"name\":\"%s\",\"tid\":%d,\"start_min\":%llu,\"start_max\":%llu,"
	    "\"end_min\":%llu,\"end_max\":%llu}",
	    name, gettid_(), (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
	    (unsigned long long)d);
}

/* ---- the training job */
static uint32_t s_compute, s_copy, s_comm, s_peer;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	uint32_t ev[64];
	int head, tail, stop;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static void load(void *arg)
{
	(void)arg;
	sim_memcpy(s_copy, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
	           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4 << 20, 1, 20000);
	uint32_t ev = sim_event_record(s_copy);
	pthread_mutex_lock(&q.lock);
	q.ev[q.tail++ % 64] = ev;
	pthread_cond_signal(&q.cv);
	pthread_mutex_unlock(&q.lock);
}

static void *loader(void *arg)
{
	int steps = (int)(intptr_t)arg;
	nvtxNameOsThreadA((uint32_t)gettid_(), "loader");
	for (int i = 0; i < steps; i++) {
		pthread_mutex_lock(&q.lock);
		while (q.tail - q.head >= 4)
			pthread_cond_wait(&q.cv, &q.lock);
		pthread_mutex_unlock(&q.lock);
		range("load", load, NULL);
	}
	return NULL;
}

/* train's gemm and NCCL kernel names, and the gemm's extra time (the
 * SIM_* variables above) */
static char k_gemm[64] = K_GEMM, k_nccl[96] = K_NCCL;
static uint64_t gemm_extra;

static void variant(void)
{
	const char *tile = getenv("SIM_GEMM_TILE"), *algo = getenv("SIM_NCCL_ALGO");
	if (tile && strlen(tile) == 3) /* the mangled name's lengths stay right */
		snprintf(k_gemm, sizeof k_gemm, "_Z10gemm_tiledILi%sEEvPKfS1_Pfiii", tile);
	if (algo && strlen(algo) == 4)
		snprintf(k_nccl, sizeof k_nccl,
		         "_Z39ncclDevKernel_AllReduce_Sum_f32_%s_LLP11ncclDevCommmP8ncclWork", algo);
	if (getenv("SIM_GEMM_EXTRA_NS"))
		gemm_extra = strtoull(getenv("SIM_GEMM_EXTRA_NS"), NULL, 10);
}

static void layers(void *arg)
{
	int n = (int)(intptr_t)arg;
	for (int l = 0; l < n; l++) {
		unsigned k = (unsigned)l % NLAYER;
		/* durations vary a little, as on a real GPU */
		uint64_t dur = layer[k].dur + (uint64_t)((l * 37) % 11) * 40 + (k ? 0 : gemm_extra);
		sim_launch(s_compute, k ? layer[k].name : k_gemm, layer[k].grid, layer[k].block,
		           layer[k].regs, layer[k].ss, layer[k].ds, dur);
		sim_cpu(1500);
		if (l % 4 == 0)
			sim_get_device(); /* noisy: left out of the trace */
	}
}

static void allreduce(void *arg)
{
	(void)arg;
	sim_memcpy_peer(s_comm, 0, 1, 1 << 20, 10000);
	sim_launch(s_peer, k_nccl, (struct sim_dim){8, 1, 1}, (struct sim_dim){512, 1, 1}, 96, 0,
	           38000, 15000);
	sim_launch(s_comm, k_nccl, (struct sim_dim){8, 1, 1}, (struct sim_dim){512, 1, 1}, 96, 0,
	           38000, 15000);
}

static uint64_t scratch;

static void step(void *arg)
{
	int i = (int)(intptr_t)arg;
	pthread_mutex_lock(&q.lock);
	while (q.head == q.tail)
		pthread_cond_wait(&q.cv, &q.lock);
	uint32_t ev = q.ev[q.head++ % 64];
	pthread_cond_signal(&q.cv);
	pthread_mutex_unlock(&q.lock);
	sim_stream_wait_event(s_compute, ev);
	range("forward", layers, (void *)(intptr_t)12);
	range("backward", layers, (void *)(intptr_t)16);
	range("allreduce", allreduce, NULL);
	sim_memset(s_compute, 1 << 20, 0, 3000);
	sim_launch_driver(s_compute, K_TRITON, (struct sim_dim){80, 1, 1},
	                  (struct sim_dim){128, 1, 1}, 20, 2000);
	if (i % 10 == 0)
		sim_graph_launch(s_compute, 3, K_GRAPH, 4000);
	if (i % 5 == 0) {
		if (scratch)
			sim_free(scratch);
		scratch = sim_malloc(i % 10 ? 1 : 0, (uint64_t)(64 + i) << 20);
	}
	if (i == 3)
		sim_launch(s_compute, K_WEIRD, (struct sim_dim){1, 1, 1},
		           (struct sim_dim){32, 1, 1}, 8, 0, 0, 1000);
	sim_stream_sync(s_compute);
}

static void train(int steps)
{
	variant();
	sim_init(2);
	s_compute = sim_stream_create(0);
	s_copy = sim_stream_create(0);
	s_comm = sim_stream_create(0);
	s_peer = sim_stream_create(1);
	uint64_t weights = sim_malloc(0, 512 << 20);
	pthread_t th;
	pthread_create(&th, NULL, loader, (void *)(intptr_t)steps);
	void (*mark_step)(void) =
	    getenv("SIM_STEPS") ? (void (*)(void))dlsym(RTLD_DEFAULT, "cuptrace_step") : NULL;
	for (int i = 0; i < steps; i++) {
		if (mark_step)
			mark_step();
		char name[32];
		snprintf(name, sizeof name, "step %d", i);
		range(name, step, (void *)(intptr_t)i);
	}
	pthread_join(th, NULL);
	sim_memcpy(s_compute, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
	           CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4096, 0, 3000);
	sim_memcpy(s_compute, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
	           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 8 << 20, 1, 6000);
	uint32_t ev = sim_event_record(s_compute);
	sim_event_sync(ev);
	if (scratch)
		sim_free(scratch);
	sim_free(weights);
	sim_device_sync(0);
	sim_device_reset(0);
}

/* ---- the small cases */
static void small(void)
{
	nvtxRangePushA("small");
	sim_init(1);
	uint32_t s = sim_stream_create(0);
	uint64_t p = sim_malloc(0, 1 << 20);
	for (int i = 0; i < 3; i++)
		sim_launch(s, K_GEMM, layer[0].grid, layer[0].block, 64, 0, 0, 5000);
	sim_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
	           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 16, 0, 2000);
	sim_memset(s, 4096, 0, 1000);
	sim_stream_sync(s);
	sim_free(p);
	nvtxRangePop();
}

static void burst(int n)
{
	sim_init(1);
	uint32_t s = sim_stream_create(0);
	for (int i = 0; i < n; i++)
		sim_launch(s, layer[i % NLAYER].name, layer[0].grid, layer[0].block, 64, 0, 0, 200);
	sim_stream_sync(s);
}

static void window(void)
{
	sim_init(1);
	uint32_t s = sim_stream_create(0);
	for (int i = 0; i < 5; i++)
		sim_launch(s, K_FILL, layer[1].grid, layer[1].block, 24, 0, 0, 1000);
	sim_profiler_start();
	for (int i = 0; i < 7; i++)
		sim_launch(s, K_GEMM, layer[0].grid, layer[0].block, 64, 0, 0, 1000);
	sim_stream_sync(s);
	sim_profiler_stop();
	/* The tracer flushes when capture stops, without waiting for exit. */
	usleep(800000);
	truth("{\"kind\":\"after_stop\",\"pending\":%zu}", sim_pending());
	for (int i = 0; i < 4; i++)
		sim_launch(s, K_NORM, layer[2].grid, layer[2].block, 40, 0, 0, 1000);
	sim_stream_sync(s);
}

static void known_step(void *arg)
{
	uint32_t *st = arg; /* A, B, C (GPU 1) */
	struct sim_dim g = {64, 1, 1}, b = {128, 1, 1};
	sim_launch(st[0], "anchor", g, b, 32, 0, 0, 20000000); /* time to queue the rest */
	sim_stream_wait_event(st[1], sim_event_record(st[0]));
	sim_launch(st[0], K_GEMM, g, b, 32, 0, 0, 100000);
	sim_memcpy(st[0], CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
	           CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1000000, 1, 30000);
	sim_memset(st[1], 2000000, 0, 50000);
	sim_launch(st[1], K_NCCL, g, b, 32, 0, 0, 100000);
	sim_stream_wait_event(st[2], sim_event_record(st[1]));
	sim_launch(st[2], "delay", g, b, 32, 0, 0, 2000000);
	sim_stream_wait_event(st[0], sim_event_record(st[2]));
	sim_launch(st[0], K_NORM, g, b, 32, 0, 0, 40000);
	nvtxRangePushA("host_wait");
	sim_stream_sync(st[0]);
	nvtxRangePop();
}

static void known(int steps)
{
	sim_init(2);
	uint32_t st[3] = {sim_stream_create(0), sim_stream_create(0), sim_stream_create(1)};
	void (*mark)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "cuptrace_step");
	for (int i = 0; i < steps; i++) {
		if (mark)
			mark();
		range("iteration", known_step, st);
	}
	sim_device_sync(1);
}

/* ---- streams ordered by events */
static uint32_t ev_wait, ev_host;

static void events_step(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct sim_dim g = {64, 1, 1}, b = {256, 1, 1};
	sim_launch(s_compute, K_GEMM, g, b, 64, 0, 0, 30000);
	if (i == 0)
		ev_wait = sim_event_record(s_compute);
	else
		sim_event_rerecord(ev_wait, s_compute);
	sim_stream_wait_event(s_comm, ev_wait);
	sim_launch(s_comm, K_SOFTMAX, g, b, 32, 0, 0, 8000);
	sim_launch(s_compute, K_NORM, g, b, 40, 0, 0, 10000);
	if (i == 0)
		ev_host = sim_event_record(s_compute);
	else
		sim_event_rerecord(ev_host, s_compute);
	sim_event_sync(ev_host);
}

static void events(int steps)
{
	sim_init(1);
	s_compute = sim_stream_create(0);
	s_comm = sim_stream_create(0);
	for (int i = 0; i < steps; i++)
		range("step", events_step, (void *)(intptr_t)i);
	sim_device_sync(0);
}

static void forked(void)
{
	sim_init(1);
	uint32_t s = sim_stream_create(0);
	for (int i = 0; i < 4; i++)
		sim_launch(s, K_GEMM, layer[0].grid, layer[0].block, 64, 0, 0, 20000);
	pid_t pid = fork();
	if (pid == 0) {
		nvtxRangePushA("child");
		nvtxRangePop();
		exit(0); /* atexit handlers run here: CUPTI must not be called */
	}
	int st;
	waitpid(pid, &st, 0);
	for (int i = 0; i < 4; i++)
		sim_launch(s, K_GEMM, layer[0].grid, layer[0].block, 64, 0, 0, 20000);
	sim_stream_sync(s);
}

int main(int argc, char **argv)
{
	truth_open();
	const char *mode = argc > 1 ? argv[1] : "train";
	if (!strcmp(mode, "train"))
		train(argc > 2 ? atoi(argv[2]) : 50);
	else if (!strcmp(mode, "small"))
		small();
	else if (!strcmp(mode, "burst"))
		burst(argc > 2 ? atoi(argv[2]) : 10000);
	else if (!strcmp(mode, "term")) {
		burst(argc > 2 ? atoi(argv[2]) : 100);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	} else if (!strcmp(mode, "window"))
		window();
	else if (!strcmp(mode, "fork"))
		forked();
	else if (!strcmp(mode, "known"))
		known(argc > 2 ? atoi(argv[2]) : 3);
	else if (!strcmp(mode, "events"))
		events(argc > 2 ? atoi(argv[2]) : 4);
	else {
		fprintf(stderr, "usage: sim_train train|small|burst|term|window|fork|known|events [N]\n");
		return 2;
	}
	printf("sim_train %s done\n", mode);
	return 0;
}
