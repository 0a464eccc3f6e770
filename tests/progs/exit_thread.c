// SPDX-License-Identifier: MIT
/* A thread other than main calls exit(7) while main sits inside a range;
 * short-lived threads come and go before that (their events must stay). */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>

static void *short_lived(void *arg)
{
	int n = (int)(intptr_t)arg;
	char name[32];
	snprintf(name, sizeof name, "short %d", n);
	for (int i = 0; i < 5; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++) {
		nvtxRangePushA("exiter");
		nvtxRangePop();
	}
	exit(7);
}

int main(void)
{
	for (int i = 0; i < 40; i++) {
		pthread_t t;
		pthread_create(&t, NULL, short_lived, (void *)(intptr_t)i);
		pthread_join(t, NULL);
	}
	nvtxRangePushA("main waits");
	pthread_t t;
	pthread_create(&t, NULL, exiter, NULL);
	for (;;)
		pause();
}
