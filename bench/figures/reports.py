# SPDX-License-Identifier: MIT
"""The analyses of `cuptrace stats` (steps, nccl_skew, with nccl_sum for
comparison) over a large NCCL trace: 4 ranks of tests/progs/nccl_harness
(the profiler plugin, steps marked), N and 2N iterations. Speed: trace
events per second of CPU time of `cuptrace stats --report R` (one core:
stats reads the files one after another); memory: peak RSS at N and 2N
(flat: the same within a few MB). cuda_api_sum, which takes nothing of
NCCL, is the cost of reading and modelling the files alone; each report's
own rate is events / (its CPU time - that). BENCH_NCCL_ITERS sets N
(default 12000)."""
import os
import shutil
import subprocess

from benchlib import LIB, ROOT, RUNS, TOOL, info, median, report, run, skip, spread, tmpdir

HARNESS = os.path.join(ROOT, "build/tests/progs/nccl_harness")
ITERS = int(os.environ.get("BENCH_NCCL_ITERS", "12000"))
REPORTS = ["cuda_api_sum", "steps", "nccl_skew", "nccl_sum"]
TARGET = 5e6


def make_trace(iters):
    d = tmpdir("reports")
    procs = []
    for r in range(4):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUPTRACE_")}
        env.update(LD_PRELOAD=LIB, NCCL_PROFILER_PLUGIN=LIB, CUPTRACE_BUFFER_MB="64",
                   CUPTRACE_OUTPUT=os.path.join(d, "rank%r.ctr"), RANK=str(r), WORLD_SIZE="4",
                   HARNESS_STEPS="1")
        procs.append(subprocess.Popen([HARNESS, str(iters)], env=env, stdout=subprocess.DEVNULL))
    for p in procs:
        if p.wait():
            raise SystemExit("bench: nccl_harness failed")
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".ctr"))
    return d, files, sum(info(f)["events"] for f in files)


def main():
    if not os.path.exists(HARNESS):
        skip("reports", "build/tests/progs/nccl_harness missing (make test-progs builds it)")
        return
    runs = min(RUNS, 3)
    big = make_trace(2 * ITERS)
    small = make_trace(ITERS)
    base = None
    try:
        for rep in REPORTS:
            rss, rate = {}, []
            for tag, (_, files, events) in (("N", small), ("2N", big)):
                cpu, peak = [], []
                for _ in range(runs):
                    _, ru = run([TOOL, "stats", "--report", rep, "--format", "csv"] + files,
                                stdout=subprocess.DEVNULL)
                    cpu.append(ru.cpu_s)
                    peak.append(ru.peak_rss_mb)
                rss[tag] = median(peak)
                if tag == "2N":
                    rate = [events / c for c in cpu]
                    n_events = events
            r = median(rate)
            reading = ("cuda_api_sum (reading + model) %.2f M events/s" % (n_events / base / 1e6)
                       if base else "")
            report("reports", "%s over %.1fM events, one core" % (rep, n_events / 1e6),
                   "%.2f M events/s" % (r / 1e6), ">= 5 M/s", r >= TARGET, spread(rate), reading)
            cpu_s = n_events / r
            if base is None:
                base = cpu_s
            else:
                extra = cpu_s - base
                value = ("%.1f M events/s" % (n_events / extra / 1e6) if extra > 0.01
                         else "within noise (%+.3f s)" % extra)
                report("reports", "%s alone (minus reading + model)" % rep, value, ">= 5 M/s",
                       extra <= 0.01 or n_events / extra >= TARGET, base=reading)
            grow = rss["2N"] - rss["N"]
            report("reports", "%s peak RSS at N / 2N events" % rep,
                   "%.1f / %.1f MB" % (rss["N"], rss["2N"]), "flat (+<4 MB)", grow < 4)
    finally:
        shutil.rmtree(big[0])
        shutil.rmtree(small[0])


if __name__ == "__main__":
    main()
