# SPDX-License-Identifier: MIT
"""Capture windows that close while NCCL work is queued: a healthy job is
never a hang. The NCCL harness (tests/progs/nccl_harness, NCCL 2.28's
profiler-plugin calls, no GPU) runs one rank long after its window ends;
the proxy thread's kernel channels of collectives recorded inside the
window come after it. Every collective recorded must complete in the file,
the watchdog must say nothing and nccl_hang must find no hang, whichever
way the window closed."""
import pytest

from conftest import PROGS, ctr_files, run, tool, traced_env

HARNESS = PROGS / "nccl_harness"
ITERS = 3000  # about two seconds of collectives after the windows below close

WINDOWS = {
    "duration": dict(CUPTRACE_DURATION="0.2"),
    "steps": dict(CUPTRACE_STEPS="wait=1,active=3,repeat=1", HARNESS_STEPS="1"),
}


@pytest.mark.parametrize("watchdog", [True, False], ids=["watchdog", "no_watchdog"])
@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_a_window_closing_on_queued_collectives_is_no_hang(tmp_path, window, watchdog):
    env = traced_env(tmp_path / "o", RANK="0", WORLD_SIZE="2", **WINDOWS[window])
    if watchdog:  # longer than a loaded machine stalls the harness's threads
        env["CUPTRACE_HANG_TIMEOUT"] = "1"
    p = run([HARNESS, ITERS], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "in flight" not in p.stderr and p.stderr == "", p.stderr[:2000]
    [f] = ctr_files(tmp_path / "o")
    events = tool("events", f, check=True).stdout
    assert "hang_suspected" not in events
    colls = sum(1 for line in events.splitlines() if "\tAllReduce" in line)
    assert colls > 0, "nothing was captured"
    assert "capture off" in events, "the window never closed: the test tests nothing"
    verdict = tool("stats", "--report", "nccl_hang", "--format", "json", f, check=True).stdout
    assert "no collective left incomplete" in verdict, verdict[:3000]
