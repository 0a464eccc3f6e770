# SPDX-License-Identifier: MIT
"""MPI calls in the outputs (`-t mpi`; the model's MPI tracks): a 4-rank
job of tests/progs/mpi/mpi_calls under Open MPI and MPICH, converted. Each
thread's calls are slices on an "MPI (thread N)" track beside it, in the
order the program made them, with the bytes, peers (as ranks of
MPI_COMM_WORLD too), sequence numbers and communicators it logged; each
request's call has an arrow to the call that completed it; communicator
ids agree across ranks; the .pftrace holds the same events as the JSON;
`cuptrace events` lists each rank's communicators; `cuptrace export` writes
nsys's MPI tables, which nsys's own MPI query reads."""
from collections import Counter, defaultdict

import pytest

from conftest import convert, ctr_files, tool
from mpi_jobs import NRANKS, impls, run_job, truth
from test_pftrace import same_as_json

WAITS = {"MPI_Wait", "MPI_Waitall", "MPI_Test", "MPI_Startall", "MPI_Request_free"}


@pytest.fixture(scope="module", params=impls())
def calls_job(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"mpi-{request.param}")
    run_job(request.param, d, ["calls"])
    return d, ctr_files(d / "o"), truth(d)


def mpi_slices(doc):
    """{rank: [MPI slices of its MPI tracks, by start]} and the tracks' names."""
    ev = doc["traceEvents"]
    ranks = {f["pid"]: f["rank"] for f in doc["cuptrace"]["files"]}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    out = defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "mpi":
            out[ranks[e["pid"]]].append(e)
            assert tname[(e["pid"], e["tid"])].startswith("MPI (thread "), tname
    for v in out.values():
        v.sort(key=lambda e: e["ts"])
    return out


def test_calls_as_the_program_made_them(calls_job, tmp_path):
    d, files, t = calls_job
    doc = convert(files, tmp_path / "t.json")
    got = mpi_slices(doc)
    world = set()
    for r in range(NRANKS):
        s = got[r]
        assert [e["name"] for e in s] == [x["f"] for x in t[r]], r
        for e, x in zip(s, t[r]):
            a = e["args"]
            assert (a.get("bytes", 0), a.get("recv bytes", 0)) == (x["bytes"], x["recv"]), (e, x)
            assert a.get("seq", 0) == x["seq"], (e, x)
            if x["f"] not in WAITS and x["peer"] >= 0:
                assert a.get("world peer", a.get("world root")) == x["peer"], (e, x)
            if x["comm"] == "world":
                assert a["comm_name"] == "MPI_COMM_WORLD" and a["nranks"] == NRANKS, e
                world.add(a["comm"])
            if x["comm"] == "halves":
                assert a["comm_name"] == "halves" and a["nranks"] == 2, e
        send = next(e for e in s if e["name"] == "MPI_Send")
        assert send["args"]["datatype"] == "MPI_INT" and send["args"]["count"] == 100
        assert send["args"]["tag"] == 0 and send["dur"] >= 0
    assert len(world) == 1  # one id on every rank
    halves = Counter(e["args"]["comm"] for r in range(NRANKS) for e in got[r]
                     if e["args"].get("comm_name") == "halves" and e["name"] == "MPI_Allreduce")
    assert sorted(halves.values()) == [2, 2], halves  # even and odd ranks
    dups = {e["args"]["comm"] for r in range(NRANKS) for e in got[r]
            if e["name"] == "MPI_Barrier" and e["args"].get("seq") == 1}
    assert len(dups) == 1 and not dups & world  # a dup of the world is another communicator


def test_each_request_links_its_call_to_the_one_that_completed_it(calls_job, tmp_path):
    d, files, t = calls_job
    doc = convert(files, tmp_path / "t.json")
    ranks = {f["pid"]: f["rank"] for f in doc["cuptrace"]["files"]}
    at = {}  # (pid, tid, ts) -> the MPI slice starting there
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "mpi":
            at[(e["pid"], e["tid"], e["ts"])] = e["name"]
    flows = defaultdict(dict)
    for e in doc["traceEvents"]:
        if e.get("ph") in ("s", "f") and e.get("cat") == "mpi":
            flows[e["id"]][e["ph"]] = e
    per = defaultdict(Counter)
    for f in flows.values():
        s, e = f["s"], f["f"]
        assert s["pid"] == e["pid"]
        per[ranks[s["pid"]]][(at[(s["pid"], s["tid"], s["ts"])],
                             at[(e["pid"], e["tid"], e["ts"])])] += 1
    want = Counter({("MPI_Irecv", "MPI_Waitall"): 1, ("MPI_Isend", "MPI_Waitall"): 1,
                    ("MPI_Irecv", "MPI_Test"): 1, ("MPI_Isend", "MPI_Wait"): 1,
                    ("MPI_Startall", "MPI_Waitall"): 4, ("MPI_Iallreduce", "MPI_Wait"): 1,
                    ("MPI_Ibarrier", "MPI_Test"): 1})
    for r in range(NRANKS):
        assert per[r] == want, (r, per[r])


def test_pftrace_holds_the_json_events(calls_job, tmp_path):
    d, files, t = calls_job
    pf, doc = same_as_json(files, tmp_path)
    assert any(s["cat"] == "mpi" and s["name"] == "MPI_Allreduce" and s["args"].get("seq")
               for s in pf["slices"])


def test_events_list_each_ranks_communicators(calls_job):
    d, files, t = calls_job
    p = tool("events", *files)
    assert p.returncode == 0, p.stderr
    comms = defaultdict(list)
    for line in p.stdout.splitlines()[1:]:
        f = line.split("\t")
        if f[2] == "mpi_comm":
            comms[int(f[0])].append(f[8])
    for r in range(NRANKS):
        names = comms[r]
        assert len(names) == 4, names  # world, self, the split's half, the dup
        assert names[0].startswith("MPI_COMM_WORLD ") and names[0].endswith(f"rank {r}/4")
        assert names[1].startswith("MPI_COMM_SELF ") and names[1].endswith("rank 0/1")


# nsys's own MPI event trace (its report's SQL, the point-to-point,
# start/wait and collective tables joined with MPI_RANKS).
NSYS_MPI_TRACE = """
WITH evts AS (
    SELECT 'p2p' AS source, start, end, globalTid, textId, size, NULL AS collSendSize,
           NULL AS collRecvSize, tag, remoteRank, NULL AS rootRank FROM MPI_P2P_EVENTS
    UNION ALL
    SELECT 'startwait', start, end, globalTid, textId, NULL, NULL, NULL, NULL, NULL, NULL
    FROM MPI_START_WAIT_EVENTS
    UNION ALL
    SELECT 'coll', start, end, globalTid, textId, size, collSendSize, collRecvSize, NULL, NULL,
           rootRank FROM MPI_COLLECTIVES_EVENTS)
SELECT e.source, s.value, r.rank, e.remoteRank, e.size, e.collSendSize, e.collRecvSize
FROM evts AS e LEFT JOIN StringIds AS s ON e.textId == s.id
LEFT JOIN MPI_RANKS AS r ON e.globalTid == r.globalTid
"""


def test_sqlite_export_holds_nsys_mpi_tables(calls_job, tmp_path):
    """`cuptrace export`: nsys's MPI tables, which nsys's own MPI event
    trace query reads: every call of each rank in the table of its kind,
    with the rank, peer and sizes the program logged."""
    import sqlite3
    d, files, t = calls_job
    p = tool("export", "-o", tmp_path / "m.sqlite", *files)
    assert p.returncode == 0, p.stderr
    db = sqlite3.connect(tmp_path / "m.sqlite")
    rows = db.execute(NSYS_MPI_TRACE).fetchall()
    got = Counter()
    for table in ("MPI_P2P_EVENTS", "MPI_COLLECTIVES_EVENTS", "MPI_START_WAIT_EVENTS",
                  "MPI_OTHER_EVENTS"):
        got += Counter(db.execute(f"SELECT r.rank, s.value FROM {table} m JOIN StringIds s ON "
                                  "s.id = m.textId JOIN MPI_RANKS r ON r.globalTid = m.globalTid"
                                  ).fetchall())
    assert got == Counter((r, x["f"]) for r in t for x in t[r])
    kinds = {r[1]: r[0] for r in rows}
    assert (kinds["MPI_Send"], kinds["MPI_Waitall"], kinds["MPI_Allreduce"],
            kinds["MPI_Iallreduce"]) == ("p2p", "startwait", "coll", "coll")
    sends = sorted((r[2], r[3], r[4]) for r in rows if r[1] == "MPI_Send")
    assert sends == sorted((r, x["peer"], x["bytes"]) for r in t for x in t[r]
                           if x["f"] == "MPI_Send")
    ar = [(r[5], r[6]) for r in rows if r[1] == "MPI_Allreduce" and r[4] == 256]
    assert ar == [(256, 256)] * (5 * NRANKS)
    assert db.execute("SELECT count(DISTINCT globalTid), count(DISTINCT rank) FROM MPI_RANKS"
                      ).fetchone() == (NRANKS, NRANKS)
