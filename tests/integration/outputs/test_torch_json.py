# SPDX-License-Identifier: MIT
"""PyTorch operators in the Kineto JSON, as torch.profiler writes them, and
read by the programs that read torch.profiler's traces: Holistic Trace
Analysis and TensorBoard's profiler plugin (torch-tb-profiler), both run
on our --split-ranks output (each skipped, saying why, when build/venv
lacks it).

Two traces: the one tests/unit/tool_test_torch.c writes with the real
encoder in the library's order (CUPTI buffers apart from the threads'
rings, operators as they end, a backward op and a scope ended on another
thread, an allocation, a name and dims no output may trust), so that
every value is known; and torch_ops_sim's (tests/progs/torch_ops.c, the
observer played through the library's exports, kernels launched inside
its ops on the CUPTI simulator: the only CUPTI these tests have), checked
against what the program says it did."""
import json
import subprocess

import pytest

from conftest import BUILD, TOOL, ctr_files, launcher_env, read_truth, run, tool, venv_python
from programs import SIM

WRITER = BUILD / "tests" / "unit" / "tool_test_torch"
HOSTILE = b'evil "q" \\ \x01\xff\xfe'.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    assert WRITER.exists(), f"{WRITER} is built by make test-unit"
    d = tmp_path_factory.mktemp("torch_json")
    ctr = d / "torch.ctr"
    subprocess.run([str(WRITER), str(ctr)], check=True)
    split = d / "split"
    p = tool("convert", "--split-ranks", split, ctr)
    assert p.returncode == 0, p.stderr
    raw = (split / "rank0.json").read_bytes()
    return d, split, json.loads(raw), raw


def by_name(doc, cat):
    return {e["name"]: e for e in doc["traceEvents"] if e.get("cat") == cat}


def test_operators_as_kineto_writes_them(trace):
    doc = trace[2]
    ops = by_name(doc, "cpu_op")
    assert set(ops) == {"aten::mm", "aten::add", "MmBackward0", "evaluate_function: MmBackward0",
                        HOSTILE}
    mm = ops["aten::mm"]
    assert mm["ph"] == "X" and mm["dur"] == 0.5
    assert mm["args"] == {"External id": 2, "Sequence number": 5, "Fwd thread id": 0,
                          "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"],
                          "Call stack": "train.py(12): forward;train.py(30): <module>"}
    # a non-tensor input has no sizes; no sequence number, none written
    assert ops["aten::add"]["args"] == {"External id": 3, "Input Dims": [[2], [], [3]],
                                       "Input type": ["float", "int", ""]}
    bw = ops["MmBackward0"]
    assert bw["tid"] == 200 and bw["args"]["Fwd thread id"] == 1
    assert bw["args"]["Sequence number"] == mm["args"]["Sequence number"]
    assert mm["tid"] == ops["aten::add"]["tid"] == 100
    # torch.profiler's forward-backward link: from the forward op to the
    # backward op of its sequence number that started first
    flows = {}
    for e in doc["traceEvents"]:
        if e.get("cat") == "fwdbwd":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    [f] = flows.values()
    outer = ops["evaluate_function: MmBackward0"]
    assert (f["s"]["tid"], f["s"]["ts"]) == (mm["tid"], mm["ts"])
    assert (f["f"]["tid"], f["f"]["ts"], f["f"]["bp"]) == (outer["tid"], outer["ts"], "e")
    scopes = by_name(doc, "user_annotation")
    assert scopes["my_scope"]["args"] == {"External id": 1}
    # begun on thread 100, ended on 200: drawn where it began
    assert scopes["handoff"]["tid"] == 100 and scopes["handoff"]["args"]["ended on thread"] == 200


def test_cuda_work_carries_its_operator(trace):
    """A call and its kernel carry the External id of the operator they
    were made in (CUPTI's external correlation): HTA's and TensorBoard's
    join from an operator to its kernels."""
    doc = trace[2]
    ext = {}
    for e in doc["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "kernel"):
            ext.setdefault(e["args"]["correlation"], set()).add(e["args"].get("External id"))
    assert ext == {10: {2}, 11: {3}, 12: {None}, 20: {5}}


def test_memory_events(trace):
    doc = trace[2]
    [m] = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    assert m["ph"] == "i" and m["s"] == "t" and m["tid"] == 100
    assert m["args"] == {"Device Type": 1, "Device Id": 0, "Addr": 0x7f00, "Bytes": 512,
                         "Total Allocated": 4608, "Total Reserved": 1 << 20, "External id": 2}
    [c] = [e for e in doc["traceEvents"] if e.get("name") == "torch allocated"]
    assert c["ph"] == "C" and c["pid"] == 0 and c["args"] == {"bytes": 4608}


def test_scopes_gpu_work(trace):
    doc = trace[2]
    g = by_name(doc, "gpu_user_annotation")
    assert set(g) == {"my_scope", "handoff"}
    assert g["my_scope"]["pid"] == 0 and g["my_scope"]["tid"] == 7


def test_hostile_text(trace):
    """Names, types and stacks are escaped (invalid UTF-8 as U+FFFD, as
    everywhere in the JSON); dims that are not all JSON numbers (here a
    size with a leading zero) are left out rather than written as such."""
    raw = trace[3]
    raw.decode("utf-8")  # strict: every byte valid
    json.loads(raw, strict=True)
    e = by_name(trace[2], "cpu_op")[HOSTILE]
    assert "Input Dims" not in e["args"]
    assert e["args"]["Input type"] == ['fl"oat', "\ufffd"]
    assert e["args"]["Call stack"] == "f\n\x7f\\"


@pytest.fixture(scope="module")
def observer(tmp_path_factory):
    """torch_ops_sim, 3 iterations in ProfilerStep#N scopes, everything
    the torch source records (shapes, memory, stack), converted with
    --split-ranks: (split directory, JSON, the program's truth)."""
    d = tmp_path_factory.mktemp("torch_observer")
    out = d / "o"
    p = run([TOOL, "run", "-t", "cuda,torch", "--torch", "shapes,memory,stack", "-o", f"{out}/",
             "--", SIM / "torch_ops_sim", "3", "steps"],
            env=launcher_env(CT_TEST_TRUTH=d / "t.jsonl", CUPTI_SIM_TRUTH=d / "sim.jsonl"))
    assert p.returncode == 0, p.stderr
    split = d / "split"
    p = tool("convert", "--split-ranks", split, *ctr_files(out))
    assert p.returncode == 0, p.stderr
    return split, json.loads((split / "rank0.json").read_text()), read_truth(d / "t.jsonl")


def dims_json(text):
    return [[int(x) for x in i.split(",")] if i else [] for i in text.split(";")]


def test_the_observer_program_as_torch_profiler_writes_it(observer):
    """Every op the program handed over is one cpu_op or user_annotation
    event, on the thread it began on, with its id, sequence number,
    forward thread, dims, types and stack; each launch and kernel carries
    the id of the op the program launched it from; each allocation is a
    [memory] event. (Kernels: CUPTI simulator only.)"""
    _, doc, truth = observer
    ev = doc["traceEvents"]
    got = {e["args"]["External id"]: e for e in ev
           if e.get("cat") in ("cpu_op", "user_annotation")}
    ops = [t for t in truth if t["k"] == "op"]
    assert len(got) == len(ops) > 30
    for t in ops:
        e = got[t["id"]]
        assert e["name"] == t["name"] and e["tid"] == (t["tid"] or t["rec_tid"])
        assert e["cat"] == ("user_annotation" if t["scope"] == 2 else "cpu_op")
        a = e["args"]
        assert a.get("Sequence number") == (t["seq"] - 1 if t["seq"] else None)
        assert a.get("Fwd thread id") == (t["fwd_tid"] if t["seq"] else None)
        assert a.get("Input Dims") == (dims_json(t["dims"]) if t["dims"] else None)
        assert a.get("Input type") == (t["types"].split(";") if t["types"] else None)
        assert a.get("Call stack") == (t["stack"] or None)
        if t["tid"] and t["tid"] != t["rec_tid"]:
            assert a["ended on thread"] == t["rec_tid"]
    launched = {t["corr"]: t["op"] for t in truth if t["k"] == "kernel"}
    assert len(launched) == 15
    for cat in ("kernel", "cuda_runtime"):
        carried = {e["args"]["correlation"]: e["args"].get("External id") for e in ev
                   if e.get("cat") == cat and e["args"]["correlation"] in launched}
        assert carried == launched, cat
    mems = [t for t in truth if t["k"] == "mem"]
    got = sorted((e["args"]["Addr"], e["args"]["Bytes"], e["args"]["Device Id"],
                  e["args"]["Total Allocated"], e["args"].get("External id", 0), e["tid"])
                 for e in ev if e.get("name") == "[memory]")
    assert got == sorted((t["ptr"], t["bytes"], t["device"], t["allocated"], t["op"],
                          t["rec_tid"]) for t in mems)
    assert len(got) > 10
    # each forward op with a sequence number linked to the backward op of
    # that number that began first, as torch.profiler links them
    x = {(e["tid"], e["ts"]): e["name"] for e in ev if e.get("cat") == "cpu_op"}
    flows = {}
    for e in ev:
        if e.get("cat") == "fwdbwd":
            flows.setdefault(e["id"], {})[e["ph"]] = x[(e["tid"], e["ts"])]
    assert sorted((f["s"], f["f"]) for f in flows.values()) == sorted(
        [("aten::addmm", "autograd::engine::evaluate_function: AddmmBackward0"),
         ("aten::relu", "autograd::engine::evaluate_function: ReluBackward0")] * 3)


HTA_SCRIPT = r"""
import json, sys
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
ops = ta.get_aten_op_kernels_and_delay(ranks=[0])[0]
ann = ta.get_gpu_user_annotation_breakdown(visualize=False)
t = ta.t.get_trace(0)
sym = ta.t.symbol_table.get_sym_table()
ext = {int(r.correlation): int(r.external_id) for r in t.itertuples()
       if r.correlation > 0 and sym[r.cat] == "kernel"}
ops_ext = {sym[r.name]: int(r.external_id) for r in t.itertuples() if sym[r.cat] == "cpu_op"}
print(json.dumps({"ops": sorted(zip(ops.aten_op_name, ops.kernel_sequence)),
                  "ann": sorted(ann.name), "ext": ext, "ops_ext": ops_ext}))
"""


HTA_OBSERVER = r"""
import json, sys
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
ops = ta.get_aten_op_kernels_and_delay(ranks=[0])[0]
ann = ta.get_gpu_user_annotation_breakdown(visualize=False)
print(json.dumps({"steps": [int(s) for s in ta.get_profiler_steps()],
                  "ops": {n: [k, int(c)] for n, k, c in zip(ops.aten_op_name, ops.kernel_sequence,
                                                            ops.occurrence_count)},
                  "ann": sorted(ann.name)}))
"""


def test_hta_on_the_observer_program(observer):
    """HTA on torch_ops_sim's trace: its ProfilerStep#N scopes are the
    steps, each aten op that launched a kernel finds it, the scopes' GPU
    work is broken down. (Kernels: CUPTI simulator only.)"""
    py = venv_python("hta")
    p = subprocess.run([str(py), "-c", HTA_OBSERVER, str(observer[0])], capture_output=True,
                       text=True, timeout=300, env={"HTA_DISABLE_NS_ROUNDING": "1", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["steps"] == [0, 1, 2]
    gemm = "gemm(float const*, float const*, float*, int)"
    assert got["ops"]["aten::addmm"] == [gemm, 3] and got["ops"]["aten::mm"] == [gemm, 6]
    relu, n = got["ops"]["aten::relu"]  # (a name __cxa_demangle leaves as it is)
    assert "vectorized_elementwise_kernel" in relu and "clamp_min_op" in relu and n == 3
    assert set(got["ops"]) == {"aten::addmm", "aten::mm", "aten::relu", "aten::threshold_backward"}
    assert got["ann"] == ["## forward ##", "ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]


def test_hta_reads_operators(trace):
    """HTA's operator analyses take our cpu_op events: each aten op finds
    the kernels its calls launched, scopes' GPU work is broken down, and
    kernels' external ids are the operators'."""
    py = venv_python("hta")
    p = subprocess.run([str(py), "-c", HTA_SCRIPT, str(trace[1])], capture_output=True,
                       text=True, timeout=300, env={"HTA_DISABLE_NS_ROUNDING": "1", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["ops"] == [["aten::add", "gemm(float*)"], ["aten::mm", "gemm(float*)"]]
    assert got["ann"] == ["handoff", "my_scope"]
    assert got["ext"] == {"10": 2, "11": 3, "12": -1, "20": 5}
    assert got["ops_ext"]["aten::mm"] == 2 and got["ops_ext"]["aten::add"] == 3


def tensorboard(path, tmp):
    py = venv_python("torch_tb_profiler")
    p = subprocess.run([str(py), "-c", TB_SCRIPT, str(path), str(tmp)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


TB_SCRIPT = r"""
import json, sys
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator
prof = RunProfileData.parse("rank0", None, sys.argv[1], sys.argv[2])
run = RunGenerator("rank0", None, prof).generate_run_profile()
perf = {c["name"]: c["value"] for c in run.overview["performance"][0]["children"]}
mem = run.get_memory_stats()["rows"]
print(json.dumps({"views": [v.name for v in run.views],
                  "steps": [r[0] for r in run.overview["steps"]["rows"]],
                  "ops": sorted(r["name"] for r in run.operation_table_by_name["data"]),
                  "perf": perf, "mem": mem, "curve": sorted(run.get_memory_curve()["rows"])}))
"""


def test_tensorboard_plugin_reads_operators(trace, tmp_path):
    """TensorBoard's profiler plugin, loading our JSON in-process as its
    RunLoader does: the operator table lists our operators, the overview
    counts their CPU time (not all of it Other), and the memory view has
    our allocation under its operator."""
    got = tensorboard(trace[1] / "rank0.json", tmp_path)
    assert {"overall", "operator", "kernel", "memory"} <= set(got["views"])
    assert got["ops"] == sorted(["aten::mm", "aten::add", "MmBackward0",
                                 "evaluate_function: MmBackward0", HOSTILE])
    assert got["perf"]["CPU Exec"] > 0
    assert got["perf"]["Other"] < sum(got["perf"].values())
    assert got["mem"] == {"GPU0": [["aten::mm", 1, 0.5, 0.5, 1, 1, 0.5, 0.5]]}


def test_tensorboard_on_the_observer_program(observer, tmp_path):
    """TensorBoard's plugin on torch_ops_sim's trace: the ProfilerStep#N
    steps in the overview, with kernel and CPU time; every op in the
    operator table; the memory view's curves of the GPU and the CPU, and
    the GPU's allocations under the ops that made them. (Kernels: CUPTI simulator only.) The
    plugin takes a step's GPU projection (gpu_user_annotation, which
    torch.profiler writes for ProfilerStep#N as for every scope) for a
    step too: each comes twice."""
    got = tensorboard(observer[0] / "rank0.json", tmp_path)
    assert {"overall", "operator", "kernel", "memory"} <= set(got["views"])
    assert got["steps"] == ["0", "0", "1", "1", "2", "2"]
    assert got["perf"]["Kernel"] > 0 and got["perf"]["CPU Exec"] > 0
    names = {t["name"] for t in read_truth_ops(observer)}
    assert set(got["ops"]) == {n for n in names if not n.startswith(("##", "ProfilerStep"))}
    assert {r[0] for r in got["mem"]["GPU0"]} >= {"aten::addmm", "aten::relu", "aten::mm"}
    assert got["curve"] == ["CPU", "GPU0"]


def read_truth_ops(observer):
    return [t for t in observer[2] if t["k"] == "op"]
