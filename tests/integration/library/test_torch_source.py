# SPDX-License-Identifier: MIT
"""The torch source (libtrace/sources/torch.c): torch_ops plays the Python
package's RecordFunction observer through the library's exports
(include/cuptrace/torch_abi.h) and writes down every operator and memory
event it handed over; the file, read record by record with the format's
own decoder (tests/progs/ctr_records), holds exactly those, field by
field, at the times the program read around each call. The source is off
unless CUPTRACE_TRACE names it, CUPTRACE_TORCH says what it adds, and a
bad value is refused as every setting's is. torch_ops_sim launches kernels
inside its ops on the CUPTI simulator: each is tied to its op by CUPTI's
external correlation (the simulator's, the only CUPTI these tests have)."""
import json
import os
import platform
from collections import defaultdict

import pytest

from conftest import (PROGS, TOOL, ctr_files, launcher_env, one_line_error, read_truth, run,
                      tool, traced_env)
from programs import SIM

TORCH_OPS = PROGS / "torch_ops"
TORCH_OPS_SIM = SIM / "torch_ops_sim"
RECORDS = PROGS / "ctr_records"
# The library's clock against the program's CLOCK_MONOTONIC readings
# around each call: exact in monotonic mode, within the TSC map's error
# otherwise (tests/integration/library/test_tsc.py says why 20 us is
# generous).
EPS = 20_000
X86 = pytest.mark.skipif(platform.machine() != "x86_64", reason="the TSC is x86-64's")
SCOPE_OP, SCOPE_BACKWARD, SCOPE_USER = 0, 1, 2
ON, SHAPES, MEMORY, STACK = 1, 2, 4, 8
OP_FIELDS = ("name", "scope", "seq", "rf_tid", "fwd_tid", "tid", "dims", "types", "stack")
MEM_FIELDS = ("ptr", "bytes", "device", "allocated", "reserved", "op")


def records(path, *kinds):
    """The file's events of those kinds, decoded (ctr_records)."""
    p = run([RECORDS, path, *kinds], check=True)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert lines[-1] == {"status": "clean"}, lines[-1]
    return lines[:-1]


def counts(path):
    """cuptrace info's events and drops per kind."""
    p = tool("info", str(path))
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] == "dropped" and line.startswith("  "):
            out[f[0]] = (int(f[1]), int(f[3]))
    return out, p.stdout


def traced_run(tmp_path, *opts, args=()):
    """torch_ops under `cuptrace run OPTS`: the process, its output
    directory and its truth."""
    out, truth = tmp_path / "o", tmp_path / "truth.jsonl"
    extra = {"CT_TEST_TRUTH": truth}
    if os.environ.get("CT_TEST_CLOCK") and "--clock" not in opts:
        extra["CUPTRACE_CLOCK"] = os.environ["CT_TEST_CLOCK"]
    p = run([TOOL, "run", *opts, "-o", f"{out}/", "--", TORCH_OPS, *args],
            env=launcher_env(**extra))
    return p, out, truth


def of_kind(truth, k):
    return [t for t in truth if t["k"] == k]


@pytest.mark.parametrize("clock", [pytest.param("tsc", marks=X86), "monotonic"])
def test_every_op_and_memory_event_as_the_observer_gave_it(tmp_path, clock):
    p, out, truth_path = traced_run(tmp_path, "-t", "torch", "--torch", "shapes,memory",
                                    "--clock", clock, args=["4", "steps"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    truth = read_truth(truth_path)
    assert of_kind(truth, "config") == [{"k": "config", "bits": ON | SHAPES | MEMORY}]
    [done] = of_kind(truth, "done")
    [f] = ctr_files(out)
    got, text = counts(f)
    assert got["torch_op"] == (done["ops"], 0) and got["torch_mem"] == (done["mems"], 0), text
    assert f"CUPTRACE_CLOCK={clock}" in text and "CUPTRACE_TORCH=shapes,memory" in text, text

    recs = records(f, "torch_op", "torch_mem")
    ops = {r["id"]: r for r in recs if r["_kind"] == "torch_op"}
    want = of_kind(truth, "op")
    assert len(want) == done["ops"] == len(ops) == 4 * 14 + 1  # every id once
    for w in want:
        r = ops[w["id"]]
        assert {k: r[k] for k in OP_FIELDS} == {k: w[k] for k in OP_FIELDS}, (r, w)
        assert r["_thread"] == w["rec_tid"]  # in the ring of the thread that ended it
        # start and end on the trace's clock, both mapped to nanoseconds
        assert w["a"] - EPS <= r["ts"] <= r["end"] <= w["b"] + EPS, (r, w)
    mems = [r for r in recs if r["_kind"] == "torch_mem"]
    assert sorted((r["_thread"], *(r[k] for k in MEM_FIELDS)) for r in mems) == \
        sorted((w["rec_tid"], *(w[k] for k in MEM_FIELDS)) for w in of_kind(truth, "mem"))

    # What the program played, as the file has it: its steps, the forward
    # ops on the main thread, the backward ones on the autograd thread
    # tied to them by sequence number and thread number, and the scope
    # the autograd thread ended for the main thread.
    names = [r["name"] for r in ops.values()]
    assert sorted(n for n in names if n.startswith("ProfilerStep#")) == \
        [f"ProfilerStep#{i}" for i in range(4)]
    main = {r["_thread"] for r in ops.values() if r["name"] == "## forward ##"}
    grad = {r["_thread"] for r in ops.values() if r["scope"] == SCOPE_BACKWARD}
    assert len(main) == len(grad) == 1 and main != grad
    fwd = {r["seq"]: r for r in ops.values() if r["seq"] and r["scope"] == SCOPE_OP}
    assert sorted(r["name"] for r in fwd.values()) == ["aten::addmm"] * 4 + ["aten::relu"] * 4
    backward = [r for r in ops.values() if r["scope"] == SCOPE_BACKWARD]
    assert len(backward) == 4 * 4
    for b in backward:
        a = fwd[b["seq"]]
        assert b["fwd_tid"] == a["rf_tid"] == 1 and b["rf_tid"] == 2
        assert a["name"].split("::")[1].capitalize() in b["name"]  # ReluBackward0, AddmmBackward0
        assert a["end"] <= b["ts"]
    async_ = [r for r in ops.values() if r["name"] == "## async ##"]
    assert len(async_) == 4 and all(r["tid"] in main and r["_thread"] in grad for r in async_)
    # Ops of one torch thread nest (the writer mapped every end as it
    # mapped every start: an end left in ticks would stick out of its parent).
    by_rf = defaultdict(list)
    for r in ops.values():
        by_rf[r["rf_tid"]].append((r["ts"], -r["end"], r["name"]))
    for spans in by_rf.values():
        spans.sort()
        open_ = []
        for ts, neg_end, name in spans:
            while open_ and open_[-1] <= ts:
                open_.pop()
            assert not open_ or -neg_end <= open_[-1], (name, spans)
            open_.append(-neg_end)
    # Memory events name the innermost op open on their thread, or none.
    for m in mems:
        if m["op"]:
            r = ops[m["op"]]
            assert r["ts"] <= m["ts"] <= r["end"] and r["_thread"] == m["_thread"]
    assert sum(1 for m in mems if m["device"] == -1) == 8 and \
        sum(1 for m in mems if m["op"] == 0) == 4 * 3


def test_nothing_without_the_torch_source(tmp_path):
    """The default sources leave torch out: the observer is told 0 and
    installs nothing."""
    p, out, truth = traced_run(tmp_path, args=["2"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert read_truth(truth) == [{"k": "config", "bits": 0}]
    assert ctr_files(out) == []


def test_the_library_records_only_what_its_settings_ask_for(tmp_path):
    """A caller that ignores cuptrace_torch_config() (shapes, stack and
    memory events everywhere) gets only what the settings ask for: no
    torch event at all without the torch source, and with it no shapes
    nor memory events where CUPTRACE_TORCH asks only for stack."""
    p, out, truth = traced_run(tmp_path / "a", "-t", "nvtx", args=["2", "ignore-config"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert of_kind(read_truth(truth), "config") == [{"k": "config", "bits": 0}]
    for f in ctr_files(out):  # none: the program records nothing else
        assert not {"torch_op", "torch_mem"} & set(counts(f)[0])

    p, out, truth = traced_run(tmp_path / "b", "-t", "torch", "--torch", "stack",
                               args=["2", "ignore-config"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    truth = read_truth(truth)
    assert of_kind(truth, "config") == [{"k": "config", "bits": ON | STACK}]
    [done] = of_kind(truth, "done")
    [f] = ctr_files(out)
    got, text = counts(f)
    assert got["torch_op"] == (done["ops"], 0) and "torch_mem" not in got, text
    ops = records(f, "torch_op")
    assert all(r["dims"] == r["types"] == "" for r in ops)
    assert {r["stack"] for r in ops if r["name"] == "aten::addmm"} == \
        {"train.py(21): forward;train.py(40): <module>"}


def test_a_name_longer_than_4096_bytes_is_cut_and_counted(tmp_path):
    p, out, truth = traced_run(tmp_path, "-t", "torch", args=["1", "long"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    [f] = ctr_files(out)
    [cut] = [r for r in records(f, "torch_op") if r["name"].startswith("custom::")]
    assert cut["name"] == "custom::" + "x" * (4096 - 8)
    assert "cut strings: 1 " in counts(f)[1]


def test_a_full_buffer_drops_and_counts(tmp_path):
    """Ops that do not fit are dropped, never waited for, and each is
    counted: kept and dropped add up to what the program handed over.
    20000 ops of 4 KB each through a 1 MB buffer, back to back, outrun
    the writer (here about nine in ten were dropped)."""
    p, out, truth = traced_run(tmp_path, "-b", "1", "-t", "torch", "--torch", "stack",
                               args=["20000", "flood"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    [done] = of_kind(read_truth(truth), "done")
    [f] = ctr_files(out)
    got, text = counts(f)
    kept, dropped = got["torch_op"]
    assert kept + dropped == done["ops"] == 20001 and dropped > 0, text
    assert "torch_mem" not in got


@pytest.mark.parametrize("value,bad", [("shape", "shape"), ("shapes,gpu", "gpu"),
                                       ("none,stack", "none"), ("", "")])
def test_bad_torch_values_are_refused(tmp_path, value, bad):
    """cuptrace run refuses to start (exit 2, CMD not run); the library
    alone says it in one line and leaves the program untraced."""
    why = f"cuptrace: error: CUPTRACE_TORCH={value}: unknown word '{bad}'"
    p, out, truth = traced_run(tmp_path / "a", "-t", "torch", "--torch", value, args=["1"])
    assert p.returncode == 2 and one_line_error(p.stderr, "CUPTRACE_TORCH").startswith(why)
    assert not truth.exists()
    p = run([TOOL, "run", "-t", "torch", "-o", f"{tmp_path}/b/", "--", TORCH_OPS, "1"],
            env=launcher_env(CUPTRACE_TORCH=value, CT_TEST_TRUTH=tmp_path / "b.jsonl"))
    assert p.returncode == 2 and one_line_error(p.stderr, "CUPTRACE_TORCH").startswith(why)
    assert not (tmp_path / "b.jsonl").exists()
    p = run([TORCH_OPS, "1"], env=traced_env(tmp_path / "c", CUPTRACE_TRACE="torch",
                                            CUPTRACE_TORCH=value,
                                            CT_TEST_TRUTH=tmp_path / "c.jsonl"))
    assert p.returncode == 0 and one_line_error(p.stderr, "CUPTRACE_TORCH").startswith(why)
    assert read_truth(tmp_path / "c.jsonl") == [{"k": "config", "bits": 0}]
    assert ctr_files(tmp_path / "c") == []


def test_torch_settings_without_the_source_are_warned_once(tmp_path):
    want = "CUPTRACE_TORCH=shapes has no effect"
    p, out, truth = traced_run(tmp_path / "a", "-t", "nvtx", "--torch", "shapes", args=["1"])
    assert p.returncode == 0 and p.stderr.count(want) == 1, p.stderr
    p = run([TORCH_OPS, "1"], env=traced_env(tmp_path / "b", CUPTRACE_TRACE="nvtx",
                                            CUPTRACE_TORCH="shapes"))
    assert p.returncode == 0 and p.stderr.count(want) == 1, p.stderr
    p, out, truth = traced_run(tmp_path / "c", "-t", "torch", "--torch", "shapes", args=["1"])
    assert p.returncode == 0 and p.stderr == "", p.stderr


# ---- operators and their GPU work: CUPTI's external correlation

def sim_run(tmp_path, *opts, args=("3",)):
    """torch_ops_sim (kernels launched inside ops on the CUPTI
    simulator) under `cuptrace run OPTS`: the process, its file's
    records, the program's truth and the simulator's."""
    out = tmp_path / "o"
    p = run([TOOL, "run", *opts, "-o", f"{out}/", "--", TORCH_OPS_SIM, *args],
            env=launcher_env(CT_TEST_TRUTH=tmp_path / "t.jsonl",
                             CUPTI_SIM_TRUTH=tmp_path / "sim.jsonl"))
    files = ctr_files(out)
    recs = records(files[0], "torch_op", "ext_corr", "kernel") if files else []
    return p, recs, read_truth(tmp_path / "t.jsonl"), read_truth(tmp_path / "sim.jsonl")


def test_each_kernel_carries_the_id_of_the_op_that_launched_it(tmp_path):
    """Only the CUPTI simulator has seen this (no GPU here): it implements
    cuptiActivityPushExternalCorrelationId/Pop as CUPTI documents them (a
    stack per thread and kind; each CUDA call made while an id is pushed
    gets an EXTERNAL_CORRELATION record with it, ahead of the call's
    records). With the torch source and CUPTI on, the library pushes each
    op's id around it, so every kernel's launch is paired in an ext_corr
    record with the innermost op open on the launching thread (forward
    ops on the main thread, backward ones on the autograd thread), and
    no other call is. CUDA starts inside aten::to: its pop finds CUPTI's
    stack empty, which is no failure."""
    p, recs, truth, sim = sim_run(tmp_path, "-t", "cuda,torch")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    [done] = of_kind(truth, "done")
    kernels = of_kind(truth, "kernel")
    assert len(kernels) == done["kernels"] == 3 * 5
    launched_by = {k["corr"]: k["op"] for k in kernels}
    ops = {r["id"]: r for r in recs if r["_kind"] == "torch_op"}
    ext = [r for r in recs if r["_kind"] == "ext_corr"]
    assert all(r["kind"] == 3 for r in ext)  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
    assert sorted((r["correlation"], r["external"]) for r in ext) == sorted(launched_by.items())
    gpu = [r for r in recs if r["_kind"] == "kernel"]
    assert sorted(r["correlation"] for r in gpu) == sorted(launched_by)
    by_corr = {r["correlation"]: r["external"] for r in ext}
    names = sorted(ops[by_corr[r["correlation"]]]["name"] for r in gpu)
    assert names == sorted(["aten::addmm", "aten::relu", "aten::threshold_backward"] * 3 +
                           ["aten::mm"] * 6)
    # as the simulator saw it: the records CUPTI made, each ahead of its
    # kernel's, and one refused pop (aten::to's, CUDA started inside it)
    order = [(s["k"], s["corr"]) for s in sim if s["k"] in ("ext_corr", "kernel")]
    assert all(order.index(("ext_corr", c)) < order.index(("kernel", c)) for c in launched_by)
    assert [s for s in sim if s["k"] == "ext_pop_empty"] == [{"k": "ext_pop_empty", "kind": 3}]
    assert not [s for s in sim if s["k"] in ("failed", "child_call")]


def test_no_id_goes_to_cupti_without_the_torch_source(tmp_path):
    """A caller that ignores the config, with CUPTI tracing but the torch
    source off: the library pushes nothing, CUPTI records no external
    correlation, the kernels are there. (CUPTI simulator only.)"""
    p, recs, truth, sim = sim_run(tmp_path, "-t", "cuda", args=("2", "ignore-config"))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert of_kind(truth, "config") == [{"k": "config", "bits": 0}]
    assert not [s for s in sim if s["k"] in ("ext_corr", "ext_pop_empty", "failed")]
    assert {r["_kind"] for r in recs} == {"kernel"}
    assert len(recs) == len(of_kind(truth, "kernel")) == 2 * 5
