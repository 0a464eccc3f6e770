// SPDX-License-Identifier: MIT
/* Memory bound: threads that record faster than any writer can write.
 *   bench_flood THREADS SECONDS
 * Each thread pushes and pops ranges with long messages (100-300 bytes,
 * 32 distinct ones, as a framework that puts shapes or module paths into
 * its range names would) in a tight loop. The driver runs this traced with
 * a small CUPTRACE_BUFFER_MB and untraced, and compares the peak RSS it
 * gets from wait4(). Prints attempted events= and seconds=. */
#include "bench_common.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <string.h>

#define NMSG 32
#define MAX_THREADS 16

static char msgs[NMSG][320];
static double secs;
static long counts[MAX_THREADS];

static void *worker(void *arg)
{
	long id = (long)arg, n = 0;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		for (int i = 0; i < 256; i++) {
			nvtxRangePushA(msgs[(n + i) % NMSG]);
			nvtxRangePop();
		}
		n += 256;
	}
	counts[id] = 2 * n;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = (int)arg_long(argc, argv, 1, 4);
	secs = (double)arg_long(argc, argv, 2, 3);
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	uint64_t seed = 42;
	for (int m = 0; m < NMSG; m++) {
		int len = snprintf(msgs[m], sizeof msgs[m],
				   "model.encoder.layers.%d.self_attention.linear_qkv "
				   "input=[8, 2048, 4096] dtype=bf16 ",
				   m);
		int want = 100 + (int)(rnd(&seed) % 200);
		while (len < want && len < (int)sizeof msgs[m] - 1)
			msgs[m][len++] = (char)('a' + rnd(&seed) % 26);
		msgs[m][len] = 0;
	}
	pthread_t th[MAX_THREADS];
	uint64_t t0 = now_ns();
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	long total = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		total += counts[i];
	}
	printf("events=%ld\nseconds=%.3f\n", total, (double)(now_ns() - t0) / 1e9);
	return 0;
}
