# SPDX-License-Identifier: MIT
"""Benchmark: the torch source on a training step, and at a fixed operator
rate.

1. A CPU training step of a 50-block MLP (bench/figures/torch_train_child.py:
   nn.Sequential of 50 Linear(64, 64) + ReLU, batch 32, SGD, forward,
   backward and step, one intra-op thread; per child the median step of 5
   rounds of 40 steps), one child per setting, settings interleaved over
   BENCH_RUNS rounds: untraced; traced with the default sources (no torch
   source); `-t torch`; torch.profiler (CPU), untraced. Figure: the median
   of the children's step thread CPU time, against untraced's. Target: `-t
   torch` <= +10 %. The process CPU time (the writer thread's with it) is
   information. For Debian's torch and build/venv's (torch 2.x).
2. Bytes per operator without shapes: (size of the -t torch files - size of
   the default sources' files of the same steps) / torch_op records in the
   -t torch files (`cuptrace info`). Target <= 8 B.
3. Nothing dropped at 1M operators/s with the default buffer (64 MB):
   build/bench/bench_torch rate (the library's torch exports called as the
   observer calls them, whole ops paced to 1M/s for 3 s on one thread);
   `cuptrace info` must say dropped 0. The rate achieved is reported."""
import os
import re
import shutil
import subprocess
import sys

from benchlib import (LIB, ROOT, RUNS, TOOL, ctr_files, median, plain_env, prog, report, skip,
                      spread, tmpdir, traced_env)

CHILD = os.path.join(ROOT, "bench", "figures", "torch_train_child.py")
VENV_PY = os.path.join(ROOT, "build", "venv", "bin", "python")
SETTINGS = [  # name, child mode, traced, CUPTRACE_TRACE (None: the default sources)
    ("untraced", "plain", False, None),
    ("traced, default sources", "plain", True, None),
    ("-t torch", "plain", True, "torch"),
    ("torch.profiler", "profiler", False, None),
]
RATE, SECONDS, BUFFER_MB = 1000000, 3, 64


def torch_version(py):
    p = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def counts(files):
    """torch_op records and drops, all drops, in the files (cuptrace info)."""
    out = subprocess.run([TOOL, "info"] + files, capture_output=True, text=True).stdout
    ops = sum(int(m) for m in re.findall(r"^\s+torch_op\s+(\d+)\s+dropped", out, re.M))
    dropped = sum(int(m) for m in re.findall(r"^dropped:\s+(\d+)", out, re.M))
    return ops, dropped


def child(py, mode, traced, trace):
    d = tmpdir("torchtrain") if traced else None
    env = plain_env()
    if traced:
        env = traced_env(d, BUFFER_MB)
        env.pop("CUPTRACE_TRACE", None)
        if trace:
            env["CUPTRACE_TRACE"] = trace
    env["PYTHONPATH"] = os.path.join(ROOT, "python_shim")
    env["CUPTRACE_TORCH_CACHE"] = os.path.join(ROOT, "build", "torch-cache")
    try:
        # -P: bench/figures/torch.py is not torch.
        p = subprocess.run([py, "-P", CHILD, mode], env=env, capture_output=True, text=True)
        if p.returncode:
            sys.exit("bench torch_train: %s %s %s failed:\n%s" % (py, mode, trace, p.stderr))
        out = dict(line.split("=") for line in p.stdout.split())
        size = ops = dropped = 0
        if traced:
            files = ctr_files(d)
            size = sum(os.path.getsize(f) for f in files)
            ops, dropped = counts(files)
            if dropped:
                sys.exit("bench torch_train: %d dropped under %s" % (dropped, trace))
        return (float(out["step_ns"]), float(out["step_proc_ns"]), int(out["observer"]), size,
                ops)
    finally:
        if d:
            shutil.rmtree(d)


def measure(py, label):
    got = {name: [] for name, *_ in SETTINGS}
    proc = {name: [] for name, *_ in SETTINGS}
    size = {name: [] for name, *_ in SETTINGS}
    ops = []
    for _ in range(RUNS):
        for name, mode, traced, trace in SETTINGS:
            ns, pns, observer, nbytes, nops = child(py, mode, traced, trace)
            if (trace == "torch") != bool(observer):
                sys.exit("bench torch_train: %s: observer %d under %s" % (label, observer, name))
            got[name].append(ns / 1e3)
            proc[name].append(pns / 1e3)
            size[name].append(nbytes)
            if trace == "torch":
                ops.append(nops)
    base, pbase = median(got["untraced"]), median(proc["untraced"])
    report("torch_train", "MLP step, untraced (%s)" % label, "%.0f us" % base, "-", None,
           spread(got["untraced"]))
    targets = {"-t torch": 10.0}
    for name, *_ in SETTINGS[1:]:
        added = 100.0 * (median(got[name]) / base - 1)
        target = targets.get(name)
        report("torch_train", "MLP step, %s adds (%s)" % (name, label), "%+.1f %%" % added,
               "<= +%.0f %%" % target if target else "-", added <= target if target else None,
               spread(got[name]), "untraced %.0f us" % base)
        padded = 100.0 * (median(proc[name]) / pbase - 1)
        report("torch_train", "MLP step, %s adds, process CPU (%s)" % (name, label),
               "%+.1f %%" % padded, "-", None, spread(proc[name]), "untraced %.0f us" % pbase)
    per_op = [(t - n) / o for t, n, o in zip(size["-t torch"], size["traced, default sources"],
                                             ops)]
    whole = [t / o for t, o in zip(size["-t torch"], ops)]
    report("torch_train", "bytes per torch_op, no shapes (%s)" % label, "%.2f B" % median(per_op),
           "<= 8 B", median(per_op) <= 8, "%s; %d ops a file; whole file %.2f B an op" % (
               spread(per_op), median(ops), median(whole)),
           "the default sources' file of the same steps (%.0f B)"
           % median(size["traced, default sources"]))


def rate():
    exe = prog("bench_torch")
    if not os.path.exists(exe):
        skip("torch_train", "%s not built (make build/bench/bench_torch)" % exe)
        return
    achieved, drops, ops = [], [], []
    for _ in range(RUNS):
        d = tmpdir("torchrate")
        env = dict(plain_env(), LD_PRELOAD=LIB, CUPTRACE_TRACE="torch",
                   CUPTRACE_OUTPUT="%s/%%p.ctr" % d, CUPTRACE_LOG="warn")  # default buffer
        try:
            p = subprocess.run([exe, "rate", str(RATE), str(SECONDS)], capture_output=True,
                               text=True, env=env)
            if p.returncode:
                sys.exit("bench torch_train: %s rate failed:\n%s" % (exe, p.stderr))
            out = dict(line.split("=") for line in p.stdout.split())
            n, dropped = counts(ctr_files(d))
        finally:
            shutil.rmtree(d)
        achieved.append(float(out["ops_s"]) / 1e6)
        drops.append(dropped)
        ops.append(int(out["ops"]))
        if n + dropped != int(out["ops"]):
            sys.exit("bench torch_train: %s ops made, %d recorded, %d dropped"
                     % (out["ops"], n, dropped))
    report("torch_train", "operator rate achieved (bench_torch rate)",
           "%.3f M/s" % median(achieved), ">= 1 M/s", median(achieved) >= 0.99,
           spread(achieved))
    report("torch_train", "ops dropped at 1M ops/s, default 64 MB buffer", "%d" % sum(drops),
           "0", sum(drops) == 0, "%d runs of %d ops" % (RUNS, median(ops)))


def main():
    if not os.path.exists(LIB):
        sys.exit("bench torch_train: build the library first (make)")
    rate()
    system = torch_version("/usr/bin/python3")
    if system is None:
        sys.exit("bench torch_train: no torch for /usr/bin/python3")
    venv = torch_version(VENV_PY) if os.path.exists(VENV_PY) else None
    if venv and venv != system:
        measure(VENV_PY, "torch " + venv)
    measure("/usr/bin/python3", "torch " + system)


if __name__ == "__main__":
    main()
