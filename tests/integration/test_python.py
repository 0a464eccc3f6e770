"""Python: the control API through ctypes (the cuptrace module of
python_shim/), NVIDIA's `nvtx` package, and activation from a script."""
import os
import subprocess

import pytest

from conftest import PYTHON, ROOT, base_env, convert, ctr_files, preload, run, traced_env

SHIM = ROOT / "python_shim"
VENV_PY = ROOT / "build" / "venv" / "bin" / "python"


def py(code, env, python=PYTHON):
    env = dict(env, PYTHONPATH=str(SHIM))
    return run([python, "-c", code], env=env)


def names(doc):
    return [e["name"] for e in doc["traceEvents"]
            if e.get("ph") in ("X", "i") and e.get("cat") == "user_annotation"]


def test_control_api_through_ctypes(tmp_path):
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
    if os.environ.get("CT_TEST_SAN"):
        pytest.skip("a sanitizer-built library cannot be dlopen'ed into a plain interpreter")
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


def test_shim_is_harmless_without_tracing(tmp_path):
    if os.environ.get("CT_TEST_SAN"):
        pytest.skip("a sanitizer-built library cannot be dlopen'ed into a plain interpreter")
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
import sys
sys.path.insert(0, {shim!r})
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
    if os.environ.get("CT_TEST_SAN"):
        pytest.skip("the untraced run loads the sanitizer-built library into a plain interpreter")
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("python3-torch not installed")
    script = tmp_path / "train.py"
    script.write_text(TORCH_SCRIPT.format(shim=str(SHIM)))
    plain = run([PYTHON, script], env=base_env(), timeout=300)
    traced = run([PYTHON, script], env=traced_env(tmp_path / "o"), timeout=300)
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
