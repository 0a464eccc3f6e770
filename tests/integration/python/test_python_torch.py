# SPDX-License-Identifier: MIT
"""PyTorch (Debian's python3-torch, CPU) with the cuptrace package: a real
training loop of a small MLP fed by a DataLoader with worker processes;
module ranges, steps from the optimizer, torch.profiler's schedules, worker
files. CT_TEST_PY runs these against an installed package (pyshim.py)."""
import json
import os
from pathlib import Path

import pytest

from conftest import ASAN_FORK, ROOT, SAN, base_env, convert, ctr_files, launcher_env, run, tool, traced_env
from pyshim import env_for, program, python, user_names

torch = pytest.importorskip("torch")
import torch.profiler  # noqa: E402


# The model, data and loop every test here runs; {setup} and {per_step}
# are filled per test.
TRAIN = """
import json, os, sys
import torch
import cuptrace, cuptrace.torch

class Block(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = torch.nn.Linear(n, n)
        self.act = torch.nn.ReLU()
    def forward(self, x):
        return self.act(self.fc(x))

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), Block(32), Block(32))
        self.head = torch.nn.Linear(32, 4)
    def forward(self, x):
        return self.head(self.encoder(x))

class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 64 * {steps}
    def __getitem__(self, i):
        with cuptrace.range("load sample"):
            g = torch.Generator().manual_seed(i)
            return torch.randn(16, generator=g), i % 4

torch.manual_seed(0)
torch.set_num_threads(1)
model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loader = torch.utils.data.DataLoader(Data(), batch_size=64, num_workers={workers})
{setup}
losses = []
for i, (x, y) in enumerate(loader):
    with cuptrace.range(f"iter {{i}}"):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    losses.append(round(loss.item(), 5))
    {per_step}
{teardown}
print(json.dumps(losses))
"""


def script(tmp_path, steps=8, workers=2, setup="", per_step="", teardown=""):
    path = tmp_path / "train.py"
    path.write_text(TRAIN.format(steps=steps, workers=workers, setup=setup, per_step=per_step,
                                 teardown=teardown))
    return path


def run_traced(tmp_path, path, *opts, timeout=300):
    """`cuptrace run -o OUT/%p.ctr OPTS -- python train.py`: the package's
    own program launches it."""
    env = env_for(launcher_env())
    p = run([program(), "run", "-o", f"{tmp_path}/o/%p.ctr", *opts, "--", python(), path],
            env=env, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p


def x_events(doc, pid=None):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") ==
            "user_annotation" and (pid is None or e["pid"] == pid)]


def inside(inner, outer):
    return (outer["ts"] <= inner["ts"] and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3)


PATHS = ["MLP", "encoder", "encoder.0", "encoder.1", "encoder.1.fc", "encoder.1.act",
         "encoder.2", "encoder.2.fc", "encoder.2.act", "head"]
# Each module's class: its range is named "path (Class)", the model's by its
# class alone.
CLASSES = {"encoder": "Sequential", "encoder.0": "Linear", "encoder.1": "Block",
           "encoder.1.fc": "Linear", "encoder.1.act": "ReLU", "encoder.2": "Block",
           "encoder.2.fc": "Linear", "encoder.2.act": "ReLU", "head": "Linear"}


def label(path):
    """The name of the module's range."""
    return path if path == "MLP" else f"{path} ({CLASSES[path]})"


def parent_of(path):
    return "MLP" if "." not in path and path != "MLP" else path.rsplit(".", 1)[0]


# Backward ranges: only calls whose inputs need a gradient have one (the
# input batch needs none: MLP, encoder and encoder.0 get none).
BACKWARD = ["encoder.1", "encoder.1.fc", "encoder.1.act", "encoder.2", "encoder.2.fc",
            "encoder.2.act", "head"]


def check_nesting(events, suffix="", paths=PATHS[1:]):
    """Every module's range lies inside its parent module's range, on the
    same thread: the ranges nest as the model does."""
    by_name = {}
    for e in events:
        by_name.setdefault(e["name"], []).append(e)
    for path in paths:
        mine = by_name.get(label(path) + suffix, [])
        parents = by_name.get(label(parent_of(path)) + suffix, [])
        if not parents and parent_of(path) not in paths:
            continue
        assert mine and parents, (path, suffix, sorted(by_name))
        for e in mine:
            assert any(inside(e, p) and p["tid"] == e["tid"] for p in parents), (path, suffix, e)
    return by_name


# annotate_modules' backward ranges hook autograd two ways
# (cuptrace.torch.set_backward_hooks): C++ pre-hooks on grad_fn nodes
# (_torchhooks.cpp, the default where it is built for this torch) and hook
# dicts on the tensors. The tests of backward ranges run both.
HOOKS = pytest.mark.parametrize("hooks", ["node", "tensor"])


def use_hooks(hooks):
    """The line a script runs first (after importing cuptrace.torch)."""
    return f"assert cuptrace.torch.set_backward_hooks({hooks!r}) == {hooks!r}\n"


# Under make test-san torch runs too (its libraries without the sanitizer,
# ours and the extension with it); the tests whose DataLoader forks workers
# while the writer thread runs are left out (ASAN_FORK).


@ASAN_FORK
@HOOKS
def test_modules_nest_and_workers_have_files(tmp_path, hooks):
    steps = 4
    path = script(tmp_path, steps=steps,
                  setup=use_hooks(hooks) + "handle = cuptrace.torch.annotate_modules(model)",
                  teardown="handle.remove()\nwith cuptrace.range('after remove'): model(x)")
    plain = run([python(), path], env=env_for(base_env()), timeout=300)
    assert plain.returncode == 0, plain.stderr
    traced = run_traced(tmp_path, path)
    # Same losses: tracing changes nothing the script computes.
    assert traced.stdout == plain.stdout and len(json.loads(plain.stdout)) == steps

    files = ctr_files(tmp_path / "o")
    # The main process and each of the two DataLoader workers (forked, left
    # through os._exit), in files of their own.
    assert len(files) == 3, files
    docs = [convert([f], tmp_path / f"{f.stem}.json") for f in files]
    main = [d for d in docs if any(n.startswith("iter ") for n in user_names(d))]
    workers = [d for d in docs if d not in main]
    assert len(main) == 1 and len(workers) == 2
    # 64 samples per batch, shared between the workers.
    assert sum(user_names(w).count("load sample") for w in workers) == 64 * steps
    for w in workers:
        assert not any(n.startswith("iter") for n in user_names(w))

    # Forward and backward ranges per module and iteration, nested as the model is.
    events = x_events(main[0])
    by_name = check_nesting(events)
    check_nesting(events, " backward", BACKWARD)
    for path_ in PATHS:
        assert len(by_name[label(path_)]) == steps, path_
        assert len(by_name.get(label(path_) + " backward", [])) == \
            (steps if path_ in BACKWARD else 0)
    for i in range(steps):
        it = by_name[f"iter {i}"][0]
        fwd = by_name["MLP"][i]
        # Backward in reverse order of forward: the head's first, encoder.1's
        # last; all after the forward, inside the iteration.
        head = by_name["head (Linear) backward"][i]
        enc1 = by_name["encoder.1 (Block) backward"][i]
        assert inside(fwd, it) and inside(head, it) and inside(enc1, it)
        assert fwd["ts"] + fwd["dur"] <= head["ts"] < head["ts"] + head["dur"] <= enc1["ts"]
    # handle.remove() took every hook away.
    after = by_name["after remove"][0]
    assert not any(inside(e, after) for e in events if e["name"] in map(label, PATHS))


def test_steps_from_the_optimizer_follow_torch_profiler_schedule(tmp_path):
    sched = dict(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    steps = 12
    path = script(tmp_path, steps=steps, workers=0)
    opts = ",".join(f"{k}={v}" for k, v in sched.items())
    run_traced(tmp_path, path, "--steps", opts)
    # Steps come from the optimizer (no line of the loop calls cuptrace.step):
    # the iterations captured are exactly torch.profiler.schedule's RECORD steps.
    tsched = torch.profiler.schedule(**sched)
    act = torch.profiler.ProfilerAction
    want = [i for i in range(steps) if tsched(i) in (act.RECORD, act.RECORD_AND_SAVE)]
    assert len(want) == 4
    names = user_names(convert(ctr_files(tmp_path / "o"), tmp_path / "t.json"))
    assert sorted(int(n.split()[1]) for n in names if n.startswith("iter ")) == want
    assert sorted(int(n.split("#")[1]) for n in names if n.startswith("ProfilerStep#")) == want


def test_steps_from_one_optimizer(tmp_path):
    """steps_from(optimizer) where CUPTRACE_STEPS is not set at start."""
    path = script(tmp_path, steps=5, workers=0,
                  setup="h = cuptrace.torch.steps_from(opt)",
                  per_step="if i == 2: h.remove()")
    run_traced(tmp_path, path)
    names = user_names(convert(ctr_files(tmp_path / "o"), tmp_path / "t.json"))
    # Steps end at the optimizer steps of iterations 0..2 only.
    assert sorted(n for n in names if n.startswith("ProfilerStep#")) == \
        ["ProfilerStep#1", "ProfilerStep#2"]


@ASAN_FORK
def test_trace_children_false_keeps_workers_untraced(tmp_path):
    path = script(tmp_path, steps=3,
                  setup="cuptrace.activate(trace_children=False)")
    run_traced(tmp_path, path)
    files = ctr_files(tmp_path / "o")
    assert len(files) == 1
    names = user_names(convert(files, tmp_path / "t.json"))
    assert "load sample" not in names and names.count("iter 0") == 1


def test_schedule_is_torch_profiler_schedule():
    code = """
import cuptrace, torch.profiler
n = 0
for args in (dict(wait=1, warmup=1, active=3, repeat=2), dict(wait=0, warmup=0, active=1),
             dict(wait=2, warmup=0, active=2, repeat=1, skip_first=3),
             dict(wait=0, warmup=2, active=5, repeat=0, skip_first=1)):
    mine, theirs = cuptrace.schedule(**args), torch.profiler.schedule(**args)
    for step in range(80):
        assert mine(step).name == theirs(step).name, (args, step)
        n += 1
try:
    cuptrace.schedule(wait=0, warmup=0, active=0)
except ValueError as e:
    print(n, e)
"""
    p = run([python(), "-c", code], env=env_for(base_env()), timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("320 ") and "active=0" in p.stdout


@pytest.mark.parametrize("optimizer_steps", [False, True])
def test_profile_windows_and_on_trace_ready(tmp_path, optimizer_steps):
    """With steps_from(opt) as well (the README's way of marking steps),
    each iteration is still one step, not two (prof.step() and the
    optimizer's hook): inside a profile, prof.step() alone marks them, as in
    torch.profiler."""
    sched = dict(wait=1, warmup=1, active=3, repeat=2)
    steps = 14
    setup = ("cuptrace.torch.steps_from(opt)" if optimizer_steps else "") + f"""
ready = []
def on_ready(path):
    ready.append((path, os.path.getsize(path)))
prof = cuptrace.profile(schedule=cuptrace.schedule(**{sched!r}), on_trace_ready=on_ready,
                        output="{tmp_path}/o/%p.ctr", trace_children=False)
prof.start()"""
    path = script(tmp_path, steps=steps, workers=0, setup=setup, per_step="prof.step()",
                  teardown="prof.stop()\nprint(json.dumps([ready, prof.windows]))")
    # Not launched by cuptrace: profile() loads the package's library itself.
    p = run([python(), path], env=env_for(base_env()), timeout=300)
    assert p.returncode == 0, p.stderr
    ready, windows = json.loads(p.stdout.splitlines()[0])
    files = ctr_files(tmp_path / "o")
    tsched = torch.profiler.schedule(**sched)
    act = torch.profiler.ProfilerAction
    want = [i for i in range(steps) if tsched(i) in (act.RECORD, act.RECORD_AND_SAVE)]
    assert windows == [[want[0], want[2]], [want[3], want[5]]]
    # One file per saved window, handed over finished (its size stays).
    assert len(ready) == 2 and sorted(str(f) for f in files) == sorted(r[0] for r in ready)
    first = Path(ready[0][0])
    assert Path(ready[1][0]) == first.with_name(first.stem + ".w2" + first.suffix)
    for (path, size), (lo, hi) in zip(ready, windows):
        assert os.path.getsize(path) == size
        info = run([program(), "info", path], env=env_for(base_env()), check=True).stdout
        assert "ended:       rotated" in info
        # Each window's file, read on its own, holds exactly its steps.
        doc = convert([path], tmp_path / (Path(path).stem + ".json"))
        iters = sorted(int(n.split()[1]) for n in user_names(doc) if n.startswith("iter "))
        assert iters == [i for i in want if lo <= i <= hi]
        # and names them as torch.profiler does: iteration i is ProfilerStep#i
        steps = sorted(int(n.split("#")[1]) for n in user_names(doc)
                       if n.startswith("ProfilerStep#"))
        assert steps == iters


@HOOKS
def test_backward_ranges_of_a_leaf_input_do_not_pile_up(tmp_path, hooks):
    """A leaf input that needs a gradient keeps its hook between backward
    passes: each pass closes its own range once."""
    code = """
import cuptrace, cuptrace.torch, torch
""" + use_hooks(hooks) + """
lin = torch.nn.Linear(4, 4)
x = torch.randn(2, 4, requires_grad=True)
h = cuptrace.torch.annotate_modules(lin)
for i in range(3):
    with cuptrace.range(f"it {i}"):
        lin(x).sum().backward()
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o")), timeout=120)
    assert p.returncode == 0, p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    ev = x_events(doc)
    its = [e for e in ev if e["name"].startswith("it ")]
    bwd = [e for e in ev if e["name"] == "Linear backward"]
    fwd = [e for e in ev if e["name"] == "Linear"]
    assert len(its) == len(bwd) == len(fwd) == 3
    for it, b, f in zip(sorted(its, key=lambda e: e["ts"]), sorted(bwd, key=lambda e: e["ts"]),
                        sorted(fwd, key=lambda e: e["ts"])):
        assert inside(f, it) and inside(b, it) and f["ts"] + f["dur"] <= b["ts"]


@HOOKS
def test_backward_ranges_of_calls_other_than_one_tensor_in_and_out(tmp_path, hooks):
    """Calls with three arguments in (a tensor without gradient, an int, a
    tensor) and a tuple with a list out, an identity (its input is
    its output: no gradient of its own, so no backward range, and the
    stack stays balanced), a call under no_grad (its output needs no
    gradient: none) and a module called twice: backward ranges exactly
    where a gradient flows through the module, each once per call, each
    inside the iteration, and the same results as untraced."""
    code = """
import cuptrace, cuptrace.torch, torch
""" + use_hooks(hooks) + """
class Two(torch.nn.Module):
    def forward(self, a, k, b):
        return a * k + b, [a * b]
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.idn, self.two = torch.nn.Linear(4, 4), torch.nn.Identity(), Two()
        self.frozen, self.act = torch.nn.Linear(4, 4), torch.nn.ReLU()
    def forward(self, x):
        h = self.idn(self.fc(x))
        s, [p] = self.two(x, 2, h)
        with torch.no_grad():
            self.frozen(h)
        return self.act(self.act(s) * p).sum()
torch.manual_seed(0)
net = Net()
h = cuptrace.torch.annotate_modules(net)
x = torch.randn(2, 4)
for i in range(3):
    with cuptrace.range(f"it {i}"):
        net(x).backward()
print(float(net.fc.weight.grad.sum()))
"""
    env = env_for(traced_env(tmp_path / "o"))
    p = run([python(), "-c", code], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    plain = run([python(), "-c", code], env=env_for(base_env()), timeout=120)
    assert plain.returncode == 0 and plain.stdout == p.stdout, plain.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    ev = x_events(doc)
    names = sorted(e["name"] for e in ev if e["name"].endswith(" backward"))
    # fc: its input needs no gradient; idn: an identity; frozen: no_grad;
    # Net: its input needs none. act: called twice per iteration.
    assert names == ["act (ReLU) backward"] * 6 + ["two (Two) backward"] * 3, names
    its = sorted((e for e in ev if e["name"].startswith("it ")), key=lambda e: e["ts"])
    assert len(its) == 3
    for it in its:
        mine = [e for e in ev if inside(e, it) and e["name"].endswith(" backward")]
        assert sorted(e["name"] for e in mine) == ["act (ReLU) backward"] * 2 + \
            ["two (Two) backward"]
        fwd = [e for e in ev if inside(e, it) and e["name"] == "Net"]
        assert len(fwd) == 1
        two = [e for e in mine if e["name"] == "two (Two) backward"][0]
        # Backward after forward; "two" runs after both calls of act.
        assert all(fwd[0]["ts"] + fwd[0]["dur"] <= e["ts"] for e in mine)
        assert all(e["ts"] + e["dur"] <= two["ts"] for e in mine if e is not two)


MP_SCRIPT = """
import sys
import cuptrace
import torch.multiprocessing as mp

def work(i, n):
    for k in range(n):
        with cuptrace.range(f"child {i} item {k}"):
            pass

if __name__ == "__main__":
    if len(sys.argv) > 1:
        cuptrace.activate(trace_children=False)
    with cuptrace.range("parent"):
        mp.spawn(work, args=(3,), nprocs=2)
"""


@pytest.mark.parametrize("children", [True, False])
def test_torch_multiprocessing_children(tmp_path, children):
    """torch.multiprocessing.spawn children (exec'd interpreters) trace
    into files of their own, or not at all with trace_children=False."""
    path = tmp_path / "mp.py"
    path.write_text(MP_SCRIPT)
    args = [] if children else ["--no-children"]
    env = env_for(launcher_env())
    p = run([program(), "run", "-o", f"{tmp_path}/o/%p.ctr", "--", python(), path, *args],
            env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / "o")
    docs = [convert([f], tmp_path / f"{f.stem}.json") for f in files]
    names = sorted(sorted(user_names(d)) for d in docs)
    if children:
        assert names == [["child 0 item 0", "child 0 item 1", "child 0 item 2"],
                         ["child 1 item 0", "child 1 item 1", "child 1 item 2"], ["parent"]]
    else:
        assert names == [["parent"]]


@pytest.mark.parametrize("backward", [False, True])
def test_deepcopy_of_an_annotated_model_runs_its_own_weights(tmp_path, backward):
    code = f"""
import copy, cuptrace, cuptrace.torch, torch
{use_hooks("node" if backward else "tensor")}m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
h = cuptrace.torch.annotate_modules(m, backward={backward})
ema = copy.deepcopy(m)
with torch.no_grad():
    ema[0].weight.add_(1.0)
x = torch.ones(1, 3)
with cuptrace.range("copy"):
    y = ema(x)
print(torch.equal(y, torch.relu(x @ ema[0].weight.T + ema[0].bias)), torch.equal(y, m(x)))
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o")), timeout=120)
    assert p.returncode == 0 and p.stdout == "True False\n", p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    ev = x_events(doc)
    copy_range = [e for e in ev if e["name"] == "copy"][0]
    inner = sorted(e["name"] for e in ev if inside(e, copy_range) and e is not copy_range)
    assert inner == ["0 (Linear)", "1 (ReLU)", "Sequential"]


@pytest.mark.parametrize("backward", [False, True])
def test_an_annotated_model_saves_and_loads_without_cuptrace(tmp_path, backward):
    """torch.save of an annotated model must neither fail with backward
    ranges (the wrapper's type cannot be found by name) nor, without them,
    write a file that needs cuptrace to load. The wrappers save as the
    forward they wrap:
    the file names nothing of cuptrace and loads in a process without it,
    where torch.jit.script takes the loaded model. A decorated function
    pickles by its name, as functions do (a multiprocessing pool's target)."""
    save = f"""
import io, pickle, sys, cuptrace, cuptrace.torch, torch
{use_hooks("node" if backward else "tensor")}torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
h = cuptrace.torch.annotate_modules(m, backward={backward})
torch.save(m, sys.argv[1])
print(m(torch.ones(1, 3)).tolist())

@cuptrace.range("work")
def work(x):
    return x + 1
assert pickle.loads(pickle.dumps(work)) is work
"""
    load = """
import sys, torch
sys.modules["cuptrace"] = None  # not importable here
m = torch.load(sys.argv[1], weights_only=False)  # a whole model (torch >= 2.6 loads weights only)
print(m(torch.ones(1, 3)).tolist())
torch.jit.script(m)
"""
    f = tmp_path / "m.pt"
    p = run([python(), "-c", save, f], env=env_for(traced_env(tmp_path / "o")), timeout=120)
    assert p.returncode == 0, p.stderr
    assert b"cuptrace" not in f.read_bytes()
    q = run([python(), "-c", load, f], env=base_env(), timeout=120)
    assert q.returncode == 0 and q.stdout == p.stdout, q.stderr


TORCH_BUILD = ROOT / "python_shim" / "cuptrace" / "_torchbuild.py"


def test_node_hooks_where_torch_has_its_headers(tmp_path):
    """Where the interpreter's torch has its C++ headers (Debian: libtorch-dev,
    which tests/install-deps.sh installs; pip's torch always), annotate_modules
    uses _torchhooks, built with the package or into the cache for this torch;
    where it cannot be had for this torch (here: another version, and no
    compiler to build one) it gets the tensor hooks, and one line says so."""
    has = run([python(), TORCH_BUILD, "--check"], env=env_for(base_env()),
              timeout=120).returncode == 0
    code = "import cuptrace.torch as t; print(t.backward_hooks)"
    p = run([python(), "-c", code], env=env_for(base_env()), timeout=600)
    assert p.returncode == 0 and p.stdout.split() == ["node" if has else "tensor"], p.stderr
    if not has:
        pytest.skip("no torch C++ headers for this interpreter: tensor hooks only")
    other = "import torch; torch.__version__ = '0.0.0'\n" + code
    env = env_for(base_env(CXX="/nonexistent/c++"))
    env["CUPTRACE_TORCH_CACHE"] = str(tmp_path / "cache")
    p = run([python(), "-c", other], env=env, timeout=120)
    assert p.returncode == 0 and p.stdout.split() == ["tensor"], p.stderr
    assert p.stderr.startswith("cuptrace: warning: backward ranges use tensor hooks instead"), \
        p.stderr
    p = run([python(), "-c", "import cuptrace.torch as t; t.set_backward_hooks('nodes')"],
            env=env_for(base_env()), timeout=120)
    assert p.returncode != 0 and "ValueError" in p.stderr and "'nodes'" in p.stderr


@HOOKS
def test_backward_ranges_of_a_retained_graph_and_of_calls_never_backpropagated(tmp_path, hooks):
    """A graph kept with retain_graph and run backward twice ranges each
    module's backward once (its hooks do what was asked once); calls whose
    graph is dropped without backward leave nothing open: the ranges after
    them nest as before, and the hooks go with the graph (memory stays
    flat over 20,000 such calls)."""
    code = """
import resource, cuptrace, cuptrace.torch, torch
""" + use_hooks(hooks) + """
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
h = cuptrace.torch.annotate_modules(m)
x = torch.randn(2, 4, requires_grad=True)
with cuptrace.range("twice"):
    y = m(x).sum()
    y.backward(retain_graph=True)
    y.backward()
def dropped(n):
    for _ in range(n):
        m(x)
dropped(2000)
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
dropped(20000)
r1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with cuptrace.range("after"):
    m(x).sum().backward()
print(r1 - r0)
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o", CUPTRACE_BUFFER_MB="64")),
            timeout=300)
    assert p.returncode == 0, p.stderr
    # KiB: 20,000 calls' hooks would be far more. (ASan keeps what is
    # freed in quarantine: no figure of ours there.)
    assert SAN or int(p.stdout) < 8 * 1024, p.stdout
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    ev = x_events(doc)
    for name in ("twice", "after"):
        outer = [e for e in ev if e["name"] == name]
        assert len(outer) == 1, name
        mine = sorted(e["name"] for e in ev if e["name"].endswith(" backward") and
                      inside(e, outer[0]))
        assert mine == ["0 (Linear) backward", "1 (ReLU) backward", "2 (Linear) backward",
                        "Sequential backward"], (name, mine)
        seq = [e for e in ev if e["name"] == "Sequential backward" and inside(e, outer[0])][0]
        for e in ev:
            if e["name"] in ("0 (Linear) backward", "1 (ReLU) backward", "2 (Linear) backward") \
                    and inside(e, outer[0]):
                assert inside(e, seq) and e["tid"] == seq["tid"], e


@HOOKS
def test_compiled_autograd_runs_with_node_hooks(tmp_path, hooks):
    """torch 2.x's compiled autograd asks C++ pre-hooks for compiled_args: the
    backward still runs (same gradients as untraced) with either hook kind;
    the tensor hooks still range it. Skipped where torch has no compiled
    autograd (Debian's 1.13)."""
    has = run([python(), "-c", "import torch._dynamo.compiled_autograd"],
              env=env_for(base_env()), timeout=120)
    if has.returncode != 0:
        pytest.skip("this torch has no compiled autograd")
    code = """
import cuptrace, cuptrace.torch, torch
from torch._dynamo import compiled_autograd
""" + use_hooks(hooks) + """
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4))
h = cuptrace.torch.annotate_modules(m)
x = torch.randn(2, 4)
with compiled_autograd._enable(torch.compile(backend="eager")):
    with cuptrace.range("compiled"):
        m(x).sum().backward()
print(float(m[0].weight.grad.sum()))
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o")), timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    plain = run([python(), "-c", code], env=env_for(base_env()), timeout=300)
    assert plain.returncode == 0 and plain.stdout == p.stdout, plain.stderr[-3000:]
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    names = sorted(e["name"] for e in x_events(doc))
    bwd = [n for n in names if n.endswith(" backward")]
    assert set(names) - set(bwd) == {"0 (Linear)", "1 (ReLU)", "2 (Linear)", "Sequential",
                                     "compiled"}, names
    assert bwd == ([] if hooks == "node" else ["1 (ReLU) backward", "2 (Linear) backward"]), names


def test_two_optimizers_make_one_step_per_iteration(tmp_path):
    """A GAN's loop steps two optimizers per iteration: each counted as a
    step, the schedule's two active steps fell in one iteration. The first
    optimizer to step marks the steps."""
    sched = dict(wait=1, warmup=1, active=2, repeat=1)
    steps = 8
    path = script(tmp_path, steps=steps, workers=0,
                  setup="opt2 = torch.optim.SGD(model.head.parameters(), lr=0.0)",
                  per_step="opt2.zero_grad(); opt2.step()")
    run_traced(tmp_path, path, "--steps", ",".join(f"{k}={v}" for k, v in sched.items()))
    tsched = torch.profiler.schedule(**sched)
    act = torch.profiler.ProfilerAction
    want = [i for i in range(steps) if tsched(i) in (act.RECORD, act.RECORD_AND_SAVE)]
    names = user_names(convert(ctr_files(tmp_path / "o"), tmp_path / "t.json"))
    assert sorted(int(n.split()[1]) for n in names if n.startswith("iter ")) == want == [2, 3]


@ASAN_FORK
def test_dataloader_workers_are_their_parents_rank(tmp_path):
    """Without a launcher, a main process and its two forked DataLoader
    workers are one rank, not three (the report would say "Ranks 3"): a
    forked child's header names the process it was forked from, and it is
    shown as that process's rank."""
    path = script(tmp_path, steps=2, workers=2)
    run_traced(tmp_path, path)
    files = ctr_files(tmp_path / "o")
    assert len(files) == 3
    doc = convert(files, tmp_path / "t.json")
    ranks = [e["args"]["name"].split()[1] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"
             and e["args"]["name"].startswith("rank ")]
    assert ranks == ["0", "0", "0"], ranks
    p = tool("info", *map(str, files))
    assert p.returncode == 0 and p.stdout.count("   0~ ") == 3, p.stdout


def ended(path):
    out = tool("info", path).stdout
    return next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("ended:")),
                None)


@ASAN_FORK
@pytest.mark.parametrize("how", ["activate", "profile"])
def test_dataloader_workers_without_a_launcher_keep_their_ranges(tmp_path, how):
    """activate() and cuptrace.profile() load the library with dlopen: it
    does not interpose _exit there, and the DataLoader's forked workers
    leave through os._exit. Every worker range is in their files."""
    steps = 2
    out = f"{tmp_path}/o/%p.ctr"
    if how == "activate":
        kw = dict(setup=f"assert cuptrace.activate(output={out!r})")
    else:
        kw = dict(setup=f"prof = cuptrace.profile(output={out!r})\nprof.start()",
                  per_step="prof.step()", teardown="prof.stop()")
    path = script(tmp_path, steps=steps, workers=2, **kw)
    p = run([python(), path], env=env_for(base_env()), timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 3, files
    docs = {f: convert([f], tmp_path / f"{f.stem}.json") for f in files}
    workers = [f for f, d in docs.items() if "load sample" in user_names(d)]
    assert len(workers) == 2 and all(ended(f) == "_exit(0)" for f in workers), files
    assert sum(user_names(docs[f]).count("load sample") for f in workers) == 64 * steps


@HOOKS
def test_something_else_under_the_hook_key_is_left_alone(tmp_path, hooks):
    """Another object under the tensor hook dict's "cuptrace" key (the hook
    of another copy of the extension, or the program's own) is left as it
    is, its hook runs, and no range goes through that tensor (taken for
    cuptrace's own hook, it was written into and backward crashed)."""
    code = f"""
import collections, cuptrace, cuptrace.torch, torch
{use_hooks(hooks)}m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
cuptrace.torch.annotate_modules(m)
seen = []
def other(grad):
    seen.append(tuple(grad.shape))
x = torch.randn(3, 4, requires_grad=True)
x._backward_hooks = collections.OrderedDict(cuptrace=other)
for i in range(3):
    m(x).sum().backward()
print(seen, x._backward_hooks["cuptrace"] is other, list(x._backward_hooks))
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o")), timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "[(3, 4), (3, 4), (3, 4)] True ['cuptrace']\n", p.stdout
    names = user_names(convert(ctr_files(tmp_path / "o"), tmp_path / "t.json"))
    # The input x carries the other hook: Sequential's and 0's backward
    # ranges would end at it, and are not made; 1's are.
    assert names.count("1 (Linear) backward") == 3, names
    assert "0 (Linear) backward" not in names and "Sequential backward" not in names, names


def test_annotating_twice_does_not_nest_ranges_twice(tmp_path):
    code = f"""
import cuptrace, cuptrace.torch, torch
{use_hooks("tensor")}m = torch.nn.Sequential(torch.nn.Linear(3, 3))
cuptrace.torch.annotate_modules(m, backward=False)
h = cuptrace.torch.annotate_modules(m, backward=False)
assert len(h) == 0
m(torch.ones(1, 3))
"""
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "o")), timeout=120)
    assert p.returncode == 0, p.stderr
    names = sorted(e["name"] for e in x_events(convert(ctr_files(tmp_path / "o"),
                                                        tmp_path / "t.json")))
    assert names == ["0 (Linear)", "Sequential"]


def test_annotate_modules_and_torch_compile_say_they_do_not_mix(tmp_path):
    """torch.compile cannot trace an annotated forward (a C wrapper): the
    model would run eager without a word, whichever came first. So
    annotate_modules leaves a compiled model alone (it stays compiled) and
    torch.compile of an annotated model warns. Skipped where torch has no torch.compile
    (Debian's 1.13; checked by hand with torch 2.15: CT_TEST_PY)."""
    has = run([python(), "-c", "import torch, torch._dynamo; assert hasattr(torch, 'compile')"],
              env=env_for(base_env()), timeout=120)
    if has.returncode != 0:
        pytest.skip("this torch has no torch.compile")
    code = """
import sys, warnings, torch, cuptrace, cuptrace.torch
from torch._dynamo.utils import counters
warnings.simplefilter("always")
m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
x = torch.randn(8, 16)
if sys.argv[1] == "first":
    h = cuptrace.torch.annotate_modules(m)
    cm = torch.compile(m, backend="eager")
else:
    cm = torch.compile(m, backend="eager")
    h = cuptrace.torch.annotate_modules(m)
    assert len(h) == 0
cm(x); cm(x)
print(counters["stats"].get("unique_graphs", 0))
"""
    for order, graphs in (("first", "0"), ("after", "1")):
        p = run([python(), "-c", code, order], env=env_for(traced_env(tmp_path / order)),
                timeout=300)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == graphs and "RuntimeWarning" in p.stderr, (order, p.stderr)
