/* The model's events as rows of Nsight Systems' export tables (and of our
 * own CUPTRACE_* tables where nsys has none): a consumer that formats
 * only. Times are ns on the job's timeline (event ts + the file's offset,
 * as the Chrome output's base); globalPid = file index << 48 | pid << 24
 * and globalTid = globalPid | tid, which nsys's own decoding
 * (globalTid / 0x1000000 % 0x1000000 = pid, globalTid % 0x1000000 = tid)
 * reads back. docs/SQLITE.md lists every table and column. */
#include "out/sqlite.h"
#include "model/model.h"
#include "out/sqlite_db.h"
#include "read/gpu.h"
#include "util/hmap.h"
#include "util/progress.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	const struct gpu_fields *gf;
	int64_t off, gpid;
	struct hmap knames;  /* raw kernel name sid -> struct knames */
	struct hmap anames;  /* API name sid -> StringIds id */
	struct hmap domains; /* StringIds id of a domain's name -> domainId */
	struct hmap cats;    /* domainId << 32 | category + 1: category row written */
	struct hmap threads; /* tid + 1: ThreadNames row written */
	int64_t ndomains;
	struct gpu_info gpus[MAXGPU];
	unsigned ngpus;
	uint64_t dropped, events;
};

/* ---- names */

void sqlite_short_name(const char *s, size_t n, size_t *off, size_t *len)
{
	static const char anon[] = "(anonymous namespace)";
	size_t end = n;
	int angle = 0;
	/* the parameter list: the first '(' outside template arguments that
	 * does not open "(anonymous namespace)" */
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<')
			angle++;
		else if (s[i] == '>' && angle > 0)
			angle--;
		else if (s[i] == '(' && !angle) {
			if (n - i >= sizeof anon - 1 && !memcmp(s + i, anon, sizeof anon - 1)) {
				i += sizeof anon - 2;
				continue;
			}
			end = i;
			break;
		}
	}
	if (end == 0) {
		*off = 0, *len = n;
		return;
	}
	/* its template arguments */
	size_t e = end;
	while (e > 0 && s[e - 1] == ' ')
		e--;
	if (e > 0 && s[e - 1] == '>') {
		int d = 0;
		while (e > 0) {
			e--;
			if (s[e] == '>')
				d++;
			else if (s[e] == '<' && --d == 0)
				break;
		}
	}
	/* its scopes and return type */
	size_t b = e;
	angle = 0;
	while (b > 0) {
		char c = s[b - 1];
		if (c == '>')
			angle++;
		else if (c == '<')
			angle--;
		else if (!angle && (c == ' ' || c == ':' || c == '*' || c == '&'))
			break;
		b--;
	}
	if (e <= b) {
		*off = 0, *len = n;
		return;
	}
	*off = b, *len = e - b;
}

static int64_t sref_id(struct sq *q, struct hmap *m, const struct sref *r)
{
	if (r->sid >= CT_SID_FIRST) {
		void *v = hmap_get(m, r->sid);
		if (v)
			return (int64_t)(intptr_t)v;
	}
	int64_t id = sdb_string(q->db, r->s, r->len);
	if (r->sid >= CT_SID_FIRST)
		hmap_put(m, r->sid, (void *)(intptr_t)id);
	return id;
}

static const struct knames *kernel_names(struct sq *q, const struct m_event *ev,
                                         struct knames *tmp)
{
	const struct m_gpu *k = &ev->gpu;
	struct knames *kn = k->name.sid >= CT_SID_FIRST ? hmap_get(&q->knames, k->name.sid) : NULL;
	if (kn)
		return kn;
	kn = k->name.sid >= CT_SID_FIRST ? xcalloc(1, sizeof *kn) : tmp;
	kn->dm = sdb_string(q->db, k->name.s, k->name.len);
	size_t off, len;
	sqlite_short_name(k->name.s, k->name.len, &off, &len);
	kn->sh = sdb_string(q->db, k->name.s + off, len);
	unsigned f = q->gf->k.name;
	kn->mg = ev->rec ? sdb_string(q->db, ev->rec->s[f], ev->rec->sl[f]) : kn->dm;
	if (kn != tmp)
		hmap_put(&q->knames, k->name.sid, kn);
	return kn;
}

/* ---- rows */

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

static struct gpu_info *gpu_of(struct sq *q, uint64_t dev)
{
	for (unsigned i = 0; i < q->ngpus; i++)
		if (q->gpus[i].dev == dev)
			return &q->gpus[i];
	if (q->ngpus == MAXGPU)
		return NULL;
	struct gpu_info *g = &q->gpus[q->ngpus++];
	memset(g, 0, sizeof *g);
	g->dev = dev;
	return g;
}

static void gpu_common(struct sq *q, struct sdb_row s, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, g->device);
	SB_I(s, 4, g->context);
	SB_I(s, 5, id32(g->stream));
	SB_I(s, 6, g->corr);
	SB_I(s, 7, q->gpid);
}

static void kernel(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct knames tmp;
	const struct knames *kn = kernel_names(q, ev, &tmp);
	struct sdb_row s = sdb_ins(q->db, T_KERNEL);
	gpu_common(q, s, ev);
	SB_I(s, 8, kn->dm);
	SB_I(s, 9, kn->sh);
	SB_I(s, 10, kn->mg);
	SB_I(s, 11, g->regs);
	for (int i = 0; i < 3; i++) {
		SB_I(s, 12 + i, g->grid[i]);
		SB_I(s, 15 + i, g->block[i]);
	}
	SB_I(s, 18, g->ssmem);
	SB_I(s, 19, g->dsmem);
	if (g->graph)
		SB_I(s, 20, g->graph);
	else
		SB_NULL(s, 20);
	if (g->node)
		SB_I(s, 21, g->node);
	else
		SB_NULL(s, 21);
	sdb_row(q->db, T_KERNEL);
	struct gpu_info *gi = gpu_of(q, g->device);
	if (gi && g->sms)
		gi->sms = g->sms, gi->warp = g->warp;
}

static void memcpy_row(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_MEMCPY);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->bytes);
	SB_I(s, 9, g->kind);
	SB_I(s, 10, g->src_kind);
	SB_I(s, 11, g->dst_kind);
	SB_I(s, 12, id32(g->src_dev));
	SB_I(s, 13, id32(g->dst_dev));
	sdb_row(q->db, T_MEMCPY);
}

static void memset_row(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_MEMSET);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->value);
	SB_I(s, 9, g->bytes);
	SB_I(s, 10, g->mem_kind);
	sdb_row(q->db, T_MEMSET);
}

static void sync_row(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_SYNC);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->sync_type);
	SB_I(s, 9, id32(g->event));
	sdb_row(q->db, T_SYNC);
}

static void api_row(struct sq *q, const struct m_event *ev)
{
	enum sdb_table t = ev->cat == MC_DRIVER ? T_DRIVER : T_RUNTIME;
	struct sdb_row s = sdb_ins(q->db, t);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, gtid(q, ev->track->tid));
	SB_I(s, 4, ev->api.corr);
	SB_I(s, 5, sref_id(q, &q->anames, &ev->api.name));
	SB_I(s, 6, ev->api.status);
	SB_I(s, 7, ev->api.cbid);
	sdb_row(q->db, t);
}

/* ---- NVTX */

enum { NVTX_CATEGORY = 33, NVTX_MARK = 34, NVTX_PUSHPOP = 59, NVTX_STARTEND = 60,
       NVTX_DOMAIN = 75 };

static void nvtx_bind_rest_null(struct sdb_row s, int from)
{
	for (int i = from; i <= 17; i++)
		SB_NULL(s, i);
}

/* A definition row (domain or category name). */
static void nvtx_def(struct sq *q, int type, uint64_t ts, int64_t tid, int64_t domain,
                     uint64_t category, const struct sref *name)
{
	struct sdb_row s = sdb_ins(q->db, T_NVTX);
	SB_I(s, 1, at(q, ts));
	SB_NULL(s, 2);
	SB_I(s, 3, type);
	SB_NULL(s, 4);
	if (type == NVTX_CATEGORY)
		SB_I(s, 5, category);
	else
		SB_NULL(s, 5);
	SB_NULL(s, 6);
	SB_T(s, 7, name->len ? name->s : "", name->len);
	SB_I(s, 8, gtid(q, tid));
	SB_NULL(s, 9);
	SB_NULL(s, 10);
	SB_I(s, 11, domain);
	nvtx_bind_rest_null(s, 12);
	sdb_row(q->db, T_NVTX);
}

static int64_t domain_of(struct sq *q, const struct span *sp)
{
	if (sp->domain.sid == CT_SREF_NONE || !sp->domain.len)
		return 0;
	int64_t sid = sdb_string(q->db, sp->domain.s, sp->domain.len);
	void *v = hmap_get(&q->domains, (uint64_t)sid);
	if (v)
		return (int64_t)(intptr_t)v;
	int64_t id = ++q->ndomains;
	hmap_put(&q->domains, (uint64_t)sid, (void *)(intptr_t)id);
	nvtx_def(q, NVTX_DOMAIN, sp->ts, sp->tid, id, 0, &sp->domain);
	return id;
}

static void payload(struct sdb_row s, uint64_t type, uint64_t v)
{
	nvtx_bind_rest_null(s, 12);
	switch (type) {
	case 1: /* NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 */
		SB_I(s, 12, v);
		break;
	case 2: /* INT64 */
		SB_I(s, 13, v);
		break;
	case 3: { /* DOUBLE */
		double d;
		memcpy(&d, &v, sizeof d);
		sdb_double(s, 14, d);
		break;
	}
	case 4: /* UNSIGNED_INT32 */
		SB_I(s, 15, (uint32_t)v);
		break;
	case 5: /* INT32 */
		SB_I(s, 16, (int32_t)(uint32_t)v);
		break;
	case 6: { /* FLOAT */
		float f;
		uint32_t u = (uint32_t)v;
		memcpy(&f, &u, sizeof f);
		sdb_double(s, 17, f);
		break;
	}
	}
}

static void nvtx_row(struct sq *q, const struct m_event *ev)
{
	const struct span *sp = ev->span;
	int64_t domain = domain_of(q, sp);
	if (sp->category && sp->category_name.sid != CT_SREF_NONE) {
		uint64_t key = ((uint64_t)domain << 32 | (sp->category & 0xffffffffu)) + 1;
		if (!hmap_get(&q->cats, key)) {
			hmap_put(&q->cats, key, (void *)1);
			nvtx_def(q, NVTX_CATEGORY, sp->ts, sp->tid, domain, sp->category,
			         &sp->category_name);
		}
	}
	int type = ev->type == ME_INSTANT ? NVTX_MARK : ev->type == ME_ASYNC ? NVTX_STARTEND
	                                                                     : NVTX_PUSHPOP;
	struct sdb_row s = sdb_ins(q->db, T_NVTX);
	SB_I(s, 1, at(q, sp->ts));
	if (type == NVTX_MARK)
		SB_NULL(s, 2);
	else
		SB_I(s, 2, at(q, sp->end));
	SB_I(s, 3, type);
	if (type == NVTX_STARTEND)
		SB_I(s, 4, sp->id);
	else
		SB_NULL(s, 4);
	if (sp->category)
		SB_I(s, 5, sp->category);
	else
		SB_NULL(s, 5);
	if (sp->color & CT_COLOR_SET)
		SB_I(s, 6, (uint32_t)sp->color);
	else
		SB_NULL(s, 6);
	if (sp->name.len)
		SB_T(s, 7, sp->name.s, sp->name.len);
	else
		SB_NULL(s, 7);
	SB_I(s, 8, gtid(q, sp->tid));
	if (type == NVTX_STARTEND)
		SB_I(s, 9, gtid(q, sp->end_tid));
	else
		SB_NULL(s, 9);
	SB_NULL(s, 10);
	SB_I(s, 11, domain);
	payload(s, sp->ptype, sp->payload);
	sdb_row(q->db, T_NVTX);
}

static void step_row(struct sq *q, const struct m_event *ev)
{
	const struct span *sp = ev->span;
	struct sdb_row s = sdb_ins(q->db, T_STEPS);
	SB_I(s, 1, q->gpid);
	if (q->t->rank >= 0)
		SB_I(s, 2, q->t->rank);
	else
		SB_NULL(s, 2);
	SB_I(s, 3, sp->id);
	SB_I(s, 4, at(q, sp->ts));
	SB_I(s, 5, at(q, sp->end));
	SB_I(s, 6, gtid(q, sp->tid));
	sdb_row(q->db, T_STEPS);
}

/* ---- NCCL */

static void opt_ts(struct sq *q, struct sdb_row s, int i, uint64_t ts)
{
	if (ts)
		SB_I(s, i, at(q, ts));
	else
		SB_NULL(s, i);
}

static void opt_text(struct sdb_row s, int i, const char *v)
{
	if (v[0])
		SB_T(s, i, v, strlen(v));
	else
		SB_NULL(s, i);
}

static void opt_i(struct sdb_row s, int i, int64_t v, int have)
{
	if (have)
		SB_I(s, i, v);
	else
		SB_NULL(s, i);
}

static void nccl_row(struct sq *q, const struct m_event *ev)
{
	const struct nccl_op *op = ev->nccl.op;
	const struct nccl_plan *p = ev->nccl.plan;
	const struct nccl_comm *c = op->comm;
	struct sdb_row s = sdb_ins(q->db, T_NCCL);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, q->gpid);
	SB_I(s, 4, gtid(q, op->tid));
	opt_i(s, 5, q->t->rank, q->t->rank >= 0);
	SB_I(s, 6, sdb_string(q->db, op->func, strlen(op->func)));
	SB_I(s, 7, op->id);
	opt_i(s, 8, c ? (int64_t)c->hash : 0, c != NULL);
	if (c)
		opt_text(s, 9, c->name);
	else
		SB_NULL(s, 9);
	opt_i(s, 10, op->rank, op->rank >= 0);
	opt_i(s, 11, c ? c->nranks : 0, c != NULL);
	opt_i(s, 12, c ? c->nnodes : 0, c != NULL);
	opt_i(s, 13, (int64_t)op->seq, op->has_seq);
	SB_I(s, 14, op->count);
	opt_text(s, 15, op->datatype);
	opt_i(s, 16, op->type_size, op->type_size != 0);
	SB_I(s, 17, op->bytes);
	opt_i(s, 18, op->root, op->root >= 0);
	opt_i(s, 19, op->peer, op->peer >= 0);
	SB_I(s, 20, op->is_p2p);
	opt_text(s, 21, op->algo);
	opt_text(s, 22, op->proto);
	SB_I(s, 23, op->channels);
	opt_i(s, 24, op->warps, op->warps != 0);
	opt_i(s, 25, (int64_t)op->stream, op->stream != 0);
	opt_ts(q, s, 26, op->enqueue_start);
	opt_ts(q, s, 27, op->enqueue_end);
	int gpu = op->gpu_start && op->gpu_end >= op->gpu_start;
	opt_ts(q, s, 28, gpu ? op->gpu_start : 0);
	opt_ts(q, s, 29, gpu ? op->gpu_end : 0);
	opt_i(s, 30, op->gpu_channels, gpu);
	opt_i(s, 31, (int64_t)op->group, op->group != 0);
	opt_ts(q, s, 32, op->group ? op->group_start : 0);
	opt_ts(q, s, 33, op->group ? op->group_end : 0);
	opt_i(s, 34, op->group_size, op->group != 0);
	opt_i(s, 35, op->group_depth, op->group != 0);
	opt_i(s, 36, op->step, op->step >= 0);
	int k = p && p->has_kernel;
	opt_i(s, 37, k ? (int64_t)p->kernel.device : 0, k);
	opt_i(s, 38, k ? (int64_t)p->kernel.correlation : 0, k);
	opt_ts(q, s, 39, k ? p->kernel.ts : 0);
	opt_ts(q, s, 40, k ? p->kernel.end : 0);
	opt_i(s, 41, k ? id32(p->kernel.stream) : 0, k);
	sdb_row(q->db, T_NCCL);
}

/* ---- the consumer */

static void thread_row(struct sq *q, const struct m_track *tr)
{
	if (!tr->name_len || hmap_get(&q->threads, (uint64_t)tr->tid + 1))
		return;
	hmap_put(&q->threads, (uint64_t)tr->tid + 1, (void *)1);
	struct sdb_row s = sdb_ins(q->db, T_THREADNAMES);
	SB_I(s, 1, sdb_string(q->db, tr->name, tr->name_len));
	SB_NULL(s, 2);
	SB_I(s, 3, gtid(q, tr->tid));
	sdb_row(q->db, T_THREADNAMES);
}

static void on_event(void *ctx, const struct m_event *ev)
{
	struct sq *q = ctx;
	if (!(++q->events & 0xffff))
		progress("exporting", (unsigned long long)q->events, 0);
	switch (ev->type) {
	case ME_PROCESS:
		if (ev->process.name) {
			struct gpu_info *g = gpu_of(q, ev->process.device);
			if (g && !g->name)
				g->name = strdup(ev->process.name);
		}
		return;
	case ME_TRACK:
		if (ev->track->kind == MT_THREAD)
			thread_row(q, ev->track);
		return;
	case ME_FLOW:
	case ME_COUNTER:
		return; /* flows: correlationId joins; memory counters: docs/SQLITE.md */
	default:
		break;
	}
	switch (ev->cat) {
	case MC_NVTX:
	case MC_MARK:
		nvtx_row(q, ev);
		break;
	case MC_STEP:
		step_row(q, ev);
		break;
	case MC_KERNEL:
		kernel(q, ev);
		break;
	case MC_MEMCPY:
		memcpy_row(q, ev);
		break;
	case MC_MEMSET:
		memset_row(q, ev);
		break;
	case MC_SYNC:
		sync_row(q, ev);
		break;
	case MC_RUNTIME:
	case MC_DRIVER:
		api_row(q, ev);
		break;
	case MC_NCCL:
		if (ev->nccl.op)
			nccl_row(q, ev);
		break;
	case MC_DROPS:
		q->dropped += ev->dropped;
		break;
	default:
		break;
	}
}

static void begin_file(void *ctx, struct tfile *t)
{
	struct sq *q = ctx;
	q->t = t;
	q->off = t->off_ns;
	q->gpid = (int64_t)((uint64_t)(t->index & 0x7fff) << 48 | (t->f.h.pid & 0xffffff) << 24);
}

static void free_file(struct sq *q)
{
	for (size_t i = 0; i < q->knames.cap; i++)
		if (q->knames.keys[i])
			free(q->knames.vals[i]);
	hmap_free(&q->knames);
	hmap_free(&q->anames);
	hmap_free(&q->domains);
	hmap_free(&q->cats);
	hmap_free(&q->threads);
	for (unsigned i = 0; i < q->ngpus; i++)
		free(q->gpus[i].name);
	q->ngpus = 0;
	q->ndomains = 0;
	q->dropped = 0;
}

static void end_file(void *ctx, struct tfile *t)
{
	struct sq *q = ctx;
	const struct ct_header *h = &t->f.h;
	struct sdb_row s;
	for (unsigned i = 0; i < q->ngpus; i++) {
		const struct gpu_info *g = &q->gpus[i];
		s = sdb_ins(q->db, T_GPU);
		SB_I(s, 1, g->dev);
		if (g->name)
			SB_T(s, 2, g->name, strlen(g->name));
		else
			SB_NULL(s, 2);
		opt_i(s, 3, (int64_t)g->sms, g->sms != 0);
		opt_i(s, 4, (int64_t)g->warp, g->warp != 0);
		SB_I(s, 5, q->gpid);
		sdb_row(q->db, T_GPU);
	}
	/* the process's name: its command's first word, without directories */
	const char *cmd = h->cmdline ? h->cmdline : "";
	size_t cl = strnlen(cmd, h->cmdline_len);
	const char *sp = memchr(cmd, ' ', cl);
	if (sp)
		cl = (size_t)(sp - cmd);
	const char *base = cmd;
	for (size_t i = 0; i < cl; i++)
		if (cmd[i] == '/')
			base = cmd + i + 1;
	s = sdb_ins(q->db, T_PROCESSES);
	SB_I(s, 1, q->gpid);
	SB_I(s, 2, h->pid);
	SB_T(s, 3, base, cl - (size_t)(base - cmd));
	sdb_row(q->db, T_PROCESSES);

	s = sdb_ins(q->db, T_RANKS);
	SB_I(s, 1, q->gpid);
	opt_i(s, 2, h->rank, h->rank >= 0);
	opt_i(s, 3, h->local_rank, h->local_rank >= 0);
	opt_i(s, 4, h->world_size, h->world_size > 0);
	opt_i(s, 5, h->local_size, h->local_size > 0);
	if (h->host)
		SB_T(s, 6, h->host, strlen(h->host));
	else
		SB_NULL(s, 6);
	SB_I(s, 7, h->pid);
	SB_I(s, 8, t->off_ns);
	SB_T(s, 9, t->f.path, strlen(t->f.path));
	const char *st = ct_status_name(t->f.status);
	SB_T(s, 10, st, strlen(st));
	SB_I(s, 11, q->dropped);
	sdb_row(q->db, T_RANKS);
	free_file(q);
}

static const struct m_consumer sqlite_consumer = {begin_file, on_event, end_file};

/* files [from, to) of in into the database at path */
static int export_files(struct inputs *in, size_t from, size_t to, const char *path)
{
	struct sdb db;
	if (sdb_open(&db, path))
		return -1;
	struct sdb_row s = sdb_ins(&db, T_SESSION_START);
	SB_I(s, 1, in->base_ns);
	sdb_row(&db, T_SESSION_START);
	struct sq q;
	memset(&q, 0, sizeof q);
	q.db = &db;
	q.gf = gpu_fields();
	int bad = 0;
	for (size_t k = from; k < to && !db.failed; k++) {
		if (model_file(&in->v[k], &sqlite_consumer, &q, NULL)) {
			fprintf(stderr, "cuptrace: %s\n", in->v[k].f.err);
			bad = 1;
		}
		tfile_release(&in->v[k]);
	}
	progress("exporting", (unsigned long long)q.events, 1);
	if (sdb_close(&db, 1))
		return -1;
	return bad;
}

int export_sqlite(struct inputs *in, const char *path, size_t *written)
{
	int rc = export_files(in, 0, in->n, path);
	*written = rc >= 0;
	return rc ? 1 : 0;
}

int export_sqlite_split(struct inputs *in, const char *dir, size_t *written)
{
	*written = 0;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "cuptrace: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		char path[4200], pidpart[32] = "";
		/* two files of one rank (a forked child, a restart) get the pid too */
		for (size_t j = 0; j < in->n; j++)
			if (j != i && in->v[j].rank == t->rank)
				snprintf(pidpart, sizeof pidpart, ".%llu", (unsigned long long)t->f.h.pid);
		snprintf(path, sizeof path, "%s/rank%lld%s.sqlite", dir,
		         (long long)(t->rank < 0 ? t->index : t->rank), pidpart);
		int r = export_files(in, i, i + 1, path);
		if (r)
			rc = 1;
		if (r >= 0)
			(*written)++;
	}
	return rc;
}
