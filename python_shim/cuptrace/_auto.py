# SPDX-License-Identifier: MIT
"""What a traced torch script gets without a line of code: with
CUPTRACE_STEPS set (cuptrace run --steps ...), every optimizer step ends a
step; with the library's torch source on (cuptrace run -t torch), the
operator observer is installed as torch is imported (_torchsrc.py). The
installed package's cuptrace-auto.pth imports this module at interpreter
start when either is asked for; it costs one look at the environment
otherwise, and imports nothing else unless the script imports torch."""
import os
import sys
import weakref

from . import _cuptrace as _c

def _traced():
    return bool(os.environ.get("CUPTRACE_STEPS")) and \
        "libcuptrace.so" in os.environ.get("LD_PRELOAD", "")


class StepCodeHook:
    """torch 1.13 has no step hooks; every optimizer's step ends by calling
    its _optimizer_step_code() (torch.profiler's entry point), which is
    patched here: on one optimizer, or on the class for all of them."""

    def __init__(self, target, owner_is_class):
        self.target = target
        self.owner_is_class = owner_is_class
        self.original = target.__dict__["_optimizer_step_code"] if owner_is_class else None
        if owner_is_class:
            def patched(opt, _orig=self.original):
                _orig(opt)
                paced_step(opt)
        else:
            def patched(_orig=target._optimizer_step_code):
                _orig()
                if not profiles_running:
                    _c.step()
        setattr(target, "_optimizer_step_code", patched)

    def remove(self):
        if self.target is None:
            return
        if self.owner_is_class:
            setattr(self.target, "_optimizer_step_code", self.original)
        else:
            self.target.__dict__.pop("_optimizer_step_code", None)
        self.target = None


_pacer = None  # a weak reference to the optimizer whose steps are the steps
# cuptrace.profile objects between start() and stop(): their step() marks
# the steps, as torch.profiler's does; the optimizers' hooks then mark none
# (both counted every iteration twice)
profiles_running = 0


def paced_step(opt):
    """One step per training iteration where several optimizers step in it
    (a GAN's generator and discriminator; each counted, two steps made one
    iteration): the optimizer that stepped first marks the steps, the
    others are not counted; when it is gone, the next one to step does."""
    global _pacer
    if profiles_running:
        return
    cur = _pacer() if _pacer is not None else None
    if cur is None:
        try:
            _pacer = weakref.ref(opt)
        except TypeError:
            _c.step()
            return
        cur = opt
    if cur is opt:
        _c.step()


def post_hook(opt, args, kwargs):
    paced_step(opt)


installed = None  # the hook on every optimizer, once installed


def install():
    """Hooks every torch optimizer (torch.optim must be imported); returns
    an object with remove()."""
    global installed
    if installed is None:
        optim = sys.modules["torch.optim"]
        reg = getattr(sys.modules.get("torch.optim.optimizer"), "register_optimizer_step_post_hook",
                      None)
        if reg is not None:  # torch >= 2.0
            installed = reg(post_hook)
        else:
            installed = StepCodeHook(optim.Optimizer, owner_is_class=True)
    return installed


def _install():
    try:
        install()
    except Exception as e:  # never break the traced program
        sys.stderr.write(f"cuptrace: warning: steps from torch optimizers not set up: {e}\n")


_after = {}  # module name -> functions to run once it is imported


class _Finder:
    """Runs the functions of _after right after their module is imported
    (its code run, before the import returns); leaves sys.meta_path when
    none is left."""

    def find_spec(self, name, path=None, target=None):
        fns = _after.pop(name, None)
        if fns is None:
            return None
        if not _after and self in sys.meta_path:
            sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)  # this finder answers None now
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            for fn in fns:
                fn()
        spec.loader.exec_module = exec_module
        return spec


def after_import(name, fn):
    """fn() once module name is imported: now if it is, else right after
    its import (once, however many times this is asked)."""
    if name in sys.modules:
        fn()
        return
    fns = _after.setdefault(name, [])
    if fn not in fns:
        fns.append(fn)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


_torch_done = False


def _torch_source():
    """The torch source's observer, once (torch is imported)."""
    global _torch_done
    if not _torch_done:
        _torch_done = True
        from . import _torchsrc
        _torchsrc.install()


def setup():
    """Arms what the process's tracing asks for (again after activate()
    loaded the library)."""
    if _traced():
        after_import("torch.optim", _install)
    if _c._torch_config() & 1:  # the library's torch source is on
        after_import("torch", _torch_source)


setup()
