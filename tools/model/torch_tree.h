// SPDX-License-Identifier: MIT
/* Which PyTorch operators are directly inside which, per thread. The
 * observer writes an operator when it ends, so on one thread the ones
 * inside an operator come before it: each thread keeps the operators no
 * record has claimed yet, and an operator claims those it encloses. */
#ifndef CT_TORCH_TREE_H
#define CT_TORCH_TREE_H

#include "model/model.h"
#include "util/hmap.h"

#include <stddef.h>
#include <stdint.h>

struct torch_tree {
	struct hmap threads; /* tid + 1 -> struct tree_thread * */
	uint64_t *kids;      /* the last claim's ids */
	size_t kcap;
};

/* Sets o->kids, o->nkids, o->child_ns for the operator [ts, end] of
 * thread tid, and keeps it for the operator that will enclose it. */
void torch_tree_add(struct torch_tree *t, int64_t tid, uint64_t ts, uint64_t end,
                    struct m_torch *o);
void torch_tree_free(struct torch_tree *t);

#endif
