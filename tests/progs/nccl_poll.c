// SPDX-License-Identifier: MIT
/* An NCCL program against the fake libnccl.so.2 of tests/progs/nccl_fake
 * (tests/integration/library/test_nccl_error.py), with NVTX-like ranges
 * (cuptrace_range_push) for a flight window to hold. MODE:
 *   watch  an AllReduce and a group end, then polls ncclCommGetAsyncError
 *          every millisecond, as PyTorch's NCCL watchdog does, until it
 *          says an error; then ncclCommAbort; return 0
 *   coll   100 ms of ranges, then an AllReduce on a stream the fake
 *          refuses (ncclInvalidArgument); return 0
 *   abort  100 ms of ranges, then ncclCommAbort; return 0
 *   idle FILE  ranges until FILE exists (at most 10 s): another process
 *          of the job; prints "ready" once it recorded its first range
 * It prints what each NCCL call returned and how many calls reached the
 * fake, one line each. Built again as libnccl_poll.so (NCCL_POLL_PLUGIN:
 * main is nccl_poll_main), which nccl_dlopen loads with dlopen(RTLD_LOCAL),
 * as Python loads PyTorch: NCCL is then out of the global scope. */
#include <cuptrace/cuptrace.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ncclCommGetAsyncError(void *comm, int *err);
int ncclCommAbort(void *comm);
int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, void *comm,
                  void *stream);
int ncclGroupEnd(void);
const char *ncclGetErrorString(int r);
void nccl_fake_calls(int out[4]);

#define FAKE_STREAM ((void *)0x5eed)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tick(const char *name)
{
	cuptrace_range_push(name);
	usleep(1000);
	cuptrace_range_pop();
}

static void all_reduce(void *comm, void *stream)
{
	long send = 7, recv = 0;
	int rc = ncclAllReduce(&send, &recv, 3, 7, 2, comm, stream);
	printf("allreduce rc %d recv %ld\n", rc, recv);
}

static int watch(void *comm)
{
	all_reduce(comm, FAKE_STREAM);
	printf("groupend rc %d\n", ncclGroupEnd());
	int err = 0, rc = 0, polls = 0;
	while (!err && polls < 100000) {
		tick("poll");
		rc = ncclCommGetAsyncError(comm, &err);
		polls++;
	}
	printf("async rc %d err %d after %d polls: %s\n", rc, err, polls, ncclGetErrorString(err));
	printf("abort rc %d\n", ncclCommAbort(comm));
	return 0;
}

#ifdef NCCL_POLL_PLUGIN
#define main nccl_poll_main
int nccl_poll_main(int argc, char **argv);
#endif

int main(int argc, char **argv)
{
	static int comm_obj;
	void *comm = &comm_obj;
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "idle") && argc > 2) {
		tick("start");
		printf("ready\n");
		fflush(stdout);
		double end = now_ms() + 10000;
		while (access(argv[2], F_OK) && now_ms() < end)
			tick("idle");
		printf("%s\n", access(argv[2], F_OK) ? "timeout" : "saw it");
		return 0;
	}
	if (!strcmp(mode, "watch"))
		watch(comm);
	else if (!strcmp(mode, "coll")) {
		for (double end = now_ms() + 100; now_ms() < end;)
			tick("before");
		all_reduce(comm, NULL);
	} else if (!strcmp(mode, "abort")) {
		for (double end = now_ms() + 100; now_ms() < end;)
			tick("before");
		printf("abort rc %d\n", ncclCommAbort(comm));
	} else {
		fprintf(stderr, "usage: nccl_poll watch|coll|abort|idle FILE\n");
		return 2;
	}
	int n[4];
	nccl_fake_calls(n);
	printf("fake calls: async %d abort %d allreduce %d groupend %d\n", n[0], n[1], n[2], n[3]);
	return 0;
}
