// SPDX-License-Identifier: MIT
/* Totals of NCCL operations per (rank, operation, datatype), and per
 * (operation, datatype, message size, communicator size) over all ranks:
 * what the nccl_* reports print, filled from traces or from NCCL_DEBUG
 * logs. */
#ifndef CT_NCCL_AGG_H
#define CT_NCCL_AGG_H

#include "util/hmap.h"

#include <stddef.h>
#include <stdint.h>

/* Message-size buckets: [0, 64 KiB), [64 KiB, 1 MiB), [1 MiB, 16 MiB),
 * [16 MiB, ...). */
enum { NB_64K, NB_1M, NB_16M, NB_BIG, NB_N };
extern const char *const nccl_bucket_name[NB_N];
int nccl_bucket(uint64_t bytes);

struct nccl_row {
	int64_t rank;
	char func[32], dtype[32];
	uint64_t calls, bytes, min, max;
	uint64_t timed, timed_bytes, time_ns; /* operations with a GPU time */
	double bus_bytes;                     /* timed bytes x bus factor */
	uint64_t bucket[NB_N];
};

/* Calls of one message size (nccl_calls), every rank's counted. */
struct nccl_size_row {
	char func[32], dtype[32];
	uint64_t bytes;  /* one call's message size */
	int64_t nranks;  /* its communicator's size; 0: not known */
	uint64_t calls;
	uint64_t timed, time_ns, min_ns, max_ns; /* calls with a GPU time */
	size_t next;     /* index + 1 of the next row of the same hash; 0: none */
};

struct nccl_agg {
	struct nccl_row *v;
	size_t n, cap;
	struct nccl_size_row *s;
	size_t ns, scap;
	struct hmap sidx; /* hash of a size row's key -> index + 1 of its first row */
};

void nccl_agg_add(struct nccl_agg *a, int64_t rank, const char *func, const char *dtype,
                  uint64_t bytes, int64_t nranks, int has_time, uint64_t time_ns);
/* Adds the rows of `from` to a (a file's totals into the job's). */
void nccl_agg_merge(struct nccl_agg *a, const struct nccl_agg *from);
/* Renumbers rank `from` as `to` (log inputs learn ranks at the end). */
void nccl_agg_rerank(struct nccl_agg *a, int64_t from, int64_t to);
void nccl_agg_free(struct nccl_agg *a);

#endif
