// SPDX-License-Identifier: MIT
/* MPI source: what libcuptrace-mpi.so's wrappers hand over (the table of
 * include/cuptrace/mpi_abi.h), recorded. The wrappers know MPI; this file
 * knows only the records: a call (mpi_call, its start and end stamped by
 * the caller with now()), a call entered that may wait (mpi_enter), a
 * request completed (mpi_done), a communicator (mpi_comm, through the
 * definitions queue so that it reaches the file ahead of every call that
 * names it, and is kept whether or not capture is on). Each record is one
 * reservation in the calling thread's ring, as NCCL's callbacks are
 * (bench/progs/bench_mpi.c measures what a call costs). */
#include "capture.h"
#include "clock.h"
#include "cuptrace/mpi_abi.h"
#include "defs.h"
#include "lifecycle.h"
#include "log.h"
#include "record.h"
#include "thread.h"
#include "trace.h"
#include "watchdog.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The strings the wrappers made handles of (function and datatype names,
 * a few dozen), for the watchdog's line: handle -> text. */
#define NSTR 512

static struct {
	_Atomic uint64_t h; /* published last */
	char s[48];
} strs[NSTR];
static _Atomic unsigned nstrs;
static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t string(const char *s, size_t len)
{
	if (!s)
		return 0;
	uint64_t h = ct_handle_new(s, len);
	if (!h)
		return 0;
	pthread_mutex_lock(&str_lock);
	unsigned n = atomic_load_explicit(&nstrs, memory_order_relaxed);
	if (n < NSTR) {
		size_t k = len < sizeof strs[n].s - 1 ? len : sizeof strs[n].s - 1;
		memcpy(strs[n].s, s, k);
		strs[n].s[k] = 0;
		atomic_store_explicit(&strs[n].h, h, memory_order_release);
		atomic_store_explicit(&nstrs, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&str_lock);
	return h;
}

/* The text of handle h, NULL when the wrappers did not make it (the
 * watchdog's line; not on any hot path). */
static const char *str_of(uint64_t h)
{
	unsigned n = atomic_load_explicit(&nstrs, memory_order_acquire);
	for (unsigned i = 0; h && i < n; i++)
		if (atomic_load_explicit(&strs[i].h, memory_order_acquire) == h)
			return strs[i].s;
	return NULL;
}

static uint64_t now(void)
{
	return ct_stamp();
}

static void call(const struct cuptrace_mpi_call *c)
{
	struct ct_thread *t = ct_recorder();
	struct ct_rec *r;
	if (!t || !c || !(r = ct_rec_begin(t, CT_EV_MPI_CALL, F_MPI_CALL_N, 0)))
		return;
	/* both stamps are ct_stamp()'s: the writer maps every TS field */
	r->reserved = ct_tick_flag;
	uint64_t *f = r->f;
	f[F_MPI_CALL_TS] = c->start;
	f[F_MPI_CALL_END] = c->end >= c->start ? c->end : c->start;
	f[F_MPI_CALL_FUNC] = c->func;
	f[F_MPI_CALL_COMM] = c->comm;
	f[F_MPI_CALL_SEQ] = c->seq;
	f[F_MPI_CALL_PEER] = (uint64_t)c->peer;
	f[F_MPI_CALL_WORLD_PEER] = (uint64_t)c->world_peer;
	f[F_MPI_CALL_TAG] = (uint64_t)c->tag;
	f[F_MPI_CALL_COUNT] = c->count;
	f[F_MPI_CALL_DATATYPE] = c->datatype;
	f[F_MPI_CALL_BYTES] = c->bytes;
	f[F_MPI_CALL_RECV_BYTES] = c->recv_bytes;
	f[F_MPI_CALL_REQ] = c->req;
	f[F_MPI_CALL_STATUS] = (uint64_t)c->status;
	ct_commit(t, r->size);
}

static void enter(uint64_t ts, uint64_t func, uint64_t comm, uint64_t seq)
{
	struct ct_thread *t = ct_recorder();
	struct ct_rec *r;
	if (!t || !(r = ct_rec_begin(t, CT_EV_MPI_ENTER, F_MPI_ENTER_N, 0)))
		return;
	r->reserved = ct_tick_flag;
	r->f[F_MPI_ENTER_TS] = ts;
	r->f[F_MPI_ENTER_FUNC] = func;
	r->f[F_MPI_ENTER_COMM] = comm;
	r->f[F_MPI_ENTER_SEQ] = seq;
	ct_commit(t, r->size);
}

static void done(uint64_t ts, uint64_t req, int64_t peer, int64_t tag, uint64_t bytes)
{
	struct ct_thread *t = ct_recorder();
	struct ct_rec *r;
	if (!t || !(r = ct_rec_begin(t, CT_EV_MPI_DONE, F_MPI_DONE_N, 0)))
		return;
	r->reserved = ct_tick_flag;
	r->f[F_MPI_DONE_TS] = ts;
	r->f[F_MPI_DONE_REQ] = req;
	r->f[F_MPI_DONE_PEER] = (uint64_t)peer;
	r->f[F_MPI_DONE_TAG] = (uint64_t)tag;
	r->f[F_MPI_DONE_BYTES] = bytes;
	ct_commit(t, r->size);
}

/* Filed under the process, as NCCL's communicators: defining one must
 * not make a process that records nothing write a file, and a rotation's
 * next file repeats it. */
static void comm(const struct cuptrace_mpi_comm *c)
{
	if (!c)
		return;
	size_t len = c->name ? strnlen(c->name, c->name_len < 4096 ? c->name_len : 4096) : 0;
	struct ct_rec *r = ct_rec_new(CT_EV_MPI_COMM, F_MPI_COMM_N, (uint32_t)len);
	if (!r)
		return;
	r->f[F_MPI_COMM_ID] = c->id;
	r->f[F_MPI_COMM_HANDLE] = c->handle;
	r->f[F_MPI_COMM_SIZE] = c->size;
	r->f[F_MPI_COMM_RANK] = (uint64_t)c->rank;
	r->f[F_MPI_COMM_REMOTE] = c->remote;
	r->f[F_MPI_COMM_PARENT] = c->parent;
	r->f[F_MPI_COMM_NAME] = len;
	if (len)
		memcpy(&r->f[F_MPI_COMM_N], c->name, len);
	ct_defs_add_record(ct.pid, r);
	free(r);
}

static void log_line(int level, const char *msg)
{
	enum ct_log_level l = level <= 1 ? CT_LOG_WARN : level == 2 ? CT_LOG_INFO : CT_LOG_DEBUG;
	if (msg)
		ct_log(l, "%s", msg);
}

static struct cuptrace_mpi_api api = {
    CUPTRACE_MPI_ABI, NULL, now, string, call, enter, done, comm, log_line,
};

CT_API const struct cuptrace_mpi_api *cuptrace_mpi_api(unsigned abi)
{
	ct_enter();
	if (abi != CUPTRACE_MPI_ABI || !ct.active || !(ct.cfg.sources & CT_SRC_MPI))
		return NULL;
	api.gate = (const volatile uint32_t *)&ct_gate;
	if (ct_watch_on())
		atomic_store(&ct_watch_mpi_name_hook, str_of);
	return &api;
}

/* The wrappers are a library of their own, which only LD_PRELOAD puts
 * ahead of the program's MPI: said once where the mpi source is asked for
 * in an MPI program without them (cuptrace run -t mpi preloads both). */
__attribute__((constructor)) static void check_wrappers(void)
{
	ct_start();
	if (ct.active && (ct.cfg.sources & CT_SRC_MPI) && dlsym(RTLD_DEFAULT, "PMPI_Init") &&
	    !dlsym(RTLD_DEFAULT, "cuptrace_mpi_wrappers"))
		ct_warn("the mpi source needs libcuptrace-mpi.so preloaded after libcuptrace.so "
		        "(cuptrace run -t mpi does it); MPI calls are not traced");
}
