// SPDX-License-Identifier: MIT
/* NVTX_EVENTS rows (ranges, marks, domain and category definitions) and
 * CUPTRACE_STEPS rows (docs/SQLITE.md). */
#include "write/sqlite/sqlite_int.h"

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

void sq_nvtx(struct sq *q, const struct m_event *ev)
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
	if (type == NVTX_MARK || sp->unfinished) /* a range that never ended: no end */
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

void sq_step(struct sq *q, const struct m_event *ev)
{
	const struct span *sp = ev->span;
	struct sdb_row s = sdb_ins(q->db, T_STEPS);
	SB_I(s, 1, q->gpid);
	SB_I(s, 2, q->t->shown_rank);
	SB_I(s, 3, sp->id);
	SB_I(s, 4, at(q, sp->ts));
	SB_I(s, 5, at(q, sp->end));
	SB_I(s, 6, gtid(q, sp->tid));
	sdb_row(q->db, T_STEPS);
}

