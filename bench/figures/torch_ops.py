# SPDX-License-Identifier: MIT
"""Benchmark: what the torch source costs a torch operator. One child
process per setting (bench/figures/torch_ops_child.py: torch.add on two
4-element CPU tensors, and an empty `with record_function("x"): pass`
scope, thread CPU time per call, the least of 9 rounds of 40,000 calls,
10,000 for the scope): untraced; traced by cuptrace without the torch source;
`-t torch` (the package's RecordFunction observer, cuptrace._torchops);
`-t torch --torch shapes`; and, for reference, torch.profiler (CPU) without
and with record_shapes, untraced. Settings interleaved over BENCH_RUNS
rounds; each figure is the median of the children's. For Debian's torch
and for build/venv's where it has another (torch 2.x); the package builds
the observer for that one into build/torch-cache first. The traced runs'
files are checked: at least one torch_op per call (torch 1.13 records a
record_function scope as 5 ops, its enter and exit calls among them) and
nothing dropped. The child runs with -P: bench/figures/torch.py would
otherwise be imported as torch."""
import os
import re
import shutil
import subprocess
import sys

from benchlib import LIB, ROOT, RUNS, TOOL, median, plain_env, report, spread, tmpdir, traced_env

CHILD = os.path.join(ROOT, "bench", "figures", "torch_ops_child.py")
VENV_PY = os.path.join(ROOT, "build", "venv", "bin", "python")
SETTINGS = [  # name, child mode, CUPTRACE_TRACE (None: untraced), CUPTRACE_TORCH
    ("untraced", "plain", None, None),
    ("traced, no torch source", "plain", "nvtx", None),
    ("-t torch", "plain", "torch", None),
    ("-t torch --torch shapes", "plain", "torch", "shapes"),
    ("torch.profiler", "profiler", None, None),
    ("torch.profiler, record_shapes", "profiler_shapes", None, None),
]


def torch_version(py):
    p = subprocess.run([py, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def child(py, mode, trace, extra):
    d = tmpdir("torchops") if trace else None
    env = traced_env(d, 512, CUPTRACE_TRACE=trace) if trace else plain_env()
    if extra:
        env["CUPTRACE_TORCH"] = extra
    env["PYTHONPATH"] = os.path.join(ROOT, "python_shim")
    env["CUPTRACE_TORCH_CACHE"] = os.path.join(ROOT, "build", "torch-cache")
    try:
        p = subprocess.run([py, "-P", CHILD, mode], env=env, capture_output=True, text=True)
        if p.returncode:
            sys.exit("bench torch_ops: %s %s %s failed:\n%s" % (py, mode, trace, p.stderr))
        out = dict(line.split("=") for line in p.stdout.split())
        if trace == "torch":
            # At least one torch_op per call, none dropped.
            files = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".ctr")]
            info = subprocess.run([TOOL, "info"] + files, capture_output=True, text=True).stdout
            m = re.search(r"^\s+torch_op\s+(\d+)\s+dropped\s+(\d+)", info, re.M)
            ops, dropped = (int(m[1]), int(m[2])) if m else (0, 0)
            if dropped or not int(out["calls"]) <= ops < 6 * int(out["calls"]):
                sys.exit("bench torch_ops: %s calls, %d torch_op recorded, %d dropped:\n%s"
                         % (out["calls"], ops, dropped, info))
        return float(out["add_ns"]), float(out["rf_ns"]), int(out["observer"])
    finally:
        if d:
            shutil.rmtree(d)


def measure(py, label):
    got = {name: [] for name, *_ in SETTINGS}
    rf = {name: [] for name, *_ in SETTINGS}
    for _ in range(RUNS):
        for name, mode, trace, extra in SETTINGS:
            ns, rf_ns, observer = child(py, mode, trace, extra)
            if (trace == "torch") != bool(observer):
                sys.exit("bench torch_ops: %s: observer %d under %s" % (label, observer, name))
            got[name].append(ns)
            rf[name].append(rf_ns)
    base = median(got["untraced"])
    report("torch_ops", "torch.add, untraced (%s)" % label, "%.0f ns" % base, "-", None,
           spread(got["untraced"]))
    targets = {"-t torch": 300, "-t torch --torch shapes": 600}
    for name, *_ in SETTINGS[1:]:
        added = median(got[name]) - base
        target = targets.get(name)
        report("torch_ops", "%s adds (%s)" % (name, label), "%+.0f ns" % added,
               "<= %d ns" % target if target else "-", added <= target if target else None,
               spread(got[name]), "untraced %.0f ns" % base)
    # An empty record_function scope: -t torch <= 500 ns added (torch.profiler: about 1.1 us).
    base = median(rf["untraced"])
    report("torch_ops", "record_function scope, untraced (%s)" % label, "%.0f ns" % base, "-",
           None, spread(rf["untraced"]))
    for name in ("traced, no torch source", "-t torch", "torch.profiler"):
        added = median(rf[name]) - base
        target = 500 if name == "-t torch" else None
        report("torch_ops", "record_function scope, %s adds (%s)" % (name, label),
               "%+.0f ns" % added, "<= %d ns" % target if target else "-",
               added <= target if target else None, spread(rf[name]), "untraced %.0f ns" % base)


def main():
    if not os.path.exists(LIB):
        sys.exit("bench torch_ops: build the library first (make)")
    system = torch_version("/usr/bin/python3")
    if system is None:
        sys.exit("bench torch_ops: no torch for /usr/bin/python3")
    measure("/usr/bin/python3", "torch " + system)
    venv = torch_version(VENV_PY) if os.path.exists(VENV_PY) else None
    if venv and venv != system:
        measure(VENV_PY, "torch " + venv)


if __name__ == "__main__":
    main()
