// SPDX-License-Identifier: MIT
/* Cost of each NCCL profiler callback on the thread that calls it (the
 * target: at most 100 ns). The library is loaded as NCCL loads it
 * (dlopen, ncclProfiler_v5) with tracing on and its writer draining, and
 * each callback is called in a loop with the descriptors NCCL 2.28 passes.
 * Figures are the best of several runs, minus nothing: the loop's own
 * cost (an empty call through a pointer) is printed for comparison.
 *
 * usage: bench_nccl LIBRARY [--check]   (--check: exit 1 above 100 ns) */
#include "nccl_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N        20000
#define RUNS     25
#define LIMIT_NS 100.0

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const struct np_v5 *P;
static void *ctx;
static void *handles[N];

static int empty_start(void *c, void **h, struct np_descr *d)
{
	(void)c, (void)d;
	*h = NULL;
	return 0;
}
static int (*volatile empty)(void *, void **, struct np_descr *) = empty_start;

enum {
	B_EMPTY,
	B_CLOCK,
	B_COLL_API,
	B_API_STOP,
	B_LAUNCH,
	B_GROUP,
	B_COLL,
	B_P2P,
	B_KCH,
	B_KCH_STATE,
	B_TASK_STOP,
	B_N
};
static const char *const names[B_N] = {
    "(empty call, for scale)", "(clock_gettime, for scale)",
    "startEvent CollApi",      "stopEvent CollApi",
    "startEvent KernelLaunch", "startEvent Group",
    "startEvent Coll",         "startEvent P2p",
    "startEvent KernelCh",     "recordEventState KernelChStop",
    "stopEvent Coll",
};

static double run(int which)
{
	struct np_descr d;
	memset(&d, 0, sizeof d);
	union np_state_args a;
	memset(&a, 0, sizeof a);
	switch (which) {
	case B_COLL_API:
	case B_API_STOP:
		d.type = NP_COLL_API;
		d.coll_api.func = "AllReduce";
		d.coll_api.datatype = "ncclFloat32";
		d.coll_api.count = 1 << 20;
		d.coll_api.stream = (void *)0x1000;
		break;
	case B_LAUNCH:
		d.type = NP_KERNEL_LAUNCH;
		d.launch.stream = (void *)0x1000;
		break;
	case B_GROUP:
		d.type = NP_GROUP;
		break;
	case B_COLL:
	case B_TASK_STOP:
		d.type = NP_COLL;
		d.coll.func = "AllReduce";
		d.coll.datatype = "ncclFloat32";
		d.coll.algo = "RING";
		d.coll.proto = "SIMPLE";
		d.coll.count = 1 << 20;
		d.coll.nchannels = 16;
		break;
	case B_P2P:
		d.type = NP_P2P;
		d.p2p.func = "Send";
		d.p2p.datatype = "ncclFloat32";
		d.p2p.count = 1 << 20;
		break;
	case B_KCH:
	case B_KCH_STATE:
		d.type = NP_KERNEL_CH;
		d.kernel_ch.timer = 1;
		break;
	}
	/* Set-up outside the timed loop: the handles to stop or update. */
	if (which == B_API_STOP || which == B_KCH_STATE || which == B_TASK_STOP)
		for (int i = 0; i < N; i++)
			P->start(ctx, &handles[i], &d);
	uint64_t t0 = now();
	for (int i = 0; i < N; i++) {
		switch (which) {
		case B_EMPTY:
			empty(ctx, &handles[i], &d);
			break;
		case B_CLOCK:
			handles[i] = (void *)(uintptr_t)now();
			break;
		case B_API_STOP:
		case B_TASK_STOP:
			P->stop(handles[i]);
			break;
		case B_KCH_STATE:
			a.kernel_ch.timer = (uint64_t)i;
			P->record(handles[i], NPS_KERNEL_CH_STOP, &a);
			break;
		default:
			P->start(ctx, &handles[i], &d);
		}
	}
	uint64_t t1 = now();
	if (which == B_LAUNCH) /* balance the launch queue */
		for (int i = 0; i < N; i++) {
			struct np_descr g = {.type = NP_GROUP};
			void *h;
			P->start(ctx, &h, &g);
		}
	return (double)(t1 - t0) / N;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_nccl LIBRARY [--check]\n");
		return 2;
	}
	int check = argc > 2 && !strcmp(argv[2], "--check");
	setenv("CUPTRACE_TRACE", "nccl", 1);
	setenv("CUPTRACE_BUFFER_MB", "64", 0);
	if (!getenv("CUPTRACE_OUTPUT"))
		setenv("CUPTRACE_OUTPUT", "/tmp/cuptrace-bench-nccl/%p.ctr", 1);
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib || !(P = dlsym(lib, "ncclProfiler_v5"))) {
		fprintf(stderr, "bench_nccl: %s\n", dlerror());
		return 1;
	}
	int mask = 0;
	P->init(&ctx, 0x1234, &mask, "bench", 1, 8, 0, NULL);
	if (!mask) {
		fprintf(stderr, "bench_nccl: the plugin is not tracing (check CUPTRACE_*)\n");
		return 1;
	}
	/* Warm-up: touch every page of the ring memory once, giving the
	 * writer time to drain, so that no run pays first-touch faults. */
	for (int i = 0; i < 30; i++) {
		run(B_COLL);
		usleep(20000);
	}
	printf("NCCL profiler callbacks, ns per call on the calling thread "
	       "(best of %d runs of %d calls)\n\n",
	       RUNS, N);
	int over = 0;
	for (int b = 0; b < B_N; b++) {
		double best = 1e18;
		for (int r = 0; r < RUNS; r++) {
			double v = run(b);
			if (v < best)
				best = v;
			usleep(2000); /* the writer drains between runs: no drops */
		}
		int timed = b >= B_COLL_API;
		printf("  %-32s %7.1f%s\n", names[b], best,
		       timed ? best <= LIMIT_NS ? "   ok (<= 100)" : "   OVER 100" : "");
		over |= timed && best > LIMIT_NS;
	}
	P->finalize(ctx);
	return check && over;
}
