// SPDX-License-Identifier: MIT
/* What the tools know about NCCL's vocabulary: operation and datatype
 * names, sizes, the message size and bus-bandwidth factor nccl-tests use,
 * and which GPU kernels are NCCL's. Shared by the trace and log paths. */
#ifndef CT_NCCL_NAMES_H
#define CT_NCCL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Size in bytes of an NCCL datatype given by name ("ncclFloat32"), 0 when
 * unknown. */
unsigned nccl_type_size(const char *name);
/* Name of the ncclDataType_t value v as NCCL prints it, NULL if unknown. */
const char *nccl_type_name(long v);

int nccl_is_p2p(const char *func);
/* Message size as nccl-tests reports it: AllGather, ReduceScatter,
 * AlltoAll, Gather and Scatter count the whole buffer (count x type size
 * x ranks), the others count x type size. */
uint64_t nccl_msg_bytes(const char *func, uint64_t count, unsigned type_size, int64_t nranks);
/* Bus bandwidth = algorithm bandwidth x this (nccl-tests' factors):
 * AllReduce 2(n-1)/n; AllGather, ReduceScatter, AlltoAll, Gather,
 * Scatter (n-1)/n; Broadcast, Reduce, Send, Recv 1. */
double nccl_bus_factor(const char *func, int64_t nranks);

/* Is this a GPU kernel of NCCL's (ncclKernel_*, ncclDevKernel_*,
 * ncclSymDevKernel_*, ncclSymkDevKernel_*), mangled or not? */
int nccl_kernel_is_comm(const char *name, size_t len);

#endif
