"""Benchmark: `cuptrace convert` into Perfetto's protobuf (.pftrace) against
Chrome JSON, on the 10M-event NVTX training trace (bench_size) and the
2M-event GPU trace (cupti_bench): size of the output, CPU time (user + sys,
the page cache's copying of the bytes included) into a file, median of RUNS
with the two formats alternating (wall time beside it, for information: the
machine is shared), peak RSS (flat: a 2M-event NVTX trace beside the 10M
one)."""
import os
import shutil
import time

from benchlib import RUNS, TOOL, info, median, prog, report, run, spread, tmpdir, traced_env


def convert(ctr, out):
    t0 = time.perf_counter()
    _, u = run([TOOL, "convert", "-o", out, ctr])
    wall = time.perf_counter() - t0
    size = os.path.getsize(out)
    os.unlink(out)
    return u.cpu_s, wall, size, u.peak_rss_mb


def compare(label, ctr, d):
    events = info(ctr)["events"]
    t = {"json": [], "pftrace": []}
    w = {"json": [], "pftrace": []}
    size, rss = {}, {}
    for _ in range(RUNS):
        for fmt in t:
            cpu, wall, size[fmt], r = convert(ctr, os.path.join(d, "t." + fmt))
            t[fmt].append(cpu)
            w[fmt].append(wall)
            rss[fmt] = max(rss.get(fmt, 0), r)
    ratio = size["json"] / size["pftrace"]
    report("pftrace", "%s (%d events): .pftrace %.1f MB, .json %.1f MB" %
           (label, events, size["pftrace"] / 1e6, size["json"] / 1e6),
           "1/%.2f" % ratio, "<= 1/5", ratio >= 5)
    speed = median(t["json"]) / median(t["pftrace"])
    report("pftrace", "%s -> file, CPU: .pftrace %.3f s, .json %.3f s (median of %d)" %
           (label, median(t["pftrace"]), median(t["json"]), RUNS),
           "%.2fx" % speed, ">= 1.5x", speed >= 1.5,
           "pftrace %s; json %s; wall .pftrace %.3f s, .json %.3f s" %
           (spread(t["pftrace"]), spread(t["json"]), median(w["pftrace"]), median(w["json"])))
    return rss["pftrace"]


def main():
    d = tmpdir("pftrace")
    try:
        rss = {}
        for n in (2000000, 10000000):
            out = os.path.join(d, "nvtx%d" % n)
            os.mkdir(out)
            run([prog("bench_size"), str(n)], traced_env(out, 2048))
            (ctr,) = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".ctr")]
            rss[n] = compare("NVTX %dM" % (n // 1000000), ctr, d)
        gpu = os.path.join(d, "gpu.ctr")
        run([prog("cupti_bench"), gpu, "2000000", "1"])
        compare("GPU 2M", gpu, d)
        report("pftrace", "peak RSS NVTX 2M -> 10M events", "%.1f -> %.1f MB" % (rss[2000000], rss[10000000]),
               "flat (< 2 MB growth)", rss[10000000] - rss[2000000] < 2)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
