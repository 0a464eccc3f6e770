// SPDX-License-Identifier: MIT
/* CUPTI activity rows (kernels, copies, memsets, synchronisations) and
 * CUDA API rows, as Nsight Systems' export names them (docs/SQLITE.md). */
#include "write/sqlite/sqlite.h"
#include "write/sqlite/sqlite_int.h"

#include "util/xalloc.h"

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
	const struct ct_event *r = ev->rec;
	kn->mg = r ? sdb_string(q->db, r->s[F_KERNEL_NAME], r->sl[F_KERNEL_NAME]) : kn->dm;
	if (kn != tmp)
		hmap_put(&q->knames, k->name.sid, kn);
	return kn;
}

/* ---- rows */

struct gpu_info *sq_gpu_of(struct sq *q, uint64_t dev)
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
	/* TARGET_INFO_CUDA_STREAM: each (context, stream) with work; CUPTI's
	 * ids are 32-bit, all ones for no stream (context-wide syncs) */
	if (g->stream < 0xffffffffull && g->context <= 0xffffffffull) {
		uint64_t key = (g->context << 32 | g->stream) + 1;
		if (key && !hmap_get(&q->streams, key))
			hmap_put(&q->streams, key, (void *)1);
	}
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, g->device);
	SB_I(s, 4, g->context);
	SB_I(s, 5, id32(g->stream));
	SB_I(s, 6, sq_corr(q, g->corr));
	SB_I(s, 7, q->gpid);
}

void sq_kernel(struct sq *q, const struct m_event *ev)
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
	struct gpu_info *gi = sq_gpu_of(q, g->device);
	if (gi && g->sms)
		gi->sms = g->sms, gi->warp = g->warp;
}

void sq_memcpy(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_MEMCPY);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->bytes);
	SB_I(s, 9, g->kind);
	SB_I(s, 10, sq_mem_kind(g->src_kind));
	SB_I(s, 11, sq_mem_kind(g->dst_kind));
	SB_I(s, 12, id32(g->src_dev));
	SB_I(s, 13, id32(g->dst_dev));
	sdb_row(q->db, T_MEMCPY);
}

void sq_memset(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_MEMSET);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->value);
	SB_I(s, 9, g->bytes);
	SB_I(s, 10, sq_mem_kind(g->mem_kind));
	sdb_row(q->db, T_MEMSET);
}

void sq_sync(struct sq *q, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct sdb_row s = sdb_ins(q->db, T_SYNC);
	gpu_common(q, s, ev);
	SB_I(s, 8, g->sync_type);
	SB_I(s, 9, id32(g->event));
	sdb_row(q->db, T_SYNC);
}

void sq_api(struct sq *q, const struct m_event *ev)
{
	/* driver calls too (cuLaunchKernel: Triton's launches), as nsys has
	 * them: its cuda_api_sum and runtime-to-kernel joins read this table */
	enum sdb_table t = T_RUNTIME;
	struct sdb_row s = sdb_ins(q->db, t);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, at(q, ev->end));
	SB_I(s, 3, gtid(q, ev->track->tid));
	SB_I(s, 4, sq_corr(q, ev->api.corr));
	SB_I(s, 5, sref_id(q, &q->anames, &ev->api.name));
	SB_I(s, 6, ev->api.status);
	SB_I(s, 7, ev->api.cbid);
	sdb_row(q->db, t);
}


/* An allocation or release of GPU memory (the model's memory counter
 * changes with each): nsys numbers the operation from 0, CUPTI from 1. */
void sq_memory(struct sq *q, const struct m_event *ev)
{
	struct sdb_row s = sdb_ins(q->db, T_MEMORY);
	SB_I(s, 1, at(q, ev->ts));
	SB_I(s, 2, q->gpid);
	SB_I(s, 3, ev->counter.device);
	SB_I(s, 4, ev->counter.context);
	SB_I(s, 5, ev->counter.address);
	SB_NULL(s, 6);
	SB_I(s, 7, ev->counter.bytes);
	SB_I(s, 8, sq_mem_kind(ev->counter.mem_kind));
	SB_I(s, 9, ev->counter.op == 2 ? 1 : 0);
	SB_NULL(s, 10);
	SB_I(s, 11, sq_corr(q, ev->counter.corr));
	SB_I(s, 12, id32(ev->counter.stream));
	sdb_row(q->db, T_MEMORY);
}
