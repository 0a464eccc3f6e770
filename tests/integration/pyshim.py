# SPDX-License-Identifier: MIT
"""Which `cuptrace` Python package the tests use, under which Python (and
so which torch): by default the source tree (PYTHONPATH=python_shim, its
extensions built in place by `make pyext`, its cuptrace-auto.pth in a user
site of build/) under /usr/bin/python3 (Debian's torch 1.13); with
CT_TEST_PY=/venv/bin/python the package pip installed into that venv
(test_python_install.py runs the Python tests that way).
CT_TEST_PYTHON=PATH: the interpreter for the source tree's package, and the
one test_python_install.py builds the wheel with and installs it for
(`make test` runs that file first with build/venv's Python, PyPI's torch
2.x: tests/tests.mk). Under another torch than the one `make pyext` built
for, the package builds its C++ modules for that torch into TORCH_CACHE
(cuptrace/_torchbuild.py), as it does for a user. test_python_torch_ops.py
picks its interpreters itself (Debian's and build/venv's)."""
import os
from pathlib import Path

from conftest import PYTHON, ROOT, SAN, preload

SHIM = ROOT / "python_shim"
INSTALLED = os.environ.get("CT_TEST_PY", "")
BUILD_PYTHON = os.environ.get("CT_TEST_PYTHON", "") or PYTHON


def python():
    """The interpreter that imports the package under test."""
    return INSTALLED or BUILD_PYTHON


# Where the package builds its C++ modules for a torch it has none for
# (cuptrace/_torchbuild.py): under build/, kept between runs, never ~/.cache.
TORCH_CACHE = ROOT / "build" / "torch-cache"


def user_site():
    """A user base whose site-packages (every Python 3 minor) holds the
    package's cuptrace-auto.pth, as an installed package's has: a traced
    script that never imports cuptrace gets its steps and its torch source
    from the source tree too."""
    base = ROOT / "build" / "pyshim-user"
    for minor in range(10, 16):
        site = base / "lib" / f"python3.{minor}" / "site-packages"
        site.mkdir(parents=True, exist_ok=True)
        pth = site / "cuptrace-auto.pth"
        text = (SHIM / "cuptrace-auto.pth").read_text()
        if not pth.exists() or pth.read_text() != text:
            pth.write_text(text)
    return base


def env_for(env):
    """env with the package importable (source tree: PYTHONPATH, and its
    .pth through the user site). In sanitizer builds (make test-san) the
    source tree's extension is built with the sanitizer: its runtime must
    be loaded first, traced or not."""
    env = dict(env)
    env.setdefault("CUPTRACE_TORCH_CACHE", str(TORCH_CACHE))
    if not INSTALLED:
        env["PYTHONPATH"] = str(SHIM)
        env["PYTHONUSERBASE"] = str(user_site())
        if "address" in SAN or "thread" in SAN:
            rt = preload().split(":")[0]
            have = env.get("LD_PRELOAD", "")
            if rt not in have.split(":"):
                env["LD_PRELOAD"] = f"{rt}:{have}" if have else rt
            # Python's objects from malloc, not from its own arenas: the
            # sanitizer then sees the extension's objects overrun or freed.
            env["PYTHONMALLOC"] = "malloc"
    return env


def program():
    """The `cuptrace` command of the package under test."""
    if INSTALLED:
        return str(Path(INSTALLED).parent / "cuptrace")
    return str(ROOT / "build" / "bin" / "cuptrace")


def user_names(doc, phases=("X", "i")):
    return [e["name"] for e in doc["traceEvents"]
            if e.get("ph") in phases and e.get("cat") == "user_annotation"]
