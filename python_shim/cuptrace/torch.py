"""PyTorch without editing the training loop.

    import cuptrace.torch
    handle = cuptrace.torch.annotate_modules(model)   # a range per module call
    cuptrace.torch.steps_from(optimizer)              # a step per optimizer step

Module ranges are named by the module's path in the model
(`encoder.layers.3.attn`; the model itself by its class name); backward
ranges add " backward". A forward range is the C extension's wrapper
around the module's forward (no Python on the way); backward ranges use
torch's module hooks.
Works with torch 1.13 (Debian) and 2.x.
"""
from collections import OrderedDict as _OrderedDict

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


_Tensor = torch.Tensor
_KEY = "cuptrace"  # our hook's key in a tensor's hook dict (torch's keys are ints)


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


class _TensorHook:
    """The one hook cuptrace puts on a tensor. Its gradient ends the backward
    of the modules the tensor was input to (closes first) and starts the
    backward of the modules whose output it is (a module and its last child
    share one; outer modules open first, so that the ranges nest)."""

    __slots__ = ("closes", "opens")

    def __init__(self):
        self.closes = 0
        self.opens = []

    def __call__(self, grad):
        # A leaf tensor keeps its hook from one backward to the next: what
        # was asked for is done once.
        closes, opens = self.closes, self.opens
        self.closes, self.opens = 0, []
        for _ in range(closes):
            _c.pop()
        for r in opens:
            r.push()

    @staticmethod
    def of(t):
        # What Tensor.register_hook does, less its RemovableHandle (about
        # 2 us a call, most of the cost of backward ranges): the tensor's
        # hook dict holds the hook under a key of ours, which also finds it
        # again (no attribute on the tensor: that would give it a __dict__).
        hooks = t._backward_hooks
        if hooks is None:
            h = _TensorHook()
            # torch's own kind of dict: its handles keep weak references.
            t._backward_hooks = _OrderedDict(((_KEY, h),))
            if t.grad_fn is not None:
                t.grad_fn._register_hook_dict(t)
            return h
        h = hooks.get(_KEY)
        if h is None:
            h = hooks[_KEY] = _TensorHook()
        return h


class _WithBackward:
    """A module's forward with its range, hooking the tensors that open and
    close its backward range. A class rather than a closure so that
    copy.deepcopy of the model wraps the copy's own forward (__reduce__)."""

    __slots__ = ("forward", "fwd", "bwd")

    def __init__(self, forward, fwd, bwd):
        self.forward, self.fwd, self.bwd = forward, fwd, bwd

    def __reduce__(self):
        return (_WithBackward, (self.forward, self.fwd, self.bwd))

    def __call__(self, *args, **kwargs):
        self.fwd.push()
        try:
            out = self.forward(*args, **kwargs)
        finally:
            _c.pop()
        # Fast paths for one tensor in, one out. No output needs a gradient
        # under torch.no_grad(): nothing to hook then.
        if type(out) is _Tensor:
            t_out = out if out.requires_grad else None
        else:
            t_out = _first_grad_tensor(out)
        if t_out is not None:
            a = args[0] if len(args) == 1 else None
            t_in = a if type(a) is _Tensor and a.requires_grad else _first_grad_tensor(args)
            if t_in is not None:
                _TensorHook.of(t_out).opens.insert(0, self.bwd)
                _TensorHook.of(t_in).closes += 1
        return out


class _ForwardRange:
    """A module's forward as a range: its `forward` attribute becomes the C
    extension's Annotated wrapper of the bound method (push, call, pop).
    Not a forward hook: any hook sends every call of the module down
    torch's slow Python path, which costs more than the range itself.

    With backward ranges the wrapper (_WithBackward) also hooks
    two tensors of the call: the output's gradient opens the module's
    backward range, the input's (computed once the module's backward is
    done) closes it. A call whose input needs no gradient (the model's
    first layer) gets no backward range: nothing marks where it ends."""

    def __init__(self, module, name, backward):
        self.module = module
        fwd = _c.Range(name)
        if not backward:
            self.wrapper = fwd(module.forward)
        else:
            self.wrapper = _WithBackward(module.forward, fwd, _c.Range(name + " backward"))
        module.forward = self.wrapper

    def remove(self):
        m, self.module = self.module, None
        if m is not None and m.__dict__.get("forward") is self.wrapper:
            del m.forward


def annotate_modules(model, depth=None, backward=True):
    """One range per call of each module's forward, named by the module's
    path in model, down to `depth` levels below model (None: all); with
    backward=True also one per module's backward (" backward" added), from
    the gradient of its output to the gradient of its input (none for calls
    whose input needs no gradient). Returns a handle: handle.remove() puts
    every module back as it was."""
    handles = []
    root = type(model).__name__
    for path, module in model.named_modules():
        if depth is not None and path and path.count(".") + 1 > depth:
            continue
        name = path or root
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
