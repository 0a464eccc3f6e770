#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of cuptrace.torch.annotate_modules between two trees (issue 15): the
added cost per training step of the 101-module MLP, each tree's own
extension (python_shim) and library, the same child (this tree's
bench/figures/python_child.py, mode `modules`, traced) for both, processes
interleaved (A, B, A, B, ...). Every round's ratio of every process is
pooled; printed: median, quartiles and each process's median.

  /usr/bin/python3 bench/ab/ab_python.py OLD_ROOT [NEW_ROOT] [RUNS]

OLD_ROOT and NEW_ROOT are trees built with `make all pyext` for the same
Python (NEW_ROOT defaults to this one, RUNS, processes per tree, to 5).
BENCH_PY_WIDTH=2 narrows the MLP's layers (default 32): the step is then
mostly torch's own cost per module call, and the hooks' share of it larger.
"""
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import tmpdir, traced_env  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "figures"
PY = os.environ.get("BENCH_PYTHON", "/usr/bin/python3")


def child(root):
    """key -> list of floats of one `python_child.py modules traced`."""
    d = tmpdir("abpy")
    env = traced_env(d, 512, LD_PRELOAD=os.path.join(root, "build/lib/libcuptrace.so"),
                     PYTHONPATH=os.path.join(root, "python_shim"))
    try:
        p = subprocess.run([PY, str(HERE / "python_child.py"), "modules", "traced"], env=env,
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit("ab_python: %s failed:\n%s" % (root, p.stderr))
        return {k: [float(x) for x in v.split(",")]
                for k, v in (line.split("=") for line in p.stdout.split())}
    finally:
        shutil.rmtree(d)


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return "%.2f (quartiles %.2f %.2f)" % (statistics.median(xs), q[0], q[2])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    roots = [os.path.abspath(sys.argv[1]),
             os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else str(HERE.parents[1])]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    got = {r: [] for r in roots}
    for _ in range(runs):
        for r in roots:
            got[r].append(child(r))
    for tag, r in zip("AB", roots):
        print("%s %s" % (tag, r))
        res = got[r]
        print("  plain step: median %.0f us (processes %s)" % (
            statistics.median(x["step_us"][0] for x in res),
            " ".join("%.0f" % x["step_us"][0] for x in res)))
        step = statistics.median(x["step_us"][0] for x in res)
        for key, what in (("step_fwd_ranges_pct", "annotate_modules(backward=False) adds %"),
                          ("step_fwd_bwd_ranges_pct", "annotate_modules() adds %")):
            pooled = [v for x in res for v in x[key]]
            print("  %s: %s over %d rounds; process medians %s; %.2f us per module call" % (
                what, quartiles(pooled), len(pooled),
                " ".join("%.2f" % statistics.median(x[key]) for x in res),
                statistics.median(pooled) / 100 * step / 101))


if __name__ == "__main__":
    main()
