// SPDX-License-Identifier: MIT
/* Writer thread CPU at a fixed event rate.
 *   bench_rate EVENTS_PER_S SECONDS
 * One thread emits NVTX push/pop pairs paced to EVENTS_PER_S (busy-waiting
 * on the clock between pairs). After a one-second warm-up, the CPU time of
 * the thread named cuptrace-write is read from /proc/self/task/TID/schedstat
 * (ns on CPU) at the start and the end of the measured window. Prints
 * events_s= (achieved), writer_cpu_pct= (% of one core), writer_ns_per_event=,
 * or writer=none when no writer thread exists (untraced run). */
#include "bench_common.h"

#include <nvtx3/nvToolsExt.h>

static const char *const names[8] = {
	"forward", "backward", "optimizer_step", "loss",
	"data_loader", "allreduce_grads", "layers.3.attention", "layers.3.mlp",
};

/* Pairs at the given rate for ns nanoseconds; returns events emitted. */
static long paced(double events_s, uint64_t ns)
{
	double period = 2e9 / events_s; /* ns per pair */
	uint64_t t0 = now_ns();
	long i = 0;
	for (;;) {
		uint64_t t = now_ns();
		if (t - t0 >= ns)
			break;
		if ((double)(t - t0) < (double)i * period)
			continue;
		nvtxRangePushA(names[i & 7]);
		nvtxRangePop();
		i++;
	}
	return 2 * i;
}

int main(int argc, char **argv)
{
	double rate = (double)arg_long(argc, argv, 1, 1000000);
	double secs = (double)arg_long(argc, argv, 2, 3);
	paced(rate, 1000000000ull);
	int tid = writer_tid();
	if (tid < 0) {
		printf("writer=none\n");
		return 0;
	}
	uint64_t c0 = thread_cpu_ns(tid), t0 = now_ns();
	long n = paced(rate, (uint64_t)(secs * 1e9));
	uint64_t c1 = thread_cpu_ns(tid), t1 = now_ns();
	double wall = (double)(t1 - t0);
	printf("events_s=%.0f\nwriter_cpu_pct=%.2f\nwriter_ns_per_event=%.1f\n", (double)n / (wall / 1e9),
	       100.0 * (double)(c1 - c0) / wall, (double)(c1 - c0) / (double)n);
	return 0;
}
