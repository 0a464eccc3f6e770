# SPDX-License-Identifier: MIT
"""Runs inside one process for bench/figures/python.py and prints key=value lines:
the thread CPU time of one annotation by each way Python has (cuptrace's C
extension, the old ctypes shim, NVIDIA's nvtx package, torch's
record_function under torch.profiler), or of a training step of a
100-module MLP with and without cuptrace.torch.annotate_modules.
Usage: python_child.py annotations|modules traced|untraced"""
import os
import statistics
import sys
import time

MODE, TRACED = sys.argv[1], sys.argv[2] == "traced"
N = 200000


def per_call_ns(fn, n=N, rounds=5):
    """Median over rounds of the thread CPU time per iteration of fn's loop."""
    fn(n // 10)  # warm up (caches, first-use allocations)
    out = []
    for _ in range(rounds):
        t = time.thread_time_ns()
        fn(n)
        out.append((time.thread_time_ns() - t) / n)
    return statistics.median(out)


def annotations():
    import cuptrace

    def empty(n):
        for _ in range(n):
            pass

    def cup_range(n):
        rng = cuptrace.range
        for _ in range(n):
            with rng("forward"):
                pass

    def cup_module_attr(n):  # as users write it: a global and an attribute
        for _ in range(n):
            with cuptrace.range("forward"):
                pass

    base = per_call_ns(empty)
    print("loop_ns=%.2f" % base)
    print("cuptrace_range_ns=%.2f" % (per_call_ns(cup_module_attr) - base))
    print("cuptrace_range_local_ns=%.2f" % (per_call_ns(cup_range) - base))

    import cuptrace_ctypes
    if not TRACED:  # untraced: the old shim finds no library (else it would load and trace)
        cuptrace_ctypes.library_path = lambda: "/nonexistent/libcuptrace.so"

    def old_shim(n):
        for _ in range(n):
            with cuptrace_ctypes.range("forward"):
                pass
    print("ctypes_shim_ns=%.2f" % (per_call_ns(old_shim) - base))

    try:
        import nvtx
    except ImportError:
        nvtx = None
    if nvtx is not None:
        def nv_annotate(n):
            for _ in range(n):
                with nvtx.annotate("forward"):
                    pass

        def nv_push_pop(n):
            for _ in range(n):
                nvtx.push_range("forward")
                nvtx.pop_range()
        print("nvtx_annotate_ns=%.2f" % (per_call_ns(nv_annotate) - base))
        print("nvtx_push_pop_ns=%.2f" % (per_call_ns(nv_push_pop) - base))

    try:
        import torch
        import torch.profiler
    except ImportError:
        return
    rf = torch.autograd.profiler.record_function

    def record_function(n):
        for _ in range(n):
            with rf("forward"):
                pass
    # torch keeps every event of the session in memory: fewer calls, and a
    # fresh profiler session per measurement.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        v = per_call_ns(record_function, n=20000, rounds=3) - base
    print("record_function_ns=%.2f" % v)


def modules():
    import torch
    import cuptrace.torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    # BENCH_PY_WIDTH (default 32; bench/ab/ab.py python): narrower layers
    # leave torch's own cost per module call and the hooks' as the step.
    width = int(os.environ.get("BENCH_PY_WIDTH", "32"))
    layers = []
    for _ in range(50):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    assert sum(1 for _ in model.modules()) == 101
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x, y = torch.randn(64, width), torch.randn(64, width)

    def steps(n):
        for _ in range(n):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    def timed(n):
        """The fastest of n steps, each timed alone: other processes only
        ever add to a step's time (caches, interrupts), so the least time
        is the steadiest figure of a short block."""
        steps(1)  # the first step after a change is not timed
        best = None
        for _ in range(n):
            t = time.thread_time_ns()
            steps(1)
            t = time.thread_time_ns() - t
            best = t if best is None or t < best else best
        return best / 1e3

    def annotated(n, hooks="node", **kw):
        cuptrace.torch.set_backward_hooks(hooks)
        h = cuptrace.torch.annotate_modules(model, **kw)
        try:
            return timed(n)
        finally:
            h.remove()
            cuptrace.torch.set_backward_hooks("node")

    # Short blocks, interleaved plain, forward ranges, plain, both: each
    # annotated block is taken against the mean of the plain blocks on
    # either side of it, so that a change of the machine's load within a
    # round falls on both. Every round's ratio is printed: the parent pools
    # them over its processes.
    # The backward ranges both ways cuptrace.torch has (set_backward_hooks):
    # C++ hooks on autograd's nodes (the default, where _torchhooks is built
    # for this torch) and hook dicts on the tensors.
    n = int(os.environ.get("BENCH_PY_STEPS", "5"))
    rounds = int(os.environ.get("BENCH_PY_ROUNDS", "40"))
    plain, fwd, both, both_tensor = [timed(n)], [], [], []
    for _ in range(rounds):
        for out, kw in ((fwd, {"backward": False}), (both, {}), (both_tensor, {"hooks": "tensor"})):
            a = annotated(n, **kw)
            plain.append(timed(n))
            out.append(a / ((plain[-2] + plain[-1]) / 2) - 1)
    print("step_us=%.1f" % statistics.median(plain))
    print("backward_hooks=%s" % ("1" if cuptrace.torch.backward_hooks == "node" else "0"))
    print("step_fwd_ranges_pct=%s" % ",".join("%.3f" % (100 * x) for x in fwd))
    print("step_fwd_bwd_ranges_pct=%s" % ",".join("%.3f" % (100 * x) for x in both))
    print("step_fwd_bwd_tensor_hooks_pct=%s" % ",".join("%.3f" % (100 * x) for x in both_tensor))


if __name__ == "__main__":
    annotations() if MODE == "annotations" else modules()
