# SPDX-License-Identifier: MIT
"""Chrome JSON as Perfetto, chrome://tracing and HTA read it
(docs/CHOICES.md): metadata before traceEvents, times in microseconds with
three decimals, a process per rank, NVTX ranges with their domain, colour
and payload; the same document gzip-compressed or on stdout."""
import gzip
import json
import re

from conftest import convert, tool


def test_chrome_json_conventions(demo_trace, tmp_path):
    f = demo_trace
    out = tmp_path / "t.json"
    doc = convert([f], out)
    text = out.read_text()
    # Metadata before traceEvents, in this order, with ": " after each key.
    keys = [text.index(f'"{k}": ') for k in
            ("schemaVersion", "deviceProperties", "distributedInfo", "traceEvents", "displayTimeUnit")]
    assert keys == sorted(keys)
    # HTA finds the rank with this regex; the first match is distributedInfo's.
    assert re.search(r'"rank":\s+(\d+)', text).group(1) == "0"
    assert doc["distributedInfo"]["world_size"] == 1
    assert isinstance(doc["baseTimeNanoseconds"], int)
    ev = doc["traceEvents"]
    timed = [e for e in ev if "ts" in e]
    assert timed
    # ts/dur written with exactly three decimals.
    for m in re.finditer(r'"(ts|dur)":(-?\d+(\.\d+)?)', text):
        assert m.group(3) and len(m.group(3)) == 4, m.group(0)
    assert all(e.get("tid", 1) != 0 for e in ev)
    procs = [e for e in ev if e.get("ph") == "M" and e["name"] == "process_name"]
    assert len(procs) == 1 and re.match(r"rank 0 \(.+:\d+\)$", procs[0]["args"]["name"])
    cats = {e["cat"] for e in timed}
    assert cats <= {"user_annotation", "cuptrace"}
    names = {e["name"] for e in ev if e.get("ph") == "X"}
    assert {"train_step", "forward", "backward", "optimizer", "layer 0", "load batch", "augment"} <= names
    lb = next(e for e in ev if e.get("name") == "load batch")
    assert lb["args"] == {"domain": "dataloader", "color": "#2e86de"}
    ts = next(e for e in ev if e.get("name") == "train_step")
    assert isinstance(ts["args"]["payload"], int)
    tn = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    assert {"trainer", "loader-0", "loader-1", "logger"} <= tn


def test_gzip_output_and_stdout(demo_trace, tmp_path):
    f = demo_trace
    plain = convert([f], tmp_path / "a.json")
    gz = convert([f], tmp_path / "a.json.gz")
    assert gz == plain
    with gzip.open(tmp_path / "a.json.gz") as g:
        g.read(10)
    p = tool("convert", "-o", "-", f)
    assert p.returncode == 0 and json.loads(p.stdout) == plain
