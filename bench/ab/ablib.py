# SPDX-License-Identifier: MIT
"""Shared by the comparisons of bench/ab/ab.py: the two builds named on the
command line, runs of A and B interleaved, one timed command (wall, CPU,
peak RSS, a digest of the file it wrote), the traces compared on, and the
lines that print medians, B/A and the single runs."""
import hashlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "figures"))
from benchlib import ctr_files, info, prog, run, tmpdir, traced_env  # noqa: E402,F401

TOOL = str(ROOT / "build" / "bin" / "cuptrace")


def tool(arg):
    """The `cuptrace` binary named by arg: the binary itself, or a built tree's."""
    p = Path(arg)
    return str(p / "build" / "bin" / "cuptrace") if p.is_dir() else str(p)


def tree(arg):
    """A built tree (its library, extension and bench programs are used)."""
    p = Path(arg).resolve()
    if not (p / "build" / "lib" / "libcuptrace.so").exists():
        sys.exit("ab: %s is not a built tree (no build/lib/libcuptrace.so)" % arg)
    return p


def interleave(runs, sides, once):
    """{name: [once(x) for each run]} for sides [(name, x), ...], run A, B,
    A, B, ...: a shared machine's speed drifts within minutes, and both sides
    then see the same drift."""
    got = {name: [] for name, _ in sides}
    for _ in range(runs):
        for name, x in sides:
            got[name].append(once(x))
    return got


class Timed:
    """One run of a command: wall and CPU seconds, peak RSS, output digest."""

    def __init__(self, wall, usage, digest):
        self.wall, self.digest = wall, digest
        self.user, self.sys, self.cpu = usage.user_s, usage.sys_s, usage.cpu_s
        self.rss = usage.peak_rss_mb


def timed(cmd, out=None, pin=False):
    """Runs cmd under peak_rss (wait4 of the program itself, not of a Python
    fork), its stdout discarded, on CPU 0 alone with pin. A file named by out
    is digested, then removed: the next run would otherwise begin by
    truncating hundreds of MB of page cache, which is not the command's work."""
    if pin:
        cmd = ["taskset", "-c", "0"] + cmd
    t0 = time.perf_counter()
    _, usage = run(cmd, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    digest = None
    if out and out != "-":
        h = hashlib.md5()
        with open(out, "rb") as f:
            for b in iter(lambda: f.read(1 << 22), b""):
                h.update(b)
        os.unlink(out)
        digest = h.hexdigest()
    return Timed(wall, usage, digest)


def med(xs):
    return statistics.median(xs)


def runs_of(xs, fmt="%.3f"):
    return " ".join(fmt % x for x in xs)


def line(what, a, b, unit="", fmt="%.2f"):
    """One figure measured on both sides: medians, B/A, the single runs."""
    ma, mb = med(a), med(b)
    print(("%-40s A " + fmt + "%s  B " + fmt + "%s  B/A %.3f  (runs A %s; B %s)") %
          (what, ma, unit, mb, unit, mb / ma if ma else float("nan"), runs_of(a, fmt),
           runs_of(b, fmt)), flush=True)


def report_timed(label, events, got):
    """The block of one command compared: got is {"A": [Timed], "B": [Timed]}."""
    print("%s: %.2fM events, runs of each: %d" % (label, events / 1e6, len(got["A"])))
    for name in ("A", "B"):
        rs = got[name]
        wall, cpu = med([r.wall for r in rs]), med([r.cpu for r in rs])
        print("  %s wall %.3f s (%.2f M/s)  CPU %.3f s (%.2f M/s; user %.3f, sys %.3f)  "
              "peak RSS %.1f MB" % (name, wall, events / wall / 1e6, cpu, events / cpu / 1e6,
                                    med([r.user for r in rs]), med([r.sys for r in rs]),
                                    med([r.rss for r in rs])))
    ratio = lambda key: med([getattr(r, key) for r in got["B"]]) / med(
        [getattr(r, key) for r in got["A"]])
    print("  B/A wall %.3f  CPU %.3f  peak RSS %.3f" % (ratio("wall"), ratio("cpu"), ratio("rss")))
    sums = {name: {r.digest for r in got[name]} for name in ("A", "B")}
    if None not in sums["A"] | sums["B"]:
        same = "the same bytes" if sums["A"] == sums["B"] and len(sums["A"]) == 1 else "DIFFERENT"
        print("  outputs: A %d distinct, B %d distinct; A and B: %s" %
              (len(sums["A"]), len(sums["B"]), same))
    for key in ("wall", "cpu"):
        print("  runs, %-4s A %s; B %s" % (key, runs_of([getattr(r, key) for r in got["A"]]),
                                          runs_of([getattr(r, key) for r in got["B"]])),
              flush=True)


def compare(label, args, tools, argv, events, out=None, pin=False):
    """`cuptrace argv` (OUT in it replaced by out) by tool A and tool B."""
    argv = [out if a == "OUT" else a for a in argv]
    got = interleave(args.runs, (("A", tools[0]), ("B", tools[1])),
                     lambda t: timed([t] + argv, out, pin))
    report_timed(label, events, got)


def events_of(files):
    return sum(info(f)["events"] for f in files)


def nvtx_traces(d, events, buffer_mb, ranks=1):
    """bench_size (a training loop of NVTX ranges) traced by this tree's
    library into d, once per rank: the .ctr files."""
    os.makedirs(d, exist_ok=True)
    for r in range(ranks):
        env = traced_env(d, buffer_mb)
        if ranks > 1:
            env.update(OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE=str(ranks))
        run([prog("bench_size"), str(events)], env)
    return ctr_files(d)


def gpu_trace(path, records, root=ROOT):
    """cupti_bench's GPU stream (kernels, copies, calls, launch flows) of a
    tree into path: its JSON line of figures."""
    exe = Path(root) / "build" / "bench" / "cupti_bench"
    if not exe.exists():
        sys.exit("ab: %s missing (make build/bench/cupti_bench, needs libcupti)" % exe)
    out = subprocess.run([str(exe), str(path), str(records), "1"], check=True,
                         capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
