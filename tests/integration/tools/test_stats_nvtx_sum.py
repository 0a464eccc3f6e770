# SPDX-License-Identifier: MIT
"""`cuptrace stats`'s nvtx_sum against the trace's own ranges: nsys's
columns and figures for each domain:name, sorted by total time; CSV with
its header; an unknown report is a usage error."""
import json

import pytest

from conftest import convert, tool


def test_stats_nvtx_sum_matches_the_trace(demo_trace, tmp_path):
    import statistics
    f = demo_trace
    doc = convert([f], tmp_path / "t.json")
    want = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["cat"] == "user_annotation":
            dom = e.get("args", {}).get("domain")
            key = f"{dom or ''}:{e['name']}"  # nsys's "domain:name", ":name" by default
            want.setdefault(key, []).append(round(e["dur"] * 1000))
    p = tool("stats", "--report", "nvtx_sum", "--format", "json", f)
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["nvtx_sum: NVTX range summary"]
    got = {r["Range"]: r for r in rows}
    assert set(got) == set(want)
    total = sum(sum(v) for v in want.values())
    for k, durs in want.items():
        r = got[k]
        assert r["Instances"] == len(durs) and r["Total Time (ns)"] == sum(durs)
        assert r["Min (ns)"] == min(durs) and r["Max (ns)"] == max(durs)
        assert r["Med (ns)"] == pytest.approx(statistics.median(durs))
        if len(durs) > 1:
            assert r["StdDev (ns)"] == pytest.approx(statistics.stdev(durs), rel=1e-3, abs=0.1)
        assert r["Time (%)"] == pytest.approx(100 * sum(durs) / total, abs=0.05)
    # sorted by total time, largest first
    totals = [r["Total Time (ns)"] for r in rows]
    assert totals == sorted(totals, reverse=True)
    csv = tool("stats", "--format", "csv", f).stdout.splitlines()
    assert csv[1].startswith("Time (%),Total Time (ns),Instances")
    assert len(csv) == len(rows) + 2
    assert tool("stats", "--report", "nope", f).returncode == 2
