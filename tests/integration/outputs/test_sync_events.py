# SPDX-License-Identifier: MIT
"""Event syncs and stream waits tied to the cudaEventRecord they waited
for: Kineto's wait_on_stream and wait_on_cuda_event_record_corr_id args,
which Holistic Trace Analysis's critical path reads to add its
GPU-to-GPU and GPU-to-CPU synchronisation edges.

Simulator only: the CUPTI simulator (tests/cupti_sim) emits the
CUDA_EVENT records (CUpti_ActivityCudaEvent2) that CUPTI gives for
cudaEventRecord, and the SYNCHRONIZATION records of cudaStreamWaitEvent
and cudaEventSynchronize; no real CUPTI produced the records checked here.
`sim_train events N`: per NVTX "step" range, gemm on stream A, event 1
recorded on A, stream B waits for it, softmax on B, layernorm on A, event
2 recorded on A, the host waits for it. The events are recorded again
every step, so a sync must find its event's latest record, not the
first."""
import json
import subprocess

import pytest

from conftest import BUILD, ctr_files, convert, read_truth, run, tool, traced_env, venv_python

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"
STEPS = 4
EVENT_SYNC, STREAM_WAIT = 1, 2
SYNC_NAMES = {EVENT_SYNC: "Event Sync", STREAM_WAIT: "Stream Wait Event"}
INVALID = 0xFFFFFFFF


def trace(d, **extra):
    env = dict(traced_env(d / "o", CUPTRACE_TRACE="cuda,nvtx", CUPTRACE_STEP_RANGE="step",
                          RANK=0, WORLD_SIZE=1, CUPTI_SIM_TRUTH=d / "sim.jsonl", **extra),
               CUPTRACE_OUTPUT=f"{d}/o/rank%r.ctr")
    p = run([SIM_TRAIN, "events", STEPS], env=env)
    assert p.returncode == 0 and p.stdout == "sim_train events done\n", p.stderr
    files = ctr_files(d / "o")
    assert len(files) == 1
    return files, read_truth(d / "sim.jsonl")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("sync_events")
    files, truth = trace(d)
    doc = convert(files, d / "t.json")
    return d, files, truth, doc


def xs(doc, cat):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["cat"] == cat]


def test_waits_name_the_record_they_waited_for(job):
    d, files, truth, doc = job
    records = {t["corr"]: t for t in truth if t["k"] == "cuda_event"}
    waits = {t["corr"]: t for t in truth if t["k"] == "sync" and t["type"] in SYNC_NAMES}
    # each step: one wait of each kind, on the latest record of its event
    assert len(records) == 2 * STEPS and len(waits) == 2 * STEPS
    assert all(w["wait_corr"] in records for w in waits.values())
    assert len({w["wait_corr"] for w in waits.values()}) == 2 * STEPS
    calls = {e["args"]["correlation"]: e for e in xs(doc, "cuda_runtime")}
    got = {e["args"]["correlation"]: e for e in xs(doc, "cuda_sync")
           if e["name"] in SYNC_NAMES.values()}
    assert set(got) == set(waits)
    for corr, w in waits.items():
        a = got[corr]["args"]
        assert got[corr]["name"] == SYNC_NAMES[w["type"]]
        assert a["wait_on_cuda_event_record_corr_id"] == w["wait_corr"]
        assert a["wait_on_stream"] == w["wait_stream"] == records[w["wait_corr"]]["stream"]
        assert a["wait_on_cuda_event_id"] == w["event"]
        # the record is a cudaEventRecord call of the trace
        assert calls[w["wait_corr"]]["name"] == "cudaEventRecord"
    # syncs on no event carry none of these args
    others = [e for e in xs(doc, "cuda_sync") if e["name"] not in SYNC_NAMES.values()]
    assert others and not any("wait_on_stream" in e["args"] for e in others)


def test_pftrace_carries_the_same_args(job):
    """The Perfetto output names the same record (its debug annotations)."""
    d, files, truth, doc = job
    p = tool("convert", "-o", d / "t.pftrace", *files)
    assert p.returncode == 0, p.stderr
    venv = venv_python("perfetto")
    script = """
import json, subprocess, sys
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
def packets(data):
    t = Trace(); t.ParseFromString(data)
    for p in t.packet:
        if p.HasField("zstd_compressed_packets"):  # expanded as Perfetto's tokenizer does
            yield from packets(subprocess.run(["zstd", "-d", "-c", "-q"], check=True,
                                              input=p.zstd_compressed_packets,
                                              capture_output=True).stdout)
        else:
            yield p
names = {}
out = []
for p in packets(open(sys.argv[1], "rb").read()):
    seq = p.trusted_packet_sequence_id
    for n in p.interned_data.debug_annotation_names:
        names[seq, n.iid] = n.name
    if p.HasField("track_event"):
        a = {names.get((seq, x.name_iid), x.name):
             (x.int_value if x.HasField("int_value") else x.uint_value)
             for x in p.track_event.debug_annotations}
        if "wait_on_stream" in a:
            out.append(a)
print(json.dumps(out))
"""
    q = subprocess.run([str(venv), "-c", script, str(d / "t.pftrace")], capture_output=True,
                       text=True, timeout=120)
    assert q.returncode == 0, q.stderr[-3000:]
    got = json.loads(q.stdout)
    want = sorted((e["args"]["correlation"], e["args"]["wait_on_stream"],
                   e["args"]["wait_on_cuda_event_record_corr_id"]) for e in xs(doc, "cuda_sync")
                  if "wait_on_stream" in e["args"])
    assert len(want) == 2 * STEPS
    assert sorted((a["correlation"], a["wait_on_stream"],
                   a["wait_on_cuda_event_record_corr_id"]) for a in got) == want


def test_a_cupti_without_cuda_event_records(tmp_path):
    """A CUPTI that refuses the CUDA_EVENT kind: everything else is traced,
    nothing is said at the default log level, and the waits say -1 (not
    known), as Kineto writes them."""
    files, truth = trace(tmp_path, CUPTI_SIM_REFUSE_KIND=36)
    assert not [t for t in truth if t["k"] == "cuda_event"]
    doc = convert(files, tmp_path / "t.json")
    waits = [e for e in xs(doc, "cuda_sync") if e["name"] in SYNC_NAMES.values()]
    assert len(waits) == 2 * STEPS and len(xs(doc, "kernel")) == 3 * STEPS
    for e in waits:
        assert e["args"]["wait_on_stream"] == -1
        assert e["args"]["wait_on_cuda_event_record_corr_id"] == -1


HTA_SCRIPT = """
import json, os, sys, warnings
warnings.filterwarnings("ignore")
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
from hta.trace_analysis import TraceAnalysis
from hta.analyzers.critical_path_analysis import CPEdgeType
ta = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
df = ta.t.get_trace(0)
names = ta.t.symbol_table.get_sym_table()
def ev(i):
    return [names[int(df.loc[i, "name"])], int(df.loc[i, "correlation"])]
res = {}
for step in range(1, int(sys.argv[2])):
    cp, ok = ta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=step)
    edges = [[ev(cp.node_list[u].ev_idx), ev(cp.node_list[v].ev_idx)] for u, v in cp.edges
             if cp.edges[u, v]["object"].type == CPEdgeType.SYNC_DEPENDENCY]
    res[step] = {"ok": ok, "sync_edges": sorted(edges)}
print(json.dumps(res))
"""


def test_hta_critical_path_follows_the_waits(job):
    """HTA's critical path analysis, step by step, adds exactly the sync
    edges the waits imply: the last kernel launched on the recording
    stream before cudaEventRecord -> the next kernel launched on the
    waiting stream (stream wait), and -> the cudaEventSynchronize call
    (event sync). Without the args it adds none."""
    venv = venv_python("hta")
    d, files, truth, doc = job
    split = d / "split"
    p = tool("convert", "--split-ranks", split, *files)
    assert p.returncode == 0, p.stderr
    q = subprocess.run([str(venv), "-c", HTA_SCRIPT, str(split), str(STEPS)],
                       capture_output=True, text=True, timeout=600)
    assert q.returncode == 0, q.stderr[-4000:]
    res = json.loads(q.stdout.strip().splitlines()[-1])
    # the edges expected, from the simulator's truth alone
    kernels = {t["corr"]: t for t in truth if t["k"] == "kernel"}
    names = {e["args"]["correlation"]: e["name"] for e in xs(doc, "kernel")}
    api = {t["corr"]: t["name"] for t in truth if t["k"] == "api"}
    want = []
    for w in sorted((t for t in truth if t["k"] == "sync" and t["type"] in SYNC_NAMES),
                    key=lambda t: t["corr"]):
        src = max(c for c, k in kernels.items()
                  if k["stream"] == w["wait_stream"] and c < w["wait_corr"])
        if w["type"] == STREAM_WAIT:
            dst = min(c for c, k in kernels.items() if k["stream"] == w["stream"] and c > w["corr"])
            want.append([[names[src], src], [names[dst], dst]])
        else:
            assert api[w["corr"]].startswith("cudaEventSynchronize")
            want.append([[names[src], src], ["cudaEventSynchronize", w["corr"]]])
    assert len(want) == 2 * STEPS
    for step in range(1, STEPS):
        r = res[str(step)]
        assert r["ok"] is True
        assert r["sync_edges"] == sorted(want[2 * step:2 * step + 2]), (step, r)
