#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two builds of cuptrace: A (OLD) and B (NEW) run one after the other
(A, B, A, B, ...) because a shared machine's speed drifts within minutes;
printed are the medians, B/A and the single runs.

  python3 bench/ab/ab.py COMPARISON OLD [NEW] [--runs N] [options]

OLD and NEW are built trees (`make all test-progs bench-progs`, with
`build/bench/cupti_bench` and `make pyext` where a comparison needs them)
or, for the comparisons of the tool, `cuptrace` binaries. NEW defaults to
this tree. `python3 bench/ab/ab.py COMPARISON -h` lists a comparison's
options and its default number of runs.

Comparisons of the tool, on traces this tree's library and programs make;
each gives wall and CPU time (user + sys), peak RSS and whether A and B
wrote the same bytes:
  convert   2M-event NVTX (bench_size) and GPU (cupti_bench) traces into a
            JSON file and into /dev/null
  gpu-file  the 2M-event GPU trace into a JSON file (--pin: on CPU 0 alone)
  ranks     16 NVTX traces of 1M events, `convert -j 2` into one JSON file
            (-j N, --stdout: into /dev/null)
  stats     a command (--cmd, default `stats`) over the traces of --dir, on
            CPU 0 alone
  reports   `stats --report` cuda_api_sum and nccl_skew over 4 NCCL harness
            ranks at N and 2N iterations (--iters, default BENCH_NCCL_ITERS
            or 12000; --jobs J: stats -j J), after checking that A and B
            print the same bytes at N in every --format
  nccl      `stats --report` nccl_sum, nccl_skew, cuda_api_sum and
            `convert -j 1` into JSON over the NCCL harness ranks at N and
            2N (--iters, default BENCH_NCCL_ITERS or 4000)

Comparisons of the library, each tree's own:
  writer    CPU of the thread cuptrace-write per event: NVTX pairs paced at
            1M and 4M events/s (bench_rate), 2M GPU records (cupti_bench,
            with its bytes per record), and bytes per event of a 10M-event
            NVTX trace (bench_size, one run each)
  clock     this tree's bench_nvtx untraced, under A's library, and under
            B's with CUPTRACE_CLOCK=tsc and =monotonic: added CPU per push
            or pop, writer CPU per event and their sum against one
            clock_gettime of the same process, process CPU per event over
            the untraced run, per-thread CPU with 2 threads over 1
  python    cuptrace.torch.annotate_modules on the 101-module MLP
            (bench/figures/python_child.py, traced, each tree's extension
            and library; BENCH_PY_WIDTH=2 narrows the layers, BENCH_PYTHON
            picks the interpreter, default /usr/bin/python3)
"""
import argparse
import os
import shutil
import json
import statistics
import subprocess
import sys
from pathlib import Path

from ablib import (ROOT, TOOL, compare, ctr_files, events_of, gpu_trace, info, interleave,
                   line, load, med, nvtx_traces, prog, run, tmpdir, traced_env, tool, tree)
from reports import HARNESS, make_trace  # bench/figures/, on the path through ablib

EVENTS = 2000000  # of the NVTX and GPU traces of convert and gpu-file


def tools(args):
    return tool(args.old), tool(args.new or TOOL)


def trees(args):
    return tree(args.old), tree(args.new or ROOT)


def ab_convert(args):
    d = tmpdir("ab")
    try:
        traces = {"NVTX": nvtx_traces(os.path.join(d, "nvtx"), EVENTS, 2048)[0],
                  "GPU": os.path.join(d, "gpu.ctr")}
        gpu_trace(traces["GPU"], EVENTS)
        for name, ctr in traces.items():
            events = events_of([ctr])
            for out, where in ((os.path.join(d, "out.json"), "file"), ("-", "/dev/null")):
                compare("convert %s -> %s" % (name, where), args, tools(args),
                        ["convert", "-o", "OUT", ctr], events, out, args.pin)
    finally:
        shutil.rmtree(d)


def ab_gpu_file(args):
    d = tmpdir("ab")
    try:
        ctr = os.path.join(d, "gpu.ctr")
        gpu_trace(ctr, EVENTS)
        compare("convert GPU -> file%s" % (", pinned to CPU 0" if args.pin else ""), args,
                tools(args), ["convert", "-o", "OUT", ctr], events_of([ctr]),
                os.path.join(d, "out.json"), args.pin)
    finally:
        shutil.rmtree(d)


def ab_ranks(args):
    d = tmpdir("ab")
    try:
        files = nvtx_traces(os.path.join(d, "t"), 1000000, 512, ranks=16)
        out = "-" if args.stdout else os.path.join(d, "job.json")
        compare("convert -j %d, 16 files -> %s" % (args.j, "/dev/null" if args.stdout else "file"),
                args, tools(args), ["convert", "-j", str(args.j), "-o", "OUT"] + files,
                events_of(files), out)
    finally:
        shutil.rmtree(d)


def ab_stats(args):
    files = sorted(str(f) for f in Path(args.dir).glob("*.ctr"))
    if not files:
        sys.exit("ab: no .ctr file in %s" % args.dir)
    compare("%s, %d files, pinned to CPU 0" % (args.cmd, len(files)), args, tools(args),
            args.cmd.split() + files, events_of(files), pin=True)


def nccl_traces(args, default):
    """The 4 NCCL harness ranks of bench/figures/reports.py at N and 2N."""
    if not os.path.exists(HARNESS):
        sys.exit("ab: %s missing (make test-progs builds it)" % HARNESS)
    iters = args.iters or int(os.environ.get("BENCH_NCCL_ITERS", default))
    return {"N": make_trace(iters), "2N": make_trace(2 * iters)}


def ab_reports(args):
    a, b = tools(args)
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    sizes = nccl_traces(args, "12000")
    try:
        for fmt in ("table", "csv", "json"):
            for rep in ("cuda_api_sum", "nccl_skew"):
                outs = [subprocess.run([t, "stats", "--format", fmt, "--report", rep] + jobs +
                                       sizes["N"][1], capture_output=True).stdout for t in (a, b)]
                print("output at N, %s --format %s: %s" %
                      (rep, fmt, "the same" if outs[0] == outs[1] else "DIFFERENT"), flush=True)
        for rep in ("cuda_api_sum", "nccl_skew"):
            for size, (_, files, events) in sizes.items():
                compare("stats --report %s %s at %s" % (rep, " ".join(jobs) or "(default -j)", size),
                        args, (a, b), ["stats", "--report", rep, "--format", "csv"] + jobs + files,
                        events)
    finally:
        for d, _, _ in sizes.values():
            shutil.rmtree(d)


def ab_nccl(args):
    commands = (["stats", "--report", "nccl_sum", "--format", "csv"],
                ["stats", "--report", "nccl_skew", "--format", "csv"],
                ["stats", "--report", "cuda_api_sum", "--format", "csv"],
                ["convert", "-j", "1", "-o", "OUT"])
    sizes = nccl_traces(args, "4000")
    try:
        for argv in commands:
            for size, (d, files, events) in sizes.items():
                out = os.path.join(d, "ab.json") if "OUT" in argv else None
                compare("%s at %s" % (" ".join(argv[:3]), size), args, tools(args), argv + files,
                        events, out)
    finally:
        for d, _, _ in sizes.values():
            shutil.rmtree(d)


def lib_env(root, d, buffer_mb, **extra):
    env = traced_env(d, buffer_mb, **extra)
    env["LD_PRELOAD"] = str(root / "build" / "lib" / "libcuptrace.so")
    return env


def ab_writer(args):
    old, new = trees(args)
    sides = (("A", old), ("B", new))
    drops = {old: 0, new: 0}
    print("A = %s, B = %s, %d interleaved runs; load average %s" % (old, new, args.runs, load()))

    def rate_once(root, rate):
        d = tmpdir("ab")
        try:
            vals, _ = run([str(root / "build/bench/bench_rate"), str(rate), "2"],
                          lib_env(root, d, 64))
            drops[root] += info(ctr_files(d)[0])["dropped"]
        finally:
            shutil.rmtree(d)
        return vals["writer_ns_per_event"]

    def gpu_once(root):
        d = tmpdir("ab")
        try:
            j = json.loads(gpu_trace(os.path.join(d, "g.ctr"), EVENTS, root))
        finally:
            shutil.rmtree(d)
        return j["writer_ns_per_record"], j["bytes"] / j["records"]

    def size_once(root):
        d = tmpdir("ab")
        try:
            run([str(root / "build/bench/bench_size"), "10000000"], lib_env(root, d, 2048))
            ctr = ctr_files(d)[0]
            return os.path.getsize(ctr) / info(ctr)["events"]
        finally:
            shutil.rmtree(d)

    for rate in (1000000, 4000000):
        got = interleave(args.runs, sides, lambda r: rate_once(r, rate))
        line("NVTX writer CPU per event at %dM/s" % (rate // 1000000), got["A"], got["B"], " ns")
    got = interleave(args.runs, sides, gpu_once)
    line("GPU writer CPU per record", [x[0] for x in got["A"]], [x[0] for x in got["B"]], " ns")
    line("GPU .ctr bytes per record", [x[1] for x in got["A"]], [x[1] for x in got["B"]], " B")
    got = interleave(1, sides, size_once)
    line("NVTX 10M trace, bytes per event", got["A"], got["B"], " B")
    print("events dropped in the bench_rate runs: A %d, B %d" % (drops[old], drops[new]))
    print("load average after: %s" % load())


def ab_clock(args):
    old, new = trees(args)
    pairs, rounds = 1000000, 5
    cmd = lambda threads: [prog("bench_nvtx"), str(threads), str(pairs), str(rounds)]
    variants = (("A", old, None), ("B tsc", new, "tsc"), ("B monotonic", new, "monotonic"))

    def traced(threads, root, clock):
        """bench_nvtx's figures, its usage and the events dropped."""
        d = tmpdir("ab")
        try:
            env = lib_env(root, d, 1024)
            if clock:  # A's library runs on its default clock
                env["CUPTRACE_CLOCK"] = clock
            vals, usage = run(cmd(threads), env)
            i = info(ctr_files(d)[0])
            if i["status"] != "clean":
                sys.exit("ab: a trace did not read back clean")
            return vals, usage, i["dropped"]
        finally:
            shutil.rmtree(d)

    keys = (("added", "added CPU per push or pop / clock"),
            ("w", "writer CPU per event / clock"),
            ("whole", "whole cost per event / clock"),
            ("proc", "process user+sys per event over untraced, ns"),
            ("cpu21", "per-thread CPU, 2 threads / 1"))
    fig = {v[0]: {k: [] for k, _ in keys} for v in variants}
    clocks, drops = [], 0
    events = 2 * pairs * (rounds + 1)  # the warm-up round included
    for _ in range(args.runs):
        u1, uu1 = run(cmd(1))
        for name, root, clock in variants:
            t1, tu1, d1 = traced(1, root, clock)
            t2, _, d2 = traced(2, root, clock)
            drops += d1 + d2
            c = t1["clock_ns"]
            clocks.append(c)
            added = (t1["pair_cpu_ns"] - u1["pair_cpu_ns"]) / 2
            w = t1.get("writer_ns_ev", float("nan"))
            g = fig[name]
            g["added"].append(added / c)
            g["w"].append(w / c)
            g["whole"].append((added + w) / c)
            g["proc"].append((tu1.cpu_s - uu1.cpu_s) * 1e9 / events)
            g["cpu21"].append(t2["pair_cpu_ns"] / t1["pair_cpu_ns"])
    print("clock_gettime: %.1f ns (median of %d processes; runs %s)" %
          (med(clocks), len(clocks), " ".join("%.1f" % x for x in clocks)))
    for name, _, _ in variants:
        for k, what in keys:
            v = fig[name][k]
            print("%-12s %-46s %6.2f  (runs %s)" % (name, what, med(v),
                                                      " ".join("%.2f" % x for x in v)))
    print("events dropped, all traced runs: %d" % drops)


def ab_python(args):
    old, new = trees(args)
    py = os.environ.get("BENCH_PYTHON", "/usr/bin/python3")
    child = ROOT / "bench" / "figures" / "python_child.py"

    def once(root):
        """key -> list of floats of one `python_child.py modules traced`."""
        d = tmpdir("ab")
        env = lib_env(root, d, 512, PYTHONPATH=str(root / "python_shim"))
        try:
            p = subprocess.run([py, str(child), "modules", "traced"], env=env,
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit("ab: %s failed:\n%s" % (root, p.stderr))
            return {k: [float(x) for x in v.split(",")]
                    for k, v in (kv.split("=") for kv in p.stdout.split())}
        finally:
            shutil.rmtree(d)

    got = interleave(args.runs, (("A", old), ("B", new)), once)
    for name, root in (("A", old), ("B", new)):
        res = got[name]
        steps = [x["step_us"][0] for x in res]
        step = med(steps)
        print("%s %s" % (name, root))
        print("  plain step: median %.0f us (processes %s)" %
              (step, " ".join("%.0f" % x for x in steps)))
        for key, what in (("step_fwd_ranges_pct", "annotate_modules(backward=False) adds %"),
                          ("step_fwd_bwd_ranges_pct", "annotate_modules() adds %")):
            pooled = [v for x in res for v in x[key]]
            q = statistics.quantiles(pooled, n=4)
            print("  %s: %.2f (quartiles %.2f %.2f) over %d rounds; process medians %s; "
                  "%.2f us per module call" %
                  (what, med(pooled), q[0], q[2], len(pooled),
                   " ".join("%.2f" % med(x[key]) for x in res), med(pooled) / 100 * step / 101))


COMPARISONS = {
    # name: (function, default runs, help)
    "convert": (ab_convert, 9, "NVTX and GPU traces into a JSON file and into /dev/null"),
    "gpu-file": (ab_gpu_file, 9, "the GPU trace into a JSON file"),
    "ranks": (ab_ranks, 7, "16 NVTX files, convert -j N into one JSON file"),
    "stats": (ab_stats, 5, "a command over the traces of a directory, on CPU 0"),
    "reports": (ab_reports, 5, "stats --report cuda_api_sum, nccl_skew on NCCL ranks"),
    "nccl": (ab_nccl, 5, "stats and convert on NCCL ranks at N and 2N"),
    "writer": (ab_writer, 5, "the writer thread's CPU per event, each tree's library"),
    "clock": (ab_clock, 5, "the record clock: hot path and writer, each tree's library"),
    "python": (ab_python, 5, "annotate_modules' cost per step, each tree's extension"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="comparison", required=True, metavar="COMPARISON")
    for name, (_, runs, what) in COMPARISONS.items():
        p = sub.add_parser(name, help=what, description=what)
        p.add_argument("old", metavar="OLD", help="built tree or cuptrace binary of A")
        p.add_argument("new", metavar="NEW", nargs="?", help="the same of B (default: this tree)")
        p.add_argument("--runs", type=int, default=runs, help="runs of each side (default %d)" % runs)
        if name in ("convert", "gpu-file"):
            p.add_argument("--pin", action="store_true", help="run on CPU 0 alone (taskset)")
        if name == "ranks":
            p.add_argument("-j", type=int, default=2, help="convert -j (default 2)")
            p.add_argument("--stdout", action="store_true", help="into /dev/null, not a file")
        if name == "stats":
            p.add_argument("--dir", required=True, help="directory of the .ctr files")
            p.add_argument("--cmd", default="stats", help="the command (default 'stats')")
        if name in ("reports", "nccl"):
            p.add_argument("--iters", type=int, help="N, iterations per rank")
        if name == "reports":
            p.add_argument("--jobs", type=int, help="stats -j J (default: stats' own)")
    args = ap.parse_args()
    COMPARISONS[args.comparison][0](args)


if __name__ == "__main__":
    main()
