// SPDX-License-Identifier: MIT
#include "thread.h"
#include "log.h"
#include "record.h"
#include "trace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct ct_thread *ct_tls __attribute__((tls_model("initial-exec")));
_Atomic(struct ct_thread *) ct_threads;
void (*_Atomic ct_thread_hook)(void);

/* A thread that must not record gets this sentinel: ct_self() returns it,
 * and record helpers see cur < 0 with no pool access possible. */
static struct ct_thread internal_thread = {.cur = -1, .rhead = -1, .first = -1, .tid = -1};

static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_made;

static void on_thread_exit(void *p)
{
	struct ct_thread *t = p;
	/* Only the slot the thread holds now: after a fork, the forking
	 * thread's key may name a slot of the parent's that another thread
	 * of the child has taken since (ct_threads_fork_child clears it, and
	 * this makes sure). */
	if (t == &internal_thread || t != ct_tls)
		return;
	ct_tls = NULL;
	atomic_store_explicit(&t->state, CT_T_EXITED, memory_order_release);
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, on_thread_exit))
		ct_warn("cannot watch thread exits; events of exited threads may be late");
	else
		key_made = 1;
}

/* A CT_K_THREAD ring record: the writer attributes what follows to f[0]. */
#define OWNER_REC_SIZE ct_rec_size(1, 0)

/* A slot whose thread exited and whose current chunk has room: the new
 * thread goes on in that chunk, so that threads that come and go faster
 * than the writer's passes do not each keep a chunk (128 KiB) of which
 * they used a little. Returns it in CLAIMING, or NULL. */
static struct ct_thread *adopt_slot(void)
{
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
		int expect = CT_T_EXITED;
		/* Acquire: pairs with the exited thread's release store of
		 * EXITED; its producer fields are ours now. */
		if (!atomic_compare_exchange_strong_explicit(&t->state, &expect, CT_T_CLAIMING,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		if (t->cur >= 0 && t->pos + OWNER_REC_SIZE <= CT_CHUNK_SIZE)
			return t;
		/* No chunk, or no room for the owner record: the writer
		 * takes it back. */
		atomic_store_explicit(&t->state, CT_T_EXITED, memory_order_release);
	}
	return NULL;
}

static struct ct_thread *claim_slot(void)
{
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
		int expect = CT_T_FREE;
		if (atomic_compare_exchange_strong(&t->state, &expect, CT_T_CLAIMING))
			return t;
	}
	struct ct_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	atomic_store(&t->state, CT_T_CLAIMING);
	struct ct_thread *head = atomic_load(&ct_threads);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&ct_threads, &head, t));
	return t;
}

struct ct_thread *ct_thread_register(void)
{
	if (!ct.active || !ct_pool.mem)
		return NULL;
	pthread_once(&key_once, make_key);
	int tid = (int)syscall(SYS_gettid);
	struct ct_thread *t = adopt_slot();
	int adopted = t != NULL;
	if (!t)
		t = claim_slot();
	if (!t) {
		ct_once(oom_warned, CT_LOG_WARN, "out of memory registering a thread; its events are lost");
		return NULL;
	}
	if (!adopted) {
		/* A free slot: reset every field but the registry link and
		 * state (the writer does not look at FREE or CLAIMING slots,
		 * so its fields are ours too). */
		t->base = NULL;
		t->pos = 0;
		t->cur = -1;
		for (unsigned k = 0; k < CT_NKINDS; k++) {
			atomic_store_explicit(&t->drops[k], 0, memory_order_relaxed);
			t->drops_reported[k] = 0;
			t->drops_base[k] = 0;
		}
		t->rhead = -1;
		t->rpos = 0;
		t->wtid = -1;
		t->tid0 = tid;
		atomic_store_explicit(&t->first, -1, memory_order_relaxed);
	}
	/* An adopted slot keeps its chunks, and its drop counters, which the
	 * writer reports as differences. */
	t->epoch = 0;
	t->depth = t->drop_depth = t->trigger_depth = 0;
	t->tid = tid;
	if (adopted) {
		/* Fits: adopt_slot checked the room. */
		uint64_t f[1] = {(uint64_t)tid};
		ct_rec_simple(t, CT_K_THREAD, f, 1);
	}
	atomic_store_explicit(&t->state, CT_T_ACTIVE, memory_order_release);
	ct_tls = t;
	pthread_setspecific(exit_key, t);
	void (*hook)(void) = atomic_load(&ct_thread_hook);
	if (hook)
		hook();

	char comm[17] = {0};
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
		ct_rec_thread_name(t, (uint64_t)t->tid, comm, strlen(comm), 0);
	return t;
}

void ct_threads_rebase_drops(void)
{
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
		/* A FREE or CLAIMING slot is its claimer's: it zeroes the
		 * counters itself (ct_thread_register). */
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st == CT_T_FREE || st == CT_T_CLAIMING)
			continue;
		memcpy(t->drops_base, t->drops_reported, sizeof t->drops_base);
	}
}

void ct_thread_new_epoch(struct ct_thread *t, uint32_t gate)
{
	if (t->epoch) {
		uint64_t f[F_RESET_N] = {[F_RESET_TS] = ct_stamp()};
		ct_rec_stamped(t, CT_EV_RESET, f, F_RESET_N);
	}
	t->epoch = gate;
	t->depth = 0;
	t->drop_depth = 0;
	t->trigger_depth = 0;
}

void ct_thread_mark_internal(void)
{
	ct_tls = &internal_thread;
}

void ct_threads_fork_child(void)
{
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next)
		atomic_store(&t->state, CT_T_FREE);
	if (ct_tls != &internal_thread) {
		ct_tls = NULL;
		/* The parent's slot is free here: this thread's exit must not
		 * mark it exited once another thread holds it. */
		if (key_made)
			pthread_setspecific(exit_key, NULL);
	}
}
