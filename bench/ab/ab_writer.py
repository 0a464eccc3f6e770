#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of the writer thread of two builds (issue 14): CPU time of the thread
`cuptrace-write` per event, from the library's own bench programs of each
build, runs interleaved (A, B, A, B, ...) because this VM's speed drifts
within minutes; medians, B/A and the single runs are printed.

  python3 bench/ab/ab_writer.py OLD_ROOT [NEW_ROOT] [RUNS]

OLD_ROOT and NEW_ROOT are trees built with `make all bench-progs
build/bench/cupti_bench` (NEW_ROOT defaults to this one, RUNS to 5).
Figures: NVTX push/pop pairs paced at 1M and 4M events/s (bench_rate,
writer CPU per event), GPU records (cupti_bench, 2M CUPTI records through the
simulated CUPTI buffers of the real translation, writer CPU per record and
file bytes), and bytes per event of one 10M-event training trace
(bench_size) per build.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import ctr_files, info, run, tmpdir, traced_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DROPS = {}  # root -> events dropped in its bench_rate runs


def env_for(root, d, buffer_mb):
    env = traced_env(d, buffer_mb)
    env["LD_PRELOAD"] = str(Path(root) / "build/lib/libcuptrace.so")
    return env


def rate_once(root, rate):
    d = tmpdir("abw")
    try:
        vals, _ = run([str(Path(root) / "build/bench/bench_rate"), str(rate), "2"],
                      env_for(root, d, 64))
        DROPS[root] = DROPS.get(root, 0) + info(ctr_files(d)[0])["dropped"]
    finally:
        shutil.rmtree(d)
    return vals["writer_ns_per_event"]


def gpu_once(root):
    d = tmpdir("abw")
    try:
        out = subprocess.run([str(Path(root) / "build/bench/cupti_bench"),
                              os.path.join(d, "g.ctr"), "2000000", "1"],
                             check=True, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(d)
    j = json.loads(out.strip().splitlines()[-1])
    return j["writer_ns_per_record"], j["bytes"] / j["records"]


def size_once(root):
    d = tmpdir("abw")
    try:
        run([str(Path(root) / "build/bench/bench_size"), "10000000"], env_for(root, d, 2048))
        ctr = ctr_files(d)[0]
        return os.path.getsize(ctr) / info(ctr)["events"]
    finally:
        shutil.rmtree(d)


def line(what, a, b, unit):
    ma, mb = statistics.median(a), statistics.median(b)
    print("%-34s A %8.2f %s  B %8.2f %s  B/A %.3f   A runs %s  B runs %s" %
          (what, ma, unit, mb, unit, mb / ma, [round(x, 2) for x in a], [round(x, 2) for x in b]))


def main():
    old = sys.argv[1]
    new = sys.argv[2] if len(sys.argv) > 2 else str(ROOT)
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    print("A = %s, B = %s, %d interleaved runs; load average %s" %
          (old, new, runs, open("/proc/loadavg").read().split()[:3]))
    for rate in (1000000, 4000000):
        a, b = [], []
        for _ in range(runs):
            a.append(rate_once(old, rate))
            b.append(rate_once(new, rate))
        line("NVTX writer ns/event at %dM/s" % (rate // 1000000), a, b, "ns")
    a, b, sa, sb = [], [], [], []
    for _ in range(runs):
        x, y = gpu_once(old), gpu_once(new)
        a.append(x[0]), sa.append(x[1]), b.append(y[0]), sb.append(y[1])
    line("GPU writer ns/record", a, b, "ns")
    line("GPU bytes/event", sa, sb, "B ")
    line("NVTX 10M trace bytes/event", [size_once(old)], [size_once(new)], "B ")
    print("events dropped in the bench_rate runs: A %d, B %d" % (DROPS[old], DROPS[new]))
    print("load average after: %s" % open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
