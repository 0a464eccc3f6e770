# SPDX-License-Identifier: MIT
"""`cuptrace convert -j N` writes the same bytes for any N and any timing
of its workers: users diff traces and checksum them. Several workers each
take a file, or (fewer files than workers) share one file's blocks; the
output keeps the files in order and, within a file, the blocks in order,
so the JSON is the one -j 1 writes. The .pftrace keeps a packet sequence
per share, so its bytes follow the number of shares (a function of -j and
of the number of files) but never the timing.

Inputs: the CUPTI simulator's GPU trace (simulator only: no GPU) and two
ranks of the NCCL harness (the real profiler-plugin ABI, no NCCL), each
several blocks and a few MB of JSON, so that every worker hands over many
chunks and a converter that appended them as they came would give a
different file nearly every run. Each comparison repeats the conversion:
one identical run could be luck."""
import gzip
import hashlib
import json
import sqlite3
import subprocess

import pytest

from conftest import BUILD, PROGS, TOOL, base_env, ctr_files, tool, traced_env

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("jobs")
    # the three programs at once (each waits on its own pacing)
    runs = [([SIM_TRAIN, "train", 900], traced_env(d / "gpu", CUPTRACE_TRACE="cuda,memory,nvtx"))]
    for rank in (0, 1):
        runs.append(([PROGS / "nccl_harness", 1000],
                     traced_env(d / f"nccl{rank}", RANK=rank, WORLD_SIZE=2, HARNESS_STEPS=1)))
    procs = [subprocess.Popen([str(a) for a in args], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for args, env in runs]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    nccl = ctr_files(d / "nccl0") + ctr_files(d / "nccl1")
    [gpu] = ctr_files(d / "gpu")
    return d, [gpu] + nccl


def convert(d, name, jobs, inputs, *opts):
    out = d / name
    p = tool("convert", "-j", jobs, *opts, "-o", out, *inputs)
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


def digest(b):
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def one(traces, tmp_path_factory):
    """-j 1's JSON of all three files."""
    _, files = traces
    b = convert(tmp_path_factory.mktemp("one"), "j1.json", 1, files)
    assert len(json.loads(b)["traceEvents"]) > 50000
    assert len(b) > 6 << 20  # several 1 MB chunks per worker
    return b


def test_merged_json_same_for_every_jobs(traces, one, tmp_path):
    _, files = traces
    # 2 and 4: a worker per file; 8: two workers share each file's blocks.
    for jobs in (2, 4, 8, 2, 8):
        assert digest(convert(tmp_path, f"j{jobs}.json", jobs, files)) == digest(one), jobs


def test_one_file_shared_by_workers(traces, tmp_path):
    """Fewer files than workers: 3 and 8 workers split the file into 2 and
    7 shares of its blocks; the document is still -j 1's."""
    _, files = traces
    f = files[1:2]
    ref = convert(tmp_path, "j1.json", 1, f)
    assert len(json.loads(ref)["traceEvents"]) > 20000
    for jobs in (3, 8, 3, 8):
        assert digest(convert(tmp_path, f"j{jobs}.json", jobs, f)) == digest(ref), jobs


def test_gzip_and_stdout(traces, one, tmp_path):
    _, files = traces
    gz = {digest(convert(tmp_path, "j8.json.gz", 8, files)) for _ in range(2)}
    assert len(gz) == 1  # the compressed bytes too
    assert gzip.decompress((tmp_path / "j8.json.gz").read_bytes()) == one
    for jobs in (2, 8):
        p = subprocess.run([str(a) for a in (TOOL, "convert", "-j", jobs, "-o", "-", *files)],
                           env=base_env(), capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert digest(p.stdout) == digest(one), jobs


def test_pftrace_same_for_the_same_shares(traces, tmp_path):
    _, files = traces
    one = convert(tmp_path, "j1.pftrace", 1, files)
    assert len(one) > 1 << 20
    for _ in range(2):  # a worker per file: -j 1's sequences
        assert digest(convert(tmp_path, "j2.pftrace", 2, files)) == digest(one)
    shared = {digest(convert(tmp_path, "j8.pftrace", 8, files)) for _ in range(2)}
    assert len(shared) == 1


def test_split_ranks(traces, tmp_path):
    _, files = traces
    want = None
    for jobs in (1, 4, 4):
        out = tmp_path / f"split{jobs}"
        p = tool("convert", "-j", jobs, "--split-ranks", out, *files)
        assert p.returncode == 0, p.stderr
        got = {f.name: digest(f.read_bytes()) for f in sorted(out.iterdir())}
        assert len(got) == 3
        want = want or got
        assert got == want, jobs


def test_split_ranks_says_what_another_conversion_left(traces, tmp_path):
    """Rank files in the directory that this conversion did not write (a
    job with more ranks, or .json before -z) would be read by HTA as ranks
    of this job: said, once."""
    _, files = traces
    out = tmp_path / "split"
    assert tool("convert", "--split-ranks", out, *files).returncode == 0
    p = tool("convert", "--split-ranks", out, *files)  # the same names again
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr
    (out / "rank9.json").write_text("{}")
    p = tool("convert", "-z", "--split-ranks", out, *files)
    assert p.returncode == 0, p.stderr
    assert f"warning: {out} also holds 4 rank files of another conversion (rank0.json, ...)" \
        in p.stderr, p.stderr


def test_sqlite_export(traces, tmp_path):
    """.sqlite (one writer thread whatever -j says): the same bytes too."""
    _, files = traces
    a = convert(tmp_path, "j1.sqlite", 1, files)
    assert digest(convert(tmp_path, "j4.sqlite", 4, files)) == digest(a)
    db = sqlite3.connect(tmp_path / "j4.sqlite")
    assert db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] > 1000


def test_any_order_same_events(traces, one, tmp_path):
    """--any-order (pieces written as the workers finish them: no waiting,
    no spill) gives a valid document with the same head, the same events
    and the same tail as the ordered output; only their order may differ."""
    _, files = traces
    want = json.loads(one)
    key = lambda e: json.dumps(e, sort_keys=True)  # noqa: E731
    for jobs in ("2", "4"):
        got = json.loads(convert(tmp_path, f"any{jobs}.json", jobs, files, "--any-order"))
        assert {k: v for k, v in got.items() if k != "traceEvents"} == \
            {k: v for k, v in want.items() if k != "traceEvents"}
        assert sorted(map(key, got["traceEvents"])) == sorted(map(key, want["traceEvents"]))
