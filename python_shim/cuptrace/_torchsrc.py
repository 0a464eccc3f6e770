# SPDX-License-Identifier: MIT
"""The torch source in a traced process: once torch is imported, where the
library says the source is on (cuptrace_torch_config(): `cuptrace run -t
torch`, CUPTRACE_TRACE with torch, activate(trace=...)), the C++ observer
cuptrace._torchops records every operator, autograd function and
record_function scope (with CUPTRACE_TORCH: input shapes, memory, Python
frames). _auto.py calls install() right after torch's import, whether the
script imports cuptrace or not (cuptrace-auto.pth)."""
import functools
import sys

from . import _cuptrace as _c

ON, SHAPES, MEMORY, STACK = 1, 2, 4, 8  # include/cuptrace/torch_abi.h's CUPTRACE_TORCH_*

_mod = None  # cuptrace._torchops, once loaded


def install():
    """The observer on, with the library's settings; returns the
    CUPTRACE_TORCH_* bits in use (0: not tracing torch, or no observer for
    this torch, said on stderr). torch must be imported. Never raises."""
    global _mod
    try:
        bits = _c._torch_config()
        if not bits & ON:
            return 0
        from . import _torchbuild
        _mod = _torchbuild.load("_torchops")
        if _mod is None or not _mod.install(bits):
            return 0
        if bits & MEMORY:
            _step_aside_for_profilers()
        return _mod.installed()
    except Exception as e:  # noqa: BLE001 - never break the traced program
        sys.stderr.write(f"cuptrace: warning: torch operators are not recorded: {e}\n")
        return 0


def installed():
    """The CUPTRACE_TORCH_* bits of the observer in use; 0: none."""
    return _mod.installed() if _mod is not None else 0


def uninstall():
    """No more operators recorded (those open still end)."""
    if _mod is not None:
        _mod.uninstall()


def _step_aside_for_profilers():
    """The allocation reporter sits in the thread's slot that torch's
    profilers take; torch refuses to start one there ("Profiler is already
    enabled on this thread"). Each of torch's profilers starts and stops
    through these functions of torch.autograd (its profiler module and
    2.x's profiler_legacy hold their own references): ours leaves the slot
    as one starts and comes back as it stops (it records no allocations in
    between, on that thread)."""
    for modname in ("torch.autograd", "torch.autograd.profiler", "torch.autograd.profiler_legacy"):
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for name in ("_enable_profiler", "_enable_profiler_legacy"):
            _wrap(mod, name, before=_mod._mem_step_aside)
        for name in ("_disable_profiler", "_disable_profiler_legacy"):
            _wrap(mod, name, after=_mod._mem_back)


def _wrap(mod, name, before=None, after=None):
    fn = getattr(mod, name, None)
    if fn is None or getattr(fn, "_cuptrace", False):
        return

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if before is not None:
            before()
        try:
            return fn(*args, **kwargs)
        finally:
            if after is not None:
                after()
    call._cuptrace = True
    setattr(mod, name, call)
