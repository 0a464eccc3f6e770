// SPDX-License-Identifier: MIT
#include "enc.h"
#include "crc32c.h"
#include "fields.h"
#include "varint.h"

#include <stdlib.h>
#include <string.h>

int ct_enc_init(struct ct_enc *e, size_t strtab_max)
{
	memset(e, 0, sizeof *e);
	e->cap = 1 << 20;
	e->buf = malloc(e->cap);
	e->delta = calloc((size_t)CT_NKINDS * CT_MAX_FIELDS, sizeof *e->delta);
	if (!e->buf || !e->delta || ct_strtab_init(&e->st, strtab_max, CT_SID_FIRST)) {
		free(e->buf);
		free(e->delta);
		return -1;
	}
	e->tid = -1;
	return 0;
}

void ct_enc_free(struct ct_enc *e)
{
	free(e->buf);
	free(e->ts);
	free(e->blk);
	free(e->hmap);
	free(e->delta);
	ct_strtab_free(&e->st);
	memset(e, 0, sizeof *e);
}

void ct_enc_new_block(struct ct_enc *e)
{
	e->len = 0;
	e->nts = 0;
	e->pending_thread = e->tid >= 0;
	if (e->delta)
		memset(e->delta, 0, (size_t)CT_NKINDS * CT_MAX_FIELDS * sizeof *e->delta);
}

void ct_enc_forget_strings(struct ct_enc *e)
{
	size_t max = e->st.amax;
	uint32_t next = e->st.next_sid;
	ct_strtab_free(&e->st);
	/* Ids keep counting up (STR items carry their id), so the ids of the
	 * lost block are simply never defined in the file. */
	if (ct_strtab_init(&e->st, max, next))
		e->st.amax = 0;
	if (e->hmap)
		memset(e->hmap, 0, e->hcap * sizeof *e->hmap);
	memset(e->sc, 0, sizeof e->sc);
}

static int reserve(struct ct_enc *e, size_t more)
{
	if (e->len + more <= e->cap)
		return 0;
	size_t ncap = e->cap * 2;
	while (ncap < e->len + more)
		ncap *= 2;
	uint8_t *b = realloc(e->buf, ncap);
	if (!b)
		return -1;
	e->buf = b, e->cap = ncap;
	return 0;
}

void ct_enc_thread(struct ct_enc *e, int64_t tid)
{
	if (tid != e->tid || e->len == 0) {
		e->tid = tid;
		e->pending_thread = 1;
	}
}

/* A TS or DUR value into the planes; values that do not fit 32 bits go
 * inline after the escape. Returns the new end of the item stream. */
static uint8_t *put_ts(struct ct_enc *e, uint8_t *p, uint64_t v)
{
	e->ts[e->nts++] = v < 0xffffffffu ? (uint32_t)v : 0xffffffffu;
	if (v >= 0xffffffffu)
		p = ct_put_varint(p, v);
	return p;
}

const uint8_t *ct_enc_block(struct ct_enc *e, size_t *len)
{
	if (!e->nts) {
		*len = e->len;
		return e->buf;
	}
	size_t need = 20 + 4 * e->nts + e->len;
	if (need > e->blkcap) {
		uint8_t *b = realloc(e->blk, need);
		if (!b)
			return NULL;
		e->blk = b, e->blkcap = need;
	}
	uint8_t *p = ct_put_varint(ct_put_varint(e->blk, CT_K_TSPLANES), e->nts);
	for (unsigned plane = 0; plane < 4; plane++) {
		unsigned shift = 8 * plane;
		for (size_t i = 0; i < e->nts; i++)
			p[i] = (uint8_t)(e->ts[i] >> shift);
		p += e->nts;
	}
	memcpy(p, e->buf, e->len);
	*len = (size_t)(p + e->len - e->blk);
	return e->blk;
}

/* Interns s; emits a STR item when it is new. Returns the string ref. */
static uint64_t intern(struct ct_enc *e, const char *s, uint32_t len, int force)
{
	if (len == 0)
		return CT_SREF_NONE;
	/* Room first: a string interned but never written would shift every
	 * later string id of the file. */
	if (reserve(e, (size_t)len + 20))
		return CT_SREF_INLINE;
	if (e->sid_limit) { /* a flight window's first block: nothing new */
		uint32_t sid = ct_strtab_find(&e->st, s, len);
		return sid && sid < e->sid_limit ? sid : CT_SREF_INLINE;
	}
	int is_new;
	uint32_t sid = ct_strtab_intern(&e->st, s, len, force, &is_new);
	if (!sid)
		return CT_SREF_INLINE;
	if (is_new) {
		uint8_t *p = e->buf + e->len;
		p = ct_put_varint(p, CT_K_STR);
		p = ct_put_varint(p, sid);
		p = ct_put_varint(p, len);
		memcpy(p, s, len);
		e->len = (size_t)(p + len - e->buf);
	}
	return sid;
}

/* intern() for a string of a ring record, through the cache of short
 * strings (scache.h). */
static uint64_t intern_rec(struct ct_enc *e, const char *s, uint32_t n, const char *end)
{
	uint64_t w[3];
	if (!ct_scache_key(s, n, end, w))
		return intern(e, s, n, 0);
	struct ct_scache *c = ct_scache_slot(e->sc, w, n);
	if (ct_scache_hit(c, w, n))
		return c->sid;
	uint64_t ref = intern(e, s, n, 0);
	if (ref >= CT_SID_FIRST) {
		memcpy(c->w, w, sizeof c->w);
		c->len = n, c->sid = (uint32_t)ref;
	}
	return ref;
}

int ct_enc_strings_below(struct ct_enc *e, uint32_t sid)
{
	const struct ct_strtab *t = &e->st;
	/* Every intern took the next id: the table's entries are consecutive
	 * ids in the order of the arena, the first one next_sid - n. */
	uint32_t id = t->next_sid - (uint32_t)t->n;
	for (size_t off = 0; off + 4 <= t->alen && id < sid; id++) {
		uint32_t len;
		memcpy(&len, t->arena + off, 4);
		if (reserve(e, (size_t)len + 20))
			return -1;
		uint8_t *p = e->buf + e->len;
		p = ct_put_varint(p, CT_K_STR);
		p = ct_put_varint(p, id);
		p = ct_put_varint(p, len);
		memcpy(p, t->arena + off + 4, len);
		e->len = (size_t)(p + len - e->buf);
		off += (size_t)len + 4;
	}
	memset(e->sc, 0, sizeof e->sc); /* the cache would bypass the limit */
	e->sid_limit = sid;
	return 0;
}

int ct_enc_handle(struct ct_enc *e, uint64_t h, const char *s, uint32_t len)
{
	if (h >= (1u << 30))
		return -1;
	if (h >= e->hcap) {
		size_t ncap = e->hcap ? e->hcap : 256;
		while (ncap <= h)
			ncap *= 2;
		uint32_t *m = realloc(e->hmap, ncap * sizeof *m);
		if (!m)
			return -1;
		memset(m + e->hcap, 0, (ncap - e->hcap) * sizeof *m);
		e->hmap = m, e->hcap = ncap;
	}
	uint64_t ref = intern(e, s, len, 1);
	if (e->sid_limit && ref < CT_SID_FIRST)
		return 0; /* defined later in the file: the map stays */
	e->hmap[h] = ref >= CT_SID_FIRST ? (uint32_t)ref : 0;
	return 0;
}

static uint64_t handle_ref(struct ct_enc *e, uint64_t h)
{
	if (h == 0)
		return CT_SREF_NONE;
	return h < e->hcap ? e->hmap[h] : CT_SREF_NONE;
}

/* A STR or SID field's reference (first pass over the fields). Returns
 * -1 when a string runs past the record. */
static inline __attribute__((always_inline)) int ref_field(struct ct_enc *e,
							     const struct ct_rec *r, unsigned i,
							     uint8_t type, const char **str,
							     const char *str_end, uint64_t *ref,
							     size_t *inline_bytes)
{
	if (type == CT_F_STR) {
		uint64_t n = r->f[i];
		if (n > (uint64_t)(str_end - *str))
			return -1;
		ref[i] = intern_rec(e, *str, (uint32_t)n, str_end);
		if (ref[i] == CT_SREF_INLINE)
			*inline_bytes += n + 10;
		*str += n;
	} else if (type == CT_F_SID) {
		ref[i] = handle_ref(e, r->f[i]);
	}
	return 0;
}

/* Field i into the item stream (second pass). */
static inline __attribute__((always_inline)) uint8_t *put_field(struct ct_enc *e,
								  const struct ct_rec *r, unsigned i,
								  uint8_t type, uint8_t *p,
								  const char **str, const uint64_t *ref,
								  uint64_t *prev_ts)
{
	uint64_t v = r->f[i];
	switch (type) {
	case CT_F_TS:
		p = put_ts(e, p, ct_zigzag((int64_t)(v - e->last_ts)));
		e->last_ts = *prev_ts = v;
		break;
	case CT_F_DUR:
		p = put_ts(e, p, ct_zigzag((int64_t)(v - *prev_ts)));
		break;
	case CT_F_U:
		p = ct_put_varint(p, v);
		break;
	case CT_F_I:
		p = ct_put_varint(p, ct_zigzag((int64_t)v));
		break;
	case CT_F_DELTA: {
		uint64_t *last = &e->delta[(size_t)r->kind * CT_MAX_FIELDS + i];
		p = ct_put_varint(p, ct_zigzag((int64_t)(v - *last)));
		*last = v;
		break;
	}
	case CT_F_SID:
		p = ct_put_varint(p, ref[i]);
		break;
	case CT_F_STR:
		p = ct_put_varint(p, ref[i]);
		if (ref[i] == CT_SREF_INLINE) {
			p = ct_put_varint(p, v);
			memcpy(p, *str, v);
			p += v;
		}
		*str += v;
		break;
	}
	return p;
}

/* One record of layout nf, type[] (its kind's schema). Always inlined:
 * with a constant layout (the hot kinds below) both loops are unrolled
 * and the switch on the field type folds away; the generic copy keeps its
 * loops. */
static inline __attribute__((always_inline)) int enc_layout(struct ct_enc *e,
							      const struct ct_rec *r, unsigned nf,
							      const uint8_t *type)
{
	uint64_t ref[CT_MAX_FIELDS];
	const char *str = (const char *)&r->f[nf];
	const char *str_end = (const char *)r + r->size;
	size_t inline_bytes = 0;
	if (__builtin_constant_p(nf)) {
#pragma GCC unroll 24
		for (unsigned i = 0; i < nf; i++)
			if (ref_field(e, r, i, type[i], &str, str_end, ref, &inline_bytes))
				return -1;
	} else {
		for (unsigned i = 0; i < nf; i++)
			if (ref_field(e, r, i, type[i], &str, str_end, ref, &inline_bytes))
				return -1;
	}
	if (reserve(e, 32 + (size_t)nf * 10 + inline_bytes))
		return -1;
	if (e->nts + nf > e->tscap) {
		size_t ncap = e->tscap ? e->tscap * 2 : 65536;
		uint32_t *t = realloc(e->ts, ncap * sizeof *t);
		if (!t)
			return -1;
		e->ts = t, e->tscap = ncap;
	}
	uint8_t *p = e->buf + e->len;
	if (e->pending_thread) {
		p = ct_put_varint(p, CT_K_THREAD);
		p = ct_put_varint(p, ct_zigzag(e->tid));
		e->last_ts = type[0] == CT_F_TS ? r->f[0] : 0;
		p = ct_put_varint(p, e->last_ts);
		e->pending_thread = 0;
	}
	p = ct_put_varint(p, r->kind);
	uint64_t prev_ts = 0;
	str = (const char *)&r->f[nf];
	if (__builtin_constant_p(nf)) {
#pragma GCC unroll 24
		for (unsigned i = 0; i < nf; i++)
			p = put_field(e, r, i, type[i], p, &str, ref, &prev_ts);
	} else {
		for (unsigned i = 0; i < nf; i++)
			p = put_field(e, r, i, type[i], p, &str, ref, &prev_ts);
	}
	e->len = (size_t)(p - e->buf);
	e->events[r->kind]++;
	return 0;
}

/* The kinds that come by the million (NVTX ranges and marks, kernels and
 * the CUDA calls that launch them) encoded through a constant copy of their
 * layout, made from the same lists as the schema tables (fields.h): the
 * generic loop's switch on the field type costs a mispredicted indirect
 * jump per field, on the writer's path of every event. */
static const uint8_t lay_push[] = {CT_FIELDS_NVTX_PUSH(CT_FIELD_TYPE, NVTX_PUSH)}; /* and mark */
static const uint8_t lay_pop[] = {CT_FIELDS_NVTX_POP(CT_FIELD_TYPE, NVTX_POP)};
static const uint8_t lay_kernel[] = {CT_FIELDS_KERNEL(CT_FIELD_TYPE, KERNEL)};
static const uint8_t lay_api[] = {CT_FIELDS_CUDA_API(CT_FIELD_TYPE, CUDA_API)};

#define FAST(lay)                                                                    \
	return r->size < ct_rec_size(sizeof lay, 0) ? -1 : enc_layout(e, r, sizeof lay, lay)

int ct_enc_record(struct ct_enc *e, const struct ct_rec *r)
{
	switch (r->kind) {
	case CT_EV_NVTX_PUSH:
	case CT_EV_NVTX_MARK: /* the same list (fields.h) */
		FAST(lay_push);
	case CT_EV_NVTX_POP:
		FAST(lay_pop);
	case CT_EV_KERNEL:
		FAST(lay_kernel);
	case CT_EV_CUDA_API:
		FAST(lay_api);
	}
	const struct ct_schema *s = ct_schema_of(r->kind);
	if (!s || r->size < ct_rec_size(s->nfields, 0))
		return -1;
	return enc_layout(e, r, s->nfields, s->type);
}

int ct_enc_drops(struct ct_enc *e, unsigned kind, uint64_t cumulative)
{
	if (reserve(e, 48))
		return -1;
	uint8_t *p = e->buf + e->len;
	if (e->pending_thread) {
		p = ct_put_varint(p, CT_K_THREAD);
		p = ct_put_varint(p, ct_zigzag(e->tid));
		p = ct_put_varint(p, e->last_ts);
		e->pending_thread = 0;
	}
	p = ct_put_varint(p, CT_K_DROPS);
	p = ct_put_varint(p, kind);
	p = ct_put_varint(p, cumulative);
	e->len = (size_t)(p - e->buf);
	return 0;
}

uint8_t *ct_tlv_u(uint8_t *p, unsigned tag, uint64_t v)
{
	uint8_t tmp[10];
	uint8_t *q = ct_put_varint(tmp, v);
	p = ct_put_varint(p, tag);
	p = ct_put_varint(p, (uint64_t)(q - tmp));
	memcpy(p, tmp, (size_t)(q - tmp));
	return p + (q - tmp);
}

static uint8_t *tlv_pair(uint8_t *p, unsigned tag, uint64_t a, uint64_t b)
{
	uint8_t tmp[20];
	uint8_t *q = ct_put_varint(ct_put_varint(tmp, a), b);
	p = ct_put_varint(p, tag);
	p = ct_put_varint(p, (uint64_t)(q - tmp));
	memcpy(p, tmp, (size_t)(q - tmp));
	return p + (q - tmp);
}

int ct_enc_footer(struct ct_enc *e, const uint64_t *drops, uint64_t rt_end, uint64_t mono_end)
{
	uint8_t body[CT_NKINDS * 2 * 24 + 64], *p = body;
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		if (e->events[k])
			p = tlv_pair(p, CT_FT_EVENTS, k, e->events[k]);
		if (drops[k])
			p = tlv_pair(p, CT_FT_DROPS, k, drops[k]);
	}
	p = ct_tlv_u(p, CT_FT_RT_END, rt_end);
	p = ct_tlv_u(p, CT_FT_MONO_END, mono_end);
	p = ct_tlv_u(p, CT_FT_TRUNC_STR, e->trunc_str);
	if (e->end_how)
		p = tlv_pair(p, CT_FT_END, e->end_how, e->end_detail);
	if (e->nccl_nranks)
		p = tlv_pair(p, CT_FT_NCCL_RANK, e->nccl_rank, e->nccl_nranks);
	size_t n = (size_t)(p - body);
	if (reserve(e, n + 24))
		return -1;
	uint8_t *o = e->buf + e->len;
	o = ct_put_varint(o, CT_K_FOOTER);
	o = ct_put_varint(o, n);
	memcpy(o, body, n);
	e->len = (size_t)(o + n - e->buf);
	return 0;
}

uint8_t *ct_tlv_str(uint8_t *p, unsigned tag, const char *s, size_t n)
{
	p = ct_put_varint(p, tag);
	p = ct_put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

size_t ct_header_seal(uint8_t *buf, uint8_t *p)
{
	uint32_t hlen = (uint32_t)(p - buf - 16) + CT_HEADER_CRC_SIZE;
	uint16_t major = CT_FORMAT_MAJOR, minor = CT_FORMAT_MINOR;
	memcpy(buf, CT_MAGIC, 8);
	memcpy(buf + 8, &major, 2);
	memcpy(buf + 10, &minor, 2);
	memcpy(buf + 12, &hlen, 4);
	*p++ = CT_H_CRC;
	*p++ = 4;
	uint32_t c = ct_crc32c(0, buf, (size_t)(p - buf));
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(c >> 8 * i);
	return (size_t)(p - buf);
}
