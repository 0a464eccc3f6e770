// SPDX-License-Identifier: MIT
/* Internals of the SQLite export. sqlite.c is the model consumer (files,
 * processes, ranks, the dispatch); the rows of each kind of event are
 * formatted in sqlite_gpu.c (CUPTI tables, API calls), sqlite_nvtx.c (NVTX,
 * steps), sqlite_nccl.c (NCCL operations, the watchdog's hang),
 * sqlite_torch.c (PyTorch's operators, external ids and memory) and
 * sqlite_mpi.c (MPI calls). */
#ifndef CT_SQLITE_INT_H
#define CT_SQLITE_INT_H

#include "model/model.h"
#include "write/sqlite/sqlite_db.h"
#include "read/gpu_fields.h"
#include "util/hmap.h"

#include <stdint.h>
#include <string.h>

#define MAXGPU 64

struct knames {
	int64_t dm, sh, mg;
};

struct gpu_info {
	uint64_t dev, sms, warp;
	char *name;
};

struct sq {
	struct sdb *db;
	struct tfile *t;
	int64_t off, gpid;
	struct hmap knames;  /* raw kernel name sid -> struct knames */
	struct hmap anames;  /* API name sid -> StringIds id */
	struct hmap domains; /* StringIds id of a domain's name -> domainId */
	struct hmap cats;    /* domainId << 32 | category + 1: category row written */
	struct hmap threads; /* tid + 1: ThreadNames row written */
	struct hmap streams; /* (context << 32 | stream) + 1: a TARGET_INFO_CUDA_STREAM row due */
	struct hmap mpi_tids; /* tid + 1: its MPI_RANKS row written */
	int64_t ndomains;
	struct gpu_info gpus[MAXGPU];
	unsigned ngpus;
	uint64_t dropped, events;
	/* correlation ids of the database's n-th file are n << 32 | CUPTI's
	 * (unique in a database of several processes: nsys-style joins on
	 * correlationId alone stay right); nfiles counts them */
	int64_t cbase;
	unsigned nfiles;
	/* TARGET_INFO_GPU rows written: one per device id and model */
	struct gpu_info written[MAXGPU];
	unsigned nwritten;
	/* ANALYSIS_DETAILS: the span of the database's files on the job's
	 * timeline, and the globalVid of its first file */
	int64_t lo, hi, vid;
	int spanned;
};

static inline int64_t sq_corr(const struct sq *q, uint64_t corr)
{
	return corr ? q->cbase | (int64_t)(corr & 0xffffffffu) : 0;
}

/* Times on the job's timeline; globalTid of a thread of this file. */
static inline int64_t at(const struct sq *q, uint64_t ts)
{
	return (int64_t)ts + q->off;
}

static inline int64_t gtid(const struct sq *q, int64_t tid)
{
	return q->gpid | (tid & 0xffffff);
}

/* CUPTI's "not applicable" (all ones) as -1, the way CUPTI's structs read. */
static inline int64_t id32(uint64_t v)
{
	return v >= 0xffffffffull ? -1 : (int64_t)v;
}

/* A CUPTI memory kind (CUpti_ActivityMemoryKind: 0 unknown, 1 pageable,
 * 2 pinned, 3 device, ...) as nsys numbers ENUM_CUDA_MEM_KIND: the same
 * kinds one lower, unknown last (7). */
static inline int64_t sq_mem_kind(uint64_t k)
{
	return k >= 1 && k <= 7 ? (int64_t)k - 1 : 7;
}

static inline void sq_opt_ts(struct sq *q, struct sdb_row s, int i, uint64_t ts)
{
	if (ts)
		SB_I(s, i, at(q, ts));
	else
		SB_NULL(s, i);
}

static inline void sq_opt_text(struct sdb_row s, int i, const char *v)
{
	if (v[0])
		SB_T(s, i, v, strlen(v));
	else
		SB_NULL(s, i);
}

static inline void sq_opt_i(struct sdb_row s, int i, int64_t v, int have)
{
	if (have)
		SB_I(s, i, v);
	else
		SB_NULL(s, i);
}

/* Widens the database's time span to [a, b] (ns on the job's timeline). */
static inline void sq_span(struct sq *q, int64_t a, int64_t b)
{
	if (!q->spanned || a < q->lo)
		q->lo = a;
	if (!q->spanned || b > q->hi)
		q->hi = b;
	q->spanned = 1;
}

struct gpu_info *sq_gpu_of(struct sq *q, uint64_t dev);
void sq_kernel(struct sq *q, const struct m_event *ev);
void sq_memcpy(struct sq *q, const struct m_event *ev);
void sq_memset(struct sq *q, const struct m_event *ev);
void sq_sync(struct sq *q, const struct m_event *ev);
void sq_api(struct sq *q, const struct m_event *ev);
void sq_memory(struct sq *q, const struct m_event *ev);
void sq_nvtx(struct sq *q, const struct m_event *ev);
void sq_step(struct sq *q, const struct m_event *ev);
void sq_nccl(struct sq *q, const struct m_event *ev);
void sq_hang(struct sq *q, const struct m_event *ev);
void sq_torch_op(struct sq *q, const struct m_event *ev);            /* sqlite_torch.c */
void sq_torch_corr(struct sq *q, uint64_t corr, uint64_t ext);
void sq_torch_mem(struct sq *q, const struct m_event *ev);
void sq_mpi(struct sq *q, const struct m_event *ev); /* sqlite_mpi.c */

#endif
