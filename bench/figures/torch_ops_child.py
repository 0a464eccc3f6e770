# SPDX-License-Identifier: MIT
"""Runs inside one process for bench/figures/torch_ops.py and prints
key=value lines: the thread CPU time of one torch.add on two 4-element CPU
tensors and of one empty record_function scope
(`with torch.autograd.profiler.record_function("x"): pass`, not under
profiler_shapes: rf_ns=0 there), in this process's setting (untraced,
traced by cuptrace with or without the torch source, or under torch.profiler), and which observer is
on. Usage: torch_ops_child.py plain|traced|profiler|profiler_shapes"""
import sys
import time

import torch

MODE = sys.argv[1]
N, ROUNDS = 40000, 9
N_RF = 10000  # scopes a round: torch.profiler keeps 5 events a scope (torch 1.13)

torch.set_num_threads(1)
a, b = torch.ones(4), torch.ones(4)


def loop(n):
    add = torch.add
    for _ in range(n):
        add(a, b)


def scope(n):
    rf = torch.autograd.profiler.record_function
    for _ in range(n):
        with rf("x"):
            pass


def empty(n):
    for _ in range(n):
        pass


def per_call_ns(fn, n=N):
    """The least thread CPU time per call over the rounds (on a shared
    machine, other work only ever adds to a round's: the least is the
    one least disturbed)."""
    fn(n // 5)  # warm up (caches, first-use allocations, lazy init)
    out = []
    for _ in range(ROUNDS):
        t = time.thread_time_ns()
        fn(n)
        out.append((time.thread_time_ns() - t) / n)
    return min(out)


def main():
    import cuptrace  # noqa: F401 - traced: installs the observer (torch is imported)
    from cuptrace import _torchsrc
    base = per_call_ns(empty)
    if MODE.startswith("profiler"):
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=MODE.endswith("shapes")):
            ns = per_call_ns(loop)
            rf_ns = per_call_ns(scope, N_RF) if MODE == "profiler" else base
    else:
        ns = per_call_ns(loop)
        rf_ns = per_call_ns(scope, N_RF)
    print("add_ns=%.2f" % (ns - base))
    print("rf_ns=%.2f" % (rf_ns - base))
    print("observer=%d" % _torchsrc.installed())
    print("calls=%d" % (N // 5 + N * ROUNDS + N_RF // 5 + N_RF * ROUNDS))


main()
