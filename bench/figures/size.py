# SPDX-License-Identifier: MIT
"""Size on disk: 10 million NVTX events of a training loop
(bench_size.c) traced; bytes per event of the .ctr file, and the same
trace as Chrome JSON gzip'd at gzip's default level (-6)."""
import os
import shutil
import subprocess

from benchlib import (RUNS, TOOL, ctr_files, info, median, prog, report, run, spread, tmpdir,
                      traced_env)

EVENTS = 10000000
BUFFER_MB = 2048  # holds the whole run: nothing may be dropped
GZIP_RUNS = min(RUNS, 3)  # gzip of ~0.5 GB of JSON takes ~10 s


def gz_json_bytes(ctr, d):
    """Size of the trace as Chrome JSON, and of that JSON through gzip -6."""
    js = os.path.join(d, "trace.json")
    subprocess.run([TOOL, "convert", "-o", js, ctr], check=True, capture_output=True)
    with open(js, "rb") as f:
        gz = subprocess.run(["gzip", "-c"], stdin=f, stdout=subprocess.PIPE, check=True).stdout
    size = os.path.getsize(js)
    os.unlink(js)
    return size, len(gz)


def main():
    per_event, ratio, json_b, gz_b, drops, bad = [], [], [], [], 0, 0
    for i in range(RUNS):
        d = tmpdir("size")
        try:
            run([prog("bench_size"), str(EVENTS)], traced_env(d, BUFFER_MB))
            ctr = ctr_files(d)[0]
            inf = info(ctr)
            drops += inf["dropped"]
            bad += inf["status"] != "clean"
            size = os.path.getsize(ctr)
            per_event.append(size / inf["events"])
            if i < GZIP_RUNS:
                js, gz = gz_json_bytes(ctr, d)
                json_b.append(js / inf["events"])
                gz_b.append(gz / inf["events"])
                ratio.append(gz / size)
        finally:
            shutil.rmtree(d)
    b = median(per_event)
    report("size", ".ctr bytes per event (10M NVTX events)", "%.2f B" % b, "<= 4 B", b <= 4,
           spread(per_event))
    report("size", "Chrome JSON / gzip -6 bytes per event",
           "%.1f / %.2f B" % (median(json_b), median(gz_b)), "-", None)
    r = median(ratio)
    report("size", "gzip'd JSON size / .ctr size", "%.2fx" % r, ">= 4x", r >= 4, spread(ratio),
           "gzip'd JSON %.2f B per event" % median(gz_b))
    report("size", "events dropped / traces not clean", "%d / %d" % (drops, bad), "0 / 0",
           drops == 0 and bad == 0)


if __name__ == "__main__":
    main()
