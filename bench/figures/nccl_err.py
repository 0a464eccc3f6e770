# SPDX-License-Identifier: MIT
"""What the NCCL error wrappers (libtrace/sources/nccl_err.c) add to an
NCCL call (build/bench/bench_nccl_err, from bench/progs/bench_nccl_err.c:
linked against the tests' fake libnccl.so.2, ns of thread CPU time per
call, the best of 200 batches of 1000 calls a run). Runs alternate
untraced (the program straight into the fake), traced with the library
preloaded (file mode) and traced in flight mode (CUPTRACE_FLIGHT=60); the
figure is the median traced run minus the median untraced one, for
ncclGroupEnd, ncclAllReduce and ncclCommGetAsyncError. Target: at most
5 ns more a call (a real collective's call costs microseconds)."""
import os
import shutil
import subprocess
import sys

from benchlib import LIB, RUNS, median, plain_env, prog, report, skip, spread, tmpdir

LIMIT_NS = 5.0


def once(exe, env):
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode:
        sys.exit("bench nccl_err: %s failed:\n%s" % (exe, p.stderr))
    return {k: float(v) for k, _, v in (l.partition("=") for l in p.stdout.split()) if v}


def main():
    exe = prog("bench_nccl_err")
    if not os.path.exists(exe):
        skip("nccl_err", "%s not built (make bench-nccl-err)" % exe)
        return
    d = tmpdir("nccl_err")
    base = dict(plain_env(), NCCL_FAKE_FAIL_AFTER=str(1 << 30))
    traced = dict(base, LD_PRELOAD=LIB, CUPTRACE_OUTPUT="%s/%%p.ctr" % d, CUPTRACE_LOG="warn")
    flight = dict(traced, CUPTRACE_FLIGHT="60")
    runs = {"untraced": [], "file": [], "flight": []}
    try:
        for _ in range(RUNS):
            for mode, env in (("untraced", base), ("file", traced), ("flight", flight)):
                runs[mode].append(once(exe, env))
    finally:
        shutil.rmtree(d)
    for key, what in (("groupend_ns", "ncclGroupEnd"), ("allreduce_ns", "ncclAllReduce"),
                      ("async_ns", "ncclCommGetAsyncError")):
        a = median([r[key] for r in runs["untraced"]])
        for mode in ("file", "flight"):
            vals = [r[key] for r in runs[mode]]
            extra = median(vals) - a
            report("nccl_err", "%s, %s mode: added" % (what, mode), "%.2f ns" % extra,
                   "<= 5 ns", extra <= LIMIT_NS, "traced %s; untraced %s" %
                   (spread(vals), spread([r[key] for r in runs["untraced"]])),
                   "untraced %.2f ns a call" % a)


if __name__ == "__main__":
    main()
