"""Benchmark on a real GPU (skipped where there is none): what tracing adds
to a CUDA program, traced by `cuptrace run` with its defaults (CUPTI
activity for kernels, copies, memsets, syncs; runtime and driver API
callbacks; NVTX), against the same program untraced, interleaved, median
of RUNS:
  - build/bench/gpu_launch: ns per empty-kernel launch and per 4 KiB async
    copy (the worst case for a tracer: every launch an API record, a
    kernel record and a flow); the trace's events, drops, bytes per event,
    and `cuptrace convert` into JSON on it (events per CPU second).
A PyTorch training step, against torch.profiler: bench/gpu_torch.py.
No targets of DESIGN.md are about a real GPU: the figures are INFO."""
import os
import shutil
import subprocess
import sys

from benchlib import RUNS, TOOL, ctr_files, info, median, prog, report, spread, tmpdir

def keyvals(out):
    vals = {}
    for line in out.split():
        k, _, v = line.partition("=")
        if v:
            vals[k] = float(v)
    return vals


def go(cmd, traced, d):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUPTRACE_")}
    if traced:
        cmd = [TOOL, "run", "-o", os.path.join(d, "%p.ctr"), "--"] + cmd
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return p.returncode, keyvals(p.stdout), p.stderr


def launches(d):
    exe = prog("gpu_launch")
    if not os.path.exists(exe):
        print("gpu      skipped: build/bench/gpu_launch not built (no nvcc)")
        return False
    rc, _, err = go([exe, "1000"], False, d)
    if rc != 0:
        print("gpu      skipped: no usable GPU (%s)" % err.strip().splitlines()[-1:])
        return False
    n = 200000
    res = {False: [], True: []}
    for _ in range(RUNS):
        for traced in (False, True):
            shutil.rmtree(os.path.join(d, "t"), ignore_errors=True)
            rc, v, err = go([exe, str(n)], traced, os.path.join(d, "t"))
            if rc != 0:
                sys.exit("gpu_launch failed: " + err)
            res[traced].append(v)
    for key, what in (("launch_ns", "empty kernel launch"), ("copy_ns", "4 KiB async copy H2D")):
        plain = median([v[key] for v in res[False]])
        traced = median([v[key] for v in res[True]])
        report("gpu", "%s, ns: traced / untraced" % what, "%.0f / %.0f (+%.0f ns)" %
               (traced, plain, traced - plain), "(information)", None,
               "traced %s; untraced %s" % (spread([v[key] for v in res[True]]),
                                           spread([v[key] for v in res[False]])))
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
