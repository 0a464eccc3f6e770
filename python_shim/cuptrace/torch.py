# SPDX-License-Identifier: MIT
"""PyTorch without editing the training loop.

    import cuptrace.torch
    handle = cuptrace.torch.annotate_modules(model)   # a range per module call
    cuptrace.torch.steps_from(optimizer)              # a step per optimizer step

Module ranges are named by the module's path in the model and its class
(`encoder.layers.3.attn (Attention)`; the model itself by its class name
alone); backward ranges add " backward". A forward range is the C extension's wrapper
around the module's forward (no Python on the way); backward ranges are
tensor hooks, also in C (_torch.c).
Works with torch 1.13 (Debian) and 2.x.
"""
import functools as _functools
import warnings as _warnings
import weakref as _weakref
from collections import OrderedDict as _OrderedDict

import torch

from . import _auto
from . import _cuptrace as _c

__all__ = ["annotate_modules", "steps_from", "install_auto_steps", "set_backward_hooks"]


class _Handles:
    """Removes every hook it holds: remove(), or leaving a `with` block."""

    def __init__(self, handles=()):
        self._handles = list(handles)

    def remove(self):
        while self._handles:
            self._handles.pop().remove()

    def __len__(self):
        return len(self._handles)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


_Tensor = torch.Tensor


def _first_grad_tensor(out):
    if isinstance(out, torch.Tensor):
        return out if out.requires_grad else None
    if isinstance(out, (list, tuple)):
        for o in out:
            t = _first_grad_tensor(o)
            if t is not None:
                return t
    if isinstance(out, dict):
        return _first_grad_tensor(list(out.values()))
    return None


def _node_hooks_api():
    """cuptrace._torchhooks' interface, built for this very torch (its C++
    classes have no stable ABI): the package's, or one built for this torch
    into the cache, now if need be (_torchbuild.py); else None."""
    from . import _torchbuild
    mod = _torchbuild.load("_torchhooks")
    if mod is None or mod.torch_version != torch.__version__:
        return None
    return mod.api


def set_backward_hooks(kind):
    """How annotate_modules' backward ranges hook autograd, for the module
    calls made from now on: "node" (the default: C++ pre-hooks on grad_fn
    nodes, where cuptrace._torchhooks was built for this torch; else as
    "tensor") or "tensor" (a hook in each tensor's hook dict, called from
    Python by autograd: about 1.5 us more per module call). Returns the
    kind in use, also in cuptrace.torch.backward_hooks."""
    global backward_hooks
    if kind not in ("node", "tensor"):
        raise ValueError("set_backward_hooks: kind is 'node' or 'tensor', not %r" % (kind,))
    api = _node_hooks_api() if kind == "node" else None
    _c._torch_setup(_Tensor, _OrderedDict, _first_grad_tensor, api)
    backward_hooks = "node" if api is not None else "tensor"
    return backward_hooks


# The backward ranges' hooks are the extension's: a module's forward in its
# range (_torch.c), then one hook per tensor that closes the backward ranges
# of the modules the tensor went into and opens those of the modules it came
# out of. That hook sits on the tensor's grad_fn node, in C++
# (_torchhooks.cpp: backward runs no Python for it) where that module is
# built for this torch; on leaves, or without it, in the tensor's hook dict
# (not through Tensor.register_hook). `backward_hooks` says which
# ("node" or "tensor"). Outputs and inputs other than tensors, tuples and
# lists find their tensors here.
backward_hooks = None
set_backward_hooks("node")


class _ForwardRange:
    """A module's forward as a range: its `forward` attribute becomes the C
    extension's Annotated wrapper of the bound method (push, call, pop).
    Not a forward hook: any hook sends every call of the module down
    torch's slow Python path, which costs more than the range itself.

    With backward ranges the wrapper (the extension's _WithBackward) hooks
    two tensors of the call: the output's gradient opens the module's
    backward range, the input's (computed once the module's backward is
    done) closes it. A call whose input needs no gradient (the model's
    first layer) gets no backward range: nothing marks where it ends; nor
    does an identity (its output is its input)."""

    def __init__(self, module, name, backward):
        self.module = module
        fwd = _c.Range(name)
        if not backward:
            self.wrapper = fwd(module.forward)
        else:
            self.wrapper = _c._WithBackward(module.forward, fwd, _c.Range(name + " backward"))
        module.forward = self.wrapper

    def remove(self):
        m, self.module = self.module, None
        if m is not None and m.__dict__.get("forward") is self.wrapper:
            del m.forward


# torch.compile cannot trace the C wrapper of an annotated forward: Dynamo
# skips the frame, or breaks the graph there, and the model runs eager
# without a word (0 graphs, an inductor model "compiled" in 0.01 s).
# Neither order works, so each is said: annotate_modules leaves a compiled
# model alone, and torch.compile of an annotated one warns.
_compiled_models = _weakref.WeakSet()


def _annotated(model):
    return any(isinstance(m.__dict__.get("forward"), (_c.Annotated, _c._WithBackward))
               for m in model.modules())


def _compile_in_use(model):
    return any(m in _compiled_models or type(m).__name__ == "OptimizedModule"
               or getattr(m, "_compiled_call_impl", None) is not None for m in model.modules())


def _watch_compile():
    orig = getattr(torch, "compile", None)
    if orig is None or getattr(orig, "_cuptrace_watch", False):
        return

    @_functools.wraps(orig)
    def compile(model=None, *args, **kwargs):
        if isinstance(model, torch.nn.Module):
            if _annotated(model):
                _warnings.warn(
                    "cuptrace.torch: torch.compile of a model annotated by annotate_modules: "
                    "Dynamo cannot trace the ranges' wrappers, and the model runs eager; "
                    "call the handle's remove() before compiling", RuntimeWarning, stacklevel=2)
            _compiled_models.add(model)
        return orig(model, *args, **kwargs)

    compile._cuptrace_watch = True
    torch.compile = compile


_watch_compile()


def annotate_modules(model, depth=None, backward=True):
    """One range per call of each module's forward, named by the module's
    path in model and its class, `head.3 (Linear)` (model itself: its class
    name), down to `depth` levels below model (None: all); with
    backward=True also one per module's backward (" backward" added), from
    the gradient of its output to the gradient of its input (none for calls
    whose input needs no gradient). Modules annotated already are left as
    they are. A model compiled by torch.compile (before or after) is not
    annotated (RuntimeWarning). Returns a handle: handle.remove() puts every
    module back as it was."""
    if _compile_in_use(model):
        _warnings.warn(
            "cuptrace.torch.annotate_modules: the model (or a module in it) is compiled by "
            "torch.compile, which cannot trace the ranges' wrappers (it would run eager): "
            "left unannotated; put cuptrace.range() around the compiled call instead",
            RuntimeWarning, stacklevel=2)
        return _Handles()
    handles = []
    root = type(model).__name__
    for path, module in model.named_modules():
        if depth is not None and path and path.count(".") + 1 > depth:
            continue
        if isinstance(module.__dict__.get("forward"), (_c.Annotated, _c._WithBackward)):
            continue  # annotated already: a second call nested every range in itself
        name = f"{path} ({type(module).__name__})" if path else root
        handles.append(_ForwardRange(module, name, backward))
    return _Handles(handles)


def steps_from(optimizer):
    """Each optimizer.step() ends a step (cuptrace.step()): CUPTRACE_STEPS
    windows and the per-step reports follow the training loop. Returns a
    handle (handle.remove()). Does nothing when every optimizer is hooked
    already (install_auto_steps: CUPTRACE_STEPS set)."""
    if _auto.installed is not None:
        return _Handles()
    if hasattr(optimizer, "register_step_post_hook"):  # torch >= 2.0
        return _Handles([optimizer.register_step_post_hook(_auto.post_hook)])
    return _Handles([_auto.StepCodeHook(optimizer, owner_is_class=False)])


def install_auto_steps():
    """Every torch optimizer's step ends a step (done by itself when the
    process traces with CUPTRACE_STEPS set). Returns the handle."""
    return _auto.install()
