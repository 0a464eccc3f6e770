// SPDX-License-Identifier: MIT
/* What the library's NCCL wrappers (libtrace/sources/nccl_err.c) add to an
 * NCCL call, run by bench/figures/nccl_err.py: linked against the tests'
 * fake libnccl.so.2 (tests/progs/nccl_fake: each call a few instructions),
 * so that preloading libcuptrace.so puts the wrappers in front of the same
 * calls. For ncclGroupEnd, ncclAllReduce and ncclCommGetAsyncError (no
 * error: NCCL_FAKE_FAIL_AFTER is set huge): ns of thread CPU time per call,
 * the best of 200 batches of 1000 calls. Prints name_ns=... lines. */
#include "bench_common.h"

int ncclCommGetAsyncError(void *comm, int *err);
int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, void *comm,
                  void *stream);
int ncclGroupEnd(void);

#define BATCH       1000
#define BATCHES     200
#define FAKE_STREAM ((void *)0x5eed)

static int comm_obj;

static int call(int which)
{
	long send = 1, recv;
	int err = 0;
	switch (which) {
	case 0:
		return ncclGroupEnd();
	case 1:
		return ncclAllReduce(&send, &recv, 1, 7, 0, &comm_obj, FAKE_STREAM);
	default:
		return ncclCommGetAsyncError(&comm_obj, &err) | err;
	}
}

int main(void)
{
	static const char *const names[] = {"groupend", "allreduce", "async"};
	for (int w = 0; w < 3; w++) {
		double best = 1e30;
		int bad = 0;
		for (int b = 0; b < BATCHES; b++) {
			uint64_t t0 = cpu_ns();
			for (int i = 0; i < BATCH; i++)
				bad |= call(w);
			double ns = (double)(cpu_ns() - t0) / BATCH;
			if (ns < best)
				best = ns;
		}
		if (bad) {
			fprintf(stderr, "bench_nccl_err: %s said an error\n", names[w]);
			return 1;
		}
		printf("%s_ns=%.2f\n", names[w], best);
	}
	return 0;
}
