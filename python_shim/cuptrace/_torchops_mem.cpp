// SPDX-License-Identifier: MIT
// Allocations and frees (CUPTRACE_TORCH=memory), where torch.profiler's
// profile_memory takes them: torch's CPU and CUDA allocators report to the
// c10::MemoryReportingInfoBase of the thread's debug info slot
// PROFILER_STATE. Ours goes into that slot of each thread as the thread runs
// its first operator (and of the thread that installs), where the slot is
// empty: a thread's debug info also reaches the threads that run its work
// (autograd's, at::launch's), and a torch.profiler started later on the
// thread stacks its own above ours and takes the reports until it stops.
//
// It is a ProfilerStateBase whose config says Disabled, because that is
// what torch takes out of that slot (torch.profiler asks it whether a
// profiler is on: no, and which kind: none); torch (1.13 and 2.x) refuses
// to start its profiler while any object holds the slot, so the package
// steps ours aside as torch's profilers start (mem_step_aside,
// cuptrace/_torchsrc.py). Never removed otherwise: uninstall turns its
// reports off.
#include "_torchops.h"

#include <torch/csrc/profiler/orchestration/observer.h>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <memory>

namespace {

using namespace ct_ops;
namespace prof = torch::profiler::impl;

std::atomic<bool> on{false};

// The type of the allocator's totals: int64_t in torch 1.13, size_t later.
template <typename> struct totals;
template <typename C, typename R, typename P, typename B, typename T, typename D>
struct totals<R (C::*)(P, B, T, T, D)> {
	using type = T;
};
using total_t = totals<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

struct Reporter final : prof::ProfilerStateBase {
	Reporter() : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)) {}

	prof::ActiveProfilerType profilerType() override { return prof::ActiveProfilerType::NONE; }

	bool memoryProfilingEnabled() const override { return on.load(std::memory_order_relaxed); }

	void reportMemoryUsage(void *ptr, int64_t bytes, total_t allocated, total_t reserved,
			       c10::Device device) override
	{
		if (!on.load(std::memory_order_relaxed) || !lib.mem)
			return;
		int64_t dev = device.is_cpu() ? -1 : (int64_t)device.index();
		uint64_t op = self.depth ? self.open[self.depth - 1].id : 0;
		lib.mem((uint64_t)(uintptr_t)ptr, bytes, dev, (uint64_t)allocated, (uint64_t)reserved, op);
	}
};

std::shared_ptr<Reporter> *reporter; // made once, never freed

} // namespace

namespace ct_ops {

void mem_this_thread()
{
	try {
		if (reporter &&
		    !c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE))
			c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE,
							 *reporter);
	} catch (...) {
	}
}

bool mem_step_aside()
{
	try {
		if (!reporter || c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) !=
				     reporter->get())
			return true;
		// _peek throws unless the innermost debug info is of that kind.
		if (c10::ThreadLocalDebugInfo::_peek(c10::DebugInfoKind::PROFILER_STATE).get() !=
		    reporter->get())
			return false;
		c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
		return true;
	} catch (...) {
		return false;
	}
}

void mem_setup(bool want)
{
	if (want && !reporter)
		reporter = new std::shared_ptr<Reporter>(std::make_shared<Reporter>());
	on.store(want, std::memory_order_relaxed);
	if (want)
		mem_this_thread();
}

} // namespace ct_ops
