# SPDX-License-Identifier: MIT
"""The traced process's life: signals, SIGKILL, fork, exec, exit from a
thread, threads that come and go. The library must flush what it can and
never change the program's exit status, output or signal handling."""
import csv
import os
import re
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import (ASAN_FORK, PROGS, PYTHON, SAN, TOOL, convert, ctr_files, launcher_env, ranges_by_tid,
                      read_truth, tool, traced_env, trace_ns_to_mono)


def default_signals():
    """In the child: SIGINT and SIGQUIT at their default action. A test run
    started in the background by a shell (`cmd &`) inherits them ignored,
    and an ignored signal the library must leave ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def start(args, env):
    return subprocess.Popen([str(a) for a in args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)


def wait_ready(p):
    line = p.stdout.readline()
    assert line == "ready\n", (line, p.stderr.read() if p.poll() is not None else "")


def names(doc):
    return [e["name"] for e in doc["traceEvents"] if e.get("ph") == "X"]


def status_of(path):
    out = tool("info", path).stdout
    return next(l.split()[1] for l in out.splitlines() if l.startswith("status:")).rstrip(":")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_with_default_action_flushes_and_kills(tmp_path, sig):
    truth = tmp_path / "truth.jsonl"
    p = start([PROGS / "signals", "plain"], traced_env(tmp_path / "o", CT_TEST_TRUTH=truth))
    wait_ready(p)
    time.sleep(0.3)
    p.send_signal(sig)
    _, err = p.communicate(timeout=20)
    assert p.returncode == -sig  # killed by the same signal, as without tracing
    assert err == ""
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"
    doc = convert([f], tmp_path / "t.json")
    done = len(read_truth(truth))
    n = names(doc).count("iteration")
    # Every finished iteration is in the trace (the one interrupted may be
    # cut, flagged unfinished).
    assert done <= n <= done + 1


@pytest.mark.parametrize("mode", ["handler", "late"])
def test_program_signal_handler_still_runs(tmp_path, mode):
    p = start([PROGS / "signals", mode], traced_env(tmp_path / "o"))
    wait_ready(p)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 3 and out == "handled\n", (out, err)
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"
    assert names(convert([f], tmp_path / "t.json")).count("iteration") > 10


@pytest.mark.parametrize("mode,sig", [("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)])
def test_fatal_signal_best_effort(tmp_path, mode, sig):
    if SAN and mode == "segv":
        pytest.skip("AddressSanitizer owns SIGSEGV in sanitizer builds")
    p = start([PROGS / "signals", mode], traced_env(tmp_path / "o"))
    wait_ready(p)
    p.communicate(timeout=20)
    assert p.returncode == -sig
    [f] = ctr_files(tmp_path / "o")
    doc = convert([f], tmp_path / "t.json")
    assert names(doc).count("iteration") >= 50


def test_sigkill_loses_at_most_the_last_second(tmp_path):
    truth = tmp_path / "truth.jsonl"
    p = start([PROGS / "signals", "plain"], traced_env(tmp_path / "o", CT_TEST_TRUTH=truth))
    wait_ready(p)
    time.sleep(2.5)
    killed_at = time.monotonic_ns()
    p.kill()
    p.communicate(timeout=20)
    assert p.returncode == -signal.SIGKILL
    [f] = ctr_files(tmp_path / "o")
    info = tool("info", f)
    assert info.returncode == 0 and "truncated" in info.stdout
    doc = convert([f], tmp_path / "t.json")
    its = [r for rs in ranges_by_tid(doc).values() for r in rs if r["name"] == "iteration"]
    assert its, "nothing readable after SIGKILL"
    last_end = max(trace_ns_to_mono(doc, r["ts"] + r["dur"]) for r in its)
    assert killed_at - last_end < 1.0e9, (killed_at - last_end) / 1e9
    # Everything the program finished more than a second before is there.
    old = [t for t in read_truth(truth) if t["end"] < killed_at - 1.0e9]
    assert len(its) >= len(old)


@ASAN_FORK
def test_a_forked_child_of_a_pattern_without_pid_is_named_quietly(tmp_path):
    """-o traces/r%r.ctr: a forked child (a DataLoader worker) took the
    parent's name or the parent its, whoever wrote first, with an "exists"
    warning on the program's stderr. The child's file is r0.<pid>.ctr."""
    out = tmp_path / "o"
    p = subprocess.run([str(PROGS / "forker")], capture_output=True, text=True, timeout=30,
                       env=dict(traced_env(out, RANK="0", WORLD_SIZE="1"),
                                CUPTRACE_OUTPUT=f"{out}/r%r.ctr"))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    names_ = sorted(f.name for f in ctr_files(out))
    assert len(names_) == 2 and names_[1] == "r0.ctr", names_
    assert re.fullmatch(r"r0\.\d+\.ctr", names_[0]), names_
    parent = names(convert([out / "r0.ctr"], tmp_path / "p.json"))
    assert parent.count("parent-after") == 25 and "child" not in parent


@pytest.mark.parametrize("mode", [pytest.param("fork", marks=ASAN_FORK), "exec"])
def test_fork_child_writes_its_own_file(tmp_path, mode):
    args = [PROGS / "forker"] + (["exec"] if mode == "exec" else [])
    p = subprocess.run([str(a) for a in args], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "status 0" in p.stdout, p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 2
    per_file = {}
    for i, f in enumerate(files):
        assert status_of(f) == "clean"
        per_file[f] = names(convert([f], tmp_path / f"{i}.json"))
    parent = next(n for n in per_file.values() if "parent-after" in n)
    child = next(n for n in per_file.values() if "parent-after" not in n)
    assert parent.count("parent-before") == 20 and parent.count("parent-after") == 25
    assert parent.count("parent-outer") == 1
    assert "child" not in parent and "exec-child" not in parent
    if mode == "fork":
        assert child.count("child") == 40 and "parent-before" not in child
    else:
        assert child.count("exec-child") == 30 and len(child) == 30


def test_exit_from_another_thread(tmp_path):
    p = subprocess.run([str(PROGS / "exit_thread")], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 7 and p.stderr == ""
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"
    doc = convert([f], tmp_path / "t.json")
    n = names(doc)
    # 40 short-lived threads, 5 ranges each: all kept after the threads exited.
    for i in range(40):
        assert n.count(f"short {i}") == 5
    assert n.count("exiter") == 10
    [waits] = [e for e in doc["traceEvents"] if e.get("name") == "main waits"]
    assert waits["args"]["unfinished"] is True
    # nvtx_sum leaves the unfinished range out (it has no end of its own:
    # nsys's reports leave such ranges out too) and says so
    p = tool("stats", "--report", "nvtx_sum", "--format", "csv", str(f))
    assert p.returncode == 0, p.stderr
    s = p.stdout
    assert "# note: 1 unfinished range left out" in s
    rows = {r["Range"]: r for r in csv.DictReader(x for x in s.splitlines() if not x.startswith("#"))}
    assert ":main waits" not in rows and rows[":short 0"]["Instances"] == "5", sorted(rows)
    # the SQLite export says it never ended (its end was the made-up one)
    assert tool("export", "-o", tmp_path / "t.sqlite", f).returncode == 0
    db = sqlite3.connect(tmp_path / "t.sqlite")
    assert db.execute("SELECT end FROM NVTX_EVENTS WHERE text = 'main waits'").fetchall() == [(None,)]
    # (a range a few instructions long may start and end in the same ns)
    assert db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'short 0' "
                      "AND end >= start").fetchone()[0] == 5


def test_flood_with_a_large_buffer_keeps_blocks_small_and_the_file_clean(tmp_path):
    # Threads that record faster than the writer encodes: the writer must
    # still cut blocks near 1 MB (readers refuse blocks over 16 MB) and
    # finish the file cleanly; what did not fit is counted as dropped.
    p = subprocess.run([str(PROGS / "flood"), "2", "1.5"],
                       env=traced_env(tmp_path / "o", CUPTRACE_BUFFER_MB="512",
                                      CUPTRACE_LOG="info"),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert all(l.startswith("cuptrace: ") for l in lines), lines
    [f] = ctr_files(tmp_path / "o")
    out = tool("info", f).stdout
    assert "status:      clean" in out, out
    blocks, raw = map(int, re.search(r"blocks:\s+(\d+) \((\d+) bytes decoded\)", out).groups())
    assert blocks >= 2 and raw / blocks < 2.5e6, out
    events = int(re.search(r"events:\s+(\d+)", out).group(1))
    assert events > 1_000_000


def test_thread_churn_keeps_every_event_within_the_buffer(tmp_path):
    # 2000 threads one after another, 100 ranges each, default 64 MB: a
    # thread that exits must not hold its 128 KiB chunk until the writer's
    # next pass, or only the first 512 would be recorded. (100,000 threads:
    # docs/CHOICES.md.)
    p = subprocess.run([str(PROGS / "churn"), "2000", "100"], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "200000\n" and p.stderr == "", p.stderr
    [f] = ctr_files(tmp_path / "o")
    out = tool("info", f).stdout
    assert "status:      clean" in out and re.search(r"dropped:\s+0\n", out), out
    per_tid = {}
    for tid, rs in ranges_by_tid(convert([f], tmp_path / "t.json")).items():
        per_tid[tid] = sum(r["name"] == "churn" for r in rs)
    assert len(per_tid) == 2000 and set(per_tid.values()) == {100}


def test_fork_from_a_thread_does_not_free_a_slot_in_use(tmp_path):
    p = subprocess.run([str(PROGS / "fork_thread")], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout == "child status 0\n", p.stderr
    files = ctr_files(tmp_path / "o")
    assert len(files) == 2
    child = [names(convert([f], tmp_path / f"{i}.json")) for i, f in enumerate(files)]
    child = next(n for n in child if "U-before" in n)
    assert child.count("U-before") == 10 and child.count("U-after") == 100


def test_signals_while_forking_do_not_wait_on_the_forking_thread(tmp_path):
    p = subprocess.run([str(PROGS / "fork_signals")], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    worst_ms, seen = p.stdout.split()
    assert float(worst_ms) < 1000 and int(seen) > 0, p.stdout
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"


def test_a_program_that_closes_every_descriptor_keeps_its_files(tmp_path):
    """A daemon-like program closes every descriptor above stderr, the trace
    file's too, and opens a file of its own on that number. The library
    checks the descriptor is still its file before every write, so that no
    block goes into the program's file, reopens its file by path, and the
    trace stays whole."""
    own = tmp_path / "mine.txt"
    p = subprocess.run([str(PROGS / "closefds"), str(own)], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stdout == "own file on fd 3\n", (p.stdout, p.stderr)
    assert own.read_bytes() == b"my own data\n"
    assert p.stderr == ""
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"
    got = names(convert([f], tmp_path / "t.json"))
    assert got.count("before") == 100 and got.count("after") == 100


def test_a_daemon_that_reopens_stderr_gets_no_message_in_its_file(tmp_path):
    """The library's messages go to stderr as it was at the start, not to
    whatever fd 2 is: a daemon that closes stdin/stdout/stderr and opens
    its own file there gets no warning in its file."""
    own, out = tmp_path / "mine.txt", tmp_path / "o"
    out.mkdir()
    (out / "t.ctr").write_text("older")  # the trace's name is taken: a warning
    p = subprocess.run([str(PROGS / "closefds"), str(own), "std"],
                       env=dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/t.ctr"),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert own.read_bytes() == b"my own data\n"
    assert "exists; writing" in p.stderr and str(out / "t.1.ctr") in p.stderr, p.stderr
    assert names(convert([out / "t.1.ctr"], tmp_path / "t.json")).count("daemon") == 100


def test_a_closed_stderr_pipe_does_not_kill_the_program(tmp_path):
    """A warning written into a stderr pipe nobody reads raised SIGPIPE and
    killed the program (Python's subprocess gives children its default
    action)."""
    code = f"""
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
env = dict(os.environ, CUPTRACE_OUPTUT="misspelt")  # an unknown variable: a warning
p = subprocess.run([{str(PROGS / 'demo_train')!r}, "3"], env=env, stderr=w,
                   stdout=subprocess.DEVNULL)
print(p.returncode)
"""
    p = subprocess.run([PYTHON, "-c", code], env=traced_env(tmp_path / "o"),
                       capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "0", (p.stdout, p.stderr)


@pytest.mark.parametrize("closed", ["1", "1,2"])
def test_a_program_run_with_stdout_closed_keeps_its_descriptors(tmp_path, closed):
    """`prog >&-`: the program's writes to a closed stdout (and stderr)
    must fail with EBADF as they do untraced, and nothing the program
    writes may land in the trace: the library's own descriptors live at
    64 and above, never on 0-2."""
    cmd = f"exec {PROGS / 'closed_std'} " + " ".join(f"{fd}>&-" for fd in closed.split(","))
    p = subprocess.run(["sh", "-c", cmd], env=traced_env(tmp_path / "o"), capture_output=True,
                       timeout=30)
    assert p.returncode == 0, (p.returncode, p.stderr)
    [f] = ctr_files(tmp_path / "o")
    assert status_of(f) == "clean"
    got = names(convert([f], tmp_path / "t.json"))
    assert got.count("before") == 100 and got.count("after") == 100


def test_a_relative_output_is_where_the_program_started(tmp_path):
    """The file is created at the first block, but a relative output is
    taken from where the program started: a program that changes directory
    before that keeps its trace where `cuptrace run --stats` looks."""
    (tmp_path / "elsewhere").mkdir()
    p = subprocess.run([str(TOOL), "run", "--stats=nvtx_sum", "-o", "rel/%p.ctr", "--",
                        str(PROGS / "chdir_away"), "elsewhere"], cwd=tmp_path,
                       env=launcher_env(), capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path)
    assert f.parent == tmp_path / "rel", f
    assert ":away" in p.stdout and "no trace file" not in p.stderr, (p.stdout, p.stderr)
    # a child started after the program changed directory: the launcher
    # passes the output on as an absolute path (else its child would write
    # into elsewhere/rel/, where --stats does not look)
    f.unlink()
    p = subprocess.run([str(TOOL), "run", "--stats=nvtx_sum", "-o", "rel/%p.ctr", "--", "sh", "-c",
                        f"cd elsewhere && exec {PROGS / 'chdir_away'} ."], cwd=tmp_path,
                       env=launcher_env(), capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path)
    assert f.parent == tmp_path / "rel" and ":away" in p.stdout, (f, p.stdout, p.stderr)
