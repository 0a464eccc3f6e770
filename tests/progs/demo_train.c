// SPDX-License-Identifier: MIT
/* The demo: a training loop as an ML job would annotate it with NVTX.
 * Two data-loader threads fill a queue; the main thread runs steps of
 * forward (per layer), backward and optimizer; a logger thread marks
 * progress. Runs about a second. usage: demo_train [steps] */
#include "truth.h"

#include <math.h>
#include <nvtx3/nvToolsExt.h>
#include <string.h>

#define LAYERS 6
#define QUEUE 4

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int filled, stop;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static double work(unsigned n)
{
	double x = 0;
	for (unsigned i = 1; i <= n; i++)
		x += sqrt((double)i);
	return x;
}

static nvtxDomainHandle_t io;

static void *loader(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "loader-%d", (int)(intptr_t)arg);
	nvtxNameOsThreadA((uint32_t)gettid_(), name);
	for (;;) {
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof a);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.colorType = NVTX_COLOR_ARGB;
		a.color = 0xff2e86de;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "load batch";
		nvtxDomainRangePushEx(io, &a);
		work(20000);
		nvtxRangePushA("augment");
		work(8000);
		nvtxRangePop();
		nvtxDomainRangePop(io);
		pthread_mutex_lock(&q.lock);
		while (q.filled == QUEUE && !q.stop)
			pthread_cond_wait(&q.cv, &q.lock);
		if (q.stop) {
			pthread_mutex_unlock(&q.lock);
			return NULL;
		}
		q.filled++;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.lock);
	}
}

static void *logger(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA((uint32_t)gettid_(), "logger");
	for (int i = 0; i < 10; i++) {
		usleep(50000);
		nvtxMarkA("heartbeat");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 40;
	nvtxNameOsThreadA((uint32_t)gettid_(), "trainer");
	io = nvtxDomainCreateA("dataloader");
	pthread_t l[2], lg;
	for (int i = 0; i < 2; i++)
		pthread_create(&l[i], NULL, loader, (void *)(intptr_t)i);
	pthread_create(&lg, NULL, logger, NULL);
	double loss = 2.5;
	for (int s = 0; s < steps; s++) {
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof a);
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
		a.payload.iValue = s;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "train_step";
		nvtxRangePushEx(&a);
		nvtxRangePushA("wait for batch");
		pthread_mutex_lock(&q.lock);
		while (!q.filled)
			pthread_cond_wait(&q.cv, &q.lock);
		q.filled--;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.lock);
		nvtxRangePop();
		nvtxRangePushA("forward");
		for (int k = 0; k < LAYERS; k++) {
			char name[32];
			snprintf(name, sizeof name, "layer %d", k);
			nvtxRangePushA(name);
			work(6000 + 2000 * (unsigned)k);
			nvtxRangePop();
		}
		nvtxRangePop();
		nvtxRangePushA("backward");
		work(70000);
		nvtxRangePop();
		nvtxRangePushA("optimizer");
		work(15000);
		nvtxRangePop();
		nvtxRangePop();
		loss *= 0.97;
		if (s % 10 == 9)
			printf("step %d loss %.4f\n", s + 1, loss);
	}
	pthread_mutex_lock(&q.lock);
	q.stop = 1;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < 2; i++)
		pthread_join(l[i], NULL);
	pthread_join(lg, NULL);
	return 0;
}
