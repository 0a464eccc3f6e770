# SPDX-License-Identifier: MIT
"""torch.profiler's habits without torch: cuptrace.schedule and
cuptrace.profile, with torch.profiler.schedule's semantics step by step.

    with cuptrace.profile(schedule=cuptrace.schedule(wait=1, warmup=1, active=3, repeat=2),
                          on_trace_ready=print) as prof:
        for batch in loader:
            train(batch)
            prof.step()

A window records through the library's capture windows (capture=api,
cuptrace.start / cuptrace.stop); a saved window's end finishes its trace
file (cuptrace.rotate: the process records on into a new one) and hands
that file's path to on_trace_ready.
"""
import enum
import os
import warnings

from . import _auto, _export
from . import _cuptrace as _c


class ProfilerAction(enum.Enum):
    """What a step does; the names and order of torch.profiler.ProfilerAction."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """The function step -> ProfilerAction that torch.profiler.schedule
    returns: skip skip_first steps, then cycles of wait, warmup and active
    steps, repeat times (0: without end). Its `steps` attribute is the same
    schedule as a CUPTRACE_STEPS value."""
    for key, value in (("wait", wait), ("warmup", warmup), ("active", active),
                       ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(value, int) or value < (1 if key == "active" else 0):
            raise ValueError(f"cuptrace.schedule: {key}={value!r}: expected an integer "
                             f">= {1 if key == 'active' else 0}")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"step {step} < 0")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    schedule_fn.steps = (f"skip_first={skip_first},wait={wait},warmup={warmup},"
                         f"active={active},repeat={repeat}")
    return schedule_fn


def _always(step):
    return ProfilerAction.RECORD


class profile:
    """Mirrors torch.profiler.profile: start()/stop() or `with`, step() at
    each step's end. on_trace_ready(path) runs after each saved window with
    the path of that window's own file, finished as at exit (the first
    window's file has the usual name, later ones ".w2", ".w3", ... before
    the extension; None when the window recorded nothing);
    cuptrace.tensorboard_trace_handler(dir) converts it for TensorBoard.
    `prof.windows` lists each window's first and last step, `prof.paths`
    their files; export_chrome_trace(out) converts the last one and
    key_averages() tables its operators. Other
    keyword arguments are activate()'s options, used when the library is
    not yet loaded (then capture=api is set here)."""

    def __init__(self, *, schedule=None, on_trace_ready=None, trace_children=True, **options):
        from . import check_options
        check_options(options)
        self.schedule = schedule or _always
        self.on_trace_ready = on_trace_ready
        self.trace_children = trace_children
        self.options = options
        self.step_num = 0
        self.current_action = None
        self.windows = []
        self.paths = []
        self._first = None
        self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        from . import activate
        if not _c._bind(None):
            activate(capture="api", capture_repeat=0, trace_children=self.trace_children,
                     **self.options)
        elif os.environ.get("CUPTRACE_CAPTURE", "always") != "api" or \
                os.environ.get("CUPTRACE_CAPTURE_REPEAT", "1") != "0":
            warnings.warn("cuptrace.profile: the library was started with capture="
                          f"{os.environ.get('CUPTRACE_CAPTURE', 'always')} and capture_repeat="
                          f"{os.environ.get('CUPTRACE_CAPTURE_REPEAT', '1')}; windows follow the "
                          "schedule only with capture=api and capture_repeat=0", stacklevel=2)
        _auto.profiles_running += 1
        self._running = True
        self.step_num = 0
        self.current_action = self.schedule(0)
        # Not a step boundary (None): step 0 begins here, as torch's
        # ProfilerStep#0 does; each step() then begins step_num.
        self._transit(None, self.current_action)

    def stop(self):
        if self._running:
            _auto.profiles_running -= 1
            self._running = False
        if self.current_action is not None:
            self._transit(self.current_action, None)
            self.current_action = None

    def step(self):
        """The current step ended: marks a step boundary (cuptrace.step())
        and opens or closes windows as the schedule says."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)

    def _transit(self, prev, cur):
        # The step first: its mark closes the step before it in a window
        # that goes on or closes here. A window that opens here opens with
        # the mark of the step it opens in (the library records it as
        # capture comes on), so that its first step has its ProfilerStep#N
        # slice, step 0 too, as torch.profiler's windows have.
        at_step = cur is not None and prev is not None
        ends = prev == ProfilerAction.RECORD_AND_SAVE or (prev in _RECORDING and cur not in _RECORDING)
        starts = cur in _RECORDING and (prev not in _RECORDING or ends)
        if at_step:
            _c.step()
        if ends:
            last = self.step_num - 1 if cur is not None else self.step_num
            _c.stop()
            # torch saves only windows that reached RECORD_AND_SAVE or the end
            if prev == ProfilerAction.RECORD_AND_SAVE or cur is None:
                self._trace_ready(last)
        if starts:
            _c.start()
            self._first = self.step_num

    def _last_trace(self, what):
        path = next((p for p in reversed(self.paths) if p is not None), None)
        if path is None:
            raise RuntimeError(f"cuptrace.profile.{what}: no window saved yet (a window is saved "
                               "at its schedule's RECORD_AND_SAVE step or at stop())")
        return path

    def export_chrome_trace(self, path):
        """The last saved window as Chrome JSON in path (`.json.gz`:
        compressed), as torch.profiler's export_chrome_trace; the layout
        TensorBoard's profiler plugin and Holistic Trace Analysis read."""
        return _export.export_chrome_trace(self._last_trace("export_chrome_trace"), path)

    def key_averages(self, group_by_input_shape=False):
        """The operators of the last saved window, as torch.profiler's
        key_averages(): rows of `cuptrace stats --report torch_op_sum`
        (name, calls, self_cpu_ns, cpu_total_ns, avg_ns, gpu_ns, ...;
        group_by_input_shape: a row per name and input shapes), with
        table(sort_by=..., row_limit=...). Operators are recorded where
        the process traces torch (`cuptrace run -t ...,torch`)."""
        return _export.key_averages(self._last_trace("key_averages"), group_by_input_shape)

    def _trace_ready(self, last):
        path = _c.rotate()
        self.windows.append((self._first, last))
        self.paths.append(path)
        if self.on_trace_ready is not None:
            self.on_trace_ready(path)
