# SPDX-License-Identifier: MIT
"""Checks made before anything runs or is read: the launcher's output
location, unknown variables warned about once, unknown options of info,
--steps on a file without steps."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import PROGS, TOOL, base_env, ctr_files, launcher_env, run, tool, traced_env


def launch(args, env=None, **kw):
    return run([TOOL, "run", *args], env=env or launcher_env(), **kw)


@pytest.mark.parametrize("where", ["file-as-dir", "dev-null"])
def test_impossible_output_location_exits_2_before_launching(tmp_path, where):
    (tmp_path / "plain").write_text("a file, not a directory")
    out = {"file-as-dir": tmp_path / "plain" / "sub" / "r%r.ctr",
           "dev-null": "/dev/null/t/%p.ctr"}[where]
    marker = tmp_path / "ran"
    p = launch(["-o", out, "--", "sh", "-c", f"touch {marker}"])
    assert p.returncode == 2, p.stderr
    assert not marker.exists()  # the program never started
    assert "CUPTRACE_OUTPUT=" in p.stderr and "not started" in p.stderr, p.stderr


def test_unwritable_output_directory_as_a_user(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root to switch to an unprivileged user")
    top = tempfile.mkdtemp(prefix="ct-ro-")
    try:
        os.chmod(top, 0o755)  # the user may not write here
        p = run([TOOL, "run", "-o", f"{top}/traces/%p.ctr", "--", "true"], env=launcher_env(),
                user=65534, group=65534, extra_groups=[], cwd="/")
        assert p.returncode == 2, p.stderr
        assert "Permission denied" in p.stderr, p.stderr
        assert os.listdir(top) == []
    finally:
        shutil.rmtree(top)


def test_output_directory_is_created_and_escapes_left_to_the_library(tmp_path):
    out = tmp_path / "a" / "b" / "%h" / "r%r-%p.ctr"
    p = launch(["-o", out, "--", PROGS / "demo_train", "2"])
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "a" / "b").is_dir()
    assert len(ctr_files(tmp_path / "a")) == 1
    assert not [n for n in os.listdir(tmp_path / "a" / "b") if n.startswith(".cuptrace-probe")]


def test_unknown_variable_warned_once(tmp_path):
    env = launcher_env(CUPTRACE_OUTPT="x", CUPTRACE_BUFER_MB="8")
    p = launch(["-o", tmp_path / "o" / "%p.ctr", "--", PROGS / "demo_train", "2"], env=env)
    assert p.returncode == 0, p.stderr
    for name in ("CUPTRACE_OUTPT", "CUPTRACE_BUFER_MB"):
        assert sum(name in l for l in p.stderr.splitlines()) == 1, p.stderr
    # Without the launcher, the library still warns (once).
    p = run([PROGS / "demo_train", "2"], env=traced_env(tmp_path / "p", CUPTRACE_OUTPT="x"))
    assert p.returncode == 0
    assert sum("CUPTRACE_OUTPT" in l for l in p.stderr.splitlines()) == 1, p.stderr


def test_info_rejects_unknown_options(tmp_path):
    p = tool("info", "--bogus")
    assert p.returncode == 2 and "usage: cuptrace info" in p.stderr, p.stderr
    assert "No such file" not in p.stderr


def test_steps_on_a_file_without_steps(tmp_path):
    p = run([PROGS / "demo_train", "3"], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    p = tool("stats", "--steps", "3-7", f)
    assert p.returncode == 1
    assert "holds no steps" in p.stderr and str(f) in p.stderr, p.stderr
    assert "(no rows)" not in p.stdout


def test_a_file_name_too_long_exits_2_before_launching(tmp_path):
    marker = tmp_path / "ran"
    p = launch(["-o", f"{tmp_path}/{'y' * 300}-%p.ctr", "--", "sh", "-c", f"touch {marker}"])
    assert p.returncode == 2 and "the file name is longer than 255 characters" in p.stderr
    assert not marker.exists()


def test_report_needs_a_file_name():
    """`run --report -- CMD` wrote the page to a file named `--`."""
    p = launch(["--report", "--", "true"])
    assert p.returncode == 2 and "--report needs the page's file name, not '--'" in p.stderr


def test_run_stats_passes_termination_on_to_the_program(tmp_path):
    """With --stats the launcher forks CMD and waits (it execs CMD
    otherwise): SIGTERM to the launcher (a scheduler, `docker stop`) left
    CMD running, orphaned. It is passed on; the tables still come, and the
    exit status is CMD's (128 + 15)."""
    p = subprocess.Popen([str(TOOL), "run", "--stats=nvtx_sum", "-o", f"{tmp_path}/t/%p.ctr", "--",
                          str(PROGS / "demo_train"), "100000"], env=launcher_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not ctr_files(tmp_path / "t") and time.monotonic() < deadline:
        time.sleep(0.05)  # the program runs and records
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "** nvtx_sum" in out and "cuptrace run --stats: 1 trace file" in err, err
    assert subprocess.run(["pgrep", "-f", "demo_train 100000"]).returncode == 1  # no orphan


def test_a_file_still_being_written_is_not_called_cut_short(tmp_path):
    """A background child outlives CMD: `run --stats` summarises its file
    while it is written. That is said (with its pid), not "the process did
    not exit cleanly"; once the process is gone, the file is cut short."""
    out = tmp_path / "t"
    r = launch(["--stats=nvtx_sum", "-o", f"{out}/%p.ctr", "--", "sh", "-c",
                f"{PROGS / 'demo_train'} 10000000 >/dev/null 2>&1 & echo $!; sleep 1"])
    child = int(r.stdout.split()[0])
    try:
        assert r.returncode == 0, r.stderr
        assert f"its process {child} is still running" in r.stderr, r.stderr
        assert "did not exit cleanly" not in r.stderr
        info = tool("info", str(out / f"{child}.ctr"))
        assert f"its process {child} is still running" in info.stdout, info.stdout
    finally:
        os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    info = tool("info", str(out / f"{child}.ctr"))
    assert "did not exit cleanly" in info.stdout and "still running" not in info.stdout, info.stdout


@pytest.mark.parametrize("pattern", ["t/", "t/%p/"])
def test_run_stats_with_a_directory_as_output(tmp_path, pattern):
    """An output ending in '/' is a directory the library names files in
    (%h-%p.ctr): `run --stats` finds the files written in it, rather than
    looking for the pattern itself and saying no trace file was written."""
    p = launch(["--stats=nvtx_sum", "-o", f"{tmp_path}/{pattern}", "--",
                str(PROGS / "demo_train"), "5"])
    assert p.returncode == 0, p.stderr
    assert "cuptrace run --stats: 1 trace file" in p.stderr and "** nvtx_sum" in p.stdout, p.stderr
    assert len(ctr_files(tmp_path / "t")) == 1


def test_an_unknown_report_lists_the_reports(tmp_path):
    p = tool("stats", "--report", "cuda_gpu_kern_sum:base", str(tmp_path))
    assert p.returncode == 2
    assert "unknown report 'cuda_gpu_kern_sum:base'" in p.stderr and "report:option" in p.stderr
    assert "nvtx_sum, nvtx_gpu_proj_sum, cuda_gpu_kern_sum" in p.stderr and "nccl_hang" in p.stderr


def test_run_stats_takes_only_its_own_run(tmp_path):
    """Runs one after another and side by side into one directory: each
    `run --stats` summarises its own run's file alone, not every file that
    fits its pattern and was written since it started (that would be 2
    files, train_step x4, for a run of 2)."""
    out = f"{tmp_path}/t/%p.ctr"
    first = launch(["--stats=nvtx_sum", "-o", out, "--", str(PROGS / "demo_train"), "2"])
    again = launch(["--stats=nvtx_sum", "-o", out, "--", str(PROGS / "demo_train"), "3"])
    for p in (first, again):
        assert p.returncode == 0, p.stderr
        assert "cuptrace run --stats: 1 trace file\n" in p.stderr, p.stderr
    assert len(ctr_files(tmp_path / "t")) == 2
    # side by side: the shorter one ends while the other writes
    cmd = [str(TOOL), "run", "--stats=nvtx_sum", "-o", out, "--", "sh", "-c"]
    slow = subprocess.Popen(cmd + [f"{PROGS / 'demo_train'} 4; sleep 1.5"], env=launcher_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    quick = launch(["--stats=nvtx_sum", "-o", out, "--", str(PROGS / "demo_train"), "5"])
    out_s, err_s = slow.communicate(timeout=60)
    for rc, err in ((quick.returncode, quick.stderr), (slow.returncode, err_s)):
        assert rc == 0 and "cuptrace run --stats: 1 trace file\n" in err, err
        assert "more than one job" not in err
    assert len(ctr_files(tmp_path / "t")) == 4


def test_no_trace_written_names_what_was_asked(tmp_path):
    """A program that writes no trace (true: no CUDA, NVTX or NCCL): the
    line says which of --stats and --report found nothing, both when both
    were given (it named --stats alone), and no page is written."""
    for args, asked in ((["--stats"], "--stats"),
                        (["--report", f"{tmp_path}/r.html"], "--report"),
                        (["--stats", "--report", f"{tmp_path}/r.html"], "--stats, --report")):
        p = launch(args + ["-o", f"{tmp_path}/t/%p.ctr", "--", "true"])
        assert p.returncode == 0, p.stderr
        assert p.stderr == (f"cuptrace run {asked}: no trace file was written (pattern "
                            f"{tmp_path}/t/%p.ctr)\n"), (args, p.stderr)
        assert not (tmp_path / "r.html").exists()


def test_run_refuses_a_report_it_could_not_write_before_starting(tmp_path):
    """--report into a directory that does not exist ran the whole program,
    then failed, exit 0; and `--stats LIST` with a typo ran LIST as the
    command (127)."""
    marker = tmp_path / "ran"
    for args, why in ((["--report", f"{tmp_path}/nodir/x.html"], "does not exist; not started"),
                      (["--report", ""], "needs the page's file name"),
                      (["--stats", "nvtx_sum,bogus"], "unknown report")):
        p = launch(args + ["-o", f"{tmp_path}/t/%p.ctr", "--", "touch", str(marker)])
        assert p.returncode == 2 and why in p.stderr, (args, p.stderr)
        assert not marker.exists(), args


def test_an_option_overrides_a_bad_variable(tmp_path):
    """A bad CUPTRACE_* value in the environment stopped the launcher even
    when an option set that variable ("an option overrides a variable")."""
    for var, value, opt in (("CUPTRACE_OUTPUT", "x/%z", ["-o", f"{tmp_path}/q/%p.ctr"]),
                            ("CUPTRACE_LOG", "bogus", ["-l", "warn"])):
        env = dict(launcher_env(), **{var: value})
        p = launch(opt + ["--", str(PROGS / "demo_train"), "1"], env=env, cwd=tmp_path)
        assert p.returncode == 0, (var, p.stderr)
        bad = launch(["--", "true"], env=env, cwd=tmp_path)  # without the option: refused
        assert bad.returncode == 2 and f"{var}={value}" in bad.stderr, (var, bad.stderr)
    assert len(ctr_files(tmp_path / "q")) == 1


def test_an_existing_directory_without_its_slash_is_a_directory(tmp_path):
    """-o traces where traces/ exists writes into traces/, with no
    warning; not traces.1 beside it with an "exists" warning (no .ctr, so
    no directory scan would find it)."""
    (tmp_path / "tr").mkdir()
    p = launch(["--stats=nvtx_sum", "-o", str(tmp_path / "tr"), "--",
                str(PROGS / "demo_train"), "2"])
    assert p.returncode == 0 and "1 trace file" in p.stderr and "exists" not in p.stderr, p.stderr
    assert len(ctr_files(tmp_path / "tr")) == 1
    (tmp_path / "pre").mkdir()
    env = dict(traced_env(tmp_path), CUPTRACE_OUTPUT=str(tmp_path / "pre"))
    p = run([PROGS / "demo_train", "2"], env=env)
    assert p.returncode == 0 and "exists" not in p.stderr, p.stderr
    assert len(ctr_files(tmp_path / "pre")) == 1
    # a link to a directory (traces -> /scratch/...) is one too
    (tmp_path / "scratch").mkdir()
    (tmp_path / "ln").symlink_to(tmp_path / "scratch")
    p = launch(["--stats=nvtx_sum", "-o", str(tmp_path / "ln"), "--",
                str(PROGS / "demo_train"), "2"])
    assert p.returncode == 0 and "1 trace file" in p.stderr and "exists" not in p.stderr, p.stderr
    assert len(ctr_files(tmp_path / "scratch")) == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == ["ln", "pre", "scratch", "tr"]
