# SPDX-License-Identifier: MIT
"""Benchmark: `cuptrace convert` into Perfetto's protobuf (.pftrace) against
Chrome JSON, on the 10M-event NVTX training trace (bench_size) and the
2M-event GPU trace (cupti_bench): size of the output, CPU time (user + sys,
the page cache's copying of the bytes included) into a file, median of RUNS
with the formats alternating (wall time beside it, for information: the
machine is shared), peak RSS (flat: a 2M-event NVTX trace beside the 10M
one). The protobuf without zstd (--pftrace-plain) runs in the same rounds:
the difference is what the compression costs. User and sys are given apart:
the JSON's sys time (the kernel copying 0.5-0.7 GB into the page cache)
varies 3x with what the machine's other tenants do."""
import os
import shutil
import time

from benchlib import RUNS, TOOL, info, median, prog, report, run, spread, tmpdir, traced_env

FORMATS = (("json", "json", []), ("pftrace", "pftrace", []),
           ("plain", "pftrace", ["--pftrace-plain"]))


def convert(ctr, out, extra):
    t0 = time.perf_counter()
    _, u = run([TOOL, "convert"] + extra + ["-o", out, ctr])
    wall = time.perf_counter() - t0
    size = os.path.getsize(out)
    os.unlink(out)
    return u, wall, size


def compare(label, ctr, d):
    events = info(ctr)["events"]
    t, w, us, sy = ({f[0]: [] for f in FORMATS} for _ in range(4))
    size, rss = {}, {}
    for _ in range(RUNS):
        for fmt, ext, extra in FORMATS:
            u, wall, size[fmt] = convert(ctr, os.path.join(d, "t." + ext), extra)
            t[fmt].append(u.cpu_s)
            us[fmt].append(u.user_s)
            sy[fmt].append(u.sys_s)
            w[fmt].append(wall)
            rss[fmt] = max(rss.get(fmt, 0), u.peak_rss_mb)
    ratio = size["json"] / size["pftrace"]
    report("pftrace", "%s (%d events): .pftrace %.1f MB, .json %.1f MB" %
           (label, events, size["pftrace"] / 1e6, size["json"] / 1e6),
           "1/%.2f" % ratio, "<= 1/5", ratio >= 5,
           "without zstd %.1f MB, 1/%.2f" % (size["plain"] / 1e6, size["json"] / size["plain"]),
           "JSON %.1f MB" % (size["json"] / 1e6))
    speed = median(t["json"]) / median(t["pftrace"])
    split = "; ".join("%s user %.3f sys %.3f" % (f, median(us[f]), median(sy[f])) for f in t)
    report("pftrace", "%s -> file, CPU: .pftrace %.3f s, .json %.3f s (median of %d)" %
           (label, median(t["pftrace"]), median(t["json"]), RUNS),
           "%.2fx" % speed, ">= 1.5x", speed >= 1.5,
           "pftrace %s; json %s; %s; wall .pftrace %.3f s, .json %.3f s" %
           (spread(t["pftrace"]), spread(t["json"]), split, median(w["pftrace"]), median(w["json"])),
           "JSON %.3f s CPU" % median(t["json"]))
    plain = median(t["json"]) / median(t["plain"])
    report("pftrace", "%s without zstd: CPU %.3f s" % (label, median(t["plain"])),
           "%.2fx" % plain, "(information)", None, spread(t["plain"]),
           "JSON %.3f s CPU" % median(t["json"]))
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
