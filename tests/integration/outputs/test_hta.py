# SPDX-License-Identifier: MIT
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
from collections import Counter, defaultdict

import pytest

from conftest import (ASAN_FORK, BUILD, convert, ctr_files, merge_intervals, tool, traced_env,
                      venv_python)

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
    NCCL slices that named their kernel's correlation id so would make HTA
    see each NCCL kernel several times."""
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


def test_gpu_user_annotations_span_the_work_launched_inside(job):
    """Each NVTX range projects onto each stream it launched work on: from
    the first start to the last end of that work (Kineto's
    gpu_user_annotation, nsys's NVTX GPU projection)."""
    for doc in job[3]:
        ann = xs(doc, "gpu_user_annotation")
        kern = xs(doc, "kernel")
        by = Counter((e["name"], e["tid"]) for e in ann)
        streams = {e["tid"] for e in kern}
        assert {t for (n, t) in by if n == "step"} == streams
        assert all(by[("step", t)] == ITERS for t in streams)
        fwd = sorted((e for e in ann if e["name"] == "forward"), key=lambda e: e["ts"])
        assert len(fwd) == ITERS and len({e["tid"] for e in fwd}) == 1
        for e in fwd:  # gemm (30 us) then softmax (8 us), launched inside "forward"
            assert e["dur"] >= 38.0 - 0.002  # a loaded host may launch softmax late
            inside = [k for k in kern if k["tid"] == e["tid"] and e["ts"] <= k["ts"]
                      and k["ts"] + k["dur"] <= e["ts"] + e["dur"] + 0.001]
            assert sorted(k["name"].split("(")[0] for k in inside) == ["gemm", "softmax"]
            # from the first start to the last end of that work, exactly
            assert abs(min(k["ts"] for k in inside) - e["ts"]) < 0.002
            assert abs(max(k["ts"] + k["dur"] for k in inside) - (e["ts"] + e["dur"])) < 0.002


HTA_SCRIPT = """
import json, os, sys, warnings
warnings.filterwarnings("ignore")
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
from hta.trace_analysis import TraceAnalysis
split, world, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ta = TraceAnalysis(trace_dir=split, include_last_profiler_step=True)
sym = ta.t.symbol_table.get_sym_id_map()
res = {"kernels": [int((ta.t.get_trace(r)["cat"] == sym["kernel"]).sum()) for r in range(world)],
       "steps": ta.get_profiler_steps()}
ranks = list(range(world))
res["temporal_breakdown"] = ta.get_temporal_breakdown(visualize=False).to_dict("records")
res["comm_comp_overlap"] = ta.get_comm_comp_overlap(visualize=False).to_dict("records")
kt, kd = ta.get_gpu_kernel_breakdown(visualize=False)
res["kernel_types"] = kt.to_dict("records")
res["kernel_rows"] = len(kd)
ta.get_frequent_cuda_kernel_sequences(operator_name="cudaLaunchKernel", output_dir=out)
res["launch_stats_ranks"] = sorted(ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False))
res["idle_rows"] = len(ta.get_idle_time_breakdown(ranks=ranks, visualize=False)[0])
res["queue_rows"] = len(ta.get_queue_length_summary(ranks=ranks))
ann = ta.get_gpu_user_annotation_breakdown(visualize=False)
res["annotations"] = sorted(ann["name"]) if ann is not None else None
cp, ok = ta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=1)
res["critical_path"] = ok
res["critical_path_edges"] = cp.critical_path_edges_set and len(cp.critical_path_edges_set)
ta.get_memory_bw_summary()
print(json.dumps(res, default=str))
"""


def test_hta_analyses(job):
    """Every HTA analysis that applies runs on the split-rank files, and HTA
    sees each rank's kernels once each (HTA runs in build/venv, where
    tests/install-deps.sh installs it)."""
    venv = venv_python("hta")
    d, files, split, docs = job
    p = subprocess.run([str(venv), "-c", HTA_SCRIPT, str(split), str(WORLD), str(d / "seq")],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(res, indent=1))
    assert res["kernels"] == [len(xs(doc, "kernel")) for doc in docs] == [ITERS * 11] * WORLD
    assert [int(s) for s in res["steps"]] == list(range(ITERS))
    assert len(res["temporal_breakdown"]) == WORLD and len(res["comm_comp_overlap"]) == WORLD
    assert {r["kernel_type"] for r in res["kernel_types"]} >= {"COMMUNICATION", "COMPUTATION"}
    assert res["launch_stats_ranks"] == list(range(WORLD))
    assert res["idle_rows"] > 0 and res["queue_rows"] > 0
    assert res["annotations"] and {"forward", "step"} <= set(res["annotations"])
    assert res["critical_path"] is True
    # HTA's communication/computation overlap is breakdown's Overlap (%):
    # both from the NCCL and compute kernels (docs/ANALYSIS.md)
    p = tool("stats", "--report", "breakdown", "--format", "json", *map(str, files))
    assert p.returncode == 0, p.stderr
    [rows] = [v for k, v in json.loads(p.stdout).items() if k.startswith("breakdown: GPU time")]
    ours = {r["Rank"]: r["Overlap (%)"] for r in rows if r["Step"] is None}
    hta = {r["rank"]: r["comp_comm_overlap_pctg"] for r in res["comm_comp_overlap"]}
    assert sorted(ours) == sorted(hta) == list(range(WORLD))
    assert all(abs(ours[r] - hta[r]) <= 0.06 for r in ours), (ours, hta)


def length(merged):
    return sum(b - a for a, b in merged)


def intersection(x, y):
    i = j = total = 0
    while i < len(x) and j < len(y):
        total += max(0, min(x[i][1], y[j][1]) - max(x[i][0], y[j][0]))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def test_breakdown_is_the_union_of_kernels(job):
    """breakdown's Communication is the union of the NCCL kernels when CUPTI
    recorded them, Compute that of the others, Overlap their intersection
    over Communication: computed here from `cuptrace events`, exactly. The
    plugin's GPU time of an operation whose kernel is known does not count:
    its slices come when the NCCL join hands its plans out, after the sweep
    has passed their start, so part of them would count and part not,
    depending on when the join lets them go (6.50 ms on a rank whose
    kernels give 5.82 ms and kernels plus slices 8.45 ms)."""
    d, files, split, docs = job
    p = tool("events", *map(str, files))
    assert p.returncode == 0, p.stderr
    kernels = defaultdict(lambda: ([], []))
    rank = {}
    for line in p.stdout.splitlines()[1:]:
        r = line.split("\t")
        if r[1] == "process" and r[8].startswith("rank "):
            rank[int(r[0])] = int(r[8].split()[1])
        elif r[1] == "slice" and r[2] == "kernel":
            kernels[int(r[0])][r[8].startswith("nccl")].append((int(r[6]), int(r[7])))
    p = tool("stats", "--report", "breakdown", "--format", "json", *map(str, files))
    assert p.returncode == 0, p.stderr
    [table] = [v for k, v in json.loads(p.stdout).items() if k.startswith("breakdown: GPU time")]
    rows = {r["Rank"]: r for r in table if r["Step"] is None}
    assert sorted(rows) == list(range(WORLD))
    for f, (comp, comm) in kernels.items():
        comp, comm = merge_intervals(comp), merge_intervals(comm)
        row = rows[rank[f]]
        assert row["Communication (ns)"] == length(comm) > 0, f
        assert row["Compute (ns)"] == length(comp) > 0, f
        assert row["Overlap (%)"] == round(100 * intersection(comm, comp) / length(comm), 1)
        assert row["Exposed Comm (ns)"] == length(comm) - intersection(comm, comp)


FORK_SCRIPT = """
import json, logging, sys
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
df = a.t.get_trace(0)
b = a.get_temporal_breakdown(visualize=False)
print(json.dumps({"ranks": sorted(a.t.traces), "gpu_rows": int(df["stream"].ne(-1).sum()),
                  "breakdown_ranks": [int(r) for r in b["rank"]]}))
"""


@ASAN_FORK
def test_a_forked_worker_is_in_its_ranks_file(tmp_path):
    """A process forked from a rank (a DataLoader worker) and the rank are
    both in rank0.json (the SQLite split: one database), each under its own
    pid. HTA keeps one file per rank: given a rank file of the worker's own
    beside the rank's, it would take the worker's, without kernels, then
    fail."""
    out = tmp_path / "o"
    env = traced_env(out, CUPTRACE_TRACE="cuda,memory,nvtx", CUPTI_SIM_TRUTH=tmp_path / "sim.jsonl")
    p = subprocess.run([str(BUILD / "tests" / "cupti_sim" / "sim_train"), "fork"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    files = ctr_files(out)
    assert len(files) == 2
    p = tool("convert", "--split-ranks", tmp_path / "split", out)
    assert p.returncode == 0 and "wrote one file per rank" in p.stderr, p.stderr
    assert os.listdir(tmp_path / "split") == ["rank0.json"]
    doc = json.loads((tmp_path / "split" / "rank0.json").read_text())
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] > 64}
    pids = sorted(int(f.stem.rsplit("-", 1)[-1]) for f in files)
    assert sorted(names) == pids, names
    assert len(xs(doc, "kernel")) == 8 and {e["pid"] for e in xs(doc, "kernel")} == {0}
    assert [(e["pid"], e["name"]) for e in xs(doc, "user_annotation")] == [(pids[1], "child")]
    assert [f["os_pid"] for f in doc["cuptrace"]["files"]] == pids
    p = tool("export", "--split-ranks", tmp_path / "sq", out)
    assert p.returncode == 0 and os.listdir(tmp_path / "sq") == ["rank0.sqlite"], p.stderr
    import sqlite3
    db = sqlite3.connect(tmp_path / "sq" / "rank0.sqlite")
    assert sorted(r[0] for r in db.execute("SELECT pid FROM CUPTRACE_RANKS")) == pids
    venv = venv_python("hta")
    p = subprocess.run([str(venv), "-c", FORK_SCRIPT, str(tmp_path / "split")],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    # the rank's 8 kernels and its stream sync (HTA files syncs with a stream)
    assert res == {"ranks": [0], "gpu_rows": 9, "breakdown_ranks": [0]}, res
