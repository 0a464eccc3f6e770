// SPDX-License-Identifier: MIT
/* Names of the CUDA calls the simulator makes, as cuptiGetCallbackName
 * gives them (the enum names of cupti_runtime_cbid.h / cupti_driver_cbid.h
 * without their prefix). */
#include "sim.h"

#include <stddef.h>

#define RT(n)                                                                                      \
	{                                                                                          \
		CUPTI_RUNTIME_TRACE_CBID_##n, #n                                                   \
	}
#define DRV(n)                                                                                     \
	{                                                                                          \
		CUPTI_DRIVER_TRACE_CBID_##n, #n                                                    \
	}

static const struct {
	uint32_t cbid;
	const char *name;
} runtime[] =
    {
        RT(cudaLaunchKernel_v7000),
        RT(cudaMemcpy_v3020),
        RT(cudaMemcpyAsync_v3020),
        RT(cudaMemcpyPeerAsync_v4000),
        RT(cudaMemsetAsync_v3020),
        RT(cudaMalloc_v3020),
        RT(cudaFree_v3020),
        RT(cudaStreamCreate_v3020),
        RT(cudaStreamSynchronize_v3020),
        RT(cudaEventRecord_v3020),
        RT(cudaEventSynchronize_v3020),
        RT(cudaStreamWaitEvent_v3020),
        RT(cudaDeviceSynchronize_v3020),
        RT(cudaGraphLaunch_v10000),
        RT(cudaDeviceReset_v3020),
        RT(cudaProfilerStart_v4000),
        RT(cudaProfilerStop_v4000),
        RT(cudaGetDevice_v3020),
        RT(cudaSetDevice_v3020),
        RT(cudaGetLastError_v3020),
},
  driver[] = {
      DRV(cuLaunchKernel),  DRV(cuProfilerStart), DRV(cuProfilerStop),
      DRV(cuCtxGetCurrent), DRV(cuMemAlloc_v2),
};

const char *sim_cbid_name(CUpti_CallbackDomain dom, uint32_t cbid)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		for (size_t i = 0; i < sizeof runtime / sizeof *runtime; i++)
			if (runtime[i].cbid == cbid)
				return runtime[i].name;
	} else if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		for (size_t i = 0; i < sizeof driver / sizeof *driver; i++)
			if (driver[i].cbid == cbid)
				return driver[i].name;
	}
	return NULL;
}
