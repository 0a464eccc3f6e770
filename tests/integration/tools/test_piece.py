# SPDX-License-Identifier: MIT
"""A piece of a big job: `--steps A-B`, `--ranks LIST|slowest:N` and
`--window T0-T1` of convert (merged and --split-ranks), export, events and
report, on 4 ranks of the NCCL harness launching kernels on the CUPTI
simulator, with steps (cuptrace_step()) in slots PACE us apart and rank
LATE_RANK coming LATE us late at every EVERY-th collective. The piece is
checked against the whole job's conversion: its events are exactly the
whole conversion's events (same timestamps, same tracks) of the kept ranks
that start inside the piece, an arrow when both its ends are."""
import json
import sqlite3
import subprocess
import time
from collections import Counter, defaultdict

import pytest

from conftest import (BUILD, H_RT_ANCHOR, _get_varint, ctr_files, load_json, rewrite_header,
                      tool, traced_env)

HARNESS_SIM = BUILD / "tests" / "cupti_sim" / "nccl_harness_sim"
WORLD, ITERS = 4, 4
PACE, LATE, EVERY, LATE_RANK = 4000, 6000, 2, 2


def start_harness(out, trace, iters, **extra):
    """WORLD ranks of the NCCL harness on the CUPTI simulator, traced with
    sources trace into out/rank<R>.ctr, their steps marked, started
    together; extra: the harness's pacing variables."""
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + 300_000_000
    procs = []
    for r in range(WORLD):
        env = dict(traced_env(out), CUPTRACE_OUTPUT=f"{out}/rank%r.ctr", CUPTRACE_TRACE=trace,
                   RANK=str(r), WORLD_SIZE=str(WORLD), HARNESS_STEPS="1",
                   HARNESS_PACE_US=str(PACE), HARNESS_T0=str(t0), **extra)
        procs.append(subprocess.Popen([str(HARNESS_SIM), str(iters)], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    return procs


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("piece")
    out = d / "out"
    procs = start_harness(out, "cuda,nvtx,nccl", ITERS, HARNESS_LATE=f"{LATE_RANK}:{LATE}:{EVERY}")
    for r, p in enumerate(procs):
        o, e = p.communicate(timeout=60)
        assert p.returncode == 0, e
        assert f"rank {r} done" in o
    assert len(ctr_files(out)) == WORLD
    p = tool("convert", "-o", d / "full.json", out)
    assert p.returncode == 0, p.stderr
    return d, out, load_json(d / "full.json")


def piece(job, name, *args, cmd="convert"):
    """Runs cmd with the options into name; returns its stderr lines."""
    d, out, _ = job
    p = tool(cmd, "-o", d / name, *args, out)
    assert p.returncode == 0, p.stderr
    return p.stderr.splitlines()


def rank_of_pid(doc):
    return {e["pid"]: int(e["args"]["name"].split()[1]) for e in doc["traceEvents"]
            if e.get("ph") == "M" and e["name"] == "process_name"}


def ns(ts_us):
    return round(ts_us * 1000)


def events(doc):
    """The timed events other than arrows: (rank, pid, tid, ph, cat, name,
    ts ns, dur ns), counted."""
    rank = rank_of_pid(doc)
    return Counter((rank[e["pid"]], e["pid"], e["tid"], e["ph"], e.get("cat"), e["name"],
                    ns(e["ts"]), ns(e.get("dur", 0)))
                   for e in doc["traceEvents"] if e["ph"] not in ("M", "s", "f"))


def arrows(doc):
    """Each flow as (rank, cat, from tid, from ts, to pid, to tid, to ts)."""
    rank = rank_of_pid(doc)
    half = defaultdict(dict)
    for e in doc["traceEvents"]:
        if e["ph"] in ("s", "f"):
            half[(e["pid"] // 1000000, e["cat"], e["id"])][e["ph"]] = e
    return Counter((rank[h["s"]["pid"]], cat, h["s"]["tid"], ns(h["s"]["ts"]), h["f"]["pid"],
                    h["f"]["tid"], ns(h["f"]["ts"]))
                   for (_, cat, _), h in half.items())


def step_windows(doc, lo, hi):
    """Per rank, [start of step lo, start of step hi + 1 or the end) in ns."""
    rank = rank_of_pid(doc)
    starts = defaultdict(dict)
    for e in doc["traceEvents"]:
        if e["ph"] == "X" and e["name"].startswith("ProfilerStep#"):
            starts[rank[e["pid"]]][int(e["name"][13:])] = ns(e["ts"])
    return {r: (s[lo], s.get(hi + 1, 1 << 62)) for r, s in starts.items()}


def expected(doc, windows):
    """The whole conversion's events and arrows inside windows (rank ->
    [lo, hi) ns): an event when it starts inside, an arrow when both its
    ends are."""
    ev = Counter({k: n for k, n in events(doc).items()
                  if k[0] in windows and windows[k[0]][0] <= k[6] < windows[k[0]][1]})
    ar = Counter({k: n for k, n in arrows(doc).items()
                  if k[0] in windows and all(windows[k[0]][0] <= t < windows[k[0]][1]
                                             for t in (k[3], k[6]))})
    return ev, ar


def test_steps_and_ranks_keep_the_whole_conversions_events_of_the_piece(job):
    d, _, full = job
    err = piece(job, "p.json", "--steps", "2-3", "--ranks", "1,2")
    doc = load_json(d / "p.json")
    assert sorted(set(rank_of_pid(doc).values())) == [1, 2]
    want_ev, want_ar = expected(full, {r: w for r, w in step_windows(full, 2, 3).items()
                                       if r in (1, 2)})
    assert events(doc) == want_ev
    assert arrows(doc) == want_ar
    assert any(k[4] == "kernel" for k in want_ev) and want_ar  # not a piece of nothing
    assert {e["name"] for e in doc["traceEvents"] if e["name"].startswith("ProfilerStep")} == \
        {"ProfilerStep#2", "ProfilerStep#3"}
    # the same process numbers as the whole job's conversion
    assert set(rank_of_pid(doc).items()) <= set(rank_of_pid(full).items())
    meta = doc["cuptrace"]["piece"]
    assert (meta["ranks"], meta["of_ranks"], meta["steps"], meta["left_out_ranks"]) == \
        ("1-2", 4, "2-3", 2)
    assert meta["left_out_events"] > 0 and meta["left_out_records"] > 0
    [line] = [x for x in err if "kept" in x]
    assert line.startswith("cuptrace: kept ranks 1-2 of 4, steps 2-3 (") and "left out 2 ranks" in line
    assert meta["summary"] == line[len("cuptrace: "):]
    assert [f["rank"] for f in doc["cuptrace"]["files"]] == [1, 2]


def rt_anchor(data):
    """The header's CLOCK_REALTIME anchor of trace data."""
    tlv, i = data[16:16 + int.from_bytes(data[12:16], "little")], 0
    while i < len(tlv):
        tag, j = _get_varint(tlv, i)
        n, j = _get_varint(tlv, j)
        if tag == H_RT_ANCHOR:
            return _get_varint(tlv, j)[0]
        i = j + n
    raise AssertionError("no rt_anchor")


def test_clocks_are_aligned_on_every_file_before_the_cut(job, tmp_path):
    """Ranks 2 and 3 on a second host whose clock is 40 ms ahead: the
    offset is estimated from every rank's collectives, so the piece of
    ranks 2 and 3 alone keeps the whole conversion's times (aligned on
    those two files alone, they would be 40 ms off)."""
    _, out, _ = job
    two = tmp_path / "two"
    two.mkdir()
    for r in range(WORLD):
        data = (out / f"rank{r}.ctr").read_bytes()
        if r >= 2:
            data = rewrite_header(data, host="nodeB", rt_anchor=rt_anchor(data) + 40_000_000)
        (two / f"rank{r}.ctr").write_bytes(data)
    p = tool("convert", "-o", tmp_path / "full.json", two)
    assert p.returncode == 0 and "2 hosts" in p.stderr, p.stderr
    full = load_json(tmp_path / "full.json")
    p = tool("convert", "-o", tmp_path / "p.json", "--ranks", "2,3", "--steps", "2-3", two)
    assert p.returncode == 0, p.stderr
    doc = load_json(tmp_path / "p.json")
    want_ev, want_ar = expected(full, {r: w for r, w in step_windows(full, 2, 3).items()
                                       if r in (2, 3)})
    assert events(doc) == want_ev and arrows(doc) == want_ar and want_ev
    assert doc["baseTimeNanoseconds"] == full["baseTimeNanoseconds"]


def test_window_keeps_what_starts_inside_whole(job):
    d, _, full = job
    ts = sorted(k[6] for k in events(full))
    lo_ns = ts[len(ts) // 3] // 1000 * 1000
    hi_ns = ts[2 * len(ts) // 3] // 1000 * 1000
    lo, hi = f"{lo_ns / 1e9:.6f}", f"{hi_ns / 1e9:.6f}"
    err = piece(job, "w.json", "--window", f"{lo}-{hi}")
    doc = load_json(d / "w.json")
    everyone = {r: (lo_ns, hi_ns) for r in range(WORLD)}
    want_ev, want_ar = expected(full, everyone)
    assert events(doc) == want_ev and arrows(doc) == want_ar
    # straddling the edges: begun before T0 and still running, left out;
    # begun inside and ending after T1, kept whole
    assert any(k[6] < lo_ns < k[6] + k[7] for k in events(full))
    assert not any(k[6] < lo_ns for k in events(doc))
    assert any(k[6] + k[7] > hi_ns for k in events(doc))
    assert any(x.startswith(f"cuptrace: kept all 4 ranks, window {lo}-{hi} s") for x in err)
    # an open end
    piece(job, "o.json", "--window", f"{lo}-", "--ranks", "3")
    want_ev, want_ar = expected(full, {3: (lo_ns, 1 << 62)})
    doc = load_json(d / "o.json")
    assert events(doc) == want_ev and arrows(doc) == want_ar
    assert doc["cuptrace"]["piece"]["to_s"] is None
    # open at the start: it begins with the job, not at a file clock's zero
    err = piece(job, "s.json", "--window", f"-{hi}")
    want_ev, want_ar = expected(full, {r: (0, hi_ns) for r in range(WORLD)})
    doc = load_json(d / "s.json")
    assert events(doc) == want_ev and arrows(doc) == want_ar
    meta = doc["cuptrace"]["piece"]
    assert meta["from_s"] is None and meta["to_s"] == float(hi), meta
    assert any(x.startswith(f"cuptrace: kept all 4 ranks, window -{hi} s (up to {float(hi):.3f} s)")
               for x in err), err
    assert not any("no event" in x for x in err), err
    # past the job's end: nothing falls inside, and it says so
    late = f"{ts[-1] / 1e9 + 100:.3f}"
    for cmd, name in (("convert", "late.json"), ("export", "late.sqlite")):
        err = piece(job, name, "--window", f"{late}-", cmd=cmd)
        assert sum("warning: no event of the ranks kept falls in this window" in x
                   for x in err) == 1, err


def test_slowest_picks_the_late_rank_and_the_fastest(job):
    d, out, _ = job
    err = piece(job, "s.json", "--ranks", "slowest:1")
    p = tool("stats", "--report", "nccl_skew", "--format", "json", out)
    assert p.returncode == 0, p.stderr
    rows = next(v for k, v in json.loads(p.stdout).items() if "per rank" in k)
    fastest = min((r["Total Lateness (ns)"], r["Rank"]) for r in rows
                  if r["Rank"] != LATE_RANK)[1]
    assert max(rows, key=lambda r: r["Wait Imposed (ns)"])["Rank"] == LATE_RANK
    doc = load_json(d / "s.json")
    assert set(rank_of_pid(doc).values()) == {LATE_RANK, fastest}
    [line] = [x for x in err if "kept" in x]
    assert f"slowest 1 by wait imposed at collectives (nccl_skew): {LATE_RANK}" in line
    assert f"the fastest for contrast: {fastest}" in line


def test_slowest_without_collectives_takes_the_longest_steps(tmp_path):
    """NCCL not traced: no collective to match, so slowest:1 is the rank
    with the longest average step (rank 1 marks its odd iterations' steps
    STEP_LATE us late: of 3 steps, two are longer, one shorter) and the
    fastest the one with the shortest, as the steps report has them."""
    out = tmp_path / "out"
    procs = start_harness(out, "cuda,nvtx", 3, HARNESS_STEP_LATE=f"1:{2 * PACE}")
    for p in procs:
        _, e = p.communicate(timeout=60)
        assert p.returncode == 0, e
    p = tool("stats", "--report", "steps", "--format", "json", out)
    assert p.returncode == 0, p.stderr
    rows = next(v for k, v in json.loads(p.stdout).items() if "per rank" in k)
    assert max(rows, key=lambda r: r["Avg (ns)"])["Rank"] == 1
    fastest = min((r["Avg (ns)"], r["Rank"]) for r in rows)[1]
    p = tool("convert", "-o", tmp_path / "s.json", "--ranks", "slowest:1", out)
    assert p.returncode == 0, p.stderr
    assert set(rank_of_pid(load_json(tmp_path / "s.json")).values()) == {1, fastest}
    assert f"slowest 1 by average step (steps): 1; the fastest for contrast: {fastest}" in p.stderr


def test_split_ranks_writes_only_the_kept_ranks(job):
    d, out, _ = job
    split = d / "split"
    p = tool("convert", "--split-ranks", split, "--ranks", "1,3", "--steps", "2", out)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in split.iterdir()) == ["rank1.json", "rank3.json"]
    for r in (1, 3):
        doc = load_json(split / f"rank{r}.json")
        assert doc["distributedInfo"]["rank"] == r
        assert {e["name"] for e in doc["traceEvents"]
                if e["name"].startswith("ProfilerStep")} == {"ProfilerStep#2"}
        assert doc["cuptrace"]["piece"]["ranks"] == "1,3"


def test_export_and_events_honour_the_piece(job):
    d, out, full = job
    win = step_windows(full, 3, 3)[LATE_RANK]
    piece(job, "x.sqlite", "--steps", "3", "--ranks", str(LATE_RANK), cmd="export")
    db = sqlite3.connect(d / "x.sqlite")
    assert [r for (r,) in db.execute("SELECT rank FROM CUPTRACE_RANKS")] == [LATE_RANK]
    [(text,)] = db.execute("SELECT value FROM META_DATA_EXPORT WHERE name = 'CUPTRACE_PIECE'")
    assert text.startswith(f"kept rank {LATE_RANK} of 4, steps 3 (")
    starts = sorted(s for (s,) in db.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL"))
    want = sorted(k[6] for k in events(full) if k[0] == LATE_RANK and k[4] == "kernel"
                  and win[0] <= k[6] < win[1])
    assert starts == want and want
    db.close()
    # events: the whole job's rows of the piece, in the same order
    whole = tool("events", out)
    part = tool("events", "--steps", "2-3", "--ranks", "0,3", out)
    assert whole.returncode == 0 and part.returncode == 0, part.stderr
    rows = [x.split("\t") for x in whole.stdout.splitlines()[1:]]
    rank_of_file = {x[0]: int(x[8].split()[1]) for x in rows
                    if x[1] == "process" and x[8].startswith("rank ")}
    wins = step_windows(full, 2, 3)

    def inside(x):
        w = wins[rank_of_file[x[0]]]
        return x[1] in ("process", "track") or (
            w[0] <= int(x[6]) < w[1] and (x[1] != "flow" or w[0] <= int(x[10]) < w[1]))
    want = [x for x in rows if rank_of_file[x[0]] in (0, 3) and inside(x)]
    got = [x.split("\t") for x in part.stdout.splitlines()[1:]]
    assert got == want and any(x[1] == "flow" for x in got)
    assert part.stderr.startswith("cuptrace: kept ranks 0,3 of 4, steps 2-3 (")


def test_report_renders_the_piece(job):
    d, _, _ = job
    err = piece(job, "r.html", "--ranks", "slowest:1", "--steps", "2-3", cmd="report")
    page = (d / "r.html").read_text()
    assert "<dt>Piece</dt>" in page and f"(nccl_skew): {LATE_RANK}" in page
    assert any(x.startswith("cuptrace: kept ranks") for x in err)


@pytest.mark.parametrize("cmd", ["convert", "export", "report", "events"])
@pytest.mark.parametrize("opt,value", [("--ranks", "x"), ("--ranks", "slowest:0"),
                                       ("--ranks", "2-1"), ("--window", "3-2"),
                                       ("--window", "abc"), ("--window", "-"),
                                       ("--steps", "3-1"), ("--ranks", "9")])
def test_bad_values_exit_2_with_one_line(job, cmd, opt, value):
    d, out, _ = job
    target = d / f"bad-{cmd}.{'sqlite' if cmd == 'export' else 'html' if cmd == 'report' else 'json'}"
    args = [] if cmd == "events" else ["-o", target]
    p = tool(cmd, *args, f"{opt}={value}", out)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.splitlines()) == 1 and opt in p.stderr, p.stderr
    assert not target.exists() and p.stdout == ""


def test_steps_of_no_file_is_bad_input(job):
    d, out, _ = job
    p = tool("convert", "-o", d / "none.json", "--steps", "50-60", out)
    assert p.returncode == 1
    assert p.stderr.splitlines() == [
        "cuptrace convert: --steps 50-60: no step of that range in the files kept (steps "
        "come from cuptrace_step() or CUPTRACE_STEP_RANGE)"]
    assert not (d / "none.json").exists()


def test_one_rank_is_named(job):
    """A job of one rank: named, not "all 1 ranks"."""
    d, out, _ = job
    p = tool("convert", "-o", d / "one.json", "--steps", "2", out / "rank3.ctr")
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("cuptrace: kept the only rank, 3, steps 2 ("), p.stderr
