// SPDX-License-Identifier: MIT
/* What the three parts of cuptrace._torchops share: the library's torch
 * entry points (include/cuptrace/torch_abi.h, found with dlsym), and each
 * thread's stack of open operators with the text their start took.
 *
 *   _torchops.cpp       the module, install/uninstall, RecordFunction's
 *                       start and end callbacks
 *   _torchops_text.cpp  an operator's input sizes and types
 *   _torchops_frames.c  the Python frames it was called from
 *   _torchops_mem.cpp   the allocation reporter torch's allocators call
 *
 * Built against the headers of the torch it runs with (cuptrace/_torchbuild.py),
 * as _torchhooks.cpp is: torch's C++ classes have no stable ABI. */
#ifndef CUPTRACE_TORCHOPS_H
#define CUPTRACE_TORCHOPS_H

#include <cuptrace/torch_abi.h>

#include <ATen/record_function.h>

#include <cstddef>
#include <cstdint>

namespace ct_ops {

/* The library's entry points; set once by install() before the callbacks
 * are added, never cleared (uninstall removes the callbacks instead). */
struct Lib {
	unsigned (*config)(void);
	uint64_t (*now)(void);
	void (*enter)(uint64_t);
	void (*exit)(void);
	void (*op)(const struct cuptrace_torch_op *);
	void (*mem)(uint64_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t);
};
extern Lib lib;

/* One open operator on its thread's stack. key: the RecordFunction, which
 * for an operator of this stack is a local of the frame that runs it, so
 * that the innermost open one is on top. Its text (dims, types, stack, in
 * that order) lies in the thread's arena from off on. */
struct Open {
	const at::RecordFunction *key;
	uint64_t id, start;
	uint32_t off, dims_len, types_len, stack_len;
};

/* Nesting deeper than this (or, with text, less than 12 KB of the arena
 * left) goes to an ObserverContext on the heap instead: recorded all the
 * same. */
constexpr unsigned kDepth = 96;
constexpr size_t kArena = 24576;

/* Plain data: zero-filled where a thread first touches it, nothing to
 * construct or destroy (no guard on each access). */
struct Thread {
	int tid;		/* the OS thread id, 0 until asked */
	unsigned depth;		/* open operators on this thread */
	Open open[kDepth];
	char arena[kArena];
};
extern thread_local Thread self;

int os_tid();
/* Where the arena's free part begins: after the innermost open operator's text. */
inline uint32_t arena_top()
{
	if (!self.depth)
		return 0;
	const Open &o = self.open[self.depth - 1];
	return o.off + o.dims_len + o.types_len + o.stack_len;
}

/* Text into buf (at most cap bytes, cut at an input or frame boundary);
 * each returns its length. Never throws. */
uint32_t input_dims(const at::RecordFunction &fn, char *buf, uint32_t cap);
uint32_t input_types(const at::RecordFunction &fn, char *buf, uint32_t cap);

/* The allocation reporter: on (once per thread it runs an operator on,
 * where no profiler holds the slot) or off for every thread. */
void mem_setup(bool on);
void mem_this_thread();
/* Ours out of this thread's slot, for a profiler of torch's about to
 * start; false where it cannot be (other debug info pushed above it). */
bool mem_step_aside();

} // namespace ct_ops

/* _torchops_frames.c (C: the interpreter's internal headers): the calling
 * thread's Python frames, innermost first, whether it holds the GIL or not. */
extern "C" uint32_t ct_ops_python_stack(char *buf, uint32_t cap);

#endif
