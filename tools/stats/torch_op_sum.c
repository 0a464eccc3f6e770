// SPDX-License-Identifier: MIT
/* torch_op_sum: PyTorch operators and record_function scopes as
 * torch.profiler's key_averages() table has them: per name (--by shape:
 * per name and input shapes, as key_averages(group_by_input_shape=True)),
 * calls, self and total CPU time, and the GPU time of the kernels, copies
 * and memsets each launched (self: launched by the operator itself, the
 * innermost one open at the launch; total: by it and everything inside
 * it). The model says which operators are inside which (m_torch.kids)
 * and which operator each piece of GPU work came from (m_gpu.ext); this
 * report adds them up. Rows by CPU total, largest first. */
#include "stats/stats.h"
#include "stats/torch_dims.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct row {
	char *name, *dims; /* dims: "" unless --by shape */
	uint64_t calls, self_cpu, cpu, self_gpu, gpu;
};

/* An operator of the file being read: its row, and the operator it is
 * directly inside (0: none). */
struct op {
	uint64_t id, parent;
	size_t row;
};

struct tos {
	int by_shape, named;
	struct row *rows;
	size_t nrows, rcap;
	struct hmap index; /* key's hash -> row + 1 (collisions checked by key) */
	/* of the file being read (a part holds one file) */
	struct op *ops;
	size_t nops, ocap;
	struct hmap op_index; /* id -> ops + 1 */
	struct hmap gpu;      /* operator id -> GPU ns launched by it */
};

static void *begin(const struct stats_opts *opts)
{
	struct tos *st = xcalloc(1, sizeof *st);
	st->by_shape = opts->by_shape;
	st->named = opts->explicit_list;
	return st;
}

static uint64_t key_hash(const char *name, size_t nl, const char *dims, size_t dl)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < nl; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (size_t i = 0; i < dl; i++)
		h = (h ^ (unsigned char)dims[i]) * 1099511628211ull;
	return h ? h : 1;
}

/* The row of (name, dims), made when new. */
static size_t row_of(struct tos *st, const char *name, size_t nl, const char *dims, size_t dl)
{
	uint64_t h = key_hash(name, nl, dims, dl);
	for (;; h = h + 1 ? h + 1 : 1) {
		uintptr_t at = (uintptr_t)hmap_get(&st->index, h);
		if (!at)
			break;
		const struct row *r = &st->rows[at - 1];
		if (strlen(r->name) == nl && !memcmp(r->name, name, nl) && strlen(r->dims) == dl &&
		    !memcmp(r->dims, dims, dl))
			return at - 1;
	}
	if (st->nrows == st->rcap) {
		st->rcap = st->rcap ? 2 * st->rcap : 64;
		st->rows = xrealloc(st->rows, st->rcap * sizeof *st->rows);
	}
	struct row *r = &st->rows[st->nrows];
	memset(r, 0, sizeof *r);
	r->name = xstrndup(name, nl);
	r->dims = xstrndup(dims, dl);
	hmap_put(&st->index, h, (void *)(uintptr_t)(st->nrows + 1));
	return st->nrows++;
}

static struct op *op_get(struct tos *st, uint64_t id)
{
	uintptr_t at = (uintptr_t)hmap_get(&st->op_index, id);
	return at ? &st->ops[at - 1] : NULL;
}

static struct op *op_add(struct tos *st, uint64_t id)
{
	struct op *o = op_get(st, id);
	if (o)
		return o;
	if (st->nops == st->ocap) {
		st->ocap = st->ocap ? 2 * st->ocap : 256;
		st->ops = xrealloc(st->ops, st->ocap * sizeof *st->ops);
	}
	o = &st->ops[st->nops];
	*o = (struct op){id, 0, SIZE_MAX};
	hmap_put(&st->op_index, id, (void *)(uintptr_t)(st->nops + 1));
	st->nops++;
	return o;
}

static void on_op(struct tos *st, const struct m_event *ev)
{
	const struct m_torch *o = &ev->torch;
	char dims[1024];
	size_t dl = 0;
	if (st->by_shape)
		dl = torch_dims_text(o->dims.s, o->dims.len, dims, sizeof dims);
	size_t r = row_of(st, o->name.s ? o->name.s : "", o->name.len, dims, dl);
	struct row *row = &st->rows[r];
	uint64_t dur = ev->end - ev->ts;
	row->calls++;
	row->cpu += dur;
	row->self_cpu += dur > o->child_ns ? dur - o->child_ns : 0;
	if (!o->id)
		return;
	op_add(st, o->id)->row = r;
	for (size_t i = 0; i < o->nkids; i++)
		if (o->kids[i])
			op_add(st, o->kids[i])->parent = o->id;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	(void)t;
	struct tos *st = p;
	if (ev->type != ME_SLICE)
		return;
	if (ev->cat == MC_TORCH_OP || ev->cat == MC_TORCH_SCOPE) {
		on_op(st, ev);
	} else if ((ev->cat == MC_KERNEL || ev->cat == MC_MEMCPY || ev->cat == MC_MEMSET) &&
	           ev->gpu.ext) {
		uint64_t *ns = hmap_get(&st->gpu, ev->gpu.ext);
		if (!ns) {
			ns = xcalloc(1, sizeof *ns);
			hmap_put(&st->gpu, ev->gpu.ext, ns);
		}
		*ns += ev->end - ev->ts;
	}
}

/* The file's GPU time onto its operators' rows: self to the operator
 * that launched it, total to it and every operator it is inside. */
static void settle(struct tos *st)
{
	for (size_t i = 0; i < st->gpu.cap; i++) {
		if (!st->gpu.keys[i])
			continue;
		uint64_t *ns = st->gpu.vals[i];
		const struct op *o = op_get(st, st->gpu.keys[i]);
		if (o && o->row != SIZE_MAX)
			st->rows[o->row].self_gpu += *ns;
		for (size_t depth = 0; o && depth < 4096; depth++) {
			if (o->row != SIZE_MAX)
				st->rows[o->row].gpu += *ns;
			o = o->parent ? op_get(st, o->parent) : NULL;
		}
		free(ns);
	}
	hmap_free(&st->gpu);
	hmap_free(&st->op_index);
	free(st->ops);
	st->ops = NULL;
	st->nops = st->ocap = 0;
}

static void free_rows(struct tos *st)
{
	for (size_t i = 0; i < st->nrows; i++) {
		free(st->rows[i].name);
		free(st->rows[i].dims);
	}
	free(st->rows);
	hmap_free(&st->index);
}

static void merge(void *p, void *part)
{
	struct tos *st = p, *o = part;
	settle(o);
	for (size_t i = 0; i < o->nrows; i++) {
		const struct row *s = &o->rows[i];
		size_t at = row_of(st, s->name, strlen(s->name), s->dims, strlen(s->dims));
		struct row *d = &st->rows[at]; /* after row_of: it may move the rows */
		d->calls += s->calls;
		d->self_cpu += s->self_cpu;
		d->cpu += s->cpu;
		d->self_gpu += s->self_gpu;
		d->gpu += s->gpu;
	}
	free_rows(o);
	free(o);
}

static int by_cpu(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? 1 : -1;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->dims, b->dims);
}

static void pct(struct table *t, uint64_t v, uint64_t total)
{
	if (total)
		table_f(t, 100.0 * (double)v / (double)total, 1);
	else
		table_null(t);
}

static int end(void *p, struct table **out)
{
	struct tos *st = p;
	settle(st);
	if (!st->nrows && !st->named) { /* not asked for by name: nothing */
		free_rows(st);
		free(st);
		return 0;
	}
	qsort(st->rows, st->nrows, sizeof *st->rows, by_cpu);
	uint64_t self_cpu = 0, self_gpu = 0, any_gpu = 0;
	for (size_t i = 0; i < st->nrows; i++) {
		self_cpu += st->rows[i].self_cpu;
		self_gpu += st->rows[i].self_gpu;
		any_gpu |= st->rows[i].gpu;
	}
	static const char *const cols[] = {
	    "Self CPU (%)", "Self CPU (ns)", "CPU Total (ns)", "CPU Avg (ns)", "Self GPU (%)",
	    "Self GPU (ns)", "GPU Total (ns)", "GPU Avg (ns)", "Calls", "Input Dims", "Name"};
	int nc = st->by_shape ? 11 : 10;
	const char *names[11];
	memcpy(names, cols, sizeof names);
	if (!st->by_shape)
		names[9] = "Name";
	struct table *t = table_new(st->by_shape ? "torch_op_sum: PyTorch operators by input shapes"
	                                         : "torch_op_sum: PyTorch operators",
	                            nc, names);
	for (size_t i = 0; i < st->nrows; i++) {
		const struct row *r = &st->rows[i];
		table_row(t);
		pct(t, r->self_cpu, self_cpu);
		table_u64(t, r->self_cpu);
		table_u64(t, r->cpu);
		table_u64(t, r->cpu / r->calls);
		if (any_gpu) {
			pct(t, r->self_gpu, self_gpu);
			table_u64(t, r->self_gpu);
			table_u64(t, r->gpu);
			table_u64(t, r->gpu / r->calls);
		} else {
			for (int c = 0; c < 4; c++)
				table_null(t);
		}
		table_u64(t, r->calls);
		if (st->by_shape)
			table_str(t, r->dims);
		table_str(t, r->name);
	}
	if (!st->nrows)
		table_note(t, "no PyTorch operators in the inputs (trace them with "
		              "`cuptrace run -t cuda,nvtx,torch`; CUPTRACE_TRACE)");
	else if (!any_gpu)
		table_note(t, "no GPU work tied to an operator (no CUDA traced, or a CPU-only run): "
		              "GPU columns empty");
	free_rows(st);
	free(st);
	out[0] = t;
	return 1;
}

const struct report report_torch_op_sum = {
	"torch_op_sum",
	"PyTorch operators and record_function scopes (calls, self and total CPU time, GPU "
	"time of their kernels; --by shape: per input shapes), as torch.profiler's table",
	begin, event, end,
	.merge = merge,
};
