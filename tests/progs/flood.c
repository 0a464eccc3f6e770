// SPDX-License-Identifier: MIT
/* Records as fast as it can: THREADS threads push and pop for SECONDS.
 * usage: flood threads seconds */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>

static double seconds;

static void *run(void *arg)
{
	(void)arg;
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9);
	static const char *names[] = {"forward", "backward", "optimizer", "layer"};
	for (unsigned long i = 0;; i++) {
		nvtxRangePushA(names[i & 3]);
		nvtxRangePop();
		if (!(i & 1023) && mono_ns() > end)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	seconds = argc > 2 ? atof(argv[2]) : 1.0;
	pthread_t th[64];
	for (int i = 0; i < n && i < 64; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (int i = 0; i < n && i < 64; i++)
		pthread_join(th[i], NULL);
	return 0;
}
