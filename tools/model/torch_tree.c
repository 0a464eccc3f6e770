// SPDX-License-Identifier: MIT
#include "model/torch_tree.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Unclaimed operators a thread keeps at most: top-level ones are never
 * claimed, and past this the oldest half goes (a scope around more than
 * this many top-level operators then counts those gone as its own time). */
#define KEEP (1u << 16)

struct pending {
	uint64_t ts, end, id;
};

struct tree_thread {
	struct pending *v;
	size_t n, cap;
};

static struct tree_thread *thread_of(struct torch_tree *t, int64_t tid)
{
	uint64_t key = (uint64_t)tid + 1;
	struct tree_thread *th = hmap_get(&t->threads, key);
	if (!th) {
		th = xcalloc(1, sizeof *th);
		hmap_put(&t->threads, key, th);
	}
	return th;
}

/* A thread's unclaimed operators are kept in the order of their ends. On
 * one thread records come in that order; a scope ended on another thread
 * comes with that thread's records, early or late, and takes its place. */
void torch_tree_add(struct torch_tree *t, int64_t tid, uint64_t ts, uint64_t end,
                    struct m_torch *o)
{
	struct tree_thread *th = thread_of(t, tid);
	size_t k = 0, keep = th->n;
	uint64_t child = 0;
	size_t i = th->n;
	while (i > 0) {
		const struct pending *p = &th->v[--i];
		if (p->end <= end && p->ts >= ts) { /* inside: claimed */
			if (k == t->kcap) {
				t->kcap = t->kcap ? 2 * t->kcap : 64;
				t->kids = xrealloc(t->kids, t->kcap * sizeof *t->kids);
			}
			t->kids[k++] = p->id;
			child += p->end - p->ts;
			continue;
		}
		if (p->end < ts) { /* ended before it began, and so did all below */
			i++;
			break;
		}
	}
	/* drop the claimed ones from [i, n), keeping the others in order */
	keep = i;
	for (size_t j = i; j < th->n; j++) {
		const struct pending *p = &th->v[j];
		if (!(p->end <= end && p->ts >= ts))
			th->v[keep++] = *p;
	}
	th->n = keep;
	o->kids = t->kids;
	o->nkids = k;
	o->child_ns = child;
	if (th->n == KEEP) {
		memmove(th->v, th->v + KEEP / 2, (KEEP / 2) * sizeof *th->v);
		th->n = KEEP / 2;
	}
	if (th->n == th->cap) {
		th->cap = th->cap ? 2 * th->cap : 64;
		th->v = xrealloc(th->v, th->cap * sizeof *th->v);
	}
	size_t at = th->n;
	while (at > 0 && th->v[at - 1].end > end)
		at--;
	memmove(th->v + at + 1, th->v + at, (th->n - at) * sizeof *th->v);
	th->v[at] = (struct pending){ts, end, o->id};
	th->n++;
}

void torch_tree_free(struct torch_tree *t)
{
	for (size_t i = 0; i < t->threads.cap; i++)
		if (t->threads.keys[i]) {
			struct tree_thread *th = t->threads.vals[i];
			free(th->v);
			free(th);
		}
	hmap_free(&t->threads);
	free(t->kids);
	memset(t, 0, sizeof *t);
}
