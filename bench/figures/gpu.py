# SPDX-License-Identifier: MIT
"""Benchmark on a real GPU (skipped where there is none): what tracing adds
to a CUDA program, traced by `cuptrace run` with its defaults (CUPTI
activity records for kernels, copies, memsets, syncs and the runtime and
driver API calls; NVTX), against the same program untraced, interleaved, median
of RUNS:
  - build/bench/gpu_launch: ns per empty-kernel launch and per 4 KiB async
    copy (the worst case for a tracer: every launch an API record, a
    kernel record and a flow); the trace's events, drops, bytes per event,
    and `cuptrace convert` into JSON on it (events per CPU second).
A PyTorch training step, against torch.profiler: bench/figures/gpu_torch.py.
No target is set on a real GPU: the figures are INFO."""
import os
import shutil
import subprocess

from benchlib import (RUNS, TOOL, ctr_files, info, median, plain_env, prog, report, run, skip,
                      spread, tmpdir)


def go(cmd, traced, d):
    """cmd's key=value output, run untraced or under `cuptrace run`."""
    if traced:
        cmd = [TOOL, "run", "-o", os.path.join(d, "%p.ctr"), "--"] + cmd
    return run(cmd, plain_env())[0]


def launches(d):
    exe = prog("gpu_launch")
    if not os.path.exists(exe):
        skip("gpu", "build/bench/gpu_launch not built (no nvcc)")
        return False
    p = subprocess.run([exe, "1000"], env=plain_env(), capture_output=True, text=True)
    if p.returncode != 0:
        skip("gpu", "no usable GPU (%s)" % " ".join(p.stderr.strip().splitlines()[-1:]))
        return False
    n = 200000
    res = {False: [], True: []}
    for _ in range(RUNS):
        for traced in (False, True):
            shutil.rmtree(os.path.join(d, "t"), ignore_errors=True)
            res[traced].append(go([exe, str(n)], traced, os.path.join(d, "t")))
    for key, what in (("launch_ns", "empty kernel launch"), ("copy_ns", "4 KiB async copy H2D")):
        plain = median([v[key] for v in res[False]])
        traced = median([v[key] for v in res[True]])
        report("gpu", "%s, ns: traced / untraced" % what, "%.0f / %.0f (+%.0f ns)" %
               (traced, plain, traced - plain), "(information)", None,
               "traced %s; untraced %s" % (spread([v[key] for v in res[True]]),
                                           spread([v[key] for v in res[False]])),
               "untraced %.0f ns" % plain)
    (ctr,) = ctr_files(os.path.join(d, "t"))
    i = info(ctr)
    size = os.path.getsize(ctr)
    report("gpu", "trace of %d launches + %d copies" % (n, n // 4), "%d events, %d dropped" %
           (i["events"], i["dropped"]), "(information)", None,
           "%.2f bytes per event, status %s" % (size / max(i["events"], 1), i["status"]))
    cpu = []
    for _ in range(RUNS):
        t0 = os.times()
        subprocess.run([TOOL, "convert", "-j", "1", "-o", os.path.join(d, "t.json"), ctr],
                       check=True, capture_output=True)
        t1 = os.times()
        cpu.append(t1.children_user + t1.children_system - t0.children_user - t0.children_system)
    report("gpu", "convert this trace -> JSON, -j 1", "%.2f M events per CPU s" %
           (i["events"] / median(cpu) / 1e6), "(information)", None, spread(cpu))
    return True


def main():
    d = tmpdir("gpu")
    try:
        launches(d)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
