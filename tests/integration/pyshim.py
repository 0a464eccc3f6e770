# SPDX-License-Identifier: MIT
"""Which `cuptrace` Python package the tests use: by default the source tree
(PYTHONPATH=python_shim, its extension built in place by `make pyext`);
with CT_TEST_PY=/venv/bin/python the package pip installed into that venv
(test_python_install.py runs the Python tests that way)."""
import os
from pathlib import Path

from conftest import PYTHON, ROOT, SAN, preload

SHIM = ROOT / "python_shim"
INSTALLED = os.environ.get("CT_TEST_PY", "")


def python():
    """The interpreter that imports the package under test."""
    return INSTALLED or PYTHON


def env_for(env):
    """env with the package importable (source tree: PYTHONPATH). In
    sanitizer builds (make test-san) the source tree's extension is built
    with the sanitizer: its runtime must be loaded first, traced or not."""
    env = dict(env)
    if not INSTALLED:
        env["PYTHONPATH"] = str(SHIM)
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
