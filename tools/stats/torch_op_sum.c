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
#include "stats/named.h"
#include "stats/stats.h"
#include "stats/torch_dims.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* A row's figures; its name is its key in struct named: the input dims
 * (--by shape; digits and punctuation only), SEP, the operator's name. */
struct row {
	uint64_t calls, self_cpu, cpu, self_gpu, gpu;
};

#define SEP '\x1f'

/* An operator of the file being read: its row, and the operator it is
 * directly inside (0: none). */
struct op {
	uint64_t id, parent;
	struct row *row; /* NULL until its own record came */
};

struct tos {
	int by_shape, named;
	struct named rows;
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
	named_init(&st->rows, sizeof(struct row));
	return st;
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
	*o = (struct op){id, 0, NULL};
	hmap_put(&st->op_index, id, (void *)(uintptr_t)(st->nops + 1));
	st->nops++;
	return o;
}

static void on_op(struct tos *st, const struct m_event *ev)
{
	const struct m_torch *o = &ev->torch;
	char key[4096];
	size_t kl = 0;
	if (st->by_shape)
		kl = torch_dims_text(o->dims.s, o->dims.len, key, sizeof key - 1);
	key[kl++] = SEP;
	size_t nl = o->name.len < sizeof key - kl ? o->name.len : sizeof key - kl;
	if (nl)
		memcpy(key + kl, o->name.s, nl);
	struct row *row = named_get(&st->rows, key, kl + nl);
	uint64_t dur = ev->end - ev->ts;
	row->calls++;
	row->cpu += dur;
	row->self_cpu += dur > o->child_ns ? dur - o->child_ns : 0;
	if (!o->id)
		return;
	op_add(st, o->id)->row = row;
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
		if (o && o->row)
			o->row->self_gpu += *ns;
		for (size_t depth = 0; o && depth < 4096; depth++) {
			if (o->row)
				o->row->gpu += *ns;
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

static void add_row(void *into, void *from)
{
	struct row *d = into;
	const struct row *s = from;
	d->calls += s->calls;
	d->self_cpu += s->self_cpu;
	d->cpu += s->cpu;
	d->self_gpu += s->self_gpu;
	d->gpu += s->gpu;
}

static void merge(void *p, void *part)
{
	struct tos *st = p, *o = part;
	settle(o);
	named_merge(&st->rows, &o->rows, add_row);
	free(o);
}

/* A file's part, settled (merge's own settle finds nothing left). */
static void pack(void *part, struct pack *b)
{
	struct tos *o = part;
	settle(o);
	named_pack(&o->rows, b, NULL);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct tos *st = p, *o = xcalloc(1, sizeof *o);
	o->by_shape = st->by_shape;
	o->named = st->named;
	named_init(&o->rows, sizeof(struct row));
	named_unpack(&o->rows, b, NULL);
	return o;
}

struct line {
	const char *key;
	const struct row *r;
};

static int by_cpu(const void *x, const void *y)
{
	const struct line *a = x, *b = y;
	if (a->r->cpu != b->r->cpu)
		return a->r->cpu < b->r->cpu ? 1 : -1;
	return strcmp(a->key, b->key);
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
	size_t n = st->rows.n;
	if (!n && !st->named) { /* not asked for by name: nothing */
		named_free(&st->rows);
		free(st);
		return 0;
	}
	struct line *v = xcalloc(n + 1, sizeof *v);
	uint64_t self_cpu = 0, self_gpu = 0, any_gpu = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = (struct line){st->rows.keys[i], st->rows.v[i]};
		self_cpu += v[i].r->self_cpu;
		self_gpu += v[i].r->self_gpu;
		any_gpu |= v[i].r->gpu;
	}
	qsort(v, n, sizeof *v, by_cpu);
	static const char *const cols[] = {
	    "Self CPU (%)", "Self CPU (ns)", "CPU Total (ns)", "CPU Avg (ns)", "Self GPU (%)",
	    "Self GPU (ns)", "GPU Total (ns)", "GPU Avg (ns)", "Calls", "Input Dims", "Name"};
	const char *names[11];
	memcpy(names, cols, sizeof names);
	if (!st->by_shape)
		names[9] = "Name";
	struct table *t = table_new(st->by_shape ? "torch_op_sum: PyTorch operators by input shapes"
	                                         : "torch_op_sum: PyTorch operators",
	                            st->by_shape ? 11 : 10, names);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = v[i].r;
		const char *name = strchr(v[i].key, SEP);
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
		if (st->by_shape) {
			char dims[4096];
			size_t dl = (size_t)(name - v[i].key);
			memcpy(dims, v[i].key, dl);
			dims[dl] = 0;
			table_str(t, dims);
		}
		table_str(t, name + 1);
	}
	if (!n)
		table_note(t, "no PyTorch operators in the inputs (trace them with "
		              "`cuptrace run -t cuda,nvtx,torch`; CUPTRACE_TRACE)");
	else if (!any_gpu)
		table_note(t, "no GPU work tied to an operator (no CUDA traced, or a CPU-only run): "
		              "GPU columns empty");
	free(v);
	named_free(&st->rows);
	free(st);
	out[0] = t;
	return 1;
}

const struct report report_torch_op_sum = {
	"torch_op_sum",
	"PyTorch operators and record_function scopes (calls, self and total CPU time, GPU "
	"time of their kernels; --by shape: per input shapes), as torch.profiler's table",
	begin, event, end,
	.merge = merge, .pack = pack, .unpack = unpack,
};
