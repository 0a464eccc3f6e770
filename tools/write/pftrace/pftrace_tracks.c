// SPDX-License-Identifier: MIT
/* The .pftrace writer's track ids (uuids of processes, tracks, lanes,
 * counters) and its lanes: a slice that overlaps one on its track without
 * nesting (NVTX ranges of two domains on one thread), and every async
 * range, goes to a lane track of its own: the JSON's overlapping slices,
 * which Perfetto would drop or misnest. */
#include "write/pftrace/pftrace_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

uint64_t proc_uuid(uint64_t pid)
{
	return 1ull << 62 | pid;
}

uint64_t gpu_pid(const struct pft *p, uint64_t dev)
{
	return p->t->pid + 1 + (dev < 999998 ? dev : 999998);
}

uint64_t track_proc_uuid(const struct pft *p, const struct m_track *tr)
{
	return proc_uuid(tr->on_gpu ? gpu_pid(p, tr->device) : p->t->pid);
}

uint64_t async_uuid(const struct pft *p, unsigned lane)
{
	return 1ull << 61 | (uint64_t)p->t->index << 8 | lane;
}

uint64_t counter_uuid(const struct pft *p, uint64_t dev)
{
	return 1ull << 60 | (uint64_t)p->t->index << 20 | (dev & 0xfffff);
}

struct ptrack *ptrack_grow(struct pft *p, const struct m_track *tr)
{
	size_t i = tr->id;
	if (i >= p->ntr) {
		size_t n = p->ntr ? p->ntr * 2 : 64;
		while (n <= i)
			n *= 2;
		p->tr = xrealloc(p->tr, n * sizeof *p->tr);
		memset(p->tr + p->ntr, 0, (n - p->ntr) * sizeof *p->tr);
		p->ntr = n;
	}
	return &p->tr[i];
}

/* A lane of l whose slices [b, e] does not touch; l's last when none is left. */
unsigned lane_pick(struct lanes *l, uint64_t b, uint64_t e)
{
	unsigned i;
	for (i = 0; i < l->n; i++)
		if (e <= l->b[i] || b >= l->e[i])
			break;
	if (i == l->n) {
		if (l->n < LANES) {
			l->n++;
			l->b[i] = b, l->e[i] = e;
			return i;
		}
		i = LANES - 1;
	}
	if (b < l->b[i])
		l->b[i] = b;
	if (e > l->e[i])
		l->e[i] = e;
	return i;
}

/* Forgets the recent slice that ended first when the stack is full, then
 * pushes [b, e]. */
static void stack_push(struct ptrack *pt, uint32_t k, uint64_t b, uint64_t e)
{
	if (k == STACK) {
		uint32_t m = 0;
		for (uint32_t i = 1; i < k; i++)
			if (pt->se[i] < pt->se[m])
				m = i;
		pt->sb[m] = pt->sb[k - 1], pt->se[m] = pt->se[k - 1];
		k--;
	}
	pt->sb[k] = b, pt->se[k] = e;
	pt->ns = k + 1;
}

/* 0: the slice nests with the recent ones of its track (it stays there);
 * else 1 + the lane it goes to. */
unsigned slice_lane(struct ptrack *pt, uint64_t b, uint64_t e)
{
	/* The common case (kernels of a stream, calls of a thread): after all
	 * the recent slices; none overlaps it, encloses it or lies inside it. */
	if (!pt->ns || b > pt->max_se) {
		stack_push(pt, pt->ns, b, e);
		pt->max_se = e;
		return 0;
	}
	int inside = 0;
	for (uint32_t i = 0; i < pt->ns; i++) {
		uint64_t sb = pt->sb[i], se = pt->se[i];
		if ((sb < b && b < se && se < e) || (b < sb && sb < e && e < se))
			return 1 + lane_pick(&pt->l, b, e);
		if (sb <= b && e <= se)
			inside = 1;
	}
	if (inside)
		return 0;
	uint32_t k = 0;
	for (uint32_t i = 0; i < pt->ns; i++) /* drop the slices it encloses */
		if (!(b <= pt->sb[i] && pt->se[i] <= e))
			pt->sb[k] = pt->sb[i], pt->se[k] = pt->se[i], k++;
	stack_push(pt, k, b, e);
	pt->max_se = 0;
	for (uint32_t i = 0; i < pt->ns; i++)
		if (pt->se[i] > pt->max_se)
			pt->max_se = pt->se[i];
	return 0;
}
