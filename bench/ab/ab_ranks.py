#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two `cuptrace` binaries on the many-ranks conversion of
bench/figures/ranks.py: 16 bench_size traces of 1M events each, `convert -j 2`
into a JSON file beside the traces (and, with --stdout, to /dev/null),
runs interleaved (A, B, A, B, ...) because this VM's speed drifts within
minutes. Reports the medians of wall time, CPU time (user + sys) and
peak RSS of each, and whether both wrote the same bytes (each run's
output is checksummed, so a converter whose output varies from run to run
shows as several sums).

  python3 bench/ab/ab_ranks.py OLD_CUPTRACE [NEW_CUPTRACE] [RUNS] [--stdout] [-j N]
"""
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "figures"))
from benchlib import ctr_files, median, prog, run, spread, tmpdir, traced_env  # noqa: E402

RANKS = 16
EVENTS = 1000000


def once(tool, files, out, jobs):
    cmd = [tool, "convert", "-j", str(jobs), "-o", out] + files
    t0 = time.perf_counter()
    if out == "-":
        _, u = run(cmd, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0, u, None
    _, u = run(cmd)
    wall = time.perf_counter() - t0
    h = hashlib.md5()
    with open(out, "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b)
    os.unlink(out)
    return wall, u, h.hexdigest()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    to_stdout = "--stdout" in sys.argv
    jobs = int(sys.argv[sys.argv.index("-j") + 1]) if "-j" in sys.argv else 2
    if "-j" in sys.argv:
        args.remove(str(jobs))
    old = args[0]
    new = args[1] if len(args) > 1 else "build/bin/cuptrace"
    runs = int(args[2]) if len(args) > 2 else 7
    d = tmpdir("abranks")
    try:
        for r in range(RANKS):
            env = traced_env(os.path.join(d, "t"), 512, OMPI_COMM_WORLD_RANK=str(r),
                             OMPI_COMM_WORLD_SIZE=str(RANKS))
            run([prog("bench_size"), str(EVENTS)], env)
        files = ctr_files(os.path.join(d, "t"))
        out = "-" if to_stdout else os.path.join(d, "job.json")
        res = {old: [], new: []}
        for _ in range(runs):
            for tool in (old, new):
                res[tool].append(once(tool, files, out, jobs))
        for name, tool in (("A", old), ("B", new)):
            rs = res[tool]
            wall = [r[0] for r in rs]
            cpu = [r[1].cpu_s for r in rs]
            rss = [r[1].peak_rss_mb for r in rs]
            sums = sorted({r[2] for r in rs if r[2]})
            print("%s %s: wall %.3f s (%s), cpu %.3f s (%s), user %.3f sys %.3f, peak RSS %.1f MB, "
                  "%d distinct outputs in %d runs" %
                  (name, tool, median(wall), spread(wall), median(cpu), spread(cpu),
                   median([r[1].user_s for r in rs]), median([r[1].sys_s for r in rs]),
                   median(rss), len(sums), runs), flush=True)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
