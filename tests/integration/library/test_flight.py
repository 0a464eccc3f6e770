# SPDX-License-Identifier: MIT
"""The flight recorder (CUPTRACE_FLIGHT) in one process, tests/progs/flight:
nothing on disk while all is well or at a clean exit; a readable window,
saying its span and trigger, on cuptrace_dump(), `cuptrace dump DIR`, a
non-zero exit status and a fatal signal; a budget too small for the
window keeps less and says so. The hung job's case is
tests/integration/nccl/test_flight_hang.py."""
import re
import socket
import subprocess
import time

import pytest

from conftest import PROGS, TOOL, ctr_files, run, tool, traced_env

PROG = PROGS / "flight"


def env(out, **extra):
    e = traced_env(out)
    e.update(CUPTRACE_OUTPUT=f"{out}/r.ctr", CUPTRACE_FLIGHT="1")
    e.update(extra)
    return e


def info(f):
    p = tool("info", str(f))
    assert p.returncode == 0, p.stderr
    m = re.search(r"flight:\s+window of ([0-9.]+) s \(the last ([0-9.]+) s of recording "
                  r"asked\)", p.stdout)
    assert m, p.stdout
    return float(m.group(1)), re.search(r"trigger:\s+(.*)", p.stdout).group(1), p.stdout


def ranges(f):
    """The "work N" ranges of the window, and whether each is whole."""
    p = tool("events", str(f))
    assert p.returncode == 0, p.stderr
    names = [l.split("\t")[8] for l in p.stdout.splitlines()[1:] if "\tslice\tnvtx\t" in l]
    return names


def test_healthy_and_clean_exit_write_nothing(tmp_path):
    out = tmp_path / "out"
    p = run([PROG, "clean", 500], env=env(out), check=True)
    assert int(p.stdout.split()[1]) > 100
    assert not out.exists() or not any(out.iterdir())  # no file, not even an empty one


def test_cuptrace_dump_writes_a_readable_window(tmp_path):
    out = tmp_path / "out"
    p = run([PROG, "dump", 2500], env=env(out), check=True)
    assert "dump 0" in p.stdout
    [f] = ctr_files(out)
    assert f.name == "r.ctr"
    span, trig, text = info(f)
    assert trig == "cuptrace_dump()" and "status:      clean" in text
    assert 1.0 <= span < 1.6  # the last second, cut in blocks of 50 ms
    # every range's name reads, though the blocks that defined the names
    # (at the start, 1.5 s before the window) were dropped
    names = ranges(f)
    assert len(names) > 500 and set(names) == {f"work {i}" for i in range(5)}
    # stats and convert read it as any trace
    assert tool("stats", str(f)).returncode == 0
    assert run([TOOL, "convert", "-o", tmp_path / "t.json", f]).returncode == 0


def test_dump_without_flight_mode_says_no(tmp_path):
    out = tmp_path / "out"
    e = traced_env(out)
    e["CUPTRACE_OUTPUT"] = f"{out}/r.ctr"
    p = run([PROG, "dump", 100], env=e, check=True)
    assert "dump -1" in p.stdout


def test_cuptrace_dump_dir(tmp_path):
    """cuptrace dump DIR: the process writes its window within a second
    (its poll), listed once however DIR is named; a later dump (a new marker, more than 2 s after the
    process's last dump) writes the next part, r.w2.ctr."""
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.Popen([PROG, "clean", "7000"], env=env(out), stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.2)  # it runs (and has polled the directory once)
        # one directory named twice (DIR/ and DIR): one marker, each file listed once
        d = tool("dump", "--wait", "1.5", f"{out}/", str(out))
        assert d.returncode == 0, d.stderr
        assert d.stdout.split() == [str(out / "r.ctr")]
        span, trig, _ = info(out / "r.ctr")
        assert trig.startswith("job: cuptrace dump (host ")
        time.sleep(1.6)  # past 2 s since the process's dump (within 1 s of the marker)
        d = tool("dump", "--wait", "1.5", str(out))
        assert d.returncode == 0, d.stderr
        assert d.stdout.split() == [str(out / "r.w2.ctr")]  # only what appeared
        assert info(out / "r.w2.ctr")[1].startswith("job: cuptrace dump (host ")
    finally:
        p.wait(timeout=30)
    # a directory nobody watches: nothing appears, exit status 1
    (tmp_path / "none").mkdir()
    d = tool("dump", "--wait", "0.2", str(tmp_path / "none"))
    assert d.returncode == 1 and d.stdout == ""


def test_abnormal_exit_and_fatal_signal_dump(tmp_path):
    out = tmp_path / "fail"
    p = run([PROG, "fail", 300], env=env(out))
    assert p.returncode == 3
    [f] = ctr_files(out)
    _, trig, text = info(f)
    assert trig == "exit status 3" and "ended:       exit(3)" in text
    out = tmp_path / "abort"
    p = run([PROG, "abort", 300], env=env(out))
    assert p.returncode == -6
    [f] = ctr_files(out)
    _, trig, text = info(f)
    assert trig == "signal 6" and "ended:       signal 6" in text
    # the other ranks are told (the marker in the job's directory); a
    # process of no rank (no launcher) names none, not "rank -1"
    first = (out / ".cuptrace-dump").read_text().splitlines()[0]
    host = re.escape(socket.gethostname())
    assert re.fullmatch(rf"signal 6 \(host {host}, pid \d+\)", first), first


def test_tiny_budget_keeps_less_and_says_so(tmp_path):
    out = tmp_path / "out"
    e = env(out, CUPTRACE_FLIGHT="30", CUPTRACE_FLIGHT_MB="1", CUPTRACE_FLIGHT_EXIT="always")
    p = run([PROG, "flood", 3000], env=e, check=True)
    made = int(p.stdout.split()[1])
    [f] = ctr_files(out)
    span, trig, text = info(f)
    assert trig == "exit status 0 (CUPTRACE_FLIGHT_EXIT=always)"
    m = re.search(r"flight cut:\s+([0-9.]+) s of the window left out: over its budget of 1 MB",
                  text)
    assert m and span < 3.0, text
    # what was left out is of the program's 3 s, not of the 30 s asked
    assert 2.0 < float(m.group(1)) + span < 3.5, text
    assert f.stat().st_size <= (1 << 20) + (64 << 10)
    # the store held what the budget allows, and about what the file holds
    held = re.search(r"flight store: ([0-9.]+) MB at most held in memory, of a budget of 1 MB",
                     text)
    assert held and 0.5 < float(held.group(1)) <= 1.0 + 1 / 16, text
    assert 0 < len(ranges(f)) < made


def test_flight_signal_dumps_and_the_program_goes_on(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen([PROG, "clean", "1500"], env=env(out, CUPTRACE_FLIGHT_SIGNAL="USR2"),
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.7)
    p.send_signal(12)  # SIGUSR2: its default action would end the program
    stdout, _ = p.communicate(timeout=30)
    assert p.returncode == 0 and stdout.startswith("ranges ")
    [f] = ctr_files(out)
    _, trig, _ = info(f)
    assert trig == "signal SIGUSR2 (CUPTRACE_FLIGHT_SIGNAL)"


def test_slow_step_dumps_once(tmp_path):
    """CUPTRACE_FLIGHT_SLOW=8: the 400 ms step among 10 ms ones dumps when
    it ends. It is the file's step 21 (the first cuptrace_step() ends step
    0, whose start nobody marked): the steps the file's records number."""
    out = tmp_path / "out"
    run([PROG, "slow", 100], env=env(out, CUPTRACE_FLIGHT="2", CUPTRACE_FLIGHT_SLOW="8"),
        check=True)
    [f] = ctr_files(out)
    _, trig, _ = info(f)
    assert trig == ("slow step: step 21 took more than 8 times the median of the steps before "
                    "it (CUPTRACE_FLIGHT_SLOW)")
    # the slow step is in the window, whole
    p = tool("events", str(f))
    slow = [l.split("\t") for l in p.stdout.splitlines() if l.endswith("\tstep")]
    assert any(int(s[7]) - int(s[6]) >= 400e6 for s in slow)


@pytest.mark.parametrize("pattern,jobdir,name", [("jobs/%h/r%p.ctr", "jobs", "r{pid}.ctr"),
                                                  ("tr", "tr", "{host}-{pid}.ctr")])
def test_cuptrace_dump_pid_finds_the_job_directory(tmp_path, pattern, jobdir, name):
    """cuptrace dump PID: the job directory from the process's own
    CUPTRACE_OUTPUT, relative to its working directory: per-process parts
    left out (jobs/%h/r%p.ctr -> jobs); an existing directory named
    without its '/' is one (tr -> tr/, as the library has it)."""
    e = env(tmp_path)
    e["CUPTRACE_OUTPUT"] = pattern
    if pattern == "tr":
        (tmp_path / "tr").mkdir()
    p = subprocess.Popen([PROG, "clean", "4000"], env=e, cwd=tmp_path, stdout=subprocess.PIPE,
                         text=True)
    try:
        time.sleep(1.2)
        d = tool("dump", "--wait", "2", str(p.pid))
        assert d.returncode == 0, d.stderr
        [f] = ctr_files(tmp_path / jobdir)
        assert d.stdout.split() == [str(f)]
        assert f.name == name.format(pid=p.pid, host=socket.gethostname())
        assert (tmp_path / jobdir / ".cuptrace-dump").exists()
        _, trig, _ = info(f)
        assert trig.startswith("job: cuptrace dump (host ")
    finally:
        p.wait(timeout=30)
    assert tool("dump", "--wait", "0", "999999999").returncode == 1  # no such process


@pytest.mark.parametrize("wait", ["x", "3s", "", "-1", "1e30", "inf"])
def test_cuptrace_dump_bad_wait_is_a_usage_error(tmp_path, wait):
    """--wait takes a number of seconds: anything else is a usage error
    (exit status 2, saying which), before any marker is made."""
    d = tool("dump", "--wait", wait, str(tmp_path))
    assert d.returncode == 2, (d.returncode, d.stderr)
    assert f"--wait {wait}" in d.stderr
    assert not (tmp_path / ".cuptrace-dump").exists()


def test_an_earlier_jobs_recent_marker_is_renewed(tmp_path):
    """A job that starts in the directory an earlier job's failure left a
    marker in, less than 2 s ago: its processes ignore that marker, and
    when one of them fails it renews the marker however recent, so that
    the others dump (they had no dump of that moment to skip)."""
    out = tmp_path / "out"
    assert run([PROG, "fail", 10], env=env(out, CUPTRACE_OUTPUT=f"{out}/a.ctr")).returncode == 3
    t0 = time.monotonic()  # the earlier job's marker, just made
    b = subprocess.Popen([PROG, "clean", "2500"], env=env(out, CUPTRACE_OUTPUT=f"{out}/b.ctr"),
                         stdout=subprocess.PIPE, text=True)
    try:
        # 300 ms of ranges first: b has recorded (and looked at the marker) by then
        c = run([PROG, "fail", 300], env=env(out, CUPTRACE_OUTPUT=f"{out}/c.ctr"))
        late = time.monotonic() - t0
    finally:
        b.communicate(timeout=30)
    assert c.returncode == 3 and b.returncode == 0
    if late > 1.8:
        pytest.skip(f"the second job failed {late:.1f} s after the first: not within 2 s")
    _, trig, _ = info(out / "b.ctr")
    assert trig.startswith("job: exit status 3 (host "), trig
    assert (out / ".cuptrace-dump").read_text().splitlines()[0] == trig[len("job: "):]


def test_a_dump_asked_before_any_event_still_tells_the_job(tmp_path):
    """cuptrace_dump() before the process recorded anything: nothing of its
    own to write, but the job is told (the marker), and another process of
    the job writes its window."""
    out = tmp_path / "out"
    b = subprocess.Popen([PROG, "clean", "2000"], env=env(out, CUPTRACE_OUTPUT=f"{out}/b.ctr"),
                         stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)  # b has recorded, and looked at the (absent) marker
        a = run([PROG, "early", 100], env=env(out, CUPTRACE_OUTPUT=f"{out}/a.ctr"), check=True)
    finally:
        b.communicate(timeout=30)
    assert a.stdout.startswith("dump 0\n") and b.returncode == 0
    assert (out / ".cuptrace-dump").read_text().startswith("cuptrace_dump() (host ")
    _, trig, _ = info(out / "b.ctr")
    assert trig.startswith("job: cuptrace_dump() (host "), trig
