// SPDX-License-Identifier: MIT
/* The writer's copy of each thread's latest names (the CT_EV_THREAD_NAME
 * records it wrote), so that a file begun by cuptrace_rotate names the
 * threads as the first file does. Writer thread only. */
#ifndef CT_TNAMES_H
#define CT_TNAMES_H

#include <stdint.h>

struct ct_rec;

/* Keeps a copy of r, a thread name filed under thread tid; replaces the
 * one kept for the same thread named and kind of name (OS or user). */
void ct_tnames_keep(int64_t tid, const struct ct_rec *r);
/* Calls fn with each name kept, oldest first; fn may change the copy. */
void ct_tnames_each(void (*fn)(int64_t tid, struct ct_rec *r));
/* In a forked child: the parent's names belong to the parent's threads. */
void ct_tnames_fork_child(void);

#endif
