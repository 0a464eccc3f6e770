"""Benchmark 1, the hot path: an NVTX push+pop pair through the real NVTX3
loader, untraced and traced, against one clock_gettime(CLOCK_MONOTONIC)
measured inside each traced process; then one thread against two.
Costs are in thread CPU time (CLOCK_THREAD_CPUTIME_ID) so that other load
on the machine does not count; wall-time figures are printed beside."""
import shutil

from benchlib import (RUNS, ctr_files, info, median, plain_env, prog, report, run, spread,
                      tmpdir, traced_env)

PAIRS = 1000000  # per thread and round: about 0.1 s traced
ROUNDS = 5
BUFFER_MB = 1024  # big enough that nothing is dropped; checked below


def once(threads, traced):
    cmd = [prog("bench_nvtx"), str(threads), str(PAIRS), str(ROUNDS)]
    if not traced:
        return run(cmd, plain_env())[0], 0, True
    d = tmpdir("hot")
    try:
        vals = run(cmd, traced_env(d, BUFFER_MB))[0]
        i = info(ctr_files(d)[0])
        return vals, i["dropped"], i["status"] == "clean"
    finally:
        shutil.rmtree(d)


def main():
    added, clock, ratio, base, scale, scale_plain, cpu1, cpu2 = [], [], [], [], [], [], [], []
    ev1, ev2, wall, wpct = [], [], [], []
    drops = unreadable = 0
    for _ in range(RUNS):
        u1 = once(1, False)[0]
        u2 = once(2, False)[0]
        t1, d1, ok1 = once(1, True)
        t2, d2, ok2 = once(2, True)
        drops += d1 + d2
        unreadable += (not ok1) + (not ok2)
        per_call = (t1["pair_cpu_ns"] - u1["pair_cpu_ns"]) / 2
        wall.append((t1["pair_ns"] - u1["pair_ns"]) / 2)
        added.append(per_call)
        clock.append(t1["clock_ns"])
        ratio.append(per_call / t1["clock_ns"])
        base.append(u1["pair_cpu_ns"] / 2)
        ev1.append(t1["events_s"] / 1e6)
        ev2.append(t2["events_s"] / 1e6)
        scale.append(t2["events_s"] / t1["events_s"])
        scale_plain.append(u2["events_s"] / u1["events_s"])
        cpu1.append(t1["pair_cpu_ns"])
        cpu2.append(t2["pair_cpu_ns"])
        wpct.append(t2.get("writer_pct", 0))
    r = median(ratio)
    report("hotpath", "clock_gettime(CLOCK_MONOTONIC)", "%.1f ns" % median(clock), "-", None,
           spread(clock))
    report("hotpath", "untraced push or pop (NVTX no-op)", "%.2f ns" % median(base), "-", None)
    report("hotpath", "added cost per push or pop, traced", "%.1f ns = %.2fx clock" % (median(added), r),
           "<= 1.50x clock", r <= 1.5, spread(ratio))
    report("hotpath", "the same in wall time (waits for a core too)", "%.1f ns" % median(wall), "-",
           None, spread(wall))
    s = median(scale)
    report("hotpath", "events/s traced, 1 thread / 2 threads",
           "%.1f / %.1f M/s" % (median(ev1), median(ev2)), "-", None)
    report("hotpath", "2 threads vs 1, events/s traced", "%.2fx" % s, ">= 1.80x", s >= 1.8,
           spread(scale))
    report("hotpath", "2 threads vs 1, events/s untraced", "%.2fx" % median(scale_plain), "-", None)
    report("hotpath", "CPU per pair per thread, 1 vs 2 threads",
           "%.1f / %.1f ns" % (median(cpu1), median(cpu2)), "-", None,
           "equal = no contention between recording threads")
    report("hotpath", "writer thread CPU during 2-thread rounds", "%.0f %% of a core" % median(wpct),
           "-", None, "cores the two recording threads do not get")
    report("hotpath", "events dropped (all traced runs)", "%d" % drops, "0", drops == 0)
    report("hotpath", "traces not read back cleanly", "%d of %d" % (unreadable, 2 * RUNS), "0",
           unreadable == 0, "cuptrace info status")


if __name__ == "__main__":
    main()
