# SPDX-License-Identifier: MIT
"""`cuptrace stats --report torch_op_sum,torch_mem` and the HTML report's
PyTorch sections, on the trace of torch_ops_sim: the program that plays
the Python package's RecordFunction observer (nested operators, a
record_function scope, backward operators on an autograd thread, a scope
ended on another thread, ProfilerStep#N scopes, allocations) and
launches kernels inside operators on the CUPTI simulator. Every figure is
recomputed here from what the program and the simulator say they did
(their truth files), not from our own trace: calls per name, self and
total CPU time from the operators' nesting, self and total GPU time from
the kernels each operator launched (only the CUPTI simulator has seen the
operator-to-kernel tie: no GPU here), and the allocator's totals."""
import json
from collections import defaultdict

from conftest import TOOL, ctr_files, launcher_env, read_truth, run
from programs import SIM

TORCH_OPS_SIM = SIM / "torch_ops_sim"


def traced(tmp_path, *args):
    out = tmp_path / "o"
    p = run([TOOL, "run", "-t", "cuda,torch", "--torch", "shapes,memory", "-o", f"{out}/", "--",
             TORCH_OPS_SIM, *args],
            env=launcher_env(CT_TEST_TRUTH=tmp_path / "t.jsonl",
                             CUPTI_SIM_TRUTH=tmp_path / "sim.jsonl"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(out)
    return f, read_truth(tmp_path / "t.jsonl"), read_truth(tmp_path / "sim.jsonl")


def stats(f, *args):
    p = run([TOOL, "stats", "--format", "json", *args, str(f)])
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def began_on(op):
    return op["tid"] or op["rec_tid"]


def parents(ops):
    """Each op's enclosing ops on the thread it began on (all of them)."""
    up = {}
    for o in ops:
        up[o["id"]] = [q["id"] for q in ops if q is not o and began_on(q) == began_on(o)
                       and q["a"] <= o["a"] and o["b"] <= q["b"]]
    return up


def test_torch_op_sum_counts_and_times_as_the_program_did(tmp_path):
    f, truth, sim = traced(tmp_path, "3", "steps")
    ops = [t for t in truth if t["k"] == "op"]
    by_id = {o["id"]: o for o in ops}
    rows = {r["Name"]: r for r in stats(f, "-r", "torch_op_sum")["torch_op_sum: PyTorch operators"]}
    calls = defaultdict(int)
    for o in ops:
        calls[o["name"]] += 1
    assert {n: r["Calls"] for n, r in rows.items()} == calls
    # nesting: an operator's total less its self time is what its direct
    # children took (leaves: self == total)
    up = parents(ops)
    direct = {o["id"]: min(up[o["id"]], key=lambda q: by_id[q]["b"] - by_id[q]["a"], default=None)
              for o in ops}
    has_kids = {p for p in direct.values() if p}
    for name, r in rows.items():
        if not any(o["id"] in has_kids for o in ops if o["name"] == name):
            assert r["Self CPU (ns)"] == r["CPU Total (ns)"], name
        else:
            assert r["Self CPU (ns)"] < r["CPU Total (ns)"], name
    assert rows["aten::linear"]["CPU Total (ns)"] - rows["aten::linear"]["Self CPU (ns)"] == \
        rows["aten::t"]["CPU Total (ns)"] + rows["aten::addmm"]["CPU Total (ns)"]
    # GPU: each kernel to the op that launched it (self) and every op it is in (total)
    dur = {k["corr"]: k["end"] - k["start"] for k in sim if k["k"] == "kernel"}
    self_gpu, total_gpu = defaultdict(int), defaultdict(int)
    for k in (t for t in truth if t["k"] == "kernel"):
        op = by_id[k["op"]]
        self_gpu[op["name"]] += dur[k["corr"]]
        for q in {k["op"], *up[k["op"]]}:
            total_gpu[by_id[q]["name"]] += dur[k["corr"]]
    assert self_gpu and sum(self_gpu.values()) == sum(dur.values())
    for name, r in rows.items():
        assert r["Self GPU (ns)"] == self_gpu.get(name, 0), name
        assert r["GPU Total (ns)"] == total_gpu.get(name, 0), name
    # largest CPU total first, as torch.profiler's table sorted by cpu_time_total
    totals = [r["CPU Total (ns)"] for r in stats(f, "-r", "torch_op_sum")[
        "torch_op_sum: PyTorch operators"]]
    assert totals == sorted(totals, reverse=True)


def dims_text(d):
    return "[]" if not d else "[" + ", ".join(
        "[" + ", ".join(x for x in i.split(",") if x) + "]" for i in d.split(";")) + "]"


def test_torch_op_sum_by_shape(tmp_path):
    f, truth, _ = traced(tmp_path, "2")
    rows = stats(f, "-r", "torch_op_sum", "--by", "shape")[
        "torch_op_sum: PyTorch operators by input shapes"]
    got = {(r["Name"], r["Input Dims"]): r["Calls"] for r in rows}
    want = defaultdict(int)
    for o in (t for t in truth if t["k"] == "op"):
        want[(o["name"], dims_text(o["dims"]))] += 1
    assert got == want
    assert ("aten::addmm", "[[32], [8, 16], [16, 32], [], []]") in got


def test_torch_mem_totals_steps_and_top_operators(tmp_path):
    f, truth, _ = traced(tmp_path, "3", "steps")
    mem = [t for t in truth if t["k"] == "mem"]
    tables = stats(f, "-r", "torch_mem")
    dev = {r["Device"]: r for r in tables["torch_mem: memory per device"]}
    name = {-1: "cpu"}
    want = defaultdict(lambda: defaultdict(int))
    for m in mem:
        d = want[name.get(m["device"], f"cuda:{m['device']}")]
        d["Allocations"] += m["bytes"] > 0
        d["Frees"] += m["bytes"] < 0
        d["Allocated (B)"] += max(m["bytes"], 0)
        d["Peak Allocated (B)"] = max(d["Peak Allocated (B)"], m["allocated"])
        d["Allocated at End (B)"] = m["allocated"]
    assert set(dev) == set(want) and len(want) == 2
    for k, w in want.items():
        assert {c: dev[k][c] for c in w} == dict(w), k
    # steps: torch.profiler's ProfilerStep#N scopes, one row per step and device
    steps = tables["torch_mem: memory per step"]
    assert sorted({r["Step"] for r in steps}) == [0, 1, 2]
    assert len(steps) == 3 * len(want)
    for r in steps:
        assert r["Peak Allocated (B)"] <= dev[r["Device"]]["Peak Allocated (B)"]
    # operators by bytes they allocated themselves
    ops = {t["id"]: t["name"] for t in truth if t["k"] == "op"}
    by_op = defaultdict(int)
    for m in mem:
        if m["bytes"] > 0 and m["op"] in ops:
            by_op[ops[m["op"]]] += m["bytes"]
    top = tables["torch_mem: operators that allocated the most"]
    assert {r["Name"]: r["Allocated (B)"] for r in top} == dict(by_op)
    assert [r["Allocated (B)"] for r in top] == sorted(by_op.values(), reverse=True)


def test_reports_stay_out_of_a_trace_without_torch(tmp_path):
    out = tmp_path / "o"
    p = run([TOOL, "run", "-t", "cuda", "-o", f"{out}/", "--", TORCH_OPS_SIM, "1", "ignore-config"],
            env=launcher_env())
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(out)
    assert not [k for k in stats(f) if k.startswith("torch_")]
    named = stats(f, "-r", "torch_op_sum,torch_mem")
    assert named["torch_op_sum: PyTorch operators"] == []
    p = run([TOOL, "report", "-o", str(tmp_path / "r.html"), str(f)])
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "r.html").read_text()
    assert "PyTorch operators" not in page and "MPI calls" not in page


def test_html_report_has_the_operators_and_memory(tmp_path):
    f, truth, _ = traced(tmp_path, "2", "steps")
    p = run([TOOL, "report", "-o", str(tmp_path / "r.html"), str(f)])
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "r.html").read_text()
    assert "PyTorch operators" in page and "PyTorch memory" in page
    assert 'data-t="torch_op_sum: PyTorch operators"' in page
    assert 'data-t="torch_mem: memory per device"' in page
    assert "aten::addmm" in page
