# SPDX-License-Identifier: MIT
"""The mpi source against programs that stress MPI (Open MPI and MPICH):
MPI_THREAD_MULTIPLE with 4 threads a rank calling at once (every call
recorded, each thread its own MPI track, every request linked, every
collective matched across ranks)."""
import json
from collections import Counter

import pytest

from conftest import convert, ctr_files, tool
from mpi_jobs import NRANKS, impls, run_job, truth


@pytest.mark.parametrize("impl", impls())
def test_threads_calling_at_once(tmp_path, impl):
    run_job(impl, tmp_path, ["threads", 4])
    t = truth(tmp_path)
    files = ctr_files(tmp_path / "o")
    p = tool("stats", "-f", "json", "-r", "mpi_sum,mpi_skew", *files)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    calls, sent, recv = Counter(), Counter(), Counter()
    for r in out["mpi_sum: MPI calls by function and datatype"]:
        calls[r["Function"]] += r["Calls"]
        sent[r["Function"]] += r["Total Bytes"]
        recv[r["Function"]] += r["Recv Bytes"]
    want = Counter(x["f"] for r in t for x in t[r])
    assert calls == want
    # every request linked to the Waitall that completed it (the bytes it adds)
    assert (sent["MPI_Waitall"], recv["MPI_Waitall"]) == (4 * want["MPI_Waitall"],) * 2
    per = out["mpi_skew: arrival at collectives per rank"]
    colls = sum(1 for x in t[0] if x["seq"])
    assert [(r["Rank"], r["Collectives"]) for r in per] == [(r, colls) for r in range(NRANKS)]
    doc = convert(files, tmp_path / "t.json")
    tracks = Counter(e["pid"] for e in doc["traceEvents"] if e.get("ph") == "M" and
                     e["name"] == "thread_name" and e["args"]["name"].startswith("MPI (thread"))
    assert sorted(tracks.values()) == [5] * NRANKS  # the main thread and 4 workers
