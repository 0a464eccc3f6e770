# SPDX-License-Identifier: MIT
"""CUPTRACE_* settings as users meet them: bad values, unknown names, the
launcher's checks, capture windows, rank selection and output files."""
import os
import re

import pytest

from conftest import (PROGS, SAN, TOOL, base_env, launcher_env, convert, ctr_files, one_line_error, read_truth,
                      run, traced_env, trace_ns_to_mono)

BAD = [
    ("CUPTRACE_TRACE", "nvtx,gpu"),
    ("CUPTRACE_TRACE", ""),
    ("CUPTRACE_RANKS", "0-"),
    ("CUPTRACE_RANKS", "five"),
    ("CUPTRACE_DELAY", "-1"),
    ("CUPTRACE_DELAY", "1s"),
    ("CUPTRACE_DURATION", "0"),
    ("CUPTRACE_CAPTURE", "sometimes"),
    ("CUPTRACE_CAPTURE", "nvtx:"),
    ("CUPTRACE_CAPTURE_REPEAT", "x"),
    ("CUPTRACE_STEPS", "wait=1,warmup=1"),
    ("CUPTRACE_STEPS", "active=2,bogus=1"),
    ("CUPTRACE_STEP_RANGE", ""),
    ("CUPTRACE_BUFFER_MB", "0"),
    ("CUPTRACE_BUFFER_MB", "lots"),
    ("CUPTRACE_LOG", "verbose"),
    ("CUPTRACE_OUTPUT", "out/%z.ctr"),
    ("CUPTRACE_OUTPUT", "out/%q{HOME.ctr"),
]


@pytest.mark.parametrize("var,value", BAD)
def test_bad_value_leaves_the_program_running_untraced(tmp_path, var, value):
    plain = run([PROGS / "demo_train", 5], env=base_env())
    env = traced_env(tmp_path / "o")
    env[var] = value
    p = run([PROGS / "demo_train", 5], env=env)
    assert p.returncode == plain.returncode == 0
    assert p.stdout == plain.stdout
    line = one_line_error(p.stderr, var)
    assert value in line
    assert p.stderr.count("\n") == 1
    assert ctr_files(tmp_path / "o") == [] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("var,value", BAD)
def test_launcher_refuses_bad_values_before_launching(tmp_path, var, value):
    marker = tmp_path / "ran"
    env = base_env(**{var: value})
    # -o would override a bad CUPTRACE_OUTPUT (test_run_checks.py): not given for it
    out = [] if var == "CUPTRACE_OUTPUT" else ["-o", f"{tmp_path}/o/%p.ctr"]
    p = run([TOOL, "run", *out, "--", "touch", marker], env=env, cwd=tmp_path)
    assert p.returncode == 2
    one_line_error(p.stderr, var)
    assert not marker.exists()


@pytest.mark.parametrize("var,value,why", [
    ("CUPTRACE_DELAY", "1e15", "too large: at most 1000000000 seconds"),  # said "expected seconds >= 0"
    ("CUPTRACE_DURATION", "1e999", "too large: at most 1000000000 seconds"),
    ("CUPTRACE_HANG_TIMEOUT", "2e9", "too large: at most 1000000000 seconds"),
    # a healthy job's collectives are in flight longer than these
    ("CUPTRACE_HANG_TIMEOUT", "0.000001", "expected seconds >= 0.1"),
    ("CUPTRACE_HANG_TIMEOUT", "1e-300", "expected seconds >= 0.1"),
    ("CUPTRACE_HANG_TIMEOUT", "0", "expected seconds >= 0.1"),
    ("CUPTRACE_DELAY", "1s", "expected seconds >= 0"),
    # said "bad range 9223372036854775807-9223372036854775807"
    ("CUPTRACE_RANKS", "99999999999999999999", "99999999999999999999 is too large"),
    ("CUPTRACE_RANKS", "local:2-99999999999999999999", "99999999999999999999 is too large"),
    ("CUPTRACE_RANKS", "3-1", "bad range 3-1"),
])
def test_bad_value_says_why(tmp_path, var, value, why):
    """The error line says what is wrong with the value, in the library and
    in the launcher alike."""
    p = run([PROGS / "demo_train", 2], env=traced_env(tmp_path / "o", **{var: value}))
    assert p.returncode == 0
    assert one_line_error(p.stderr, var).startswith(f"cuptrace: error: {var}={value}: {why}")
    p = run([TOOL, "run", "-o", f"{tmp_path}/o/%p.ctr", "--", "true"], env=base_env(**{var: value}))
    assert p.returncode == 2
    assert one_line_error(p.stderr, var).startswith(f"cuptrace: error: {var}={value}: {why}")
    assert ctr_files(tmp_path / "o") == []


def test_a_hang_timeout_without_the_nccl_source_is_warned_once(tmp_path):
    """The watchdog watches NCCL operations: --hang-timeout with a trace
    that leaves out nccl does nothing, and says so once, whether the
    launcher or the library alone reads it; with nccl nothing is said."""
    want = "CUPTRACE_HANG_TIMEOUT=5 has no effect"
    p = run([TOOL, "run", "-t", "cuda,nvtx", "--hang-timeout", "5", "-o", f"{tmp_path}/a/",
             "--", PROGS / "demo_train", 2], env=launcher_env())
    assert p.returncode == 0 and p.stderr.count(want) == 1, p.stderr
    p = run([PROGS / "demo_train", 2],
            env=traced_env(tmp_path / "b", CUPTRACE_TRACE="nvtx", CUPTRACE_HANG_TIMEOUT="5"))
    assert p.returncode == 0 and p.stderr.count(want) == 1, p.stderr
    p = run([PROGS / "demo_train", 2], env=traced_env(tmp_path / "c", CUPTRACE_HANG_TIMEOUT="5"))
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_a_delay_too_small_for_a_double_is_a_number(tmp_path):
    """1e-320 underflows strtod (ERANGE) but is a valid, tiny delay: it
    is not refused as "expected seconds >= 0"."""
    p = run([PROGS / "demo_train", 2], env=traced_env(tmp_path / "o", CUPTRACE_DELAY="1e-320"))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert len(ctr_files(tmp_path / "o")) == 1


@pytest.mark.parametrize("opt,value,var", [("--trace", "cuda,bogus", "CUPTRACE_TRACE"),
                                           ("-r", "1-0", "CUPTRACE_RANKS"),
                                           ("--steps", "active=0", "CUPTRACE_STEPS"),
                                           ("-o", "%", "CUPTRACE_OUTPUT")])
def test_launcher_refuses_bad_options(tmp_path, opt, value, var):
    marker = tmp_path / "ran"
    p = run([TOOL, "run", opt, value, "--", "touch", marker])
    assert p.returncode == 2
    one_line_error(p.stderr, var)
    assert not marker.exists()


def test_launcher_exit_status_and_missing_command(tmp_path):
    env = launcher_env()
    p = run([TOOL, "run", "-o", f"{tmp_path}/%p.ctr", "--", "sh", "-c", "exit 42"], env=env)
    assert p.returncode == 42
    p = run([TOOL, "run", "-o", f"{tmp_path}/%p.ctr", "--", "sh", "-c", "kill -TERM $$"], env=env)
    assert p.returncode == -15
    p = run([TOOL, "run", "--", str(tmp_path / "no-such-program")], env=env)
    assert p.returncode == 127 and "no-such-program" in p.stderr
    assert run([TOOL, "run"]).returncode == 2
    assert run([TOOL, "run", "--help"]).returncode == 0


def test_unknown_variable_is_warned_about_with_the_closest_name(tmp_path):
    env = traced_env(tmp_path / "o", CUPTRACE_OUTPT="x")
    p = run([PROGS / "demo_train", 3], env=env)
    assert p.returncode == 0
    assert "unknown variable CUPTRACE_OUTPT (did you mean CUPTRACE_OUTPUT?)" in p.stderr
    assert len(ctr_files(tmp_path / "o")) == 1  # still traced
    p = run([TOOL, "run", "-o", f"{tmp_path}/l/%p.ctr", "--", "true"],
            env=launcher_env(CUPTRACE_BUFER_MB="8"))
    assert "did you mean CUPTRACE_BUFFER_MB" in p.stderr


def trace_names(tmp_path, env_extra, prog_args, name="t"):
    env = traced_env(tmp_path / name, **env_extra)
    p = run(prog_args, env=env)
    assert p.returncode == 0, p.stderr
    files = ctr_files(tmp_path / name)
    if not files:
        return [], None
    doc = convert(files, tmp_path / f"{name}.json")
    return [e["name"] for e in doc["traceEvents"] if e.get("ph") == "X"], doc


def test_capture_api_windows(tmp_path):
    # control_api starts at step 2, stops at 5, starts at 8, stops at 9.
    names, _ = trace_names(tmp_path, {"CUPTRACE_CAPTURE": "api", "CUPTRACE_CAPTURE_REPEAT": "0"},
                           [PROGS / "control_api", 12])
    steps = sorted(n for n in names if n.startswith("step "))
    assert steps == ["step 2", "step 3", "step 4", "step 8"]
    assert names.count("work") == 4
    # Each window opens inside a step, whose slice opens with it: step 2
    # and step 8 are ProfilerStep ranges too, not only the steps that
    # began inside a window.
    assert sorted(n for n in names if n.startswith("ProfilerStep#")) == \
        ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#8"]
    # One window only by default.
    names, _ = trace_names(tmp_path, {"CUPTRACE_CAPTURE": "api"}, [PROGS / "control_api", 12], "one")
    assert sorted(n for n in names if n.startswith("step ")) == ["step 2", "step 3", "step 4"]


def test_capture_nvtx_range(tmp_path):
    names, _ = trace_names(tmp_path, {"CUPTRACE_CAPTURE": "nvtx:step 3"}, [PROGS / "control_api", 12])
    assert sorted(names) == ["step 3", "work"]
    names, _ = trace_names(tmp_path, {"CUPTRACE_CAPTURE": "nvtx:solve@physics",
                                      "CUPTRACE_CAPTURE_REPEAT": "2"},
                           [PROGS / "nvtx_threads", 1, 3, 4], "dom")
    assert names and set(names) <= {"solve", "attr d1", "attr d2", "attr d3", "wide \u03b1\u03b2 \u2713 \U0001D11E d1",
                                     "wide \u03b1\u03b2 \u2713 \U0001D11E d2", "double d1", "double d2", "double d3",
                                     "num d1", "num d2", "num d3", "plain d1", "plain d2", "plain d3"}
    assert names.count("solve") == 2
    names, _ = trace_names(tmp_path, {"CUPTRACE_CAPTURE": "nvtx:solve@otherdomain"},
                           [PROGS / "nvtx_threads", 1, 3, 4], "none")
    assert names == []


def test_step_schedule(tmp_path):
    # skip 1 step, then cycles of wait 1 + warmup 1 + active 2, twice.
    names, doc = trace_names(tmp_path, {"CUPTRACE_STEPS": "skip_first=1,wait=1,warmup=1,active=2,repeat=2"},
                             [PROGS / "control_api", 14])
    assert sorted((n for n in names if n.startswith("step ")), key=lambda s: int(s.split()[1])) == \
        ["step 3", "step 4", "step 7", "step 8"]
    # Step boundaries become ProfilerStep#N ranges while capturing.
    prof = sorted(n for n in names if n.startswith("ProfilerStep#"))
    assert prof == ["ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#7", "ProfilerStep#8"]


def test_delay_and_duration(tmp_path):
    truth = tmp_path / "truth.jsonl"
    env = {"CUPTRACE_DELAY": "0.4", "CUPTRACE_DURATION": "0.4", "CT_TEST_TRUTH": str(truth)}
    import subprocess, time
    proc = subprocess.Popen([str(PROGS / "signals"), "plain"], env=traced_env(tmp_path / "o", **env),
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    started = time.monotonic_ns()
    time.sleep(1.3)
    proc.terminate()
    proc.communicate(timeout=20)
    doc = convert(ctr_files(tmp_path / "o"), tmp_path / "t.json")
    its = [e for e in doc["traceEvents"] if e.get("name") == "iteration" and e.get("ph") == "X"]
    assert its
    first = min(trace_ns_to_mono(doc, e["ts"]) for e in its)
    last = max(trace_ns_to_mono(doc, e["ts"]) for e in its)
    # Capture opened about 0.4 s after the library loaded and lasted 0.4 s.
    t0 = read_truth(truth)[0]["end"]
    assert first >= t0 + 0.3e9 - 5e6
    assert last - first <= 0.4e9 + 0.1e9
    assert last - first >= 0.2e9
    # the timer's switches are in the file (the tools read capture windows
    # from them: nccl_hang leaves out a rank that stopped recording), though
    # the timer runs on the library's own thread, not a recording one
    caps = sorted((trace_ns_to_mono(doc, e["ts"]), e["name"]) for e in doc["traceEvents"]
                  if e.get("ph") == "i" and e.get("name", "").startswith("capture "))
    assert [n for _, n in caps] == ["capture on", "capture off"], caps
    on, off = caps[0][0], caps[1][0]
    assert on <= first and off >= last and 0.3e9 <= off - on <= 0.5e9, caps


@pytest.mark.parametrize("ranks,env,traced", [
    ("0,2", {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}, True),
    ("0,2", {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4"}, False),
    ("8-15", {"SLURM_PROCID": "9", "SLURM_NTASKS": "16"}, True),
    ("local:0", {"RANK": "5", "LOCAL_RANK": "0", "WORLD_SIZE": "8"}, True),
    ("local:0", {"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}, False),
])
def test_rank_selection(tmp_path, ranks, env, traced):
    e = traced_env(tmp_path / "o", CUPTRACE_RANKS=ranks, **env)
    p = run([PROGS / "demo_train", 3], env=e)
    assert p.returncode == 0 and p.stderr == ""
    assert bool(ctr_files(tmp_path / "o")) == traced


def test_output_pattern_directories_and_no_overwrite(tmp_path):
    pat = f"{tmp_path}/deep/a/b/job-%q{{JOB}}-r%r-%w/%h.ctr"
    env = base_env(LD_PRELOAD=traced_env(tmp_path)["LD_PRELOAD"], CUPTRACE_OUTPUT=pat,
                   JOB="../../escape", OMPI_COMM_WORLD_RANK="3", OMPI_COMM_WORLD_SIZE="4")
    for _ in range(2):
        assert run([PROGS / "demo_train", 3], env=env).returncode == 0
    files = ctr_files(tmp_path / "deep")
    assert len(files) == 2, files
    # The expansion could not climb out of the pattern's directory.
    d = files[0].parent
    assert d.parent == tmp_path / "deep" / "a" / "b"
    assert d.name == "job-.._.._escape-r3-4"
    assert sorted(f.name for f in files) == sorted([f"{os.uname().nodename}.ctr",
                                                    f"{os.uname().nodename}.1.ctr"])


@pytest.mark.parametrize("kind", ["file", "dangling", "fifo", "device"])
def test_output_never_follows_a_symlink(tmp_path, kind):
    """A symlink as the output name gets the next numbered name and a
    warning, whatever it points at: a file (kept), nothing (followed, it
    would leave the process untraced, 'No such file or directory'), a FIFO
    or a character device (followed, a reader of the FIFO would receive the
    trace). Only a name
    that is itself a device or a pipe is written as it is
    (test_output_to_dev_null_throws_the_trace_away)."""
    import subprocess
    target = tmp_path / "target"
    if kind == "file":
        target.write_text("keep me")
    elif kind == "fifo":
        os.mkfifo(target)
        cap = tmp_path / "cap"
        cat = subprocess.Popen(f"exec cat {target} > {cap}", shell=True)
    elif kind == "device":
        target = "/dev/null"
    (tmp_path / "o").mkdir()
    link = tmp_path / "o" / "x.ctr"
    link.symlink_to(target)
    env = base_env(LD_PRELOAD=traced_env(tmp_path)["LD_PRELOAD"], CUPTRACE_OUTPUT=str(link))
    p = run([PROGS / "demo_train", 3], env=env)
    if kind == "fifo":  # end the reader: EOF, unless the trace's writer closed it already
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        cat.wait(timeout=20)
        assert cap.read_bytes() == b""
    assert p.returncode == 0
    assert "exists; writing" in p.stderr and "not traced" not in p.stderr, p.stderr
    assert sorted(os.listdir(tmp_path / "o")) == ["x.1.ctr", "x.ctr"]
    assert (tmp_path / "o" / "x.1.ctr").stat().st_size > 0
    assert os.path.islink(link) and os.readlink(link) == str(target)
    if kind == "file":
        assert target.read_text() == "keep me"
    if kind == "dangling":
        assert not os.path.lexists(target)


def test_directory_pattern_gets_a_file_name(tmp_path):
    env = base_env(LD_PRELOAD=traced_env(tmp_path)["LD_PRELOAD"], CUPTRACE_OUTPUT=f"{tmp_path}/dir/")
    assert run([PROGS / "demo_train", 3], env=env).returncode == 0
    [f] = ctr_files(tmp_path / "dir")
    assert re.match(r".+-\d+\.ctr$", f.name)


def test_a_timer_starts_no_thread_in_a_process_that_never_records(tmp_path):
    """unshare(CLONE_NEWUSER) refuses a process with threads (bwrap,
    Apptainer), so CUPTRACE_DELAY does not start the writer thread at load
    in every preloaded process: it starts at the first NVTX/CUDA/NCCL/control
    call (test_delay_and_duration: the timer works from there)."""
    import shutil
    if not shutil.which("unshare"):
        pytest.skip("no unshare")
    plain = run(["unshare", "-U", "true"], env=base_env())
    if plain.returncode != 0:
        pytest.skip(f"user namespaces not allowed here: {plain.stderr.strip()}")
    p = run(["unshare", "-U", "true"], env=traced_env(tmp_path / "o", CUPTRACE_DELAY="1"))
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_output_to_dev_null_throws_the_trace_away(tmp_path):
    """CUPTRACE_OUTPUT=/dev/null: the name exists, but a device is written
    as it is, with no numbered file beside it (that would be /dev/null.1 as
    root, an error line otherwise)."""
    import os
    before = os.path.exists("/dev/null.1")
    p = run([PROGS / "demo_train", 3], env=dict(traced_env(tmp_path / "o"), CUPTRACE_OUTPUT="/dev/null"))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert os.path.exists("/dev/null.1") == before
