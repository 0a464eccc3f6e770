// SPDX-License-Identifier: MIT
/* The writer's rotation rebases each thread's drop counts
 * (ct_threads_rebase_drops, libtrace/thread.c) while new threads may be
 * claiming free slots and zeroing them: the writer must leave FREE and
 * CLAIMING slots alone, or a stale count copied after the zeroing makes
 * the next DROPS item wrap (a count of 2^64 - 4). Each state is set up
 * as the claimer leaves it between its stores, and the rule checked. */
#include "check.h"
#include "ring.h"
#include "thread.h"
#include "trace.h"

#include <stdlib.h>

static struct ct_thread *slot(int state, uint64_t reported, uint64_t base)
{
	struct ct_thread *t = calloc(1, sizeof *t);
	CHECK(t);
	atomic_store(&t->state, state);
	for (unsigned k = 0; k < CT_NKINDS; k++)
		t->drops_reported[k] = reported, t->drops_base[k] = base;
	t->next = atomic_load(&ct_threads);
	atomic_store(&ct_threads, t);
	return t;
}

int main(void)
{
	/* A free slot a past thread left with 5 drops reported. */
	struct ct_thread *free_ = slot(CT_T_FREE, 5, 0);
	/* A claimer that zeroed reported but not yet base, and one that
	 * zeroed both: the writer copying reported -> base now would leave
	 * base 5 or 0 against a fresh count. */
	struct ct_thread *half = slot(CT_T_CLAIMING, 0, 5);
	struct ct_thread *claimed = slot(CT_T_CLAIMING, 0, 0);
	/* Live and exited threads: their counts start over in the new file. */
	struct ct_thread *live = slot(CT_T_ACTIVE, 7, 2);
	struct ct_thread *exited = slot(CT_T_EXITED, 9, 1);
	struct ct_thread *draining = slot(CT_T_DRAINING, 4, 4);
	ct_threads_rebase_drops();
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		CHECK_EQ(free_->drops_base[k], 0);
		CHECK_EQ(half->drops_base[k], 5); /* its claimer finishes it */
		CHECK_EQ(claimed->drops_base[k], 0);
		CHECK_EQ(live->drops_base[k], 7);
		CHECK_EQ(exited->drops_base[k], 9);
		CHECK_EQ(draining->drops_base[k], 4);
	}
	printf("test_thread_slots: ok\n");
	return 0;
}
