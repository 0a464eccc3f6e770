// SPDX-License-Identifier: MIT
/* The torch source's entry points in libcuptrace.so, for the Python
 * package's C++ RecordFunction observer (python_shim/cuptrace/_torchops.cpp),
 * which finds them with dlsym(RTLD_DEFAULT, ...) when the traced program
 * imports torch: none is found where the library is not loaded, and the
 * observer then installs nothing.
 *
 * The observer stamps an operator's start and end with cuptrace_torch_now()
 * (the library's clock, the same as every other record's), and around it
 * calls cuptrace_torch_enter(id) / cuptrace_torch_exit() so that the CUDA
 * work it launches carries its id (CUPTI's external correlation, kind
 * CUSTOM0, as Kineto does). It writes the operator with cuptrace_torch_op()
 * when it ends, on whatever thread ends it; allocations and frees go to
 * cuptrace_torch_mem(). All of them are safe from any thread, never
 * block, and record nothing while capture is off. */
#ifndef CUPTRACE_TORCH_ABI_H
#define CUPTRACE_TORCH_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cuptrace_torch_config()'s bits: 0 when the library is not tracing or
 * the torch source is not asked for (CUPTRACE_TRACE). */
#define CUPTRACE_TORCH_ON 1u      /* the torch source: operators and scopes */
#define CUPTRACE_TORCH_SHAPES 2u  /* CUPTRACE_TORCH=shapes: input sizes and types */
#define CUPTRACE_TORCH_MEMORY 4u  /* CUPTRACE_TORCH=memory: allocations and frees */
#define CUPTRACE_TORCH_STACK 8u   /* CUPTRACE_TORCH=stack: Python frames */

/* An operator's scope (torch's RecordScope, folded). */
#define CUPTRACE_TORCH_SCOPE_OP 0u       /* an aten or custom operator */
#define CUPTRACE_TORCH_SCOPE_BACKWARD 1u /* an autograd backward function */
#define CUPTRACE_TORCH_SCOPE_USER 2u     /* a record_function scope */
#define CUPTRACE_TORCH_SCOPE_OTHER 3u    /* TorchScript functions and the rest */

struct cuptrace_torch_op {
	uint64_t start, end; /* cuptrace_torch_now() */
	uint64_t id;         /* from 1 in the process; what cuptrace_torch_enter pushed */
	uint64_t seq;        /* torch's sequence number + 1; 0: none */
	uint64_t rf_tid;     /* RecordFunction's thread id of the op */
	uint64_t fwd_tid;    /* of a backward op: its forward op's; 0: none */
	uint64_t tid;        /* OS thread it began on, when not the calling thread; else 0 */
	uint32_t scope;      /* CUPTRACE_TORCH_SCOPE_* */
	/* Text, not NUL-terminated; len 0 when absent. Cut at 4096 bytes. */
	const char *name, *dims, *types, *stack;
	uint32_t name_len, dims_len, types_len, stack_len;
};

unsigned cuptrace_torch_config(void);
uint64_t cuptrace_torch_now(void);
void cuptrace_torch_enter(uint64_t id);
void cuptrace_torch_exit(void);
void cuptrace_torch_op(const struct cuptrace_torch_op *op);
/* bytes > 0 an allocation, < 0 a free; device -1 the CPU; op: the
 * innermost open operator's id on this thread (0: none). */
void cuptrace_torch_mem(uint64_t ptr, int64_t bytes, int64_t device, uint64_t allocated,
			uint64_t reserved, uint64_t op);

#ifdef __cplusplus
}
#endif

#endif
