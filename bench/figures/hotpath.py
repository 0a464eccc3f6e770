# SPDX-License-Identifier: MIT
"""The hot path: an NVTX push+pop pair through the real NVTX3
loader, untraced and traced, against one clock_gettime(CLOCK_MONOTONIC)
measured inside each traced process; then one thread against two. Traced
runs alternate the record clock (CUPTRACE_CLOCK=tsc, the default where the
TSC is invariant, and monotonic), so that both are measured in one run.
Costs are in thread CPU time (CLOCK_THREAD_CPUTIME_ID) so that other load
on the machine does not count; wall-time figures are printed beside.
The whole cost of an event is the recording thread's added CPU plus the
writer thread's CPU per event (bench_nvtx's writer_ns_ev)."""
import shutil

from benchlib import (RUNS, ctr_files, info, median, plain_env, prog, report, run, spread,
                      tmpdir, traced_env)

PAIRS = 1000000  # per thread and round: about 0.1 s traced
ROUNDS = 5
BUFFER_MB = 1024  # big enough that nothing is dropped; checked below


def once(threads, clock):
    cmd = [prog("bench_nvtx"), str(threads), str(PAIRS), str(ROUNDS)]
    if not clock:
        return run(cmd, plain_env())[0], 0, True
    d = tmpdir("hot")
    try:
        vals = run(cmd, traced_env(d, BUFFER_MB, CUPTRACE_CLOCK=clock))[0]
        i = info(ctr_files(d)[0])
        return vals, i["dropped"], i["status"] == "clean"
    finally:
        shutil.rmtree(d)


CLOCKS = ("tsc", "monotonic")


def main():
    clock, tsc, base, scale_plain = [], [], [], []
    f = {c: {k: [] for k in ("added", "rest", "ratio", "first", "fratio", "wall", "w", "whole", "wratio", "cpu1", "cpu2",
                             "cpu_ratio", "scale", "bound", "ev1", "ev2", "wpct")} for c in CLOCKS}
    drops = unreadable = 0
    for _ in range(RUNS):
        u1 = once(1, None)[0]
        u2 = once(2, None)[0]
        base.append(u1["pair_cpu_ns"] / 2)
        scale_plain.append(u2["events_s"] / u1["events_s"])
        for c in CLOCKS:
            t1, d1, ok1 = once(1, c)
            t2, d2, ok2 = once(2, c)
            drops += d1 + d2
            unreadable += (not ok1) + (not ok2)
            g = f[c]
            clk = t1["clock_ns"]
            clock.append(clk)
            tsc.append(t1.get("rdtsc_ns", 0))
            added = (t1["pair_cpu_ns"] - u1["pair_cpu_ns"]) / 2
            g["added"].append(added)
            # What is not reading the clock: ring, string copy, stores.
            g["rest"].append(added - (t1.get("rdtsc_ns", 0) if c == "tsc" else clk))
            g["ratio"].append(added / clk)
            # from the process's first event (bench_nvtx's first round, on
            # ring chunks never touched before)
            first = (t1["first_pair_cpu_ns"] - u1["first_pair_cpu_ns"]) / 2
            g["first"].append(first)
            g["fratio"].append(first / clk)
            g["wall"].append((t1["pair_ns"] - u1["pair_ns"]) / 2)
            w = t1["writer_ns_ev"]
            g["w"].append(w)
            g["whole"].append(added + w)
            g["wratio"].append((added + w) / clk)
            g["cpu1"].append(t1["pair_cpu_ns"])
            g["cpu2"].append(t2["pair_cpu_ns"])
            g["cpu_ratio"].append(t2["pair_cpu_ns"] / t1["pair_cpu_ns"])
            g["ev1"].append(t1["events_s"] / 1e6)
            g["ev2"].append(t2["events_s"] / 1e6)
            g["scale"].append(t2["events_s"] / t1["events_s"])
            # Two recording threads on two cores share them with the
            # writer: at most 2r/(r+w) of one thread's rate, r the
            # recording thread's CPU per event, w the writer's.
            r = t1["pair_cpu_ns"] / 2
            g["bound"].append(2 * r / (r + w))
            g["wpct"].append(t2.get("writer_pct", 0))
    report("hotpath", "clock_gettime(CLOCK_MONOTONIC)", "%.1f ns" % median(clock), "-", None,
           spread(clock))
    report("hotpath", "rdtsc", "%.1f ns" % median(tsc), "-", None, spread(tsc))
    report("hotpath", "untraced push or pop (NVTX no-op)", "%.2f ns" % median(base), "-", None)
    clk_base = "clock_gettime %.1f ns, same processes" % median(clock)
    for c in CLOCKS:
        g = f[c]
        m = {k: median(v) for k, v in g.items()}
        report("hotpath", "[%s] added cost per push or pop, traced, warm" % c,
               "%.1f ns = %.2fx clock" % (m["added"], m["ratio"]), "<= 0.75x clock",
               m["ratio"] <= 0.75, spread(g["ratio"]), clk_base)
        report("hotpath", "[%s] the same from the process's first event" % c,
               "%.1f ns = %.2fx clock" % (m["first"], m["fratio"]), "<= 1.00x clock",
               m["fratio"] <= 1.0, spread(g["fratio"]), clk_base)
        report("hotpath", "[%s] of which not reading the clock" % c,
               "%.1f ns" % m["rest"], "-", None, spread(g["rest"]))
        report("hotpath", "[%s] the same in wall time (waits for a core too)" % c,
               "%.1f ns" % m["wall"], "-", None, spread(g["wall"]))
        report("hotpath", "[%s] writer CPU per event" % c, "%.1f ns" % m["w"], "<= 40 ns",
               m["w"] <= 40, spread(g["w"]))
        report("hotpath", "[%s] whole cost per event (recording + writer)" % c,
               "%.1f ns = %.2fx clock" % (m["whole"], m["wratio"]), "<= 2.50x clock",
               m["wratio"] <= 2.5, spread(g["wratio"]), clk_base)
        report("hotpath", "[%s] CPU per pair per thread, 2 threads / 1" % c,
               "%.1f / %.1f ns = %.2fx" % (m["cpu2"], m["cpu1"], m["cpu_ratio"]), "<= 1.10x",
               m["cpu_ratio"] <= 1.1, spread(g["cpu_ratio"]), "1 thread %.1f ns" % m["cpu1"])
        report("hotpath", "[%s] events/s traced, 1 thread / 2 threads" % c,
               "%.1f / %.1f M/s" % (m["ev1"], m["ev2"]), "-", None)
        report("hotpath", "[%s] 2 threads vs 1, events/s (wall)" % c,
               "%.2fx (bound 2r/(r+w) %.2fx)" % (m["scale"], m["bound"]), "-", None,
               spread(g["scale"]))
        report("hotpath", "[%s] writer thread CPU during 2-thread rounds" % c,
               "%.0f %% of a core" % m["wpct"], "-", None)
    report("hotpath", "2 threads vs 1, events/s untraced", "%.2fx" % median(scale_plain), "-", None)
    report("hotpath", "events dropped (all traced runs)", "%d" % drops, "0", drops == 0)
    report("hotpath", "traces not read back cleanly", "%d of %d" % (unreadable, 4 * RUNS), "0",
           unreadable == 0, "cuptrace info status")


if __name__ == "__main__":
    main()
