"""Helpers for the integration tests: run real programs traced, convert
their files with the real tool, and read the results back."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
LIB = BUILD / "lib" / "libcuptrace.so"
TOOL = BUILD / "bin" / "cuptrace"
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


def traced_env(outdir, **extra):
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
