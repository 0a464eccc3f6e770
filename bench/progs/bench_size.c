// SPDX-License-Identifier: MIT
/* A training loop's NVTX stream, for the size and converter benchmarks.
 *   bench_size EVENTS
 * Each step: step > data_loader, forward > 12 x (layer > attention, mlp),
 * loss, backward > 12 x (layer > attention, mlp), optimizer_step >
 * allreduce_grads, clip_grad_norm; one mark. 161 events per step; whole
 * steps run until EVENTS is reached. Between events a busy loop of random
 * length (a few hundred ns) gives the timestamps jitter: sleeping would be
 * far too slow for 10 million events. Prints events= and seconds=. */
#include "bench_common.h"

#include <nvtx3/nvToolsExt.h>

#define LAYERS 12

static uint64_t seed = 0x2545f4914f6cdd1dull;

/* Work of about base..base+511 loop iterations. */
static void work(unsigned base)
{
	spin(base + (unsigned)(rnd(&seed) & 511));
}

static long events;

static void range(const char *name, unsigned base, void (*inner)(void))
{
	nvtxRangePushA(name);
	work(base);
	if (inner)
		inner();
	nvtxRangePop();
	events += 2;
	work(base / 4);
}

static char layer_name[LAYERS][32];

static void layers(void)
{
	for (int l = 0; l < LAYERS; l++) {
		nvtxRangePushA(layer_name[l]);
		range("attention", 300, NULL);
		range("mlp", 200, NULL);
		nvtxRangePop();
		events += 2;
	}
}

static void loss(void)
{
	range("loss", 100, NULL);
}

static void forward(void)
{
	layers();
	loss();
}

static void optimizer(void)
{
	range("allreduce_grads", 400, NULL);
	range("clip_grad_norm", 100, NULL);
}

static void step(void)
{
	range("data_loader", 200, NULL);
	range("forward", 50, forward);
	range("backward", 50, layers);
	range("optimizer_step", 50, optimizer);
	nvtxMarkA("grad_scaler_update");
	events++;
}

int main(int argc, char **argv)
{
	long want = arg_long(argc, argv, 1, 10000000);
	for (int l = 0; l < LAYERS; l++)
		snprintf(layer_name[l], sizeof layer_name[l], "layers.%d", l);
	uint64_t t0 = now_ns();
	while (events < want)
		range("train_step", 50, step);
	printf("events=%ld\nseconds=%.3f\n", events, (double)(now_ns() - t0) / 1e9);
	return 0;
}
