# SPDX-License-Identifier: MIT
"""`cuptrace export` (SQLite with Nsight Systems' tables, docs/SQLITE.md):
the queries people run against nsys exports, run on exports of the CUPTI
simulator's training run, an NVTX program and the 4-rank NCCL harness, and
each answer checked against `cuptrace stats --format json` of the same
trace. Plus: a failed export leaves no file."""
import json
import resource
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import defaultdict

import pytest

from conftest import (BUILD, PROGS, TOOL, base_env, convert, ctr_files, read_truth, run, tool,
                      traced_env)
from programs import ITERS, SIM_TRAIN, WORLD, kinds, ops_of, run_ranks, sim_env

HARNESS_SIM = BUILD / "tests" / "cupti_sim" / "nccl_harness_sim"


def convert_doc(inputs, out):
    return convert(inputs, out)["traceEvents"]


def export(inputs, out, *args, rc=0):
    p = tool("export", "-o", str(out), *args, *map(str, inputs))
    assert p.returncode == rc, p.stderr
    assert p.stderr.strip().endswith(f"wrote {out}"), p.stderr
    return sqlite3.connect(str(out))


def stats(inputs, report, table=None):
    """The report's table (its first, or the one whose title starts with table)."""
    p = tool("stats", "--format", "json", "--report", report, *map(str, inputs))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    [key] = [k for k in doc if k.startswith(table or report + ":")]
    return doc[key]


WALL_NS = {}  # fixture name: how long its traced program ran, by the test's clock


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    d = tmp_path_factory.mktemp("sqlite_train")
    t0 = time.monotonic_ns()
    p = run([SIM_TRAIN, "train", 40], env=sim_env(d / "out", d), timeout=120)
    WALL_NS["train"] = time.monotonic_ns() - t0
    assert p.returncode == 0, p.stderr
    files = ctr_files(d / "out")
    assert len(files) == 1
    return files, export(files, d / "t.sqlite"), read_truth(d / "sim.jsonl"), d


def test_tables_and_columns_as_nsys_names_them(train):
    _, db, _, _ = train
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for t in ("StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "NVTX_EVENTS",
              "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
              "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "ENUM_CUDA_MEMCPY_OPER",
              "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE", "ENUM_NSYS_EVENT_TYPE",
              "CUPTRACE_RANKS", "CUPTRACE_STEPS", "CUPTRACE_NCCL_OPERATIONS"):
        assert t in tables
    cols = [r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    for c in ("start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
              "demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX",
              "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
              "dynamicSharedMemory", "graphNodeId"):
        assert c in cols
    # every kernel as the simulator ran it, its names through StringIds
    n = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert n == len(kinds(train[2], "kernel"))
    names = dict(db.execute(
        "SELECT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName"))
    assert names["triton_poi_fused_add_0"] == "triton_poi_fused_add_0"
    assert any(v == "vectorized_elementwise_kernel" for v in names.values())
    # nsys's decoding of globalTid gives the pid back
    pid = db.execute("SELECT pid FROM CUPTRACE_RANKS").fetchone()[0]
    assert {r[0] for r in db.execute(
        "SELECT DISTINCT globalTid / 0x1000000 % 0x1000000 FROM CUPTI_ACTIVITY_KIND_RUNTIME")} == {pid}


def test_total_kernel_time_by_short_name(train):
    files, db, _, _ = train
    got = dict(db.execute(
        "SELECT s.value, sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.shortName GROUP BY s.value"))
    short_of = dict(db.execute(
        "SELECT DISTINCT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName"))
    want = defaultdict(int)
    for r in stats(files, "cuda_gpu_kern_sum"):
        want[short_of[r["Name"]]] += r["Total Time (ns)"]
    assert got == dict(want)


def test_top_kernels_joined_with_string_ids(train):
    files, db, _, _ = train
    got = db.execute(
        "SELECT s.value AS name, count(*), sum(k.end - k.start) AS total "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
        "GROUP BY name ORDER BY total DESC, name LIMIT 5").fetchall()
    rows = sorted(stats(files, "cuda_gpu_kern_sum"), key=lambda r: (-r["Total Time (ns)"], r["Name"]))
    assert got == [(r["Name"], r["Instances"], r["Total Time (ns)"]) for r in rows[:5]]


def test_nccl_kernel_time_via_like(train):
    files, db, _, _ = train
    got = db.execute(
        "SELECT count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE '%nccl%'").fetchone()
    rows = [r for r in stats(files, "cuda_gpu_kern_sum") if "nccl" in r["Name"].lower()]
    assert rows and got == (sum(r["Instances"] for r in rows), sum(r["Total Time (ns)"] for r in rows))


def test_memcpy_bytes_by_copy_kind(train):
    files, db, sim, _ = train
    got = {r[0]: r[1:] for r in db.execute(
        "SELECT e.label, count(*), sum(m.bytes), sum(m.end - m.start) "
        "FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind "
        "GROUP BY e.label")}
    want = {r["Operation"]: r for r in stats(files, "cuda_gpu_mem_time_sum")}
    for label, (n, _, total) in got.items():
        r = want[f"[CUDA memcpy {label}]"]
        assert (n, total) == (r["Count"], r["Total Time (ns)"])
    # the bytes as the simulator copied them
    labels = dict(db.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"))
    by_kind = defaultdict(int)
    for t in kinds(sim, "memcpy"):
        by_kind[labels[t["copy_kind"]]] += t["bytes"]
    assert {k: v[1] for k, v in got.items()} == dict(by_kind)
    # memsets, with the memory kinds' table
    n, total = db.execute("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMSET m "
                          "JOIN ENUM_CUDA_MEM_KIND e ON e.id = m.memKind").fetchone()
    assert (n, total) == (want["[CUDA memset]"]["Count"], want["[CUDA memset]"]["Total Time (ns)"])


# nsys's ENUM_CUDA_MEM_KIND numbers (NVIDIA's exporter documentation, "CUDA
# MemoryKind enum"): 0 Pageable, 1 Pinned, 2 Device, ..., 7 Unknown. CUPTI
# (the simulator's truth) numbers the same kinds one higher, 0 unknown.
NSYS_MEM_KIND = {"Pageable": 0, "Pinned": 1, "Device": 2, "Unknown": 7}
CUPTI_MEM_KIND = {1: "Pageable", 2: "Pinned", 3: "Device"}


def test_memory_kinds_are_numbered_as_nsys_numbers_them(train):
    """A script that filters on nsys's numbers (memKind = 2: device memory)
    gets the copies and memsets the simulator made on those kinds."""
    _, db, sim, _ = train
    pinned, device = NSYS_MEM_KIND["Pinned"], NSYS_MEM_KIND["Device"]
    got = db.execute("SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                     "WHERE srcKind = ? AND dstKind = ?", (pinned, device)).fetchone()
    want = [t for t in kinds(sim, "memcpy")
            if CUPTI_MEM_KIND.get(t["src_kind"]) == "Pinned"
            and CUPTI_MEM_KIND.get(t["dst_kind"]) == "Device"]
    assert want and got == (len(want), sum(t["bytes"] for t in want))
    got = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE memKind = ?",
                     (device,)).fetchone()[0]
    assert got == len(kinds(sim, "memset")) > 0
    labels = dict(db.execute("SELECT id, label FROM ENUM_CUDA_MEM_KIND"))
    assert {k: labels[v] for k, v in NSYS_MEM_KIND.items()} == {k: k for k in NSYS_MEM_KIND}


def test_runtime_to_kernel_join_on_correlation_id(train):
    files, db, _, _ = train
    calls = {r[0]: r[1:] for r in db.execute(
        "SELECT s.value, count(*), sum(r.end - r.start) FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId GROUP BY s.value")}
    want = {r["Name"]: (r["Num Calls"], r["Total Time (ns)"]) for r in stats(files, "cuda_api_sum")}
    assert calls == want
    assert any(n.startswith("cu") and not n.startswith("cuda") for n in calls)
    # (the simulator launches its Triton kernels through the driver API: as
    # in nsys, the driver's calls are in the runtime table)
    joined = db.execute(
        "SELECT count(*), sum(k.start >= r.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "AND r.globalTid / 0x1000000 = k.globalPid / 0x1000000").fetchone()
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert joined[0] == kernels and joined[1] == kernels  # every kernel after its launch
    # the launching call's names, as nsys's recipe shows them
    launches = {r[0] for r in db.execute(
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = r.nameId")}
    assert any(n.startswith("cudaLaunchKernel") for n in launches) and "cuLaunchKernel" in launches


class Median:
    def __init__(self):
        self.v = []

    def step(self, x):
        self.v.append(x)

    def finalize(self):
        return float(statistics.median(self.v))


class Stdev:
    def __init__(self):
        self.v = []

    def step(self, x):
        self.v.append(x)

    def finalize(self):
        return statistics.stdev(self.v) if len(self.v) > 1 else 0.0


# The shape of nsys stats' cuda_gpu_kern_sum query (median and stdev are
# functions its runner registers; so do we).
KERN_SUM = """
WITH summary AS (
    SELECT demangledName AS nameId, sum(end - start) AS total, count(*) AS num,
           avg(end - start) AS avg, median(end - start) AS med, min(end - start) AS min,
           max(end - start) AS max, stdev(end - start) AS stddev
    FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1),
totals AS (SELECT sum(total) AS total FROM summary)
SELECT round(summary.total * 100.0 / (SELECT total FROM totals), 1) AS "Time (%)",
       summary.total AS "Total Time (ns)", summary.num AS "Instances",
       round(summary.avg, 1) AS "Avg (ns)", round(summary.med, 1) AS "Med (ns)",
       summary.min AS "Min (ns)", summary.max AS "Max (ns)",
       round(summary.stddev, 1) AS "StdDev (ns)", ids.value AS "Name"
FROM summary LEFT JOIN StringIds AS ids ON ids.id = summary.nameId
ORDER BY 2 DESC, 9
"""


def test_nsys_stats_cuda_gpu_kern_sum_sql(train):
    files, db, _, _ = train
    db.create_aggregate("median", 1, Median)
    db.create_aggregate("stdev", 1, Stdev)
    cur = db.execute(KERN_SUM)
    cols = [c[0] for c in cur.description]
    got = [dict(zip(cols, r)) for r in cur]
    want = sorted(stats(files, "cuda_gpu_kern_sum"), key=lambda r: (-r["Total Time (ns)"], r["Name"]))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for c in cols:
            if isinstance(w[c], float):
                assert abs(g[c] - w[c]) <= 0.11, (c, g, w)
            else:
                assert g[c] == w[c], (c, g, w)


# ---- nsys's session tables (NVIDIA's SQLite Schema Reference, docs/SQLITE.md)

def test_analysis_details_spans_the_capture(train):
    """ANALYSIS_DETAILS is one row, "trace start/stop timestamp" and "the
    total time span of the entire trace": it holds every event, and is no
    longer than the traced program ran."""
    _, db, sim, _ = train
    [(start, stop, duration, vid)] = db.execute(
        "SELECT startTime, stopTime, duration, globalVid FROM ANALYSIS_DETAILS").fetchall()
    assert duration == stop - start and vid == 0
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        lo, hi = db.execute(f"SELECT min(start), max(coalesce(end, start)) FROM {t}").fetchone()
        assert start <= lo and hi <= stop, t
    # the simulator's calls and GPU work (its own clock) fit in the span
    times = [(r["start"], r["end"]) for r in sim if r["k"] in ("api", "kernel", "memcpy", "memset")]
    assert max(e for _, e in times) - min(s for s, _ in times) <= duration <= WALL_NS["train"]


def test_capture_metadata_and_host(train):
    """META_DATA_CAPTURE's PROCESS_0:COMMAND / ARGUMENT_<k> are the command
    the test ran, TARGET_INFO_SYSTEM_ENV's Hostname the machine it ran on,
    META_DATA_EXPORT names the input."""
    files, db, _, _ = train
    meta = dict(db.execute("SELECT name, value FROM META_DATA_CAPTURE"))
    assert meta["PROCESS_0:COMMAND"] == str(SIM_TRAIN)
    args = [v for _, v in db.execute(
        "SELECT name, value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_0:ARGUMENT_%' "
        "ORDER BY CAST(substr(name, 20) AS INTEGER)")]
    assert args == ["train", "40"]
    assert db.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'"
                      ).fetchall() == [(socket.gethostname(),)]
    export_meta = db.execute("SELECT name, value FROM META_DATA_EXPORT").fetchall()
    assert ("EXPORT_PRODUCT_NAME", "cuptrace") in export_meta
    assert ("EXPORT_PARAM_INPUT_FILE", str(files[0])) in export_meta
    assert "EXPORT_SCHEMA_VERSION" not in dict(export_meta)


def test_cuda_streams_are_those_the_work_ran_on(train):
    """TARGET_INFO_CUDA_STREAM lists each (context, stream) the simulator ran
    work on, in the process that ran it: joined as nsys's columns read, it
    gives every kernel exactly one stream."""
    _, db, sim, _ = train
    ctx_of = {r["dev"]: r["ctx"] for r in sim if r["k"] == "context"}
    want = {(r["ctx"], r["stream"]) for r in kinds(sim, "kernel")}
    want |= {(ctx_of[r["dev"]], r["stream"]) for r in kinds(sim, "memcpy") + kinds(sim, "memset")}
    got = db.execute("SELECT contextId, streamId, processId, hwId, vmId FROM TARGET_INFO_CUDA_STREAM"
                     ).fetchall()
    assert {(c, s) for c, s, *_ in got} == want and len(got) == len(want)
    pid = int(train[0][0].stem.split("-")[-1])  # CUPTRACE_OUTPUT %h-%p
    assert {(p, h, v) for _, _, p, h, v in got} == {(pid, 0, 0)}
    n = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN TARGET_INFO_CUDA_STREAM s "
                   "ON s.streamId = k.streamId AND s.contextId = k.contextId "
                   "AND s.processId = k.globalPid / 0x1000000 % 0x1000000").fetchone()[0]
    assert n == len(kinds(sim, "kernel"))


def test_gpu_memory_usage_events_are_the_allocations(train):
    """CUDA_GPU_MEMORY_USAGE_EVENTS holds each cudaMalloc and cudaFree the
    simulator reported (address, bytes, device; nsys's operation numbers
    0 allocation, 1 deallocation; memKind 2 device), and nsys's running sum
    gives the simulator's peak use per device."""
    _, db, sim, _ = train
    mem = kinds(sim, "memory")
    assert mem
    ops = dict(db.execute("SELECT label, id FROM ENUM_CUDA_DEV_MEM_EVENT_OPER"))
    assert ops == {"Allocation": 0, "Deallocation": 1}
    got = sorted(db.execute(
        "SELECT e.deviceId, e.address, e.bytes, o.label, k.label FROM CUDA_GPU_MEMORY_USAGE_EVENTS e "
        "JOIN ENUM_CUDA_DEV_MEM_EVENT_OPER o ON o.id = e.memoryOperationType "
        "JOIN ENUM_CUDA_MEM_KIND k ON k.id = e.memKind"))
    want = sorted((r["dev"], r["addr"], r["bytes"], "Allocation" if r["op"] == 1 else "Deallocation",
                   "Device") for r in mem)
    assert got == want
    # each row's call: the runtime call of the same correlationId
    assert db.execute("SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN "
                      "CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId)").fetchone()[0] == len(mem)
    peak = {}
    for dev in {r["dev"] for r in mem}:
        cur = top = 0
        for r in sorted((r for r in mem if r["dev"] == dev), key=lambda r: r["ts"]):
            cur += r["bytes"] if r["op"] == 1 else -r["bytes"]
            top = max(top, cur)
        peak[dev] = top
    got = dict(db.execute(
        "SELECT deviceId, max(used) FROM (SELECT deviceId, sum(CASE memoryOperationType WHEN 0 "
        "THEN bytes ELSE -bytes END) OVER (PARTITION BY deviceId ORDER BY start "
        "ROWS UNBOUNDED PRECEDING) AS used FROM CUDA_GPU_MEMORY_USAGE_EVENTS) GROUP BY deviceId"))
    assert got == peak


@pytest.fixture(scope="module")
def nvtx_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sqlite_nvtx")
    p = run([PROGS / "nvtx_threads", 4, 25, 10], env=traced_env(d / "out"))
    assert p.returncode == 0, p.stderr
    files = ctr_files(d / "out")
    return files, export(files, d / "n.sqlite")


def test_nvtx_ranges_by_text(nvtx_trace, train):
    for files, db in (nvtx_trace, train[:2]):
        # the domain's name comes from its NvtxDomainCreate row
        got = {(r[0], r[1]): r[2:] for r in db.execute(
            "SELECT coalesce(d.text, '') || ':' || coalesce(n.text, s.value), "
            "CASE n.eventType WHEN 59 THEN 'PushPop' ELSE 'StartEnd' END, count(*), "
            "sum(n.end - n.start) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "LEFT JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = n.domainId "
            "AND d.globalTid / 0x1000000 = n.globalTid / 0x1000000 "
            "WHERE n.eventType IN (59, 60) GROUP BY 1, 2")}
        want = {(r["Range"], r["Style"]): (r["Instances"], r["Total Time (ns)"])
                for r in stats(files, "nvtx_sum") if r["Style"] != "Step"}
        assert got == want
    files, db = nvtx_trace
    types = {r[0] for r in db.execute("SELECT DISTINCT eventType FROM NVTX_EVENTS")}
    assert {34, 59, 60} <= types  # marks, push/pop, start/end
    assert db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60 "
                      "AND globalTid != endGlobalTid").fetchone()[0] > 0
    assert db.execute("SELECT count(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"
                      ).fetchone()[0] > 0


@pytest.fixture(scope="module")
def nccl_job(tmp_path_factory):
    d = tmp_path_factory.mktemp("sqlite_nccl")
    out = d / "out"
    truth = run_ranks(d, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                                        HARNESS_STEPS="1"))
    files = ctr_files(out)
    assert len(files) == WORLD
    return files, export(files, d / "job.sqlite"), truth, d


def test_every_rank_in_one_database(nccl_job):
    files, db, truth, _ = nccl_job
    ranks = db.execute("SELECT rank, worldSize, globalPid, pid, clockOffset, rankSource "
                       "FROM CUPTRACE_RANKS ORDER BY rank").fetchall()
    assert [r[0] for r in ranks] == list(range(WORLD)) and {r[1] for r in ranks} == {WORLD}
    assert {r[5] for r in ranks} == {"RANK"}  # the launcher variable the rank came from
    assert len({r[2] for r in ranks}) == WORLD
    assert all(r[2] // 0x1000000 % 0x1000000 == r[3] for r in ranks)
    # one row per operation and rank, told apart by globalPid
    per_rank = dict(db.execute("SELECT r.rank, count(*) FROM CUPTRACE_NCCL_OPERATIONS o "
                               "JOIN CUPTRACE_RANKS r USING (globalPid) GROUP BY r.rank"))
    assert per_rank == {r: ITERS * 11 for r in range(WORLD)}
    assert len(ops_of(truth)) == WORLD * ITERS * 11
    steps = db.execute("SELECT count(DISTINCT globalPid), count(*) FROM CUPTRACE_STEPS").fetchone()
    assert steps[0] == WORLD and steps[1] >= WORLD


def test_nccl_operations_against_nccl_sum(nccl_job):
    files, db, _, _ = nccl_job
    got = {(r[0], r[1]): r[2:] for r in db.execute(
        "SELECT s.value, o.datatype, count(*), sum(o.bytes), sum(o.gpuEnd - o.gpuStart) "
        "FROM CUPTRACE_NCCL_OPERATIONS o JOIN StringIds s ON s.id = o.nameId GROUP BY 1, 2")}
    want = {(r["Operation"], r["Datatype"]): (r["Calls"], r["Total Bytes"], r["Total Time (ns)"])
            for r in stats(files, "nccl_sum")}
    assert got == want
    # the plugin's fields are all there
    row = db.execute("SELECT commHash, nRanks, algorithm, protocol, channels, seq, groupId "
                     "FROM CUPTRACE_NCCL_OPERATIONS WHERE nameId = "
                     "(SELECT id FROM StringIds WHERE value = 'AllReduce') LIMIT 1").fetchone()
    assert row[0] and row[1] == WORLD and row[2] and row[3] and row[4] > 0 and row[5] is not None


MERGED_WARNING = ("cuptrace: warning: {out} holds {n} ranks: scripts written for nsys's one "
                  "database per rank would mix them (--split-ranks DIR writes one per rank)\n")


@pytest.fixture(scope="module")
def sim_job(tmp_path_factory):
    """The NCCL harness on the CUPTI simulator, 4 ranks: NCCL and compute
    kernels per rank, the simulator's truth per rank."""
    d = tmp_path_factory.mktemp("sqlite_sim_job")
    procs = []
    for r in range(WORLD):
        env = dict(traced_env(d / "o", CUPTRACE_TRACE="cuda,nvtx,nccl", RANK=r, WORLD_SIZE=WORLD,
                              HARNESS_STEPS=1, CUPTI_SIM_TRUTH=d / f"sim{r}.jsonl"),
                   CUPTRACE_OUTPUT=f"{d}/o/rank%r.ctr")
        procs.append(subprocess.Popen([str(HARNESS_SIM), "6"], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    files = ctr_files(d / "o")
    assert len(files) == WORLD
    return files, export(files, d / "job.sqlite"), d


def test_a_database_per_rank_is_that_rank_alone(sim_job, tmp_path):
    """nsys writes one database per rank. `export --split-ranks` and
    `export` of one rank's file give that: ANALYSIS_DETAILS is the rank's
    own capture (each rank's spans its own kernels, the merged one all of
    them), META_DATA_CAPTURE its command, and its kernels are the ones the
    simulator ran in that rank. A merged database says it holds several."""
    files, merged, d = sim_job
    p = tool("export", "-o", str(tmp_path / "m.sqlite"), *map(str, files))
    assert p.returncode == 0 and MERGED_WARNING.format(out=tmp_path / "m.sqlite", n=WORLD) \
        in p.stderr, p.stderr
    assert p.stderr.count("\n") == 2  # the warning and "wrote"
    p = tool("export", "--split-ranks", str(tmp_path / "split"), *map(str, files))
    assert p.returncode == 0, p.stderr
    [(m_lo, m_hi)] = merged.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchall()
    spans = []
    for r, f in enumerate(files):
        split = sqlite3.connect(str(tmp_path / "split" / f"rank{r}.sqlite"))
        p = tool("export", "-o", str(tmp_path / f"one{r}.sqlite"), str(f))
        assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
        one = sqlite3.connect(str(tmp_path / f"one{r}.sqlite"))
        for db in (split, one):
            [(lo, hi, dur)] = db.execute(
                "SELECT startTime, stopTime, duration FROM ANALYSIS_DETAILS").fetchall()
            k_lo, k_hi, n = db.execute(
                "SELECT min(start), max(end), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
            assert lo <= k_lo and k_hi <= hi and dur == hi - lo
            assert n == len([k for k in kinds(read_truth(d / f"sim{r}.jsonl"), "kernel")]) > 0
            assert db.execute("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:COMMAND'"
                              ).fetchall() == [(str(HARNESS_SIM),)]
            assert db.execute("SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_1:%'"
                              ).fetchone()[0] == 0
        # times are on the job's timeline in the split database, on the
        # file's own in the export of the file alone: the same capture
        q = "SELECT duration, globalVid >> 48 FROM ANALYSIS_DETAILS"
        assert split.execute(q).fetchall() == [(dur, r)] and one.execute(q).fetchall() == [(dur, 0)]
        spans.append(split.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchone())
    assert (m_lo, m_hi) == (min(a for a, _ in spans), max(b for _, b in spans))


# A breakdown script as HPC centres hand them to users for nsys exports:
# the capture window from ANALYSIS_DETAILS, kernels named through
# StringIds, NCCL kernels as communication, copies and memsets as memory,
# per GPU the unions, idle time and overlaps. Written against nsys's
# schema, run here on cuptrace's per-rank databases.
CENTRE_SCRIPT = r"""
import sqlite3, sys

db = sqlite3.connect(sys.argv[1])
start, stop = db.execute("SELECT startTime, stopTime FROM ANALYSIS_DETAILS").fetchone()
kernels = db.execute(
    "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "JOIN StringIds s ON s.id = k.demangledName WHERE k.start >= ? AND k.end <= ?",
    (start, stop)).fetchall()
memory = db.execute(
    "SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start >= ? AND end <= ? "
    "UNION ALL SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET "
    "WHERE start >= ? AND end <= ?", (start, stop, start, stop)).fetchall()


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(iv):
    return sum(b - a for a, b in iv)


def both(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


for dev in sorted({k[0] for k in kernels} | {m[0] for m in memory}):
    comm = merge([(a, b) for d, a, b, n in kernels if d == dev and "nccl" in n.lower()])
    comp = merge([(a, b) for d, a, b, n in kernels if d == dev and "nccl" not in n.lower()])
    mem = merge([(a, b) for d, a, b in memory if d == dev])
    work = merge(comm + comp + mem)
    window = work[-1][1] - work[0][0]
    print("GPU %d window %d compute %d comm %d memory %d idle %d overlap %d exposed %d "
          "compute_memory %d comm_memory %d" % (
              dev, window, length(comp), length(comm), length(mem), window - length(work),
              length(both(comm, comp)), length(comm) - length(both(comm, comp)),
              length(both(comp, mem)), length(both(comm, mem))))
"""


def centre_breakdown(db_path):
    """{GPU: {figure: ns}} as the centre's script prints them."""
    p = subprocess.run([sys.executable, "-c", CENTRE_SCRIPT, str(db_path)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        w = line.split()
        out[int(w[1])] = {w[i]: int(w[i + 1]) for i in range(2, len(w), 2)}
    return out


def agrees_with_breakdown(script, rows):
    """The script's figures against breakdown's whole-window rows of one rank."""
    rows = {r["GPU"]: r for r in rows if r["Step"] is None}
    assert sorted(script) == sorted(rows)
    for gpu, s in script.items():
        r = rows[gpu]
        assert (s["window"], s["compute"], s["comm"], s["memory"], s["idle"], s["exposed"],
                s["compute_memory"], s["comm_memory"]) == \
            (r["Window (ns)"], r["Compute (ns)"], r["Communication (ns)"], r["Memory (ns)"],
             r["Idle (ns)"], r["Exposed Comm (ns)"], r["Compute-Memory Overlap (ns)"],
             r["Comm-Memory Overlap (ns)"]), gpu
        assert r["Overlap (%)"] == (round(100 * s["overlap"] / s["comm"], 1) if s["comm"] else None)


def test_a_centre_breakdown_script_agrees_with_stats(train, sim_job, tmp_path):
    """The centre's script on a per-rank database gives, to the ns, what
    `stats --report breakdown` gives for that rank: on the simulator's
    training run (two GPUs, copies, memsets, an NCCL kernel) and on each
    rank of the 4-rank NCCL job (--split-ranks)."""
    files, _, _, d = train
    script = centre_breakdown(d / "t.sqlite")
    assert any(s["compute_memory"] and s["comm_memory"] for s in script.values())
    agrees_with_breakdown(script, stats(files, "breakdown", "breakdown: GPU time"))
    files, _, _ = sim_job
    p = tool("export", "--split-ranks", str(tmp_path / "split"), *map(str, files))
    assert p.returncode == 0, p.stderr
    rows = stats(files, "breakdown", "breakdown: GPU time")
    for r in range(WORLD):
        script = centre_breakdown(tmp_path / "split" / f"rank{r}.sqlite")
        assert all(s["comm"] and s["compute"] for s in script.values())
        agrees_with_breakdown(script, [x for x in rows if x["Rank"] == r])


def test_split_ranks_and_convert(nccl_job, tmp_path):
    files, _, _, _ = nccl_job
    p = tool("export", "--split-ranks", str(tmp_path / "split"), *map(str, files))
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr
    dbs = sorted((tmp_path / "split").iterdir())
    assert [f.name for f in dbs] == [f"rank{r}.sqlite" for r in range(WORLD)]
    for r, f in enumerate(dbs):
        c = sqlite3.connect(str(f))
        assert c.execute("SELECT rank FROM CUPTRACE_RANKS").fetchall() == [(r,)]
    p = tool("convert", "-o", str(tmp_path / "c.sqlite"), *map(str, files))
    assert p.returncode == 0, p.stderr
    assert MERGED_WARNING.format(out=tmp_path / "c.sqlite", n=WORLD) in p.stderr
    c = sqlite3.connect(str(tmp_path / "c.sqlite"))
    assert c.execute("SELECT count(*) FROM CUPTRACE_RANKS").fetchone()[0] == WORLD


def test_export_takes_convert_options(nccl_job, tmp_path):
    """`export -j N` takes -j as `convert -j N -o x.sqlite`, the same
    command (SQLITE.md), does: both write the same database as export
    without it; a bad N is a usage error in both."""
    files = list(map(str, nccl_job[0]))
    dumps = []
    for name, args in (("e", ["export"]), ("ej", ["export", "-j", "2"]),
                       ("cj", ["convert", "-j", "2"]), ("sj", ["export", "--jobs", "3"])):
        p = tool(*args, "-o", str(tmp_path / f"{name}.sqlite"), *files)
        assert p.returncode == 0, p.stderr
        dumps.append(list(sqlite3.connect(str(tmp_path / f"{name}.sqlite")).iterdump()))
    assert len(dumps[0]) > 200 and all(d == dumps[0] for d in dumps)
    p = tool("export", "-j", "2", "--split-ranks", str(tmp_path / "split"), *files)
    assert p.returncode == 0, p.stderr
    assert len(list((tmp_path / "split").iterdir())) == WORLD
    for cmd in ("export", "convert"):
        p = tool(cmd, "-j", "0", "-o", str(tmp_path / "z.sqlite"), *files)
        assert p.returncode == 2 and f"cuptrace {cmd}: -j needs a number >= 1" in p.stderr, p.stderr


def leftovers(d):
    return sorted(f.name for f in d.iterdir())


def test_failed_export_leaves_nothing(train, tmp_path):
    files = train[0]
    # no such directory
    p = tool("export", "-o", str(tmp_path / "nodir" / "t.sqlite"), *map(str, files))
    assert p.returncode != 0 and "wrote" not in p.stderr
    assert not (tmp_path / "nodir").exists()
    # the disk fills up (a file size limit; SIGXFSZ ignored, so writes fail)
    full = tmp_path / "full"
    full.mkdir()

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200000, 200000))

    p = subprocess.run([str(TOOL), "export", "-o", str(full / "t.sqlite"), *map(str, files)],
                       env=base_env(), capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert p.returncode == 1, p.stderr
    assert "wrote" not in p.stderr and "cuptrace: writing" in p.stderr
    assert leftovers(full) == []
    # the name is taken by a directory: the rename fails, nothing is left
    busy = tmp_path / "busy"
    (busy / "t.sqlite").mkdir(parents=True)
    p = tool("export", "-o", str(busy / "t.sqlite"), *map(str, files))
    assert p.returncode == 1 and "wrote" not in p.stderr
    assert leftovers(busy) == ["t.sqlite"]


def test_a_job_database_joins_as_one_process_does(tmp_path):
    """Every rank's CUPTI correlation ids are the same numbers: in one
    database of the job, joins on correlationId alone (nsys's recipes, the
    NCCL operations' kernelCorrelationId) and nsys's cuda_gpu_trace join of
    TARGET_INFO_GPU on deviceId would multiply rows by the ranks. So the
    n-th file of a database has ids n << 32 | CUPTI's, and a device id and
    model one TARGET_INFO_GPU row."""
    out, world = tmp_path / "out", 2
    procs = [subprocess.Popen(
        [str(HARNESS_SIM), "3"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                 CUPTRACE_TRACE="cuda,nvtx,nccl", RANK=str(r), WORLD_SIZE=str(world), CT_TEST_TRUTH=str(tmp_path / f"t{r}.jsonl")))
        for r in range(world)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    files = ctr_files(out)
    db = export(files, tmp_path / "job.sqlite")
    one = lambda q: db.execute(q).fetchone()[0]
    kernels = one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    per_rank = [export([f], tmp_path / f"r{i}.sqlite").execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        for i, f in enumerate(files)]
    assert kernels == sum(per_rank) and min(per_rank) > 0
    assert one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
               "ON r.correlationId = k.correlationId") == kernels
    assert one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
               "ON r.correlationId = k.correlationId WHERE "
               "r.globalTid / 0x1000000 != k.globalPid / 0x1000000") == 0
    assert one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
               "LEFT JOIN TARGET_INFO_GPU gpu ON gpu.id == k.deviceId") == kernels
    ops = one("SELECT count(*) FROM CUPTRACE_NCCL_OPERATIONS WHERE kernelCorrelationId IS NOT NULL")
    assert ops > 0 and one(
        "SELECT count(*) FROM CUPTRACE_NCCL_OPERATIONS o JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
        "ON k.correlationId = o.kernelCorrelationId") == ops
    # the first file keeps CUPTI's own ids (those of the JSON's args.correlation)
    by_file = db.execute("SELECT globalPid >> 48, min(correlationId >> 32), max(correlationId >> 32) "
                         "FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1 ORDER BY 1").fetchall()
    assert by_file == [(0, 0, 0), (1, 1, 1)], by_file
    corr = {e["args"]["correlation"] for e in convert_doc([files[0]], tmp_path / "r0.json")
            if e.get("cat") == "kernel"}
    assert corr == {r[0] for r in db.execute(
        "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 48 = 0")}


def test_invalid_utf8_reads_back_as_the_json_has_it(tmp_path):
    """Strings of the traced program that are not UTF-8 (NVTX text, domain,
    category and thread names, a host and a file name) are not written raw,
    where Python's sqlite3 raises "Could not decode to UTF-8" on fetchall:
    every TEXT column of every table reads back, and each name is the
    JSON's (each bad byte U+FFFD)."""
    from hostile_trace import BAD_HOST, hostile_files
    files = hostile_files(tmp_path)
    db = export(files, tmp_path / "h.sqlite")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    seen = set()
    for t in tables:
        for row in db.execute(f"SELECT * FROM {t}").fetchall():  # decodes every text value
            seen.update(v for v in row if isinstance(v, str))
    doc = convert(files, tmp_path / "h.json")["traceEvents"]
    nvtx = {e["name"] for e in doc if e.get("cat") == "user_annotation"}
    assert "bad utf8 \ufffd\ufffd \ufffd( \ufffd\ufffd \ufffd\ufffd\ufffd end" in nvtx
    got = {r[0] for r in db.execute(
        "SELECT coalesce(n.text, s.value, '') FROM NVTX_EVENTS n LEFT JOIN StringIds s "
        "ON s.id = n.textId WHERE n.eventType IN (59, 60)")}
    assert got == nvtx
    args = {v for e in doc if e.get("cat") == "user_annotation" for v in e.get("args", {}).values()}
    threads = {e["args"]["name"] for e in doc if e.get("name") == "thread_name"}
    assert {"dom \ufffd\ufffd", "cat \ufffd("} <= args <= seen
    assert "thread \ufffd\ufffd\ufffd" in threads and threads <= seen
    host = BAD_HOST.decode("utf-8", "replace")
    assert host == "h\ufffdst\ufffd\ufffd"
    assert db.execute("SELECT count(*) FROM CUPTRACE_RANKS WHERE host = ?", (host,)).fetchone()[0] == 1
    assert str(files[2]).encode("utf-8", "surrogateescape").decode("utf-8", "replace") in seen


def test_process_name_is_the_whole_program_name(tmp_path):
    """PROCESSES.name is argv[0] without directories: the command line is
    NUL-separated, so a name with a space is whole, not cut at it ("my"
    for "my trainer")."""
    import shutil
    prog = tmp_path / "dir with space" / "my trainer"
    prog.parent.mkdir()
    shutil.copy(PROGS / "nvtx_threads", prog)
    p = run([prog, 1, 2, 1], env=traced_env(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    db = export(ctr_files(tmp_path / "out"), tmp_path / "p.sqlite")
    assert db.execute("SELECT name FROM PROCESSES").fetchall() == [("my trainer",)]


# ---- docs/SQLITE.md says what the export writes

DOC = BUILD.parent / "docs" / "SQLITE.md"
TYPE_WORDS = {"INTEGER", "TEXT", "REAL", "NOT", "NULL", "PRIMARY", "KEY"}


def documented_columns():
    """{table: [(column, type words or None)]} from SQLITE.md's two table
    lists: the backquoted `col, col TYPE ...` groups of the columns cell
    (a type applies to the names before it in its group, REFERENCES
    aside; "the 7 common
    columns" are those the doc lists under the table), and the paragraph
    that lists CUPTRACE_NCCL_OPERATIONS ("see below": its backquoted names
    outside parentheses)."""
    import re
    text = DOC.read_text()
    common = re.search(r"The 7 common columns of the GPU tables: `([^`]*)`", text, re.S).group(1)
    tables = {}
    for line in text.splitlines():
        m = re.match(r"\| `(\w+)` \| (.*?) \|", line)
        if not m or m.group(2).strip() == "see below":
            continue
        cell = m.group(2).replace("the 7 common columns above", f"`{common}`")
        cell = cell.replace("the 7 common columns", f"`{common}`")
        cols = []
        for group in re.findall(r"`([^`]*)`", cell):
            pending = []
            for piece in group.split(","):
                words = re.sub(r"REFERENCES \w+\(\w+\)", "", piece).split()
                pending.append(words[0])
                if len(words) > 1:
                    assert set(words[1:]) <= TYPE_WORDS, (m.group(1), piece)
                    cols += [(c, " ".join(words[1:])) for c in pending]
                    pending = []
            cols += [(c, None) for c in pending]
        tables[m.group(1)] = cols
    para = re.search(r"^`CUPTRACE_NCCL_OPERATIONS`: (.*?)\n\n", text, re.S | re.M).group(1)
    para = re.sub(r"\([^()]*\)", "", para)
    tables["CUPTRACE_NCCL_OPERATIONS"] = [(c.strip(), None) for g in re.findall(r"`([\w, ]+)`", para)
                                          for c in g.split(",")]
    return tables


def test_the_doc_lists_every_table_and_column(train):
    """Each table the export creates is in docs/SQLITE.md with its columns
    in order, and each type the doc gives (INTEGER, TEXT, REAL, NOT NULL,
    PRIMARY KEY) is the column's."""
    _, db, _, _ = train
    doc = documented_columns()
    made = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert sorted(doc) == sorted(made)
    for t in made:
        info = db.execute(f"PRAGMA table_info({t})").fetchall()
        assert [c for c, _ in doc[t]] == [r[1] for r in info], t
        for (c, typ), (_, name, ctype, notnull, _, pk) in zip(doc[t], info):
            if typ is None:
                continue
            want = ctype + (" NOT NULL" if notnull else "") + (" PRIMARY KEY" if pk else "")
            assert typ == want, (t, c, typ, want)


def test_rank_status_values_are_documented(tmp_path):
    """CUPTRACE_RANKS.status of a clean, a truncated and a damaged file (a
    bit flipped in a middle block's payload): each value is one the doc
    lists, damaged included."""
    import re
    from conftest import ctr_blocks
    p = run([PROGS / "demo_train", 10000], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    data = f.read_bytes()
    start, end = ctr_blocks(data)[1]
    bad = bytearray(data)
    bad[(start + end) // 2] ^= 0x10
    paths = {"clean": f, "truncated": tmp_path / "cut.ctr", "damaged": tmp_path / "bad.ctr"}
    paths["truncated"].write_bytes(data[:len(data) - 64])
    paths["damaged"].write_bytes(bytes(bad))
    row = [l for l in DOC.read_text().splitlines() if l.startswith("| `CUPTRACE_RANKS` |")][0]
    listed = re.search(r"`status` ((?:`\w+`(?: / )?)+)", row).group(1)
    listed = re.findall(r"`(\w+)`", listed)
    for want, path in paths.items():
        # a damaged input's events are missing: written, exit 1
        db = export([path], tmp_path / f"{want}.sqlite", rc=1 if want == "damaged" else 0)
        assert db.execute("SELECT status FROM CUPTRACE_RANKS").fetchall() == [(want,)]
        assert want in listed, (want, listed)
