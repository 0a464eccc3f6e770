# SPDX-License-Identifier: MIT
"""Benchmark: Python annotations and cuptrace.torch. One child
process per configuration (bench/figures/python_child.py), traced (LD_PRELOAD,
capture always) and untraced, interleaved over BENCH_RUNS rounds; figures
are the median over rounds of each child's median (annotate_modules: the
median of all rounds of all children, with the quartiles), in thread CPU
time of the calling thread (the writer thread's work is not counted here;
bench/figures/writer.py measures it). The nvtx package comes from build/venv (made by
tests/install-deps.sh); without it those lines are skipped."""
import os
import shutil
import statistics
import subprocess
import sys

from benchlib import LIB, ROOT, RUNS, median, plain_env, report, spread, tmpdir, traced_env

VENV_PY = os.path.join(ROOT, "build", "venv", "bin", "python")
PY = VENV_PY if os.path.exists(VENV_PY) else "/usr/bin/python3"
PATH = os.pathsep.join([os.path.join(ROOT, "python_shim"), os.path.join(ROOT, "bench", "figures", "old_shim")])


def child(mode, traced):
    d = tmpdir("py") if traced else None
    env = traced_env(d, 512) if traced else plain_env()
    env["PYTHONPATH"] = PATH
    # The node hooks for build/venv's torch, built once there (not in ~/.cache).
    env["CUPTRACE_TORCH_CACHE"] = os.path.join(ROOT, "build", "torch-cache")
    try:
        p = subprocess.run([PY, os.path.join(ROOT, "bench", "figures", "python_child.py"), mode,
                            "traced" if traced else "untraced"], env=env, capture_output=True,
                           text=True)
        if p.returncode:
            sys.exit("bench python: %s %s failed:\n%s" % (mode, traced, p.stderr))
        return {k: [float(x) for x in v.split(",")]
                for k, v in (line.split("=") for line in p.stdout.split())}
    finally:
        if d:
            shutil.rmtree(d)


def main():
    if not os.path.exists(LIB):
        sys.exit("bench python: build the library first (make)")
    rounds = {}
    for _ in range(RUNS):
        for traced in (False, True):
            for k, v in child("annotations", traced).items():
                rounds.setdefault((k, traced), []).extend(v)
        # The module figures: every round of every process pooled (each
        # process prints its rounds' ratios; bench/figures/python_child.py).
        for k, v in child("modules", True).items():
            rounds.setdefault((k, True), []).extend(v)

    def fig(key, traced):
        xs = rounds.get((key, traced))
        return (median(xs), spread(xs)) if xs else (None, "")

    def pooled(key):
        xs = rounds[(key, True)]
        q = statistics.quantiles(xs, n=4)
        return median(xs), "quartiles %.2f %.2f of %d rounds" % (q[0], q[2], len(xs))

    tr, sp = fig("cuptrace_range_ns", True)
    un, spu = fig("cuptrace_range_ns", False)
    report("python", "with cuptrace.range(...), traced", "%.0f ns" % tr, "<= 250 ns", tr <= 250, sp,
           "untraced %.0f ns" % un)
    report("python", "with cuptrace.range(...), untraced", "%.0f ns" % un, "<= 80 ns", un <= 80, spu)
    for key, what in (("cuptrace_range_local_ns", "the same, cuptrace.range in a local"),
                      ("ctypes_shim_ns", "old ctypes shim range (bench/figures/old_shim)"),
                      ("nvtx_annotate_ns", "with nvtx.annotate(...)"),
                      ("nvtx_push_pop_ns", "nvtx.push_range + pop_range")):
        t, _ = fig(key, True)
        u, _ = fig(key, False)
        if t is not None:
            report("python", what + ", traced / untraced", "%.0f / %.0f ns" % (t, u), "-", None)
    rf, sp = fig("record_function_ns", False)
    if rf is not None:
        report("python", "record_function under torch.profiler", "%.0f ns" % rf, "-", None, sp)
    base, _ = fig("step_us", True)
    if base is not None:
        pf, sf = pooled("step_fwd_ranges_pct")
        pb, sb = pooled("step_fwd_bwd_ranges_pct")
        pt, st = pooled("step_fwd_bwd_tensor_hooks_pct")
        node = median(rounds[("backward_hooks", True)]) == 1
        report("python", "MLP step (101 modules, CPU), traced", "%.0f us" % base, "-", None)
        plain = "plain steps of the same rounds, %.0f us" % base
        report("python", "annotate_modules(backward=False) adds", "%+.1f %%" % pf, "<= 5 %", pf <= 5,
               sf, plain)
        report("python", "annotate_modules() (fwd + bwd) adds, %s hooks" %
               ("node (C++)" if node else "tensor (no _torchhooks here)"), "%+.1f %%" % pb,
               "<= 5 %", pb <= 5, sb, plain)
        report("python", "the same with set_backward_hooks('tensor')", "%+.1f %%" % pt, "-", None,
               st, plain)


if __name__ == "__main__":
    main()
