# SPDX-License-Identifier: MIT
"""`cuptrace stats` on MPI calls (-t mpi): a 4-rank job of
tests/progs/mpi/mpi_calls under Open MPI and MPICH in which rank 2 sleeps
300 ms before the third MPI_Allreduce. mpi_sum counts every call each
rank logged, with its bytes sent and received, exactly; mpi_skew matches
the collectives across ranks and names rank 2 last at that MPI_Allreduce,
by about the sleep."""
import json
from collections import Counter

import pytest

from conftest import ctr_files, tool
from mpi_jobs import NRANKS, impls, run_job, truth

LATE_RANK, LATE_MS = 2, 300


@pytest.fixture(scope="module", params=impls())
def late_job(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"late-{request.param}")
    run_job(request.param, d, ["calls", LATE_RANK, LATE_MS])
    return ctr_files(d / "o"), truth(d)


def tables(*args):
    p = tool("stats", "-f", "json", *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_mpi_sum_counts_every_call(late_job):
    files, t = late_job
    [rows] = tables("-r", "mpi_sum", *files).values()
    calls, sent, recv = Counter(), Counter(), Counter()
    for r in rows:
        calls[r["Function"]] += r["Calls"]
        sent[r["Function"]] += r["Total Bytes"]
        recv[r["Function"]] += r["Recv Bytes"]
        assert r["Min (ns)"] <= r["Avg (ns)"] <= r["Max (ns)"], r
    want = Counter(x["f"] for r in range(NRANKS) for x in t[r])
    assert calls == want
    assert sent == Counter({f: sum(x["bytes"] for r in t for x in t[r] if x["f"] == f)
                            for f in want})
    assert recv == Counter({f: sum(x["recv"] for r in t for x in t[r] if x["f"] == f)
                            for f in want})
    by = {(r["Function"], r["Datatype"]): r for r in rows}
    assert by[("MPI_Allreduce", "MPI_DOUBLE")]["Calls"] == 5 * NRANKS
    assert by[("MPI_Send", "MPI_INT")]["Total Bytes"] == NRANKS * 400 * (1 + 2 + 3)
    # nsys's name for it
    assert tables("-r", "mpi_event_sum", *files) == tables("-r", "mpi_sum", *files)


def test_mpi_skew_names_the_late_rank(late_job):
    files, t = late_job
    seq = [x["seq"] for x in t[0] if x["f"] == "MPI_Allreduce"][2]
    out = tables("-r", "mpi_skew", *files)
    per = out["mpi_skew: arrival at collectives per rank"]
    worst = out["mpi_skew: worst collectives by arrival spread (top 20)"]
    top = worst[0]
    assert (top["Operation"], top["Seq"], top["Last Rank"]) == ("MPI_Allreduce", seq, LATE_RANK)
    assert top["Communicator"].startswith("MPI_COMM_WORLD ")
    assert LATE_MS * 0.8e6 <= top["Spread (ns)"] <= LATE_MS * 3e6, top
    colls = sum(1 for x in t[0] if x["comm"] == "world" and x["seq"])
    assert [r["Rank"] for r in per] == list(range(NRANKS))
    for r in per:
        # every collective of the world, of its half and of the dup, matched
        assert r["Collectives"] == colls + 2, r
    # the sleep shows in rank 2's lateness over every other rank's (on a loaded
    # machine MPICH's polling ranks each run tens of ms late at some collective)
    late = {r["Rank"]: r["Total Lateness (ns)"] for r in per}
    others = max(v for k, v in late.items() if k != LATE_RANK)
    assert late[LATE_RANK] >= LATE_MS * 0.8e6 and late[LATE_RANK] - others >= LATE_MS * 0.5e6, \
        late


def test_same_tables_whatever_the_workers(late_job):
    files, t = late_job
    one = tool("stats", "-j", "1", "-r", "mpi_sum,mpi_skew", *files)
    assert one.returncode == 0, one.stderr
    for j in (2, 4):
        p = tool("stats", "-j", str(j), "-r", "mpi_sum,mpi_skew", *files)
        assert (p.returncode, p.stdout, p.stderr) == (0, one.stdout, one.stderr), j


def test_html_report_has_the_mpi_sections(late_job, tmp_path):
    """`cuptrace report` on the job: the MPI calls and the skew, drawn from
    the same mpi_sum and mpi_skew tables; a trace without MPI has neither
    section."""
    files, t = late_job
    p = tool("report", "-o", str(tmp_path / "r.html"), *files)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "r.html").read_text()
    assert "MPI calls" in page and "MPI skew: who arrives late" in page
    assert 'data-t="mpi_sum: MPI calls by function and datatype"' in page
    assert 'data-t="mpi_skew: arrival at collectives per rank"' in page
    assert "MPI_Allreduce" in page


def test_breakdown_counts_the_time_ranks_wait_in_mpi(late_job):
    """breakdown's CPU side: every call each rank logged, and the time in
    them; the ranks that waited for rank 2 at the late MPI_Allreduce spent
    about its 300 ms sleep more in MPI than rank 2 did."""
    files, t = late_job
    out = tables("-r", "breakdown", *files)
    rows = {r["Rank"]: r for r in out["breakdown: CPU time in MPI calls per rank"]}
    assert sorted(rows) == list(range(NRANKS))
    for r in range(NRANKS):
        assert rows[r]["MPI Calls"] == len(t[r]), (r, rows[r])
        assert 0 < rows[r]["In MPI (ns)"] <= rows[r]["Window (ns)"], rows[r]
    for r in set(range(NRANKS)) - {LATE_RANK}:
        assert rows[r]["In MPI (ns)"] - rows[LATE_RANK]["In MPI (ns)"] >= LATE_MS * 0.5e6, rows
