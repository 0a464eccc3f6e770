// SPDX-License-Identifier: MIT
/* Cost of the torch source's calls (include/cuptrace/torch_abi.h) on the
 * thread that makes them, as the Python package's observer makes them
 * around each PyTorch operator: cuptrace_torch_enter(id), two
 * cuptrace_torch_now(), cuptrace_torch_op() and cuptrace_torch_exit().
 * Run with the library preloaded and the torch source on (bench/figures/
 * torch.py); the exports are found with dlsym(RTLD_DEFAULT) as the
 * observer finds them. Each case runs N calls (ops of 8 names in turn),
 * RUNS times with a pause between runs for the writer to drain; a case's
 * figure is the best run's time per call. An empty call through a pointer
 * and one clock_gettime are measured for scale.
 *
 * usage: bench_torch   (prints "  NAME   NS" lines, then ops=COUNT)
 *        bench_torch rate OPS_PER_S SECONDS
 * The second form: whole ops (enter + 2 now + op + exit, no shapes) paced
 * to OPS_PER_S on one thread (busy-waiting on the clock between ops) for
 * SECONDS; prints ops_s= (the rate achieved) and ops=. */
#include "cuptrace/torch_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N    20000
#define RUNS 15

static struct {
	unsigned (*config)(void);
	uint64_t (*now)(void);
	void (*enter)(uint64_t);
	void (*exit)(void);
	void (*op)(const struct cuptrace_torch_op *);
	void (*mem)(uint64_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t);
} lib;

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void empty_fn(uint64_t id)
{
	(void)id;
}
static void (*volatile empty)(uint64_t) = empty_fn;
static volatile uint64_t sink;

static const char *const names[8] = {
    "aten::linear", "aten::addmm", "aten::relu",  "aten::t",
    "aten::mm",     "aten::add_",  "aten::empty", "aten::threshold_backward",
};

enum {
	B_EMPTY,
	B_CLOCK,
	B_NOW,
	B_ENTER_EXIT,
	B_OP,
	B_OP_SHAPES,
	B_MEM,
	B_FULL,
	B_FULL_SHAPES,
	B_N
};
static const char *const labels[B_N] = {
    "(empty call, for scale)",
    "(clock_gettime, for scale)",
    "cuptrace_torch_now",
    "cuptrace_torch_enter + exit",
    "cuptrace_torch_op",
    "cuptrace_torch_op with shapes",
    "cuptrace_torch_mem",
    "an op: enter + 2 now + op + exit",
    "an op with shapes: enter + 2 now + op + exit",
};

static unsigned long ops_made;

static double run(int which)
{
	struct cuptrace_torch_op r;
	memset(&r, 0, sizeof r);
	r.rf_tid = 1;
	int shapes = which == B_OP_SHAPES || which == B_FULL_SHAPES;
	if (shapes) {
		r.dims = "32;8,16;16,32;;", r.dims_len = (uint32_t)strlen(r.dims);
		r.types = "float;float;float;Scalar;Scalar",
		r.types_len = (uint32_t)strlen(r.types);
	}
	uint32_t len[8];
	for (int k = 0; k < 8; k++)
		len[k] = (uint32_t)strlen(names[k]);
	static uint64_t id = 1;
	uint64_t t0 = mono();
	for (int i = 0; i < N; i++) {
		switch (which) {
		case B_EMPTY:
			empty((uint64_t)i);
			break;
		case B_CLOCK:
			sink = mono();
			break;
		case B_NOW:
			sink = lib.now();
			break;
		case B_ENTER_EXIT:
			lib.enter(id++);
			lib.exit();
			break;
		case B_OP:
		case B_OP_SHAPES:
			r.id = id++;
			r.start = r.end = t0;
			r.name = names[i & 7], r.name_len = len[i & 7];
			lib.op(&r);
			break;
		case B_MEM:
			lib.mem(0x7f0000000000ull + ((uint64_t)i << 12), i & 1 ? -4096 : 4096, 0,
			        (uint64_t)i << 12, 2u << 20, id);
			break;
		case B_FULL:
		case B_FULL_SHAPES:
			r.id = id++;
			lib.enter(r.id);
			r.start = lib.now();
			r.name = names[i & 7], r.name_len = len[i & 7];
			r.end = lib.now();
			lib.exit();
			lib.op(&r);
			break;
		}
	}
	double ns = (double)(mono() - t0) / N;
	if (which == B_OP || which == B_OP_SHAPES || which == B_FULL || which == B_FULL_SHAPES)
		ops_made += N;
	return ns;
}

/* Ops at the given rate for ns nanoseconds, as the observer records them. */
static int paced(double ops_s, double seconds)
{
	struct cuptrace_torch_op r;
	memset(&r, 0, sizeof r);
	r.rf_tid = 1;
	uint32_t len[8];
	for (int k = 0; k < 8; k++)
		len[k] = (uint32_t)strlen(names[k]);
	double period = 1e9 / ops_s;
	uint64_t ns = (uint64_t)(seconds * 1e9), id = 1, t0 = mono(), t = t0;
	unsigned long i = 0;
	for (;;) {
		t = mono();
		if (t - t0 >= ns)
			break;
		if ((double)(t - t0) < (double)i * period)
			continue;
		r.id = id++;
		lib.enter(r.id);
		r.start = lib.now();
		r.name = names[i & 7], r.name_len = len[i & 7];
		r.end = lib.now();
		lib.exit();
		lib.op(&r);
		i++;
	}
	printf("ops_s=%.0f\nops=%lu\n", (double)i * 1e9 / (double)(t - t0), i);
	return 0;
}

int main(int argc, char **argv)
{
	*(void **)&lib.config = dlsym(RTLD_DEFAULT, "cuptrace_torch_config");
	*(void **)&lib.now = dlsym(RTLD_DEFAULT, "cuptrace_torch_now");
	*(void **)&lib.enter = dlsym(RTLD_DEFAULT, "cuptrace_torch_enter");
	*(void **)&lib.exit = dlsym(RTLD_DEFAULT, "cuptrace_torch_exit");
	*(void **)&lib.op = dlsym(RTLD_DEFAULT, "cuptrace_torch_op");
	*(void **)&lib.mem = dlsym(RTLD_DEFAULT, "cuptrace_torch_mem");
	if (!lib.config || !lib.now || !lib.enter || !lib.exit || !lib.op || !lib.mem) {
		fprintf(stderr, "bench_torch: the library's torch calls are not in the process "
		                "(LD_PRELOAD)\n");
		return 2;
	}
	unsigned cfg = lib.config();
	if (argc == 4 && !strcmp(argv[1], "rate") && (cfg & CUPTRACE_TORCH_ON))
		return paced(atof(argv[2]), atof(argv[3]));
	if (!(cfg & CUPTRACE_TORCH_ON) || !(cfg & CUPTRACE_TORCH_MEMORY)) {
		fprintf(stderr, "bench_torch: the torch source is off (CUPTRACE_TRACE=torch, "
		                "CUPTRACE_TORCH=memory)\n");
		return 2;
	}
	for (int b = 0; b < B_N; b++) {
		double best = 1e18;
		for (int k = 0; k < RUNS; k++) {
			double ns = run(b);
			if (ns < best)
				best = ns;
			usleep(20000); /* the writer drains: no run meets a full buffer */
		}
		printf("  %-46s %8.1f\n", labels[b], best);
	}
	printf("ops=%lu\n", ops_made);
	return 0;
}
