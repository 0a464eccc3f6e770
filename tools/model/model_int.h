// SPDX-License-Identifier: MIT
/* Internals of the model shared by its parts: model.c (the driver: the
 * file, spans, drops) calls model_gpu.c (CUDA calls and GPU activity) and
 * model_nccl.c (NCCL operations); all of them announce tracks, processes
 * and flows through model_tracks.c, at the bottom. */
#ifndef CT_MODEL_INT_H
#define CT_MODEL_INT_H

#include "model/model.h"
#include "model/piece.h"
#include "util/hmap.h"

#define MODEL_MAXDEV 256 /* devices told apart; higher numbers share the last */
#define NCCL_TID 1000000000 /* tid of the first communicator's track (model_nccl.c) */
#define MPI_TID 1500000000  /* tid of the first thread's MPI track (model_mpi.c) */

struct model_gpu;
struct model_nccl;
struct model_annot;
struct model_torch;
struct model_mpi;

struct model {
	struct tfile *t;
	const struct m_consumer *c;
	void *ctx;
	struct hmap threads, others; /* tracks by key (see model.c) */
	struct m_track **tracks;     /* by id - 1 */
	size_t ntracks;
	struct m_track *last_thread;
	struct spans *spans;
	uint64_t next_flow;
	char *dev_name[MODEL_MAXDEV];   /* from the device records */
	uint8_t dev_named[MODEL_MAXDEV]; /* 1: process announced, 2: with its name */
	struct model_gpu *gpu;   /* NULL until the first CUDA record */
	struct model_nccl *nccl; /* NULL until the first NCCL record */
	struct model_annot *annot; /* NULL until the first range with GPU work */
	struct model_torch *torch; /* NULL until the first PyTorch or ext_corr record */
	struct model_mpi *mpi;     /* NULL until the first MPI record */
	/* GPU work is projected onto NVTX ranges: the file has launches and
	 * push/pop ranges (or, cut short, traced CUDA) */
	int project;
	/* ... and onto record_function scopes: the file has launches and
	 * PyTorch operators (or, cut short, traced CUDA and torch) */
	int project_torch;
};

/* The common part of an event. The union is left as it is: it is large
 * and each category fills only what it carries (clearing it for every
 * event cost the converter a fifth of its speed). */
static inline void model_head(struct m_event *e, enum m_type type, enum m_cat cat,
                              const struct m_track *tr, uint64_t ts, uint64_t end,
                              const struct ct_event *rec)
{
	e->type = (uint8_t)type, e->cat = (uint8_t)cat;
	e->track = tr, e->end_track = NULL;
	e->ts = ts, e->end = end;
	e->rec = rec;
}

/* Hands ev to the consumer, when the piece of the job keeps it. */
static inline void model_emit(struct model *m, struct m_event *ev)
{
	struct tpiece *w = &m->t->piece;
	if (w->cut) {
		if (!piece_keeps(w, ev)) {
			w->outside++;
			return;
		}
		w->inside += ev->type != ME_PROCESS && ev->type != ME_TRACK;
	}
	m->c->event(m->ctx, ev);
}

/* The track of a CPU thread (made, not announced: threads are announced
 * named, at the end of the file). */
struct m_track *model_thread(struct model *m, int64_t tid);
/* The track of (kind, device, tid) on a GPU or of an NCCL communicator,
 * announced (ME_TRACK) at first sight; an MT_MPI track's device is the OS
 * thread whose calls it holds. */
struct m_track *model_track(struct model *m, enum m_track_kind kind, uint64_t device, int64_t tid,
                            const struct nccl_comm *comm);
/* Announces GPU `device`'s process at first sight, and again once its name
 * (m->dev_name) is known. */
void model_process(struct model *m, uint64_t device);
void model_track_name(struct m_track *tr, const char *s, size_t n);
void model_free_tracks(struct model *m);
/* An arrow from (from, ts) to (to, to_ts). */
void model_flow(struct model *m, enum m_cat cat, const struct m_track *from, uint64_t ts,
                const struct m_track *to, uint64_t to_ts);

/* A launch flow (MC_LAUNCH): the call [ts, call_end] on `from` made
 * the GPU work [to_ts, to_end] of category cat (kernels: name) on `to`. */
void model_launch_flow(struct model *m, const struct m_track *from, uint64_t ts, uint64_t call_end,
                       const struct m_track *to, uint64_t to_ts, uint64_t to_end, enum m_cat cat,
                       const struct sref *name);

/* The track of GPU work on (device, tid as gpu_stream_tid() numbers it). */
const struct m_track *model_gpu_track(struct model *m, uint64_t device, int64_t tid);
/* The track of GPU work on (device, stream); NULL for work of no stream. */
const struct m_track *model_stream_track(struct model *m, uint64_t device, uint64_t stream);

void model_gpu_record(struct model *m, const struct ct_event *ev);
void model_gpu_end(struct model *m);
void model_nccl_record(struct model *m, const struct ct_event *ev);
void model_nccl_end(struct model *m);
void model_mpi_record(struct model *m, const struct ct_event *ev);
/* The file ends (last: its last host time, where it has no footer). */
void model_mpi_end(struct model *m, uint64_t last);

/* The NVTX GPU projection (model_annot.c): GPU work [ts, end] on track tr,
 * launched by a call at call_ts on thread tid; a push/pop range that
 * closed. */
void model_annot_launch(struct model *m, int64_t tid, uint64_t call_ts, const struct m_track *tr,
                        uint64_t ts, uint64_t end);
void model_annot_range(struct model *m, const struct span *s);
void model_annot_end(struct model *m);
/* A record_function scope [ts, end] that began on thread tid: its GPU
 * work is what calls on tid made inside it, whether they come before or
 * after it in the file (m->project_torch). */
void model_annot_scope(struct model *m, int64_t tid, uint64_t ts, uint64_t end,
                       const struct sref *name);

/* PyTorch (model_torch.c): torch_op, torch_mem and ext_corr records; the
 * operator id a CUDA call's correlation id was made in (0: none known). */
void model_torch_record(struct model *m, const struct ct_event *ev);
uint64_t model_torch_ext_slow(struct model *m, uint64_t corr);
static inline uint64_t model_torch_ext(struct model *m, uint64_t corr)
{
	return m->torch ? model_torch_ext_slow(m, corr) : 0;
}
void model_torch_end(struct model *m);

#endif
