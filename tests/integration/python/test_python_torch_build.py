# SPDX-License-Identifier: MIT
"""How the package gets its C++ modules for the torch in use
(cuptrace/_torchbuild.py): the one built with the package when it is for
this torch, silently; else one built for this torch into the cache
(CUPTRACE_TORCH_CACHE), once however many processes import torch at once,
said in one line; else none, said in one line, the program unharmed.
A copy of the source tree's package stands for an installed one whose
modules are for another torch or missing. Debian's torch (1.13)."""
import shutil
import subprocess

import pytest

from conftest import PROGS, PYTHON, ROOT, ctr_files, launcher_env, run
from pyshim import INSTALLED, SHIM, env_for, program

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(bool(INSTALLED), reason="copies the source tree's package")

HAS_HEADERS = run([PYTHON, SHIM / "cuptrace" / "_torchbuild.py", "--check"],
                  timeout=120).returncode == 0
PROG = """
import torch
print(float(torch.relu(torch.ones(3) * 2).sum()))
"""


def package(tmp_path, prebuilt):
    """The package as a wheel installs it, in tmp_path/pkg: with its
    modules for another torch (prebuilt="other"), or without (None)."""
    dst = tmp_path / "pkg" / "cuptrace"
    shutil.copytree(SHIM / "cuptrace", dst, ignore=shutil.ignore_patterns(
        "__pycache__", "_torchops*.so", "_torchhooks*.so", "*.version"))
    (dst / "include" / "cuptrace").mkdir(parents=True)
    shutil.copy(ROOT / "include" / "cuptrace" / "torch_abi.h", dst / "include" / "cuptrace")
    if prebuilt == "other":
        for name in ("_torchops", "_torchhooks"):
            for so in SHIM.glob(f"cuptrace/{name}.*.so"):
                shutil.copy(so, dst)
            (dst / f"{name}.version").write_text("0.0.1 cxx11\n")
    return dst.parent


def env(tmp_path, pkg, **extra):
    e = env_for(launcher_env(**extra))
    e["PYTHONPATH"] = str(pkg)
    e["CUPTRACE_TORCH_CACHE"] = str(tmp_path / "cache")
    return e


def cmd(tmp_path, i):
    prog = tmp_path / "prog.py"
    prog.write_text(PROG)
    return [program(), "run", "-t", "torch", "-o", f"{tmp_path}/o{i}/", "--", PYTHON, prog]


def ops(tmp_path, i):
    files = ctr_files(tmp_path / f"o{i}")
    if not files:
        return 0
    p = run([PROGS / "ctr_records", files[0], "torch_op"], check=True)
    return len(p.stdout.splitlines()) - 1


@pytest.mark.skipif(not HAS_HEADERS, reason="torch has no C++ headers here (libtorch-dev)")
def test_modules_for_another_torch_are_built_once_for_this_one(tmp_path):
    """The package's modules are for torch 0.0.1 (a torch upgraded under an
    installed package): three traced processes importing torch at once
    build the observer once into the cache, one line says so (and why, and
    how to have it built with the package), the others say they wait; all
    three record operators. The next process loads it silently."""
    pkg = package(tmp_path, "other")
    e = env(tmp_path, pkg)
    procs = [subprocess.Popen([str(a) for a in cmd(tmp_path, i)], env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(3)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert all(o[0] == "6.0\n" for o in outs), outs
    lines = [ln for o in outs for ln in o[1].splitlines()]
    building = [ln for ln in lines if ln.startswith("cuptrace: building cuptrace._torchops")]
    waiting = [ln for ln in lines if ln.startswith("cuptrace: waiting for another process")]
    assert len(building) == 1 and len(building) + len(waiting) == len(lines), lines
    assert f"for torch {torch.__version__} into {tmp_path / 'cache'}" in building[0]
    assert "the package's is for torch 0.0.1 cxx11" in building[0]
    assert "pip install --no-build-isolation ./python_shim" in building[0]
    assert all(ops(tmp_path, i) > 0 for i in range(3))
    built = list((tmp_path / "cache").glob("torch-*/_torchops.*.so"))
    assert len(built) == 1 and built[0].parent.name.startswith(f"torch-{torch.__version__}-")
    p = run(cmd(tmp_path, 3), env=e, timeout=300)
    assert p.returncode == 0 and p.stderr == "" and ops(tmp_path, 3) > 0, p.stderr
    assert list((tmp_path / "cache").glob("torch-*/_torchops.*.so")) == built


def test_no_compiler_costs_one_line_and_nothing_else(tmp_path):
    """No module for this torch and no compiler: the program runs as it
    would, one line says that operators are not recorded and why, nothing
    is recorded; import cuptrace.torch falls back to the tensor hooks with
    one line too."""
    pkg = package(tmp_path, None)
    e = env(tmp_path, pkg, CXX="/nonexistent/c++")
    p = run(cmd(tmp_path, 0), env=e, timeout=300)
    assert p.returncode == 0 and p.stdout == "6.0\n", p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "cuptrace: warning: torch operators are not recorded: cannot build cuptrace._torchops "
        f"for torch {torch.__version__}: "), lines
    assert "no C++ compiler: /nonexistent/c++ not found" in lines[0] or not HAS_HEADERS, lines
    assert ops(tmp_path, 0) == 0
    code = "import cuptrace.torch as t; print(t.backward_hooks)"
    q = run([PYTHON, "-c", code], env=e, timeout=300)
    assert q.returncode == 0 and q.stdout.split() == ["tensor"], q.stderr
    assert len(q.stderr.splitlines()) == 1 and q.stderr.startswith(
        "cuptrace: warning: backward ranges use tensor hooks instead"), q.stderr


def test_modules_built_with_the_package_load_silently(tmp_path):
    """The source tree's modules are built for this torch (make pyext, as
    pip install --no-build-isolation builds them): no line, no cache."""
    if not (SHIM / "cuptrace" / "_torchops.version").exists():
        pytest.skip("make pyext built no torch modules here (no torch C++ headers)")
    e = env_for(launcher_env())
    e["CUPTRACE_TORCH_CACHE"] = str(tmp_path / "cache")
    p = run(cmd(tmp_path, 0), env=e, timeout=300)
    assert p.returncode == 0 and p.stderr == "" and ops(tmp_path, 0) > 0, p.stderr
    assert not (tmp_path / "cache").exists()


@pytest.mark.skipif(not HAS_HEADERS, reason="torch has no C++ headers here (libtorch-dev)")
def test_a_build_that_failed_is_not_tried_again_by_every_process(tmp_path):
    """The compiler fails: the first process says it builds, then that it
    could not (with the compiler's output kept in the cache); the next ones
    say only that, from the cache, without compiling again."""
    pkg = package(tmp_path, None)
    e = env(tmp_path, pkg, CXX="false")
    p = run(cmd(tmp_path, 0), env=e, timeout=300)
    assert p.returncode == 0 and p.stdout == "6.0\n", p.stderr
    first = p.stderr.splitlines()
    assert len(first) == 2 and first[0].startswith("cuptrace: building cuptrace._torchops"), first
    assert first[1].startswith("cuptrace: warning: torch operators are not recorded: cannot build")
    assert "false failed on _torchops.cpp" in first[1] and "_torchops.log" in first[1], first
    q = run(cmd(tmp_path, 1), env=e, timeout=300)
    assert q.returncode == 0 and q.stdout == "6.0\n", q.stderr
    again = q.stderr.splitlines()
    assert len(again) == 1 and again[0].startswith(first[1]) and "to try again" in again[0], again
    assert ops(tmp_path, 0) == ops(tmp_path, 1) == 0
