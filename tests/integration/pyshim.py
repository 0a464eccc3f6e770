"""Which `cuptrace` Python package the tests use: by default the source tree
(PYTHONPATH=python_shim, its extension built in place by `make pyext`);
with CT_TEST_PY=/venv/bin/python the package pip installed into that venv
(test_python_install.py runs the Python tests that way)."""
import os
from pathlib import Path

from conftest import PYTHON, ROOT

SHIM = ROOT / "python_shim"
INSTALLED = os.environ.get("CT_TEST_PY", "")


def python():
    """The interpreter that imports the package under test."""
    return INSTALLED or PYTHON


def env_for(env):
    """env with the package importable (source tree: PYTHONPATH)."""
    env = dict(env)
    if not INSTALLED:
        env["PYTHONPATH"] = str(SHIM)
    return env


def program():
    """The `cuptrace` command of the package under test."""
    if INSTALLED:
        return str(Path(INSTALLED).parent / "cuptrace")
    return str(ROOT / "build" / "bin" / "cuptrace")


def user_names(doc, phases=("X", "i")):
    return [e["name"] for e in doc["traceEvents"]
            if e.get("ph") in phases and e.get("cat") == "user_annotation"]
