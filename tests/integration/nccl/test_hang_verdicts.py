# SPDX-License-Identifier: MIT
"""nccl_hang's verdict on jobs that did not hang: a healthy job stopped by
its time limit while ranks waited in a collective (test_nccl_hang.py has the
jobs that hang)."""
import re
import signal
import subprocess
import time

from conftest import ctr_files, traced_env
from test_nccl_hang import DEADLINE, HANG_SECTION, HARNESS, WORLD, hang_tables, html_page


def test_a_job_stopped_by_its_time_limit_is_not_a_hang(tmp_path):
    """A healthy job killed by its time limit while its ranks were in a
    collective waiting for a late rank (150 ms late at every collective,
    200 ms apart): the verdict says no hang, and how long the ranks had
    been in it, not "hang: rank 3 never arrived at ..."."""
    out = tmp_path / "out"
    t0 = time.time_ns() + 300_000_000
    procs = []
    for r in range(WORLD):
        env = dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/r%r.ctr", RANK=str(r),
                   WORLD_SIZE=str(WORLD), HARNESS_PACE_US="200000", HARNESS_T0=str(t0),
                   HARNESS_LATE="3:150000:1", HARNESS_LATE_WAITS="1")
        procs.append(subprocess.Popen([str(HARNESS), "1000"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    # the limit strikes in the middle of collective 5's wait for rank 3
    time.sleep(max(0.0, (t0 + 5 * 200_000_000 + 75_000_000 - time.time_ns()) / 1e9))
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.communicate(timeout=DEADLINE)
    files = ctr_files(out)
    assert len(files) == WORLD
    verdict, colls, ranks, mism = hang_tables(files)
    assert verdict.startswith("no hang: the traces end while ranks 0, 1, 2 "), verdict
    ms = float(re.search(r" for at most ([0-9.]+) ms ", verdict).group(1))
    assert 0 < ms < 150, verdict
    assert [c["Missing Ranks"] for c in colls] == ["3"]  # the tables say what the files hold
    page = html_page(files, tmp_path)
    assert HANG_SECTION not in page and 'data-h="hang"' not in page
