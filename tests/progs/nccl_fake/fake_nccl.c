// SPDX-License-Identifier: MIT
/* A test-only libnccl.so.2 (tests/integration/library/test_nccl_error.py):
 * the few NCCL calls whose errors the library watches, with fixed answers,
 * and a count of the calls that reached it (nccl_fake_calls), so that a
 * test sees every call forwarded exactly once and its answer unchanged.
 *   ncclCommGetAsyncError  *err = ncclSuccess for the first
 *                          $NCCL_FAKE_FAIL_AFTER calls (20), then
 *                          ncclUnhandledCudaError; returns ncclSuccess
 *   ncclAllReduce          recv = send + 1000 count + 100 datatype + 10 op;
 *                          ncclInvalidArgument unless stream is FAKE_STREAM
 *   ncclCommAbort, ncclGroupEnd  ncclSuccess
 *   ncclGetErrorString, ncclGetLastError  fixed texts
 * Values of ncclResult_t as NCCL 2.28's nccl.h has them. */
#include <stdlib.h>

#define FAKE_STREAM ((void *)0x5eed)

enum { SUCCESS = 0, UNHANDLED_CUDA = 1, INVALID_ARGUMENT = 4 };

static int calls[4]; /* async, abort, allreduce, groupend */

int ncclCommGetAsyncError(void *comm, int *err)
{
	(void)comm;
	static int after = -1;
	if (after < 0) {
		const char *s = getenv("NCCL_FAKE_FAIL_AFTER");
		after = s ? atoi(s) : 20;
	}
	*err = calls[0]++ < after ? SUCCESS : UNHANDLED_CUDA;
	return SUCCESS;
}

int ncclCommAbort(void *comm)
{
	(void)comm;
	calls[1]++;
	return SUCCESS;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, void *comm,
                  void *stream)
{
	(void)comm;
	calls[2]++;
	if (stream != FAKE_STREAM)
		return INVALID_ARGUMENT;
	*(long *)recv = *(const long *)send + 1000 * (long)count + 100 * datatype + 10 * op;
	return SUCCESS;
}

int ncclGroupEnd(void)
{
	calls[3]++;
	return SUCCESS;
}

const char *ncclGetErrorString(int r)
{
	return r == UNHANDLED_CUDA ? "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"
	                           : "fake error";
}

const char *ncclGetLastError(void *comm)
{
	(void)comm;
	return "fake: Cuda failure 'an illegal memory access was encountered'";
}

void nccl_fake_calls(int out[4])
{
	for (int i = 0; i < 4; i++)
		out[i] = calls[i];
}
