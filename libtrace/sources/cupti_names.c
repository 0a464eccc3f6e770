// SPDX-License-Identifier: MIT
/* CUPTI's strings made string handles on their first sight, behind the
 * per-record caches of cupti_rec.c: the name of a CUDA API call (and
 * whether the call is left out), and a kernel name's text, copied once per
 * distinct text. Called on CUPTI's thread, one buffer at a time. */
#include "cupti_int.h"
#include "defs.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Which API calls are left out: polled or trivial queries that a
 * framework makes thousands of times per step (kept short on purpose). */
const uint32_t ct_cupti_noisy_runtime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPoint_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDriverEntryPointByVersion_v12050,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetFuncBySymbol_v11000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetKernel_v12000,
};
const uint32_t ct_cupti_noisy_driver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent_v2,
    CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction,
    CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetId,
    CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveBlocksPerMultiprocessor,
};
const size_t ct_cupti_n_noisy_runtime = sizeof ct_cupti_noisy_runtime / sizeof(uint32_t);
const size_t ct_cupti_n_noisy_driver = sizeof ct_cupti_noisy_driver / sizeof(uint32_t);

static int in_list(const uint32_t *v, size_t n, uint32_t cbid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == cbid)
			return 1;
	return 0;
}

int ct_cupti_api_noisy(CUpti_CallbackDomain domain, uint32_t cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return in_list(ct_cupti_noisy_runtime, ct_cupti_n_noisy_runtime, cbid);
	return in_list(ct_cupti_noisy_driver, ct_cupti_n_noisy_driver, cbid);
}

/* ---- API names, on first sight (cupti_rec.c keeps them per call id). */

/* Runtime names carry the version they appeared in ("cudaLaunchKernel_
 * v7000"): shown without it, as the program wrote the call. Driver names
 * keep theirs (cuMemcpyHtoD_v2 is the real symbol). */
static size_t api_display_len(CUpti_CallbackDomain domain, const char *s)
{
	size_t n = strlen(s);
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API)
		return n;
	size_t i = n;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (n - i >= 4 && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_')
		return i - 2;
	return n;
}

uint64_t ct_cupti_api_lookup(CUpti_CallbackDomain domain, uint32_t cbid)
{
	const char *name = NULL;
	char fallback[48];
	CUptiResult r = ct_cu.callback_name ? ct_cu.callback_name(domain, cbid, &name)
	                                    : CUPTI_ERROR_NOT_INITIALIZED;
	/* A name is not worth switching GPU tracing off for. */
	if (r != CUPTI_SUCCESS || !name) {
		snprintf(fallback, sizeof fallback, "%s_%u",
		         domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaRuntimeApi" : "cuDriverApi",
		         cbid);
		name = fallback;
		ct_debug("no name for CUDA API call %u (%s)", cbid, ct_cupti_strerror(r));
	}
	uint64_t h = ct_handle_new(name, api_display_len(domain, name));
	return h << 1 | (ct_cupti_api_noisy(domain, cbid) ? CT_CUPTI_API_NOISY : 0);
}

/* ---- Kernel names' texts (cupti_rec.c keeps their handles per pointer). */
static struct ct_cupti_text *tslots;
static size_t tcap, tcount;

static uint32_t hash_text(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static int text_grow(void)
{
	size_t ncap = tcap ? tcap * 2 : 1024;
	struct ct_cupti_text *v = calloc(ncap, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < tcap; i++) {
		if (!tslots[i].text)
			continue;
		size_t j = tslots[i].hash & (ncap - 1);
		while (v[j].text)
			j = (j + 1) & (ncap - 1);
		v[j] = tslots[i];
	}
	free(tslots);
	tslots = v, tcap = ncap;
	return 0;
}

/* The handle of a text, made once per distinct text. */
struct ct_cupti_text *ct_cupti_text_handle(const char *s, size_t n)
{
	uint32_t hv = hash_text(s, n);
	if (tcap) {
		for (size_t j = hv & (tcap - 1); tslots[j].text; j = (j + 1) & (tcap - 1))
			if (tslots[j].hash == hv && tslots[j].len == n &&
			    !memcmp(tslots[j].text, s, n))
				return &tslots[j];
	}
	if ((tcount + 1) * 2 > tcap && text_grow())
		return NULL;
	char *copy = malloc(n + 1);
	uint64_t h = copy ? ct_handle_new(s, n) : 0;
	if (!h) {
		free(copy);
		return NULL;
	}
	memcpy(copy, s, n);
	copy[n] = 0;
	size_t j = hv & (tcap - 1);
	while (tslots[j].text)
		j = (j + 1) & (tcap - 1);
	tslots[j] = (struct ct_cupti_text){copy, (uint32_t)n, hv, h};
	tcount++;
	return &tslots[j];
}
