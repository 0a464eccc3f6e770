# SPDX-License-Identifier: MIT
"""MPI calls traced (-t mpi): what the wrappers and the recording add to a
call (build/bench/{openmpi,mpich}/bench_mpi, from bench/progs/mpi/bench_mpi.c:
one process, calls timed in batches of 1000, the best of 200 batches per
run). Runs alternate untraced (the program alone) and traced
(libcuptrace.so and libcuptrace-mpi.so preloaded, CUPTRACE_TRACE=mpi, the
writer draining); the figure is the median traced run minus the median
untraced one. Target: at most 100 ns more a call, for MPI_Test on a
request that never completes (a polling loop) and a zero-byte MPI_Send to
the process itself."""
import os
import shutil
import subprocess
import sys

from benchlib import LIB, RUNS, median, plain_env, prog, report, skip, spread, tmpdir

LIMIT_NS = 100.0
MPI_LIB = os.path.join(os.path.dirname(LIB), "libcuptrace-mpi.so")


def once(exe, env):
    p = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode:
        sys.exit("bench mpi: %s failed:\n%s" % (exe, p.stderr))
    return {k: float(v) for k, _, v in (l.partition("=") for l in p.stdout.split()) if v}


def main():
    for impl in ("openmpi", "mpich"):
        exe = prog(os.path.join(impl, "bench_mpi"))
        if not os.path.exists(exe):
            skip("mpi", "%s not built (%s's mpicc missing?)" % (exe, impl))
            continue
        d = tmpdir("mpi")
        base = dict(plain_env(), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        traced = dict(base, LD_PRELOAD="%s:%s" % (LIB, MPI_LIB), CUPTRACE_TRACE="mpi",
                      CUPTRACE_OUTPUT="%s/%%p.ctr" % d)
        plain, rec = [], []
        try:
            for _ in range(RUNS):
                plain.append(once(exe, base))
                rec.append(once(exe, traced))
        finally:
            shutil.rmtree(d)
        for key, what in (("test_ns", "MPI_Test (not complete)"),
                          ("send_ns", "MPI_Send 0 bytes to self")):
            a = median([r[key] for r in plain])
            b = median([r[key] for r in rec])
            extra = b - a
            report("mpi", "%s, %s: added" % (what, impl), "%.1f ns" % extra, "<= 100 ns",
                   extra <= LIMIT_NS, "traced %s; untraced %s" %
                   (spread([r[key] for r in rec]), spread([r[key] for r in plain])),
                   "untraced %.1f ns a call" % a)


if __name__ == "__main__":
    main()
