# SPDX-License-Identifier: MIT
"""The mpi source against programs that misuse MPI or stress it (Open MPI
and MPICH): an MPI call before MPI_Init or after MPI_Finalize (MPI itself
aborts the program: the wrappers call no MPI of their own then, nothing
crashes, the file is whole and holds the call); MPI_THREAD_MULTIPLE with
4 threads a rank calling at once (every call recorded, each thread its
own MPI track, every request linked, every collective matched across
ranks); a communicator freed and its handle given out again by MPI, 20
times (each comes back as a communicator of its own id, the same on
every rank)."""
import json
import re
from collections import Counter

import pytest

from conftest import SAN, TOOL, convert, ctr_files, run, tool
from mpi_jobs import NRANKS, impls, mpi_env, prog, run_job, truth


def counts(path):
    p = tool("info", path)
    assert p.returncode == 0, p.stderr
    c = {m[1]: int(m[2]) for m in re.finditer(r"^  (\w+) +(\d+) +dropped", p.stdout, re.M)}
    return c, re.search(r"^status:\s+(\S+)", p.stdout, re.M)[1]


@pytest.mark.parametrize("impl", impls())
@pytest.mark.parametrize("mode", ["early", "after"])
def test_a_call_outside_init_and_finalize(tmp_path, impl, mode):
    p = run([TOOL, "run", "-t", "mpi,nvtx", "-o", f"{tmp_path}/o/t.ctr", "--", prog(impl), mode],
            env=mpi_env(), timeout=120)
    # MPI's own verdict (an error exit), not a crash of ours
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "cuptrace" not in p.stderr, p.stderr
    assert re.search(r"MPI_INIT|MPI_FINALIZE|before initializing", p.stderr), p.stderr
    [f] = ctr_files(tmp_path / "o")
    c, status = counts(f)
    assert status == "clean", status
    doc = convert([f], tmp_path / "t.json")
    calls = [(e["name"], e["args"].get("unfinished", False)) for e in doc["traceEvents"]
             if e.get("cat") == "mpi" and e.get("ph") == "X"]
    if mode == "early":
        assert calls == [("MPI_Barrier", True)] and "mpi_comm" not in c, (calls, c)
    else:
        assert calls == [("MPI_Init", False), ("MPI_Finalize", False), ("MPI_Barrier", True)]
        assert c["mpi_comm"] == 2, c  # world and self, made while MPI was up


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


@pytest.mark.skipif("address" in SAN, reason="ASan's allocator does not give a freed "
                    "communicator's memory out again soon (quarantine), so MPI reuses no handle")
@pytest.mark.parametrize("impl", impls())
def test_a_freed_communicators_handle_comes_back_as_another(tmp_path, impl):
    n = 20
    run_job(impl, tmp_path, ["reuse", n])
    handles = Counter()
    for r in range(NRANKS):
        for l in (tmp_path / f"truth.{r}").read_text().splitlines():
            h = json.loads(l).get("handle")
            if h is not None:
                handles[(r, h)] += 1
    assert max(handles.values()) > 1, handles  # MPI gave a freed handle out again
    files = ctr_files(tmp_path / "o")
    doc = convert(files, tmp_path / "t.json")
    ranks = {f["pid"]: f["rank"] for f in doc["cuptrace"]["files"]}
    ids = {r: [] for r in range(NRANKS)}
    for e in doc["traceEvents"]:
        if e.get("cat") == "mpi" and e.get("name") == "MPI_Allreduce":
            assert e["args"]["seq"] == 1 and e["args"]["nranks"] == NRANKS, e
            ids[ranks[e["pid"]]].append(e["args"]["comm"])
    for r in range(NRANKS):
        assert len(ids[r]) == len(set(ids[r])) == n, ids[r]
        assert ids[r] == ids[0]  # in the same order on every rank
    p = tool("stats", "-f", "json", "-r", "mpi_skew", *files)
    per = json.loads(p.stdout)["mpi_skew: arrival at collectives per rank"]
    assert all(r["Collectives"] == 2 * n + 1 for r in per), per  # dup, its Allreduce; Finalize
