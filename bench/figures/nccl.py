# SPDX-License-Identifier: MIT
"""NCCL profiler callbacks: what each costs the thread NCCL calls it on
(build/bench/bench_nccl, from bench/progs/bench_nccl.c: the library loaded
as NCCL loads it, tracing on and its writer draining, each callback called
20,000 times with the descriptors NCCL 2.28 passes, the best of 25 runs).
Target: at most 100 ns a call; an empty call through a pointer and one
clock_gettime, measured in the same process, are the baseline."""
import re
import shutil
import subprocess
import sys

from benchlib import LIB, plain_env, prog, report, skip, tmpdir

LIMIT_NS = 100.0


def main():
    exe = prog("bench_nccl")
    d = tmpdir("nccl")
    env = dict(plain_env(), CUPTRACE_OUTPUT="%s/%%p.ctr" % d)
    try:
        p = subprocess.run([exe, LIB], capture_output=True, text=True, env=env)
    except FileNotFoundError:
        skip("nccl", "%s not built (make build/bench/bench_nccl)" % exe)
        return
    finally:
        shutil.rmtree(d)
    if p.returncode:
        sys.exit("bench nccl: %s failed:\n%s" % (exe, p.stderr))
    rows = re.findall(r"^  (\S.*?)\s+(\d+\.\d)", p.stdout, re.M)
    scale = {name: float(ns) for name, ns in rows if name.startswith("(")}
    base = "empty call %.1f ns, clock_gettime %.1f ns" % (scale["(empty call, for scale)"],
                                                         scale["(clock_gettime, for scale)"])
    for name, ns in rows:
        if not name.startswith("("):
            v = float(ns)
            report("nccl", name, "%.1f ns" % v, "<= 100 ns", v <= LIMIT_NS, "best of 25 runs", base)


if __name__ == "__main__":
    main()
