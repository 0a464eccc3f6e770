// SPDX-License-Identifier: MIT
/* Plays the CUDA driver's cuInit on a machine without one: calls
 * InitializeInjection from $CUDA_INJECTION64_PATH exactly as the driver
 * does, between NVTX ranges. The real libcupti then has no driver to talk
 * to; the tracer must say so once (at info level) and keep tracing NVTX. */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	nvtxRangePushA("before cuInit");
	nvtxRangePop();
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	int rc = -1;
	if (inj && inj[0]) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*fn)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		rc = fn ? fn() : -2;
		if (fn)
			rc = fn(); /* the driver may call it again: must stay harmless */
	}
	nvtxRangePushA("after cuInit");
	nvtxRangePop();
	printf("fake_cuinit rc=%d\n", rc);
	return 0;
}
