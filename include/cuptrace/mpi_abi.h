// SPDX-License-Identifier: MIT
/* The mpi source's entry point in libcuptrace.so, for libcuptrace-mpi.so:
 * the library of MPI_* wrappers that `cuptrace run -t mpi` preloads beside
 * libcuptrace.so (libtrace/mpi/). The wrappers know MPI (its handles,
 * statuses and the implementation in the process); libcuptrace.so knows
 * none of it and only records what they hand over, in the calling thread's
 * ring, on the library's clock.
 *
 * The wrappers find cuptrace_mpi_api() with dlsym(RTLD_DEFAULT, ...) at
 * their first call; it returns NULL where this process does not trace or
 * the mpi source is not asked for (CUPTRACE_TRACE), and the wrappers then
 * pass every call through. The functions of the table are safe from any
 * thread, never block, and record nothing while capture is off (the
 * communicators excepted: those are definitions, kept whenever made). */
#ifndef CUPTRACE_MPI_ABI_H
#define CUPTRACE_MPI_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUPTRACE_MPI_ABI 1

/* The fields of an mpi_call record (libtrace/format/fields.h says what
 * each holds). start and end come from now(); func and datatype from
 * string(). */
struct cuptrace_mpi_call {
	uint64_t start, end;
	uint64_t func, datatype;
	uint64_t comm, seq;
	int64_t peer, world_peer, tag;
	uint64_t count, bytes, recv_bytes;
	uint64_t req;
	int64_t status;
};

/* An mpi_comm record: a communicator as this process knows it. */
struct cuptrace_mpi_comm {
	uint64_t id, handle, size, remote, parent;
	int64_t rank;
	const char *name; /* not NUL-terminated; name_len bytes */
	uint32_t name_len;
};

struct cuptrace_mpi_api {
	unsigned abi; /* CUPTRACE_MPI_ABI */
	/* Bit 0 set while capture is on (one relaxed load: the wrappers skip
	 * building records while it is off). */
	const volatile uint32_t *gate;
	/* The library's clock, as every record's. */
	uint64_t (*now)(void);
	/* A string handle for func and datatype (the text is copied). 0 on
	 * failure. */
	uint64_t (*string)(const char *s, size_t len);
	void (*call)(const struct cuptrace_mpi_call *c);
	/* mpi_enter: a call that may wait for other ranks, entered at ts. */
	void (*enter)(uint64_t ts, uint64_t func, uint64_t comm, uint64_t seq);
	/* mpi_done: request req completed by the call recorded next on this
	 * thread, which ends at ts. */
	void (*done)(uint64_t ts, uint64_t req, int64_t peer, int64_t tag, uint64_t bytes);
	void (*comm)(const struct cuptrace_mpi_comm *c);
	/* One line on stderr through the library's log (CUPTRACE_LOG):
	 * level 1 warning, 2 info, 3 debug. */
	void (*log)(int level, const char *msg);
};

const struct cuptrace_mpi_api *cuptrace_mpi_api(unsigned abi);

#ifdef __cplusplus
}
#endif

#endif
