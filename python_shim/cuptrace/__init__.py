# SPDX-License-Identifier: MIT
"""cuptrace from Python: annotations, capture control, PyTorch helpers.

    import cuptrace
    cuptrace.activate(output="traces/%h-%p.ctr")   # optional: trace without a launcher
    with cuptrace.range("forward"):
        ...
    @cuptrace.annotate()            # a range named by the function's qualified name
    def loss(...): ...
    cuptrace.step()

Works whether the process was started by `cuptrace run` / LD_PRELOAD (the
library is already loaded) or not (activate() loads the package's own
library). The annotations are a C extension (cuptrace._cuptrace) that calls
the library's control API directly; each is a test of one pointer when
tracing is off. PyTorch: cuptrace.torch; torch.profiler-like schedules:
cuptrace.schedule and cuptrace.profile, with on_trace_ready=
cuptrace.tensorboard_trace_handler(dir) for TensorBoard.
"""
import functools
import os
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))


def _no_extension(err):
    """What is wrong when cuptrace._cuptrace does not import, said plainly
    (Python words a missing file there as a possible circular import)."""
    import glob
    import importlib.machinery
    mine = [os.path.join(_HERE, "_cuptrace" + s) for s in importlib.machinery.EXTENSION_SUFFIXES]
    found = [p for p in mine if os.path.exists(p)]
    if found:
        return f"cuptrace: cannot load its compiled extension {found[0]}: {err}"
    other = sorted(os.path.basename(p) for p in glob.glob(os.path.join(_HERE, "_cuptrace*.so")))
    return (f"cuptrace: its compiled extension is missing: no {os.path.basename(mine[0])} in "
            f"{_HERE}" + (f" (only {', '.join(other)}, built for another Python)" if other else "")
            + "; reinstall the package (pip install ./python_shim) or, in a checkout, build it "
            "(make pyext)")


try:
    from . import _cuptrace as _c
except ImportError as e:
    raise ImportError(_no_extension(e), name=__name__ + "._cuptrace") from None
from ._cuptrace import (Range, dump, enabled, flush, mark, pop, push, range, rotate, start,  # noqa: A004
                        step, stop)
from ._export import tensorboard_trace_handler
from ._schedule import ProfilerAction, profile, schedule

__all__ = ["activate", "enabled", "start", "stop", "step", "push", "pop", "mark", "range", "flush",
           "rotate", "dump", "annotate", "Range", "schedule", "profile", "ProfilerAction", "library_path",
           "program_path", "OptionTypeError", "tensorboard_trace_handler"]

_OPTIONS = {
    "output": "CUPTRACE_OUTPUT", "trace": "CUPTRACE_TRACE", "torch": "CUPTRACE_TORCH",
    "ranks": "CUPTRACE_RANKS",
    "delay": "CUPTRACE_DELAY", "duration": "CUPTRACE_DURATION", "capture": "CUPTRACE_CAPTURE",
    "capture_repeat": "CUPTRACE_CAPTURE_REPEAT", "steps": "CUPTRACE_STEPS",
    "step_range": "CUPTRACE_STEP_RANGE", "buffer_mb": "CUPTRACE_BUFFER_MB", "log": "CUPTRACE_LOG",
    "hang_timeout": "CUPTRACE_HANG_TIMEOUT", "clock": "CUPTRACE_CLOCK",
    "flight": "CUPTRACE_FLIGHT", "flight_mb": "CUPTRACE_FLIGHT_MB",
    "flight_signal": "CUPTRACE_FLIGHT_SIGNAL", "flight_slow": "CUPTRACE_FLIGHT_SLOW",
    "flight_exit": "CUPTRACE_FLIGHT_EXIT",
}

# Installed: the package carries lib/ and bin/. From the source tree: the
# build of the checkout it lies in.
_SOURCE_BUILD = os.path.join(_HERE, "..", "..", "build")


def _first_existing(*cands):
    for cand in cands:
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return None


def library_path():
    """The libcuptrace.so this process uses or would use."""
    for entry in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":"):
        if entry.endswith("libcuptrace.so"):
            return entry
    return _first_existing(os.path.join(_HERE, "lib", "libcuptrace.so"),
                           os.path.join(_SOURCE_BUILD, "lib", "libcuptrace.so")) or "libcuptrace.so"


def program_path():
    """The `cuptrace` program that goes with library_path()."""
    return _first_existing(os.path.join(_HERE, "bin", "cuptrace"),
                           os.path.join(_SOURCE_BUILD, "bin", "cuptrace"))


# What each option takes besides str (the variable's own text): output a
# path, the durations numbers of seconds, the counts and ranks whole numbers.
_PATHS = {"output"}
_SECONDS = {"delay", "duration", "hang_timeout", "flight", "flight_slow"}
_WHOLE = {"capture_repeat", "buffer_mb", "ranks", "flight_mb"}


def _expects(key):
    if key in _PATHS:
        return "a path (str, bytes or os.PathLike)"
    if key in _SECONDS:
        return "seconds (int, float or str)"
    if key in _WHOLE:
        return "an int or a str"
    return "a str"


class OptionTypeError(TypeError, ValueError):
    """An option of activate() or profile() given a value of the wrong type:
    a TypeError, and a ValueError as every other bad option is."""


def _option_text(key, value):
    """The option's value as the text of its variable; OptionTypeError or
    ValueError naming the option when it cannot be one."""
    bad_type = OptionTypeError(f"cuptrace: option {key}={value!r}: expected "
                               f"{_expects(key)}, not {type(value).__name__}")
    if isinstance(value, bool):
        raise bad_type
    if key in _PATHS:
        try:
            value = os.fsdecode(os.fspath(value))
        except TypeError:
            raise bad_type from None
    elif isinstance(value, float) and key in _SECONDS:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"cuptrace: option {key}={value!r}: expected a finite number of "
                             "seconds")
        value = "0" if value == 0 else repr(value)  # -0.0 is 0
    elif isinstance(value, int) and (key in _SECONDS or key in _WHOLE):
        value = str(value)
    elif not isinstance(value, str):
        raise bad_type
    if "\0" in value:
        raise ValueError(f"cuptrace: option {key}={value!r}: holds a NUL character, which no "
                         "environment variable can")
    return value


def check_options(options):
    """{option: value} -> {CUPTRACE_VAR: str}; OptionTypeError (a TypeError
    and a ValueError) names an option of the wrong type, ValueError a bad
    value, with the library's own reason."""
    env = {}
    for key, value in options.items():
        var = _OPTIONS.get(key)
        if var is None:
            raise ValueError(f"cuptrace: unknown option {key!r} (known: "
                             f"{', '.join(sorted(_OPTIONS))}; and activate()'s trace_children)")
        text = _option_text(key, value)
        # The bytes the library will read from the environment (a path
        # that is not UTF-8 is a str with surrogate escapes here).
        try:
            raw = os.fsencode(text)
        except UnicodeEncodeError:
            raise ValueError(f"cuptrace: option {key}={text!r}: cannot be encoded for the "
                             "environment") from None
        why = _c._check(var, raw)
        if why is not None:
            raise ValueError(f"cuptrace: option {key}={text!r}: {why}")
        env[var] = text
    return env


def activate(trace_children=True, **options):
    """Turns tracing on from inside the script, before CUDA or NVTX are first
    used. Options are the launcher's (output=, trace=, capture=, steps=, ...),
    stored in the matching CUPTRACE_* variables; a bad one raises ValueError
    naming it. Returns enabled(). When the library is already in the process
    (cuptrace run, LD_PRELOAD, an earlier activate()) its settings stay as
    they were; options that differ from them are named in a RuntimeWarning.
    trace_children=False: child processes (DataLoader workers, spawned or
    forked) are not traced."""
    env = check_options(options)
    if _c._bind(None):
        _say_kept(env)
        if not trace_children:
            _untrace_children()
        return True
    # A relative output is where the script started: children started after
    # an os.chdir (Hydra and the like) wrote theirs under the new directory.
    out = env.get("CUPTRACE_OUTPUT", os.environ.get("CUPTRACE_OUTPUT"))
    if out:
        env["CUPTRACE_OUTPUT"] = _absolute(out)
    os.environ.update(env)
    path = library_path()
    try:
        on = _c._bind(path)
    except OSError:
        return False
    # The library pointed NVTX and CUDA at itself in the C environment; let
    # child processes started from Python (multiprocessing spawn) inherit it.
    if os.path.exists(path):
        os.environ.setdefault("NVTX_INJECTION64_PATH", os.path.abspath(path))
        os.environ.setdefault("CUDA_INJECTION64_PATH", os.path.abspath(path))
        if on:
            preload = os.environ.get("LD_PRELOAD", "")
            if "libcuptrace.so" not in preload:
                os.environ["LD_PRELOAD"] = ":".join(p for p in (preload, os.path.abspath(path)) if p)
    if on:
        _finish_at_os_exit()
        _auto.setup()  # the torch source (trace="...,torch"), now or once torch is imported
    if not trace_children:
        _untrace_children()
    return on


def _finish_at_os_exit():
    """os._exit leaves without exit handlers (every multiprocessing fork
    child and DataLoader worker leaves so). The library sees it where it is
    preloaded (it interposes _exit); loaded here it does not, and the
    process's file would be lost: os._exit finishes it first. Forked
    children inherit the wrapper."""
    global _os_exit
    if _os_exit is not None:
        return
    _os_exit = os._exit

    @functools.wraps(_os_exit)
    def _exit(status):
        _c._leaving(status)
        _os_exit(status)
    os._exit = _exit


_os_exit = None  # os._exit before activate() wrapped it


def _absolute(path):
    """An output relative to the directory the script is in now."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _say_kept(env):
    """Tracing is on already: options that would change its settings are
    ignored, and said so, never dropped silently."""
    if "CUPTRACE_OUTPUT" in env:
        env = dict(env, CUPTRACE_OUTPUT=_absolute(env["CUPTRACE_OUTPUT"]))
    names = {var: key for key, var in _OPTIONS.items()}
    ignored = [f"{names[var]}={value!r}" for var, value in env.items()
               if os.environ.get(var) != value]
    if ignored:
        warnings.warn("cuptrace.activate: tracing is already on (cuptrace run, LD_PRELOAD or an "
                      "earlier activate()) and keeps its settings; ignored: " + ", ".join(ignored),
                      RuntimeWarning, stacklevel=3)


def _untrace_children():
    """Children started from here on do not trace: exec'ed ones lose the
    library's variables, forked ones (DataLoader workers) turn their
    annotations off as they start."""
    lib = [p for p in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":") if p]
    keep = [p for p in lib if not p.endswith("libcuptrace.so")]
    if keep != lib:
        if keep:
            os.environ["LD_PRELOAD"] = ":".join(keep)
        else:
            del os.environ["LD_PRELOAD"]
    for var in ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN"):
        if os.environ.get(var, "").endswith("libcuptrace.so"):
            del os.environ[var]
    global _children_hooked
    if not _children_hooked:
        os.register_at_fork(after_in_child=_c._unbind)
        _children_hooked = True


_children_hooked = False


def annotate(name=None):
    """`@cuptrace.annotate("loss")`: every call of the function is a range;
    `@cuptrace.annotate()` (or bare `@cuptrace.annotate`) names it by the
    function's qualified name."""
    if callable(name):
        return annotate()(name)

    def deco(fn):
        label = name if name is not None else getattr(fn, "__qualname__", None) or repr(fn)
        wrapped = Range(label)(fn)
        try:
            functools.update_wrapper(wrapped, fn)
        except AttributeError:
            pass
        return wrapped
    return deco


# Traced by a launcher or LD_PRELOAD: the library is in the process already.
_c._bind(None)
from . import _auto  # noqa: E402 (steps from torch optimizers, the torch source)
