#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries on the same traces: NVTX (bench_size, a
training loop) and GPU (cupti_bench: kernels, copies, calls, flows), into a
JSON file and into /dev/null. Runs are interleaved (A, B, A, B, ...) because
this VM's speed drifts within minutes; the medians and B/A are printed.

  python3 bench/ab/ab_convert.py OLD_CUPTRACE [NEW_CUPTRACE] [RUNS]

NEW defaults to build/bin/cuptrace, RUNS to 9. Used for issue 10's rule
that the model layer may not cost the converter more than 5 %.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import ctr_files, info, prog, run, tmpdir, traced_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 2000000


def traces(d):
    nv = os.path.join(d, "nvtx")
    os.mkdir(nv)
    run([prog("bench_size"), str(EVENTS)], traced_env(nv, 2048))
    gpu = os.path.join(d, "gpu.ctr")
    subprocess.run([str(ROOT / "build/bench/cupti_bench"), gpu, str(EVENTS), "1"], check=True,
                   capture_output=True)
    return {"nvtx": ctr_files(nv)[0], "gpu": gpu}


def once(tool, ctr, out):
    t0 = time.perf_counter()
    if out == "-":
        subprocess.run([tool, "convert", "-o", "-", ctr], stdout=subprocess.DEVNULL, check=True)
    else:
        subprocess.run([tool, "convert", "-o", out, ctr], check=True)
    wall = time.perf_counter() - t0
    if out != "-":
        os.unlink(out)
    return wall


def main():
    old = sys.argv[1]
    new = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "build/bin/cuptrace")
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    d = tmpdir("ab")
    try:
        for name, ctr in traces(d).items():
            events = info(ctr)["events"]
            for out in (os.path.join(d, "t.json"), "-"):
                a, b = [], []
                for _ in range(runs):
                    a.append(once(old, ctr, out))
                    b.append(once(new, ctr, out))
                ma, mb = statistics.median(a), statistics.median(b)
                where = "file" if out != "-" else "/dev/null"
                print(f"ab | {name:<4} {events / 1e6:.1f}M events -> {where:<9} | "
                      f"A {ma:.3f} s ({events / ma / 1e6:.2f} M/s) | "
                      f"B {mb:.3f} s ({events / mb / 1e6:.2f} M/s) | B/A time {mb / ma:.3f}")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
