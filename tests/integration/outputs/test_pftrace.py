# SPDX-License-Identifier: MIT
"""cuptrace convert -o *.pftrace: Perfetto's protobuf, decoded with the
`perfetto` package's generated classes (zstd_compressed_packets expanded
with the zstd program, incremental clocks and interning resolved as
Perfetto's trace processor does) and compared event for event with the
Chrome JSON of the same trace (names, times to the nanosecond, durations,
args, flows, track and process names)."""
import glob
import os
import subprocess
import sys
from collections import Counter, defaultdict

import pytest

from conftest import PROGS, convert, ctr_files, run, tool, traced_env

# The perfetto package lives in the tests' venv (tests/install-deps.sh).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path += glob.glob(os.path.join(ROOT, "build", "venv", "lib", "python3*", "site-packages"))
pb = pytest.importorskip(
    "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    reason="the perfetto package is not installed (tests/install-deps.sh installs it)")

import programs  # noqa: E402  (the simulator's training run, the NCCL harness)

TE = pb.TrackEvent


def ann_value(a):
    kind = a.WhichOneof("value")
    if a.array_values:
        return tuple(ann_value(v) for v in a.array_values)
    if kind in ("uint_value", "int_value", "string_value", "bool_value"):
        return getattr(a, kind)
    if kind == "double_value":
        return round(a.double_value, 3)
    raise AssertionError(f"unexpected annotation {a}")


def json_value(v):
    if isinstance(v, list):
        return tuple(v)
    return round(v, 3) if isinstance(v, float) else v


def unzstd(frame):
    """One zstd frame expanded by the zstd program (Debian's zstd package;
    Perfetto's reader uses the same libzstd)."""
    p = subprocess.run(["zstd", "-d", "-c", "-q"], input=frame, capture_output=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def packets(path, stats):
    """The file's packets in order, those of zstd_compressed_packets expanded
    in place as Perfetto's tokenizer does (each holds one frame of whole
    packets and stays under 512 KB, as trace_packet.proto asks)."""
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    for p in trace.packet:
        assert not p.HasField("compressed_packets"), "zstd and deflate are never mixed"
        if p.HasField("zstd_compressed_packets"):
            frame = p.zstd_compressed_packets
            assert len(p.SerializeToString()) < 512 * 1024
            assert p.ListFields() == [(pb.TracePacket.DESCRIPTOR.fields_by_name[
                "zstd_compressed_packets"], frame)], "nothing beside the frame"
            inner = pb.Trace()
            inner.ParseFromString(unzstd(frame))
            stats["compressed"] += len(frame)
            stats["expanded"] += len(inner.packet)
            yield from ((q, True) for q in inner.packet)
        else:
            yield p, False


BOOTTIME = 6
SEQ_CLEARED, SEQ_NEEDS = 1, 2


class Clocks:
    """A sequence's clocks as Perfetto's trace processor resolves them
    (ClockSnapshot, TracePacketDefaults.timestamp_clock_id, incremental
    clocks counting from their snapshot value, one delta per packet)."""

    def __init__(self):
        self.default = 0
        self.snap = {}  # clock id -> [value at the snapshot, BOOTTIME then, incremental, last]

    def snapshot(self, cs):
        boot = {c.clock_id: c.timestamp for c in cs.clocks}[BOOTTIME]
        for c in cs.clocks:
            if c.clock_id != BOOTTIME:
                assert 64 <= c.clock_id < 128, "our clocks are sequence-scoped"
                assert not c.unit_multiplier_ns or c.unit_multiplier_ns == 1
                assert c.clock_id not in self.snap, "each clock is started once"
                self.snap[c.clock_id] = [c.timestamp, boot, c.is_incremental, c.timestamp]

    def resolve(self, p):
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else self.default
        if clock in (0, BOOTTIME):
            return p.timestamp
        s = self.snap[clock]  # a snapshot came first on this sequence
        if s[2]:
            s[3] += p.timestamp
            value = s[3]
        else:
            value = p.timestamp
        return value - s[0] + s[1]


def decode(path, plain=False):
    """The trace as plain records: slices, instants, counters, flows, tracks,
    timestamps after resolving each sequence's incremental clock, names
    after resolving interning."""
    names, cats, anns = defaultdict(dict), defaultdict(dict), defaultdict(dict)
    tracks, procs = {}, {}
    events = []  # (seq, packet, order)
    cleared, clocks, deftrack = set(), {}, {}
    stats = Counter()
    for p, packed in packets(path, stats):
        seq = p.trusted_packet_sequence_id
        assert seq, "every packet belongs to a sequence"
        assert not p.HasField("incremental_state_cleared"), "the deprecated flag is not needed"
        if p.sequence_flags & SEQ_CLEARED:
            cleared.add(seq)
            names[seq].clear(), cats[seq].clear(), anns[seq].clear()
            clocks[seq] = Clocks()
        elif seq in cleared:
            # trace_packet.proto: with TracePacketDefaults on a sequence,
            # every later packet says it needs the incremental state
            assert p.sequence_flags == SEQ_NEEDS, p
        else:
            assert not p.sequence_flags and not p.HasField("interned_data")
        if p.HasField("trace_packet_defaults"):
            assert p.sequence_flags & SEQ_CLEARED
            clocks[seq].default = p.trace_packet_defaults.timestamp_clock_id
            # track_event.proto: an event without track_uuid is on
            # TrackEventDefaults.track_uuid
            d = p.trace_packet_defaults.track_event_defaults
            deftrack[seq] = d.track_uuid if d.HasField("track_uuid") else None
        if p.HasField("clock_snapshot"):
            clocks[seq].snapshot(p.clock_snapshot)
            stats["clocks"] = max(stats["clocks"], len(clocks[seq].snap))
        ts = clocks[seq].resolve(p) if seq in clocks else p.timestamp
        if p.HasField("timestamp") and p.timestamp_clock_id == BOOTTIME:
            stats["absolute"] += 1
        if p.HasField("interned_data"):
            d = p.interned_data
            for e in d.event_names:
                names[seq][e.iid] = e.name
            for e in d.event_categories:
                cats[seq][e.iid] = e.name
            for e in d.debug_annotation_names:
                anns[seq][e.iid] = e.name
        if p.HasField("track_descriptor"):
            t = p.track_descriptor
            if t.HasField("process"):
                procs[t.process.pid] = t.process.process_name
                tracks[t.uuid] = dict(proc=t.process.pid, name=None, kind="process",
                                      rank=t.sibling_order_rank)
            else:
                old = tracks.get(t.uuid, {})
                name = t.thread.thread_name if t.HasField("thread") else t.name
                tracks[t.uuid] = dict(parent=t.parent_uuid, name=name or old.get("name"),
                                      kind="thread" if t.HasField("thread") else
                                      "counter" if t.HasField("counter") else "named",
                                      tid=t.thread.tid if t.HasField("thread") else None,
                                      pid=t.thread.pid if t.HasField("thread") else None,
                                      rank=t.sibling_order_rank)
        if p.HasField("track_event"):
            assert seq in cleared, "events come after their sequence's state is cleared"
            assert not (plain and packed), "--pftrace-plain compresses nothing"
            stats["packed_events" if packed else "plain_events"] += 1
            e = p.track_event
            if not e.HasField("track_uuid"):
                assert deftrack.get(seq), "an event without a track needs the default"
                stats["default_track"] += 1
            track = e.track_uuid if e.HasField("track_uuid") else deftrack[seq]
            ev = dict(seq=seq, ts=ts, type=e.type, track=track,
                      name=names[seq][e.name_iid] if e.name_iid else (e.name or None),
                      cat=",".join(cats[seq][c] for c in e.category_iids) or None,
                      args={(anns[seq][a.name_iid] if a.name_iid else a.name): ann_value(a)
                            for a in e.debug_annotations},
                      flows=list(e.flow_ids), terms=list(e.terminating_flow_ids),
                      value=e.counter_value)
            events.append(ev)
    # slices: a BEGIN's END is the next event of its sequence, on its track
    slices, instants, counters = [], [], []
    last = {}
    for ev in events:
        if ev["type"] == TE.TYPE_SLICE_BEGIN:
            assert ev["seq"] not in last
            last[ev["seq"]] = ev
        elif ev["type"] == TE.TYPE_SLICE_END:
            b = last.pop(ev["seq"])
            assert b["track"] == ev["track"]
            b["dur"] = ev["ts"] - b["ts"]
            slices.append(b)
        elif ev["type"] == TE.TYPE_INSTANT:
            instants.append(ev)
        elif ev["type"] == TE.TYPE_COUNTER:
            counters.append(ev)
    assert not last, "every slice ends"
    return dict(tracks=tracks, procs=procs, slices=slices, instants=instants, counters=counters,
                stats=stats, stats_default_tracks={t for t in deftrack.values() if t in tracks})


def where(d, uuid):
    """(process name, track name without its lane) of a track."""
    t = d["tracks"][uuid]
    if t["kind"] == "process":
        return d["procs"][t["proc"]], None
    parent = d["tracks"][t["parent"]]
    name = t["name"]
    if name and name.endswith("]") and " [" in name:
        name = name[:name.rindex(" [")]
    return d["procs"][parent["proc"]], name


def json_view(doc):
    ev = doc["traceEvents"]
    pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    ns = lambda us: round(us * 1000)  # noqa: E731
    slices, instants, counters, flows = Counter(), Counter(), Counter(), defaultdict(dict)
    opened = {}
    for e in ev:
        ph = e.get("ph")
        args = tuple(sorted((k, json_value(v)) for k, v in e.get("args", {}).items()))
        if ph == "X":
            slices[(pname[e["pid"]], tname.get((e["pid"], e["tid"])), e["name"], e["cat"],
                    ns(e["ts"]), ns(e["dur"]), args)] += 1
        elif ph == "b":
            opened[(e["id2"]["local"], e["name"])] = (e, args)
        elif ph == "e":
            b, args = opened.pop((e["id2"]["local"], e["name"]))
            slices[(pname[b["pid"]], "NVTX start/end ranges", b["name"], b["cat"], ns(b["ts"]),
                    ns(e["ts"]) - ns(b["ts"]), args)] += 1
        elif ph == "i":
            where_ = None if e["s"] == "p" else tname.get((e["pid"], e["tid"]))
            instants[(pname[e["pid"]], where_, e["name"], e["cat"], ns(e["ts"]), args)] += 1
        elif ph == "C":
            counters[(pname[e["pid"]], e["name"], ns(e["ts"]), e["args"]["bytes"])] += 1
        elif ph in ("s", "f"):
            flows[e["id"]][ph] = (pname[e["pid"]], tname.get((e["pid"], e["tid"])), ns(e["ts"]), e["cat"])
    assert not opened
    flows = Counter((f["s"], f["f"]) for f in flows.values())
    return dict(slices=slices, instants=instants, counters=counters, flows=flows, pname=pname, tname=tname)


def pf_view(d):
    slices, instants, counters = Counter(), Counter(), Counter()
    src, dst = {}, {}
    for s in d["slices"]:
        p, t = where(d, s["track"])
        slices[(p, t, s["name"], s["cat"], s["ts"], s["dur"], tuple(sorted(s["args"].items())))] += 1
    for s in d["instants"]:
        p, t = where(d, s["track"])
        if s["cat"] not in ("ac2g", "nccl", "mpi") or not (s["flows"] or s["terms"]):
            instants[(p, t, s["name"], s["cat"], s["ts"], tuple(sorted(s["args"].items())))] += 1
    for s in d["slices"] + d["instants"]:
        p, t = where(d, s["track"])
        cat = s["cat"] if s["cat"] in ("nccl", "mpi") else "ac2g"
        for f in s["flows"]:
            assert f not in src
            src[f] = (p, t, s["ts"])
        for f in s["terms"]:
            assert f not in dst
            dst[f] = (p, t, s["ts"], cat)
    assert set(src) == set(dst), "both ends of every flow"
    flows = Counter(((*src[f], dst[f][3]), dst[f]) for f in src)
    for c in d["counters"]:
        t = d["tracks"][c["track"]]
        counters[(d["procs"][d["tracks"][t["parent"]]["proc"]], t["name"], c["ts"], c["value"])] += 1
    return dict(slices=slices, instants=instants, counters=counters, flows=flows)


def nests(d):
    """No two slices of a track overlap without nesting (Perfetto drops those)."""
    by = defaultdict(list)
    for s in d["slices"]:
        by[s["track"]].append((s["ts"], -s["dur"], s["ts"] + s["dur"]))
    for v in by.values():
        v.sort()
        stack = []
        for b, _, e in v:
            while stack and stack[-1] <= b:
                stack.pop()
            assert not stack or e <= stack[-1], "slices of a track nest"
            stack.append(e)


def same_as_json(ctrs, tmp, jobs=None, opts=()):
    doc = convert(ctrs, tmp / "t.json")
    args = ["convert", "-o", tmp / "t.pftrace", *opts, *ctrs] + (["-j", str(jobs)] if jobs else [])
    p = tool(*args)
    assert p.returncode == 0, p.stderr
    d = decode(tmp / "t.pftrace")
    j, f = json_view(doc), pf_view(d)
    for k in ("slices", "instants", "counters", "flows"):
        assert f[k] == j[k], f"{k}: only in pftrace {list((f[k] - j[k]).items())[:3]}, " \
                             f"only in JSON {list((j[k] - f[k]).items())[:3]}"
    # every process and thread of the JSON, with its name
    assert set(d["procs"].values()) == set(j["pname"].values())
    names = {t["name"] for t in d["tracks"].values() if t["kind"] != "process"}
    assert set(j["tname"].values()) <= names
    nests(d)
    return d, doc


def test_training_run_as_json(train_ctr, tmp_path):
    d, doc = same_as_json([train_ctr], tmp_path)
    assert sum(1 for s in d["slices"] if s["cat"] == "kernel") > 100
    # most packets are deltas on their track's incremental clock (CPU calls
    # and the kernels they launch come in separate runs), and the frames
    # are a fraction of the packets they hold
    st = d["stats"]
    # (a quarter to a third are absolute: under ASan the simulator's records
    # come in shorter runs, 2579 of 8248 in one CI run)
    assert st["absolute"] < st["expanded"] / 2, st
    # the sequence's default track (the file's first: its main thread's
    # CUDA calls) spares the track_uuid of its events (how many depends on
    # how the writer's passes interleave the threads' records)
    assert st["default_track"] > 0, st
    dt = d["stats_default_tracks"]
    assert dt and all(d["tracks"][t]["kind"] == "thread" for t in dt), dt
    raw = sum(len(p.SerializeToString()) + 3 for p, packed in packets(tmp_path / "t.pftrace", Counter())
              if packed)
    assert st["compressed"] * 3 < raw, (st, raw)
    # size bought with speed: chunks go out plain while the file stays
    # within half its protobuf (pftrace_pack.c), so this trace of more than
    # one chunk (256 KB) has both, and the file is still under 1/5 of the JSON
    size = os.path.getsize(tmp_path / "t.pftrace")
    whole = sum(len(p.SerializeToString()) + 3 for p, _ in packets(tmp_path / "t.pftrace", Counter()))
    assert whole > 256 * 1024 and st["packed_events"] and st["plain_events"], (st, whole)
    assert size <= whole / 2 + 1024, (size, whole)
    assert size * 5 <= os.path.getsize(tmp_path / "t.json"), size
    assert any(s["flows"] for s in d["slices"]), "launch flows leave the calls"
    # ordering: the GPU process after the rank's, streams in the JSON's order
    ranks = {t["proc"]: t["rank"] for t in d["tracks"].values() if t["kind"] == "process"}
    assert sorted(ranks, key=ranks.get) == sorted(ranks)


def test_plain_packets_for_older_perfetto(train_ctr, tmp_path):
    """--pftrace-plain: no compressed packet, the same events, larger."""
    (tmp_path / "z").mkdir()
    dz, _ = same_as_json([train_ctr], tmp_path / "z")
    p = tool("convert", "--pftrace-plain", "-o", tmp_path / "p.pftrace", train_ctr)
    assert p.returncode == 0, p.stderr
    dp = decode(tmp_path / "p.pftrace", plain=True)
    assert dp["stats"]["compressed"] == 0 and dp["stats"]["expanded"] == 0
    assert pf_view(dp) == pf_view(dz)
    assert os.path.getsize(tmp_path / "p.pftrace") > 2 * os.path.getsize(tmp_path / "z" / "t.pftrace")


def test_shared_file_same_events(train_ctr, tmp_path):
    """Several workers on one file: each share its own sequence, same events."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    d1, _ = same_as_json([train_ctr], a, jobs=1)
    d3, _ = same_as_json([train_ctr], b, jobs=3)
    assert pf_view(d1) == pf_view(d3)


def test_nccl_job_as_json(nccl_job, tmp_path):
    d, doc = same_as_json(nccl_job, tmp_path)
    assert any(s["cat"] == "nccl" for s in d["slices"])
    assert any(s["cat"] == "nccl" and s["terms"] for s in d["slices"] + d["instants"])


def test_nccl_job_with_kernels_as_json(nccl_sim_job, tmp_path):
    """The NCCL harness with the CUPTI simulator: NCCL operations joined to
    their kernels carry the kernel's correlation id as "kernel correlation"
    in both outputs ("correlation" is CUDA calls' and GPU work's only: HTA
    joins on it). The .pftrace named it "correlation"; the harness without
    kernels above never showed it."""
    d, doc = same_as_json(nccl_sim_job, tmp_path)
    nccl = [s for s in d["slices"] if s["cat"] == "nccl"]
    assert any("kernel correlation" in s["args"] for s in nccl), nccl[:3]
    assert not any("correlation" in s["args"] for s in nccl)
    assert any(s["cat"] == "kernel" and "correlation" in s["args"] for s in d["slices"])


def test_nccl_job_any_order(nccl_job, tmp_path):
    """--any-order: the workers' packets in the order they come; each
    sequence's own packets stay in order, so the events are the JSON's."""
    same_as_json(nccl_job, tmp_path, jobs=3, opts=["--any-order"])


def test_nvtx_program_as_json(tmp_path):
    p = run([PROGS / "nvtx_threads", 4, 25, 10], env=traced_env(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    d, doc = same_as_json(ctr_files(tmp_path / "out"), tmp_path)
    assert any(t["name"] == "NVTX start/end ranges" for t in d["tracks"].values())
    assert any("payload" in s["args"] for s in d["slices"])


def test_invalid_utf8_names_as_json(tmp_path):
    """Strings of the traced program that are not UTF-8 (NVTX text, domain
    and category args, a thread's name, a host in the process names) are
    not written raw, where protobuf's string fields decode to bytes, not the
    JSON's names: each bad byte is U+FFFD, as in the JSON, in both the plain
    and the compressed packets."""
    from hostile_trace import hostile_files
    files = hostile_files(tmp_path / "in")
    for opts in ([], ["--pftrace-plain"]):
        out = tmp_path / ("plain" if opts else "packed")
        out.mkdir()
        d, doc = same_as_json(files, out, opts=opts)
        names = [s["name"] for s in d["slices"] + d["instants"]]
        texts = names + [v for s in d["slices"] for v in s["args"].values()] + \
            [t["name"] for t in d["tracks"].values() if t["name"]] + list(d["procs"].values())
        assert all(isinstance(t, str) for t in texts), [t for t in texts if not isinstance(t, str)]
        assert "bad utf8 \ufffd\ufffd \ufffd( \ufffd\ufffd \ufffd\ufffd\ufffd end" in names
        [s] = [s for s in d["slices"] if s["name"] == "msg \ufffd end"]
        assert s["args"] == {"domain": "dom \ufffd\ufffd", "category": "cat \ufffd("}, s
        assert "thread \ufffd\ufffd\ufffd" in {t["name"] for t in d["tracks"].values()}
        assert any("h\ufffdst\ufffd\ufffd" in n for n in d["procs"].values()), d["procs"]


def test_lanes_of_a_thread_are_named_after_it(tmp_path):
    """A range holding a step boundary overlaps two ProfilerStep slices on
    its thread (as in the JSON), so the steps go to a lane track: the lane
    carries the thread's name (known only at the end of the file) and its
    number, "python3 [2]", in every share."""
    from pyshim import env_for, python
    code = "import cuptrace\nfor i in range(4):\n    with cuptrace.range('work'):\n" \
           "        cuptrace.step()\n"
    p = run([python(), "-c", code], env=env_for(traced_env(tmp_path / "out")))
    assert p.returncode == 0, p.stderr
    for jobs in (1, 3):
        (tmp_path / str(jobs)).mkdir()
        d, doc = same_as_json(ctr_files(tmp_path / "out"), tmp_path / str(jobs), jobs=jobs)
        [thread] = [t for t in d["tracks"].values() if t["kind"] == "thread"]
        lanes = sorted(t["name"] for t in d["tracks"].values()
                       if t["kind"] == "named" and t["name"].endswith("]"))
        assert thread["name"] and lanes == [thread["name"] + " [2]"], (thread, lanes)


def test_more_tracks_than_clocks(tmp_path):
    """65 threads: more tracks than a sequence has clock ids (64-127); the
    tracks past them give absolute BOOTTIME times, the same events."""
    p = run([PROGS / "nvtx_threads", 64, 3, 3], env=traced_env(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    d, doc = same_as_json(ctr_files(tmp_path / "out"), tmp_path, jobs=1)
    assert len({t["tid"] for t in d["tracks"].values() if t["kind"] == "thread"}) == 65
    assert d["stats"]["clocks"] == 64, d["stats"]
    assert d["stats"]["absolute"] > 0


def test_truncated_input_gives_a_valid_file(train_ctr, tmp_path):
    data = train_ctr.read_bytes()
    cut = tmp_path / "cut.ctr"
    cut.write_bytes(data[:len(data) - 64])  # the footer and the end of the last block
    p = tool("convert", "-o", tmp_path / "cut.pftrace", cut)
    assert p.returncode == 0, p.stderr
    assert "truncated" in p.stderr
    d = decode(tmp_path / "cut.pftrace")
    assert d["slices"]
    same_as_json([cut], tmp_path)


def test_failed_conversion_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.ctr"
    bad.write_bytes(b"not a trace")
    p = tool("convert", "-o", tmp_path / "x.pftrace", bad)
    assert p.returncode != 0
    assert not os.path.exists(tmp_path / "x.pftrace")


@pytest.fixture(scope="module")
def train_ctr(tmp_path_factory):
    d = tmp_path_factory.mktemp("pftrace_train")
    env = programs.sim_env(d / "out", d)
    p = run([programs.SIM_TRAIN, "train", 40], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    (f,) = ctr_files(d / "out")
    return f


@pytest.fixture(scope="module")
def nccl_job(tmp_path_factory):
    d = tmp_path_factory.mktemp("pftrace_nccl")
    out = d / "out"
    programs.run_ranks(d, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                                          HARNESS_STEPS="1"))
    return ctr_files(out)


@pytest.fixture(scope="module")
def nccl_sim_job(tmp_path_factory):
    """4 ranks of the NCCL harness on the CUPTI simulator (kernels, and
    NCCL operations joined to them)."""
    d = tmp_path_factory.mktemp("pftrace_nccl_sim")
    out, world = d / "out", 4
    procs = [subprocess.Popen(
        [str(programs.HARNESS.parent.parent / "cupti_sim" / "nccl_harness_sim"), "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr", RANK=str(r),
                 WORLD_SIZE=str(world), CT_TEST_TRUTH=str(d / f"t{r}.jsonl")))
        for r in range(world)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    files = ctr_files(out)
    assert len(files) == world
    return files


if __name__ == "__main__":
    subprocess.run(["pytest", __file__])


def test_torch_operators(tmp_path):
    """PyTorch operators and scopes (tests/unit/tool_test_torch.c's trace):
    the JSON's cpu_op and user_annotation slices, [memory] instants and
    gpu_user_annotation slices, at the same times with the same args, but
    dims and types as the file's text ("2,3;3,4") where the JSON has
    arrays; calls and kernels with their operator's External id."""
    from conftest import BUILD
    ctr = tmp_path / "torch.ctr"
    subprocess.run([str(BUILD / "tests" / "unit" / "tool_test_torch"), str(ctr)], check=True)
    doc = convert([ctr], tmp_path / "t.json")
    p = tool("convert", "-o", tmp_path / "t.pftrace", ctr)
    assert p.returncode == 0, p.stderr
    d = decode(tmp_path / "t.pftrace")
    nests(d)

    def text_args(args):
        a = dict(args)
        if "Input Dims" in a:
            a["Input Dims"] = ";".join(",".join(map(str, x)) for x in a["Input Dims"])
        if "Input type" in a:
            a["Input type"] = ";".join(a["Input type"])
        return tuple(sorted((k, json_value(v)) for k, v in a.items()))

    cats = ("cpu_op", "user_annotation", "gpu_user_annotation", "kernel", "cuda_runtime")
    ns = lambda us: round(us * 1000)  # noqa: E731
    js = Counter((e["name"], e["cat"], ns(e["ts"]), ns(e["dur"]), text_args(e.get("args", {})))
                 for e in doc["traceEvents"] if e.get("ph") == "X" and e["cat"] in cats)
    ps = Counter((s["name"], s["cat"], s["ts"], s["dur"], tuple(sorted(s["args"].items())))
                 for s in d["slices"] if s["cat"] in cats)
    # the hostile op's dims: the JSON leaves them out, the text is kept here
    hostile = [k for k in ps if k[0].startswith("evil")]
    assert len(hostile) == 1 and ("Input Dims", "0,1;07") in hostile[0][4]
    ps[hostile[0]] -= 1
    ps[hostile[0][:4] + (tuple(a for a in hostile[0][4] if a[0] != "Input Dims"),)] += 1
    assert +ps == +js
    assert sum(1 for k in js if k[1] == "cpu_op") == 5
    assert sum(1 for k in js for a in k[4] if a[0] == "External id" and k[1] == "kernel") == 3
    jm = Counter((e["name"], e["cat"], ns(e["ts"]), text_args(e["args"])) for e in doc["traceEvents"]
                 if e.get("name") == "[memory]")
    pm = Counter((s["name"], s["cat"], s["ts"], tuple(sorted(s["args"].items())))
                 for s in d["instants"] if s["name"] == "[memory]")
    assert pm == jm and len(jm) == 1
