#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of the record clock (issue 14, the hot path): this tree's
bench_nvtx (NVTX push/pop pairs through the real NVTX3 loader, 1 and 2
threads) run untraced, under OLD_ROOT's library, and under this tree's
library with CUPTRACE_CLOCK=tsc and =monotonic, interleaved (untraced, old,
tsc, monotonic, untraced, ...) because this VM's speed drifts within
minutes; medians and the single runs are printed.

  python3 bench/ab/ab_clock.py OLD_ROOT [RUNS]

Per variant: the added thread CPU per push or pop (traced - untraced, 1
thread), the writer thread's CPU per event, their sum (the whole cost of an
event), each against one clock_gettime measured in the same process; the
process's user+sys CPU per event over the untraced run's (wait4, all
threads, warm-up included); per-thread CPU with 2 threads over 1.
"""
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import ctr_files, info, plain_env, prog, run, tmpdir, traced_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAIRS, ROUNDS = 1000000, 5


def once(threads, lib, clock):
    cmd = [prog("bench_nvtx"), str(threads), str(PAIRS), str(ROUNDS)]
    if not lib:
        vals, usage = run(cmd, plain_env())
        return vals, usage, 0
    d = tmpdir("abc")
    try:
        env = traced_env(d, 1024, CUPTRACE_CLOCK=clock)
        env["LD_PRELOAD"] = str(lib)
        if "old" in clock:
            del env["CUPTRACE_CLOCK"]  # the old library knows no such variable
        vals, usage = run(cmd, env)
        i = info(ctr_files(d)[0])
        if i["status"] != "clean":
            sys.exit("ab_clock: a trace did not read back clean")
        return vals, usage, i["dropped"]
    finally:
        shutil.rmtree(d)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    old = Path(sys.argv[1]) / "build/lib/libcuptrace.so"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    new = ROOT / "build/lib/libcuptrace.so"
    variants = [("old", old, "old"), ("tsc", new, "tsc"), ("monotonic", new, "monotonic")]
    fig = {v[0]: {k: [] for k in ("added", "w", "whole", "proc", "cpu21")} for v in variants}
    clock, drops = [], 0
    events = 2 * PAIRS * (ROUNDS + 1)
    for _ in range(runs):
        u1, uu1, _ = once(1, None, None)
        for name, lib, clk in variants:
            t1, tu1, d1 = once(1, lib, clk)
            t2, _, d2 = once(2, lib, clk)
            drops += d1 + d2
            clock.append(t1["clock_ns"])
            added = (t1["pair_cpu_ns"] - u1["pair_cpu_ns"]) / 2
            w = t1.get("writer_ns_ev", float("nan"))
            g = fig[name]
            g["added"].append(added / t1["clock_ns"])
            g["w"].append(w / t1["clock_ns"])
            g["whole"].append((added + w) / t1["clock_ns"])
            g["proc"].append((tu1.cpu_s - uu1.cpu_s) * 1e9 / events)
            g["cpu21"].append(t2["pair_cpu_ns"] / t1["pair_cpu_ns"])
    c = statistics.median(clock)
    print("clock_gettime: %.1f ns (median of %d processes; runs %s)" %
          (c, len(clock), " ".join("%.1f" % x for x in clock)))
    for name, _, _ in variants:
        g = fig[name]
        for k, what in (("added", "added CPU per push or pop / clock"),
                        ("w", "writer CPU per event / clock"),
                        ("whole", "whole cost per event / clock"),
                        ("proc", "process user+sys per event over untraced, ns"),
                        ("cpu21", "per-thread CPU, 2 threads / 1")):
            v = g[k]
            print("%-10s %-46s %6.2f  (runs %s)" % (name, what, statistics.median(v),
                                                    " ".join("%.2f" % x for x in v)))
    print("events dropped, all traced runs: %d" % drops)


if __name__ == "__main__":
    main()
