// SPDX-License-Identifier: MIT
/* Hang diagnosis across files: what each file holds (the tail of its
 * collectives per communicator, the NVTX ranges it left open, when it
 * stopped capturing) and the match of ranks (nh_finish). The verdict line
 * is made in nccl_hang_verdict.c. See nccl_hang.h. */
#include "job/nccl_hang_int.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nh_comm_label(char *buf, size_t n, const char *name, uint64_t hash)
{
	snprintf(buf, n, "%s%s%016" PRIx64, name, name[0] ? " " : "", hash);
}

/* Strings (operations, datatypes, communicator names) are kept once. */
uint16_t nh_str(struct nh *h, const char *s, size_t len)
{
	uint64_t k = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		k = (k ^ (unsigned char)s[i]) * 1099511628211ull;
	for (k += !k;; k += 1 + !(k + 1)) {
		uintptr_t i = (uintptr_t)hmap_get(&h->sidx, k);
		if (!i)
			break;
		if (strlen(h->str[i - 1]) == len && !memcmp(h->str[i - 1], s, len))
			return (uint16_t)(i - 1);
	}
	if (h->nstr == 65535) /* absurd: share the last one */
		return 65534;
	if (h->nstr == h->strcap) {
		h->strcap = h->strcap ? 2 * h->strcap : 64;
		h->str = xrealloc(h->str, h->strcap * sizeof *h->str);
	}
	char *c = xrealloc(NULL, len + 1);
	memcpy(c, s, len);
	c[len] = 0;
	h->str[h->nstr++] = c;
	hmap_put(&h->sidx, k, (void *)(uintptr_t)h->nstr);
	return (uint16_t)(h->nstr - 1);
}

struct nh *nh_new(void)
{
	struct nh *h = xcalloc(1, sizeof *h);
	h->min_wait = NH_MIN_WAIT_NS;
	h->cur_file = SIZE_MAX;
	return h;
}

struct nh *nh_new_mpi(void)
{
	struct nh *h = nh_new();
	h->mpi = 1;
	return h;
}

static void end_file(struct nh *h);

static void begin_file(struct nh *h, struct tfile *t)
{
	if (h->cur_file != SIZE_MAX)
		end_file(h);
	if (h->nf == h->fcap) {
		h->fcap = h->fcap ? 2 * h->fcap : 16;
		h->f = xrealloc(h->f, h->fcap * sizeof *h->f);
	}
	struct nh_file *f = &h->f[h->nf];
	memset(f, 0, sizeof *f);
	f->rank = t->shown_rank;
	f->cap_off = INT64_MAX;
	/* the user's own idea of a hang: the watchdog's timeout, where set */
	const char *ht = t->f.h.config ? strstr(t->f.h.config, "CUPTRACE_HANG_TIMEOUT=") : NULL;
	double s = ht ? strtod(ht + 22, NULL) : 0;
	if (s > 0 && s < 1e9 && (int64_t)(s * 1e9) < h->min_wait)
		h->min_wait = (int64_t)(s * 1e9);
	f->open_for = -1;
	f->first_rc = h->nrc;
	h->cur_file = h->nf++;
	h->cur_t = t;
	/* Known at open (the footer is read first); the file may be released
	 * before the next one begins. */
	h->cur_end = t->f.final_footer ? t->f.mono_end : 0;
	h->nopen = 0;
	h->last_ts = 0;
	h->nccl_tid = 0;
}

static struct nh_file *file_of(struct nh *h, struct tfile *t)
{
	if (h->cur_t != t || h->cur_file == SIZE_MAX)
		begin_file(h, t);
	return &h->f[h->cur_file];
}

/* File f's entry of communicator comm (made at first mention). */
static struct nh_rc *rc_new(struct nh *h, struct nh_file *f, uint64_t comm, int64_t nranks,
                            const char *name, size_t len)
{
	for (size_t i = f->first_rc; i < h->nrc; i++)
		if (h->rc[i]->comm == comm)
			return h->rc[i];
	if (h->nrc == h->rccap) {
		h->rccap = h->rccap ? 2 * h->rccap : 16;
		h->rc = xrealloc(h->rc, h->rccap * sizeof *h->rc);
	}
	struct nh_rc *r = xcalloc(1, sizeof *r);
	r->comm = comm;
	r->nranks = nranks;
	r->last_done_t = INT64_MIN;
	r->name = nh_str(h, name, len);
	r->file = h->cur_file;
	h->rc[h->nrc++] = r;
	return r;
}

static struct nh_rc *rc_of(struct nh *h, struct nh_file *f, const struct nccl_comm *cm)
{
	return rc_new(h, f, cm->hash, cm->nranks, cm->name, strnlen(cm->name, sizeof cm->name));
}

/* One collective entered by file f on r, as of its entry at t. */
static struct nh_op *add_op(struct nh *h, struct nh_file *f, struct nh_rc *r, const char *func,
                            size_t flen, const char *dtype, size_t dlen, uint64_t seq,
                            uint64_t count, int done, int64_t t, int64_t tid)
{
	uint16_t fn = nh_str(h, func, flen);
	struct nh_op *p = &r->ring[r->n++ % NH_KEEP];
	p->func = fn;
	p->dtype = nh_str(h, dtype, dlen);
	p->done = (uint8_t)(done != 0);
	p->seq = seq;
	p->count = count;
	p->t = t;
	f->known |= done != 0;
	if (done && p->t > r->last_done_t)
		r->last_done_t = p->t;
	size_t i = 0;
	while (i < r->nf && r->f[i].func != fn)
		i++;
	if (i == r->nf && r->nf < NH_FUNCS)
		r->f[r->nf++] = (struct nh_max){fn, seq};
	else if (i < r->nf && seq > r->f[i].max)
		r->f[i].max = seq;
	h->nccl_tid = tid;
	h->colls++;
	return p;
}

static void on_op(struct nh *h, struct nh_file *f, struct tfile *t, const struct nccl_op *o)
{
	if (!o->comm || o->is_p2p || !o->has_seq)
		return;
	uint64_t at = o->api_start ? o->api_start : o->enqueue_start;
	add_op(h, f, rc_of(h, f, o->comm), o->func, strnlen(o->func, NCCL_NAME), o->datatype,
	       strnlen(o->datatype, NCCL_NAME), o->seq, o->count, o->gpu_done != 0,
	       (int64_t)at + t->off_ns, o->tid);
}

/* MPI: a non-blocking collective waits for the arrow from its call to
 * the call that completed its request (h->pending, by its call's track
 * and start). */
struct nh_pend {
	struct nh_rc *r;
	uint64_t n; /* its position in r->ring */
};

static uint64_t pend_key(const struct m_track *tr, uint64_t ts)
{
	uint64_t k = ts ^ (uint64_t)tr->id << 48;
	return k + !k;
}

static struct nh_rc *mpi_rc(struct nh *h, struct nh_file *f, const struct m_mpi *x)
{
	const struct mpi_comm *c = x->comm;
	return rc_new(h, f, c->id, (int64_t)c->size, c->name, strnlen(c->name, sizeof c->name));
}

static void mpi_event(struct nh *h, struct nh_file *f, struct tfile *t, const struct m_event *ev)
{
	const struct m_mpi *x = ev->type == ME_FLOW ? NULL : ev->mpi;
	if (ev->type == ME_INSTANT && ev->cat == MC_MPI_COMM) {
		/* a member, whether it called anything or not (as for NCCL) */
		if (!t->f.h.forked_from && !ct_header_later_part(&t->f.h))
			mpi_rc(h, f, x);
	} else if (ev->type == ME_SLICE && ev->cat == MC_MPI && x->seq && x->comm &&
	           !x->comm->remote) {
		int pending = x->req && !x->unfinished;
		struct nh_rc *r = mpi_rc(h, f, x);
		add_op(h, f, r, x->func.s, x->func.len, x->datatype.s ? x->datatype.s : "",
		       x->datatype.s ? x->datatype.len : 0, x->seq, x->count,
		       !x->unfinished && !pending, (int64_t)ev->ts + t->off_ns, ev->track->thread);
		f->known = 1; /* an MPI call's end is always recorded */
		if (pending) {
			struct nh_pend *p = xcalloc(1, sizeof *p);
			*p = (struct nh_pend){r, r->n - 1};
			free(hmap_get(&h->pending, pend_key(ev->track, ev->ts)));
			hmap_put(&h->pending, pend_key(ev->track, ev->ts), p);
		}
	} else if (ev->type == ME_FLOW && ev->cat == MC_MPI_FLOW) {
		uint64_t k = pend_key(ev->track, ev->ts);
		struct nh_pend *p = hmap_get(&h->pending, k);
		if (!p)
			return;
		if (p->r->n - p->n <= NH_KEEP) {
			struct nh_op *o = &p->r->ring[p->n % NH_KEEP];
			o->done = 1;
			if (o->t > p->r->last_done_t)
				p->r->last_done_t = o->t;
		}
		hmap_del(&h->pending, k);
		free(p);
	} else if (ev->type == ME_INSTANT && ev->cat == MC_MPI_HANG && x->comm) {
		mpi_rc(h, f, x)->suspected = 1;
	}
}

void nh_event(struct nh *h, struct tfile *t, const struct m_event *ev)
{
	struct nh_file *f = file_of(h, t);
	/* A file without a footer ends at its last host time: GPU times are
	 * mapped with an estimated offset and may lie a little later. */
	uint64_t last = ev->end > ev->ts ? ev->end : ev->ts;
	if ((ev->type == ME_SLICE || ev->type == ME_INSTANT || ev->type == ME_ASYNC) && ev->track &&
	    (ev->track->kind == MT_THREAD || ev->track->kind == MT_NCCL ||
	     ev->track->kind == MT_MPI) &&
	    last > h->last_ts)
		h->last_ts = last;
	if (h->mpi) {
		if (ev->cat == MC_MPI || ev->cat == MC_MPI_COMM || ev->cat == MC_MPI_FLOW ||
		    ev->cat == MC_MPI_HANG)
			mpi_event(h, f, t, ev);
	} else if (ev->type == ME_TRACK && ev->track->kind == MT_NCCL && ev->track->comm) {
		/* a member, whether it called anything or not; not a forked child
		 * or a later part, whose files repeat their process's definitions */
		if (!t->f.h.forked_from && !ct_header_later_part(&t->f.h))
			rc_of(h, f, ev->track->comm);
	} else if (ev->type == ME_SLICE && ev->cat == MC_NCCL) { /* NCCL's, as below */
		on_op(h, f, t, ev->nccl.op);
	} else if (ev->type == ME_INSTANT && ev->cat == MC_HANG && ev->hang.comm) {
		rc_of(h, f, ev->hang.comm)->suspected = 1;
	}
	if (ev->type == ME_INSTANT && ev->cat == MC_CAPTURE) {
		f->cap_off = ev->span->id ? INT64_MAX : (int64_t)ev->ts + t->off_ns;
	} else if (ev->type == ME_SLICE && ev->cat == MC_NVTX && ev->span->at_end) {
		if (h->nopen == h->opencap) {
			h->opencap = h->opencap ? 2 * h->opencap : 16;
			h->open = xrealloc(h->open, h->opencap * sizeof *h->open);
		}
		struct nh_open *o = &h->open[h->nopen++];
		o->tid = ev->span->tid;
		o->ts = ev->span->ts;
		o->depth = ev->span->depth;
		o->name = nh_str(h, ev->span->name.s ? ev->span->name.s : "",
		                 ev->span->name.s ? ev->span->name.len : 0);
	}
}

static int cmp_open(const void *x, const void *y)
{
	const struct nh_open *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->depth - b->depth;
}

/* The NVTX ranges the rank was in when its trace ended: those of the
 * thread that called NCCL when it has any, else of the thread with the
 * most open (ties: the one whose innermost began last). The end is the
 * footer's (a clean exit or a signal) or else the last event's (SIGKILL). */
/* A file's non-blocking MPI collectives still waiting for their arrow
 * stay incomplete. */
static void pending_clear(struct nh *h)
{
	for (size_t i = 0; i < h->pending.cap; i++)
		if (h->pending.keys[i])
			free(h->pending.vals[i]);
	hmap_free(&h->pending);
}

static void end_file(struct nh *h)
{
	struct nh_file *f = &h->f[h->cur_file];
	pending_clear(h);
	uint64_t end = h->cur_end ? h->cur_end : h->last_ts;
	f->cut = !h->cur_end;
	f->end_t = (int64_t)end + h->cur_t->off_ns;
	if (!h->nopen)
		goto out;
	qsort(h->open, h->nopen, sizeof *h->open, cmp_open);
	size_t best = 0, bestn = 0, pick = SIZE_MAX;
	for (size_t i = 0, j; i < h->nopen; i = j) {
		for (j = i; j < h->nopen && h->open[j].tid == h->open[i].tid; j++)
			;
		if (h->nccl_tid && h->open[i].tid == h->nccl_tid) {
			pick = i, bestn = j - i;
			break;
		}
		if (j - i > bestn || (j - i == bestn && h->open[j - 1].ts > h->open[best + bestn - 1].ts))
			best = i, bestn = j - i;
	}
	if (pick == SIZE_MAX)
		pick = best;
	size_t len = 1;
	for (size_t i = pick; i < pick + bestn; i++)
		len += strlen(h->str[h->open[i].name]) + 3;
	char *s = xcalloc(1, len);
	for (size_t i = pick; i < pick + bestn; i++) {
		if (i > pick)
			strcat(s, " > ");
		strcat(s, h->str[h->open[i].name]);
	}
	f->ranges = s;
	uint64_t in = h->open[pick + bestn - 1].ts;
	f->open_for = end > in ? (int64_t)(end - in) : 0;
out:
	h->cur_file = SIZE_MAX;
	h->cur_t = NULL;
}

void nh_ranks_add(struct nh_ranks *r, int64_t v)
{
	if (r->n && r->v[r->n - 1] == v) /* a rank's second file (a part, a forked child) */
		return;
	if (!(r->n & (r->n - 1)) || !r->n)
		r->v = xrealloc(r->v, (r->n ? 2 * r->n : 1) * sizeof *r->v);
	r->v[r->n++] = v;
}

static void ranks_free(struct nh_ranks *r)
{
	free(r->v);
}

void nh_files_done(struct nh *h)
{
	if (h->cur_file != SIZE_MAX)
		end_file(h);
}

void nh_free(struct nh *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nrc; i++)
		free(h->rc[i]);
	free(h->rc);
	for (size_t i = 0; i < h->nf; i++)
		free(h->f[i].ranges);
	free(h->f);
	free(h->open);
	for (size_t i = 0; i < h->res.nc; i++) {
		ranks_free(&h->res.c[i].entered);
		ranks_free(&h->res.c[i].missing);
		ranks_free(&h->res.c[i].incomplete);
		ranks_free(&h->res.c[i].stopped);
	}
	free(h->res.c);
	free(h->res.r);
	for (size_t i = 0; i < h->res.nm; i++)
		ranks_free(&h->res.m[i].ranks);
	free(h->res.m);
	free((char *)h->res.verdict);
	free((char *)h->res.partial);
	for (size_t i = 0; i < h->nstr; i++)
		free(h->str[i]);
	free(h->str);
	hmap_free(&h->sidx);
	pending_clear(h);
	free(h);
}

/* Strings get dst's numbers in the order src first saw them: the numbers
 * one h fed every file in turn would have given. */
void nh_merge(struct nh *dst, struct nh *src)
{
	nh_files_done(src);
	if (src->min_wait < dst->min_wait)
		dst->min_wait = src->min_wait;
	uint16_t *map = xcalloc(src->nstr ? src->nstr : 1, sizeof *map);
	for (size_t i = 0; i < src->nstr; i++)
		map[i] = nh_str(dst, src->str[i], strlen(src->str[i]));
	size_t rc0 = dst->nrc, f0 = dst->nf;
	for (size_t i = 0; i < src->nrc; i++) {
		struct nh_rc *r = src->rc[i];
		r->name = map[r->name];
		for (uint64_t k = 0; k < r->n && k < NH_KEEP; k++)
			r->ring[k].func = map[r->ring[k].func], r->ring[k].dtype = map[r->ring[k].dtype];
		for (unsigned k = 0; k < r->nf; k++)
			r->f[k].func = map[r->f[k].func];
		r->file += f0;
		if (dst->nrc == dst->rccap) {
			dst->rccap = dst->rccap ? 2 * dst->rccap : 16;
			dst->rc = xrealloc(dst->rc, dst->rccap * sizeof *dst->rc);
		}
		dst->rc[dst->nrc++] = r;
	}
	for (size_t i = 0; i < src->nf; i++) {
		if (dst->nf == dst->fcap) {
			dst->fcap = dst->fcap ? 2 * dst->fcap : 16;
			dst->f = xrealloc(dst->f, dst->fcap * sizeof *dst->f);
		}
		dst->f[dst->nf] = src->f[i];
		dst->f[dst->nf++].first_rc += rc0;
	}
	dst->colls += src->colls;
	free(map);
	src->nrc = src->nf = 0; /* moved */
	nh_free(src);
}
