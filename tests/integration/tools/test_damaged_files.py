# SPDX-License-Identifier: MIT
"""Inputs that are not whole traces: not a trace at all, a header with a
flipped bit, a directory without traces, a file cut at any byte, a block
damaged in the middle. Each unusable input gives one line and exit 1; a cut
file reads up to its last whole block; a damaged block is skipped, counted
and said, and reading goes on."""
import re

import pytest

from conftest import PROGS, convert, ctr_blocks, ctr_files, load_json, run, tool, traced_env


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


def test_a_flipped_bit_in_the_header_is_caught(demo_trace, tmp_path):
    """A flipped bit anywhere in the header is a clear error: format 1.1
    and later checksum it, where it would go unnoticed (a version that reads
    "0.5.0", config lines changed)."""
    f = demo_trace
    data = f.read_bytes()
    # format 1.x, x >= 1 (the checksum came with 1.1)
    assert data[8:10] == b"\x01\x00" and int.from_bytes(data[10:12], "little") >= 1
    hlen = 16 + int.from_bytes(data[12:16], "little")
    info = tool("info", f, check=True).stdout
    assert re.search(r"format:\s+1\.\d+ ", info)
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


def _info_events(path):
    p = tool("info", path)
    return p, int(re.search(r"^events:\s+(\d+)", p.stdout, re.M).group(1))


def test_a_damaged_block_is_skipped_and_reading_goes_on(tmp_path):
    """One flipped bit in a middle block (or the first): that block is
    skipped and counted, and reading goes on to the intact blocks after it
    (stopping there would keep 100,001 of 490,001 events). Every command
    exits 1, as `info` does: the answer misses the damaged block's events."""
    p = run([PROGS / "demo_train", 10000], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0
    [f] = ctr_files(tmp_path / "o")
    data = f.read_bytes()
    blocks = ctr_blocks(data)
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
            # Every command uses what is intact, says the damage in one line
            # and exits 1: events were lost, so its answer is incomplete.
            line = f"cuptrace: {g}: 1 damaged block skipped"
            conv = tool("convert", "-o", tmp_path / "d.json", g)
            assert conv.returncode == 1, conv.stderr
            assert conv.stderr.count(line) == 1 and "warning" not in conv.stderr, conv.stderr
            doc = load_json(tmp_path / "d.json")  # written without the damaged block
            assert doc["cuptrace"]["files"][0]["status"] == "damaged"
            for cmd in (["stats", "--report", "nvtx_sum"], ["events"],
                        ["export", "-o", tmp_path / "d.sqlite"],
                        ["report", "-o", tmp_path / "d.html"]):
                p = tool(*cmd, g)
                assert p.returncode == 1, (cmd, p.stderr)
                assert p.stderr.count(line) == 1 and "warning" not in p.stderr, (cmd, p.stderr)
            assert (tmp_path / "d.sqlite").exists() and (tmp_path / "d.html").exists()
