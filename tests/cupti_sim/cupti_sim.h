// SPDX-License-Identifier: MIT
/* The simulated CUDA driver and runtime that test workloads call (the
 * CUPTI side is what libcuptrace sees). Each call is one CUDA API call:
 * it gets a correlation id, callbacks, an API activity record, and the GPU
 * work it starts runs on its stream in simulated time (durations given in
 * ns). Functions return the call's correlation id where it has one. */
#ifndef CUPTI_SIM_H
#define CUPTI_SIM_H

#include <stddef.h>
#include <stdint.h>

struct sim_dim {
	uint32_t x, y, z;
};

/* cuInit: calls InitializeInjection of $CUDA_INJECTION64_PATH exactly as
 * the driver does, then brings up `ndevices` GPUs. */
void sim_init(int ndevices);
uint32_t sim_stream_create(int dev);
int sim_get_device(void);     /* cudaGetDevice: a call the tracer leaves out */
void sim_set_device(int dev); /* cudaSetDevice */
uint32_t sim_launch(uint32_t stream, const char *name, struct sim_dim grid, struct sim_dim block,
                    int regs, int static_smem, int dynamic_smem, uint64_t dur_ns);
/* cuLaunchKernel (driver API, as Triton launches) */
uint32_t sim_launch_driver(uint32_t stream, const char *name, struct sim_dim grid,
                           struct sim_dim block, int regs, uint64_t dur_ns);
/* cudaGraphLaunch of n kernels: one correlation id for all */
uint32_t sim_graph_launch(uint32_t stream, int n, const char *name, uint64_t dur_ns);
/* copy_kind, src_kind, dst_kind: CUPTI's memcpy and memory kinds. async 0
 * is cudaMemcpy (the caller waits), 1 cudaMemcpyAsync. */
uint32_t sim_memcpy(uint32_t stream, int copy_kind, int src_kind, int dst_kind, uint64_t bytes,
                    int async, uint64_t dur_ns);
uint32_t sim_memcpy_peer(uint32_t stream, int src_dev, int dst_dev, uint64_t bytes,
                         uint64_t dur_ns);
uint32_t sim_memset(uint32_t stream, uint64_t bytes, uint32_t value, uint64_t dur_ns);
uint64_t sim_malloc(int dev, uint64_t bytes);
void sim_free(uint64_t addr);
void sim_stream_sync(uint32_t stream);
/* cudaEventRecord of a new event (its id returned), or of an existing one */
uint32_t sim_event_record(uint32_t stream);
void sim_event_rerecord(uint32_t event, uint32_t stream);
void sim_event_sync(uint32_t event);
void sim_stream_wait_event(uint32_t stream, uint32_t event);
void sim_device_sync(int dev);
void sim_device_reset(int dev);
void sim_profiler_start(void);
void sim_profiler_stop(void);
/* Records CUPTI holds that the tracer has not been given yet. */
size_t sim_pending(void);
/* Busy CPU work of about ns (between calls, as a framework does). */
void sim_cpu(uint64_t ns);

#endif
