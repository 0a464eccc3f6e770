# SPDX-License-Identifier: MIT
"""NCCL errors as a flight recorder trigger (libtrace/sources/nccl_err.c):
tests/progs/nccl_poll against the fake libnccl.so.2 of
tests/progs/nccl_fake, the library preloaded ahead of it. An error that
ncclCommGetAsyncError says (polled as PyTorch's watchdog polls it), one
that a collective returns, and ncclCommAbort each make one dump whose
trigger names them; another process of the job dumps through the marker;
every call reaches the fake once and its answer reaches the program
unchanged, traced or not, in flight mode or not."""
import subprocess

import pytest

from conftest import LIB, PROGS, ctr_files, launcher_env, run, tool, traced_env
from test_flight import info

PROG = PROGS / "nccl_poll"

# What the program says untraced (the fake's answers): the AllReduce's
# result folds in every argument, so a wrong forward shows.
UNTRACED = ["allreduce rc 0 recv 3727", "groupend rc 0",
            "async rc 0 err 1 after 21 polls: unhandled cuda error "
            "(run with NCCL_DEBUG=INFO for details)",
            "abort rc 0", "fake calls: async 21 abort 1 allreduce 1 groupend 1"]


def env(out, name, **extra):
    e = traced_env(out, NCCL_FAKE_FAIL_AFTER="20")
    e.update(CUPTRACE_OUTPUT=f"{out}/{name}.ctr", **extra)
    return e


# The untraced runs: the programs link the library (its control API), so a
# sanitizer build needs its runtime preloaded (launcher_env), nothing else.


def not_preloaded(e):
    """The environment e without the library in LD_PRELOAD (a sanitizer's
    runtime stays)."""
    e["LD_PRELOAD"] = ":".join(p for p in e["LD_PRELOAD"].split(":") if p and p != str(LIB))
    return e


def polls(f):
    p = tool("events", str(f))
    assert p.returncode == 0, p.stderr
    return sum(1 for l in p.stdout.splitlines()[1:] if l.split("\t")[8:9] == ["poll"])


def test_async_error_dumps_once_and_every_rank_dumps(tmp_path):
    out = tmp_path / "job"
    plain = run([PROG, "watch"], env=launcher_env(NCCL_FAKE_FAIL_AFTER="20"), check=True)
    assert plain.stdout.splitlines() == UNTRACED
    # another process of the job, recording before the error comes
    other = subprocess.Popen([PROG, "idle", out / "b.ctr"], stdout=subprocess.PIPE, text=True,
                             env=env(out, "b", CUPTRACE_FLIGHT="5"))
    try:
        assert other.stdout.readline() == "ready\n"
        p = run([PROG, "watch"], env=env(out, "a", CUPTRACE_FLIGHT="5"), check=True)
        assert p.stdout.splitlines() == UNTRACED
    finally:
        rest, _ = other.communicate(timeout=30)
    assert rest == "saw it\n"
    # one dump each: the abort right after the error is the same moment
    assert [f.name for f in ctr_files(out)] == ["a.ctr", "b.ctr"]
    _, trig, _ = info(out / "a.ctr")
    assert trig.startswith("nccl_error: ncclUnhandledCudaError (1) from ncclCommGetAsyncError: "
                           "unhandled cuda error (run with NCCL_DEBUG=INFO for details); "
                           "last error: fake: Cuda failure"), trig
    assert polls(out / "a.ctr") == 21  # the whole run is in the 5 s window
    _, trig, _ = info(out / "b.ctr")
    assert trig.startswith("job: nccl_error: ncclUnhandledCudaError (1)"), trig


def test_flight_off_changes_nothing(tmp_path):
    """A traced run in file mode: the same answers, the whole run in the file."""
    out = tmp_path / "out"
    p = run([PROG, "watch"], env=env(out, "r"), check=True)
    assert p.stdout.splitlines() == UNTRACED
    [f] = ctr_files(out)
    assert polls(f) == 21 and "flight:" not in tool("info", str(f)).stdout


def test_collective_error_and_abort_dump(tmp_path):
    out = tmp_path / "coll"
    p = run([PROG, "coll"], env=env(out, "r", CUPTRACE_FLIGHT="5"), check=True)
    assert p.stdout.splitlines() == ["allreduce rc 4 recv 0",
                                     "fake calls: async 0 abort 0 allreduce 1 groupend 0"]
    [f] = ctr_files(out)
    assert info(f)[1].startswith("nccl_error: ncclInvalidArgument (4) from ncclAllReduce: "
                                 "fake error; last error: fake: ")
    out = tmp_path / "abort"
    p = run([PROG, "abort"], env=env(out, "r", CUPTRACE_FLIGHT="5"), check=True)
    assert p.stdout.splitlines() == ["abort rc 0",
                                     "fake calls: async 0 abort 1 allreduce 0 groupend 0"]
    [f] = ctr_files(out)
    assert info(f)[1] == "nccl_abort: ncclCommAbort"


@pytest.mark.parametrize("how", ["preload", "dlopen"])
def test_nccl_loaded_privately(tmp_path, how):
    """NCCL loaded with dlopen(RTLD_LOCAL), as the dependency of a library
    Python loads (PyTorch's): the program binds to the library's wrappers,
    preloaded or loaded before with RTLD_GLOBAL (as activate() loads it),
    and NCCL, out of the global scope, is still found."""
    loader, plugin = PROGS / "nccl_dlopen", PROGS / "libnccl_poll.so"
    plain = run([loader, plugin, "watch"], env=launcher_env(NCCL_FAKE_FAIL_AFTER="20"), check=True)
    assert plain.stdout.splitlines() == UNTRACED
    out = tmp_path / "out"
    e = env(out, "r", CUPTRACE_FLIGHT="5")
    if how == "dlopen":
        e = not_preloaded(e)
        e["NCCL_DLOPEN_GLOBAL"] = str(LIB)
    p = run([loader, plugin, "watch"], env=e, check=True)
    assert p.stdout.splitlines() == UNTRACED
    [f] = ctr_files(out)
    assert info(f)[1].startswith("nccl_error: ncclUnhandledCudaError (1) from "
                                 "ncclCommGetAsyncError: "), info(f)[1]


def test_no_nccl_loaded_never_crashes(tmp_path):
    """The wrappers called where no NCCL is loaded at all (through dlsym on
    the library itself: no program linked to NCCL gets there): each says
    ncclInternalError, leaves its output alone, and nothing breaks."""
    code = ("import ctypes, sys; l = ctypes.CDLL(sys.argv[1]); e = ctypes.c_int(-5); "
            "print(l.ncclCommGetAsyncError(None, ctypes.byref(e)), e.value, l.ncclGroupEnd(), "
            "l.ncclCommAbort(None), l.ncclAllReduce(None, None, 0, 0, 0, None, None))")
    p = run(["/usr/bin/python3", "-c", code, LIB],
            env=not_preloaded(env(tmp_path / "out", "r", CUPTRACE_FLIGHT="5")), check=True)
    assert p.stdout.split() == ["3", "-5", "3", "3", "3"]
