// SPDX-License-Identifier: MIT
/* The events of the model as TrackEvent packets (pftrace_int.h: how the
 * writer is laid out). */
#include "write/pftrace/pftrace.h"
#include "write/pftrace/pftrace_int.h" /* model, NCCL operations, pb, gpu, hmap */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cat_names[C_N] = {"kernel",       "gpu_memcpy",   "gpu_memset", "cuda_sync",
					   "cuda_runtime", "cuda_driver",  "user_annotation",
					   "nccl",         "cuptrace",     "ac2g",
					   "gpu_user_annotation", "cpu_op", "cpu_instant_event", "fwdbwd", "mpi"};
static const char *const ann_names[A_N] = {ANNOTATIONS(X_NAME)};

/* ---- packets */



/* A packet's time: a delta on its track's incremental clock (named unless
 * it is the sequence's default), or, when it would go back in time or the
 * track has no clock, the absolute time on BOOTTIME (the trace's clock). */
static inline char *put_ts(struct pft *p, unsigned clock, char *q, uint64_t ts)
{
	if (clock >= CLOCK_SEQ_DELTA) {
		uint64_t *last = &p->clock_last[clock - CLOCK_SEQ_DELTA];
		if (ts >= *last) {
			if (clock != CLOCK_SEQ_DELTA)
				q = pb_uint(q, TP_CLOCK_ID, clock);
			q = pb_uint(q, TP_TIMESTAMP, ts - *last);
			*last = ts;
			return q;
		}
	}
	q = pb_uint(q, TP_CLOCK_ID, CLOCK_BOOTTIME);
	return pb_uint(q, TP_TIMESTAMP, ts);
}

/* The clock of a track (*id), given on first use: the sequence's default
 * (set up by seq_start) or a new one announced by a ClockSnapshot packet;
 * BOOTTIME once the sequence-scoped ids are used up. */
static unsigned use_clock(struct pft *p, uint8_t *id)
{
	if (*id)
		return *id;
	if (p->next_clock >= CLOCK_SEQ_END)
		return *id = CLOCK_BOOTTIME;
	*id = (uint8_t)p->next_clock++;
	if (*id != CLOCK_SEQ_DELTA) {
		boundary(p);
		size_t at = bare_packet(p->o, p->seq, SEQ_NEEDS_INCREMENTAL_STATE);
		clock_snapshot(p, *id);
		pb_close(p->o, at);
	}
	return *id;
}

/* Starts a packet of a file's sequence: every one needs the sequence's
 * incremental state (its defaults, clock and interned strings). */
static size_t packet(struct pft *p, unsigned clock, int ts_set, uint64_t ts)
{
	struct out *o = p->o;
	boundary(p);
	/* the packet's tag, its length's byte (pb_open) and its head at once */
	out_need(o, 8 * PB_MAX);
	char *q = o->buf + o->len;
	*q++ = (char)(TRACE_PACKET << 3 | PB_LEN);
	size_t at = (size_t)(q++ - o->buf);
	if (ts_set)
		q = put_ts(p, clock, q, ts);
	q = pb_uint(q, TP_SEQ_ID, p->seq);
	q = pb_uint(q, TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	o->len = (size_t)(q - o->buf);
	return at;
}

static void announce(struct pft *p, const struct m_track *tr, unsigned lane)
{
	struct ptrack *pt = ptrack(p, tr);
	struct out *o = p->o;
	if (lane) {
		if (pt->l.announced & 1u << (lane - 1))
			return;
		pt->l.announced |= 1u << (lane - 1);
		char name[600];
		int n;
		if (tr->name_len)
			n = snprintf(name, sizeof name, "%.*s [%u]", (int)(tr->name_len < 500 ? tr->name_len : 500),
			             tr->name, lane + 1);
		else
			n = snprintf(name, sizeof name, "thread %lld [%u]", (long long)tr->tid, lane + 1);
		boundary(p);
		descriptor(o, p->seq, track_uuid(p, tr, lane), track_proc_uuid(p, tr), name, (size_t)n,
		           tr->sort);
		return;
	}
	pt->announced = 1;
	boundary(p);
	if (tr->kind != MT_THREAD) {
		descriptor(o, p->seq, track_uuid(p, tr, 0), track_proc_uuid(p, tr), tr->name,
		           tr->name_len, tr->sort);
		return;
	}
	size_t at = bare_packet(o, p->seq, SEQ_NEEDS_INCREMENTAL_STATE);
	size_t td = pb_open(o, TP_TRACK_DESCRIPTOR);
	pb_put_uint(o, TD_UUID, track_uuid(p, tr, 0));
	pb_put_uint(o, TD_PARENT, track_proc_uuid(p, tr));
	size_t th = pb_open(o, TD_THREAD);
	pb_put_uint(o, THD_PID, p->t->pid);
	pb_put_uint(o, THD_TID, (uint64_t)tr->tid);
	if (tr->name_len)
		pf_put_text(o, THD_NAME, tr->name, tr->name_len);
	pb_close(o, th);
	pb_put_uint(o, TD_SIBLING_RANK, (uint64_t)tr->sort);
	pb_close(o, td);
	pb_close(o, at);
}

/* A track handed by the model (ME_TRACK): a CPU thread's comes at the end
 * of the file, named, after its events and lanes were announced without a
 * name; its descriptor and those of all its lanes (the file's, whichever
 * share used them) are written again with the name, which Perfetto takes
 * for the uuid, as the JSON's thread_name. */
static void named(struct pft *p, const struct m_track *tr)
{
	announce(p, tr, 0);
	if (tr->kind != MT_THREAD || !tr->name_len)
		return;
	struct ptrack *pt = ptrack(p, tr);
	for (unsigned lane = 1; lane <= pt->l.n; lane++) {
		pt->l.announced &= ~(1u << (lane - 1));
		announce(p, tr, lane);
	}
}

/* The uuid of a track as this share writes it (announced on first use). */
static inline uint64_t use_track(struct pft *p, const struct m_track *tr, unsigned lane)
{
	if (lane || !ptrack(p, tr)->announced)
		announce(p, tr, lane);
	return track_uuid(p, tr, lane);
}

static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return hmap_mix(h) | 1;
}

/* What an event needs interned: its name (iid 0: written inline), its
 * category, its arg names. */
struct need {
	uint64_t name_iid;
	const char *name;
	size_t name_len;
	int new_name;
	unsigned cat;
};

/* kind: 0 a name by its string id, 1 a kernel's demangled name by the raw name's id */
static void need_name(struct pft *p, struct need *nd, uint64_t sid, unsigned kind, const char *s,
                      size_t n)
{
	nd->name = s, nd->name_len = n, nd->new_name = 0;
	struct hmap *m = sid >= CT_SID_FIRST ? &p->by_sid : &p->by_text;
	uint64_t key = sid >= CT_SID_FIRST ? sid << 1 | kind : text_hash(s, n);
	void *v = hmap_get(m, key);
	if (v) {
		nd->name_iid = (uint64_t)(uintptr_t)v;
		return;
	}
	if (p->next_iid > NAMES_MAX) {
		nd->name_iid = 0;
		return;
	}
	nd->name_iid = p->next_iid++;
	nd->new_name = 1;
	hmap_put(m, key, (void *)(uintptr_t)nd->name_iid);
}

static void interned_entry(struct out *o, unsigned field, uint64_t iid, const char *s, size_t n)
{
	size_t at = pb_open(o, field);
	pb_put_uint(o, IID, iid);
	pf_put_text(o, IID_NAME, s, n);
	pb_close(o, at);
}

/* Starts an event's packet: interned data it needs, then its TrackEvent
 * opened (returned: where its length goes). */
static size_t event_start(struct pft *p, unsigned clock, uint64_t ts, const struct need *nd,
                          size_t *pkt)
{
	struct out *o = p->o;
	*pkt = packet(p, clock, 1, ts);
	int anns = !p->anns_done; /* all at the first event */
	int cat = nd->cat < C_N && !(p->cats_done & BIT(nd->cat));
	if (nd->new_name || anns || cat) {
		size_t id = pb_open(o, TP_INTERNED);
		if (cat)
			interned_entry(o, ID_CATEGORIES, nd->cat + 1, cat_names[nd->cat],
			               strlen(cat_names[nd->cat]));
		if (nd->new_name)
			interned_entry(o, ID_NAMES, nd->name_iid, nd->name, nd->name_len);
		for (unsigned a = 0; anns && a < A_N; a++)
			interned_entry(o, ID_ANNOTATION_NAMES, a + 1, ann_names[a], strlen(ann_names[a]));
		pb_close(o, id);
		p->anns_done = 1;
		if (cat)
			p->cats_done |= BIT(nd->cat);
	}
	return pb_open(o, TP_TRACK_EVENT);
}

/* type, track, name, category of an event */
static void event_head(struct pft *p, unsigned type, uint64_t uuid, const struct need *nd)
{
	struct out *o = p->o;
	out_need(o, 6 * PB_MAX);
	char *q = o->buf + o->len;
	q = pb_uint(q, TE_TYPE, type);
	if (uuid != p->def_track)
		q = pb_uint(q, TE_TRACK, uuid);
	if (nd->name_iid)
		q = pb_uint(q, TE_NAME_IID, nd->name_iid);
	if (nd->cat < C_N)
		q = pb_uint(q, TE_CATEGORY_IIDS, nd->cat + 1);
	o->len = (size_t)(q - o->buf);
	if (!nd->name_iid && nd->name)
		pf_put_text(o, TE_NAME, nd->name, nd->name_len);
}

static void end_packet(struct pft *p, unsigned clock, uint64_t ts, uint64_t uuid)
{
	struct out *o = p->o;
	out_need(o, 8 * PB_MAX);
	char *q = o->buf + o->len, *len = q + 1;
	*q = (char)(TRACE_PACKET << 3 | PB_LEN);
	q += 2;
	q = put_ts(p, clock, q, ts);
	q = pb_uint(q, TP_SEQ_ID, p->seq);
	q = pb_uint(q, TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	*q++ = (char)(TP_TRACK_EVENT << 3 | PB_LEN);
	char *tl = q++;
	q = pb_uint(q, TE_TYPE, TYPE_SLICE_END);
	if (uuid != p->def_track)
		q = pb_uint(q, TE_TRACK, uuid);
	*tl = (char)(q - tl - 1);
	*len = (char)(q - len - 1); /* < 64 bytes */
	o->len = (size_t)(q - o->buf);
}

void close_open_slice(struct pft *p)
{
	p->open.on = 0;
	end_packet(p, p->open.clock, ts_of(p, p->open.end), p->open.uuid);
}

/* Ends an event's packet; a slice stays open for flows until the next packet. */
static void event_end(struct pft *p, size_t pkt, size_t te, const struct m_event *ev, uint64_t uuid,
                      unsigned clock, int slice)
{
	struct out *o = p->o;
	size_t g = pb_close(o, te);
	unsigned te_size = 1 + (unsigned)g;
	size_t g2 = pb_close(o, pkt);
	if (!slice)
		return;
	p->open.on = 1;
	p->open.track = ev->track;
	p->open.ts = ev->ts, p->open.end = ev->end > ev->ts ? ev->end : ev->ts;
	p->open.uuid = uuid;
	p->open.clock = (uint8_t)clock;
	p->open.pkt_at = pkt, p->open.pkt_size = 1 + (unsigned)g2;
	p->open.te_at = te + g2, p->open.te_size = te_size;
}

/* ---- events */

static void slice(struct pft *p, const struct m_event *ev, unsigned lane, struct need *nd,
                  void (*args)(struct pft *, const struct m_event *))
{
	uint64_t uuid = use_track(p, ev->track, lane);
	unsigned clock = use_clock(p, &ptrack(p, ev->track)->clock);
	size_t pkt, te = event_start(p, clock, ts_of(p, ev->ts), nd, &pkt);
	event_head(p, TYPE_SLICE_BEGIN, uuid, nd);
	if (args)
		args(p, ev);
	event_end(p, pkt, te, ev, uuid, clock, 1);
}

static void instant(struct pft *p, unsigned clock, uint64_t ts, uint64_t uuid, struct need *nd,
                    const struct m_event *ev, void (*args)(struct pft *, const struct m_event *))
{
	size_t pkt, te = event_start(p, clock, ts_of(p, ts), nd, &pkt);
	event_head(p, TYPE_INSTANT, uuid, nd);
	if (args)
		args(p, ev);
	event_end(p, pkt, te, NULL, uuid, clock, 0);
}

static void drops(struct pft *p, const struct m_event *ev)
{
	char name[64];
	int n = snprintf(name, sizeof name, "events dropped: %llu", (unsigned long long)ev->dropped);
	struct need nd = {.cat = C_CUPTRACE};
	need_name(p, &nd, CT_SREF_INLINE, 0, name, (size_t)n);
	uint64_t uuid = proc_uuid(p->t->pid);
	size_t pkt, te = event_start(p, CLOCK_BOOTTIME, ts_of(p, ev->ts), &nd, &pkt);
	event_head(p, TYPE_INSTANT, uuid, &nd);
	struct out *o = p->o;
	const struct ct_file *f = &p->t->f;
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (!f->drops[k] || !s)
			continue;
		size_t at = pb_open(o, TE_ANNOTATIONS);
		pb_put_str(o, DA_NAME, s->name);
		pb_put_uint(o, DA_UINT, f->drops[k]);
		pb_close(o, at);
	}
	event_end(p, pkt, te, NULL, uuid, CLOCK_BOOTTIME, 0);
}

/* One end of a flow: added to the slice just written when it is that
 * slice's, else an instant of its own. */
static void flow_end(struct pft *p, const struct m_track *tr, uint64_t ts, uint64_t id, int term,
                     unsigned kind)
{
	struct out *o = p->o;
	if (p->open.on && p->open.track == tr && p->open.ts == ts) {
		pb_put_fixed64(o, term ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, id);
		size_t g = pb_relen(o, p->open.te_at, p->open.te_size);
		p->open.te_size += (unsigned)g;
		size_t g2 = pb_relen(o, p->open.pkt_at, p->open.pkt_size);
		p->open.pkt_size += (unsigned)g2;
		p->open.te_at += g2;
		return;
	}
	struct need nd = {.cat = kind == MC_NCCL_FLOW ? C_NCCL
	                          : kind == MC_FWDBWD ? C_FWDBWD
	                          : kind == MC_MPI_FLOW ? C_MPI
	                                                : C_AC2G};
	const char *name = cat_names[nd.cat];
	need_name(p, &nd, CT_SREF_INLINE, 0, name, strlen(name));
	uint64_t uuid = use_track(p, tr, 0);
	unsigned clock = use_clock(p, &ptrack(p, tr)->flow_clock);
	size_t pkt, te = event_start(p, clock, ts_of(p, ts), &nd, &pkt);
	event_head(p, TYPE_INSTANT, uuid, &nd);
	pb_put_fixed64(o, term ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, id);
	event_end(p, pkt, te, NULL, uuid, clock, 0);
}

static void flow(struct pft *p, const struct m_event *ev)
{
	uint64_t id = (uint64_t)p->t->index << 36 | (ev->flow.id & ((1ull << 36) - 1));
	unsigned kind = ev->cat;
	/* the end that is the slice just written first, while it is open */
	if (p->open.on && p->open.track == ev->flow.to && p->open.ts == ev->flow.to_ts) {
		flow_end(p, ev->flow.to, ev->flow.to_ts, id, 1, kind);
		flow_end(p, ev->track, ev->ts, id, 0, kind);
	} else {
		flow_end(p, ev->track, ev->ts, id, 0, kind);
		flow_end(p, ev->flow.to, ev->flow.to_ts, id, 1, kind);
	}
}

static void gpu_process(struct pft *p, const struct m_event *ev)
{
	uint64_t dev = ev->process.device;
	const char *gpu = ev->process.name;
	char label[512];
	snprintf(label, sizeof label, "rank %lld GPU %llu%s%s%s",
	         (long long)p->t->shown_rank, (unsigned long long)dev, gpu ? " (" : "",
	         gpu ? gpu : "", gpu ? ")" : "");
	boundary(p);
	process_descriptor(p->o, p->seq, SEQ_NEEDS_INCREMENTAL_STATE, gpu_pid(p, dev), label,
	                   (int64_t)p->t->index * 16 + 1 + (int64_t)(dev < 14 ? dev : 14));
}

static void counter(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	uint64_t dev = ev->counter.device, uuid = counter_uuid(p, dev);
	if (dev >= 64 || !(p->devs_done & BIT(dev))) {
		if (dev < 64)
			p->devs_done |= BIT(dev);
		boundary(p);
		size_t at = bare_packet(o, p->seq, SEQ_NEEDS_INCREMENTAL_STATE);
		size_t td = pb_open(o, TP_TRACK_DESCRIPTOR);
		pb_put_uint(o, TD_UUID, uuid);
		pb_put_uint(o, TD_PARENT, proc_uuid(gpu_pid(p, dev)));
		pb_put_str(o, TD_NAME, "GPU memory used");
		size_t cd = pb_open(o, TD_COUNTER);
		pb_put_uint(o, CD_UNIT, UNIT_SIZE_BYTES);
		pb_close(o, cd);
		pb_close(o, td);
		pb_close(o, at);
	}
	struct need nd = {.cat = C_N};
	unsigned clock = use_clock(p, &p->counter_clock);
	size_t pkt, te = event_start(p, clock, ts_of(p, ev->ts), &nd, &pkt);
	pb_put_uint(o, TE_TYPE, TYPE_COUNTER);
	pb_put_uint(o, TE_TRACK, uuid); /* never the default (a thread's) */
	pb_put_uint(o, TE_COUNTER_VALUE, (uint64_t)ev->counter.value);
	event_end(p, pkt, te, NULL, uuid, clock, 0);
}

static void span_event(struct pft *p, const struct m_event *ev, unsigned lane)
{
	const struct span *s = ev->span;
	/* the NVTX GPU projection: Kineto's category, as in the JSON */
	struct need nd = {.cat = ev->cat == MC_GPU_ANNOTATION ? C_GPU_USER : C_USER};
	switch (s->kind) {
	case SP_RANGE:
		need_name(p, &nd, s->name.sid, 0, s->name.s, s->name.len);
		slice(p, ev, lane, &nd, span_event_args);
		break;
	case SP_ASYNC: {
		need_name(p, &nd, s->name.sid, 0, s->name.s, s->name.len);
		uint64_t uuid = async_uuid(p, lane);
		if (!(p->async.announced & 1u << lane)) {
			p->async.announced |= 1u << lane;
			char name[64];
			int n = lane ? snprintf(name, sizeof name, "NVTX start/end ranges [%u]", lane + 1)
			             : snprintf(name, sizeof name, "NVTX start/end ranges");
			boundary(p);
			descriptor(p->o, p->seq, uuid, proc_uuid(p->t->pid), name, (size_t)n,
			           (int64_t)1 << 30);
		}
		unsigned clock = use_clock(p, &p->async_clock);
		size_t pkt, te = event_start(p, clock, ts_of(p, s->ts), &nd, &pkt);
		event_head(p, TYPE_SLICE_BEGIN, uuid, &nd);
		span_args(p, s);
		pb_close(p->o, te);
		pb_close(p->o, pkt);
		end_packet(p, clock, ts_of(p, s->end > s->ts ? s->end : s->ts), uuid);
		break;
	}
	case SP_MARK:
		need_name(p, &nd, s->name.sid, 0, s->name.s, s->name.len);
		uint64_t uuid = use_track(p, ev->track, 0);
		instant(p, use_clock(p, &ptrack(p, ev->track)->clock), s->ts, uuid, &nd, ev,
		        span_event_args);
		break;
	case SP_STEP: {
		char name[48];
		int n = snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)s->id);
		need_name(p, &nd, CT_SREF_INLINE, 0, name, (size_t)n);
		slice(p, ev, lane, &nd, NULL);
		break;
	}
	case SP_CAPTURE:
		nd.cat = C_CUPTRACE;
		need_name(p, &nd, CT_SREF_INLINE, 0, s->id ? "capture on" : "capture off",
		          s->id ? 10 : 11);
		instant(p, CLOCK_BOOTTIME, s->ts, proc_uuid(p->t->pid), &nd, NULL, NULL);
		break;
	default:
		break;
	}
}

static void nccl_event(struct pft *p, const struct m_event *ev, unsigned lane)
{
	struct need nd = {.cat = C_NCCL};
	char name[64];
	const char *nm = m_nccl_name(ev, name, sizeof name);
	need_name(p, &nd, CT_SREF_INLINE, 0, nm, strlen(nm));
	slice(p, ev, lane, &nd, nccl_args);
}

void pftrace_event(void *ctx, const struct m_event *ev)
{
	struct pft *p = ctx;
	unsigned lane = 0;
	/* lanes: chosen from every event, so that all shares choose alike */
	if (ev->type == ME_SLICE)
		lane = slice_lane(ptrack(p, ev->track), ev->ts, ev->end > ev->ts ? ev->end : ev->ts);
	else if (ev->type == ME_ASYNC)
		lane = lane_pick(&p->async, ev->span->ts, ev->span->end);
	if (!*p->mine)
		return;
	struct need nd = {0};
	switch (ev->cat) {
	case MC_KERNEL:
		nd.cat = C_KERNEL;
		need_name(p, &nd, ev->gpu.name.sid, 1, ev->gpu.name.s, ev->gpu.name.len);
		slice(p, ev, lane, &nd, kernel_args);
		break;
	case MC_RUNTIME:
	case MC_DRIVER:
		nd.cat = ev->cat == MC_DRIVER ? C_DRIVER : C_RUNTIME;
		need_name(p, &nd, ev->api.name.sid, 0, ev->api.name.s, ev->api.name.len);
		slice(p, ev, lane, &nd, api_args);
		break;
	case MC_MEMCPY: {
		char name[128];
		int n = snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", gpu_copy_kind(ev->gpu.kind),
		                 gpu_memory_kind(ev->gpu.src_kind), gpu_memory_kind(ev->gpu.dst_kind));
		nd.cat = C_MEMCPY;
		need_name(p, &nd, CT_SREF_INLINE, 0, name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1);
		slice(p, ev, lane, &nd, transfer_args);
		break;
	}
	case MC_MEMSET: {
		char name[64];
		int n = snprintf(name, sizeof name, "Memset (%s)", gpu_memory_kind(ev->gpu.mem_kind));
		nd.cat = C_MEMSET;
		need_name(p, &nd, CT_SREF_INLINE, 0, name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1);
		slice(p, ev, lane, &nd, transfer_args);
		break;
	}
	case MC_SYNC: {
		const char *name = gpu_sync_name(ev->gpu.sync_type);
		nd.cat = C_SYNC;
		need_name(p, &nd, CT_SREF_INLINE, 0, name, strlen(name));
		slice(p, ev, lane, &nd, sync_args);
		break;
	}
	case MC_LAUNCH:
	case MC_NCCL_FLOW:
	case MC_FWDBWD:
	case MC_MPI_FLOW:
		flow(p, ev);
		break;
	case MC_MPI:
		nd.cat = C_MPI;
		need_name(p, &nd, ev->mpi->func.sid, 0, ev->mpi->func.s, ev->mpi->func.len);
		slice(p, ev, lane, &nd, mpi_args);
		break;
	case MC_MPI_HANG:
		nd.cat = C_MPI;
		need_name(p, &nd, CT_SREF_INLINE, 0, "hang_suspected", 14);
		instant(p, use_clock(p, &ptrack(p, ev->track)->clock), ev->ts,
		        use_track(p, ev->track, 0), &nd, ev, mpi_args);
		break;
	case MC_MPI_COMM: /* said in the calls' args */
		break;
	case MC_NCCL:
	case MC_NCCL_GROUP:
	case MC_NCCL_GPU:
		nccl_event(p, ev, lane);
		break;
	case MC_GPU_MEMORY:
		counter(p, ev);
		break;
	case MC_DROPS:
		drops(p, ev);
		break;
	case MC_HANG: /* the watchdog's hang_suspected, an instant as in the JSON */
		nd.cat = C_NCCL;
		need_name(p, &nd, CT_SREF_INLINE, 0, "hang_suspected", 14);
		instant(p, use_clock(p, &ptrack(p, ev->track)->clock), ev->ts,
		        use_track(p, ev->track, 0), &nd, ev, hang_args);
		break;
	case MC_NONE:
		if (ev->type == ME_PROCESS)
			gpu_process(p, ev);
		else
			named(p, ev->track);
		break;
	case MC_TORCH_OP:
	case MC_TORCH_SCOPE: /* as in the JSON: cpu_op, user_annotation */
		nd.cat = ev->cat == MC_TORCH_OP ? C_CPU_OP : C_USER;
		need_name(p, &nd, ev->torch.name.sid, 0, ev->torch.name.s, ev->torch.name.len);
		slice(p, ev, lane, &nd, torch_args);
		break;
	case MC_TORCH_MEM: /* [memory] instants; the counter is the JSON's alone */
		if (ev->type != ME_INSTANT)
			break;
		nd.cat = C_INSTANT;
		need_name(p, &nd, CT_SREF_INLINE, 0, "[memory]", 8);
		instant(p, use_clock(p, &ptrack(p, ev->track)->clock), ev->ts,
		        use_track(p, ev->track, 0), &nd, ev, tmem_args);
		break;
	default:
		span_event(p, ev, lane);
		break;
	}
}
