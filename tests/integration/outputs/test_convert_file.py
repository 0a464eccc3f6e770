# SPDX-License-Identifier: MIT
"""The output file of a conversion as the sink writes it (tools/write/sink.c):
on ext4 its blocks are allocated ahead in growing steps (fallocate) and the
file is cut to what was written at the end. The file must hold exactly the
bytes of the same conversion to stdout, keep no allocated blocks past its
end, and a file size limit (ulimit -f) above the output must not be crossed
by the allocation: that raises SIGXFSZ, which kills by default."""
import os
import resource
import signal
import subprocess

import pytest

from conftest import BUILD, TOOL, base_env, ctr_files, run, traced_env

SIM_TRAIN = BUILD / "tests" / "cupti_sim" / "sim_train"
MB = 1 << 20


@pytest.fixture(scope="module")
def gpu_trace(tmp_path_factory):
    """A GPU trace whose JSON (~10 MB) crosses two allocation steps (4, 8 MB)."""
    d = tmp_path_factory.mktemp("convert_file")
    env = traced_env(d / "out", CUPTRACE_TRACE="cuda,memory,nvtx")
    p = run([SIM_TRAIN, "train", 400], env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(d / "out")
    json = subprocess.run([TOOL, "convert", "-o", "-", f], env=base_env(), capture_output=True,
                          check=True).stdout
    assert 6 * MB < len(json) < 12 * MB, len(json)
    return f, json


def fs_is_ext4(path):
    with open("/proc/self/mountinfo") as m:
        best = ("", "")
        for line in m:
            left, right = line.split(" - ")
            point, fstype = left.split()[4], right.split()[0]
            if str(path).startswith(point.rstrip("/") + "/") and len(point) >= len(best[0]):
                best = (point, fstype)
    return best[1] == "ext4"


@pytest.mark.parametrize("name", ["t.json", "t.json.gz"])
def test_the_file_holds_the_output_and_nothing_more(gpu_trace, tmp_path, name):
    f, json = gpu_trace
    out = tmp_path / name
    p = run([TOOL, "convert", "-o", out, f], env=base_env())
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    if name.endswith(".gz"):
        import gzip
        data = gzip.decompress(data)
    assert data == json
    st = os.stat(out)
    # Blocks allocated ahead were given back (within the filesystem's own
    # block and extent rounding).
    assert st.st_blocks * 512 <= st.st_size + MB, (st.st_blocks * 512, st.st_size)
    assert sorted(os.listdir(tmp_path)) == [name]  # no temporary file left


def test_a_file_size_limit_above_the_output_is_not_crossed(gpu_trace, tmp_path):
    f, json = gpu_trace
    if not fs_is_ext4(tmp_path):
        pytest.skip("blocks are allocated ahead on ext4 only")
    # Above the output, below the two allocation steps (12 MB): allocating
    # a whole step would raise SIGXFSZ, whose default action kills.
    limit = len(json) + MB // 2

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "t.json"
    p = run([TOOL, "convert", "-o", out, f], env=base_env(), preexec_fn=limited)
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert out.read_bytes() == json
