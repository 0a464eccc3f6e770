# SPDX-License-Identifier: MIT
"""The cuptrace tool on good and bad inputs: Chrome JSON conventions,
merging, gzip, truncated and damaged files, usage errors."""
import gzip
import json
import re
import shutil
import subprocess

import pytest

from conftest import PROGS, TOOL, base_env, convert, ctr_files, load_json, run, tool, traced_env


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    p = run([PROGS / "demo_train", 30], env=traced_env(d / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return d, f


def test_chrome_json_conventions(demo, tmp_path):
    d, f = demo
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


def test_gzip_output_and_stdout(demo, tmp_path):
    d, f = demo
    plain = convert([f], tmp_path / "a.json")
    gz = convert([f], tmp_path / "a.json.gz")
    assert gz == plain
    with gzip.open(tmp_path / "a.json.gz") as g:
        g.read(10)
    p = tool("convert", "-o", "-", f)
    assert p.returncode == 0 and json.loads(p.stdout) == plain


def test_default_output_name(demo, tmp_path):
    d, f = demo
    g = tmp_path / "x.ctr"
    shutil.copy(f, g)
    p = run([TOOL, "convert", g], env=base_env(), cwd=tmp_path)
    assert p.returncode == 0
    assert load_json(tmp_path / "x.json")["traceEvents"]
    # a directory named "." is named by its own name (it was "..json", hidden)
    (tmp_path / "job").mkdir()
    shutil.copy(f, tmp_path / "job" / "r0.ctr")
    p = run([TOOL, "convert", "."], env=base_env(), cwd=tmp_path / "job")
    assert p.returncode == 0 and "wrote job.json" in p.stderr, p.stderr
    assert load_json(tmp_path / "job" / "job.json")["traceEvents"]
    p = run([TOOL, "export", "."], env=base_env(), cwd=tmp_path / "job")
    assert p.returncode == 0 and (tmp_path / "job" / "job.sqlite").exists(), p.stderr


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


@pytest.mark.parametrize("content,why", [
    (b"", "not a cuptrace file (empty)"),
    (b"hello world, this is not a trace", "not a cuptrace file (bad magic)"),
    (b'{"traceEvents": []}', "not a cuptrace file"),
    (b"CUPTRACE\x07\x00\x00\x00\x00\x00\x00\x00", "format version 7"),
    (b"CUPTRACE\x01\x00\x00\x00\xff\xff\xff\x7f", "damaged header"),
    (b"CUPTRACE\x01\x00\x00\x00\x10\x00\x00\x00ab", "truncated inside the header"),
])
def test_bad_inputs_give_one_line_and_exit_1(tmp_path, content, why):
    f = tmp_path / "bad.ctr"
    f.write_bytes(content)
    for cmd in (["info"], ["convert", "-o", str(tmp_path / "o.json")]):
        p = tool(*cmd, f)
        assert p.returncode == 1
        assert p.stderr.count("\n") == 1 and why in p.stderr, p.stderr


def test_a_flipped_bit_in_the_header_is_caught(demo, tmp_path):
    """Issue 17, item 8: a flipped bit in the header went unnoticed (the
    version read "0.5.0", config lines changed). Format 1.1 checksums it."""
    d, f = demo
    data = f.read_bytes()
    assert data[10:12] == b"\x03\x00"  # format 1.3 (the checksum came with 1.1)
    hlen = 16 + int.from_bytes(data[12:16], "little")
    info = tool("info", f, check=True).stdout
    assert re.search(r"format:\s+1\.3 ", info)
    cfg = data.index(b"CUPTRACE_", 16)
    for at, bit in ((10, 0), (17, 1), (cfg + 2, 3), (hlen - 30, 6), (hlen - 1, 7)):
        bad = bytearray(data)
        bad[at] ^= 1 << bit
        g = tmp_path / "flipped.ctr"
        g.write_bytes(bytes(bad))
        for cmd in (["info"], ["convert", "-o", str(tmp_path / "o.json")]):
            p = tool(*cmd, g)
            assert p.returncode == 1, (at, p.stdout)
            assert "header corrupt" in p.stderr and p.stderr.count("\n") == 1, (at, p.stderr)


def test_directory_without_traces_and_wrong_types(tmp_path):
    (tmp_path / "empty").mkdir()
    p = tool("info", tmp_path / "empty")
    assert p.returncode == 1 and "no .ctr trace files" in p.stderr
    p = tool("convert", "-o", tmp_path / "x.json", "/dev/null")
    assert p.returncode == 1 and "not a regular file" in p.stderr
    p = tool("info", tmp_path / "missing.ctr")
    assert p.returncode == 1 and "No such file" in p.stderr


def test_a_write_error_is_reported(demo):
    """Output is written by a thread of its own: a failing write must still
    reach the exit status and one line on stderr."""
    d, f = demo
    with open("/dev/full", "w") as full:
        p = subprocess.run([str(TOOL), "convert", "-o", "-", str(f)], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == ["cuptrace: writing -: No space left on device"]


def test_usage_errors_exit_2(demo):
    d, f = demo
    assert tool().returncode == 2
    assert tool("frobnicate").returncode == 2
    assert tool("convert").returncode == 2
    assert tool("convert", "-o", "x.pdf", f).returncode == 2
    assert tool("convert", "--bogus", f).returncode == 2
    assert tool("info").returncode == 2
    for c in ("run", "convert", "info", "stats"):
        p = tool(c, "--help")
        assert p.returncode == 0 and "usage: cuptrace" in p.stdout
    v = tool("--version")
    assert v.returncode == 0 and re.match(r"cuptrace \d+\.\d+\.\d+", v.stdout)


def test_truncated_files_convert_up_to_the_last_block(tmp_path):
    # A run long enough for several blocks (a block is written every 0.5 s).
    p = run([PROGS / "demo_train", 10000], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0
    [f] = ctr_files(tmp_path / "o")
    blocks = int(re.search(r"blocks:\s+(\d+)", tool("info", f).stdout).group(1))
    assert blocks >= 3
    data = f.read_bytes()
    full = convert([f], tmp_path / "full.json")
    nfull = sum(1 for e in full["traceEvents"] if e.get("ph") == "X")
    hlen = 16 + int.from_bytes(data[12:16], "little")
    cuts = sorted(set([0, 5, 8, 12, 15, 16, hlen - 1, hlen, hlen + 3, hlen + 12,
                      len(data) - 16, len(data) - 1]
                      + list(range(hlen, len(data), max(1, (len(data) - hlen) // 25)))))
    counts = []
    for cut in cuts:
        g = tmp_path / "cut.ctr"
        g.write_bytes(data[:cut])
        info = tool("info", g)
        conv = tool("convert", "-o", tmp_path / "cut.json", g)
        if cut < hlen:
            assert info.returncode == 1 and conv.returncode == 1
            assert info.stderr.count("\n") == 1
            continue
        assert info.returncode == 0, info.stderr
        assert "status:      truncated" in info.stdout
        assert conv.returncode == 0, conv.stderr
        doc = load_json(tmp_path / "cut.json")
        n = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X")
        counts.append(n)
        assert doc["cuptrace"]["files"][0]["status"] == "truncated"
    assert counts == sorted(counts) and counts[-1] <= nfull and counts[-1] > 0


def _blocks(data):
    """(start, end) of each block of a .ctr file, trailers left out."""
    at, out = 16 + int.from_bytes(data[12:16], "little"), []
    while at + 12 <= len(data):
        magic, zlen = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if magic == b"CTND":
            at += 16
            continue
        assert magic == b"CTBK"
        out.append((at, at + 12 + zlen))
        at += 12 + zlen
    return out


def _info_events(path):
    p = tool("info", path)
    return p, int(re.search(r"^events:\s+(\d+)", p.stdout, re.M).group(1))


def test_a_damaged_block_is_skipped_and_reading_goes_on(tmp_path):
    """Issue 17, item 8: one flipped bit in a middle block stopped the file
    there (100,001 of 490,001 events kept) though the later blocks were
    intact. The damaged block is skipped and counted, reading goes on."""
    p = run([PROGS / "demo_train", 10000], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0
    [f] = ctr_files(tmp_path / "o")
    data = f.read_bytes()
    blocks = _blocks(data)
    assert len(blocks) >= 4  # 2.4 MB of items in blocks of 1 MB at most, and the footer's
    _, full = _info_events(f)
    g = tmp_path / "damaged.ctr"
    for b in (1, 0):  # a middle block; the first (definitions, thread names)
        start, end = blocks[b]
        g.write_bytes(data[:start])
        _, before = _info_events(g)
        g.write_bytes(data[:end])
        _, upto = _info_events(g)
        lost = upto - before
        assert lost > 0
        flips = [(start + 12 + (end - start) // 2, 0x10),  # its payload: a zstd checksum fails
                 (start + 5, 0x01),                        # its length: found by searching
                 (start + 1, 0x20)]                        # its magic
        for at, bit in flips:
            bad = bytearray(data)
            bad[at] ^= bit
            g.write_bytes(bytes(bad))
            info, n = _info_events(g)
            assert info.returncode == 1, info.stderr
            assert n == full - lost and n > before, (b, at, info.stdout)
            assert "damaged:     1 damaged block skipped" in info.stdout, info.stdout
            assert f"{lost} of {full} events lost" in info.stdout
            assert re.search(r"^status:\s+damaged: .*1 damaged block skipped \(the first: corrupt block",
                             info.stdout, re.M), info.stdout
            conv = tool("convert", "-o", tmp_path / "d.json", g)
            assert conv.returncode == 0, conv.stderr
            # the damage is said, not only recorded in the document
            assert "warning:" in conv.stderr and "damaged block" in conv.stderr, conv.stderr
            doc = load_json(tmp_path / "d.json")
            assert doc["cuptrace"]["files"][0]["status"] == "damaged"
            st = tool("stats", g)
            assert st.returncode == 0
            assert "warning:" in st.stderr and "damaged block" in st.stderr, st.stderr


def test_stats_nvtx_sum_matches_the_trace(demo, tmp_path):
    import statistics
    d, f = demo
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


@pytest.mark.parametrize("cmd,name", [(["export", "-o"], "a.sqlite"), (["report", "-o"], "a.ctr"),
                                      (["convert", "-o"], "a.json"),
                                      (["convert", "-o"], "a.sqlite"),
                                      (["convert", "-o"], "a.pftrace")])
def test_an_output_that_is_an_input_is_refused(demo, tmp_path, cmd, name):
    """`-o` naming one of the inputs (given itself, or inside a directory
    given) replaced the only copy of a rank's trace with the output (stop
    24's robustness campaign): refused, exit 2, the trace untouched."""
    d, f = demo
    data = f.read_bytes()
    (tmp_path / "d").mkdir()
    inp = tmp_path / "d" / name
    inp.write_bytes(data)
    # a directory gives its .ctr files only
    for given in (inp, tmp_path / "d") if name.endswith(".ctr") else (inp,):
        p = tool(*cmd, str(inp), str(given))
        assert p.returncode == 2, p.stderr
        assert f"the output {inp} is the input {inp}; not overwritten" in p.stderr, p.stderr
        assert inp.read_bytes() == data


@pytest.mark.parametrize("args,why", [
    (["convert", "-z", "-o", "OUT.json"], "-z goes with --split-ranks"),
    (["convert", "--pftrace-plain", "-o", "OUT.json"], "--pftrace-plain goes with -o OUT.pftrace"),
    (["export", "-o", "OUT.json"], "export writes an SQLite database: name it OUT.sqlite"),
    (["stats", "--report", ""], "--report needs report names"),
    (["stats", "--steps", "18446744073709551616"], "--steps 18446744073709551616: expected"),
    (["convert", "-o"], "cuptrace convert: option requires an argument -- 'o'"),
])
def test_options_that_would_be_ignored_are_refused(demo, tmp_path, args, why):
    """Options that did nothing where they were given (or an out-of-range
    number taken as the largest) are usage errors; getopt's own messages
    name the command as ours do."""
    d, f = demo
    args = [str(tmp_path / a) if a.startswith("OUT.") else a for a in args]
    p = tool(*args, *([] if args[-1] == "-o" else [str(f)]))
    assert p.returncode == 2 and why in p.stderr, p.stderr
    assert not list(tmp_path.iterdir())


def test_a_long_conversion_shows_progress_on_a_terminal(tmp_path):
    """DESIGN 2: progress on stderr when a conversion runs longer than a
    second on a terminal. The calling thread converted a share itself
    before it looked at the clock: the line never came."""
    import os
    import pty
    from conftest import BUILD
    trace = tmp_path / "g.ctr"
    run([BUILD / "bench" / "cupti_bench", trace, "1500000", "1"], check=True)
    master, slave = pty.openpty()
    p = subprocess.Popen([str(TOOL), "convert", "-j", "1", "-o", str(tmp_path / "g.json.gz"),
                          str(trace)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the program closed its end
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0, err
    lines = err.decode().replace("\r\n", "\n").split("\r")
    assert any(l.startswith("converting: ") and l.endswith(" events...") for l in lines), err
    assert "events in " in err.decode() and "wrote " in err.decode(), err


def test_small_cli_promises(demo, tmp_path):
    """What a walk-through found the commands did not do as said."""
    d, f = demo
    # `cuptrace help CMD` is CMD's help (it was the general one)
    p = tool("help", "stats")
    assert p.returncode == 0 and p.stdout.startswith("usage: cuptrace stats"), p.stdout
    # events on a file without its footer says so, as convert and stats do
    cut = tmp_path / "cut.ctr"
    cut.write_bytes(f.read_bytes()[:-16])
    p = tool("events", cut)
    assert p.returncode == 0 and "warning:" in p.stderr and "truncated" in p.stderr, p.stderr
    # a page on stdout: no "wrote -"
    p = tool("report", "-o", "-", f)
    assert p.returncode == 0 and p.stdout.startswith("<!DOCTYPE html>") and "wrote" not in p.stderr
    # seconds are decimal: strtod also took 0x10 (16 s)
    p = tool("run", "--hang-timeout", "0x10", "--", "true")
    assert p.returncode == 2 and "CUPTRACE_HANG_TIMEOUT=0x10" in p.stderr, p.stderr
