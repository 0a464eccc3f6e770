// SPDX-License-Identifier: MIT
#include "read/nccl_names.h"

#include <ctype.h>
#include <string.h>

/* Index = ncclDataType_t (nccl.h, stable since 2.0; FP8 since 2.24). */
static const struct {
	const char *name;
	unsigned size;
} types[] = {
    {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},      {"ncclUint32", 4},
    {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2},    {"ncclFloat32", 4},
    {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
};
#define NTYPES (sizeof types / sizeof *types)

unsigned nccl_type_size(const char *name)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (!strcmp(types[i].name, name))
			return types[i].size;
	return 0;
}

const char *nccl_type_name(long v)
{
	return v >= 0 && (size_t)v < NTYPES ? types[v].name : NULL;
}

int nccl_is_p2p(const char *func)
{
	return !strcmp(func, "Send") || !strcmp(func, "Recv") || !strcmp(func, "SendRecv");
}

static int whole_buffer(const char *func)
{
	return !strcmp(func, "AllGather") || !strcmp(func, "ReduceScatter") ||
	       !strcmp(func, "AlltoAll") || !strcmp(func, "AllToAll") || !strcmp(func, "Gather") ||
	       !strcmp(func, "Scatter");
}

uint64_t nccl_msg_bytes(const char *func, uint64_t count, unsigned type_size, int64_t nranks)
{
	uint64_t b = count * type_size;
	return whole_buffer(func) && nranks > 0 ? b * (uint64_t)nranks : b;
}

double nccl_bus_factor(const char *func, int64_t nranks)
{
	double n = nranks > 0 ? (double)nranks : 1;
	if (!strcmp(func, "AllReduce"))
		return 2 * (n - 1) / n;
	if (whole_buffer(func))
		return (n - 1) / n;
	return 1;
}

static int starts(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);
	return len >= n && !memcmp(s, p, n);
}

int nccl_kernel_is_comm(const char *s, size_t len)
{
	if (starts(s, len, "void "))
		s += 5, len -= 5;
	if (starts(s, len, "_Z")) { /* Itanium mangling: _Z<len><name> */
		s += 2, len -= 2;
		if (len && *s == 'N')
			s++, len--;
		while (len && isdigit((unsigned char)*s))
			s++, len--;
	}
	return starts(s, len, "ncclKernel_") || starts(s, len, "ncclDevKernel_") ||
	       starts(s, len, "ncclSymDevKernel_") || starts(s, len, "ncclSymkDevKernel_");
}
