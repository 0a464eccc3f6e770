// SPDX-License-Identifier: MIT
/* Rotation (cuptrace_rotate) while threads record, linked against
 * libcuptrace.so.
 * usage: rotate_threads THREADS ROTATIONS
 * Each thread, named "rec-I", marks "tI N" for N = 0, 1, 2, ... (50 at a
 * time, then 1 ms of sleep, so that no ring overflows even under ASan)
 * until the main thread has rotated ROTATIONS times and the thread has
 * marked at least 2000 times; the main thread rotates every 20 ms.
 * Prints "rotated PATH" per rotation (or "rotated none"), then "tI COUNT"
 * per thread: the trace files together must hold each mark exactly once. */
#include <cuptrace/cuptrace.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic int rotations_done;
static int rotations;

struct job {
	int id;
	long count;
};

static void *recorder(void *arg)
{
	struct job *j = arg;
	char name[32];
	snprintf(name, sizeof name, "rec-%d", j->id);
	pthread_setname_np(pthread_self(), name);
	for (long n = 0;; n++) {
		/* Read before each mark: a thread stops only after marking
		 * past the last rotation. */
		int done = atomic_load(&rotations_done) >= rotations;
		if (done && n >= 2000) {
			j->count = n;
			break;
		}
		snprintf(name, sizeof name, "t%d %ld", j->id, n);
		cuptrace_mark(name);
		if (n % 50 == 49)
			usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	rotations = argc > 2 ? atoi(argv[2]) : 4;
	if (nthreads < 1 || nthreads > 64 || rotations < 0)
		return 2;
	pthread_t th[64];
	struct job jobs[64];
	for (int i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){i, 0};
		pthread_create(&th[i], NULL, recorder, &jobs[i]);
	}
	for (int r = 0; r < rotations; r++) {
		usleep(20000);
		const char *path = cuptrace_rotate();
		printf("rotated %s\n", path ? path : "none");
		atomic_fetch_add(&rotations_done, 1);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		printf("t%d %ld\n", i, jobs[i].count);
	}
	return 0;
}
