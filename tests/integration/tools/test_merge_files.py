# SPDX-License-Identifier: MIT
"""Files of several processes read together: one timeline with a process
per rank, in rank order, whatever order they ran in; `cuptrace info`'s
table of the ranks, with the missing ones named."""
import re

from conftest import PROGS, convert, run, tool, traced_env


def test_merge_two_processes_on_one_timeline(tmp_path):
    for r in (1, 0):
        env = traced_env(tmp_path / "o", OMPI_COMM_WORLD_RANK=r, OMPI_COMM_WORLD_SIZE=2)
        assert run([PROGS / "demo_train", 5], env=env).returncode == 0
    doc = convert([tmp_path / "o"], tmp_path / "m.json")
    procs = sorted((e["pid"], e["args"]["name"]) for e in doc["traceEvents"]
                   if e.get("ph") == "M" and e["name"] == "process_name")
    assert [n.split(" (")[0] for _, n in procs] == ["rank 0", "rank 1"]
    assert doc["distributedInfo"]["world_size"] == 2
    # Rank 1 ran first: its events start earlier on the shared timeline.
    first = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            first[e["pid"]] = min(first.get(e["pid"], 1e18), e["ts"])
    (p0, _), (p1, _) = procs
    assert first[p1] < first[p0]
    assert min(first.values()) >= 0


def test_info_table_for_several_files(tmp_path):
    for r in (0, 2):
        env = traced_env(tmp_path / "o", OMPI_COMM_WORLD_RANK=r, OMPI_COMM_WORLD_SIZE=4)
        assert run([PROGS / "demo_train", 3], env=env).returncode == 0
    out = tool("info", tmp_path / "o", check=True).stdout
    rows = [l for l in out.splitlines() if re.match(r"\s+\d+\s", l)]
    assert [int(r.split()[0]) for r in rows] == [0, 2]
    assert all("clean" in r for r in rows)
    assert "missing ranks: 1,3 (world size 4)" in out
