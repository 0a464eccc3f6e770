# SPDX-License-Identifier: MIT
"""Writer thread CPU at 1M events/s: a paced producer
(bench_rate.c) reads the CPU time of the thread named cuptrace-write from
/proc/self/task/TID/schedstat over a 3-second window."""
import shutil

from benchlib import RUNS, ctr_files, info, median, prog, report, run, spread, tmpdir, traced_env

RATE, SECONDS = 1000000, 3


def main():
    pct, per_ev, rate, drops = [], [], [], 0
    for _ in range(RUNS):
        d = tmpdir("writer")
        try:
            vals, _ = run([prog("bench_rate"), str(RATE), str(SECONDS)], traced_env(d, 64))
            drops += info(ctr_files(d)[0])["dropped"]
        finally:
            shutil.rmtree(d)
        if "writer_cpu_pct" not in vals:
            raise SystemExit("writer: no cuptrace-write thread found")
        pct.append(vals["writer_cpu_pct"])
        per_ev.append(vals["writer_ns_per_event"])
        rate.append(vals["events_s"] / 1e6)
    report("writer", "achieved event rate", "%.3f M/s" % median(rate), "1 M/s", None)
    p = median(pct)
    report("writer", "writer thread CPU at 1M events/s", "%.1f %% of a core" % p, "< 10 %", p < 10,
           spread(pct))
    report("writer", "writer CPU per event", "%.0f ns" % median(per_ev), "< 100 ns", None,
           "drops %d" % drops)


if __name__ == "__main__":
    main()
