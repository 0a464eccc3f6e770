// SPDX-License-Identifier: MIT
/* GPU events (the CUPTI kinds of the file format) for the tools: display
 * names, demangling, devices. Their fields' positions: F_* (fields.h). */
#ifndef CT_GPU_H
#define CT_GPU_H

#include "dec.h"

#include <stddef.h>
#include <stdint.h>

/* "HtoD", "Pinned", ... (Kineto's spelling). */
const char *gpu_copy_kind(uint64_t k);
const char *gpu_memory_kind(uint64_t k);
const char *gpu_sync_name(uint64_t type);
/* Is this sync type an event synchronize or a stream wait on an event? */
static inline int gpu_sync_on_event(uint64_t type)
{
	return type == 1 || type == 2; /* CUpti_ActivitySynchronizationType */
}
/* Is this CUPTI memory kind GPU memory (counted in "GPU memory used")? */
int gpu_memory_on_device(uint64_t k);

/* Demangled text of a kernel name, malloc'd; a name that is not a
 * mangled C++ name comes back as it is. */
char *gpu_demangle(const char *s, size_t n, size_t *outlen);

/* Did this file's configuration ask for a CUDA source? */
int gpu_file_traces_cuda(const struct ct_header *h);
/* Whether the file's configuration traces PyTorch (the torch source). */
int gpu_file_traces_torch(const struct ct_header *h);
/* 1 when the file's GPU kernels come from CUPTI: its footer counts
 * kernels, or, cut short (no footer), it was set to record them
 * (CUPTRACE_TRACE). breakdown and gpu_gaps then take NCCL's GPU time from
 * its kernels, not from the profiler plugin's timers. */
int gpu_file_records_kernels(const struct ct_file *file);

#define GPU_TID_NONE 0x7fffffffll /* track for GPU events without a stream */
#define GPU_TID_SYNC (1ll << 30)  /* + stream: the track of a stream's syncs */
/* The track (tid) of a CUDA stream: the stream id, never 0. */
static inline int64_t gpu_stream_tid(uint64_t stream)
{
	if (stream == 0)
		return 0x7ffffffell;
	if (stream >= 0xffffffffull)
		return GPU_TID_NONE;
	return (int64_t)stream;
}

#endif
