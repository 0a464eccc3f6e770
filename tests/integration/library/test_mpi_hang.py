# SPDX-License-Identifier: MIT
"""An MPI job that hangs (-t mpi): in tests/progs/mpi/mpi_calls' `hang`
mode rank 3 stops before an MPI_Allreduce inside the NVTX range "stuck in
io" while ranks 0-2 wait in it; after a few seconds every rank is killed
(SIGKILL, no footer). What was recorded is kept: the waiting ranks' call
shows, unfinished; mpi_hang names rank 3 as the one that never arrived,
the range it was in, and the ranks that waited. With CUPTRACE_HANG_TIMEOUT
the watchdog of each waiting rank says so once on stderr and records
mpi_hang. Open MPI and MPICH."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import convert, ctr_files, tool
from mpi_jobs import NRANKS, impls, job_cmd, mpi_env

STUCK = 3


def where(d):
    """{rank: (pid, its last line)} of the ranks that logged where they are."""
    out = {}
    for r in range(NRANKS):
        try:
            lines = [json.loads(l) for l in (d / f"truth.{r}").read_text().splitlines() if l]
        except (FileNotFoundError, json.JSONDecodeError):
            continue
        if lines and lines[-1].get("f") in ("waiting", "stuck"):
            out[r] = (lines[0]["pid"], lines[-1]["f"])
    return out


def hang_job(impl, d, run_args=()):
    """Runs the job until every rank is where it hangs, 3 s more, then
    kills every rank; returns the launcher's stderr."""
    p = subprocess.Popen(job_cmd(impl, d, ["hang", STUCK], run_args=run_args),
                         env=mpi_env(CT_TEST_TRUTH=f"{d}/truth"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(where(d)) < NRANKS and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
        w = where(d)
        assert len(w) == NRANKS, w
        assert w[STUCK][1] == "stuck" and all(w[r][1] == "waiting" for r in w if r != STUCK)
        time.sleep(3)
        for pid, _ in w.values():
            os.kill(pid, signal.SIGKILL)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return err


@pytest.mark.parametrize("impl", impls())
def test_mpi_hang_names_who_never_arrived(tmp_path, impl):
    hang_job(impl, tmp_path)
    files = ctr_files(tmp_path / "o")
    assert len(files) == NRANKS
    p = tool("stats", "-f", "json", "-r", "mpi_hang", *files)
    assert p.returncode == 0, p.stderr
    t = json.loads(p.stdout)
    [v] = t["mpi_hang: verdict"]
    verdict = v["Verdict"]
    assert verdict.startswith("hang: rank 3 never arrived at MPI_Allreduce #2 of "
                              "MPI_COMM_WORLD "), verdict
    assert "ranks 0, 1, 2 waited in it" in verdict and "rank 3 was in stuck in io" in verdict
    [c] = t["mpi_hang: collectives not completed on every rank"]
    assert (c["Seq"], c["Operation"], c["Entered Ranks"], c["Missing Ranks"],
            c["Incomplete Ranks"]) == (2, "MPI_Allreduce", "0, 1, 2", "3", "0, 1, 2")
    rows = {r["Rank"]: r for r in t["mpi_hang: where each rank was"]
            if r["Communicator"].startswith("MPI_COMM_WORLD ")}
    assert rows[STUCK]["State"] == "never arrived at #2" and rows[STUCK]["Open Ranges"] == \
        "stuck in io"
    for r in range(NRANKS - 1):
        assert rows[r]["State"] == "waiting in MPI_Allreduce #2", rows[r]
        assert (rows[r]["Last Seq Entered"], rows[r]["Last Seq Completed"]) == (2, 1)
    # the waiting ranks' call is on their timeline, unfinished
    doc = convert(files, tmp_path / "t.json")
    waits = [e for e in doc["traceEvents"] if e.get("cat") == "mpi" and e.get("ph") == "X" and
             e["args"].get("unfinished")]
    assert sorted(e["name"] for e in waits) == ["MPI_Allreduce"] * (NRANKS - 1)
    assert all(e["args"]["seq"] == 2 for e in waits)


@pytest.mark.parametrize("impl", impls("openmpi"))
def test_watchdog_flags_the_mpi_collective(tmp_path, impl):
    err = hang_job(impl, tmp_path, run_args=["--hang-timeout", "1"])
    lines = sorted(l for l in err.splitlines() if "in flight for" in l)
    assert len(lines) == NRANKS - 1, err
    for r, l in zip(range(NRANKS - 1), lines):
        assert l.startswith(f"cuptrace: rank {r}: MPI_Allreduce #2 of MPI_COMM_WORLD "), l
        assert l.endswith("; trace flushed"), l
    files = ctr_files(tmp_path / "o")
    p = tool("events", *files)
    hangs = [l.split("\t") for l in p.stdout.splitlines() if "\tmpi_hang\t" in l]
    assert sorted(int(h[0]) for h in hangs) == list(range(NRANKS - 1)), hangs
    assert all(h[8] == "hang_suspected MPI_Allreduce #2" for h in hangs)
    p = tool("stats", "-f", "json", "-r", "mpi_hang", *files)
    [v] = json.loads(p.stdout)["mpi_hang: verdict"]
    assert v["Verdict"].startswith("hang: rank 3 never arrived"), v


@pytest.mark.parametrize("impl", impls("openmpi"))
def test_flight_mode_dumps_the_mpi_hang(tmp_path, impl):
    """--flight (docs/flight-recorder.md): the watchdog of the ranks waiting
    in the collective writes their windows, and the marker makes rank 3,
    which never arrived, write its own; mpi_hang reads the windows as it
    reads whole files. The ranks are then killed with SIGKILL: nothing else
    is written."""
    err = hang_job(impl, tmp_path, run_args=["--flight", "30", "--hang-timeout", "1"])
    files = ctr_files(tmp_path / "o")
    assert sorted(f.name for f in files) == [f"r{r}.ctr" for r in range(NRANKS)], err
    for f in files:
        trig = [l for l in tool("info", str(f)).stdout.splitlines() if l.startswith("trigger:")]
        want = "job: hang: " if f.name == f"r{STUCK}.ctr" else ("hang: ", "job: hang: ")
        assert len(trig) == 1 and trig[0].split(None, 1)[1].startswith(want), trig
    p = tool("stats", "-f", "json", "-r", "mpi_hang", *files)
    [v] = json.loads(p.stdout)["mpi_hang: verdict"]
    assert v["Verdict"].startswith("hang: rank 3 never arrived at MPI_Allreduce #2 of "), v
    assert "rank 3 was in stuck in io" in v["Verdict"]
