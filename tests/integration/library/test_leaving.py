# SPDX-License-Identifier: MIT
"""Processes that leave without exit(): exec, _exit (every Python
multiprocessing child), and signals whose default action ends the process.
The file must keep every event and end with a footer that says how the
process ended (format 1.1, `cuptrace info` prints it)."""
import re
import signal
import subprocess
import time

import pytest

from conftest import (ASAN_FORK, PROGS, PYTHON, ROOT, SAN, convert, ctr_files, launcher_env, run, tool,
                      traced_env)


def info(path):
    out = tool("info", path).stdout
    field = lambda name: next((l.split(":", 1)[1].strip() for l in out.splitlines()
                               if l.startswith(name + ":")), None)
    return {"status": field("status"), "ended": field("ended"), "dropped": int(field("dropped")),
            "push": int(re.search(r"nvtx_push\s+(\d+)", out).group(1)) if "nvtx_push" in out else 0}


@pytest.mark.parametrize("mode,ms,ended,rc", [
    ("exec", 0, "exec", 0), ("exec", 800, "exec", 0),
    ("_exit", 0, "_exit(5)", 5), ("_Exit", 0, "_exit(6)", 6), ("child", 0, "_exit(0)", 0),
    ("exit", 0, "exit(7)", 7), ("return", 0, "exit(3)", 3),
    # quick_exit runs no atexit handler, yet the file is finished; a child
    # of the raw fork system call must not join the parent's writer at its
    # exit (that would hang it)
    ("quick_exit", 0, "exit(4)", 4), pytest.param("rawfork", 0, "exit(8)", 8, marks=ASAN_FORK)])
def test_leaving_without_exit_keeps_everything(tmp_path, mode, ms, ended, rc):
    p = run([PROGS / "leave", mode, 1000, ms], env=traced_env(tmp_path / "o"), timeout=30)
    assert p.returncode == rc and p.stderr == "", p.stderr
    [f] = ctr_files(tmp_path / "o")  # /bin/true after exec records nothing
    i = info(f)
    assert i == {"status": "clean", "ended": ended, "dropped": 0, "push": 1000}, i


def test_an_exec_chain_numbers_its_files_without_a_warning(tmp_path):
    """A process that execs a traced program writes a file per image: the
    second image finds the first one's name taken by its own process and
    numbers its file quietly (a name taken by another process is warned
    about: test_config.py)."""
    p = run([PROGS / "leave", "reexec", 100], env=traced_env(tmp_path / "o"), timeout=30)
    assert p.returncode == 3 and p.stderr == "", p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 2, files
    assert sorted(info(f)["ended"] for f in files) == ["exec", "exit(3)"]
    assert all(info(f)["push"] == 100 for f in files)
    p = run([PROGS / "leave", "reexec", 100],
            env=dict(traced_env(tmp_path / "o"), CUPTRACE_LOG="info"), timeout=30)
    assert "holds this process's trace before exec" in p.stderr, p.stderr
    assert "exists; writing" not in p.stderr, p.stderr


def test_main_ending_by_pthread_exit_leaves(tmp_path):
    """main ends by pthread_exit() and its thread records later: the
    library's threads kept the process alive, for ever (and unkillable by
    SIGTERM: the writer blocks signals). It ends once the program's last
    thread is gone, with exit status 0 as glibc gives it, and a footer."""
    t0 = time.monotonic()
    p = run([PROGS / "leave", "pthread_exit", 100, 300], env=traced_env(tmp_path / "o"),
            timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert took < 10, took
    [f] = ctr_files(tmp_path / "o")
    i = info(f)
    assert i == {"status": "clean", "ended": "exit(0)", "dropped": 0, "push": 200}, i


@pytest.mark.parametrize("prog", [pytest.param(["forker"], marks=ASAN_FORK),
                                  ["nvtx_threads", 2, 10, 1]])
def test_exit_is_recorded_as_exit(tmp_path, prog):
    p = run([PROGS / prog[0], *prog[1:]], env=traced_env(tmp_path / "o"), timeout=30)
    assert p.returncode == 0, p.stderr
    for f in ctr_files(tmp_path / "o"):
        assert info(f)["ended"] == "exit(0)"


def test_python_multiprocessing_child_keeps_its_events(tmp_path):
    code = """
import multiprocessing as mp
import cuptrace

def work(n):
    for i in range(n):
        with cuptrace.range("child work"):
            pass
    return n

if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(work, [300, 300, 300, 300]) == [300] * 4
    p = ctx.Process(target=work, args=(500,))
    p.start(); p.join()
    assert p.exitcode == 0
"""
    env = dict(traced_env(tmp_path / "o"), PYTHONPATH=str(ROOT / "python_shim"))
    p = run([PYTHON, "-c", code], env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / "o")
    total = 0
    for f in files:
        i = info(f)
        assert i["status"] == "clean" and i["dropped"] == 0, (f, i)
        total += i["push"]
    assert total == 4 * 300 + 500


def test_sigpipe_through_head_leaves_a_clean_file(tmp_path):
    # `cuptrace run -- prog | head -2`: the program dies of SIGPIPE.
    p = subprocess.run(f"'{ROOT}/build/bin/cuptrace' run -o '{tmp_path}/o/' -- "
                       f"'{PROGS}/leave' pipe | head -2", shell=True, env=launcher_env(),
                       capture_output=True, text=True, timeout=30)
    assert p.stdout == "line 0\nline 1\n", p.stderr
    [f] = ctr_files(tmp_path / "o")
    i = info(f)
    assert i["status"] == "clean" and i["ended"].startswith("signal 13 "), i
    assert i["push"] >= 2


@pytest.mark.parametrize("sig", [signal.SIGALRM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP,
                                 signal.SIGXCPU])
def test_every_signal_that_ends_the_process_writes_a_footer(tmp_path, sig):
    # The default action, whatever the test runner inherited (under nohup
    # SIGHUP is ignored, and a program that ignores a signal keeps it so).
    p = subprocess.Popen([str(PROGS / "signals"), "plain"], env=traced_env(tmp_path / "o"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    assert p.stdout.readline() == "ready\n"
    time.sleep(0.2)
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == -sig and err == ""
    [f] = ctr_files(tmp_path / "o")
    i = info(f)
    assert i["status"] == "clean" and i["ended"].startswith(f"signal {int(sig)} "), i


@pytest.mark.parametrize("fail", ["fsync", "close"])
@pytest.mark.parametrize("prog", [["churn", "1", "10"], ["leave", "_exit", "10"]])
def test_late_write_errors_are_reported(tmp_path, fail, prog):
    # Parallel file systems report a lost write at fsync or close: the
    # library checks both at a clean finish (here a preloaded shim fails
    # them for .ctr files).
    env = traced_env(tmp_path / "o", CT_FAIL=fail)
    # After a sanitizer's runtime, which must come first, and before the library.
    libs = env["LD_PRELOAD"].split(":")
    env["LD_PRELOAD"] = ":".join(libs[:-1] + [str(PROGS / "libfailio.so"), libs[-1]])
    p = run([PROGS / prog[0], *prog[1:]], env=env, timeout=30)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and re.match(r"cuptrace: error: writing .*\.ctr: Input/output error",
                                        lines[0]), p.stderr


def test_a_full_disk_leaves_no_empty_file(tmp_path):
    """When not even the header can be written (ENOSPC), the program goes on
    untouched, one line says tracing stopped, and no file is left (an empty
    .ctr would be a file every tool rejects)."""
    env = traced_env(tmp_path / "o", CT_FAIL="write")
    libs = env["LD_PRELOAD"].split(":")
    env["LD_PRELOAD"] = ":".join(libs[:-1] + [str(PROGS / "libfailio.so"), libs[-1]])
    p = run([PROGS / "churn", "1", "10"], env=env, timeout=30)
    assert p.returncode == 0
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and re.match(r"cuptrace: error: writing .*\.ctr: No space left on "
                                        r"device; tracing stops", lines[0]), p.stderr
    assert ctr_files(tmp_path / "o") == []


def test_python_left_by_ctrl_c_ends_its_file_cleanly(tmp_path):
    """^C in a Python script: the KeyboardInterrupt unwinds, and Python,
    leaving, sets SIGINT back to the default action over the library's
    handler and kills itself with it, so no handler of the library runs:
    every range is in the file, but without a footer it would read as cut
    short. The self-kill writes the footer first; the exit status stays
    Python's."""
    code = """
import time, cuptrace
for i in range(1000):
    with cuptrace.range("r"):
        pass
print("ready", flush=True)
while True:
    with cuptrace.range("spin"):
        time.sleep(0.01)
"""
    env = dict(traced_env(tmp_path / "o"), PYTHONPATH=str(ROOT / "python_shim"))
    p = subprocess.Popen([PYTHON, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline() == "ready\n"
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == -signal.SIGINT and err.strip().endswith("KeyboardInterrupt"), err
    [f] = ctr_files(tmp_path / "o")
    i = info(f)
    assert i["status"] == "clean" and i["ended"].startswith("signal 2 "), i
    doc = convert([f], tmp_path / "t.json")
    assert sum(e["name"] == "r" for e in doc["traceEvents"] if e.get("ph") == "X") == 1000



def test_a_handler_that_calls_exit_inside_an_nvtx_call_leaves(tmp_path):
    """The program's SIGTERM handler calls exit() on a thread that the
    signal interrupted while it held the library's definition lock: the
    writer waits for that lock and exit for the writer. exit waits for the
    writer at most 10 s, and the writer for the lock 200 ms once the process
    leaves, so the program leaves (unbounded waits: 7 hangs in 15 runs)."""
    for i in range(5):
        p = run([PROGS / "sig_handled", "exit"], env=traced_env(tmp_path / f"o{i}"), timeout=30)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        [f] = ctr_files(tmp_path / f"o{i}")
        assert info(f)["ended"] == "exit(0)"


def test_signals_the_program_handles_cost_no_block_each(tmp_path):
    """A handled signal asks for a block (and waits for it) at most once a
    second: 2000 SIGHUPs make a few blocks, not one each."""
    p = run([PROGS / "sig_handled", "storm", 2000], env=traced_env(tmp_path / "o"), timeout=60)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    out = tool("info", f).stdout
    blocks = int(re.search(r"blocks:\s+(\d+)", out).group(1))
    assert blocks < 20 and info(f)["push"] == 2000, out
