# SPDX-License-Identifier: MIT
"""Every output is a consumer of one resolved event stream (tools/model):
the events themselves (`cuptrace events`), the Chrome trace (`cuptrace
convert`) and the reports (`cuptrace stats`) must tell the same story.
Three real traces (the CUPTI simulator's training workload, the 4-rank NCCL
harness, an NVTX program with threads) are fed to every consumer, and the
slices, async ranges, instants, counters and flows are compared track by
track, with their times, and with the reports' counts."""
import json
import re
from collections import Counter, defaultdict

import pytest

from conftest import PROGS, convert, ctr_files, run, tool, traced_env
from programs import SIM_TRAIN, WORLD, run_ranks, sim_env

# ---- producing the traces (small workloads, once per module)


def _cupti(d):
    env = sim_env(d / "out", d)
    p = run([SIM_TRAIN, "train", 20], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return ctr_files(d / "out")


def _nccl(d):
    out = d / "out"
    run_ranks(d, lambda r: dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr",
                                HARNESS_STEPS="1"))
    files = ctr_files(out)
    assert len(files) == WORLD
    return files


def _nvtx(d):
    p = run([PROGS / "nvtx_threads", 4, 25, 10],
            env=traced_env(d / "out", CT_TEST_TRUTH=d / "truth.jsonl"))
    assert p.returncode == 0, p.stderr
    return ctr_files(d / "out")


PRODUCERS = {"cupti": _cupti, "nccl": _nccl, "nvtx": _nvtx}


class Trace:
    """One trace as every consumer saw it."""

    def __init__(self, name, files, d):
        self.name = name
        self.files = files
        self.doc = convert(files, d / "t.json")
        p = tool("events", *files)
        assert p.returncode == 0, p.stderr
        self.rows = parse_events(p.stdout)
        p = tool("stats", "--format", "json", *files)
        assert p.returncode == 0, p.stderr
        self.stats = json.loads(p.stdout)
        self._index()

    def _index(self):
        # Events: the tracks of each file (id -> kind, name).
        self.tracks = {}
        for r in self.rows:
            if r["type"] == "track":
                self.tracks[(r["file"], r["track"])] = (r["kind"], r["track_name"])
        # Chrome: which input file each process belongs to, thread names.
        self.file_pids = sorted((f["pid"], i) for i, f in enumerate(self.doc["cuptrace"]["files"]))
        self.tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in self.doc["traceEvents"]
                       if e.get("ph") == "M" and e.get("name") == "thread_name"}

    def file_of_pid(self, pid):
        f = None
        for p, i in self.file_pids:
            if p <= pid:
                f = i
        assert f is not None, pid
        return f

    def track_name(self, file, track):
        """The name of an events track; a track with no track line (a CPU
        thread never named) is known by its kind alone."""
        _, name = self.tracks.get((file, track), (None, None))
        return name if name is not None else f"<unnamed {self.kind_of(file, track)}>"

    def kind_of(self, file, track):
        kinds = {r["kind"] for r in self.rows if r["file"] == file and r["track"] == track}
        return "/".join(sorted(kinds))

    def chrome_track(self, e):
        name = self.tnames.get((e["pid"], e["tid"]))
        return name if name is not None else "<unnamed thread>"

    def kinds(self):
        return Counter((r["type"], r["cat"]) for r in self.rows)


def parse_events(text):
    lines = text.splitlines()
    assert lines[0].split("\t") == ["file", "type", "cat", "track", "track_kind", "track_name",
                                    "ts_ns", "end_ns", "name", "to_track", "to_ts_ns"]
    rows = []
    for line in lines[1:]:
        f = line.split("\t")
        assert len(f) in (9, 11), line
        r = dict(file=int(f[0]), type=f[1], cat=f[2], track=int(f[3]), kind=f[4],
                 track_name=f[5], ts=int(f[6]) if f[6] else None,
                 end=int(f[7]) if f[7] else None, name=f[8])
        # process and track lines name a track: no time
        assert (r["ts"] is None) == (r["type"] in ("process", "track")), line
        if len(f) == 11:
            r["to_track"] = int(f[9])
            r["to_ts"] = int(f[10]) if f[10] else None
        rows.append(r)
    return rows


@pytest.fixture(scope="module", params=sorted(PRODUCERS))
def trace(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(f"agree_{request.param}")
    files = PRODUCERS[request.param](d)
    assert files
    return Trace(request.param, files, d)


# ---- the mapping between the events' categories and the Chrome trace's

# events cat -> (Chrome cat, Chrome ph) for slices
SLICE_CAT = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset",
             "sync": "cuda_sync", "runtime": "cuda_runtime", "driver": "cuda_driver",
             "nvtx": "user_annotation", "step": "user_annotation", "nccl": "nccl",
             "nccl_group": "nccl", "nccl_gpu": "nccl", "gpu_annotation": "gpu_user_annotation"}
FLOW_CAT = {"launch": "ac2g", "nccl_flow": "nccl"}
# Categories whose slices carry the same name in both (the others are named
# by the Chrome writer alone: copies, memsets, syncs; the model names NCCL
# slices, fused kernels included, for every output: m_nccl_name).
NAMED = {"kernel", "runtime", "driver", "nvtx", "step", "nccl", "nccl_group", "nccl_gpu",
         "gpu_annotation"}


def ns(ts_us):
    return round(ts_us * 1000)


def event_key(r):
    """The kind of Chrome event an events row becomes: (Chrome cat, ph, what)."""
    if r["type"] == "slice":
        what = "step" if r["cat"] == "step" else "slice"
        return (SLICE_CAT[r["cat"]], "X", what)
    if r["type"] == "async":
        assert r["cat"] == "nvtx", r
        return ("user_annotation", "b", "async")
    if r["type"] == "instant":
        assert r["cat"] == "mark", r
        return ("user_annotation", "i", "mark")
    return None


def chrome_key(e):
    ph = e.get("ph")
    if ph == "X":
        what = "step" if e["cat"] == "user_annotation" and e["name"].startswith("ProfilerStep#") \
            else "slice"
        return (e["cat"], "X", what)
    if ph == "b":
        return (e["cat"], "b", "async")
    if ph == "i":
        return (e["cat"], "i", "mark")
    return None


def events_slices(t):
    """(file, key, track name) -> sorted [(ts, end, name)] from `cuptrace events`."""
    out = defaultdict(list)
    for r in t.rows:
        k = event_key(r)
        if k is None:
            continue
        name = r["name"] if r["cat"] in NAMED or r["type"] != "slice" else ""
        out[(r["file"], k, t.track_name(r["file"], r["track"]))].append((r["ts"], r["end"], name))
    return {k: sorted(v) for k, v in out.items()}


def chrome_slices(t):
    """The same from the Chrome trace."""
    out = defaultdict(list)
    ends = {}
    for e in t.doc["traceEvents"]:
        if e.get("ph") == "e":
            ends[(e["pid"], e["id2"]["local"])] = e
    for e in t.doc["traceEvents"]:
        k = chrome_key(e)
        if k is None:
            continue
        ts = ns(e["ts"])
        if k[1] == "X":
            end = ts + ns(e["dur"])
        elif k[1] == "b":
            end = ns(ends[(e["pid"], e["id2"]["local"])]["ts"])
        else:
            end = ts
        out[(t.file_of_pid(e["pid"]), k, t.chrome_track(e))].append((ts, end, e["name"]))
    return {k: sorted(v) for k, v in out.items()}


def per_cat(sl):
    c = Counter()
    for (f, k, _), v in sl.items():
        c[k] += len(v)
    return c


def per_track(sl):
    return Counter({k: len(v) for k, v in sl.items()})


# ---- the checks


def test_traces_are_rich_enough(trace):
    """The comparison means something only if each trace has what it is
    meant to exercise."""
    k = trace.kinds()
    want = {"cupti": [("slice", "kernel"), ("slice", "memcpy"), ("slice", "memset"),
                      ("slice", "sync"), ("slice", "runtime"), ("slice", "driver"),
                      ("slice", "nvtx"), ("flow", "launch"), ("counter", "gpu_memory"),
                      ("slice", "gpu_annotation")],
            "nccl": [("slice", "nccl"), ("slice", "nccl_group"), ("slice", "nccl_gpu"),
                     ("slice", "step"), ("flow", "nccl_flow")],
            "nvtx": [("slice", "nvtx"), ("async", "nvtx"), ("instant", "mark")]}[trace.name]
    for w in want:
        assert k[w] > 0, (trace.name, w, k)
    assert {r["file"] for r in trace.rows} == set(range(len(trace.files)))
    assert len(trace.doc["cuptrace"]["files"]) == len(trace.files)


def test_tracks_and_thread_names_agree(trace):
    ev = Counter((f, name) for (f, _), (_, name) in trace.tracks.items())
    ch = Counter((trace.file_of_pid(pid), name) for (pid, _), name in trace.tnames.items())
    assert ev == ch, trace.name
    # every track that holds events was declared by a track line
    used = {(r["file"], r["track"]) for r in trace.rows if r["type"] in ("slice", "async",
                                                                          "instant", "flow")}
    assert used <= set(trace.tracks), (trace.name, used - set(trace.tracks))


def test_slice_counts_per_category(trace):
    ev, ch = per_cat(events_slices(trace)), per_cat(chrome_slices(trace))
    assert ev == ch, (trace.name, ev, ch)


def test_slice_counts_per_track(trace):
    ev, ch = per_track(events_slices(trace)), per_track(chrome_slices(trace))
    diff = {k: (ev.get(k, 0), ch.get(k, 0)) for k in set(ev) | set(ch) if ev.get(k) != ch.get(k)}
    assert not diff, (trace.name, "(file, kind, track): (events, chrome)", diff)


def test_slice_times_and_names(trace):
    """Every slice, async range and instant at the same ns in both (Chrome's
    us with 3 decimals), with the same end and, where both name it, the same
    name."""
    ev, ch = events_slices(trace), chrome_slices(trace)
    assert set(ev) == set(ch)
    n = 0
    for key, want in ev.items():
        got = ch[key]
        assert len(got) == len(want), key
        named = key[1][2] != "slice" or any(w[2] for w in want)
        for (ets, eend, ename), (cts, cend, cname) in zip(want, got):
            assert abs(ets - cts) <= 1, (trace.name, key, ets, cts)
            assert abs(eend - cend) <= 2, (trace.name, key, (ets, eend), (cts, cend))
            if named:
                assert ename == cname, (trace.name, key, ename, cname)
            n += 1
    assert n == sum(len(v) for v in ev.values()) > 0


def test_async_ends_on_the_same_thread(trace):
    ev = Counter((r["file"], trace.track_name(r["file"], r["track"]),
                  trace.track_name(r["file"], r["to_track"]), r["name"])
                 for r in trace.rows if r["type"] == "async")
    begins = {(e["pid"], e["id2"]["local"]): e for e in trace.doc["traceEvents"]
              if e.get("ph") == "b"}
    ends = {(e["pid"], e["id2"]["local"]): e for e in trace.doc["traceEvents"]
            if e.get("ph") == "e"}
    assert begins.keys() == ends.keys()
    ch = Counter((trace.file_of_pid(b["pid"]), trace.chrome_track(b), trace.chrome_track(ends[k]),
                  b["name"]) for k, b in begins.items())
    assert ev == ch, trace.name


def test_counters(trace):
    ev = Counter(r["file"] for r in trace.rows if r["type"] == "counter")
    ch = Counter(trace.file_of_pid(e["pid"]) for e in trace.doc["traceEvents"]
                 if e.get("ph") == "C")
    assert ev == ch, trace.name


def test_flows_agree(trace):
    ev_rows = [r for r in trace.rows if r["type"] == "flow"]
    ev = Counter((r["file"], FLOW_CAT[r["cat"]]) for r in ev_rows)
    te = trace.doc["traceEvents"]
    starts = [e for e in te if e.get("ph") == "s"]
    finishes = [e for e in te if e.get("ph") == "f"]
    s = Counter((trace.file_of_pid(e["pid"]), e["cat"]) for e in starts)
    f = Counter((trace.file_of_pid(e["pid"]), e["cat"]) for e in finishes)
    assert ev == s == f, (trace.name, ev, s, f)
    if trace.name != "nvtx":
        assert ev, trace.name

    # Chrome: s and f pair by id; f binds to a slice starting exactly there,
    # s lies inside a slice of its thread.
    sid = {(e["cat"], e["id"]): e for e in starts}
    fid = {(e["cat"], e["id"]): e for e in finishes}
    assert len(sid) == len(starts) and sid.keys() == fid.keys()
    x_at = defaultdict(list)
    for e in te:
        if e.get("ph") == "X":
            x_at[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    starts_at = {k: {a for a, _ in v} for k, v in x_at.items()}
    for e in finishes:
        assert e.get("bp") == "e"
        assert ns(e["ts"]) in starts_at.get((e["pid"], e["tid"]), ()), (trace.name, e)
    for e in starts:
        t = ns(e["ts"])
        assert any(a <= t <= b for a, b in x_at[(e["pid"], e["tid"])]), (trace.name, e)

    # events: the same on its own tracks
    ev_at = defaultdict(list)
    for r in trace.rows:
        if r["type"] == "slice":
            ev_at[(r["file"], r["track"])].append((r["ts"], r["end"]))
    for r in ev_rows:
        assert r["to_ts"] in {a for a, _ in ev_at[(r["file"], r["to_track"])]}, (trace.name, r)
        assert any(a <= r["ts"] <= b for a, b in ev_at[(r["file"], r["track"])]), (trace.name, r)

    # and the very same arrows in both
    ev_arrows = Counter((r["file"], FLOW_CAT[r["cat"]], trace.track_name(r["file"], r["track"]),
                         r["ts"], trace.track_name(r["file"], r["to_track"]), r["to_ts"])
                        for r in ev_rows)
    ch_arrows = Counter((trace.file_of_pid(a["pid"]), a["cat"], trace.chrome_track(a), ns(a["ts"]),
                         trace.chrome_track(b), ns(b["ts"]))
                        for k, a in sid.items() for b in [fid[k]])
    assert ev_arrows == ch_arrows, trace.name


# ---- the reports


def table(stats, prefix):
    keys = [k for k in stats if k.split(":")[0] == prefix]
    assert len(keys) <= 1, keys
    return stats[keys[0]] if keys else []


def steps_counted(stats):
    """Steps of every rank in the steps report (none when it is absent)."""
    rows = [v for k, v in stats.items() if k.startswith("steps: step duration per rank")]
    return sum(r["Steps"] for t in rows for r in t)


def api_display(name):
    return re.sub(r"_v\d{4,}$", "", name)


def test_stats_agree_with_the_events(trace):
    rows = [r for r in trace.rows if r["type"] == "slice"]
    count = Counter(r["cat"] for r in rows)
    st = trace.stats

    kern = table(st, "cuda_gpu_kern_sum")
    assert sum(r["Instances"] for r in kern) == count["kernel"], trace.name
    assert Counter({r["Name"]: r["Instances"] for r in kern}) == \
        Counter(r["name"] for r in rows if r["cat"] == "kernel"), trace.name

    api = table(st, "cuda_api_sum")
    assert sum(r["Num Calls"] for r in api) == count["runtime"] + count["driver"], trace.name
    assert Counter({r["Name"]: r["Num Calls"] for r in api}) == \
        Counter(api_display(r["name"]) for r in rows if r["cat"] in ("runtime", "driver"))

    mem = table(st, "cuda_gpu_mem_time_sum")
    assert sum(r["Count"] for r in mem) == count["memcpy"] + count["memset"], trace.name
    assert sum(r["Count"] for r in mem if r["Operation"] == "[CUDA memset]") == count["memset"]

    nvtx = table(st, "nvtx_sum")
    styles = Counter()
    for r in nvtx:
        styles[r["Style"]] += r["Instances"]
    nasync = sum(1 for r in trace.rows if r["type"] == "async" and r["cat"] == "nvtx")
    assert styles["PushPop"] + styles["StartEnd"] == count["nvtx"] + nasync, (trace.name, styles)
    assert styles["StartEnd"] == nasync, (trace.name, styles)
    assert set(styles) <= {"PushPop", "StartEnd"}, styles  # steps: the steps report
    assert steps_counted(st) == count["step"], trace.name

    nccl = table(st, "nccl_sum")
    assert sum(r["Calls"] for r in nccl) == count["nccl"], trace.name
    by_op = Counter()
    for r in nccl:
        by_op[r["Operation"]] += r["Calls"]
    assert by_op == Counter(r["name"] for r in rows if r["cat"] == "nccl"), trace.name
    ranks = table(st, "nccl_ranks")
    by_rank = Counter()
    for r in ranks:
        by_rank[r["Rank"]] += r["Calls"]
    rank_of = [f["rank"] for f in trace.doc["cuptrace"]["files"]]
    assert by_rank == Counter(rank_of[r["file"]] for r in rows if r["cat"] == "nccl"), trace.name


def test_stats_agree_with_chrome(trace):
    te = trace.doc["traceEvents"]
    c = Counter((e["cat"], e["name"].startswith("ProfilerStep#")) for e in te if e.get("ph") == "X")
    st = trace.stats
    assert sum(r["Instances"] for r in table(st, "cuda_gpu_kern_sum")) == c[("kernel", False)]
    assert sum(r["Num Calls"] for r in table(st, "cuda_api_sum")) == \
        c[("cuda_runtime", False)] + c[("cuda_driver", False)]
    assert sum(r["Count"] for r in table(st, "cuda_gpu_mem_time_sum")) == \
        c[("gpu_memcpy", False)] + c[("gpu_memset", False)]
    styles = Counter()
    for r in table(st, "nvtx_sum"):
        styles[r["Style"]] += r["Instances"]
    nb = sum(1 for e in te if e.get("ph") == "b" and e["cat"] == "user_annotation")
    assert styles["PushPop"] + styles["StartEnd"] == c[("user_annotation", False)] + nb
    assert steps_counted(st) == c[("user_annotation", True)]
    # NCCL calls: the slices on the communicators' CPU tracks that are not groups
    calls = sum(1 for e in te if e.get("ph") == "X" and e["cat"] == "nccl"
                and not trace.chrome_track(e).endswith(" GPU")
                and not e["name"].startswith("ncclGroup"))
    assert sum(r["Calls"] for r in table(st, "nccl_sum")) == calls
