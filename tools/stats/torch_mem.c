// SPDX-License-Identifier: MIT
/* torch_mem: PyTorch's memory (CUPTRACE_TORCH=memory), as torch.profiler's
 * profile_memory shows it: per rank and device the allocations, the peak
 * and the last total the allocator reported; per step, the peak and the
 * total at the step's end; and the operators that allocated the most
 * (the model ties an allocation to the innermost operator open on its
 * thread, m_torch.allocs/alloc_bytes). The totals are the allocator's own
 * (allocated and reserved after each event), not sums of ours: events
 * before the capture started are in them. */
#include "stats/named.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define TOP 20 /* operators listed */

struct sample {
	uint64_t ts, allocated;
};

struct dev {
	int64_t rank, device;
	uint64_t allocs, frees, bytes, peak, peak_reserved, last, last_ts;
	struct sample *s; /* every total, for the steps (16 bytes an event) */
	size_t n, cap;
};

struct step {
	int64_t rank;
	uint64_t id, ts, end;
};

struct opmem { /* of an operator's name (struct named) */
	uint64_t calls, allocs, bytes;
};

struct steps {
	struct step *v;
	size_t n, cap;
};

struct tm {
	int named;
	struct dev *d;
	size_t nd;
	/* cuptrace's steps, and torch.profiler's ProfilerStep#N scopes: the
	 * first when there are any */
	struct steps st, pst;
	struct named ops;
};

static void *begin(const struct stats_opts *opts)
{
	struct tm *m = xcalloc(1, sizeof *m);
	m->named = opts->explicit_list;
	named_init(&m->ops, sizeof(struct opmem));
	return m;
}

static struct dev *dev_of(struct tm *m, int64_t rank, int64_t device)
{
	for (size_t i = 0; i < m->nd; i++)
		if (m->d[i].rank == rank && m->d[i].device == device)
			return &m->d[i];
	m->d = xrealloc(m->d, (m->nd + 1) * sizeof *m->d);
	struct dev *d = &m->d[m->nd++];
	memset(d, 0, sizeof *d);
	d->rank = rank;
	d->device = device;
	return d;
}

static void step_add(struct steps *s, int64_t rank, uint64_t id, uint64_t ts, uint64_t end)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = (struct step){rank, id, ts, end};
}

#define PSTEP "ProfilerStep#"

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct tm *m = p;
	if (ev->cat == MC_TORCH_MEM && ev->type == ME_INSTANT) {
		const struct m_tmem *a = &ev->tmem;
		struct dev *d = dev_of(m, t->rank, a->device);
		if (a->bytes > 0) {
			d->allocs++;
			d->bytes += (uint64_t)a->bytes;
		} else if (a->bytes < 0) {
			d->frees++;
		}
		if (a->allocated > d->peak)
			d->peak = a->allocated;
		if (a->reserved > d->peak_reserved)
			d->peak_reserved = a->reserved;
		if (ev->ts >= d->last_ts) {
			d->last = a->allocated;
			d->last_ts = ev->ts;
		}
		if (d->n == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 256;
			d->s = xrealloc(d->s, d->cap * sizeof *d->s);
		}
		d->s[d->n++] = (struct sample){ev->ts, a->allocated};
	} else if (ev->cat == MC_STEP && ev->type == ME_SLICE && !ev->span->unfinished) {
		step_add(&m->st, t->rank, ev->span->id, ev->ts, ev->end);
	} else if (ev->cat == MC_TORCH_SCOPE && ev->torch.name.len > strlen(PSTEP) &&
	           !memcmp(ev->torch.name.s, PSTEP, strlen(PSTEP))) {
		char num[24];
		size_t n = ev->torch.name.len - strlen(PSTEP);
		if (n < sizeof num) {
			memcpy(num, ev->torch.name.s + strlen(PSTEP), n);
			num[n] = 0;
			char *e;
			unsigned long long id = strtoull(num, &e, 10);
			if (!*e)
				step_add(&m->pst, t->rank, id, ev->ts, ev->end);
		}
	}
	if ((ev->cat == MC_TORCH_OP || ev->cat == MC_TORCH_SCOPE) && ev->torch.allocs) {
		struct opmem *o = named_get(&m->ops, ev->torch.name.s ? ev->torch.name.s : "",
		                            ev->torch.name.len);
		o->calls++;
		o->allocs += ev->torch.allocs;
		o->bytes += ev->torch.alloc_bytes;
	}
}

static void add_op(void *into, void *from)
{
	struct opmem *d = into;
	const struct opmem *s = from;
	d->calls += s->calls;
	d->allocs += s->allocs;
	d->bytes += s->bytes;
}

static void merge(void *p, void *part)
{
	struct tm *m = p, *o = part;
	for (size_t i = 0; i < o->nd; i++) {
		struct dev *s = &o->d[i], *d = dev_of(m, s->rank, s->device);
		d->allocs += s->allocs;
		d->frees += s->frees;
		d->bytes += s->bytes;
		if (s->peak > d->peak)
			d->peak = s->peak;
		if (s->peak_reserved > d->peak_reserved)
			d->peak_reserved = s->peak_reserved;
		if (s->last_ts >= d->last_ts)
			d->last = s->last, d->last_ts = s->last_ts;
		d->s = xrealloc(d->s, (d->n + s->n + 1) * sizeof *d->s);
		memcpy(d->s + d->n, s->s, s->n * sizeof *s->s);
		d->n += s->n;
		d->cap = d->n + 1;
		free(s->s);
	}
	for (size_t i = 0; i < o->st.n; i++)
		step_add(&m->st, o->st.v[i].rank, o->st.v[i].id, o->st.v[i].ts, o->st.v[i].end);
	for (size_t i = 0; i < o->pst.n; i++)
		step_add(&m->pst, o->pst.v[i].rank, o->pst.v[i].id, o->pst.v[i].ts, o->pst.v[i].end);
	named_merge(&m->ops, &o->ops, add_op);
	free(o->d);
	free(o->st.v);
	free(o->pst.v);
	free(o);
}

static void pack(void *part, struct pack *b)
{
	struct tm *o = part;
	pk_u64(b, o->nd);
	for (size_t i = 0; i < o->nd; i++) {
		struct dev d = o->d[i];
		pk_array(b, d.s, d.n, sizeof *d.s);
		d.s = NULL;
		PK(b, d);
	}
	pk_array(b, o->st.v, o->st.n, sizeof *o->st.v);
	pk_array(b, o->pst.v, o->pst.n, sizeof *o->pst.v);
	named_pack(&o->ops, b, NULL);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct tm *o = xcalloc(1, sizeof *o);
	o->named = ((struct tm *)p)->named;
	named_init(&o->ops, sizeof(struct opmem));
	size_t nd = (size_t)up_u64(b);
	if (nd > b->n - b->at)
		b->bad = 1;
	o->d = b->bad ? NULL : xcalloc(nd ? nd : 1, sizeof *o->d);
	for (size_t i = 0; i < nd && !b->bad; i++) {
		size_t n;
		struct sample *s = up_array(b, &n, sizeof *s);
		UP(b, o->d[i]);
		o->d[i].s = s, o->d[i].n = n, o->d[i].cap = n;
		o->nd++;
	}
	o->st.v = up_array(b, &o->st.n, sizeof *o->st.v);
	o->st.cap = o->st.n;
	o->pst.v = up_array(b, &o->pst.n, sizeof *o->pst.v);
	o->pst.cap = o->pst.n;
	named_unpack(&o->ops, b, NULL);
	return o;
}

static int cmp_dev(const void *x, const void *y)
{
	const struct dev *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_step(const void *x, const void *y)
{
	const struct step *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

struct top {
	const char *name;
	const struct opmem *o;
};

static int cmp_op(const void *x, const void *y)
{
	const struct top *a = x, *b = y;
	if (a->o->bytes != b->o->bytes)
		return a->o->bytes < b->o->bytes ? 1 : -1;
	return strcmp(a->name, b->name);
}

static void device_cell(struct table *t, int64_t device)
{
	char buf[32];
	if (device < 0)
		snprintf(buf, sizeof buf, "cpu");
	else
		snprintf(buf, sizeof buf, "cuda:%lld", (long long)device);
	table_str(t, buf);
}

static struct table *per_step(struct tm *m)
{
	static const char *const cols[] = {"Rank", "Step", "Device", "Peak Allocated (B)",
	                                   "Allocated at End (B)"};
	struct table *t = table_new("torch_mem: memory per step", 5, cols);
	const struct steps *use = m->st.n ? &m->st : &m->pst;
	if (use->n) /* (qsort's array may not be NULL, even empty) */
		qsort(use->v, use->n, sizeof *use->v, cmp_step);
	for (size_t i = 0; i < m->nd; i++) {
		struct dev *d = &m->d[i];
		qsort(d->s, d->n, sizeof *d->s, cmp_sample);
		size_t j = 0;
		uint64_t current = 0; /* the total before the step: its start's */
		for (size_t k = 0; k < use->n; k++) {
			const struct step *s = &use->v[k];
			if (s->rank != d->rank)
				continue;
			while (j < d->n && d->s[j].ts < s->ts)
				current = d->s[j++].allocated;
			uint64_t peak = current;
			while (j < d->n && d->s[j].ts < s->end) {
				current = d->s[j++].allocated;
				if (current > peak)
					peak = current;
			}
			table_row(t);
			table_i64(t, d->rank);
			table_u64(t, s->id);
			device_cell(t, d->device);
			table_u64(t, peak);
			table_u64(t, current);
		}
	}
	if (!use->n)
		table_note(t, "no steps in the inputs (cuptrace_step(), CUPTRACE_STEPS, "
		              "cuptrace.profile, torch.profiler's ProfilerStep#N)");
	return t;
}

static int end(void *p, struct table **out)
{
	struct tm *m = p;
	int n = 0;
	if (!m->nd && !m->named) { /* not asked for by name: nothing */
		free(m->st.v);
		free(m->pst.v);
		named_free(&m->ops);
		free(m);
		return 0;
	}
	if (m->nd)
		qsort(m->d, m->nd, sizeof *m->d, cmp_dev);
	static const char *const c1[] = {"Rank",        "Device",
	                                 "Allocations", "Frees",
	                                 "Allocated (B)", "Peak Allocated (B)",
	                                 "Peak Reserved (B)", "Allocated at End (B)"};
	struct table *t = table_new("torch_mem: memory per device", 8, c1);
	for (size_t i = 0; i < m->nd; i++) {
		const struct dev *d = &m->d[i];
		table_row(t);
		table_i64(t, d->rank);
		device_cell(t, d->device);
		table_u64(t, d->allocs);
		table_u64(t, d->frees);
		table_u64(t, d->bytes);
		table_u64(t, d->peak);
		table_u64(t, d->peak_reserved);
		table_u64(t, d->last);
	}
	if (!m->nd)
		table_note(t, "no PyTorch memory events in the inputs (trace them with "
		              "`cuptrace run -t cuda,nvtx,torch --torch memory`)");
	out[n++] = t;
	if (m->nd)
		out[n++] = per_step(m);
	struct top *top = xcalloc(m->ops.n + 1, sizeof *top);
	for (size_t i = 0; i < m->ops.n; i++)
		top[i] = (struct top){m->ops.keys[i], m->ops.v[i]};
	qsort(top, m->ops.n, sizeof *top, cmp_op);
	static const char *const c3[] = {"Allocated (B)", "Allocations", "Calls", "Name"};
	struct table *t3 = table_new("torch_mem: operators that allocated the most", 4, c3);
	for (size_t i = 0; i < m->ops.n && i < TOP; i++) {
		table_row(t3);
		table_u64(t3, top[i].o->bytes);
		table_u64(t3, top[i].o->allocs);
		table_u64(t3, top[i].o->calls);
		table_str(t3, top[i].name);
	}
	free(top);
	if (m->nd)
		out[n++] = t3;
	else
		table_free(t3);
	for (size_t i = 0; i < m->nd; i++)
		free(m->d[i].s);
	free(m->d);
	free(m->st.v);
	free(m->pst.v);
	named_free(&m->ops);
	free(m);
	return n;
}

const struct report report_torch_mem = {
	"torch_mem",
	"PyTorch memory (--torch memory): per device allocations, peak and last total; "
	"per step peak and end; the operators that allocated the most",
	begin, event, end,
	.merge = merge, .pack = pack, .unpack = unpack,
};
