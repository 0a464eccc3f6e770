#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries converting one 2M-event GPU trace
(cupti_bench: kernels, copies, calls, 1M launch flows) into a JSON file:
wall time, user and system CPU time of each run, interleaved (A, B, A, B,
...) because this VM's speed drifts within minutes. The output file is
removed before every run (truncating 700 MB of page cache is not
conversion). With --pin both run on one CPU (taskset -c 0), as the goal
"on one core" reads; the whole cost of a run is then on that core.

  python3 bench/ab/ab_gpu_file.py OLD_CUPTRACE [NEW_CUPTRACE] [RUNS] [--pin]

NEW defaults to build/bin/cuptrace, RUNS to 9. Prints the medians, the
events per second of wall and of CPU time, and whether both wrote the same
bytes.
"""
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVENTS = 2000000


def once(tool, ctr, out, pin):
    if os.path.exists(out):
        os.unlink(out)
    cmd = (["taskset", "-c", "0"] if pin else []) + [tool, "convert", "-o", out, ctr]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime


def main():
    args = [a for a in sys.argv[1:] if a != "--pin"]
    pin = "--pin" in sys.argv
    if not args:
        raise SystemExit(__doc__)
    old = args[0]
    new = args[1] if len(args) > 1 else str(ROOT / "build/bin/cuptrace")
    runs = int(args[2]) if len(args) > 2 else 9
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR", "/tmp")) as d:
        ctr = os.path.join(d, "gpu.ctr")
        subprocess.run([str(ROOT / "build/bench/cupti_bench"), ctr, str(EVENTS), "1"],
                       check=True, capture_output=True)
        info = subprocess.run([new, "info", ctr], capture_output=True, text=True).stdout
        ev = int(next(l.split()[1] for l in info.splitlines() if l.startswith("events:")))
        res = {"A": [], "B": []}
        for _ in range(runs):
            for name, tool in (("A", old), ("B", new)):
                res[name].append(once(tool, ctr, os.path.join(d, name + ".json"), pin))
        same = filecmp.cmp(os.path.join(d, "A.json"), os.path.join(d, "B.json"), shallow=False)
        print(f"{ev} events, {runs} runs each, interleaved{', pinned to CPU 0' if pin else ''}")
        for name, tool in (("A", old), ("B", new)):
            w = statistics.median(r[0] for r in res[name])
            u = statistics.median(r[1] for r in res[name])
            s = statistics.median(r[2] for r in res[name])
            c = statistics.median(r[1] + r[2] for r in res[name])
            print(f"{name} {tool}: wall {w:.3f} s ({ev / w / 1e6:.2f} M/s), user {u:.3f} s, "
                  f"sys {s:.3f} s, user+sys {c:.3f} s ({ev / c / 1e6:.2f} M events per CPU s)")
            print(f"  walls: {' '.join(f'{r[0]:.2f}' for r in res[name])}")
            print(f"  cpu:   {' '.join(f'{r[1] + r[2]:.2f}' for r in res[name])}")
        print("outputs identical" if same else "OUTPUTS DIFFER")


if __name__ == "__main__":
    main()
