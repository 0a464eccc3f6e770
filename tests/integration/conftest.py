# SPDX-License-Identifier: MIT
"""Helpers for the integration tests: run real programs traced, convert
their files with the real tool, and read the results back."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Test files import helpers of other groups (test_stats_jobs.py takes
# run_job from outputs/test_report_html.py): every group's folder is on the
# path, so that a file runs alone as it runs in the whole suite.
for _group in sorted(Path(__file__).parent.iterdir()):
    if _group.is_dir() and not _group.name.startswith(("_", ".")) and str(_group) not in sys.path:
        sys.path.append(str(_group))
BUILD = ROOT / "build"
LIB = BUILD / "lib" / "libcuptrace.so"
# CT_TEST_TOOL runs the suite against another build of the tool (e.g. the
# one before a fix, to see a regression test fail); its library is found
# next to it, as `cuptrace run` finds it.
TOOL = Path(os.environ.get("CT_TEST_TOOL") or BUILD / "bin" / "cuptrace")
PROGS = BUILD / "tests" / "progs"
SAN = os.environ.get("CT_TEST_SAN", "")
PYTHON = "/usr/bin/python3"


def _runtime(name):
    out = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True)
    return out.stdout.strip()


def preload():
    """LD_PRELOAD value that injects the library (sanitizer runtime first
    when the library was built with one)."""
    if "address" in SAN:
        return f"{_runtime('libasan.so')}:{LIB}"
    if "thread" in SAN:
        return f"{_runtime('libtsan.so')}:{LIB}"
    return str(LIB)


def base_env(**extra):
    """The test's environment without any tracing set up, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CUPTRACE_") and k not in (
               "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH",
               "NCCL_PROFILER_PLUGIN")}
    # Leaks in the traced programs are theirs; the tool is checked separately.
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, env=None, timeout=60, check=False, **kw):
    p = subprocess.run([str(a) for a in args], env=env or base_env(), capture_output=True,
                       text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} exited {p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}")
    return p


def launcher_env(**extra):
    """Environment for `cuptrace run`: in sanitizer builds the sanitizer
    runtime must be preloaded ahead of the library the launcher adds."""
    env = base_env(**extra)
    if "address" in SAN or "thread" in SAN:
        env["LD_PRELOAD"] = preload().split(":")[0]
    return env


# GCC 12's ASan allocator is not fork-safe (glibc's malloc is): a child
# forked while another thread of the parent (our writer) is inside the
# allocator inherits its lock held and deadlocks at its first allocation.
# Seen with gdb in 1 of a few dozen runs: the child's writer thread blocked
# in SizeClassAllocator64::GetFromAllocator, its main thread joining it.
ASAN_FORK = pytest.mark.skipif("address" in SAN, reason="ASan's allocator deadlocks a forked "
                               "child when another thread held its lock at fork (not glibc's)")


VENV_WHY = {"hta": "holistictraceanalysis not installed in build/venv (tests/install-deps.sh "
                   "installs it: pip install holistictraceanalysis 'pandas<3')",
            "perfetto": "perfetto not installed in build/venv (tests/install-deps.sh)",
            "torch_tb_profiler": "torch-tb-profiler not installed in build/venv "
                                 "(tests/install-deps.sh installs it: pip install "
                                 "torch-tb-profiler tensorboard)"}


def venv_python(module):
    """build/venv's interpreter (tests/install-deps.sh makes it) when it can
    import module; else the test is skipped, saying why."""
    venv = BUILD / "venv" / "bin" / "python"
    if not venv.exists() or subprocess.run([str(venv), "-c", f"import {module}"],
                                          capture_output=True).returncode:
        pytest.skip(VENV_WHY.get(module, f"{module} not installed in build/venv"))
    return venv


def traced_env(outdir, **extra):
    # CT_TEST_CLOCK=monotonic|tsc runs the suite on one record clock
    # (CUPTRACE_CLOCK; default auto); a test's own setting wins.
    if os.environ.get("CT_TEST_CLOCK") and "CUPTRACE_CLOCK" not in extra:
        extra["CUPTRACE_CLOCK"] = os.environ["CT_TEST_CLOCK"]
    return base_env(LD_PRELOAD=preload(), CUPTRACE_OUTPUT=f"{outdir}/%h-%p.ctr", **extra)


def ctr_files(outdir):
    return sorted(Path(outdir).glob("**/*.ctr"))


def tool(*args, **kw):
    env = base_env()
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    return run([TOOL, *args], env=env, **kw)


def convert(inputs, out):
    p = tool("convert", "-o", out, *inputs)
    assert p.returncode == 0, p.stderr
    return load_json(out)


def load_json(path):
    path = str(path)
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def merge_intervals(iv):
    """The union of (start, end) intervals, as sorted disjoint [start, end]."""
    merged = []
    for a, b in sorted(iv):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def read_truth(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def us(ns):
    return ns / 1000.0


def ranges_by_tid(doc, cat="user_annotation"):
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == cat:
            out.setdefault(e["tid"], []).append(e)
    for v in out.values():
        v.sort(key=lambda e: (e["ts"], -e["dur"]))
    return out


def thread_names(doc):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def file_clock(doc, index=0):
    """(realtime ns, monotonic ns) anchors of input file `index`."""
    f = doc["cuptrace"]["files"][index]
    return f["clock"]["realtime_ns"], f["clock"]["monotonic_ns"]


def trace_ns_to_mono(doc, ts_us, index=0):
    rt, mono = file_clock(doc, index)
    return round(ts_us * 1000) + doc["baseTimeNanoseconds"] - rt + mono


@pytest.fixture
def outdir(tmp_path):
    d = tmp_path / "out"
    return d


def one_line_error(stderr, var):
    lines = [l for l in stderr.splitlines() if l.startswith("cuptrace: error:")]
    assert len(lines) == 1, stderr
    assert re.match(rf"cuptrace: error: {var}=.*: .+", lines[0]), lines[0]
    return lines[0]


# ---- .ctr header rewriting: many distinct rank files from one real trace

def _varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _get_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


H_HOST, H_PID, H_RANK, H_LOCAL_RANK, H_WORLD_SIZE, H_RT_ANCHOR = 2, 3, 4, 5, 6, 9


H_CRC = 15  # CT_H_CRC


def _crc32c(data):
    """CRC-32C (Castagnoli, reflected), as libtrace/format/crc32c.h."""
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff


def rewrite_header(data, **fields):
    """A copy of trace `data` with header fields replaced (host, pid, rank,
    local_rank, world_size, rt_anchor): a file of another process of the
    same job (or of another host, whose clock differs), as the library
    would have written it. The trailer's offset
    of the footer block follows the header's new length."""
    tags = {"host": (H_HOST, None), "pid": (H_PID, False), "rank": (H_RANK, True), "local_rank": (H_LOCAL_RANK, True),
            "world_size": (H_WORLD_SIZE, True), "rt_anchor": (H_RT_ANCHOR, False)}
    assert data[:8] == b"CUPTRACE"
    hlen = int.from_bytes(data[12:16], "little")
    tlv, body = data[16:16 + hlen], data[16 + hlen:]
    want = {tags[k][0]: (v.encode() if tags[k][1] is None else _zigzag(v) if tags[k][1] else v)
            for k, v in fields.items()}
    out, i, sealed = bytearray(), 0, False
    while i < len(tlv):
        tag, j = _get_varint(tlv, i)
        n, j = _get_varint(tlv, j)
        val = tlv[j:j + n]
        i = j + n
        if tag == H_CRC:  # sealed again below, last
            sealed = True
            continue
        if tag in want:
            v = want.pop(tag)
            val = v if isinstance(v, bytes) else _varint(v)
        out += _varint(tag) + _varint(len(val)) + val
    for tag, v in want.items():
        val = v if isinstance(v, bytes) else _varint(v)
        out += _varint(tag) + _varint(len(val)) + val
    if sealed:  # format 1.1: CRC-32C of everything before its 4 bytes
        out += bytes([H_CRC, 4])
        head = data[:12] + (len(out) + 4).to_bytes(4, "little")
        out += _crc32c(head + bytes(out)).to_bytes(4, "little")
    body = bytearray(body)
    delta = len(out) - hlen
    if len(body) >= 16 and body[-16:-12] == (0x444e5443).to_bytes(4, "little"):
        at = int.from_bytes(body[-8:], "little") + delta
        body[-8:] = at.to_bytes(8, "little")
    return data[:12] + len(out).to_bytes(4, "little") + bytes(out) + bytes(body)


def rank_files(template, outdir, n, world=None):
    """n rank files in outdir made from one trace: ranks 0..n-1, each with
    its own pid (so that none is a duplicate of another)."""
    data = Path(template).read_bytes()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(n):
        p = outdir / f"rank{r:05d}.ctr"
        p.write_bytes(rewrite_header(data, rank=r, local_rank=r % 8, world_size=world or n,
                                     pid=100000 + r))
        paths.append(p)
    return paths


def ctr_blocks(data):
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


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory):
    """The .ctr file of `demo_train 30`: NVTX ranges on four named threads,
    one process, clean exit."""
    d = tmp_path_factory.mktemp("demo")
    p = run([PROGS / "demo_train", 30], env=traced_env(d / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "o")
    return f
