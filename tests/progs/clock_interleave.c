// SPDX-License-Identifier: MIT
/* NVTX push/pop pairs with CLOCK_MONOTONIC read by the program itself
 * between the calls, so that a test can check where the trace put each
 * event against the program's own clock (tests/integration/library/test_tsc.py).
 *   clock_interleave OUT BUSY SLOW [fork]
 * Two threads each do BUSY pairs back to back, then SLOW pairs 2 ms
 * apart (the writer reads its clock anchors in between); with "fork", a
 * child forked after that does the same in its own trace. Each process
 * writes OUT.PID: one line per pair, "tid before after_push after_pop" in
 * ns, the readings around nvtxRangePushA and nvtxRangePop. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *out;
static long busy, slow;

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct reading {
	long tid;
	uint64_t a, b, c;
};

static struct reading *rd;
static long nrd;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void pairs(long n, int pause, struct reading *r)
{
	long tid = (long)syscall(SYS_gettid);
	for (long i = 0; i < n; i++) {
		r[i].tid = tid;
		r[i].a = mono();
		nvtxRangePushA(pause ? "slow" : "busy");
		r[i].b = mono();
		nvtxRangePop();
		r[i].c = mono();
		if (pause)
			usleep(2000);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	struct reading *r = malloc((size_t)(busy + slow) * sizeof *r);
	if (!r)
		exit(3);
	pairs(busy, 0, r);
	pairs(slow, 1, r + busy);
	pthread_mutex_lock(&lock);
	for (long i = 0; i < busy + slow; i++)
		rd[nrd++] = r[i];
	pthread_mutex_unlock(&lock);
	free(r);
	return NULL;
}

static int run_and_write(void)
{
	nrd = 0;
	rd = malloc(2 * (size_t)(busy + slow) * sizeof *rd);
	if (!rd)
		return 3;
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 3;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	char path[4096];
	snprintf(path, sizeof path, "%s.%d", out, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 3;
	for (long i = 0; i < nrd; i++)
		fprintf(f, "%ld %llu %llu %llu\n", rd[i].tid, (unsigned long long)rd[i].a,
			(unsigned long long)rd[i].b, (unsigned long long)rd[i].c);
	fclose(f);
	free(rd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	out = argv[1];
	busy = atol(argv[2]);
	slow = atol(argv[3]);
	int rc = run_and_write();
	if (rc || argc < 5)
		return rc;
	pid_t p = fork();
	if (p < 0)
		return 3;
	if (p == 0)
		_exit(run_and_write());
	int st;
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return 4;
	return WEXITSTATUS(st);
}
