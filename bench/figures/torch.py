# SPDX-License-Identifier: MIT
"""The torch source's calls: what a PyTorch operator costs the thread that
runs it (build/bench/bench_torch, from bench/progs/bench_torch.c: the
library preloaded with CUPTRACE_TRACE=torch and CUPTRACE_TORCH=shapes,memory,
the calls found with dlsym as the Python package's observer finds them,
each case 20,000 calls, the best of 15 runs), with each record clock.
Target: an operator as the observer records it (cuptrace_torch_enter, two
cuptrace_torch_now, cuptrace_torch_op, cuptrace_torch_exit) at most
150 ns, half of 0.3 us; the single calls are information. Without CUPTI
(as here) enter and exit cost one test; with it they add CUPTI's push
and pop of the operator's id. Every op must reach the file: nothing
dropped."""
import platform
import re
import shutil
import subprocess
import sys

from benchlib import LIB, ctr_files, info, plain_env, prog, report, skip, tmpdir

LIMIT_NS = 150.0
COMPOSITE = ("an op: ", "an op with shapes: ")


def main():
    exe = prog("bench_torch")
    clocks = ["tsc", "monotonic"] if platform.machine() == "x86_64" else ["monotonic"]
    for clock in clocks:
        d = tmpdir("torch")
        env = dict(plain_env(), LD_PRELOAD=LIB, CUPTRACE_TRACE="torch",
                   CUPTRACE_TORCH="shapes,memory", CUPTRACE_CLOCK=clock,
                   CUPTRACE_OUTPUT="%s/%%p.ctr" % d)
        try:
            try:
                p = subprocess.run([exe], capture_output=True, text=True, env=env)
            except FileNotFoundError:
                skip("torch", "%s not built (make build/bench/bench_torch)" % exe)
                return
            if p.returncode:
                sys.exit("bench torch: %s failed:\n%s" % (exe, p.stderr))
            [f] = ctr_files(d)
            got = info(f)
        finally:
            shutil.rmtree(d)
        rows = re.findall(r"^  (\S.*?)\s+(\d+\.\d)$", p.stdout, re.M)
        ops = int(re.search(r"^ops=(\d+)", p.stdout, re.M).group(1))
        scale = {name: float(ns) for name, ns in rows if name.startswith("(")}
        base = "empty call %.1f ns, clock_gettime %.1f ns" % (
            scale["(empty call, for scale)"], scale["(clock_gettime, for scale)"])
        for name, ns in rows:
            if name.startswith("("):
                continue
            v = float(ns)
            if name.startswith(COMPOSITE):
                report("torch", "%s (%s)" % (name, clock), "%.1f ns" % v, "<= 150 ns",
                       v <= LIMIT_NS, "best of 15 runs", base)
            else:
                report("torch", "%s (%s)" % (name, clock), "%.1f ns" % v, "-", None,
                       "best of 15 runs", base)
        report("torch", "events dropped (%s)" % clock, "%d" % got["dropped"], "0",
               got["dropped"] == 0 and got["status"] == "clean",
               "%d events in the file, %d ops made" % (got["events"], ops))


if __name__ == "__main__":
    main()
