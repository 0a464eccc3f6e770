// SPDX-License-Identifier: MIT
/* The model's tracks (threads, GPU streams, NCCL communicators, threads'
 * MPI calls, with
 * names and order), GPU processes and flows: what every part of the model
 * announces through, below them all. */
#include "model/model_int.h"
#include "read/gpu_fields.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct m_track *new_track(struct model *m, enum m_track_kind kind)
{
	struct m_track *tr = xcalloc(1, sizeof *tr);
	m->tracks = xrealloc(m->tracks, (m->ntracks + 1) * sizeof *m->tracks);
	m->tracks[m->ntracks++] = tr;
	tr->id = (uint32_t)m->ntracks;
	tr->kind = (uint8_t)kind;
	return tr;
}

void model_track_name(struct m_track *tr, const char *s, size_t n)
{
	free(tr->name);
	tr->name = xrealloc(NULL, n + 1);
	memcpy(tr->name, s, n);
	tr->name[n] = 0;
	tr->name_len = n;
}

struct m_track *model_thread(struct model *m, int64_t tid)
{
	if (m->last_thread && m->last_thread->tid == tid)
		return m->last_thread;
	struct m_track *tr = hmap_get(&m->threads, (uint64_t)tid + 1);
	if (!tr) {
		tr = new_track(m, MT_THREAD);
		tr->tid = tid;
		/* the main thread (tid == OS pid) first */
		tr->sort = (uint64_t)tid == m->t->f.h.pid ? 0 : 1;
		hmap_put(&m->threads, (uint64_t)tid + 1, tr);
	}
	return m->last_thread = tr;
}

static void label_comm(char *buf, size_t len, const struct nccl_comm *cm, int gpu)
{
	if (!cm)
		snprintf(buf, len, "NCCL (unknown communicator)%s", gpu ? " GPU" : "");
	else
		snprintf(buf, len, "NCCL %s%s%016llx rank %lld/%lld%s", cm->name, cm->name[0] ? " " : "",
		         (unsigned long long)cm->hash, (long long)cm->rank, (long long)cm->nranks,
		         gpu ? " GPU" : "");
}

struct m_track *model_track(struct model *m, enum m_track_kind kind, uint64_t device, int64_t tid,
                            const struct nccl_comm *comm)
{
	uint64_t key = ((uint64_t)kind << 60 | (device & 0xfffffffull) << 32 | (uint32_t)tid) + 1;
	struct m_track *tr = hmap_get(&m->others, key);
	if (tr)
		return tr;
	tr = new_track(m, kind);
	tr->device = device;
	tr->tid = tid;
	tr->sort = tid;
	tr->comm = comm;
	char label[200];
	switch (kind) {
	case MT_STREAM:
		snprintf(label, sizeof label, "stream %lld", (long long)(tid == 0x7ffffffell ? 0 : tid));
		break;
	case MT_STREAM_SYNC:
		snprintf(label, sizeof label, "stream %lld sync", (long long)(tid - GPU_TID_SYNC));
		break;
	case MT_GPU_OTHER:
		snprintf(label, sizeof label, "sync");
		break;
	case MT_MPI: /* device: the OS thread (model_mpi.c) */
		snprintf(label, sizeof label, "MPI (thread %lld)", (long long)device);
		tr->thread = (int64_t)device;
		tr->device = 0;
		tr->sort = 50 + (tid - MPI_TID);
		break;
	default: /* NCCL: tid is the communicator's track number (model_nccl.c) */
		label_comm(label, sizeof label, comm, kind == MT_NCCL_GPU);
		tr->sort = 100 + (tid - NCCL_TID);
		break;
	}
	tr->on_gpu = kind == MT_STREAM || kind == MT_STREAM_SYNC || kind == MT_GPU_OTHER;
	model_track_name(tr, label, strlen(label));
	hmap_put(&m->others, key, tr);
	if (tr->on_gpu)
		model_process(m, device);
	struct m_event ev = {.type = ME_TRACK, .cat = MC_NONE, .track = tr};
	model_emit(m, &ev);
	return tr;
}

void model_process(struct model *m, uint64_t device)
{
	unsigned d = device < MODEL_MAXDEV ? (unsigned)device : MODEL_MAXDEV - 1;
	int want = m->dev_name[d] ? 2 : 1;
	if (m->dev_named[d] >= want)
		return;
	m->dev_named[d] = (uint8_t)want;
	struct m_event ev = {.type = ME_PROCESS, .cat = MC_NONE};
	ev.process.device = device;
	ev.process.name = m->dev_name[d];
	model_emit(m, &ev);
}

void model_flow(struct model *m, enum m_cat cat, const struct m_track *from, uint64_t ts,
                const struct m_track *to, uint64_t to_ts)
{
	struct m_event ev;
	model_head(&ev, ME_FLOW, cat, from, ts, ts, NULL);
	ev.flow.to = to;
	ev.flow.to_ts = to_ts;
	ev.flow.id = ++m->next_flow;
	model_emit(m, &ev);
}

void model_launch_flow(struct model *m, const struct m_track *from, uint64_t ts, uint64_t call_end,
                       const struct m_track *to, uint64_t to_ts, uint64_t to_end, enum m_cat cat,
                       const struct sref *name)
{
	struct m_event ev;
	model_head(&ev, ME_FLOW, MC_LAUNCH, from, ts, ts, NULL);
	ev.flow.to = to;
	ev.flow.to_ts = to_ts;
	ev.flow.id = ++m->next_flow;
	ev.flow.from_end = call_end;
	ev.flow.to_end = to_end;
	ev.flow.to_cat = (uint8_t)cat;
	ev.flow.name = name ? *name : (struct sref){0, "", 0};
	model_emit(m, &ev);
}

const struct m_track *model_gpu_track(struct model *m, uint64_t device, int64_t tid)
{
	enum m_track_kind kind = tid == GPU_TID_NONE                                  ? MT_GPU_OTHER
	                         : tid > GPU_TID_SYNC && tid < GPU_TID_NONE - 1 ? MT_STREAM_SYNC
	                                                                        : MT_STREAM;
	return model_track(m, kind, device, tid, NULL);
}

const struct m_track *model_stream_track(struct model *m, uint64_t device, uint64_t stream)
{
	int64_t tid = gpu_stream_tid(stream);
	return tid == GPU_TID_NONE ? NULL : model_gpu_track(m, device, tid);
}

void model_free_tracks(struct model *m)
{
	for (size_t i = 0; i < m->ntracks; i++) {
		free(m->tracks[i]->name);
		free(m->tracks[i]);
	}
	free(m->tracks);
	for (unsigned d = 0; d < MODEL_MAXDEV; d++)
		free(m->dev_name[d]);
	hmap_free(&m->threads);
	hmap_free(&m->others);
}
