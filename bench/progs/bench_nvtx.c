// SPDX-License-Identifier: MIT
/* Hot path: NVTX push+pop pairs through the real NVTX3 loader.
 *   bench_nvtx THREADS PAIRS_PER_ROUND ROUNDS
 * Untraced when run plainly (the loader finds no injection and every call
 * is a no-op); traced under LD_PRELOAD=libcuptrace.so. Prints key=value:
 *   clock_ns    one clock_gettime(CLOCK_MONOTONIC), measured in this run
 *   rdtsc_ns    one rdtsc, measured in this run (x86-64 only)
 *   pair_cpu_ns one push+pop pair on one thread, in the thread's CPU time
 *               (median over rounds); equal for one and two threads when
 *               recording threads do not slow each other down
 *   first_pair_cpu_ns the same in the first round, from the process's
 *               first event (ring chunks never touched before)
 *   pair_ns     the same in wall time (counts waits for a core)
 *   events_s    push and pop events per second, all threads (median)
 *   writer_pct  CPU of the tracer's writer thread during the rounds, in %
 *               of one core (median; absent untraced)
 *   writer_ns_ev the writer's CPU per event: from a round's start to the
 *               end of the pause after it (the writer drains what is left
 *               then), over the round's events (median; absent untraced)
 * A warm-up round runs first so that the loader is initialised and the
 * ring chunks have been touched once, as in a long-running program. */
#include "bench_common.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_ROUNDS 64

static const char *const names[8] = {
	"forward", "backward", "optimizer_step", "loss",
	"data_loader", "allreduce_grads", "layers.3.attention", "layers.3.mlp",
};

static long pairs;
static pthread_barrier_t start_bar, end_bar;
static double thread_ns[MAX_THREADS], thread_cpu[MAX_THREADS];

static void run_pairs(long n)
{
	for (long i = 0; i < n; i++) {
		nvtxRangePushA(names[i & 7]);
		nvtxRangePop();
	}
}

static uint64_t round_t0;

/* One thread's share of a round; thread 0 also starts the round clock. */
static void timed_pairs(long id)
{
	pthread_barrier_wait(&start_bar);
	if (id == 0)
		round_t0 = now_ns();
	uint64_t t0 = now_ns(), c0 = cpu_ns();
	run_pairs(pairs);
	thread_cpu[id] = (double)(cpu_ns() - c0);
	thread_ns[id] = (double)(now_ns() - t0);
	pthread_barrier_wait(&end_bar);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	timed_pairs(id);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round on nthreads threads; returns the wall time in ns. The caller
 * is thread 0 so that one thread means exactly one recording thread. */
static double round_once(int nthreads, pthread_t *th)
{
	for (long i = 1; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	timed_pairs(0);
	double wall = (double)(now_ns() - round_t0);
	for (int i = 1; i < nthreads; i++)
		pthread_join(th[i], NULL);
	return wall;
}

int main(int argc, char **argv)
{
	int nthreads = (int)arg_long(argc, argv, 1, 1);
	pairs = arg_long(argc, argv, 2, 1000000);
	int rounds = (int)arg_long(argc, argv, 3, 5);
	if (nthreads < 1 || nthreads > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_nvtx THREADS PAIRS ROUNDS\n");
		return 2;
	}
	double clk = clock_gettime_ns();
	pthread_barrier_init(&start_bar, NULL, (unsigned)nthreads);
	pthread_barrier_init(&end_bar, NULL, (unsigned)nthreads);
	pthread_t th[MAX_THREADS];

	/* Warm-up, then a pause in which the writer drains what it recorded.
	 * Its cost is the one from the process's first event, on ring chunks
	 * never touched before. */
	round_once(nthreads, th);
	double first_cpu = 0;
	for (int i = 0; i < nthreads; i++)
		first_cpu += thread_cpu[i];
	first_cpu /= nthreads * (double)pairs;
	usleep(300000);

	double pair_ns[MAX_ROUNDS], pair_cpu[MAX_ROUNDS], ev_s[MAX_ROUNDS], wpct[MAX_ROUNDS];
	double wev[MAX_ROUNDS];
	int wtid = writer_tid();
	for (int r = 0; r < rounds; r++) {
		uint64_t w0 = wtid > 0 ? thread_cpu_ns(wtid) : 0;
		double wall = round_once(nthreads, th);
		wpct[r] = wtid > 0 ? 100.0 * (double)(thread_cpu_ns(wtid) - w0) / wall : 0;
		double sum = 0, csum = 0;
		for (int i = 0; i < nthreads; i++)
			sum += thread_ns[i], csum += thread_cpu[i];
		pair_ns[r] = sum / nthreads / (double)pairs;
		pair_cpu[r] = csum / nthreads / (double)pairs;
		ev_s[r] = 2.0 * (double)pairs * nthreads / (wall / 1e9);
		usleep(200000);
		wev[r] = wtid > 0 ? (double)(thread_cpu_ns(wtid) - w0) / (2.0 * (double)pairs * nthreads)
				  : 0;
	}
	printf("threads=%d\npairs=%ld\nrounds=%d\n", nthreads, pairs, rounds);
#if defined(__x86_64__)
	printf("rdtsc_ns=%.2f\n", rdtsc_ns());
#endif
	printf("clock_ns=%.2f\npair_ns=%.2f\npair_cpu_ns=%.2f\nfirst_pair_cpu_ns=%.2f\nevents_s=%.0f\n",
	       clk, median(pair_ns, rounds), median(pair_cpu, rounds), first_cpu, median(ev_s, rounds));
	if (wtid > 0)
		printf("writer_pct=%.1f\nwriter_ns_ev=%.2f\n", median(wpct, rounds), median(wev, rounds));
	return 0;
}
