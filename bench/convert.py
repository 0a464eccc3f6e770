"""Benchmark 3, the converter: `cuptrace convert` of a training-loop trace
into Chrome JSON, events per second and peak RSS, for a short and a long
trace (memory must not grow with the length)."""
import os
import shutil

from benchlib import (RUNS, TOOL, ctr_files, info, median, prog, report, run,
                      spread, tmpdir, traced_env)

LENGTHS = (2000000, 10000000)
BUFFER_MB = 2048


def main():
    rss = {}
    for n in LENGTHS:
        d = tmpdir("conv")
        try:
            run([prog("bench_size"), str(n)], traced_env(d, BUFFER_MB))
            ctr = ctr_files(d)[0]
            events = info(ctr)["events"]
            js = os.path.join(d, "trace.json")
            rate, cpu_rate, peak = [], [], []
            for _ in range(RUNS):
                t0 = os.times().elapsed
                _, ru = run([TOOL, "convert", "-o", js, ctr])
                wall = os.times().elapsed - t0
                os.unlink(js)
                rate.append(events / wall / 1e6)
                cpu_rate.append(events / ru.cpu_s / 1e6)
                peak.append(ru.peak_rss_mb)
        finally:
            shutil.rmtree(d)
        r = median(rate)
        report("convert", "%dM events -> JSON, events/s (wall)" % (n // 1000000), "%.2f M/s" % r,
               ">= 5 M/s", r >= 5, spread(rate))
        report("convert", "%dM events -> JSON, events per CPU second" % (n // 1000000),
               "%.2f M/s" % median(cpu_rate), "-", None)
        rss[n] = median(peak)
        report("convert", "%dM events -> JSON, peak RSS" % (n // 1000000), "%.1f MB" % rss[n], "-",
               None)
    a, b = rss[LENGTHS[0]], rss[LENGTHS[-1]]
    report("convert", "peak RSS growth %dM -> %dM events" % (LENGTHS[0] // 1000000, LENGTHS[-1] // 1000000),
           "%+.1f MB" % (b - a), "flat (< 2 MB)", b - a < 2)


if __name__ == "__main__":
    main()
