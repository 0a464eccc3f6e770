// SPDX-License-Identifier: MIT
// GPU bench (bench/figures/gpu.py, on a machine with a GPU): what tracing adds to
// a kernel launch and to a small async copy on a real GPU. N empty kernels
// (and N/4 copies of 4 KiB host to device), a stream sync every 1000;
// prints ns per launch and per copy over the timed part (after a warm-up),
// one key=value a line as bench/figures/benchlib.py reads them.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void empty_kernel(int *p) { if (p && threadIdx.x == 1024) *p = 0; }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	cudaStream_t s;
	void *dev, *host;
	if (cudaStreamCreate(&s) || cudaMalloc(&dev, 4096) || cudaMallocHost(&host, 4096)) {
		fprintf(stderr, "gpu_launch: no usable GPU\n");
		return 77;
	}
	for (int i = 0; i < 2000; i++)
		empty_kernel<<<1, 32, 0, s>>>(NULL);
	cudaStreamSynchronize(s);
	double t0 = now();
	for (long i = 0; i < n; i++) {
		empty_kernel<<<1, 32, 0, s>>>(NULL);
		if (i % 1000 == 999)
			cudaStreamSynchronize(s);
	}
	cudaStreamSynchronize(s);
	double t1 = now();
	for (long i = 0; i < n / 4; i++) {
		cudaMemcpyAsync(dev, host, 4096, cudaMemcpyHostToDevice, s);
		if (i % 1000 == 999)
			cudaStreamSynchronize(s);
	}
	cudaStreamSynchronize(s);
	double t2 = now();
	printf("launch_ns=%.1f\ncopy_ns=%.1f\n", (t1 - t0) / n, (t2 - t1) / (n / 4));
	return 0;
}
