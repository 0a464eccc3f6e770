// SPDX-License-Identifier: MIT
#include "tnames.h"
#include "rec.h"

#include <stdlib.h>
#include <string.h>

/* Bounded: a program that makes threads without end keeps only the first
 * names (later files then name fewer threads, nothing else is lost). */
#define TNAMES_MAX 4096

struct tname {
	int64_t tid; /* the thread the record is filed under */
	uint64_t named, user; /* fields 1 and 3: the thread named; by the user (NVTX) or the OS */
	struct ct_rec *r;
};

static struct {
	struct tname *v;
	size_t n, cap;
} tn;

void ct_tnames_keep(int64_t tid, const struct ct_rec *r)
{
	size_t i = 0;
	while (i < tn.n && !(tn.v[i].named == r->f[F_THREAD_NAME_TID] &&
	                     tn.v[i].user == r->f[F_THREAD_NAME_USER]))
		i++;
	if (i == tn.n) {
		if (tn.n == TNAMES_MAX)
			return;
		if (tn.n == tn.cap) {
			size_t cap = tn.cap ? tn.cap * 2 : 64;
			struct tname *v = realloc(tn.v, cap * sizeof *v);
			if (!v)
				return;
			tn.v = v, tn.cap = cap;
		}
		tn.v[i] =
		    (struct tname){tid, r->f[F_THREAD_NAME_TID], r->f[F_THREAD_NAME_USER], NULL};
		tn.n++;
	}
	struct ct_rec *c = realloc(tn.v[i].r, r->size);
	if (!c)
		return; /* the older copy stays */
	memcpy(c, r, r->size);
	tn.v[i].r = c;
	tn.v[i].tid = tid;
}

void ct_tnames_each(void (*fn)(int64_t tid, struct ct_rec *r))
{
	for (size_t i = 0; i < tn.n; i++)
		if (tn.v[i].r)
			fn(tn.v[i].tid, tn.v[i].r);
}

void ct_tnames_fork_child(void)
{
	/* The parent's writer may have been changing these: leave the pages
	 * (copy-on-write) rather than free them. */
	memset(&tn, 0, sizeof tn);
}
