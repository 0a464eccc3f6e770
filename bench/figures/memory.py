# SPDX-License-Identifier: MIT
"""Memory bound: four threads record long-named ranges far
faster than the writer can write, with CUPTRACE_BUFFER_MB=16. Peak RSS of
the traced process against the same program untraced; drops must be
reported by `cuptrace info`."""
import shutil

from benchlib import (RUNS, ctr_files, info, median, plain_env, prog, report, run,
                      spread, tmpdir, traced_env)

BUFFER_MB = 16
SLACK_MB = 8  # "a few MB": writer buffers, zstd context, the library itself
THREADS, SECONDS = "4", "3"
RUNS_HERE = min(RUNS, 3)


def main():
    extra, traced, plain, drops, bad = [], [], [], [], 0
    for _ in range(RUNS_HERE):
        _, ru = run([prog("bench_flood"), THREADS, SECONDS], plain_env())
        plain.append(ru.peak_rss_mb)
        d = tmpdir("mem")
        try:
            vals, ru = run([prog("bench_flood"), THREADS, SECONDS], traced_env(d, BUFFER_MB))
            inf = info(ctr_files(d)[0])
            drops.append(inf["dropped"] / vals["events"] * 100)
            bad += inf["status"] != "clean"
        finally:
            shutil.rmtree(d)
        traced.append(ru.peak_rss_mb)
        extra.append(traced[-1] - plain[-1])
    x = median(extra)
    report("memory", "peak RSS untraced / traced", "%.1f / %.1f MB" % (median(plain), median(traced)),
           "-", None)
    report("memory", "traced - untraced peak RSS, BUFFER_MB=16", "%.1f MB" % x,
           "<= %d+%d MB" % (BUFFER_MB, SLACK_MB), x <= BUFFER_MB + SLACK_MB, spread(extra),
           "untraced %.1f MB" % median(plain))
    d = median(drops)
    report("memory", "events dropped and reported by info", "%.1f %%" % d, "> 0", d > 0,
           "traces not clean: %d" % bad)


if __name__ == "__main__":
    main()
