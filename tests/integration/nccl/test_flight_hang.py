# SPDX-License-Identifier: MIT
"""The flight recorder in a hung job: a real Open MPI job (mpiexec, 4 ranks)
of tests/progs/nccl_harness under `cuptrace run --flight`, where rank 2
never reaches a collective (HARNESS_HANG, tests/progs/hang.h). Nothing is
written while the job runs; once the watchdog fires on a rank that waits,
that rank writes its window and its marker makes every rank write its own,
the rank that never arrived included; `nccl_hang` on those windows names
rank 2 and the range it was in, as the harness's truth says."""
import html
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import PROGS, TOOL, ctr_files, launcher_env, read_truth, tool

MPIEXEC = shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(not MPIEXEC, reason="Open MPI (mpiexec) not installed")

HARNESS = PROGS / "nccl_harness"
WORLD, ITERS = 4, 6
TIMEOUT = 2  # s: --hang-timeout (flight mode's default is 300 s)
DEADLINE = 90


def truth(d):
    return [t for r in range(WORLD) if (d / f"truth{r}.jsonl").exists()
            for t in read_truth(d / f"truth{r}.jsonl")]


def header(f):
    """The flight lines of `cuptrace info`."""
    p = tool("info", str(f))
    assert p.returncode == 0, p.stderr
    span = re.search(r"flight:\s+window of ([0-9.]+) s \(the last ([0-9.]+) s of recording "
                     r"asked\)", p.stdout)
    return span, re.search(r"trigger:\s+(.*)", p.stdout).group(1)


def colls(f):
    """The NCCL collectives a file holds."""
    m = re.search(r"nccl_coll\s+(\d+)", tool("info", str(f)).stdout)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("window,pace", [("30", None), ("0.2", "20000")],
                         ids=["whole-run", "cut-mid-run"])
def test_hang_dumps_every_rank_after_the_watchdog(tmp_path, window, pace):
    """whole-run: the window holds the whole run. cut-mid-run: 20 ms between
    the harness's collectives and a 0.2 s window, which starts in the middle
    of things (operations and ranges begun before it): the verdict is the
    same, and the time the ranks spent waiting does not push their last
    moments out of the window."""
    out = tmp_path / "out"
    env = launcher_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       OMPI_MCA_rmaps_base_oversubscribe="1", HARNESS_HANG="2:37")
    if pace:
        env["HARNESS_PACE_US"] = pace
    inner = (f'CT_TEST_TRUTH={tmp_path}/truth$OMPI_COMM_WORLD_RANK.jsonl exec {TOOL} run '
             f'-o {out}/r%r.ctr --flight {window} --hang-timeout {TIMEOUT} -- {HARNESS} {ITERS}')
    err = open(tmp_path / "stderr.txt", "w+")
    p = subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", str(WORLD), "sh", "-c", inner],
                         env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + DEADLINE
        while len({t["rank"] for t in truth(tmp_path) if t["kind"] in ("hung", "absent")}) < WORLD:
            assert p.poll() is None and time.monotonic() < deadline
            assert not ctr_files(out)  # a healthy job writes nothing
            time.sleep(0.05)
        stuck = [t for t in truth(tmp_path) if t["kind"] in ("hung", "absent")]
        # the first rank blocked at `first` (CLOCK_MONOTONIC, the harness's
        # clock, stamped just after the plugin saw the operation start): no
        # file before its watchdog's timeout has passed
        first = min(t["t"] for t in stuck if t["kind"] == "hung")
        while len(ctr_files(out)) < WORLD:
            if ctr_files(out):
                assert time.monotonic_ns() >= first + (TIMEOUT - 0.1) * 1e9
            assert p.poll() is None and time.monotonic() < deadline, open(err.name).read()
            time.sleep(0.01)
        # all ranks within 2 s of the first rank's watchdog (the marker is
        # polled once a second)
        assert time.monotonic_ns() - (first + TIMEOUT * 1e9) < 2.5e9
        time.sleep(0.3)  # the last file's footer
        files = ctr_files(out)
        assert sorted(f.name for f in files) == [f"r{r}.ctr" for r in range(WORLD)]
        hung = {t["rank"]: t for t in stuck if t["kind"] == "hung"}
        assert sorted(hung) == [0, 1, 3]
        for f in files:
            r = int(f.name[1])
            span, trig = header(f)
            assert span and float(span.group(2)) == float(window)
            if r in hung:
                assert trig.startswith("hang") or trig.startswith("job: hang"), trig
            else:  # the rank that never arrived: through the marker
                assert trig.startswith("job: hang: the watchdog fired (rank "), trig
        # info on the job: a row per rank, then each window's trigger
        rows = {int(r): t for r, t in re.findall(r"^ +(\d)   window of [0-9.]+ s, trigger: (.*)$",
                                                 tool("info", str(out)).stdout, re.M)}
        assert sorted(rows) == list(range(WORLD))
        assert rows[2].startswith("job: hang: the watchdog fired (rank ")
        assert all(rows[r].startswith(("hang: ", "job: hang: ")) for r in hung)
        marker = (out / ".cuptrace-dump").read_text()
        assert marker.startswith("hang: the watchdog fired (rank ")
        # the verdict from the windows alone
        v = tool("stats", "--report", "nccl_hang", *map(str, files))
        assert v.returncode == 0, v.stderr
        [h] = {(t["func"], t["seq"]) for t in hung.values()}
        if pace:  # the windows hold only the last of the collectives each rank made
            assert all(0 < colls(f) < h[1] for f in files)
        assert re.search(rf"hang: rank 2 never arrived at {h[0]} #{h[1]} of world [0-9a-f]{{16}}; "
                         r"ranks 0, 1, 3 waited in it; rank 2 was in step > save_checkpoint",
                         v.stdout), v.stdout
        # nothing else: operations begun before a window that starts mid-run
        # are neither incomplete nor a disagreement between ranks
        doc = json.loads(tool("stats", "--format", "json", "--report", "nccl_hang",
                              *map(str, files)).stdout)
        [row] = doc["nccl_hang: collectives not completed on every rank"]
        assert (row["Seq"], row["Operation"], row["Missing Ranks"]) == (h[1], h[0], "2")
        assert doc.get("nccl_hang: ranks that disagree", []) == []
        where = {(r["Rank"], r["Communicator"].split()[0]): r["State"]
                 for r in doc["nccl_hang: where each rank was"]}
        assert where[(2, "world")] == f"never arrived at #{h[1]}"
        assert all(where[(r, "world")] == f"waiting in {h[0]} #{h[1]}" for r in (0, 1, 3))
        assert all(st == "finished" for (r, c), st in where.items() if c == "pair")
        # the HTML report: the windows and their trigger in its header, the
        # hang's section first
        page = tmp_path / "report.html"
        assert tool("report", "-o", str(page), *map(str, files)).returncode == 0
        text = html.unescape(page.read_text())
        assert (f'<dd data-h="flight">4 of 4 files, the last {float(window):g} s of each '
                'process; trigger: hang: the watchdog fired</dd>') in text
        assert re.findall(r"<h2[^>]*>([^<]*)", text)[0] == "NCCL hang: who never arrived"
    finally:
        # the ranks first (each said its pid): mpiexec killed alone leaves
        # them hung, orphans, for good
        for t in truth(tmp_path):
            if t["kind"] in ("hung", "absent"):
                try:
                    os.kill(t["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        err.close()
