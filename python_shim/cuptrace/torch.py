"""PyTorch without editing the training loop.

    import cuptrace.torch
    handle = cuptrace.torch.annotate_modules(model)   # a range per module call
    cuptrace.torch.steps_from(optimizer)              # a step per optimizer step

Module ranges are named by the module's path in the model
(`encoder.layers.3.attn`; the model itself by its class name); backward
ranges add " backward". The hooks are the C extension's Range.push and
Range.pop, so a hook costs one C call on top of torch's own hook dispatch.
Works with torch 1.13 (Debian) and 2.x.
"""
import inspect

import torch

from . import _auto
from . import _cuptrace as _c

__all__ = ["annotate_modules", "steps_from", "install_auto_steps"]


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


def _accepts(fn, kwarg):
    try:
        return kwarg in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


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


def _needs_grad(inp):
    return _first_grad_tensor(inp) is not None


class _Backward:
    """One module's backward range. It opens when the gradient of the
    module's output is there (a hook on that tensor) and closes in torch's
    full backward hook, which runs once the gradients of its inputs are
    computed. A call whose inputs need no gradient (the model's first layers)
    gets no range: torch calls that hook as the backward starts, and nothing
    tells when it ends. One flag per call, last in first out as backward
    runs the calls."""

    def __init__(self, name):
        self.range = _c.Range(name)
        self.armed = []

    def forward_hook(self, module, inp, out):
        t = _first_grad_tensor(out)
        if t is None:
            return
        armed = _needs_grad(inp)
        if len(self.armed) > 4096:  # forwards with grad but never a backward
            self.armed.clear()
        self.armed.append(armed)
        if armed:
            t.register_hook(self.range.push)

    def backward_hook(self, module, grad_input, grad_output):
        if self.armed and self.armed.pop():
            self.range.pop()


def annotate_modules(model, depth=None, backward=True):
    """One range per call of each module's forward, named by the module's
    path in model, down to `depth` levels below model (None: all); with
    backward=True also one per module's backward (" backward" added), as far
    as autograd's module hooks allow (register_full_backward_hook: not for
    modules that modify their outputs in place, nor calls whose inputs need
    no gradient). Returns a handle: handle.remove() takes every hook away."""
    handles = []
    mod_cls = torch.nn.Module
    # torch >= 2.1: the closing hook runs even when forward raises.
    fwd_kw = {"always_call": True} if _accepts(mod_cls.register_forward_hook, "always_call") else {}
    root = type(model).__name__
    for path, module in model.named_modules():
        if depth is not None and path and path.count(".") + 1 > depth:
            continue
        name = path or root
        fwd = _c.Range(name)
        handles.append(module.register_forward_pre_hook(fwd.push))
        handles.append(module.register_forward_hook(fwd.pop, **fwd_kw))
        if backward:
            bwd = _Backward(name + " backward")
            handles.append(module.register_forward_hook(bwd.forward_hook))
            handles.append(module.register_full_backward_hook(bwd.backward_hook))
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
