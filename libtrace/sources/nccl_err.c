// SPDX-License-Identifier: MIT
/* NCCL errors as a trigger of the flight recorder (docs/flight-recorder.md).
 * NCCL's profiler plugin is never told of errors, so the library, preloaded
 * ahead of libnccl.so.2, stands in front of the calls through which they
 * surface and forwards each to NCCL's own (found on first use, no lock):
 *   ncclCommGetAsyncError  an error in *asyncError (PyTorch's watchdog
 *                          polls it): cause nccl_error;
 *   ncclCommAbort          cause nccl_abort, asked before NCCL aborts;
 *   ncclGroupEnd and the common collectives and p2p calls: an error
 *                          returned is cause nccl_error.
 * A call costs one indirect call and one predictable branch more; nothing
 * is recorded. Outside flight mode an error asks the writer, once, to write
 * what it holds (never waiting), as the hang watchdog does.
 *
 * Our own declarations, as NCCL 2.28's nccl.h has them (ncclResult_t,
 * ncclDataType_t and ncclRedOp_t are enums, int-sized): no NCCL header is
 * needed to build. A program that dlopen()s NCCL and calls through dlsym,
 * or links it statically, is not seen; neither is one where the library
 * came in through CUDA_INJECTION64_PATH alone (no preload). */
#include "flight.h"
#include "trace.h"
#include "writer.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>

typedef void *nccl_comm;
typedef void *nccl_stream;

enum {
	NCCL_SUCCESS = 0,
	NCCL_INTERNAL_ERROR = 3,
	NCCL_IN_PROGRESS = 7,
	NCCL_NUM_RESULTS = 8,
};

/* ncclResult_t's names, by value (nccl.h). */
static const char *const result_names[NCCL_NUM_RESULTS] = {
    "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
    "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress",
};

/* An NCCL result that is an error: the one test on every call. */
#define FAILED(r) __builtin_expect((r) != NCCL_SUCCESS && (r) != NCCL_IN_PROGRESS, 0)

/* Whether f is a function of this library. */
static int ours(void *f)
{
	Dl_info a, b;
	return dladdr(f, &a) && dladdr((void *)ours, &b) && a.dli_fbase == b.dli_fbase;
}

struct lookup {
	const char *name;
	void *f;
};

/* A loaded object that has q->name, other than ours. */
static int look_in(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct lookup *q = data;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	void *f = dlsym(h, q->name);
	dlclose(h); /* NOLOAD: only the count dlopen added */
	if (f && !ours(f)) {
		q->f = f;
		return 1;
	}
	return 0;
}

/* NCCL's function `name`: the next definition after ours in the global
 * scope (NCCL linked by the program, or loaded with RTLD_GLOBAL), else
 * the first loaded object that has one (NCCL loaded with RTLD_LOCAL, as
 * the dependency of a library Python loaded: the program still binds to
 * ours, which is in the global scope, but RTLD_NEXT does not see NCCL). */
static void *find(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f)
		return f;
	struct lookup q = {name, NULL};
	dl_iterate_phdr(look_in, &q);
	return q.f;
}

/* NCCL's function `name`, looked up once into *slot (threads racing to it
 * find the same one); NULL while no NCCL is loaded, and looked up again
 * then at the next call. */
static void *real(_Atomic(void *) *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);
	if (__builtin_expect(f != NULL, 1))
		return f;
	f = find(name);
	if (f)
		atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

#define REAL(type, name)                                                                           \
	({                                                                                         \
		static _Atomic(void *) slot_;                                                      \
		(type) real(&slot_, name);                                                         \
	})

typedef const char *(*err_string_fn)(int);
typedef const char *(*last_error_fn)(nccl_comm);

/* The cause in words: "nccl_error: ncclSystemError (2) from ncclAllReduce:
 * unhandled system error (...); last error: ...". */
static void describe(char *buf, size_t len, int r, const char *call, nccl_comm comm)
{
	const char *name = r >= 0 && r < NCCL_NUM_RESULTS ? result_names[r] : "ncclResult";
	err_string_fn es = REAL(err_string_fn, "ncclGetErrorString");
	last_error_fn le = REAL(last_error_fn, "ncclGetLastError");
	const char *text = es ? es(r) : NULL;
	const char *last = le && comm ? le(comm) : NULL;
	snprintf(buf, len, "nccl_error: %s (%d) from %s%s%.72s%s%.90s", name, r, call,
	         text && *text ? ": " : "", text ? text : "", last && *last ? "; last error: " : "",
	         last ? last : "");
}

/* Outside flight mode: the writer asked, once, to write what it holds,
 * without waiting (a process that goes on to die by SIGKILL keeps it). */
static void flush_once(void)
{
	static _Atomic int flushed;
	if (!atomic_exchange(&flushed, 1))
		ct_writer_flush(CT_FLUSH_BLOCK, 0, 0, 0);
}

/* An error r came out of `call`: in flight mode a dump. Off the fast path;
 * once only (the cause fires once, and a watchdog polls the same error
 * again until it aborts). */
__attribute__((noinline, cold)) static void failed(int r, const char *call, nccl_comm comm)
{
	static _Atomic int told;
	if (!ct.active || atomic_exchange(&told, 1))
		return;
	if (!(ct.cfg.flight > 0)) {
		flush_once();
		return;
	}
	char note[256];
	describe(note, sizeof note, r, call, comm);
	ct_writer_flight_note(CT_FL_NCCL_ERR, (uint64_t)(unsigned)r, note);
}

typedef int (*async_error_fn)(nccl_comm, int *);

CT_API int ncclCommGetAsyncError(nccl_comm comm, int *async_error)
{
	async_error_fn f = REAL(async_error_fn, "ncclCommGetAsyncError");
	if (!f)
		return NCCL_INTERNAL_ERROR; /* no NCCL loaded: never happens in a linked program */
	int r = f(comm, async_error);
	if (FAILED(r))
		failed(r, "ncclCommGetAsyncError", comm);
	else if (async_error && FAILED(*async_error))
		failed(*async_error, "ncclCommGetAsyncError", comm);
	return r;
}

typedef int (*abort_fn)(nccl_comm);

CT_API int ncclCommAbort(nccl_comm comm)
{
	abort_fn f = REAL(abort_fn, "ncclCommAbort");
	if (ct.active && ct.cfg.flight > 0)
		ct_writer_flight_note(CT_FL_NCCL_ABORT, 0, "nccl_abort: ncclCommAbort");
	else if (ct.active)
		flush_once();
	return f ? f(comm) : NCCL_INTERNAL_ERROR;
}

typedef int (*group_end_fn)(void);

CT_API int ncclGroupEnd(void)
{
	group_end_fn f = REAL(group_end_fn, "ncclGroupEnd");
	int r = f ? f() : NCCL_INTERNAL_ERROR;
	if (FAILED(r) && f)
		failed(r, "ncclGroupEnd", NULL);
	return r;
}

/* A collective or p2p call of NCCL's: forwarded, its result checked. */
#define FORWARD(name, params, args)                                                                \
	typedef int(*name##_fn) params;                                                            \
	CT_API int name params                                                                     \
	{                                                                                          \
		name##_fn f = REAL(name##_fn, #name);                                              \
		if (!f)                                                                            \
			return NCCL_INTERNAL_ERROR;                                                \
		int r = f args;                                                                    \
		if (FAILED(r))                                                                     \
			failed(r, #name, comm);                                                    \
		return r;                                                                          \
	}

FORWARD(ncclAllReduce,
        (const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, nccl_comm comm,
         nccl_stream stream),
        (sendbuff, recvbuff, count, datatype, op, comm, stream))
FORWARD(ncclBroadcast,
        (const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, nccl_comm comm,
         nccl_stream stream),
        (sendbuff, recvbuff, count, datatype, root, comm, stream))
FORWARD(ncclReduce,
        (const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, int root,
         nccl_comm comm, nccl_stream stream),
        (sendbuff, recvbuff, count, datatype, op, root, comm, stream))
FORWARD(ncclAllGather,
        (const void *sendbuff, void *recvbuff, size_t sendcount, int datatype, nccl_comm comm,
         nccl_stream stream),
        (sendbuff, recvbuff, sendcount, datatype, comm, stream))
FORWARD(ncclReduceScatter,
        (const void *sendbuff, void *recvbuff, size_t recvcount, int datatype, int op,
         nccl_comm comm, nccl_stream stream),
        (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))
FORWARD(ncclSend,
        (const void *sendbuff, size_t count, int datatype, int peer, nccl_comm comm,
         nccl_stream stream),
        (sendbuff, count, datatype, peer, comm, stream))
FORWARD(ncclRecv,
        (void *recvbuff, size_t count, int datatype, int peer, nccl_comm comm, nccl_stream stream),
        (recvbuff, count, datatype, peer, comm, stream))
