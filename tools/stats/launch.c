// SPDX-License-Identifier: MIT
/* launch: per kernel name, from the model's launch flows (a CUDA call to
 * the kernel it launched): launches, the median launch latency (kernel
 * start minus the end of its launch call; negative when the kernel began
 * before the call returned), the median kernel duration, and how many
 * kernels ran shorter than their launch call took (launch-bound work), as
 * HTA's kernel launch statistics. Kernels whose call is not in the trace
 * do not count. */
#include "stats/named.h"
#include "stats/quant.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct kl {
	uint64_t n, shorter;
	struct quant lat, dur;
};

struct lr {
	const struct stats_opts *opts;
	struct named by;
};

static void *begin(const struct stats_opts *opts)
{
	struct lr *l = xcalloc(1, sizeof *l);
	l->opts = opts;
	named_init(&l->by, sizeof(struct kl));
	return l;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	(void)t;
	struct lr *l = p;
	if (ev->type != ME_FLOW || ev->cat != MC_LAUNCH || ev->flow.to_cat != MC_KERNEL)
		return;
	const struct sref *nm = &ev->flow.name;
	struct kl *k = nm->len ? named_get(&l->by, nm->s, nm->len) : named_get(&l->by, "(unknown)", 9);
	uint64_t call = ev->flow.from_end > ev->ts ? ev->flow.from_end - ev->ts : 0;
	uint64_t dur = ev->flow.to_end > ev->flow.to_ts ? ev->flow.to_end - ev->flow.to_ts : 0;
	k->n++;
	quant_add(&k->lat, (int64_t)ev->flow.to_ts - (int64_t)ev->flow.from_end);
	quant_add(&k->dur, (int64_t)dur);
	k->shorter += dur < call;
}

static void merge_kl(void *into, void *from)
{
	struct kl *a = into, *b = from;
	a->n += b->n;
	a->shorter += b->shorter;
	quant_merge(&a->lat, &b->lat);
	quant_merge(&a->dur, &b->dur);
}

static void merge(void *p, void *part)
{
	struct lr *l = part;
	named_merge(&((struct lr *)p)->by, &l->by, merge_kl);
	free(l);
}

static void pack_kl(void *rec, struct pack *b)
{
	quant_pack(&((struct kl *)rec)->lat, b);
	quant_pack(&((struct kl *)rec)->dur, b);
}

static void unpack_kl(void *rec, struct pack *b)
{
	quant_unpack(&((struct kl *)rec)->lat, b);
	quant_unpack(&((struct kl *)rec)->dur, b);
}

static void pack(void *part, struct pack *b)
{
	named_pack(&((struct lr *)part)->by, b, pack_kl);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct lr *l = begin(((struct lr *)p)->opts);
	named_unpack(&l->by, b, unpack_kl);
	return l;
}

struct order {
	size_t i;
	uint64_t n;
	const char *name;
};

static int cmp(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int end(void *p, struct table **out)
{
	struct lr *l = p;
	if (!l->by.n && !l->opts->explicit_list) {
		named_free(&l->by);
		free(l);
		return 0;
	}
	static const char *const C[] = {"Launches", "Med Launch Latency (ns)", "Med Kernel Dur (ns)",
	                                "Shorter Than Launch", "Name"};
	struct table *t = table_new("launch: kernel launch statistics", 5, C);
	struct order *o = xcalloc(l->by.n, sizeof *o);
	for (size_t i = 0; i < l->by.n; i++)
		o[i] = (struct order){i, ((struct kl *)l->by.v[i])->n, l->by.keys[i]};
	qsort(o, l->by.n, sizeof *o, cmp);
	for (size_t k = 0; k < l->by.n; k++) {
		struct kl *x = l->by.v[o[k].i];
		table_row(t);
		table_u64(t, x->n);
		table_f(t, quant_median(&x->lat), 1);
		table_f(t, quant_median(&x->dur), 1);
		table_u64(t, x->shorter);
		table_str(t, o[k].name);
		quant_free(&x->lat), quant_free(&x->dur);
	}
	if (!l->by.n)
		table_note(t, "(no kernel launch with both its call and its kernel in the inputs)");
	free(o);
	named_free(&l->by);
	free(l);
	out[0] = t;
	return 1;
}

const struct report report_launch = {
    "launch",
    "per kernel: launches, median launch latency and duration, kernels shorter than their call",
    begin, event, end,
    .merge = merge, .pack = pack, .unpack = unpack,
};
