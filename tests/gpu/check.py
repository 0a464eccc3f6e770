#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GPU smoke test (`make test-gpu`): runs build/tests/gpu/gpu_smoke traced on
a real GPU and checks the trace against what the program says it did.

Where there is no GPU (or no CUDA driver, or the program was not built for
want of nvcc) it prints one line starting with "skipped:" and exits 0. On a
GPU machine every check prints PASS or FAIL; the exit status is 1 when any
failed. The checks, in order of what they prove:
  - the file is clean and nothing was dropped;
  - the GPU is described in deviceProperties as CUDA describes it;
  - every kernel, copy and memset the program issued is there, once, with
    the launch configuration and byte counts it used (names demangled);
  - each has its flow arrow from the API call that issued it, and the call
    starts before the GPU work does (the clocks agree);
  - work on one stream never overlaps (the GPU runs a stream in order);
  - each step's GPU work lies inside that step's NVTX range (the program
    synchronises before closing it): GPU and CPU times share one clock;
  - the GPU memory counter reaches what the program allocated.
The generic checks (flows, causality, stream order, track names) are also run
on the simulator's traces by tests/integration/library/test_cupti.py, so the checker
itself is tested where there is no GPU.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "build" / "lib" / "libcuptrace.so"
TOOL = ROOT / "build" / "bin" / "cuptrace"
PROG = ROOT / "build" / "tests" / "gpu" / "gpu_smoke"

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
API_CATS = ("cuda_runtime", "cuda_driver")
TOL_US = 1.0  # clock tolerance between the CPU and GPU sides, microseconds


def xs(doc, *cats):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in cats]


def generic_checks(doc):
    """(name, ok, detail) for properties every correct GPU trace has."""
    out = []
    ev = doc["traceEvents"]
    gpu = xs(doc, *GPU_CATS)
    out.append(("GPU events present", bool(gpu), f"{len(gpu)} events"))
    starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = defaultdict(list)
    for e in ev:
        if e.get("ph") == "f" and e.get("cat") == "ac2g":
            ends[(e["pid"], e["tid"], e["ts"])].append(e)
    apis = {(e["pid"], e["tid"], e["ts"]): e for e in xs(doc, *API_CATS)}
    missing, late, bad = 0, 0, 0
    for g in gpu:
        f = ends.get((g["pid"], g["tid"], g["ts"]), [])
        if len(f) != 1 or f[0].get("bp") != "e" or f[0]["id"] not in starts:
            missing += 1
            continue
        s = starts[f[0]["id"]]
        call = apis.get((s["pid"], s["tid"], s["ts"]))
        if not call or call["args"]["correlation"] != g["args"]["correlation"]:
            bad += 1
        elif call["ts"] > g["ts"] + TOL_US:
            late += 1
    out.append(("every GPU event has one flow from its call", missing == 0 and bad == 0,
                f"{missing} without, {bad} to the wrong call"))
    out.append(("each call starts before its GPU work", late == 0,
                f"{late} GPU events start before their call"))
    overlap = 0
    tracks = defaultdict(list)
    for g in gpu:
        tracks[(g["pid"], g["tid"])].append(g)
    for v in tracks.values():
        v.sort(key=lambda e: e["ts"])
        for a, b in zip(v, v[1:]):
            if a["ts"] + a["dur"] > b["ts"] + 0.1:
                overlap += 1
    out.append(("work on one stream never overlaps", overlap == 0, f"{overlap} overlaps"))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    unnamed = [k for k in tracks if not re.fullmatch(r"stream \d+", names.get(k, ""))]
    out.append(("every GPU track is a named stream", not unnamed, f"{len(unnamed)} unnamed"))
    out.append(("no event on tid 0", all(e.get("tid") != 0 for e in ev if "tid" in e), ""))
    return out


def smoke_checks(doc, truth, info):
    out = []
    out.append(("trace file clean", "status:      clean" in info, ""))
    drops = re.search(r"^dropped:\s+(\d+)", info, re.M)
    out.append(("nothing dropped", drops and drops.group(1) == "0", drops and drops.group(1)))
    props = doc.get("deviceProperties", [])
    dev = [p for p in props if p["name"] == truth["device"]]
    out.append(("deviceProperties describes the GPU",
                bool(dev) and dev[0]["numSms"] == truth["sms"],
                json.dumps(props)[:200]))
    kernels = xs(doc, "kernel")
    got = Counter(e["name"] for e in kernels)
    out.append(("every kernel once, names demangled", dict(got) == truth["kernels"],
                f"got {dict(got)}, want {truth['kernels']}"))
    cfg = all(e["args"]["grid"] == [truth["grid"], 1, 1] and
              e["args"]["block"] == [truth["block"], 1, 1] for e in kernels)
    out.append(("launch configurations", cfg, ""))
    copies = Counter((e["args"]["kind"], e["args"]["bytes"]) for e in xs(doc, "gpu_memcpy"))
    want = {("HtoD", truth["copy_bytes"]): truth["htod"], ("DtoH", truth["copy_bytes"]): truth["dtoh"]}
    out.append(("every copy, kind and bytes", dict(copies) == want, f"got {dict(copies)}"))
    sets = xs(doc, "gpu_memset")
    out.append(("every memset", len(sets) == truth["memsets"] and
                all(e["args"]["bytes"] == truth["copy_bytes"] for e in sets), f"{len(sets)}"))
    launches = [e for e in xs(doc, "cuda_runtime") if e["name"].startswith("cudaLaunchKernel")]
    out.append(("a cudaLaunchKernel call per kernel", len(launches) == len(kernels),
                f"{len(launches)} calls, {len(kernels)} kernels"))
    syncs = Counter(e["name"] for e in xs(doc, "cuda_sync"))
    out.append(("stream syncs recorded", syncs.get("Stream Sync", 0) >= truth["steps"], str(syncs)))
    out += generic_checks(doc)
    steps = sorted((e for e in xs(doc, "user_annotation") if e["name"] == "step"),
                   key=lambda e: e["ts"])
    out.append(("NVTX step ranges", len(steps) == truth["steps"], f"{len(steps)}"))
    compute = [e for e in xs(doc, *GPU_CATS) if e["cat"] != "gpu_memcpy" or e["args"]["kind"] == "DtoH"]
    outside = 0
    for g in compute:
        inside = [s for s in steps if s["ts"] - TOL_US <= g["ts"] and
                  g["ts"] + g["dur"] <= s["ts"] + s["dur"] + TOL_US]
        outside += len(inside) != 1
    out.append(("each step's GPU work inside its NVTX range (one clock)", outside == 0,
                f"{outside} of {len(compute)} outside"))
    mem = [e["args"]["bytes"] for e in doc["traceEvents"]
           if e.get("ph") == "C" and e.get("name") == "GPU memory used"]
    out.append(("GPU memory counter reaches the allocations",
                bool(mem) and max(mem) >= truth["allocated"], f"max {max(mem) if mem else None}"))
    return out


def main():
    if not PROG.exists():
        print("skipped: the GPU smoke test was not built (no nvcc at $CUDA_HOME/bin/nvcc)")
        return 0
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("CUPTRACE_") or k in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
                del env[k]
        env.update(LD_PRELOAD=str(LIB), CUPTRACE_OUTPUT=f"{d}/out/%p.ctr",
                   CUPTRACE_TRACE="cuda,memory,nvtx")
        p = subprocess.run([str(PROG), str(d / "truth.json")], env=env, capture_output=True,
                           text=True, timeout=300)
        if p.returncode == 77:
            print("skipped: no GPU (the CUDA runtime found no usable device)")
            return 0
        if p.returncode != 0 or "gpu_smoke: done" not in p.stdout:
            print(f"FAIL: the program exited {p.returncode} under the tracer\n{p.stdout}{p.stderr}")
            return 1
        files = sorted((d / "out").glob("*.ctr"))
        if len(files) != 1:
            print(f"FAIL: expected one trace file, found {len(files)}; stderr:\n{p.stderr}")
            return 1
        info = subprocess.run([str(TOOL), "info", str(files[0])], capture_output=True, text=True).stdout
        c = subprocess.run([str(TOOL), "convert", "-o", str(d / "t.json"), str(files[0])],
                           capture_output=True, text=True)
        if c.returncode != 0:
            print(f"FAIL: convert exited {c.returncode}: {c.stderr}")
            return 1
        doc = json.loads((d / "t.json").read_text())
        truth = json.loads((d / "truth.json").read_text())
        results = smoke_checks(doc, truth, info)
    failed = 0
    for name, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'}: {name}{'' if ok or not detail else ' (' + str(detail) + ')'}")
        failed += not ok
    print(f"gpu smoke test: {len(results) - failed} passed, {failed} failed on {truth['device']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
