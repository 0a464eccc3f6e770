# SPDX-License-Identifier: MIT
"""The ctypes shim that python_shim/ was before the C extension (as of
d799aa3), kept for bench/figures/python.py to compare against; not used otherwise.

cuptrace from Python: annotations and capture control.

    import cuptrace
    cuptrace.activate(output="traces/%h-%p.ctr")   # optional: trace without a launcher
    with cuptrace.range("forward"):
        ...
    cuptrace.step()

Works whether the process was started by `cuptrace run` / LD_PRELOAD (the
library is already loaded) or not (activate() loads it). Every function is a
cheap no-op when tracing is off or the library cannot be found.
"""
import contextlib
import ctypes
import functools
import os

__all__ = ["activate", "enabled", "start", "stop", "step", "push", "pop", "mark", "range",
           "library_path"]

_OPTIONS = {
    "output": "CUPTRACE_OUTPUT", "trace": "CUPTRACE_TRACE", "ranks": "CUPTRACE_RANKS",
    "delay": "CUPTRACE_DELAY", "duration": "CUPTRACE_DURATION", "capture": "CUPTRACE_CAPTURE",
    "capture_repeat": "CUPTRACE_CAPTURE_REPEAT", "steps": "CUPTRACE_STEPS",
    "step_range": "CUPTRACE_STEP_RANGE", "buffer_mb": "CUPTRACE_BUFFER_MB", "log": "CUPTRACE_LOG",
}

_lib = None


def library_path():
    """The libcuptrace.so this process uses or would use."""
    for entry in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":"):
        if entry.endswith("libcuptrace.so"):
            return entry
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "libcuptrace.so"),
                 os.path.join(here, "..", "..", "build", "lib", "libcuptrace.so")):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return "libcuptrace.so"


def _load():
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL(library_path(), mode=ctypes.RTLD_GLOBAL)
        except OSError:
            _lib = False
            return _lib
        lib.cuptrace_range_push.argtypes = [ctypes.c_char_p]
        lib.cuptrace_range_push.restype = ctypes.c_int
        lib.cuptrace_range_pop.restype = ctypes.c_int
        lib.cuptrace_mark.argtypes = [ctypes.c_char_p]
        lib.cuptrace_enabled.restype = ctypes.c_int
        _lib = lib
    return _lib


def activate(**options):
    """Turn tracing on from inside the script, before CUDA or NVTX are first
    used. Options are the launcher's (output=, trace=, capture=, steps=, ...),
    stored in the matching CUPTRACE_* variables. Returns enabled()."""
    for key, value in options.items():
        if key not in _OPTIONS:
            raise TypeError(f"unknown option {key!r} (known: {', '.join(sorted(_OPTIONS))})")
        os.environ[_OPTIONS[key]] = str(value)
    lib = _load()
    if not lib:
        return False
    # The library pointed NVTX and CUDA at itself in the C environment; let
    # child processes started from Python (multiprocessing spawn) inherit
    # tracing.
    path = library_path()
    if os.path.exists(path):
        os.environ.setdefault("NVTX_INJECTION64_PATH", os.path.abspath(path))
        os.environ.setdefault("CUDA_INJECTION64_PATH", os.path.abspath(path))
    return enabled()


def enabled():
    lib = _load()
    return bool(lib and lib.cuptrace_enabled())


def start():
    lib = _load()
    if lib:
        lib.cuptrace_start()


def stop():
    lib = _load()
    if lib:
        lib.cuptrace_stop()


def step():
    lib = _load()
    if lib:
        lib.cuptrace_step()


def push(name):
    lib = _load()
    return lib.cuptrace_range_push(name.encode()) if lib else 0


def pop():
    lib = _load()
    return lib.cuptrace_range_pop() if lib else 0


def mark(name):
    lib = _load()
    if lib:
        lib.cuptrace_mark(name.encode())


class range(contextlib.ContextDecorator):
    """`with cuptrace.range("name"):` or `@cuptrace.range("name")`."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        push(self.name)
        return self

    def __exit__(self, *exc):
        pop()
        return False
