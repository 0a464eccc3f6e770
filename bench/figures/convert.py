# SPDX-License-Identifier: MIT
"""The converter: `cuptrace convert` of a training-loop trace
into Chrome JSON, events per second and peak RSS, for a short and a long
trace (memory must not grow with the length). Written to a file (what
users do; on this VM partly bound by the disk) and to /dev/null (the
converter alone)."""
import os
import shutil
import subprocess
import time

from benchlib import RUNS, TOOL, ctr_files, info, median, prog, report, run, spread, tmpdir, traced_env

LENGTHS = (2000000, 10000000)
BUFFER_MB = 2048


def measure(ctr, events, out):
    """events/s (wall), events per CPU second, peak RSS (MB) over RUNS runs."""
    rate, cpu_rate, peak = [], [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        if out == "-":
            _, u = run([TOOL, "convert", "-o", "-", ctr], stdout=subprocess.DEVNULL)
        else:
            _, u = run([TOOL, "convert", "-o", out, ctr])
            os.unlink(out)
        wall = time.perf_counter() - t0
        rate.append(events / wall / 1e6)
        cpu_rate.append(events / u.cpu_s / 1e6)
        peak.append(u.peak_rss_mb)
    return rate, cpu_rate, peak


def main():
    rss = {}
    for n in LENGTHS:
        m = "%dM events" % (n // 1000000)
        d = tmpdir("conv")
        try:
            run([prog("bench_size"), str(n)], traced_env(d, BUFFER_MB))
            ctr = ctr_files(d)[0]
            events = info(ctr)["events"]
            frate, fcpu, fpeak = measure(ctr, events, os.path.join(d, "trace.json"))
            nrate, ncpu, npeak = measure(ctr, events, "-")
        finally:
            shutil.rmtree(d)
        r = median(frate)
        report("convert", "%s -> JSON file, events/s (wall)" % m, "%.2f M/s" % r, ">= 5 M/s", r >= 5,
               spread(frate))
        r = median(nrate)
        report("convert", "%s -> JSON /dev/null, events/s (wall)" % m, "%.2f M/s" % r, ">= 5 M/s",
               r >= 5, "%s; per CPU second %.2f M/s" % (spread(nrate), median(ncpu)))
        rss[n] = median(fpeak + npeak)
        report("convert", "%s -> JSON, peak RSS" % m, "%.1f MB" % rss[n], "-", None)
    a, b = rss[LENGTHS[0]], rss[LENGTHS[-1]]
    report("convert", "peak RSS growth %dM -> %dM events" % (LENGTHS[0] // 1000000, LENGTHS[-1] // 1000000),
           "%+.1f MB" % (b - a), "flat (< 2 MB)", b - a < 2)


if __name__ == "__main__":
    main()
