# SPDX-License-Identifier: MIT
"""The torch source from Python: the package's RecordFunction observer
(cuptrace._torchops) in real torch programs under `cuptrace run -t torch`,
installed by cuptrace-auto.pth as the script imports torch (the scripts
never import cuptrace), its records read back one by one with the format's
decoder (tests/progs/ctr_records). Its operators are the ones torch.profiler
records on the same work; threads, scopes ended elsewhere, shapes, Python
frames, memory, activate() and uninstall.

Each test runs under every interpreter with a torch: Debian's (1.13) and
build/venv's (torch 2.x where tests/install-deps.sh put one there), whose
observer the package builds into the test cache (build/torch-cache) the
first time. CPU only: backward runs on the thread that calls it."""
import json
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import PROGS, PYTHON, ROOT, base_env, ctr_files, launcher_env, run
from pyshim import INSTALLED, env_for, program

HERE = Path(__file__).resolve().parent
MLP = HERE / "torch_mlp.py"
RECORDS = PROGS / "ctr_records"
VENV = ROOT / "build" / "venv" / "bin" / "python"
OP, BACKWARD, USER, OTHER = 0, 1, 2, 3  # CUPTRACE_TORCH_SCOPE_*
# torch's RecordScope: FUNCTION, BACKWARD_FUNCTION, USER_SCOPE; others fold to OTHER.
FOLD = {0: OP, 1: BACKWARD, 7: USER}
EVALUATE = "autograd::engine::evaluate_function: "


@lru_cache(maxsize=None)
def torch_of(py):
    p = run([py, "-c", "import torch; print(torch.__version__)"], timeout=120)
    return p.stdout.strip() if p.returncode == 0 else None


def interpreters():
    if INSTALLED:
        return [pytest.param(INSTALLED, id="installed")]
    return [pytest.param(PYTHON, id="system"), pytest.param(str(VENV), id="build-venv")]


@pytest.fixture(params=interpreters())
def py(request):
    """An interpreter with a torch of its own: Debian's, or build/venv's
    where it has another torch than Debian's."""
    v = torch_of(request.param) if os.path.exists(request.param) else None
    if v is None:
        pytest.skip(f"no torch for {request.param}")
    if request.param == str(VENV) and v == torch_of(PYTHON):
        pytest.skip(f"build/venv has no torch of its own (Debian's {v})")
    return request.param


def traced(tmp_path, py, script, *args, torch=None, trace="torch", env=None, timeout=600):
    """`cuptrace run -t TRACE [--torch TORCH] -- PY SCRIPT ARGS`; the
    process and its one trace file (None when it wrote none)."""
    out = tmp_path / "o"
    opts = ["-t", trace] + (["--torch", torch] if torch else [])
    p = run([program(), "run", *opts, "-o", f"{out}/", "--", py, script, *args],
            env=env_for(launcher_env(**(env or {}))), timeout=timeout)
    files = ctr_files(out)
    assert len(files) <= 1, files
    return p, files[0] if files else None


def records(path, *kinds):
    """The file's events of those kinds, decoded (tests/progs/ctr_records)."""
    p = run([RECORDS, path, *kinds], check=True)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert lines[-1] == {"status": "clean"}, lines[-1]
    return lines[:-1]


def script(tmp_path, text):
    f = tmp_path / "prog.py"
    f.write_text(text)
    return f


def stderr_lines(p):
    """stderr without torch's own chatter (Kineto's log lines)."""
    return [ln for ln in p.stderr.splitlines()
            if not re.match(r"(USDT|ERROR|WARNING|INFO):\d{4}-", ln) and "UserWarning" not in ln]


def test_operators_and_scopes_are_torch_profilers(tmp_path, py):
    """A held-out training script (tests/integration/python/torch_mlp.py:
    an MLP, record_function scopes nested in each step, an evaluation)
    runs inside torch.profiler(record_shapes=True) while cuptrace records
    it with --torch shapes: every operator, backward function and scope
    torch.profiler recorded (its raw list, before its tables merge
    anything) is in the trace as often, with the same scope, sequence
    number, input sizes and input types, and nothing else is. One
    difference is torch's, not ours: torch 1.13's profiler gives each
    `autograd::engine::evaluate_function: X` the sequence number of the
    backward function X it wraps afterwards (that wrapper's RecordFunction
    has none); those are compared without it."""
    prof = tmp_path / "prof.json"
    p, f = traced(tmp_path, py, MLP, "--profile", prof, "--shapes", torch="shapes")
    assert p.returncode == 0, p.stderr
    assert f is not None, p.stderr

    def key(name, scope, seq, dims, types):
        return (name, scope, 0 if name.startswith(EVALUATE) else seq, dims, types)

    theirs = Counter(key(e["name"], FOLD.get(e["scope"], OTHER),
                         e["seq"] + 1 if e["seq"] >= 0 else 0,
                         ";".join(",".join(map(str, s)) for s in e["shapes"]),
                         ";".join(e["dtypes"]))
                     for e in json.loads(prof.read_text()))
    ops = records(f, "torch_op")
    ours = Counter(key(o["name"], o["scope"], o["seq"], o["dims"], o["types"]) for o in ops)
    assert ours == theirs, (sorted((ours - theirs).items())[:10],
                            sorted((theirs - ours).items())[:10])
    # What the comparison stands on: a real run of many operators, every
    # scope of the script in each of its 4 steps, backward functions.
    names = Counter(o["name"] for o in ops if o["scope"] == USER)
    assert {n: names[n] for n in ("train_step", "forward", "loss", "backward", "optimizer")} == \
        dict.fromkeys(("train_step", "forward", "loss", "backward", "optimizer"), 4), names
    assert names["evaluate"] == 1 and sum(ours.values()) > 500
    assert any(o["scope"] == BACKWARD and o["seq"] for o in ops)
    # ids from 1, each once; every op ends after it starts.
    assert sorted(o["id"] for o in ops) == list(range(1, len(ops) + 1))
    assert all(o["end"] >= o["ts"] for o in ops)


def test_scopes_nest_and_ops_push_their_ids(tmp_path, py):
    """Without --torch: no sizes, types or frames; each scope holds the
    operators run inside it on its thread (by time), ids are unique, and an
    operator nested in another lies inside it."""
    prog = script(tmp_path, """
import torch
from torch.autograd.profiler import record_function
x = torch.randn(8, 8)
with record_function("outer"):
    y = torch.mm(x, x)
    with record_function("inner"):
        z = torch.relu(y)
""")
    p, f = traced(tmp_path, py, prog)
    assert p.returncode == 0 and stderr_lines(p) == [], p.stderr
    ops = records(f, "torch_op")
    assert all(o["dims"] == o["types"] == o["stack"] == "" for o in ops)
    by = {o["name"]: o for o in ops if o["scope"] == USER}
    mm = [o for o in ops if o["name"] == "aten::mm"]
    relu = [o for o in ops if o["name"] == "aten::relu"]
    assert len(mm) == len(relu) == 1

    def inside(a, b):
        return b["ts"] <= a["ts"] and a["end"] <= b["end"] and a["_thread"] == b["_thread"]
    assert inside(mm[0], by["outer"]) and not inside(mm[0], by["inner"])
    assert inside(relu[0], by["inner"]) and inside(by["inner"], by["outer"])
    # relu's kernel ops (clamp_min or the like) nest inside it.
    assert any(inside(o, relu[0]) and o is not relu[0] for o in ops)


def test_backward_on_another_thread_and_a_scope_ended_elsewhere(tmp_path, py):
    """Forward on the main thread, backward run by another Python thread:
    the backward functions are recorded on that thread with the forward
    ops' sequence numbers and the main thread's RecordFunction id as their
    forward thread. A record_function scope entered on the main thread and
    left on another is recorded by the thread that left it, with the OS
    thread it began on."""
    prog = script(tmp_path, """
import json, os, threading, torch
from torch.autograd.profiler import record_function
torch.manual_seed(0)
w = torch.randn(16, 16, requires_grad=True)
x = torch.randn(4, 16)
loss = torch.tanh(x @ w).sum()
tids = {"main": threading.get_native_id()}
def bwd():
    tids["bwd"] = threading.get_native_id()
    loss.backward()
t = threading.Thread(target=bwd); t.start(); t.join()
rf = record_function("handed over")
rf.__enter__()
torch.add(x, 1)
def leave():
    tids["leave"] = threading.get_native_id()
    rf.__exit__(None, None, None)
t = threading.Thread(target=leave); t.start(); t.join()
print(json.dumps(tids))
""")
    p, f = traced(tmp_path, py, prog)
    assert p.returncode == 0 and stderr_lines(p) == [], p.stderr
    tids = json.loads(p.stdout)
    ops = records(f, "torch_op")
    fwd = [o for o in ops if o["_thread"] == tids["main"] and o["seq"] and o["scope"] == OP]
    bwd = [o for o in ops if o["scope"] == BACKWARD]
    assert bwd and fwd
    assert {o["_thread"] for o in bwd} == {tids["bwd"]}
    main_rf = {o["rf_tid"] for o in ops if o["_thread"] == tids["main"]}
    assert len(main_rf) == 1
    # Each backward function pairs with a forward op of the main thread.
    assert all(o["fwd_tid"] in main_rf for o in bwd if o["seq"]), bwd
    assert {o["seq"] for o in bwd if o["seq"]} <= {o["seq"] for o in fwd}
    assert all(o["rf_tid"] not in main_rf for o in bwd)
    assert all(o["tid"] == 0 for o in ops if o["name"] != "handed over")
    [h] = [o for o in ops if o["name"] == "handed over"]
    assert h["scope"] == USER and h["_thread"] == tids["leave"] and h["tid"] == tids["main"]
    add = [o for o in ops if o["name"] == "aten::add" and o["_thread"] == tids["main"]]
    assert add and h["ts"] <= add[-1]["ts"] <= add[-1]["end"] <= h["end"]


def test_python_frames_of_each_operator(tmp_path, py):
    """--torch stack: each operator called from Python carries the frames
    it was called from, innermost first ("file(line): function"), though
    torch's bindings release the GIL before they run it; the backward
    functions, run inside loss.backward(), carry that call's frames; a
    record_function scope the frames it was entered from."""
    prog = script(tmp_path, """
import torch
def layer(x, w):
    return torch.matmul(x, w)
def model(x, w):
    return layer(x, w).sum()
w = torch.randn(4, 4, requires_grad=True)
loss = model(torch.randn(2, 4), w)
loss.backward()
with torch.autograd.profiler.record_function("scope"):
    pass
""")
    p, f = traced(tmp_path, py, prog, torch="stack")
    assert p.returncode == 0 and stderr_lines(p) == [], p.stderr
    ops = records(f, "torch_op")
    [mm] = [o for o in ops if o["name"] == "aten::matmul"]
    frames = mm["stack"].split(";")
    assert frames == [f"{prog}(4): layer", f"{prog}(6): model", f"{prog}(8): <module>"], frames
    assert all(o["dims"] == "" for o in ops)
    back = [o for o in ops if o["scope"] == BACKWARD]
    assert back and all(o["stack"].split(";")[-1] == f"{prog}(9): <module>" for o in back), back
    [scope] = [o for o in ops if o["name"] == "scope"]
    assert scope["stack"].split(";")[-1] == f"{prog}(10): <module>", scope


def test_memory_events_and_a_torch_profiler_started_beside_them(tmp_path, py):
    """--torch memory: every allocation and free of torch's CPU allocator
    while the observer is on, each allocation inside the operator it names
    (the innermost open one; none for the few made outside any), each free
    of a recorded allocation giving its size back. A
    torch.profiler(profile_memory=True) started meanwhile still starts
    (torch refuses to while anything holds the slot our reporter uses: the
    package steps it aside) and records its own."""
    prog = script(tmp_path, """
import json, torch
from torch.profiler import ProfilerActivity, profile
a = torch.empty(1000)
b = torch.ones(2000) * 2
del a
with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
    c = torch.zeros(3000)
    del c
theirs = sum(1 for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
d = torch.zeros(4000)
del b, d
print(json.dumps(theirs))
""")
    p, f = traced(tmp_path, py, prog, torch="memory")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) >= 2  # torch.profiler's own: c's allocation and free
    ops = {o["id"]: o for o in records(f, "torch_op")}
    mem = records(f, "torch_mem")
    allocs = [m for m in mem if m["bytes"] > 0]
    sizes = Counter(m["bytes"] for m in allocs)
    assert sizes[4000] == 1 and sizes[8000] >= 1 and sizes[16000] == 1, sizes
    for m in allocs:
        # op 0: made outside any operator (the tensor torch's bindings wrap
        # `* 2`'s 2 in, before aten::mul starts).
        assert m["device"] == -1 and (m["op"] in ops or m["op"] == 0 and m["bytes"] <= 8), m
        o = ops.get(m["op"])
        assert not o or o["ts"] <= m["ts"] <= o["end"] and o["_thread"] == m["_thread"], (m, o)
    assert ops[[m for m in allocs if m["bytes"] == 4000][0]["op"]]["name"] == "aten::empty"
    live = {}
    for m in mem:
        if m["bytes"] > 0:
            live[m["ptr"]] = m["bytes"]
        elif m["ptr"] in live:
            assert -m["bytes"] == live.pop(m["ptr"]), m
    assert sum(1 for m in mem if m["bytes"] in (-4000, -16000)) == 2
    # c's 12000 bytes went to torch.profiler, not to us.
    assert 12000 not in sizes, sizes


def test_no_observer_without_the_torch_source(tmp_path, py):
    """-t nvtx: the script runs as it would; no observer is loaded (nor
    built) and no operator is recorded."""
    prog = script(tmp_path, """
import sys, torch
torch.relu(torch.ones(3))
print(sorted(m for m in sys.modules if m.startswith("cuptrace")))
""")
    p, f = traced(tmp_path, py, prog, trace="nvtx")
    assert p.returncode == 0 and stderr_lines(p) == [], p.stderr
    assert "cuptrace._torchops" not in p.stdout and "_torchsrc" not in p.stdout, p.stdout
    assert f is None or records(f, "torch_op") == []


def test_activate_with_torch_and_uninstall(tmp_path, py):
    """cuptrace.activate(trace="torch", torch="shapes") in a script that
    imported torch first (no launcher): operators from then on are
    recorded with their sizes; after cuptrace._torchsrc.uninstall() none."""
    out = tmp_path / "o"
    prog = script(tmp_path, f"""
import torch, cuptrace, cuptrace._torchsrc as src
x = torch.ones(2, 3)
torch.abs(x)
assert cuptrace.activate(output={str(out)!r} + "/%p.ctr", trace="torch", torch="shapes")
assert src.installed() == src.ON | src.SHAPES, src.installed()
torch.sigmoid(x)
src.uninstall()
assert src.installed() == 0
torch.tanh(x)
""")
    p = run([py, prog], env=env_for(launcher_env()), timeout=600)
    assert p.returncode == 0 and stderr_lines(p) == [], p.stderr
    [f] = ctr_files(out)
    names = Counter(o["name"] for o in records(f, "torch_op"))
    assert names["aten::sigmoid"] == 1 and names["aten::abs"] == 0 and names["aten::tanh"] == 0
    [sig] = [o for o in records(f, "torch_op") if o["name"] == "aten::sigmoid"]
    assert sig["dims"] == "2,3" and sig["types"] == "float"


def test_a_bad_torch_option_is_refused_by_activate():
    """activate()'s torch= is the library's CUPTRACE_TORCH, checked by its
    parser."""
    code = """
import cuptrace
try:
    cuptrace.check_options({"trace": "torch", "torch": "shapes,stack"})
    print("accepted")
    cuptrace.check_options({"torch": "shape"})
except ValueError as e:
    print(e)
"""
    p = run([INSTALLED or PYTHON, "-c", code], env=env_for(base_env()))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "accepted"
    assert "torch='shape'" in p.stdout and "unknown word 'shape'" in p.stdout, p.stdout
