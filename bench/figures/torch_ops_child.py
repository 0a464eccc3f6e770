# SPDX-License-Identifier: MIT
"""Runs inside one process for bench/figures/torch_ops.py and prints
key=value lines: the thread CPU time of one torch.add on two 4-element CPU
tensors, in this process's setting (untraced, traced by cuptrace with or
without the torch source, or under torch.profiler), and which observer is
on. Usage: torch_ops_child.py plain|traced|profiler|profiler_shapes"""
import sys
import time

import torch

MODE = sys.argv[1]
N, ROUNDS = 40000, 9

torch.set_num_threads(1)
a, b = torch.ones(4), torch.ones(4)


def loop(n):
    add = torch.add
    for _ in range(n):
        add(a, b)


def empty(n):
    for _ in range(n):
        pass


def per_call_ns(fn):
    """The least thread CPU time per call over the rounds (on a shared
    machine, other work only ever adds to a round's: the least is the
    one least disturbed)."""
    fn(N // 5)  # warm up (caches, first-use allocations, lazy init)
    out = []
    for _ in range(ROUNDS):
        t = time.thread_time_ns()
        fn(N)
        out.append((time.thread_time_ns() - t) / N)
    return min(out)


def main():
    import cuptrace  # noqa: F401 - traced: installs the observer (torch is imported)
    from cuptrace import _torchsrc
    base = per_call_ns(empty)
    if MODE.startswith("profiler"):
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=MODE.endswith("shapes")):
            ns = per_call_ns(loop)
    else:
        ns = per_call_ns(loop)
    print("add_ns=%.2f" % (ns - base))
    print("observer=%d" % _torchsrc.installed())
    print("calls=%d" % (N // 5 + N * ROUNDS))


main()
