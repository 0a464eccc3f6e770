# SPDX-License-Identifier: MIT
"""Writes the table of current figures (bench/RESULTS.md) from what the
drivers recorded: one JSON line per figure or skipped benchmark in the file
BENCH_RECORD names (bench/run.sh sets it), and the load average before and
after the run.

  python3 bench/figures/results.py RECORD > RESULTS.md

The machine, the commit and the date are those of the moment it runs: right
after the drivers, on the same machine."""
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HEAD = """# Benchmark results

The current figures, one row per figure, written by `make bench` from what its drivers printed
(how: [README.md](README.md), "The results table"); to change them, run it again rather than
edit. The median is that of the runs of the figure (the single runs are in the notes), the
baseline was measured in the same run, and the verdict compares the median with the target
(INFO: a figure without a target). Past measurements: [JOURNAL.md](JOURNAL.md).
"""

COLUMNS = ("run", "command", "figure", "median", "baseline, same run", "target", "verdict",
           "notes")


def out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except FileNotFoundError:
        return ""


def machine():
    """CPU model, cores, memory, kernel and GPUs of this machine."""
    model = next((line.split(":", 1)[1].strip() for line in out(["lscpu"]).splitlines()
                  if line.startswith("Model name:")), "unknown CPU")
    with open("/proc/meminfo") as f:
        mem_gb = int(f.readline().split()[1]) / 1024 / 1024
    gpus = [line.split(" (")[0] for line in out(["nvidia-smi", "-L"]).splitlines()
            if line.startswith("GPU ")]
    uname = os.uname()
    return "%s, %d cores, %.0f GB, %s %s, %s" % (model, os.cpu_count() or 1, mem_gb,
                                                 uname.sysname, uname.release,
                                                 "; ".join(gpus) if gpus else "no GPU")


def commit():
    rev = out(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    changed = out(["git", "status", "--porcelain", "--untracked-files=no"])
    return "`%s`%s" % (rev, " with local changes" if changed else "")


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ") if text != "" else "-"


def table(run, rows):
    lines = ["| %s |" % " | ".join(COLUMNS), "|" + "---|" * len(COLUMNS)]
    for r in rows:
        if "skipped" in r:
            vals = (run, "`%s`" % r["command"], r["skipped"], "", "", "", "skipped", "")
        else:
            vals = (run, "`%s`" % r["command"], r["figure"], r["median"], r["baseline"],
                    r["target"], r["verdict"], r["note"])
        lines.append("| %s |" % " | ".join(cell(v) for v in vals))
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows, run = [], {}
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if "command" in r:
                rows.append(r)
            else:
                run.update(r)
    when = "%s at %s, BENCH_RUNS=%s" % (datetime.date.today().isoformat(), commit(),
                                         run.get("runs", "5"))
    load = "load average %s before, %s after" % (run.get("load_before", "?"),
                                                 run.get("load_after", "?"))
    print(HEAD)
    print("Runs:\n\n- **R1**: %s; %s; %s.\n" % (when, machine(), load))
    print(table("R1", rows))


if __name__ == "__main__":
    main()
