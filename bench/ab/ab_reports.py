#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries running `stats --report R` over the NCCL
harness traces of bench/figures/reports.py (4 ranks, profiler plugin, N and 2N
iterations): CPU time (user + sys) and peak RSS of each run, A and B
interleaved (A, B, A, B, ...) because this VM's speed drifts within
minutes; medians. Also checks that both print the same bytes at N (every
report here, every --format).

  python3 bench/ab/ab_reports.py OLD_CUPTRACE [NEW_CUPTRACE] [RUNS] [--jobs J]

NEW defaults to build/bin/cuptrace, RUNS to 5, J (stats -j) to the default
(all CPUs); BENCH_NCCL_ITERS sets N (default 12000). The traces are made
with this tree's library and harness."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import TOOL, median, run  # noqa: E402
from reports import ITERS, make_trace  # noqa: E402

REPORTS = ["cuda_api_sum", "nccl_skew"]


def main():
    args = [a for a in sys.argv[1:]]
    jobs = []
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = ["-j", args[i + 1]]
        del args[i:i + 2]
    if not args:
        raise SystemExit(__doc__)
    old = args[0]
    new = args[1] if len(args) > 1 else TOOL
    runs = int(args[2]) if len(args) > 2 else 5
    small, big = make_trace(ITERS), make_trace(2 * ITERS)
    try:
        for fmt in ("table", "csv", "json"):
            for rep in REPORTS:
                outs = [subprocess.run([t, "stats", "--format", fmt, "--report", rep] + jobs +
                                       small[1], capture_output=True).stdout for t in (old, new)]
                print("output at N, %s --format %s: %s" % (rep, fmt,
                      "same" if outs[0] == outs[1] else "DIFFERENT"))
        print("stats %s, %d runs each, interleaved; CPU = user + sys" % (" ".join(jobs) or
                                                                        "(default -j)", runs))
        for rep in REPORTS:
            for tag, (_, files, events) in (("N", small), ("2N", big)):
                res = {"A": [], "B": []}
                for _ in range(runs):
                    for name, tool in (("A", old), ("B", new)):
                        _, ru = run([tool, "stats", "--report", rep, "--format", "csv"] + jobs +
                                    files, stdout=subprocess.DEVNULL)
                        res[name].append(ru)
                line = []
                for name in ("A", "B"):
                    cpu = median([u.cpu_s for u in res[name]])
                    rss = median([u.peak_rss_mb for u in res[name]])
                    line.append("%s %.3f s %.2f M/s %.1f MB" % (name, cpu, events / cpu / 1e6, rss))
                print("%-13s %-2s %.1fM events: %s  (B/A CPU %.2f; runs A %s B %s)" %
                      (rep, tag, events / 1e6, "; ".join(line),
                       median([u.cpu_s for u in res["B"]]) / median([u.cpu_s for u in res["A"]]),
                       " ".join("%.2f" % u.cpu_s for u in res["A"]),
                       " ".join("%.2f" % u.cpu_s for u in res["B"])), flush=True)
    finally:
        shutil.rmtree(small[0])
        shutil.rmtree(big[0])


if __name__ == "__main__":
    main()
