#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries on one core: the same command on the
traces of DIR, pinned to CPU 0 (taskset, so both read the files on one
thread), runs interleaved (A, B, A, B, ...: this VM's speed drifts within
minutes), CPU time (user+sys from wait4) medians, events per second of CPU
time, B/A.

  python3 bench/ab/ab_stats.py OLD_CUPTRACE NEW_CUPTRACE DIR RUNS 'stats --report nccl_sum'"""
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import info  # noqa: E402


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    tools = {"A": sys.argv[1], "B": sys.argv[2]}
    files = sorted(str(f) for f in Path(sys.argv[3]).glob("*.ctr"))
    runs, args = int(sys.argv[4]), sys.argv[5].split()
    events = sum(info(f)["events"] for f in files)
    got = {"A": [], "B": []}
    for _ in range(runs):
        for tag, tool in tools.items():
            p = subprocess.Popen(["taskset", "-c", "0", tool] + args + files,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            if status:
                raise SystemExit(f"{tool} {' '.join(args)} failed")
            got[tag].append(ru.ru_utime + ru.ru_stime)
    for tag in "AB":
        m = statistics.median(got[tag])
        print("%s %.3f s %.2f M/s (runs %s)" % (tag, m, events / m / 1e6,
                                                 " ".join("%.3f" % x for x in got[tag])))
    print("%s: %d files, %.2fM events, B/A %.2f" % (" ".join(args), len(files), events / 1e6,
                                                    statistics.median(got["B"]) /
                                                    statistics.median(got["A"])))


if __name__ == "__main__":
    main()
