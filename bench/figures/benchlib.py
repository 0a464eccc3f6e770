# SPDX-License-Identifier: MIT
"""Shared by the benchmark drivers: running programs (traced or not),
reading their key=value output and peak RSS, `cuptrace info`, medians,
and the one-line-per-figure report with target and PASS/MISS. Where
BENCH_RECORD names a file, each figure (and each benchmark skipped) is
also appended to it as a JSON line, from which bench/figures/results.py
makes bench/RESULTS.md."""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "build/lib/libcuptrace.so")
TOOL = os.path.join(ROOT, "build/bin/cuptrace")
BIN = os.path.join(ROOT, "build/bench")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
RECORD = os.environ.get("BENCH_RECORD")


def prog(name):
    return os.path.join(BIN, name)


def tmpdir(tag):
    return tempfile.mkdtemp(prefix="cuptrace-bench-%s-" % tag, dir=os.environ.get("BENCH_TMP"))


def traced_env(outdir, buffer_mb, **extra):
    env = dict(os.environ)
    env.update(LD_PRELOAD=LIB, CUPTRACE_OUTPUT=os.path.join(outdir, "%p.ctr"),
               CUPTRACE_BUFFER_MB=str(buffer_mb), CUPTRACE_LOG="warn")
    env.update(extra)
    return env


def plain_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("CUPTRACE_") and k not in ("LD_PRELOAD", "NVTX_INJECTION64_PATH")}


class Usage:
    """What peak_rss reports about a finished child."""

    def __init__(self, line):
        kib, user, sys_s = line.split()
        self.peak_rss_mb = int(kib) / 1024.0
        self.cpu_s = float(user) + float(sys_s)
        self.user_s, self.sys_s = float(user), float(sys_s)


def run(cmd, env=None, stdout=subprocess.PIPE):
    """Runs cmd under peak_rss. Returns (key=value dict of its stdout, Usage).
    stdout=subprocess.DEVNULL discards the output instead."""
    fd, path = tempfile.mkstemp(prefix="cuptrace-bench-rss-")
    os.close(fd)
    try:
        p = subprocess.run([prog("peak_rss"), path] + cmd, stdout=stdout, stderr=subprocess.PIPE,
                           env=env if env is not None else plain_env())
        if p.returncode:
            sys.exit("bench: %s failed with status %d\n%s" %
                     (" ".join(cmd), p.returncode, p.stderr.decode()))
        with open(path) as f:
            usage = Usage(f.read())
    finally:
        os.unlink(path)
    vals = {}
    for line in (p.stdout or b"").decode().splitlines():
        k, _, v = line.partition("=")
        try:
            vals[k] = float(v)
        except ValueError:
            vals[k] = v
    return vals, usage


def ctr_files(outdir):
    return sorted(os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".ctr"))


def info(path):
    """Events, drops and status of one trace, from `cuptrace info`."""
    out = subprocess.run([TOOL, "info", path], capture_output=True, text=True).stdout
    get = lambda key: re.search(r"^%s:\s+(\S+)" % key, out, re.M)
    return {"events": int(get("events").group(1)), "dropped": int(get("dropped").group(1)),
            "status": get("status").group(1).rstrip(":")}


def median(xs):
    return statistics.median(xs)


def spread(xs):
    return "runs %s" % " ".join("%.3g" % x for x in xs)


def command():
    """How the running driver was started, from the repository's root."""
    script = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    return " ".join(["python3", script] + sys.argv[1:])


def record(**fields):
    if RECORD:
        with open(RECORD, "a") as f:
            f.write(json.dumps(dict(command=command(), **fields)) + "\n")


def report(bench, what, value, target, ok, note="", base=""):
    """One figure: name, measured value (the median of the runs), target,
    PASS/MISS (or INFO); base is the baseline it is measured against in
    the same run (an untraced run, one clock_gettime, one file on one
    core), note the single runs or what else a reader needs."""
    verdict = "INFO" if ok is None else ("PASS" if ok else "MISS")
    line = "%-8s %-47s %-28s target %-15s %s" % (bench, what, value, target, verdict)
    if base:
        line += "  [baseline %s]" % base
    if note:
        line += "  (%s)" % note
    print(line, flush=True)
    record(bench=bench, figure=what, median=value, baseline=base, target=target,
           verdict=verdict, note=note)


def skip(bench, why):
    """A benchmark that cannot run here (no GPU, a program not built)."""
    print("%-8s skipped: %s" % (bench, why), flush=True)
    record(bench=bench, skipped=why)
