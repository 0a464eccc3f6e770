# SPDX-License-Identifier: MIT
"""NVTX programs traced end to end: every range the program made is in the
Chrome trace with its name, domain, category, color, payload, nesting,
thread and a duration inside the bounds the program measured."""
import re

import pytest

from conftest import (PROGS, convert, ctr_files, ranges_by_tid, read_truth, run, thread_names,
                      tool, traced_env, base_env, launcher_env, TOOL)


def depth_of(ranges):
    """Nesting depth of each range of one thread (ranges sorted by start)."""
    stack, depths = [], []
    for r in ranges:
        end = r["ts"] + r["dur"]
        while stack and stack[-1] < r["ts"] + 1e-9 and not (stack[-1] >= end):
            stack.pop()
        while stack and stack[-1] < end:
            stack.pop()
        depths.append(len(stack))
        stack.append(end)
    return depths


@pytest.fixture(scope="module")
def threads_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("nvtx")
    truth = d / "truth.jsonl"
    p = run([PROGS / "nvtx_threads", 4, 25, 10], env=traced_env(d / "out", CT_TEST_TRUTH=truth))
    assert p.returncode == 0, p.stderr
    assert "nvtx_threads done" in p.stdout
    assert p.stderr == ""
    files = ctr_files(d / "out")
    assert len(files) == 1
    doc = convert(files, d / "t.json")
    return doc, read_truth(truth), files[0]


def test_every_range_matches_the_program(threads_trace):
    doc, truth, _ = threads_trace
    rb = ranges_by_tid(doc)
    # The program's ranges per thread, in the order they started.
    expect = {}
    for t in truth:
        if t["kind"] == "range":
            expect.setdefault(t["tid"], []).append(t)
    assert set(expect) <= set(rb)
    for tid, want in expect.items():
        want.sort(key=lambda t: t["start_min"])
        got = rb[tid]
        assert len(got) == len(want), f"thread {tid}"
        depths = depth_of(got)
        for g, w, d in zip(got, want, depths):
            assert g["name"] == w["name"]
            assert d == w["depth"], (g, w)
            args = g.get("args", {})
            assert args.get("domain", "") == w["domain"]
            for key in ("color", "category", "payload"):
                assert args.get(key) == w.get(key), (key, g, w)
            # Duration inside what the program measured around the calls (ns).
            dur_ns = round(g["dur"] * 1000)
            assert w["end_min"] - w["start_max"] <= dur_ns <= w["end_max"] - w["start_min"], (g, w)
            assert "unfinished" not in args


def test_timestamps_line_up_with_the_program_clock(threads_trace):
    doc, truth, _ = threads_trace
    from conftest import trace_ns_to_mono
    rb = ranges_by_tid(doc)
    for t in truth:
        if t["kind"] != "range":
            continue
        cands = [r for r in rb[t["tid"]] if r["name"] == t["name"]]
        starts = [trace_ns_to_mono(doc, r["ts"]) for r in cands]
        # The anchor pairs CLOCK_REALTIME with CLOCK_MONOTONIC to well
        # under a microsecond; allow 2 us for rounding and the pairing.
        assert any(t["start_min"] - 2000 <= s <= t["start_max"] + 2000 for s in starts), t


def test_cross_thread_start_end(threads_trace):
    doc, truth, _ = threads_trace
    begins = {e["id2"]["local"]: e for e in doc["traceEvents"] if e.get("ph") == "b"}
    ends = {e["id2"]["local"]: e for e in doc["traceEvents"] if e.get("ph") == "e"}
    assert begins.keys() == ends.keys()
    by_name = {b["name"]: (b, ends[i]) for i, b in begins.items()}
    asyncs = [t for t in truth if t["kind"] == "async"]
    assert len(asyncs) == 8
    main_tid = next(t["tid"] for t in truth if t["kind"] == "thread" and t["name"] == "main thread")
    for a in asyncs:
        b, e = by_name[a["name"]]
        assert b["tid"] == main_tid
        assert e["tid"] == a["end_tid"] != main_tid
        dur_ns = round((e["ts"] - b["ts"]) * 1000)
        assert a["end_min"] - a["start_max"] <= dur_ns <= a["end_max"] - a["start_min"]


def test_marks_and_thread_names(threads_trace):
    doc, truth, _ = threads_trace
    marks = [e for e in doc["traceEvents"] if e.get("ph") == "i" and e["cat"] == "user_annotation"]
    want = sorted((t["tid"], t["name"]) for t in truth if t["kind"] == "mark")
    assert sorted((m["tid"], m["name"]) for m in marks) == want
    step = [m for m in marks if m["name"] == "step"]
    assert step and step[0]["args"]["domain"] == "physics"
    names = {tid: n for (_, tid), n in thread_names(doc).items()}
    for t in truth:
        if t["kind"] == "thread":
            assert names[t["tid"]] == t["name"]


def test_info_counts_match(threads_trace):
    doc, truth, path = threads_trace
    out = tool("info", path, check=True).stdout
    nranges = sum(1 for t in truth if t["kind"] == "range")
    assert re.search(rf"nvtx_push\s+{nranges}\s", out), out
    assert re.search(rf"nvtx_pop\s+{nranges}\s", out), out
    assert re.search(r"nvtx_start\s+8\s", out)
    assert "status:      clean" in out
    assert "dropped:     0" in out


HOSTILE_BYTES_POLICY = "each byte that does not start a valid UTF-8 sequence becomes U+FFFD"


def decode_like_cuptrace(b):
    """Our documented policy: valid UTF-8 sequences are kept, every other
    byte becomes U+FFFD (one per byte)."""
    out, i = [], 0
    while i < len(b):
        for k in (1, 2, 3, 4):
            try:
                ch = b[i:i + k].decode("utf-8", errors="strict")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                out.append(ch)
                i += k
                break
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def test_hostile_strings(tmp_path):
    truth = tmp_path / "truth.jsonl"
    p = run([PROGS / "hostile"], env=traced_env(tmp_path / "out", CT_TEST_TRUTH=truth))
    assert p.returncode == 0 and p.stdout == "hostile done\n", p.stderr
    out = tmp_path / "h.json"
    doc = convert(ctr_files(tmp_path / "out"), out)  # json.load already proved it is valid JSON
    raw = out.read_bytes()
    raw.decode("utf-8")  # strictly valid UTF-8
    got = [e["name"] for e in doc["traceEvents"] if e.get("ph") == "X"]
    want = [decode_like_cuptrace(bytes.fromhex(t["hex"])) for t in read_truth(truth)
            if t["kind"] == "range"]
    # Three NULL-message ranges come last with empty names.
    assert got[:len(want)] == want
    assert got[len(want):] == ["", "", ""]
    assert max(len(n) for n in got) == 64 * 1024


def test_launcher_and_preload_record_the_same(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    p1 = run([PROGS / "nvtx_threads", 2, 5, 4], env=traced_env(a))
    p2 = run([TOOL, "run", "-o", f"{b}/%h.%p.ctr", "--", PROGS / "nvtx_threads", 2, 5, 4],
             env=launcher_env())
    assert p1.returncode == p2.returncode == 0
    assert p1.stdout == p2.stdout
    d1 = convert(ctr_files(a), tmp_path / "a.json")
    d2 = convert(ctr_files(b), tmp_path / "b.json")
    names = lambda d: sorted(e["name"] for e in d["traceEvents"] if e.get("ph") == "X")
    assert names(d1) == names(d2) and len(names(d1)) >= 10


def test_untraced_output_is_unchanged(tmp_path):
    plain = run([PROGS / "demo_train", 10], env=base_env())
    traced = run([PROGS / "demo_train", 10], env=traced_env(tmp_path / "o"))
    assert plain.returncode == traced.returncode == 0
    assert plain.stdout == traced.stdout and traced.stderr == ""


def test_user_nvtx_injection_is_respected(tmp_path):
    # A user who points NVTX elsewhere keeps that choice: the library does
    # not take NVTX over (and says so only at info level).
    env = traced_env(tmp_path / "o", NVTX_INJECTION64_PATH="/nonexistent/libother.so",
                     CUPTRACE_LOG="info")
    p = run([PROGS / "nvtx_threads", 1, 2, 2], env=env)
    assert p.returncode == 0
    assert "NVTX_INJECTION64_PATH is set to /nonexistent/libother.so" in p.stderr
    assert ctr_files(tmp_path / "o") == []


def test_wide_message_cut_at_a_character_boundary(tmp_path):
    p = run([PROGS / "wide_cut"], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    assert "cut strings: 1" in tool("info", f).stdout
    [r] = [e for e in convert([f], tmp_path / "t.json")["traceEvents"]
           if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    assert r["name"] == "a" + "\u4e2d" * 32767, (len(r["name"]), r["name"][-4:])
