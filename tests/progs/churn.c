// SPDX-License-Identifier: MIT
/* Threads that come and go, one alive at a time (thread pools, DataLoader
 * workers' threads, NCCL's helpers): every event of every thread must stay,
 * within the default buffer.
 * usage: churn THREADS RANGES   prints the number of ranges recorded */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>

static int ranges;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ranges; i++) {
		nvtxRangePushA("churn");
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 2000;
	ranges = argc > 2 ? atoi(argv[2]) : 100;
	for (long i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
		pthread_join(t, NULL);
	}
	printf("%ld\n", threads * ranges);
	return 0;
}
