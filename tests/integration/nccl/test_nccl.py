# SPDX-License-Identifier: MIT
"""NCCL collectives end to end: tests/progs/nccl_harness plays NCCL 2.28
(profiler plugin ABI v5, or v4) over 4 ranks in separate processes, the
library records what it is told, and the tool's Chrome trace and nccl_*
reports are checked against what the harness did, figure by figure."""
import json
import os
import re
import shutil
from collections import defaultdict

import pytest

from conftest import (LIB, PROGS, base_env, convert, ctr_files, launcher_env, read_truth, run, tool,
                      traced_env)
from programs import HARNESS, ITERS, WORLD, ops_of, run_ranks

KB, MB = 1 << 10, 1 << 20


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("nccl")
    out = d / "out"
    truth = run_ranks(d, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                                        HARNESS_STEPS="1"))
    files = ctr_files(out)
    assert len(files) == WORLD
    return d, files, truth


def stats_json(inputs, *args):
    p = tool("stats", "--format", "json", *args, *map(str, inputs))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


def table(doc, prefix):
    [key] = [k for k in doc if k.startswith(prefix)]
    return doc[key]


def factor(func, n):
    if func == "AllReduce":
        return 2 * (n - 1) / n
    if func in ("AllGather", "ReduceScatter"):
        return (n - 1) / n
    return 1.0


def bucket(b):
    return "<64KB" if b < 64 * KB else "64KB-1MB" if b < MB else "1MB-16MB" if b < 16 * MB else ">16MB"


def expected_sum(ops):
    rows = defaultdict(lambda: dict(calls=0, bytes=0, sizes=[], time=0, bus=0.0))
    for o in ops:
        r = rows[(o["func"], o["datatype"])]
        r["calls"] += 1
        r["bytes"] += o["size"]
        r["sizes"].append(o["size"])
        t = o["gpu_end"] - o["gpu_start"]
        r["time"] += t
        r["bus"] += o["size"] * factor(o["func"], o["nranks"])
    return rows


def near(got, want, decimals):
    assert got is not None
    assert abs(got - want) <= 0.5 * 10 ** -decimals + 1e-9, (got, want)


def test_plugin_records_every_rank(job):
    d, files, truth = job
    for r, f in enumerate(files):
        p = tool("info", str(f))
        assert p.returncode == 0, p.stderr
        assert f"rank:        {r} " in p.stdout
        assert "status:      clean" in p.stdout
        assert re.search(r"nccl_coll\s+\d+\s+dropped 0", p.stdout)
        assert re.search(r"nccl_kernel_ch\s+\d+\s+dropped 0", p.stdout)
    comms = [t for t in truth if t["kind"] == "comm"]
    # The activation mask the plugin gave NCCL: API, launch, group, task and
    # kernel-channel events; no proxy or network events.
    assert {c["mask"] for c in comms} == {(1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | 1 | 2 | 4 | 64}


def test_nccl_sum_against_hand_computation(job):
    d, files, truth = job
    ops = ops_of(truth)
    assert len(ops) == WORLD * ITERS * 11
    doc, _ = stats_json(files, "--report", "nccl_sum")
    got = {(r["Operation"], r["Datatype"]): r for r in table(doc, "nccl_sum")}
    want = expected_sum(ops)
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        assert g["Calls"] == w["calls"], key
        assert g["Total Bytes"] == w["bytes"], key
        near(g["Avg Bytes"], w["bytes"] / w["calls"], 1)
        assert g["Min Bytes"] == min(w["sizes"]) and g["Max Bytes"] == max(w["sizes"])
        assert g["Total Time (ns)"] == w["time"], key
        near(g["Avg Time (ns)"], w["time"] / w["calls"], 1)
        near(g["Algbw (GB/s)"], w["bytes"] / w["time"], 3)
        near(g["Busbw (GB/s)"], w["bus"] / w["time"], 3)
    # The message sizes nccl-tests would print, by hand for a few.
    assert got[("ReduceScatter", "ncclFloat32")]["Max Bytes"] == 1048576 * 4 * WORLD
    assert got[("AllGather", "ncclBfloat16")]["Max Bytes"] == 32768 * 2 * WORLD
    assert got[("Broadcast", "ncclInt8")]["Max Bytes"] == 100000
    assert got[("Send", "ncclFloat32")]["Calls"] == WORLD * ITERS
    # An AllReduce on 4 ranks moves 2(n-1)/n = 1.5x its size over the bus.
    ar = got[("AllReduce", "ncclInt32")]
    near(ar["Busbw (GB/s)"], 1.0 * ar["Algbw (GB/s)"], 3)  # the 2-rank "pair" comm: factor 1
    rows = table(doc, "nccl_sum")
    assert rows == sorted(rows, key=lambda r: -r["Total Time (ns)"])


def test_nccl_sizes_and_ranks_against_hand_computation(job):
    d, files, truth = job
    ops = ops_of(truth)
    doc, _ = stats_json(files, "--report", "nccl_sizes,nccl_ranks")
    by_op = defaultdict(lambda: defaultdict(int))
    by_rank = defaultdict(lambda: defaultdict(int))
    for o in ops:
        by_op[o["func"]][bucket(o["size"])] += 1
        by_rank[o["world_rank"]][bucket(o["size"])] += 1
    cols = ["<64KB", "64KB-1MB", "1MB-16MB", ">16MB"]
    t_op = table(doc, "nccl_sizes: calls per message size, by operation")
    assert [r["Operation"] for r in t_op] == sorted(by_op)
    for r in t_op:
        assert [r[c] for c in cols] == [by_op[r["Operation"]][c] for c in cols]
        assert r["Total"] == sum(by_op[r["Operation"]].values())
    # Edges: exactly 1 MiB is 1MB-16MB, exactly 16 MiB is >16MB.
    assert dict((r["Operation"], r) for r in t_op)["ReduceScatter"][">16MB"] == WORLD * ITERS
    t_rank = table(doc, "nccl_sizes: calls per message size, by rank")
    assert [r["Rank"] for r in t_rank] == list(range(WORLD))
    for r in t_rank:
        assert [r[c] for c in cols] == [by_rank[r["Rank"]][c] for c in cols]

    want = defaultdict(lambda: [0, 0, 0])
    for o in ops:
        w = want[(o["world_rank"], o["func"])]
        w[0] += 1
        w[1] += o["size"]
        w[2] += o["gpu_end"] - o["gpu_start"]
    t = table(doc, "nccl_ranks")
    assert [(r["Rank"], r["Operation"]) for r in t] == sorted(want)
    for r in t:
        assert [r["Calls"], r["Total Bytes"], r["Total Time (ns)"]] == want[(r["Rank"], r["Operation"])]
    # The GPU of rank r is 100 ns slower per operation: it shows.
    times = {(r["Rank"], r["Operation"]): r["Total Time (ns)"] for r in t}
    assert times[(3, "Reduce")] - times[(0, "Reduce")] == 300 * ITERS


def test_nccl_calls_lists_every_message_size(job):
    """nccl_calls: one row per (operation, datatype, message size,
    communicator size), every rank's calls counted, with their GPU times."""
    d, files, truth = job
    want = defaultdict(list)
    for o in ops_of(truth):
        key = (o["func"], o["datatype"], o["size"], o["nranks"])
        want[key].append(o["gpu_end"] - o["gpu_start"])
    doc, _ = stats_json(files, "--report", "nccl_calls")
    rows = table(doc, "nccl_calls")
    keys = [(r["Operation"], r["Datatype"], r["Message Bytes"], r["Comm Size"]) for r in rows]
    assert keys == sorted(want) and len(keys) == len(set(keys))
    for r, k in zip(rows, keys):
        times = want[k]
        assert r["Calls"] == len(times), k
        assert r["Total Bytes"] == k[2] * len(times), k
        assert r["Total Time (ns)"] == sum(times), k
        assert (r["Min Time (ns)"], r["Max Time (ns)"]) == (min(times), max(times)), k
        near(r["Avg Time (ns)"], sum(times) / len(times), 1)
        near(r["Algbw (GB/s)"], k[2] * len(times) / sum(times), 3)
        near(r["Busbw (GB/s)"], k[2] * len(times) / sum(times) * factor(k[0], k[3]), 3)
    # The same calls as nccl_sum, split by size.
    doc, _ = stats_json(files, "--report", "nccl_sum")
    assert sum(r["Calls"] for r in rows) == sum(r["Calls"] for r in table(doc, "nccl_sum"))


@pytest.mark.parametrize("steps,keep", [("2-3", {2, 3}), ("2", {2}), ("1-9", {1, 2, 3})])
def test_steps_keep_what_happened_inside(job, steps, keep):
    d, files, truth = job
    ops = [o for o in ops_of(truth) if o["step"] in keep]
    doc, _ = stats_json(files, "--report", "nccl_sum,nccl_ranks", "--steps", steps)
    got = {(r["Operation"], r["Datatype"]): r for r in table(doc, "nccl_sum")}
    want = expected_sum(ops)
    assert {k: g["Calls"] for k, g in got.items()} == {k: w["calls"] for k, w in want.items()}
    assert {k: g["Total Time (ns)"] for k, g in got.items()} == {k: w["time"] for k, w in want.items()}


def test_stats_formats_and_usage(job):
    d, files, truth = job
    p = tool("stats", "--report", "nccl_sum", "--format", "csv", *map(str, files))
    assert p.returncode == 0
    head = p.stdout.splitlines()[1]
    assert head == ("Operation,Datatype,Calls,Total Bytes,Avg Bytes,Min Bytes,Max Bytes,"
                    "Total Time (ns),Avg Time (ns),Algbw (GB/s),Busbw (GB/s)")
    p = tool("stats", "--report", "nccl_sum", *map(str, files))
    assert p.returncode == 0 and "** nccl_sum" in p.stdout and "ReduceScatter" in p.stdout
    for bad in ("x", "3-2", "-1", "2-"):
        p = tool("stats", "--steps", bad, *map(str, files))
        assert p.returncode == 2, bad
    # By default the NCCL reports come along when there is NCCL data.
    p = tool("stats", *map(str, files))
    assert "** nccl_sum" in p.stdout and "** nccl_ranks" in p.stdout


def trace_of(job, tmp_path):
    d, files, truth = job
    return convert(files, tmp_path / "t.json"), truth


def test_chrome_tracks_per_communicator(job, tmp_path):
    doc, truth = trace_of(job, tmp_path)
    ev = doc["traceEvents"]
    assert all(e.get("tid", 1) != 0 for e in ev)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    pids = sorted({e["pid"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"})
    assert len(pids) == WORLD
    for r, pid in enumerate(pids):
        tracks = {n for (p, t), n in names.items() if p == pid and t >= 10 ** 9}
        assert f"NCCL world 5eed0001c0ffee00 rank {r}/4" in tracks
        assert f"NCCL world 5eed0001c0ffee00 rank {r}/4 GPU" in tracks
        assert f"NCCL pair {0x9a170000 + r // 2:016x} rank {r % 2}/2" in tracks
    # Stable ids: the world communicator was defined first in every rank.
    assert {t for (p, t), n in names.items() if "NCCL world" in n} == {10 ** 9, 10 ** 9 + 1}


def test_chrome_operations_carry_everything(job, tmp_path):
    doc, truth = trace_of(job, tmp_path)
    ev = doc["traceEvents"]
    pids = sorted({e["pid"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"})
    xs = [e for e in ev if e.get("ph") == "X" and e["cat"] == "nccl" and "op" in e.get("args", {})]
    for o in ops_of(truth):
        pid = pids[o["world_rank"]]
        mine = [e for e in xs if e["pid"] == pid and e["args"]["count"] == o["count"]
                and e["args"]["op"] == o["func"] and e["args"].get("step") == o["step"]
                and e["args"]["comm"] == f"0x{o['comm']:x}"]
        cpu = [e for e in mine if e["tid"] % 2 == 0]
        gpu = [e for e in mine if e["tid"] % 2 == 1]
        assert len(cpu) == 1 and len(gpu) == 1, (o, mine)
        a = cpu[0]["args"]
        assert a["datatype"] == o["datatype"] and a["bytes"] == o["size"]
        assert a["rank"] == o["rank"] and a["nranks"] == o["nranks"] and a["nnodes"] == 1
        assert a["comm_name"] == o["comm_name"]
        assert a["channels"] == o["channels"] and a["gpu channels"] == o["channels"]
        assert a.get("algorithm") in ("RING", "TREE") or o["func"] in ("Send", "Recv")
        assert "stream" in a and a["enqueue (us)"] >= 0
        if o["func"] in ("Send", "Recv"):
            assert "seq" not in a and a["peer"] == o["root"]
        else:
            assert a["seq"] == o["seq"] and a["root"] == o["root"]
            assert a["protocol"] in ("SIMPLE", "LL", "LL128")
        # GPU time from the kernel-channel timers, to the nanosecond.
        assert round(gpu[0]["dur"] * 1000) == o["gpu_end"] - o["gpu_start"]
        assert a["group size"] == (2 if o["group_size"] == 2 else 1)


def test_chrome_groups_and_flows(job, tmp_path):
    doc, truth = trace_of(job, tmp_path)
    ev = doc["traceEvents"]
    groups = [e for e in ev if e.get("ph") == "X" and e["name"] == "ncclGroup"]
    # Per rank and iteration: the send/recv group and the fused AllReduce pair.
    assert len(groups) == WORLD * ITERS * 2
    assert all(g["args"]["calls"] == 2 for g in groups)
    xs = [e for e in ev if e.get("ph") == "X" and e["cat"] == "nccl" and "op" in e.get("args", {})]
    for g in groups:
        inside = [e for e in xs if e["pid"] == g["pid"] and e["tid"] == g["tid"]
                  and g["ts"] <= e["ts"] and e["ts"] + e["dur"] <= g["ts"] + g["dur"] + 0.0015]
        assert len(inside) == 2
    flows = defaultdict(dict)
    for e in ev:
        if e.get("cat") == "nccl" and e["ph"] in "sf":
            flows[e["id"]][e["ph"]] = e
    cpu_ops = [e for e in xs if e["tid"] % 2 == 0]
    assert len(flows) == len(cpu_ops) == len(ops_of(truth))
    gpu_starts = {(e["pid"], e["tid"], e["ts"]) for e in xs if e["tid"] % 2 == 1}
    for f in flows.values():
        s, t = f["s"], f["f"]
        assert t["bp"] == "e" and s["pid"] == t["pid"] and t["tid"] == s["tid"] + 1
        assert (t["pid"], t["tid"], t["ts"]) in gpu_starts


@pytest.mark.parametrize("abi", ["4", "6"])
def test_other_abi_versions(tmp_path, abi):
    out = tmp_path / "out"
    truth = run_ranks(tmp_path, lambda r: traced_env(out, HARNESS_ABI=abi), iters=1)
    files = ctr_files(out)
    doc, _ = stats_json(files, "--report", "nccl_sum")
    rows = table(doc, "nccl_sum")
    ops = ops_of(truth)
    assert sum(r["Calls"] for r in rows) == len(ops)
    assert sum(r["Total Bytes"] for r in rows) == sum(o["size"] for o in ops)
    assert sum(r["Total Time (ns)"] for r in rows) == sum(o["gpu_end"] - o["gpu_start"] for o in ops)
    # v4 has no API events: AllGather is seen as NCCL schedules it (bytes).
    want = ("AllGather", "ncclInt8" if abi == "4" else "ncclBfloat16")
    assert want in {(r["Operation"], r["Datatype"]) for r in rows}


def test_plugin_alone_without_preload(tmp_path):
    """NCCL_PROFILER_PLUGIN alone: NCCL dlopens the library, which traces
    and survives NCCL's dlclose until exit."""
    out = tmp_path / "out"
    env = base_env(NCCL_PROFILER_PLUGIN=str(LIB), CUPTRACE_OUTPUT=f"{out}/%p.ctr")
    if "address" in os.environ.get("CT_TEST_SAN", ""):
        pytest.skip("the sanitizer runtime must come first; covered by the preload runs")
    truth = run_ranks(tmp_path, lambda r: dict(env), iters=1)
    files = ctr_files(out)
    assert len(files) == WORLD
    doc, _ = stats_json(files, "--report", "nccl_ranks")
    assert sum(r["Calls"] for r in table(doc, "nccl_ranks")) == len(ops_of(truth))


def test_constructor_points_nccl_at_the_library(tmp_path):
    env = traced_env(tmp_path / "o")
    p = run(["/usr/bin/env"], env=env)
    got = dict(l.split("=", 1) for l in p.stdout.splitlines() if "=" in l)
    assert os.path.realpath(got["NCCL_PROFILER_PLUGIN"]) == os.path.realpath(LIB)
    # A choice of the user's stays, and nccl off in CUPTRACE_TRACE leaves it alone.
    p = run(["/usr/bin/env"], env=traced_env(tmp_path / "o", NCCL_PROFILER_PLUGIN="mine"))
    assert "NCCL_PROFILER_PLUGIN=mine" in p.stdout.splitlines()
    p = run(["/usr/bin/env"], env=traced_env(tmp_path / "o", CUPTRACE_TRACE="nvtx"))
    assert "NCCL_PROFILER_PLUGIN=" not in p.stdout


@pytest.mark.parametrize("extra", [dict(CUPTRACE_TRACE="nvtx"), dict(CUPTRACE_RANKS="7"),
                                   dict(CUPTRACE_CAPTURE="api")])
def test_nothing_recorded_when_off(tmp_path, extra):
    out = tmp_path / "out"
    env = traced_env(out, NCCL_PROFILER_PLUGIN=str(LIB), **extra)
    p = run([HARNESS, 1], env=dict(env, RANK="0", CT_TEST_TRUTH=str(tmp_path / "t")))
    assert p.returncode == 0 and p.stderr == ""
    assert ctr_files(out) == []
    comms = [t for t in read_truth(tmp_path / "t") if t["kind"] == "comm"]
    if "CUPTRACE_CAPTURE" not in extra:  # not traced: NCCL is told to call nothing
        assert {c["mask"] for c in comms} == {0}


@pytest.mark.skipif(not shutil.which("mpiexec"), reason="no mpiexec")
def test_under_mpiexec(tmp_path):
    out = tmp_path / "out"
    env = launcher_env()
    p = run(["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", str(WORLD),
             str(PROGS.parent.parent / "bin" / "cuptrace"), "run", "-o", f"{out}/r%r.ctr", "--",
             str(HARNESS), "1"], env=env, timeout=120)
    if p.returncode != 0 and "mpiexec" in p.stderr and "not" in p.stderr:
        pytest.skip("mpiexec cannot start jobs here: " + p.stderr[:200])
    assert p.returncode == 0, p.stderr
    files = ctr_files(out)
    assert [f.name for f in files] == [f"r{r}.ctr" for r in range(WORLD)]
    doc, _ = stats_json(files, "--report", "nccl_ranks")
    assert sorted({r["Rank"] for r in table(doc, "nccl_ranks")}) == list(range(WORLD))
