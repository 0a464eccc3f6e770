// SPDX-License-Identifier: MIT
/* Hangs for the test harnesses (tests/progs/nccl_harness.c): which
 * collective slot never completes, on which rank, and how that rank
 * misbehaves there (HARNESS_HANG=R:K[:MODE], see the harness's usage).
 * A rank that reaches a collective that cannot complete blocks for good,
 * as a real one would in cudaStreamSynchronize, until the test kills it;
 * what it did goes to the truth file first. */
#ifndef CT_HANG_H
#define CT_HANG_H

#include "truth.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HANG_ABSENT, HANG_OP, HANG_COUNT };

static struct {
	int rank;  /* R, -1: no hang */
	long slot; /* K */
	int mode;
	long k;  /* collective slots so far */
	int now; /* the operations being enqueued cannot complete */
	int (*push)(const char *);
	int (*pop)(void);
} hang = {-1, -1, HANG_ABSENT, 0, 0, NULL, NULL};

static void hang_init(void *plugin)
{
	const char *v = getenv("HARNESS_HANG");
	char mode[16] = "";
	if (!v || sscanf(v, "%d:%ld:%15s", &hang.rank, &hang.slot, mode) < 2) {
		hang.rank = -1;
		return;
	}
	hang.mode = !strcmp(mode, "op") ? HANG_OP : !strcmp(mode, "count") ? HANG_COUNT : HANG_ABSENT;
	/* The control API: the library is preloaded, or the plugin is it. */
	hang.push = (int (*)(const char *))dlsym(RTLD_DEFAULT, "cuptrace_range_push");
	hang.pop = (int (*)(void))dlsym(RTLD_DEFAULT, "cuptrace_range_pop");
	if (plugin && !hang.push) {
		hang.push = (int (*)(const char *))dlsym(plugin, "cuptrace_range_push");
		hang.pop = (int (*)(void))dlsym(plugin, "cuptrace_range_pop");
	}
}

static inline void hang_push(const char *name)
{
	if (hang.rank >= 0 && hang.push)
		hang.push(name);
}

static inline void hang_pop(void)
{
	if (hang.rank >= 0 && hang.pop)
		hang.pop();
}

/* Blocks for good: the test kills the process (SIGTERM, SIGKILL) or the
 * job's launcher does. */
static void hang_block(void)
{
	for (;;)
		pause();
}

/* At the next collective slot, on a communicator that holds rank R
 * (member) or not: whether it cannot complete. Rank R in mode absent
 * stops here, inside save_checkpoint. *is_r: this is R at slot K. */
static int hang_at(int member, int me, int *is_r)
{
	long k = hang.k++;
	*is_r = 0;
	if (hang.rank < 0 || k < hang.slot || !member)
		return 0;
	if (me == hang.rank && k == hang.slot) {
		*is_r = 1;
		if (hang.mode == HANG_ABSENT) {
			uint64_t t0 = mono_ns();
			hang_push("save_checkpoint");
			truth("{\"kind\": \"absent\", \"rank\": %d, \"pid\": %d, \"slot\": %ld, "
			      "\"t0\": %llu, \"t1\": %llu}",
			      me, (int)getpid(), k, (unsigned long long)t0,
			      (unsigned long long)mono_ns());
			hang_block();
		}
	}
	return 1;
}

#endif
