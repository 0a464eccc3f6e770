// SPDX-License-Identifier: MIT
/* The .ctr reader's upper half: the items inside a block (events, strings,
 * drops, the footer) and the reader's lifetime (open, next, close);
 * dec_block.c reads the file, its header and its blocks. */
#include "dec.h"
#include "dec_int.h"
#include "varint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define MAX_THREADS_TRACKED 65536

struct ct_dtab {
	size_t n, cap;
	int64_t *tid;
	uint64_t (*cnt)[CT_NKINDS];
};

static int read_footer(struct ct_file *f, const uint8_t *p, const uint8_t *end);

/* A file that was closed cleanly ends with a trailer pointing at its footer
 * block: read the totals now, before the events. Anything odd just leaves
 * f->final_footer at 0; the stream read is not affected. */
static void read_final_footer(struct ct_file *f)
{
	uint8_t *raw;
	size_t n;
	if (ct_dec_final_block(f, &raw, &n))
		return;
	const uint8_t *p = raw, *end = raw + n;
	uint64_t kind, len;
	if (!ct_get_varint(&p, end, &kind) && kind == CT_K_FOOTER && !ct_get_varint(&p, end, &len) &&
	    len == (uint64_t)(end - p) && !read_footer(f, p, end))
		f->final_footer = 1;
	free(raw);
}

int ct_file_open(struct ct_file *f, const char *path)
{
	if (ct_dec_open(f, path)) {
		ct_file_close(f);
		return -1;
	}
	read_final_footer(f);
	return 0;
}

void ct_file_release(struct ct_file *f)
{
	if (f->f)
		fclose(f->f);
	f->f = NULL;
	for (size_t i = 0; i < f->nstr; i++)
		free(f->str[i]);
	free(f->str);
	free(f->slen);
	free(f->seg);
	free(f->zbuf);
	free(f->raw);
	ZSTD_freeDCtx(f->dctx);
	f->seg = NULL, f->nseg = f->segcap = 0;
	f->str = NULL, f->slen = NULL, f->zbuf = f->raw = NULL, f->dctx = NULL;
	f->nstr = f->strcap = f->zcap = f->rawcap = 0;
	f->p = f->end = NULL;
	f->tsp = NULL;
	f->nts = f->ti = 0;
	free(f->delta);
	f->delta = NULL;
	if (f->status == CT_READING)
		f->status = CT_TRUNCATED;
}

void ct_file_close(struct ct_file *f)
{
	ct_file_release(f);
	ct_header_free(&f->h);
	if (f->dtab) {
		free(f->dtab->tid);
		free(f->dtab->cnt);
		free(f->dtab);
	}
	f->dtab = NULL;
}

/* The next TS or DUR value: from the planes, or inline. */
static int get_ts(struct ct_file *f, uint64_t *v)
{
	if (!f->tsp)
		return ct_get_varint(&f->p, f->end, v);
	if (f->ti >= f->nts)
		return -1;
	size_t i = f->ti++, n = f->nts;
	const uint8_t *t = f->tsp;
	uint32_t x = (uint32_t)t[i] | (uint32_t)t[n + i] << 8 | (uint32_t)t[2 * n + i] << 16 |
		     (uint32_t)t[3 * n + i] << 24;
	if (x != 0xffffffffu) {
		*v = x;
		return 0;
	}
	return ct_get_varint(&f->p, f->end, v);
}

/* Bad items in a block that decompressed fine (its checksum holds: a
 * writer's bug, or a crafted file): the rest of the block is skipped and
 * counted as damaged; reading goes on with the next block. */
static void corrupt(struct ct_file *f, const char *what)
{
	char why[160];
	snprintf(why, sizeof why, "corrupt data in block %llu at offset %llu: %s",
		 (unsigned long long)f->nblocks, (unsigned long long)f->blk_at, what);
	ct_dec_damage(f, f->offset - f->blk_at, why);
	f->p = f->end;
}

/* What a string costs the budget besides its text: its slots in str and
 * slen (and their spare half after a doubling), the copy's malloc header. */
#define STR_COST 48

/* Takes n bytes from f's memory budget: 0, or -1 when they do not fit. */
static int charge(struct ct_file *f, uint64_t n)
{
	if (n > f->mem_max - f->mem)
		return -1;
	f->mem += n;
	return 0;
}

/* The id the next string gets when no id is skipped. */
static uint64_t next_sid(const struct ct_file *f)
{
	if (!f->nseg)
		return CT_SID_FIRST + f->nstr;
	const struct ct_sseg *g = &f->seg[f->nseg - 1];
	return g->id + (f->nstr - g->at);
}

/* Defines string id. Ids only grow; ids a writer skipped (a block it
 * could not write) stay undefined and cost nothing: where the ids jump, a
 * segment says so. 0, or ADD_ORDER, ADD_BUDGET, ADD_NOMEM. */
enum { ADD_ORDER = 1, ADD_BUDGET, ADD_NOMEM };

static int add_string(struct ct_file *f, uint64_t id, const uint8_t *s, size_t n)
{
	uint64_t next = next_sid(f);
	if (id < next || id > UINT32_MAX)
		return ADD_ORDER;
	if (charge(f, n + STR_COST + (id > next ? sizeof *f->seg : 0)))
		return ADD_BUDGET;
	if (id > next) {
		if (f->nseg == f->segcap) {
			size_t ncap = f->segcap ? f->segcap * 2 : 16;
			struct ct_sseg *g = realloc(f->seg, ncap * sizeof *g);
			if (!g)
				return ADD_NOMEM;
			f->seg = g, f->segcap = ncap;
		}
		f->seg[f->nseg++] = (struct ct_sseg){id, f->nstr};
	}
	if (f->nstr == f->strcap) {
		size_t ncap = f->strcap ? f->strcap * 2 : 256;
		char **ns = realloc(f->str, ncap * sizeof *ns);
		if (!ns)
			return ADD_NOMEM;
		f->str = ns;
		uint32_t *nl = realloc(f->slen, ncap * sizeof *nl);
		if (!nl)
			return ADD_NOMEM;
		f->slen = nl;
		f->strcap = ncap;
	}
	char *c = ct_dec_dup(s, n);
	if (!c)
		return ADD_NOMEM;
	f->str[f->nstr] = c;
	f->slen[f->nstr] = (uint32_t)n;
	f->nstr++;
	return 0;
}

/* Where string id ref is stored, or -1 when no string has that id. */
static ptrdiff_t sid_index(const struct ct_file *f, uint64_t ref)
{
	uint64_t id0 = CT_SID_FIRST;
	size_t at0 = 0, end = f->nstr;
	if (f->nseg) {
		size_t lo = 0, hi = f->nseg; /* segments whose first id is <= ref */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (f->seg[mid].id <= ref)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			id0 = f->seg[lo - 1].id, at0 = f->seg[lo - 1].at;
		end = lo < f->nseg ? f->seg[lo].at : f->nstr;
	}
	if (ref < id0 || ref - id0 >= end - at0)
		return -1;
	return (ptrdiff_t)(at0 + (ref - id0));
}

static uint64_t *drop_slot(struct ct_file *f, int64_t tid)
{
	struct ct_dtab *d = f->dtab;
	if (!d && !(d = f->dtab = calloc(1, sizeof *d)))
		return NULL;
	for (size_t i = 0; i < d->n; i++)
		if (d->tid[i] == tid)
			return d->cnt[i];
	if ((d->n == d->cap && d->cap >= MAX_THREADS_TRACKED) ||
	    charge(f, sizeof *d->tid + sizeof *d->cnt))
		return NULL;
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 16;
		int64_t *t = realloc(d->tid, ncap * sizeof *t);
		if (!t)
			return NULL;
		d->tid = t;
		uint64_t(*c)[CT_NKINDS] = realloc(d->cnt, ncap * sizeof *c);
		if (!c)
			return NULL;
		d->cnt = c;
		d->cap = ncap;
	}
	d->tid[d->n] = tid;
	memset(d->cnt[d->n], 0, sizeof d->cnt[d->n]);
	return d->cnt[d->n++];
}

static int read_footer(struct ct_file *f, const uint8_t *p, const uint8_t *end)
{
	memset(f->f_events, 0, sizeof f->f_events);
	memset(f->f_drops, 0, sizeof f->f_drops);
	f->end_how = f->end_detail = 0;
	f->nccl_rank = f->nccl_nranks = 0;
	while (p < end) {
		uint64_t tag, len, a, b;
		if (ct_get_varint(&p, end, &tag) || ct_get_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p))
			return -1;
		const uint8_t *v = p, *vend = p + len;
		p = vend;
		switch (tag) {
		case CT_FT_EVENTS:
		case CT_FT_DROPS:
			if (ct_get_varint(&v, vend, &a) || ct_get_varint(&v, vend, &b) || a >= CT_NKINDS)
				return -1;
			(tag == CT_FT_EVENTS ? f->f_events : f->f_drops)[a] = b;
			break;
		case CT_FT_END:
			if (ct_get_varint(&v, vend, &a) || ct_get_varint(&v, vend, &b))
				return -1;
			f->end_how = a, f->end_detail = b;
			break;
		case CT_FT_NCCL_RANK:
			if (ct_get_varint(&v, vend, &a) || ct_get_varint(&v, vend, &b))
				return -1;
			if (a < b && b <= INT32_MAX)
				f->nccl_rank = a, f->nccl_nranks = b;
			break;
		case CT_FT_RT_END:
		case CT_FT_MONO_END:
		case CT_FT_TRUNC_STR:
			if (ct_get_varint(&v, vend, &a))
				return -1;
			if (tag == CT_FT_RT_END)
				f->rt_end = a;
			else if (tag == CT_FT_MONO_END)
				f->mono_end = a;
			else
				f->trunc_str = a;
			break;
		}
	}
	f->have_footer = 1;
	return 0;
}

/* A string ref: sets text and length. A string id becomes the index of
 * its string plus CT_SID_FIRST: the ids handed out are dense (tools index
 * their caches by them), however far the file's ids jump. An id no string
 * has is an error, unless a block was skipped as damaged. */
static int read_sref(struct ct_file *f, uint64_t *ref, const char **s, uint32_t *len)
{
	if (*ref == CT_SREF_NONE) {
		*s = "", *len = 0;
		return 0;
	}
	if (*ref == CT_SREF_INLINE) {
		uint64_t n;
		if (ct_get_varint(&f->p, f->end, &n) || n > (uint64_t)(f->end - f->p))
			return -1;
		*s = (const char *)f->p, *len = (uint32_t)n;
		f->p += n;
		return 0;
	}
	ptrdiff_t i = sid_index(f, *ref);
	if (i < 0 && f->damaged) {
		/* Most likely defined in a damaged block: its text is lost.
		 * Handed out as an uninterned "?", so that no tool keys a
		 * cache by an id no string has. */
		f->lost_refs++;
		*ref = CT_SREF_INLINE;
		*s = "?", *len = 1;
		return 0;
	}
	if (i < 0)
		return -1;
	*ref = CT_SID_FIRST + (uint64_t)i;
	*s = f->str[i];
	*len = f->slen[i];
	return 0;
}

/* How a kind's fields decode: its schema, and where the run of plain
 * unsigned fields at its end begins (most of a GPU record: read in a tight
 * loop, no dispatch per field). Built at a kind's first event. */
static const struct ct_plan *plan_of(struct ct_file *f, unsigned kind)
{
	struct ct_plan *pl = &f->plan[kind];
	if (pl->s)
		return pl;
	const struct ct_schema *s = ct_schema_of(kind);
	if (!s)
		return NULL;
	unsigned u = s->nfields;
	while (u > 0 && s->type[u - 1] == CT_F_U)
		u--;
	pl->ufrom = (uint8_t)u;
	pl->s = s;
	return pl;
}

/* Fills ev's fields. 0, or why not: DEC_SHORT (the data ends early),
 * DEC_BADREF (a string reference), DEC_NOMEM. */
enum { DEC_SHORT = 1, DEC_BADREF, DEC_NOMEM };

static int decode_fields(struct ct_file *f, const struct ct_plan *pl, struct ct_event *ev)
{
	const struct ct_schema *s = pl->s;
	uint64_t prev_ts = 0;
	unsigned i = 0;
	for (; i < pl->ufrom; i++) {
		uint64_t v;
		unsigned ty = s->type[i];
		if (ty == CT_F_TS || ty == CT_F_DUR ? get_ts(f, &v) : ct_get_varint(&f->p, f->end, &v))
			return DEC_SHORT;
		switch (ty) {
		case CT_F_TS:
			f->last_ts += (uint64_t)ct_unzigzag(v);
			ev->v[i] = prev_ts = f->last_ts;
			break;
		case CT_F_DUR:
			ev->v[i] = prev_ts + (uint64_t)ct_unzigzag(v);
			break;
		case CT_F_I:
			ev->v[i] = (uint64_t)ct_unzigzag(v);
			break;
		case CT_F_DELTA:
			if (!f->delta &&
			    !(f->delta = calloc((size_t)CT_NKINDS * CT_MAX_FIELDS, sizeof *f->delta)))
				return DEC_NOMEM;
			f->delta[(size_t)ev->kind * CT_MAX_FIELDS + i] += (uint64_t)ct_unzigzag(v);
			ev->v[i] = f->delta[(size_t)ev->kind * CT_MAX_FIELDS + i];
			break;
		case CT_F_SID:
		case CT_F_STR:
			ev->v[i] = v;
			if (read_sref(f, &ev->v[i], &ev->s[i], &ev->sl[i]))
				return DEC_BADREF;
			break;
		default:
			ev->v[i] = v;
		}
	}
	const uint8_t *p = f->p;
	if ((size_t)(f->end - p) >= 10u * (s->nfields - i)) {
		/* Room for the longest varints: read without bounds checks. */
		for (; i < s->nfields; i++) {
			uint64_t v = *p++;
			if (v & 0x80) {
				v &= 0x7f;
				for (unsigned sh = 7;; sh += 7) {
					uint64_t b = *p++;
					v |= (b & 0x7f) << sh;
					if (!(b & 0x80))
						break;
					if (sh == 63)
						return DEC_SHORT;
				}
			}
			ev->v[i] = v;
		}
		f->p = p;
		return 0;
	}
	for (; i < s->nfields; i++)
		if (ct_get_varint(&f->p, f->end, &ev->v[i]))
			return DEC_SHORT;
	return 0;
}

int ct_file_next(struct ct_file *f, struct ct_event *ev)
{
	if (f->status != CT_READING)
		return 0;
	for (;;) {
		if (f->p >= f->end) {
			if (!ct_dec_load_block(f))
				return 0;
			continue;
		}
		uint64_t kind, a, b;
		if (ct_get_varint(&f->p, f->end, &kind)) {
			corrupt(f, "item kind");
			continue;
		}
		f->footer_last = 0;
		switch (kind) {
		case CT_K_STR:
			if (ct_get_varint(&f->p, f->end, &b) || ct_get_varint(&f->p, f->end, &a) ||
			    a > (uint64_t)(f->end - f->p)) {
				corrupt(f, "string length");
				continue;
			}
			switch (add_string(f, b, f->p, a)) {
			case 0: break;
			case ADD_ORDER: corrupt(f, "string id out of order"); continue;
			case ADD_BUDGET: return ct_dec_stop(f, "more strings than a file of its size holds");
			default: return ct_dec_stop(f, "out of memory");
			}
			f->p += a;
			continue;
		case CT_K_THREAD:
			if (ct_get_varint(&f->p, f->end, &a) || ct_get_varint(&f->p, f->end, &b)) {
				corrupt(f, "thread item");
				continue;
			}
			f->tid = ct_unzigzag(a);
			f->last_ts = b;
			continue;
		case CT_K_DROPS: {
			if (ct_get_varint(&f->p, f->end, &a) || ct_get_varint(&f->p, f->end, &b) ||
			    a >= CT_NKINDS) {
				corrupt(f, "drops item");
				continue;
			}
			uint64_t *slot = drop_slot(f, f->tid);
			if (slot && b > slot[a]) {
				f->drops[a] += b - slot[a];
				slot[a] = b;
			}
			continue;
		}
		case CT_K_FOOTER:
			if (ct_get_varint(&f->p, f->end, &a) || a > (uint64_t)(f->end - f->p) ||
			    read_footer(f, f->p, f->p + a)) {
				corrupt(f, "footer");
				continue;
			}
			f->p += a;
			f->footer_last = 1;
			continue;
		}
		/* Range first: the cast must not turn 2^32 + 25 into kind 25,
		 * and kind indexes f->events below. */
		const struct ct_plan *pl = kind < CT_NKINDS ? plan_of(f, (unsigned)kind) : NULL;
		if (!pl) {
			corrupt(f, f->h.minor > CT_FORMAT_MINOR
			               ? "unknown event kind (the file's format is newer than this reader)"
			               : "unknown event kind");
			continue;
		}
		if (f->tid < 0) {
			corrupt(f, "event outside a thread section");
			continue;
		}
		ev->kind = (unsigned)kind;
		ev->tid = f->tid;
		int why = decode_fields(f, pl, ev);
		if (why == DEC_NOMEM)
			return ct_dec_stop(f, "out of memory");
		if (why) {
			corrupt(f, why == DEC_BADREF ? "bad string reference" : "truncated event");
			continue;
		}
		f->events[kind]++;
		return 1;
	}
}
