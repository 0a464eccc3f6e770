# SPDX-License-Identifier: MIT
"""Python: the cuptrace package (python_shim/, its C extension), NVIDIA's
`nvtx` package, and activation from a script. CT_TEST_PY runs these against
an installed package (pyshim.py)."""
import json
import os
import re

import pytest

from conftest import PYTHON, ROOT, TOOL, base_env, convert, ctr_files, run, tool, traced_env
from pyshim import env_for, program, python, user_names as names

VENV_PY = ROOT / "build" / "venv" / "bin" / "python"


def py(code, env, interp=None):
    return run([interp or python(), "-c", code], env=env_for(env))


def test_control_api_from_python(tmp_path):
    code = """
import cuptrace
assert cuptrace.enabled()
for i in range(3):
    with cuptrace.range(f"epoch {i}"):
        cuptrace.push("inner")
        cuptrace.mark("tick")
        cuptrace.pop()
    cuptrace.step()
@cuptrace.range("decorated")
def f():
    return 41 + 1
print(f())
"""
    p = py(code, traced_env(tmp_path / "o"))
    assert p.returncode == 0 and p.stdout == "42\n", p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    n = names(doc)
    assert [x for x in n if x.startswith("epoch")] == ["epoch 0", "epoch 1", "epoch 2"] or \
        sorted(x for x in n if x.startswith("epoch")) == ["epoch 0", "epoch 1", "epoch 2"]
    assert n.count("inner") == 3 and n.count("tick") == 3 and n.count("decorated") == 1
    assert sorted(x for x in n if x.startswith("ProfilerStep#")) == ["ProfilerStep#1", "ProfilerStep#2"]


def test_capture_window_from_python(tmp_path):
    code = """
import cuptrace
for i in range(6):
    if i == 2: cuptrace.start()
    if i == 4: cuptrace.stop()
    with cuptrace.range(f"it {i}"):
        pass
"""
    p = py(code, traced_env(tmp_path / "o", CUPTRACE_CAPTURE="api"))
    assert p.returncode == 0, p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    assert sorted(names(doc)) == ["it 2", "it 3"]


def test_activate_from_a_script_without_launcher(tmp_path):
    code = f"""
import cuptrace
assert cuptrace.activate(output="{tmp_path}/act/%p.ctr")
with cuptrace.range("activated"):
    pass
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    doc = convert(ctr_files(tmp_path / "act"), tmp_path / "t.json")
    assert names(doc) == ["activated"]


def test_flight_mode_from_python(tmp_path):
    """activate(flight=...) writes nothing until cuptrace.dump(), which then
    writes the window; dump() is False where flight mode is off."""
    code = f"""
import os, time, cuptrace
assert cuptrace.activate(output="{tmp_path}/fl/r.ctr", flight=1, flight_mb=8)
for i in range(300):
    with cuptrace.range(f"py {{i % 3}}"):
        time.sleep(0.002)
assert not os.path.exists("{tmp_path}/fl/r.ctr")
assert cuptrace.dump() is True
time.sleep(0.3)
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "fl")
    info = tool("info", str(f)).stdout
    assert "trigger:     cuptrace_dump()" in info
    assert re.search(r"window of 0\.[0-9]+ s \(the last 1\.000 s of recording asked\)", info), info
    doc = convert([f], tmp_path / "t.json")
    assert set(names(doc)) == {"py 0", "py 1", "py 2"}
    p = py("import cuptrace; cuptrace.activate(flight=0.01)", base_env())
    assert p.returncode == 1 and "CUPTRACE_FLIGHT=0.01: expected seconds >= 0.1" in p.stderr
    p = py("import cuptrace; print(cuptrace.dump())", traced_env(tmp_path / "o"))
    assert p.stdout == "False\n", p.stderr


def test_a_second_activate_says_what_it_ignores(tmp_path):
    """Tracing is on after the first activate(): the second one's output is
    not used, and the warning says so, never silently; the same options
    again, or none, say nothing."""
    code = f"""
import warnings, cuptrace
warnings.simplefilter("always")
assert cuptrace.activate(output="{tmp_path}/a/%p.ctr", trace="nvtx")
assert cuptrace.activate(output="{tmp_path}/a/%p.ctr")
assert cuptrace.activate()
assert cuptrace.activate(output="{tmp_path}/b/%p.ctr", trace="nvtx")
with cuptrace.range("r"):
    pass
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    said = [line for line in p.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(said) == 1 and f"ignored: output='{tmp_path}/b/%p.ctr'" in said[0], p.stderr
    assert "trace=" not in said[0]
    assert names(convert(ctr_files(tmp_path / "a"), tmp_path / "t.json")) == ["r"]
    assert not (tmp_path / "b").exists()


def test_activate_with_a_relative_output_and_a_chdir(tmp_path):
    """activate(output="rel/...") then os.chdir, then a child process: the
    child's file is under the directory the script started in, not under
    the new one."""
    (tmp_path / "elsewhere").mkdir()
    code = """
import os, subprocess, sys, cuptrace
assert cuptrace.activate(output="rel/%p.ctr")
with cuptrace.range("parent"):
    pass
os.chdir("elsewhere")
subprocess.run([sys.executable, "-c", "import cuptrace\\nwith cuptrace.range('child'): pass"],
               check=True)
"""
    p = run([python(), "-c", code], env=env_for(base_env()), cwd=tmp_path, timeout=120)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path)
    assert len(files) == 2 and {f.parent for f in files} == {tmp_path / "rel"}, files
    assert sorted(n for f in files for n in names(convert([f], tmp_path / "t.json"))) == \
        ["child", "parent"]


def test_shim_is_harmless_without_tracing(tmp_path):
    code = """
import cuptrace
with cuptrace.range("x"):
    cuptrace.step(); cuptrace.mark("m")
print(cuptrace.enabled())
"""
    p = py(code, base_env(CUPTRACE_TRACE="bogus!"))
    # A bad setting disables tracing with one line; the script runs on.
    assert p.returncode == 0 and p.stdout == "False\n"


@pytest.mark.skipif(not VENV_PY.exists(), reason="build/venv with the nvtx package not installed "
                    "(tests/install-deps.sh makes it)")
def test_nvtx_python_package(tmp_path):
    code = """
import nvtx
with nvtx.annotate("py outer", color="blue", domain="pydomain"):
    for i in range(5):
        with nvtx.annotate("py inner"):
            pass
    nvtx.mark("py mark")
rng = nvtx.start_range("py startend")
nvtx.end_range(rng)
@nvtx.annotate("py decorated")
def g(): pass
g()
"""
    p = run([VENV_PY, "-c", code], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    ev = doc["traceEvents"]
    outer = [e for e in ev if e.get("name") == "py outer" and e.get("ph") == "X"]
    assert len(outer) == 1 and outer[0]["args"]["domain"] == "pydomain"
    assert "color" in outer[0]["args"]
    assert sum(1 for e in ev if e.get("name") == "py inner" and e.get("ph") == "X") == 5
    assert any(e.get("name") == "py mark" for e in ev)
    assert any(e.get("name") == "py startend" and e.get("ph") == "b" for e in ev)
    assert any(e.get("name") == "py decorated" for e in ev)


TORCH_SCRIPT = """
import cuptrace, torch
torch.manual_seed(0)
torch.set_num_threads(2)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 64), torch.randint(0, 10, (256,))
for step in range(6):
    with cuptrace.range("train_step"):
        with cuptrace.range("forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with cuptrace.range("backward"):
            opt.zero_grad()
            loss.backward()
        with cuptrace.range("optimizer"):
            opt.step()
    cuptrace.step()
    print(f"{{step}} {{loss.item():.6f}}")
"""


def test_pytorch_training_loop(tmp_path):
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("python3-torch not installed")
    script = tmp_path / "train.py"
    script.write_text(TORCH_SCRIPT)
    plain = run([python(), script], env=env_for(base_env()), timeout=300)
    traced = run([python(), script], env=env_for(traced_env(tmp_path / "o")), timeout=300)
    assert plain.returncode == traced.returncode == 0, traced.stderr
    # Same losses, same output: tracing changes nothing the script computes.
    assert traced.stdout == plain.stdout and len(plain.stdout.splitlines()) == 6
    files = ctr_files(tmp_path / "o")
    assert len(files) == 1
    doc = convert(files, tmp_path / "t.json")
    n = names(doc)
    for r in ("train_step", "forward", "backward", "optimizer"):
        assert n.count(r) == 6, r
    steps = sorted(x for x in n if x.startswith("ProfilerStep#"))
    assert steps == [f"ProfilerStep#{i}" for i in range(1, 6)]


def test_names_decorators_and_exceptions(tmp_path):
    code = """
import cuptrace

@cuptrace.annotate()
def loss(x):
    "doc of loss"
    return x * 2

class Model:
    @cuptrace.annotate("model forward")
    def forward(self, x):
        return x + 1
    @cuptrace.annotate
    def bare(self):
        return 7

with cuptrace.range("données ✓ 日本"):
    cuptrace.mark("señal")
with cuptrace.range("lone \\udcff surrogate"):
    pass
try:
    with cuptrace.range("raises"):
        raise KeyError("k")
except KeyError:
    pass
with cuptrace.range("after"):
    pass
print(loss(3), Model().forward(1), Model().bare(), loss.__name__, loss.__doc__,
      loss.__wrapped__.__name__, Model.forward.__qualname__)
try:
    cuptrace.range(42)
except TypeError as e:
    print("TypeError", e)
"""
    p = py(code, traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "6 2 7 loss doc of loss loss Model.forward", "TypeError range name must be str, not int"]
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    n = names(doc)
    assert n.count("loss") == 1 and n.count("model forward") == 1 and n.count("Model.bare") == 1
    assert "données ✓ 日本" in n and "señal" in n and "lone ? surrogate" in n
    # The range an exception left is closed where the exception passed, and
    # the next range is not nested inside it.
    ev = {e["name"]: e for e in doc["traceEvents"] if e.get("ph") == "X"}
    raised, after = ev["raises"], ev["after"]
    assert raised["ts"] + raised["dur"] <= after["ts"]


def test_activate_rejects_bad_options_naming_them(tmp_path):
    code = """
import cuptrace
for opts in ({"delay": "soon"}, {"trace": "kernel,bogus"}, {"capture": "sometimes"},
             {"steps": "wait=x"}, {"colour": "red"}):
    try:
        cuptrace.activate(**opts)
        print("accepted", opts)
    except ValueError as e:
        print(e)
print(cuptrace.enabled())
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 6 and lines[-1] == "False"
    for line, key in zip(lines, ("delay", "trace", "capture", "steps", "colour")):
        assert key in line and not line.startswith("accepted"), line
    assert "CUPTRACE_DELAY=soon" in lines[0] and "bogus" in lines[1]


def test_every_library_variable_is_an_option(tmp_path):
    """activate()/profile() take every CUPTRACE_* variable the library
    reads (libtrace/config/config.c's list) as an option, and the library
    checks each value: a good one passes, a bad one is refused by name."""
    import json
    src = (ROOT / "libtrace" / "config" / "config.c").read_text()
    names = re.search(r"ct_config_vars\[\] = \{(.*?)\};", src, re.S).group(1)
    variables = sorted(set(re.findall(r'"(CUPTRACE_[A-Z_]+)"', names)))
    assert "CUPTRACE_HANG_TIMEOUT" in variables and "CUPTRACE_CLOCK" in variables
    code = """
import json, cuptrace
print(json.dumps(sorted(cuptrace._OPTIONS.values())))
for opts in ({"hang_timeout": 5}, {"clock": "tsc"}, {"hang_timeout": "never"}, {"clock": "sundial"}):
    try:
        cuptrace.check_options(opts)
        print("accepted")
    except ValueError as e:
        print(e)
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert json.loads(lines[0]) == variables
    assert lines[1:3] == ["accepted", "accepted"]
    assert "hang_timeout" in lines[3] and "clock" in lines[4], lines


def test_flush_hands_back_the_file(tmp_path):
    code = """
import cuptrace, os, sys
assert cuptrace.flush() is None          # nothing recorded yet: no file
with cuptrace.range("before flush"):
    pass
path = cuptrace.flush()
print(path)
sys.stdout.flush()
os.system(f"{sys.argv[1]} info {path} > {sys.argv[2]}")
"""
    p = run([python(), "-c", code, program(), tmp_path / "info.txt"],
            env=env_for(traced_env(tmp_path / "o")))
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / "o")
    assert [str(f) for f in files] == [p.stdout.strip()]
    # Read while the process still ran: the range was on disk already.
    info = (tmp_path / "info.txt").read_text()
    assert re.search(r"nvtx_push\s+1\s", info) and re.search(r"nvtx_pop\s+1\s", info), info


def test_untraced_costs_nothing_and_changes_nothing(tmp_path):
    code = """
import cuptrace
@cuptrace.annotate()
def f(a, b=1):
    return a + b
with cuptrace.range("x") as r:
    v = f(1, b=2)
cuptrace.mark("m"); cuptrace.step(); cuptrace.start(); cuptrace.stop()
print(cuptrace.enabled(), v, r.name, cuptrace.flush(), cuptrace.push("p"), cuptrace.pop())
"""
    p = py(code, base_env())
    assert p.returncode == 0 and p.stdout == "False 3 x None 0 0\n", p.stderr


def test_nvtx_package_and_cuptrace_in_one_trace(tmp_path):
    interp = python()
    if run([interp, "-c", "import nvtx"]).returncode != 0:
        if os.environ.get("CT_TEST_PY") or not VENV_PY.exists():
            pytest.skip("NVIDIA's nvtx package is not importable here")
        interp = VENV_PY
    code = """
import cuptrace, nvtx
for i in range(3):
    with nvtx.annotate("nvtx outer", color="red"):
        with cuptrace.range("cuptrace middle"):
            nvtx.push_range("nvtx inner")
            cuptrace.mark("cuptrace mark")
            nvtx.pop_range()
"""
    p = py(code, traced_env(tmp_path / "o"), interp=interp)
    assert p.returncode == 0, p.stderr
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    x = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            x.setdefault(e["name"], []).append(e)
    assert [len(x[n]) for n in ("nvtx outer", "cuptrace middle", "nvtx inner")] == [3, 3, 3]
    assert names(doc).count("cuptrace mark") == 3
    # One thread, one stack: each range lies inside the one opened before it.
    for outer, mid, inner in zip(x["nvtx outer"], x["cuptrace middle"], x["nvtx inner"]):
        assert outer["tid"] == mid["tid"] == inner["tid"]
        assert outer["ts"] <= mid["ts"] <= inner["ts"]
        assert inner["ts"] + inner["dur"] <= mid["ts"] + mid["dur"] <= outer["ts"] + outer["dur"]


def test_spawned_workers_are_in_their_ranks_split_file(tmp_path):
    """multiprocessing's spawn workers (DataLoader(multiprocessing_context=
    "spawn")) keep the rank's RANK; they join the rank's split file as
    processes of their own, as forked workers do, rather than rank files of
    their own beside it, of which HTA would keep one: a worker's."""
    code = """
import multiprocessing as mp
import cuptrace

def work(n):
    with cuptrace.range("worker"):
        pass
    return n

if __name__ == "__main__":
    with cuptrace.range("main"):
        with mp.get_context("spawn").Pool(2) as pool:
            assert pool.map(work, [1, 2, 3, 4]) == [1, 2, 3, 4]
"""
    script = tmp_path / "spawn_pool.py"  # spawn children import it again
    script.write_text(code)
    p = run([python(), script], env=env_for(traced_env(tmp_path / "o", RANK="0", WORLD_SIZE="1")),
            timeout=120)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) >= 2, files  # the main process and the workers that got work
    p = run([TOOL, "convert", "--split-ranks", tmp_path / "split", tmp_path / "o"])
    assert p.returncode == 0, p.stderr
    assert os.listdir(tmp_path / "split") == ["rank0.json"]
    doc = json.loads((tmp_path / "split" / "rank0.json").read_text())
    assert len(doc["cuptrace"]["files"]) == len(files)
    assert sorted(names(doc)) == ["main"] + ["worker"] * 4


def leaving_info(path):
    """`cuptrace info`'s status, how the process ended, and its pushes."""
    out = tool("info", path).stdout
    field = lambda name: next((l.split(":", 1)[1].strip() for l in out.splitlines()
                               if l.startswith(name + ":")), None)
    push = re.search(r"nvtx_push\s+(\d+)", out)
    return {"status": field("status"), "ended": field("ended"),
            "push": int(push.group(1)) if push else 0}


def test_a_forked_child_leaving_by_os_exit_under_activate_keeps_its_file(tmp_path):
    """activate() loads the library with dlopen, where it does not interpose
    _exit: a forked child that leaves through os._exit (as every
    multiprocessing and DataLoader worker does) has its file all the same,
    whole, its footer saying _exit."""
    code = f"""
import os, cuptrace
assert cuptrace.activate(output="{tmp_path}/o/%p.ctr")
pid = os.fork()  # before the parent's first event: no writer thread to fork (ASan)
if pid == 0:
    for i in range(100):
        with cuptrace.range("child"):
            pass
    os._exit(3)
_, status = os.waitpid(pid, 0)
with cuptrace.range("parent"):
    pass
print(os.waitstatus_to_exitcode(status))
"""
    p = py(code, base_env())
    assert p.returncode == 0 and p.stdout == "3\n" and p.stderr == "", p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 2, files
    by_end = {leaving_info(f)["ended"]: (f, leaving_info(f)) for f in files}
    assert sorted(by_end) == ["_exit(3)", "exit"], by_end
    child, info = by_end["_exit(3)"]
    assert info == {"status": "clean", "ended": "_exit(3)", "push": 100}, info
    assert names(convert([child], tmp_path / "c.json")) == ["child"] * 100


def test_a_multiprocessing_pool_under_activate_keeps_every_event(tmp_path):
    """Pool workers leave through os._exit: under activate() every range
    they recorded is in their files, not only the blocks their writer had
    put on disk before (one a second)."""
    code = f"""
import multiprocessing as mp
import cuptrace

def work(n):
    for i in range(n):
        with cuptrace.range("child work"):
            pass
    return n

if __name__ == "__main__":
    assert cuptrace.activate(output="{tmp_path}/o/%p.ctr")
    ctx = mp.get_context("fork")
    pool = ctx.Pool(2)
    assert pool.map(work, [300] * 4) == [300] * 4
    pool.close()
    pool.join()
    p = ctx.Process(target=work, args=(500,))
    p.start()
    p.join()
    assert p.exitcode == 0
"""
    p = py(code, base_env())
    assert p.returncode == 0 and p.stderr == "", p.stderr
    files = ctr_files(tmp_path / "o")
    infos = [leaving_info(f) for f in files]
    assert all(i["status"] == "clean" for i in infos), infos
    # The pool workers that got work and the process; the main process
    # recorded nothing.
    assert 2 <= len(infos) <= 3 and all(i["ended"] == "_exit(0)" for i in infos), infos
    assert sum(i["push"] for i in infos) == 4 * 300 + 500


FOLLOW = """
import os, sys, cuptrace
how, out = sys.argv[1], sys.argv[2]
if how == "profile":
    prof = cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=0, active=1, repeat=1),
                            output=out)
    prof.start()
    step = prof.step
else:
    if how == "activate":
        assert cuptrace.activate(output=out, steps="wait=1,warmup=0,active=1,repeat=1")
    step = cuptrace.step
go_r, go_w = os.pipe()
done_r, done_w = os.pipe()
pid = os.fork()  # in step 0, before the window
if pid == 0:
    for phase in ("before", "inside", "after"):
        os.read(go_r, 1)
        for i in range(10):
            with cuptrace.range(f"worker {phase}"):
                pass
        os.write(done_w, b"x")
    os._exit(0)
for i, phase in enumerate(("before", "inside", "after")):
    with cuptrace.range(f"parent {phase}"):
        os.write(go_w, b"x")
        os.read(done_r, 1)
    step()  # the window is step 1
if how == "profile":
    prof.stop()
os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("how", ["launcher", "activate", "profile"])
def test_a_child_forked_before_the_window_records_inside_it(tmp_path, how):
    """Workers have no steps of their own: a child forked in a step the
    schedule does not record (DataLoader workers are forked at the loop's
    start) records while its parent does, and only then."""
    script = tmp_path / "follow.py"
    script.write_text(FOLLOW)
    out = f"{tmp_path}/o/%p.ctr"
    env = base_env()
    if how == "launcher":
        env = traced_env(tmp_path / "o", CUPTRACE_STEPS="wait=1,warmup=0,active=1,repeat=1")
    p = run([python(), script, how, out], env=env_for(env), timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 2, files
    got = sorted(sorted(set(names(convert([f], tmp_path / f"{f.stem}.json"))) - {"ProfilerStep#1"})
                 for f in files)
    assert got == [["parent inside"], ["worker inside"]], got
    child = [f for f in files if leaving_info(f)["ended"] == "_exit(0)"]
    assert len(child) == 1 and leaving_info(child[0])["push"] == 10


def test_every_bad_option_is_refused_naming_it(tmp_path):
    """Each bad option (output=None, a NUL, delay=True, NaN, ...) raises
    ValueError naming it and what it expects, a TypeError too where the
    type is wrong; good values of each type are taken as the library reads
    them (1e-320, -0.0, a Path, bytes, a path that is not UTF-8)."""
    code = r"""
import cuptrace, pathlib
cases = [dict(output=None), dict(output=3), dict(output="a\0b"), dict(output="\ud800"),
         dict(trace=None), dict(trace=["nvtx"]), dict(log=b"info"), dict(steps=5),
         dict(delay=None), dict(delay=True), dict(delay=float("nan")), dict(duration=float("inf")),
         dict(delay=-1.5), dict(delay="soon"), dict(hang_timeout=0.01), dict(buffer_mb=1.5),
         dict(buffer_mb=False), dict(capture_repeat=-1), dict(ranks=None), dict(clock="x\0")]
for opts in cases:
    try:
        print("accepted", cuptrace.check_options(opts))
    except ValueError as e:  # every bad option, of a wrong type too
        print("TypeError" if isinstance(e, TypeError) else "ValueError", e)
for opts in (dict(delay=1e-320), dict(delay=-0.0), dict(delay=2), dict(duration=0.5),
             dict(buffer_mb=8), dict(ranks=0), dict(capture_repeat="3"),
             dict(output=pathlib.Path("/t/%p.ctr")), dict(output=b"/t/\xff.ctr"),
             dict(output="/t/\udcff.ctr")):
    print(cuptrace.check_options(opts))
"""
    p = py(code, base_env())
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    refused, accepted = lines[:20], lines[20:]
    want = [("TypeError", "output", "a path"), ("TypeError", "output", "a path"),
            ("ValueError", "output", "NUL"), ("ValueError", "output", "cannot be encoded"),
            ("TypeError", "trace", "expected a str"), ("TypeError", "trace", "expected a str"),
            ("TypeError", "log", "expected a str"), ("TypeError", "steps", "expected a str"),
            ("TypeError", "delay", "expected seconds"), ("TypeError", "delay", "expected seconds"),
            ("ValueError", "delay", "finite"), ("ValueError", "duration", "finite"),
            ("ValueError", "delay", "expected seconds >= 0"),
            ("ValueError", "delay", "expected seconds >= 0"),
            ("ValueError", "hang_timeout", "expected seconds >= 0.1"),
            ("TypeError", "buffer_mb", "expected an int"),
            ("TypeError", "buffer_mb", "expected an int"),
            ("ValueError", "capture_repeat", "expected a whole number"),
            ("TypeError", "ranks", "expected an int"), ("ValueError", "clock", "NUL")]
    for line, (kind, key, what) in zip(refused, want):
        assert line.startswith(f"{kind} cuptrace: option {key}=") and what in line, (line, key)
    assert accepted == [
        "{'CUPTRACE_DELAY': '1e-320'}", "{'CUPTRACE_DELAY': '0'}", "{'CUPTRACE_DELAY': '2'}",
        "{'CUPTRACE_DURATION': '0.5'}", "{'CUPTRACE_BUFFER_MB': '8'}", "{'CUPTRACE_RANKS': '0'}",
        "{'CUPTRACE_CAPTURE_REPEAT': '3'}", "{'CUPTRACE_OUTPUT': '/t/%p.ctr'}",
        "{'CUPTRACE_OUTPUT': '/t/\\udcff.ctr'}", "{'CUPTRACE_OUTPUT': '/t/\\udcff.ctr'}"], accepted


def test_activate_writes_to_a_path_that_is_not_utf8(tmp_path):
    code = f"""
import os, cuptrace
assert cuptrace.activate(output=os.fsencode({str(tmp_path)!r}) + b"/\\xff/%p.ctr")
with cuptrace.range("r"):
    pass
"""
    p = run([python(), "-c", code], env=env_for(base_env()), cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    files = ctr_files(tmp_path)
    assert [os.fsencode(f.parent.name) for f in files] == [b"\xff"], files
    assert names(convert(files, tmp_path / "t.json")) == ["r"]


def copy_of_the_package(into):
    """python_shim/cuptrace as built in place, copied into `into`."""
    import shutil
    dest = into / "cuptrace"
    shutil.copytree(ROOT / "python_shim" / "cuptrace", dest,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_a_missing_extension_is_named(tmp_path):
    """Without its compiled extension the package's ImportError says which
    file is missing, and where (not Python's "circular import")."""
    pkg = copy_of_the_package(tmp_path)
    for ext in pkg.glob("_cuptrace*.so"):
        ext.unlink()
    env = dict(base_env(), PYTHONPATH=str(tmp_path))
    p = run([PYTHON, "-c", "import cuptrace"], env=env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    last = p.stderr.splitlines()[-1]
    assert "circular" not in p.stderr, p.stderr
    assert last.startswith("ImportError: cuptrace: its compiled extension is missing: no "
                           "_cuptrace.cpython-") and str(pkg) in last, last
