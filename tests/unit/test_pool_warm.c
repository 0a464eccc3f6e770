// SPDX-License-Identifier: MIT
/* The pool keeps recording threads off page faults (libtrace/ring.c): a
 * producer that takes a chunk calls the writer's hook (it comes to drain,
 * so chunks go back while warm), a chunk given back is the next one handed
 * out, and the writer maps the pages of the next chunks a producer would
 * take for the first time, ahead of it, without writing to them. */
#include "check.h"
#include "ring.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { N = 16 };

/* How many of chunk idx's pages are mapped. */
static size_t resident(int32_t idx)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = CT_CHUNK_SIZE / page, got = 0;
	unsigned char *v = malloc(n);
	CHECK(v);
	CHECK_EQ(mincore(ct_chunk_data(idx), CT_CHUNK_SIZE, v), 0);
	for (size_t i = 0; i < n; i++)
		got += v[i] & 1;
	free(v);
	return got == n ? 2 : got ? 1 : 0; /* all, some, none */
}

static int taken;
static void on_taken(void)
{
	taken++;
}

int main(void)
{
	CHECK_EQ(ct_pool_init((size_t)N * CT_CHUNK_SIZE), 0);
	for (int32_t i = 0; i < N; i++)
		CHECK_EQ(resident(i), 0); /* reserved, not touched */
	/* The writer's start: the first chunks are mapped before any event. */
	ct_pool_prefault(4);
	for (int32_t i = 0; i < N; i++)
		CHECK_EQ(resident(i), i < 4 ? 2 : 0);
	/* A producer fills chunks: each one taken calls the hook once. */
	atomic_store(&ct_pool_taken_hook, on_taken);
	struct ct_thread t = {.cur = -1, .rhead = -1, .tid = 1};
	atomic_store(&t.first, -1);
	for (int k = 0; k < 3; k++) {
		uint8_t *p = ct_reserve_slow(&t, 64);
		CHECK(p);
		CHECK_EQ(t.cur, k); /* fresh chunks go in index order */
		CHECK_EQ(taken, k + 1);
	}
	CHECK_EQ(atomic_load(&ct_pool.hiwater), 3);
	/* The writer maps 4 ahead of the highest chunk handed out, once. */
	ct_pool_prefault(4);
	for (int32_t i = 0; i < N; i++)
		CHECK_EQ(resident(i), i < 7 ? 2 : 0);
	/* A drained chunk given back is handed out next, still warm. */
	ct_pool_put(1);
	CHECK_EQ(ct_pool_get(), 1);
	CHECK_EQ(atomic_load(&ct_pool.hiwater), 3);
	/* After fork the child maps its chunks again (copy-on-write). */
	ct_pool_reset();
	CHECK_EQ(atomic_load(&ct_pool.hiwater), 0);
	CHECK_EQ(ct_pool.prefaulted, 0);
	atomic_store(&ct_pool_taken_hook, NULL);
	printf("test_pool_warm: ok\n");
	return 0;
}
