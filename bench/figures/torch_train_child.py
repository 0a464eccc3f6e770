# SPDX-License-Identifier: MIT
"""Runs inside one process for bench/figures/torch_train.py and prints
key=value lines: a CPU training step of a 50-block MLP (nn.Sequential of 50
Linear(64, 64) + ReLU, batch 32, SGD: zero_grad, forward, sum, backward,
step; one intra-op thread), the median over ROUNDS rounds of STEPS steps of
each step's thread CPU time and process CPU time (the latter with the
writer thread's), in this process's setting (untraced, traced by cuptrace
with or without the torch source, or under torch.profiler), and which
observer is on. Usage: torch_train_child.py plain|profiler [STEPS ROUNDS]"""
import statistics
import sys
import time

import torch

MODE = sys.argv[1]
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WARM = 20

torch.set_num_threads(1)
torch.manual_seed(0)
blocks = []
for _ in range(50):
    blocks += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
model = torch.nn.Sequential(*blocks)
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(32, 64)


def step():
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


def rounds():
    for _ in range(WARM):
        step()
    thread, proc = [], []
    for _ in range(ROUNDS):
        for _ in range(STEPS):
            t, p = time.thread_time_ns(), time.process_time_ns()
            step()
            thread.append(time.thread_time_ns() - t)
            proc.append(time.process_time_ns() - p)
    return statistics.median(thread), statistics.median(proc)


def main():
    import cuptrace  # noqa: F401 - traced: installs the observer (torch is imported)
    from cuptrace import _torchsrc
    if MODE == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]):
            thread, proc = rounds()
    else:
        thread, proc = rounds()
    print("step_ns=%.0f" % thread)
    print("step_proc_ns=%.0f" % proc)
    print("steps=%d" % (WARM + STEPS * ROUNDS))
    print("observer=%d" % _torchsrc.installed())


main()
