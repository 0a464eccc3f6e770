# SPDX-License-Identifier: MIT
"""Several workers on one file: when there are fewer files than workers,
`cuptrace convert` lets each worker decode the whole file but write only
the events of its share of the blocks. The document must not depend on how
the work was split: the same events, each once, the same flows (ids are
numbered in the order they are written, so flows are compared by what
they join), the same metadata. Checked on multi-block traces of every
source: NVTX ranges, CUPTI (simulator) kernels, copies, calls and memory,
NCCL (harness) operations."""
import json
import re
from collections import Counter

import pytest

from conftest import BUILD, PROGS, ctr_files, run, tool, traced_env

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"


def blocks(f):
    return int(re.search(r"blocks:\s+(\d+)", tool("info", f).stdout).group(1))


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("shares")
    # GPU activity and NVTX from the CUPTI simulator, about 1.5 MB of records.
    env = traced_env(d / "gpu", CUPTRACE_TRACE="cuda,memory,nvtx",
                     CUPTI_SIM_TRUTH=d / "sim.jsonl")
    p = run([SIM_TRAIN, "train", 900], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    # NCCL operations, steps and NVTX from the harness (rank 0 of 2).
    env = traced_env(d / "nccl", RANK=0, WORLD_SIZE=2, HARNESS_STEPS=1)
    p = run([PROGS / "nccl_harness", 1000], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [gpu] = ctr_files(d / "gpu")
    [nccl] = ctr_files(d / "nccl")
    # Several blocks of events before the footer's own block.
    assert blocks(gpu) >= 3 and blocks(nccl) >= 3
    return d, gpu, nccl


FLOW_ID = re.compile(r'"id":(\d+),')
CAT = re.compile(r'"cat":"([^"]*)"')


def canonical(text):
    """A document's events as a multiset of their texts (the converter
    writes one event per line), flow halves paired by (category, id) and
    compared without the id; and the rest of the document."""
    head, sep, rest = text.partition('"traceEvents": [')
    body, sep2, tail = rest.rpartition("\n  ],")
    assert sep and sep2
    plain, flows = Counter(), {}
    for line in body.split("\n"):
        line = line.rstrip(",")
        if not line:
            continue
        if line.startswith('{"ph":"s"') or line.startswith('{"ph":"f"'):
            m = FLOW_ID.search(line)
            key = (CAT.search(line).group(1), m.group(1))
            flows.setdefault(key, []).append(line[:m.start()] + line[m.end():])
        else:
            plain[line] += 1
    for halves in flows.values():
        assert len(halves) == 2, halves  # a start and a finish, never split or doubled
        plain["flow " + " ".join(sorted(halves))] += 1
    return plain, head + tail


def converted(tmp_path, name, jobs, inputs):
    out = tmp_path / f"{name}.json"
    p = tool("convert", "-j", jobs, "-o", out, *inputs)
    assert p.returncode == 0, p.stderr
    json.loads(out.read_text())  # valid JSON, whatever the split
    return out.read_text()


@pytest.mark.parametrize("which", ["gpu", "nccl"])
def test_one_file_split_among_workers_gives_the_same_document(traces, tmp_path, which):
    d, gpu, nccl = traces
    f = gpu if which == "gpu" else nccl
    one = converted(tmp_path, "j1", 1, [f])
    want_events, want_rest = canonical(one)
    cats = Counter(e.get("cat") for e in json.loads(one)["traceEvents"])
    if which == "gpu":
        assert cats["kernel"] > 5000 and cats["cuda_runtime"] + cats["cuda_driver"] > 5000
        assert cats["ac2g"] > 10000 and cats["user_annotation"] > 500
    else:
        assert cats["nccl"] > 10000 and cats["user_annotation"] > 100
    # N workers give a file (N - 1) // files shares (one core is left to the
    # writing thread): 3 -> 2 shares, 4 -> 3, 8 -> 7 (more than its blocks).
    for jobs in (3, 4, 8):
        got_events, got_rest = canonical(converted(tmp_path, f"j{jobs}", jobs, [f]))
        assert got_rest == want_rest
        missing, extra = want_events - got_events, got_events - want_events
        assert not missing and not extra, (jobs, list(missing)[:3], list(extra)[:3])


def test_two_files_with_more_workers_than_files(traces, tmp_path):
    d, gpu, nccl = traces
    want = canonical(converted(tmp_path, "j1", 1, [gpu, nccl]))
    assert canonical(converted(tmp_path, "j7", 7, [gpu, nccl])) == want  # 3 shares each


def test_a_truncated_file_split_among_workers(traces, tmp_path):
    """A file cut inside a block: every share stops at the same place and
    the damage is reported once."""
    d, gpu, nccl = traces
    data = gpu.read_bytes()
    # Block starts (docs/FORMAT.md): after the header, 12-byte block heads
    # (magic, compressed and raw length); 16-byte trailers after footers.
    starts, off = [], 16 + int.from_bytes(data[12:16], "little")
    while off + 12 <= len(data):
        starts.append(off)
        zlen = int.from_bytes(data[off + 4:off + 8], "little")
        off += 16 if data[off:off + 4] == b"CTND" else 12 + zlen
    assert len(starts) >= 4  # blocks of events, the footer's, its trailer
    last_events = starts[-3]  # the last block of events, cut in its middle
    cut = tmp_path / "cut.ctr"
    cut.write_bytes(data[: (last_events + starts[-2]) // 2])
    outs = {}
    for jobs in (1, 4):
        out = tmp_path / f"cut{jobs}.json"
        p = tool("convert", "-j", jobs, "-o", out, cut)
        assert p.returncode == 0, p.stderr
        text = out.read_text()
        assert json.loads(text)["cuptrace"]["files"][0]["status"] == "truncated"
        outs[jobs] = canonical(text)
    assert outs[1] == outs[4]
    assert sum(outs[1][0].values()) > 1000
