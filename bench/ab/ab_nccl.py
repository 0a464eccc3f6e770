#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries on NCCL traces: 4 ranks of
tests/progs/nccl_harness (the profiler plugin, steps marked; made as
bench/figures/reports.py makes them) at N and 2N iterations, through `stats
--report nccl_sum`, `nccl_skew`, `cuda_api_sum` (which takes nothing of
NCCL: reading and the model alone) and `convert -j 1` to JSON. CPU time
(user+sys) and peak RSS of each run from wait4(); runs interleaved
(A, B, A, B, ...) because this VM's speed drifts within minutes; medians,
events per second of CPU time, B/A.

  python3 bench/ab/ab_nccl.py OLD_CUPTRACE [NEW_CUPTRACE] [RUNS]

NEW defaults to build/bin/cuptrace, RUNS to 5, N to BENCH_NCCL_ITERS
(default 4000: 2 M events)."""
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import TOOL  # noqa: E402
from reports import HARNESS, make_trace  # noqa: E402

COMMANDS = {
    "stats nccl_sum": ["stats", "--report", "nccl_sum", "--format", "csv"],
    "stats nccl_skew": ["stats", "--report", "nccl_skew", "--format", "csv"],
    "stats cuda_api_sum": ["stats", "--report", "cuda_api_sum", "--format", "csv"],
    "convert -j 1 JSON": ["convert", "-j", "1", "-o", "OUT"],
}


def once(tool, args, files, out):
    args = [out if a == "OUT" else a for a in args]
    p = subprocess.Popen([tool] + args + files, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"{tool} {' '.join(args)} failed")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    a = sys.argv[1]
    b = sys.argv[2] if len(sys.argv) > 2 else TOOL
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    if not os.path.exists(HARNESS):
        raise SystemExit("build/tests/progs/nccl_harness missing (make test-progs builds it)")
    iters = int(os.environ.get("BENCH_NCCL_ITERS", "4000"))
    sizes = {"N": make_trace(iters), "2N": make_trace(2 * iters)}
    try:
        for name, args in COMMANDS.items():
            for size, (d, files, events) in sizes.items():
                got = {"A": [], "B": []}
                out = os.path.join(d, "ab.json")
                for _ in range(runs):
                    for tag, tool in (("A", a), ("B", b)):
                        got[tag].append(once(tool, args, files, out))
                row = []
                for tag in "AB":
                    cpu = statistics.median(c for c, _ in got[tag])
                    rss = statistics.median(r for _, r in got[tag])
                    row.append("%s %.3f s %.2f M/s %.1f MB" % (tag, cpu, events / cpu / 1e6, rss))
                ratio = statistics.median(c for c, _ in got["B"]) / statistics.median(
                    c for c, _ in got["A"])
                print("%-20s %-3s %.2fM events  %s | %s | B/A %.2f" % (
                    name, size, events / 1e6, row[0], row[1], ratio), flush=True)
    finally:
        for d, _, _ in sizes.values():
            shutil.rmtree(d)


if __name__ == "__main__":
    main()
