// SPDX-License-Identifier: MIT
// GPU smoke test program (make test-gpu): a small training-like loop on a
// real GPU, with kernels (a template, to check demangling), copies both
// ways through pinned memory, a memset, two streams joined by an event,
// stream and device syncs, allocations, and NVTX step ranges. It writes
// what it did to the JSON file named by its argument; tests/gpu/check.py
// compares that with the trace. Exit status 77: no usable GPU here.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define STEPS 10
#define LAYERS 20
#define N (1 << 20)

template <int F> __global__ void scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * F + 1.0f;
}

__global__ void add_vec(float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += b[i];
}

#define CK(call)                                                                       \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "gpu_smoke: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("gpu_smoke: no GPU\n");
		return 77;
	}
	FILE *truth = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
	if (!truth)
		return 1;
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	cudaStream_t compute, copy;
	CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
	cudaEvent_t loaded;
	CK(cudaEventCreateWithFlags(&loaded, cudaEventDisableTiming));
	float *host, *a, *b;
	CK(cudaMallocHost(&host, N * sizeof(float)));
	CK(cudaMalloc(&a, N * sizeof(float)));
	CK(cudaMalloc(&b, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	const int block = 256, grid = (N + block - 1) / block;
	int scales = 0, adds = 0;
	for (int s = 0; s < STEPS; s++) {
		nvtxRangePushA("step");
		CK(cudaMemcpyAsync(a, host, N * sizeof(float), cudaMemcpyHostToDevice, copy));
		CK(cudaEventRecord(loaded, copy));
		CK(cudaStreamWaitEvent(compute, loaded, 0));
		CK(cudaMemsetAsync(b, 0, N * sizeof(float), compute));
		for (int l = 0; l < LAYERS; l++) {
			if (l % 2) {
				add_vec<<<grid, block, 0, compute>>>(a, b, N);
				adds++;
			} else {
				scale<2><<<grid, block, 0, compute>>>(a, N);
				scales++;
			}
			CK(cudaGetLastError());
		}
		CK(cudaMemcpyAsync(host, a, N * sizeof(float), cudaMemcpyDeviceToHost, compute));
		CK(cudaStreamSynchronize(compute));
		nvtxRangePop();
	}
	CK(cudaDeviceSynchronize());
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFreeHost(host));
	CK(cudaStreamDestroy(compute));
	CK(cudaStreamDestroy(copy));
	fprintf(truth,
		"{\"device\": \"%s\", \"sms\": %d, \"steps\": %d, \"grid\": %d, \"block\": %d,"
		" \"kernels\": {\"void scale<2>(float*, int)\": %d,"
		" \"add_vec(float*, float const*, int)\": %d},"
		" \"copy_bytes\": %zu, \"htod\": %d, \"dtoh\": %d, \"memsets\": %d,"
		" \"allocated\": %zu}\n",
		prop.name, prop.multiProcessorCount, STEPS, grid, block, scales, adds,
		N * sizeof(float), STEPS, STEPS, STEPS, 2 * N * sizeof(float));
	fclose(truth);
	printf("gpu_smoke: done\n");
	return 0;
}
