#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GPU (CUPTI) figures for `make bench`:

  translation  CUPTI records from completed buffers into ring records, thread
               CPU time per record on the CUPTI thread (>= 25 M records/s)
  into file    the same plus the writer's encoding and compression
  size         .ctr bytes per event of a training-like GPU stream (<= 4 B)
  convert      cuptrace convert of that trace, GPU events and flows (>= 5 M/s),
               on all cores (workers share the file), with one worker, and
               pinned to one CPU (taskset: the whole cost on one core)

The trace comes from build/bench/cupti_bench (see its header for the
workload). BENCH_RUNS=N sets the runs per figure (default 5); the median is
shown with the single runs. One line per figure: name, value, target, verdict.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import RUNS, report, skip

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "build" / "bench" / "cupti_bench"
TOOL = ROOT / "build" / "bin" / "cuptrace"
RECORDS = int(os.environ.get("CUPTI_BENCH_RECORDS", "2000000"))


def line(name, value, target="-", ok=None, note=""):
    report("cupti", name, value, target, ok, note)


def runs_of(vals, fmt):
    return "runs " + " ".join(fmt.format(v) for v in vals)


def bench(path, group=1):
    out = subprocess.run([str(BENCH), str(path), str(RECORDS), str(group)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def events_of(path):
    info = subprocess.run([str(TOOL), "info", str(path)], capture_output=True, text=True).stdout
    ev = int(re.search(r"^events:\s+(\d+)", info, re.M).group(1))
    drops = int(re.search(r"^dropped:\s+(\d+)", info, re.M).group(1))
    clean = "status:      clean" in info
    return ev, drops, clean


def timed(cmd):
    """wall s, user+sys s of cmd (from /usr/bin/time)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + cmd, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"{cmd}: {p.stderr}")
    wall, user, sys_, rss = p.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(sys_), int(rss)


def main():
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        res = []
        for i in range(RUNS):
            res.append(bench(d / f"r{i}.ctr"))
        tr = [r["translate_records_per_s"] / 1e6 for r in res]
        ns = [r["translate_ns_per_record"] for r in res]
        wr = [r["writer_ns_per_record"] for r in res]
        med = statistics.median(tr)
        line("translation, records per CPU second of the CUPTI thread",
             f"{med:.1f} M/s", ">= 25 M/s", med >= 25, runs_of(tr, "{:.1f}"))
        line("translation, ns per record", f"{statistics.median(ns):.1f} ns")
        line("writer (encode + zstd + write), ns per record", f"{statistics.median(wr):.1f} ns")
        total = [1e3 / (a + b) for a, b in zip(ns, wr)]
        line("into the file, records per CPU second (both threads)",
             f"{statistics.median(total):.2f} M/s", note=runs_of(total, "{:.2f}"))
        sizes = []
        for i, r in enumerate(res):
            ev, drops, clean = events_of(d / f"r{i}.ctr")
            if drops or not clean:
                raise SystemExit(f"bench trace {i}: {drops} dropped, clean={clean}")
            sizes.append(r["bytes"] / ev)
        msize = statistics.median(sizes)
        line("size, .ctr bytes per event (GPU + API + NVTX steps)",
             f"{msize:.2f} B", "<= 4 B", msize <= 4, runs_of(sizes, "{:.2f}"))
        ung = bench(d / "ungrouped.ctr", group=0)
        ev, _, _ = events_of(d / "ungrouped.ctr")
        line("size if GPU records were not grouped by stream", f"{ung['bytes'] / ev:.2f} B")
        f = d / "r0.ctr"
        ev, _, _ = events_of(f)
        # The three ways are interleaved run by run: the VM's speed drifts
        # within minutes, and they are compared with each other.
        rates, cpu_rates, rss, one, null_rates, null_cpu, pinned = [], [], [], [], [], [], []
        out_b = flows = objects = 0
        for i in range(RUNS):
            for jobs in ([], ["-j", "1"], "pin"):
                if (d / "t.json").exists():
                    (d / "t.json").unlink()  # truncating 700 MB of page cache is not conversion
                pin = ["taskset", "-c", "0"] if jobs == "pin" else []
                jobs = [] if jobs == "pin" else jobs
                wall, cpu, kb = timed(pin + [str(TOOL), "convert", *jobs, "-o", str(d / "t.json"),
                                             str(f)])
                if pin:  # one CPU: formatting and the kernel's writing share it
                    pinned.append(ev / wall / 1e6)
                    continue
                if jobs:  # one worker (before files were shared among workers)
                    one.append(ev / wall / 1e6)
                    continue
                rates.append(ev / wall / 1e6)
                cpu_rates.append(ev / cpu / 1e6)
                rss.append(kb)
                if i == 0:
                    out_b = (d / "t.json").stat().st_size
                    text = (d / "t.json").read_bytes()
                    flows = sum(1 for _ in re.finditer(rb'"ph":"f"', text))
                    objects = text.count(b'\n{"ph":')
                    del text
            wall, cpu, _ = timed(["sh", "-c", f"'{TOOL}' convert -o - '{f}' > /dev/null"])
            null_rates.append(ev / wall / 1e6)
            null_cpu.append(ev / cpu / 1e6)
        (d / "t.json").unlink()
        m = statistics.median(rates)
        line(f"convert {ev / 1e6:.1f}M GPU events -> JSON file, events/s",
             f"{m:.2f} M/s", ">= 5 M/s", m >= 5, runs_of(rates, "{:.2f}"))
        line("convert, events per CPU second", f"{statistics.median(cpu_rates):.2f} M/s")
        line("convert -j 1 (one worker), events/s", f"{statistics.median(one):.2f} M/s",
             note=runs_of(one, "{:.2f}"))
        pm = statistics.median(pinned)
        line("convert -> JSON file pinned to one CPU, events/s", f"{pm:.2f} M/s", ">= 5 M/s",
             pm >= 5, runs_of(pinned, "{:.2f}"))
        line("convert, JSON objects written per second (flows are 2)",
             f"{statistics.median(rates) * objects / ev:.2f} M/s", note=f"{objects / ev:.2f} per event")
        nm = statistics.median(null_rates)
        line("convert -> /dev/null (formatting alone), events/s", f"{nm:.2f} M/s", ">= 5 M/s",
             nm >= 5, runs_of(null_rates, "{:.2f}"))
        line("convert -> /dev/null, events per CPU second", f"{statistics.median(null_cpu):.2f} M/s")
        line("convert, JSON bytes per event; peak RSS", f"{out_b / ev:.0f} B; {max(rss) / 1024:.1f} MB")
        line("convert, flow arrows written", f"{flows}")


if __name__ == "__main__":
    if not BENCH.exists():
        skip("cupti", "build/bench/cupti_bench not built (no libcupti)")
        sys.exit(0)
    main()
