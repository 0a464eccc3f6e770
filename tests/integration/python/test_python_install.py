# SPDX-License-Identifier: MIT
"""The package as a new user gets it: the wheel that `pip install
./python_shim` builds (`pip wheel`, once for this file) installed into a
clean venv (--system-site-packages for Debian's torch and setuptools; no
network: --no-index --no-build-isolation), then the Python tests run against
the installed package (CT_TEST_PY), its `cuptrace` program included.
CT_TEST_PYTHON=build/venv/bin/python (tests/tests.mk does this first): the
same with that venv's Python and its torch (PyPI's 2.x), as a user of that
torch installs the package; of the Python tests, those that use torch."""
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import PYTHON as SYSTEM_PYTHON
from conftest import ROOT, SAN, base_env, run
from pyshim import BUILD_PYTHON as PYTHON

# CT_TEST_PYTHON names another Python than the suite's (build/venv's: the
# same CPython, another torch): there the tests that depend on torch run,
# the others have run under the suite's Python already.
ANOTHER = PYTHON != SYSTEM_PYTHON

SHIM = ROOT / "python_shim"

# pip builds the package's library, program and extensions without the
# sanitizer (setup.py), so under make test-san these tests would run the
# release build that make test has tested already: they run there only.
pytestmark = pytest.mark.skipif(bool(SAN), reason="pip builds the package without the "
                                "sanitizer: packaging is make test's")


def pip_wheel(into, env):
    """`pip wheel ./python_shim` as a user builds it (no network)."""
    p = run([PYTHON, "-m", "pip", "wheel", "-q", "--no-index", "--no-build-isolation",
             "--no-deps", "-w", into, SHIM], env=env, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    wheels = list(Path(into).glob("cuptrace-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel `pip install ./python_shim` builds and installs (built once
    for this file's tests: each build compiles the C++ hooks against
    torch's headers, about 20 s)."""
    return pip_wheel(tmp_path_factory.mktemp("wheel"), base_env())


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel):
    d = tmp_path_factory.mktemp("venv")
    p = run([PYTHON, "-m", "venv", "--system-site-packages", d], timeout=300)
    if p.returncode != 0:
        pytest.skip(f"python3 -m venv failed (python3-venv missing?): {p.stderr}")
    see_the_packages_of(PYTHON, d)
    env = base_env()
    env.pop("PYTHONPATH", None)
    p = run([d / "bin" / "pip", "install", "-q", "--no-index", "--no-deps", wheel],
            env=env, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    return d


def see_the_packages_of(python, venv):
    """A venv made by a venv's Python sees the system's packages, not that
    venv's: a .pth file adds the building venv's (its torch), after the new
    venv's own and before the system's."""
    code = ("import sys, sysconfig; "
            "print(sys.prefix != sys.base_prefix, sysconfig.get_paths()['purelib'])")
    inner, purelib = run([python, "-c", code], check=True).stdout.split()
    if inner == "True":
        mine = run([venv / "bin" / "python", "-c", code], check=True).stdout.split()[1]
        (Path(mine) / "building-venv.pth").write_text(purelib + "\n")


def test_installed_package_carries_library_and_program(venv, tmp_path):
    py = venv / "bin" / "python"
    env = base_env()
    env.pop("PYTHONPATH", None)
    # Run from elsewhere: nothing of the checkout is on the path.
    p = run([py, "-c", "import cuptrace; print(cuptrace.__file__); print(cuptrace.library_path());"
             " print(cuptrace.program_path())"], env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    mod, lib, prog = p.stdout.splitlines()
    site = str(venv)
    assert mod.startswith(site) and lib.startswith(site) and prog.startswith(site), p.stdout
    assert lib.endswith("cuptrace/lib/libcuptrace.so") and prog.endswith("cuptrace/bin/cuptrace")
    # The console script and `python -m cuptrace` are the same program.
    a = run([venv / "bin" / "cuptrace", "--version"], env=env)
    b = run([py, "-m", "cuptrace", "--version"], env=env)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and "cuptrace" in a.stdout
    h = run([py, "-m", "cuptrace", "run", "--help"], env=env)
    assert h.returncode == 0 and "CUPTRACE_" in h.stdout + h.stderr


def test_installed_package_passes_the_python_tests(venv):
    env = dict(os.environ, CT_TEST_PY=str(venv / "bin" / "python"))
    env.pop("PYTHONPATH", None)
    tests = ROOT / "tests" / "integration" / "python"
    # pytest under the same Python: the tests compare with its torch. From
    # tests/: nothing of the checkout's root on the path; --confcutdir: a
    # pytest >= 8 (a venv's) reads tests/integration/conftest.py only so.
    files = [str(tests / "test_python_torch.py"), str(tests / "test_python_profiler.py")]
    # Under another Python, test_python.py's own tests depend on Python
    # alone (but for its training loop), and test_python_torch_ops.py runs
    # under build/venv's torch already (its interpreters).
    if ANOTHER:
        files.append(str(tests / "test_python.py") + "::test_pytorch_training_loop")
    else:
        files += [str(tests / "test_python.py"), str(tests / "test_python_torch_ops.py")]
    p = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confcutdir",
                        str(tests.parent), *files],
                       env=env, capture_output=True, text=True, timeout=1200, cwd=tests)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert " passed" in p.stdout and " failed" not in p.stdout


def test_wheel_holds_what_the_package_needs(wheel):
    env = base_env()
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry = [n for n in names if n.endswith("entry_points.txt")]
        assert entry and "cuptrace = cuptrace.__main__:main" in z.read(entry[0]).decode()
    # The sources of the torch modules and the header they include, for a
    # build at first use under another torch.
    for want in ("cuptrace/lib/libcuptrace.so", "cuptrace/bin/cuptrace", "cuptrace-auto.pth",
                 "cuptrace/torch.py", "cuptrace/__main__.py", "cuptrace/_torchbuild.py",
                 "cuptrace/_torchops.cpp", "cuptrace/_torchops_text.cpp",
                 "cuptrace/_torchops_mem.cpp", "cuptrace/_torchops_frames.c",
                 "cuptrace/_torchops.h", "cuptrace/_torchhooks.cpp", "cuptrace/_torchhooks.h",
                 "cuptrace/include/cuptrace/torch_abi.h"):
        assert want in names, (want, names)
    assert any(n.startswith("cuptrace/_cuptrace") and n.endswith(".so") for n in names)
    # The C++ modules for torch, built with the package where this Python's
    # torch has its headers, each with the torch it is for.
    has_torch = run([PYTHON, SHIM / "cuptrace" / "_torchbuild.py", "--check"],
                    env=env).returncode == 0
    for mod in ("_torchhooks", "_torchops"):
        assert any(n.startswith(f"cuptrace/{mod}.") and n.endswith(".so")
                   for n in names) == has_torch, names
        assert (f"cuptrace/{mod}.version" in names) == has_torch, names


def test_wheel_built_without_torch_carries_no_torch_modules(wheel, tmp_path):
    """A build that sees no torch (pip's build isolation does that) packs no
    compiled torch module, even when an earlier build with torch (the
    `wheel` fixture's, just before) left them in the shared build directory
    (they would be modules for another torch); their sources it packs."""
    if ANOTHER:
        pytest.skip(f"the same build for any torch: tested under {SYSTEM_PYTHON}")
    if run([PYTHON, SHIM / "cuptrace" / "_torchbuild.py", "--check"],
           env=base_env()).returncode != 0:
        pytest.skip("no torch C++ headers here: no earlier build with _torchhooks to leave one")
    env = base_env()
    # A torch that cannot be imported, first on the path of the build.
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no torch in this build')\n")
    env["PYTHONPATH"] = str(fake.parent)
    without = pip_wheel(tmp_path / "without", env)
    names = {}
    for kind, whl in (("with", wheel), ("without", without)):
        with zipfile.ZipFile(whl) as z:
            names[kind] = [n for n in z.namelist() if "/_torch" in n and
                           n.endswith((".so", ".version"))]
    assert len(names["with"]) == 4 and names["without"] == [], names


def test_steps_from_optimizers_of_a_script_that_never_imports_cuptrace(venv, tmp_path):
    """The installed cuptrace-auto.pth: under `cuptrace run --steps`, a plain
    torch script's optimizer steps drive the schedule."""
    pytest.importorskip("torch")
    script = tmp_path / "plain.py"
    script.write_text("""
import torch
m = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(8):
    m(torch.ones(2, 4)).sum().backward()
    opt.step()
""")
    env = base_env()
    env.pop("PYTHONPATH", None)
    p = run([venv / "bin" / "cuptrace", "run", "-o", f"{tmp_path}/o/%p.ctr", "--steps",
             "skip_first=1,wait=1,warmup=1,active=2,repeat=1", "--", venv / "bin" / "python",
             script], env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    files = list((tmp_path / "o").glob("*.ctr"))
    assert len(files) == 1
    out = tmp_path / "t.json"
    c = run([venv / "bin" / "cuptrace", "convert", "-o", out, files[0]], env=env)
    assert c.returncode == 0, c.stderr
    import json
    doc = json.loads(out.read_text())
    steps = sorted(e["name"] for e in doc["traceEvents"] if e.get("name", "").startswith(
        "ProfilerStep#") and e.get("ph") == "X")
    # torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=1): steps 3, 4.
    assert steps == ["ProfilerStep#3", "ProfilerStep#4"]


@pytest.mark.parametrize("missing,asks", [("package", "steps"), ("extension", "steps"),
                                          ("package", "torch")])
def test_a_half_removed_package_costs_one_line(tmp_path, missing, asks):
    """With the package gone (or its compiled extension), a Python started
    under the library with CUPTRACE_STEPS (or the torch source) runs as it
    would, and one line says what is missing: one, though a venv's
    site-packages is seen twice (again through lib64), and no traceback."""
    import shutil
    d = tmp_path / "venv"
    p = run([PYTHON, "-m", "venv", "--without-pip", d], timeout=120)
    if p.returncode != 0:
        pytest.skip(f"python3 -m venv failed (python3-venv missing?): {p.stderr}")
    py = d / "bin" / "python"
    site = Path(run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    check=True).stdout.strip())
    shutil.copy(SHIM / "cuptrace-auto.pth", site)
    if missing == "extension":
        shutil.copytree(SHIM / "cuptrace", site / "cuptrace",
                        ignore=shutil.ignore_patterns("__pycache__", "_cuptrace*.so"))
    var, value = ("CUPTRACE_STEPS", "wait=1,active=1") if asks == "steps" else \
        ("CUPTRACE_TRACE", "nvtx,torch")
    env = base_env(LD_PRELOAD=ROOT / "build" / "lib" / "libcuptrace.so",
                   CUPTRACE_OUTPUT=f"{tmp_path}/o/%p.ctr", **{var: value})
    env.pop("PYTHONPATH", None)
    p = run([py, "-c", "print('the program runs')"], env=env, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == "the program runs\n", p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "cuptrace: warning: the process traces torch (CUPTRACE_STEPS or CUPTRACE_TRACE=torch) "
        "but cuptrace-auto.pth cannot import"), p.stderr
    assert ("No module named 'cuptrace'" if missing == "package" else
            "its compiled extension is missing") in lines[0], lines[0]
    # Without either the line does not even look.
    env.pop(var)
    p = run([py, "-c", "print('the program runs')"], env=env, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == "the program runs\n" and p.stderr == "", p.stderr


# C API names of Python 3.9 and later that the package's C might use, by
# the version that added them (the limited API's and the documented ones).
NEWER_API = {
    (3, 9): ["PyObject_CallNoArgs", "PyObject_CallOneArg", "PyObject_CallMethodNoArgs",
             "PyObject_CallMethodOneArg", "PyObject_Vectorcall", "PyObject_VectorcallDict",
             "PyObject_VectorcallMethod", "Py_TPFLAGS_HAVE_VECTORCALL", "PyType_GetModule",
             "PyType_FromModuleAndSpec", "PyModule_AddType", "PyFrame_GetCode", "Py_SET_TYPE",
             "Py_SET_SIZE", "Py_SET_REFCNT", "PyInterpreterState_Get"],
    (3, 10): ["Py_NewRef", "Py_XNewRef", "PyModule_AddObjectRef", "Py_Is", "Py_IsNone",
              "Py_IsTrue", "Py_IsFalse", "PyIter_Send", "Py_TPFLAGS_IMMUTABLETYPE",
              "Py_TPFLAGS_DISALLOW_INSTANTIATION"],
    (3, 11): ["PyType_GetModuleByDef", "PyFrame_GetLocals", "PyFrame_GetGlobals", "Py_Version"],
    (3, 12): ["PyErr_GetRaisedException", "PyErr_SetRaisedException", "PyType_FromMetaclass",
              "PyObject_GetTypeData", "Py_TPFLAGS_MANAGED_DICT"],
    (3, 13): ["PyDict_GetItemRef", "PyObject_GetOptionalAttr", "PyList_GetItemRef",
              "PyLong_AsInt", "PyModule_Add", "PyWeakref_GetRef", "PyImport_AddModuleRef",
              "PyObject_HasAttrWithError", "PyDict_Pop", "PyMapping_GetOptionalItem"],
}


def test_the_declared_python_is_the_one_the_code_needs():
    """setup.py's python_requires is the newest Python whose C API the
    package's C uses (a build for an older one fails to compile), the
    extension's header refuses an older one with the same version, and the
    package's Python parses with that version's grammar."""
    import ast
    import re
    setup = (SHIM / "setup.py").read_text()
    declared = tuple(int(x) for x in re.search(r'python_requires=">=(\d+)\.(\d+)"', setup).groups())
    c = "".join(p.read_text() for p in sorted((SHIM / "cuptrace").glob("*.[ch]")) +
                sorted((SHIM / "cuptrace").glob("*.cpp")))
    used = {name: v for v, names in NEWER_API.items() for name in names
            if re.search(rf"\b{name}\b", c)}
    assert all(v <= declared for v in used.values()), (declared, used)
    assert max(used.values(), default=(3, 8)) == declared, (declared, used)
    guard = re.search(r"PY_VERSION_HEX < 0x(\w{2})(\w{2})0000", (SHIM / "cuptrace" /
                                                                  "_cuptrace.h").read_text())
    assert guard and (int(guard[1], 16), int(guard[2], 16)) == declared
    for py in sorted((SHIM / "cuptrace").glob("*.py")) + [SHIM / "setup.py"]:
        ast.parse(py.read_text(), str(py), feature_version=declared)
