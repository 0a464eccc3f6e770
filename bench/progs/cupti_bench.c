// SPDX-License-Identifier: MIT
/* GPU records from CUPTI buffers into the file: how fast, and how small.
 *
 * A training loop, as CUPTI would report it: per step (an NVTX range) one
 * 4 MB input copy on a copy stream joined to the compute stream by an
 * event, 40 kernel launches cycling over 8 kernels (fixed names and
 * shapes, durations with ~3 % jitter), a memset, a small copy back and a
 * stream sync; every call with its API record, in the order CUPTI writes
 * them (a GPU record at launch, the API record at the call's exit). CPU
 * and GPU times follow a simulated clock with ns-resolution jitter (calls
 * 2-5 us, gaps 0.5-2.5 us, GPU work starting after its launch latency).
 *
 * Records are built with the CUDA 13 struct types into 256 KiB buffers by
 * an "application" thread (which also records the NVTX step ranges) and
 * handed to a "CUPTI" thread that runs the library's translation
 * (ct_cupti_translate, walking the buffer with the real libcupti's
 * cuptiActivityGetNextRecord), while the library's own writer thread
 * encodes, compresses and writes the file. Printed as JSON: records,
 * thread CPU time per record for the translation and for the writer,
 * file bytes. usage: cupti_bench OUT.ctr RECORDS [group=1] */
#include "capture.h"
#include "clock.h"
#include "cupti_int.h"
#include "thread.h"
#include "trace.h"
#include "writer.h"

#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_nvtx_push_ascii(const char *msg);
int ct_nvtx_pop(void);

#define BUF    (256u << 10)
#define NBUF   16
#define LAYERS 40

static uint8_t *bufs[NBUF];
static size_t used[NBUF];
static sem_t full, empty;
static int head, tail;
static uint64_t limit, made;
static uint64_t translate_ns, translated;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng % n;
}

/* ---- the application side: records into buffers */
static uint8_t *cur;
static size_t cur_used;

static void put(const void *r, size_t n)
{
	if (!cur || cur_used + n > BUF) {
		if (cur) {
			used[tail] = cur_used;
			tail = (tail + 1) % NBUF;
			sem_post(&full);
		}
		sem_wait(&empty);
		cur = bufs[tail];
		cur_used = 0;
	}
	memcpy(cur + cur_used, r, n);
	cur_used += n;
	made++;
}

static uint64_t t_cpu, t_compute, t_copy;
static uint32_t corr;

/* GPU timestamps: the GPU's clock ticks every 32 ns (NVIDIA: "an internal
 * nanosecond clock that has a precision of approximately 32ns", 31.25 MHz
 * on GH100 and later, and on older GPUs while a tool runs); CUPTI maps it
 * linearly onto the CPU clock, so GPU times are 32 ns steps scaled by a
 * rate close to 1 and shifted. GPU work is scheduled on the GPU's clock. */
static uint64_t gpu_base;
static uint64_t gpu_time(uint64_t gpu_ticks_ns)
{
	return gpu_base + (uint64_t)((double)(gpu_ticks_ns & ~31ull) * 1.0000013);
}

static void api(uint32_t cbid, uint64_t dur, uint64_t *start)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = *start;
	a.end = *start + dur;
	a.processId = 1000;
	a.threadId = 1000;
	a.correlationId = corr;
	a.returnValue = 0;
	put(&a, sizeof a);
	t_cpu = a.end + 500 + rnd(2048);
}

static const struct {
	const char *name;
	int grid, block, regs, smem;
	uint64_t dur;
} shapes[8] = {
    {"_ZN7cutlass7Kernel2I51cutlass_80_tensorop_s1688gemm_256x128_16x3_nt_align4EEvNT_6ParamsE",
     264, 256, 232, 73728, 48000},
    {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
     "T1_",
     1024, 128, 16, 0, 3000},
    {"_ZN2at6native12_GLOBAL__N_120layer_norm_fwd_kernelIfEEviPKT_S4_S4_PS2_S5_S5_", 2048, 256, 40,
     2048, 9000},
    {"_Z28softmax_warp_forward_kernelIfLi9EEvPfPKfiii", 512, 128, 38, 0, 7000},
    {"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_"
     "13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_"
     "EUliE_EEviT1_",
     4096, 128, 20, 0, 5000},
    {"_Z17flash_fwd_kernelIfEvPKfS1_S1_Pfiii", 132, 128, 255, 98304, 61000},
    {"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4EEEEEvT1_", 256,
     512, 32, 16, 4000},
    {"_Z11gelu_kernelPKfPfi", 2048, 256, 18, 0, 6000},
};

static void kernel(int s, uint32_t stream)
{
	uint64_t start = t_cpu;
	corr++;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	uint64_t ready = start - gpu_base + 4000 + rnd(1024), gap = 1000 + rnd(256);
	uint64_t g0 = t_compute + gap > ready ? t_compute + gap : ready;
	uint64_t g1 = g0 + shapes[s].dur + rnd(shapes[s].dur / 32 + 1);
	t_compute = g1;
	k.start = gpu_time(g0);
	k.end = gpu_time(g1);
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.gridX = shapes[s].grid, k.gridY = 1, k.gridZ = 1;
	k.blockX = shapes[s].block, k.blockY = 1, k.blockZ = 1;
	k.registersPerThread = (uint16_t)shapes[s].regs;
	k.dynamicSharedMemory = shapes[s].smem;
	k.correlationId = corr;
	k.name = shapes[s].name;
	put(&k, sizeof k);
	api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2500 + rnd(1024), &start);
}

static void copy(uint32_t stream, int kind, uint64_t bytes, uint64_t *gpu_t)
{
	uint64_t start = t_cpu;
	corr++;
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = (uint8_t)kind;
	m.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
	                                                    : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
	                                                    : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m.bytes = bytes;
	uint64_t ready = start - gpu_base + 4000 + rnd(1024);
	uint64_t g0 = *gpu_t + 1000 > ready ? *gpu_t + 1000 + rnd(256) : ready;
	uint64_t g1 = g0 + bytes / 20 + rnd(512);
	*gpu_t = g1;
	m.start = gpu_time(g0);
	m.end = gpu_time(g1);
	m.deviceId = 0, m.contextId = 1, m.streamId = stream, m.correlationId = corr;
	m.copyCount = 1;
	put(&m, sizeof m);
	api(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 3000 + rnd(1024), &start);
}

static void sync_rec(int type, uint32_t stream, uint32_t event, uint64_t until)
{
	uint64_t start = t_cpu;
	corr++;
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof y);
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = (CUpti_ActivitySynchronizationType)type;
	y.start = start;
	until = until ? gpu_time(until) : 0;
	y.end = (until > start ? until : start) + 300 + rnd(512);
	y.correlationId = corr, y.contextId = 1, y.streamId = stream, y.cudaEventId = event;
	put(&y, sizeof y);
	uint32_t cbid = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
	                    ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020
	                    : CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020;
	api(cbid, y.end - start + 200, &start);
}

static void step(void)
{
	ct_nvtx_push_ascii("step");
	copy(14, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4 << 20, &t_copy);
	uint64_t start = t_cpu;
	corr++;
	api(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 1500 + rnd(512), &start);
	sync_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 13, 3, 0);
	if (t_compute < t_copy)
		t_compute = t_copy;
	for (int l = 0; l < LAYERS; l++)
		kernel(l % 8, 13);
	start = t_cpu;
	corr++;
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 1 << 20;
	uint64_t g0 = t_compute + 1000 + rnd(256), g1 = g0 + 2000 + rnd(128);
	t_compute = g1;
	s.start = gpu_time(g0);
	s.end = gpu_time(g1);
	s.deviceId = 0, s.contextId = 1, s.streamId = 13, s.correlationId = corr;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	put(&s, sizeof s);
	api(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 2500 + rnd(512), &start);
	copy(13, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, &t_compute);
	sync_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 13, 0xffffffffu,
	         t_compute);
	ct_nvtx_pop();
}

/* Paced to about `rate` records per second of real time: real CUPTI
 * delivers far less than the tracer can take, and the writer drains the
 * rings every 50 ms. */
static double rate = 2e6;

static void *app(void *arg)
{
	(void)arg;
	t_cpu = gpu_base = ct_now();
	t_compute = t_copy = 0;
	uint64_t t0 = ct_now();
	while (made < limit) {
		step();
		while ((double)made > (double)(ct_now() - t0) * rate / 1e9)
			usleep(1000);
	}
	if (cur) {
		used[tail] = cur_used;
		tail = (tail + 1) % NBUF;
		sem_post(&full);
	}
	used[tail] = 0; /* end marker */
	sem_post(&full);
	return NULL;
}

/* ---- the CUPTI side: translation of completed buffers */
static void *cupti(void *arg)
{
	(void)arg;
	struct ct_thread *t = ct_self();
	for (;;) {
		sem_wait(&full);
		size_t n = used[head];
		if (!n)
			break;
		CUptiResult err;
		uint64_t t0 = cpu_ns();
		translated += ct_cupti_translate(t, bufs[head], n, &err);
		translate_ns += cpu_ns() - t0;
		if (err != CUPTI_SUCCESS)
			abort();
		head = (head + 1) % NBUF;
		sem_post(&empty);
	}
	return NULL;
}

/* CPU time of the library's writer thread, from /proc (it is not ours). */
static uint64_t writer_cpu_ns(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	uint64_t ns = 0;
	while (d && (e = readdir(d))) {
		char p[300], comm[32] = "";
		snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f) && !strncmp(comm, "cuptrace-write", 14)) {
			snprintf(p, sizeof p, "/proc/self/task/%s/schedstat", e->d_name);
			FILE *g = fopen(p, "r");
			unsigned long long v = 0;
			if (g && fscanf(g, "%llu", &v) == 1)
				ns = v;
			if (g)
				fclose(g);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return ns;
}

static const char *env(const char *name)
{
	return getenv(name);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cupti_bench OUT.ctr RECORDS [group=1]\n");
		return 2;
	}
	limit = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		ct_cupti_group_streams = atoi(argv[3]);
	unlink(argv[1]);
	ct_config_defaults(&ct.cfg);
	snprintf(ct.cfg.output, sizeof ct.cfg.output, "%s", argv[1]);
	ct.cfg.buffer_mb = 2048;
	ct.active = 1;
	ct.pid = (int)getpid();
	ct_rank_detect(&ct.rank, env);
	gethostname(ct.host, sizeof ct.host - 1);
	ct_clock_anchor(&ct.rt_anchor, &ct.mono_anchor);
	if (ct_pool_init((size_t)ct.cfg.buffer_mb << 20))
		return 1;
	ct_capture_init();
	ct_cu.next_record = cuptiActivityGetNextRecord;
	ct_cu.callback_name = cuptiGetCallbackName;
	ct_cu.result_string = cuptiGetResultString;
	for (int i = 0; i < NBUF; i++)
		bufs[i] = aligned_alloc(8, BUF);
	sem_init(&full, 0, 0);
	sem_init(&empty, 0, NBUF);
	pthread_t a, c;
	uint64_t w0 = 0;
	ct_self(); /* starts the writer */
	w0 = writer_cpu_ns();
	uint64_t t0 = ct_now();
	pthread_create(&c, NULL, cupti, NULL);
	pthread_create(&a, NULL, app, NULL);
	pthread_join(a, NULL);
	pthread_join(c, NULL);
	double wall = (double)(ct_now() - t0) / 1e9;
	/* let the writer catch up before reading its CPU time (it exits in
	 * ct_writer_finish, which then only writes the last block) */
	uint64_t w1 = writer_cpu_ns(), prev;
	do {
		prev = w1;
		usleep(200000);
		w1 = writer_cpu_ns();
	} while (w1 - prev > 2000000);
	ct_writer_finish(0);
	struct stat st;
	if (stat(argv[1], &st))
		return 1;
	printf(
	    "{\"records\": %llu, \"translate_ns_per_record\": %.2f, \"translate_records_per_s\": "
	    "%.0f, "
	    "\"writer_ns_per_record\": %.2f, \"bytes\": %lld, \"wall_s\": %.3f, \"group\": %d}\n",
	    (unsigned long long)translated, (double)translate_ns / (double)translated,
	    (double)translated * 1e9 / (double)translate_ns, (double)(w1 - w0) / (double)translated,
	    (long long)st.st_size, wall, ct_cupti_group_streams);
	return 0;
}
