"""What Holistic Trace Analysis (HTA) reads: a 4-rank job of the NCCL
harness launching its kernels on the CUPTI simulator (nccl_harness_sim:
CUPTI kernels, syncs and calls, NCCL operations from the profiler plugin,
NVTX "step" ranges marking steps), converted with --split-ranks. The
Kineto conventions HTA relies on are checked on the JSON itself, then
every HTA analysis that applies is run on it (skipped with the reason
when the holistictraceanalysis package is not installed)."""
import json
import os
import subprocess
from collections import Counter

import pytest

from conftest import BUILD, convert, ctr_files, tool, traced_env

HARNESS_SIM = BUILD / "tests" / "cupti_sim" / "nccl_harness_sim"
WORLD = 4
ITERS = 5


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("hta")
    out = d / "out"
    procs = []
    for r in range(WORLD):
        env = dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                   CUPTRACE_TRACE="cuda,nvtx,nccl", CUPTRACE_STEP_RANGE="step", RANK=str(r),
                   WORLD_SIZE=str(WORLD), CT_TEST_TRUTH=str(d / f"truth{r}.jsonl"))
        procs.append(subprocess.Popen([str(HARNESS_SIM), str(ITERS)], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for r, p in enumerate(procs):
        o, e = p.communicate(timeout=120)
        assert p.returncode == 0, e
        assert f"rank {r} done" in o
    files = ctr_files(out)
    assert len(files) == WORLD
    split = d / "split"
    p = tool("convert", "--split-ranks", split, out)
    assert p.returncode == 0, p.stderr
    docs = [json.loads((split / f"rank{r}.json").read_text()) for r in range(WORLD)]
    return d, files, split, docs


def xs(doc, cat=None):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and (cat is None or e["cat"] == cat)]


def test_only_cuda_calls_and_gpu_work_carry_correlation(job):
    """HTA joins each GPU kernel to every CPU event with args.correlation:
    NCCL slices that named their kernel's correlation id so made HTA see
    each NCCL kernel several times."""
    for doc in job[3]:
        cats = Counter(e["cat"] for e in xs(doc) if "correlation" in e.get("args", {}))
        assert set(cats) <= {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "cuda_runtime",
                             "cuda_driver"}, cats
        nccl = [e for e in xs(doc, "nccl") if "kernel" in e.get("args", {})]
        assert nccl
        corr = {e["args"]["correlation"] for e in xs(doc, "kernel")}
        assert all(e["args"]["kernel correlation"] in corr for e in nccl)
        # CPU-side events with a kernel's correlation id: its launch call only
        cpu = Counter(e["args"]["correlation"] for e in xs(doc) if e["cat"] in (
            "cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}))
        assert all(cpu[c] == 1 for c in corr)


def test_nccl_kernel_named_as_its_slice(job):
    for doc in job[3]:
        by_corr = {e["args"]["correlation"]: e["name"] for e in xs(doc, "kernel")}
        nccl = [e for e in xs(doc, "nccl") if "kernel" in e.get("args", {})]
        assert nccl
        for e in nccl:
            assert e["args"]["kernel"] == by_corr[e["args"]["kernel correlation"]]
            assert not e["args"]["kernel"].startswith("_Z")


def test_every_step_range_is_a_step(job):
    """N NVTX step ranges give N ProfilerStep# slices, each ending with its
    range (the last one was never closed)."""
    for doc in job[3]:
        steps = sorted((e for e in xs(doc, "user_annotation") if e["name"].startswith("ProfilerStep#")),
                       key=lambda e: e["ts"])
        ranges = sorted((e for e in xs(doc, "user_annotation") if e["name"] == "step"),
                        key=lambda e: e["ts"])
        assert len(ranges) == ITERS
        assert [e["name"] for e in steps] == [f"ProfilerStep#{i}" for i in range(ITERS)]
        for s, r in zip(steps, ranges):
            assert s["ts"] <= r["ts"] <= s["ts"] + 50
            assert abs((s["ts"] + s["dur"]) - (r["ts"] + r["dur"])) < 0.002
