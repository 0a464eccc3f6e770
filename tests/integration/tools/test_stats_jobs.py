# SPDX-License-Identifier: MIT
"""`cuptrace stats -j N` and `cuptrace report -j N` read the files on N
threads, each file into report parts of its own merged in file order: the
output must be byte-identical to -j 1 for every report, every --format and
the options that change what reports keep (--steps, --by step,time), and
so must the warnings on stderr. Inputs: 4 ranks of the NCCL harness
launching kernels on the CUPTI simulator (simulator only: no GPU; NCCL
through the real profiler-plugin ABI), on two simulated hosts whose clocks
differ (so the clocks table and --align take part), plus a truncated copy
of rank 0's file (two files of one rank: the merges that add up rows of
one rank) and an NCCL_DEBUG log."""
import os
import re

import pytest

from conftest import PROGS, ctr_files, rewrite_header, run, tool, traced_env
from test_report_html import run_job

REPORTS = ["nvtx_sum", "nvtx_gpu_proj_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
           "cuda_gpu_mem_size_sum", "cuda_api_sum", "breakdown", "gpu_gaps", "launch", "nccl_sum",
           "nccl_sizes", "nccl_calls", "nccl_ranks", "steps", "nccl_skew", "nccl_hang"]
SHIFT = 2_500_000  # ns: the second host's clock is ahead by this much
LOG = """\
nodeA:100:100 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0xc nranks 2 stream 0x3
nodeA:100:100 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4096 datatype 7 op 0 root 0 comm 0xc nranks 2 stream 0x3
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = tmp_path_factory.mktemp("jobs")
    _, files = run_job(d)
    two = d / "two"
    two.mkdir()
    for f in files:
        r = int(re.search(r"rank(\d+)\.ctr$", f.name).group(1))
        p = tool("info", str(f))
        anchor = int(re.search(r"started:\s+(\d+) ns", p.stdout).group(1))
        (two / f.name).write_bytes(rewrite_header(f.read_bytes(), host=f"host{r // 2}",
                                                  rt_anchor=anchor + SHIFT * (r // 2)))
    shifted = sorted(two.glob("*.ctr"))
    cut = d / "cut" / "rank0.ctr"
    cut.parent.mkdir()
    data = shifted[0].read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    log = d / "nccl.log"
    log.write_text(LOG)
    return files, shifted, cut, log


def same_for_every_jobs(args, jobs=(2, 3, 8)):
    """stats (or report) with -j 1 and with each of jobs: the same stdout and
    stderr; returns -j 1's stdout."""
    one = tool(*args[:1], "-j", "1", *args[1:])
    assert one.returncode in (0, 1), one.stderr
    for j in jobs:
        p = tool(*args[:1], "-j", str(j), *args[1:])
        assert (p.returncode, p.stdout, p.stderr) == (one.returncode, one.stdout, one.stderr), j
    return one


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_all_reports_every_format(job, fmt):
    files, shifted, _, _ = job
    one = same_for_every_jobs(["stats", "--format", fmt, *map(str, shifted)])
    # The tables hold figures of every kind: the comparison means something.
    for name in ["nvtx_sum", "breakdown", "gpu_gaps", "launch", "nccl_sum", "steps",
                 "nccl_skew", "clocks"]:
        assert name in one.stdout, name
    assert one.stdout.count("\n") > 60


@pytest.mark.parametrize("report", REPORTS)
def test_each_report_alone(job, report):
    files, _, _, _ = job
    same_for_every_jobs(["stats", "--format", "csv", "--report", report, *map(str, files)],
                        jobs=(2, 4))


def test_options_that_change_what_is_kept(job):
    files, shifted, _, _ = job
    same_for_every_jobs(["stats", "--format", "json", "--by", "step,time", "--min-gap", "1us",
                         "--flops-per-step", "1e9", *map(str, files)])
    same_for_every_jobs(["stats", "--steps", "3-7", "--by", "step", *map(str, shifted)])
    same_for_every_jobs(["stats", "--align", "none", "--report", "nccl_skew,steps,breakdown",
                         *map(str, shifted)])


def test_truncated_file_of_a_rank_and_a_log(job):
    """A truncated second file of rank 0 (its warning in file order) and an
    NCCL log beside the traces."""
    files, shifted, cut, log = job
    one = same_for_every_jobs(["stats", "--format", "csv", *map(str, shifted), str(cut)])
    assert "truncated" in one.stderr or "warning" in one.stderr, one.stderr
    same_for_every_jobs(["stats", "--report", "nccl_sum,nccl_ranks,nccl_sizes,nccl_calls",
                         str(log), *map(str, files)])


def test_report_page_same_for_every_jobs(job, tmp_path):
    _, shifted, _, _ = job
    pages = []
    for j in (1, 3):
        out = tmp_path / f"p{j}.html"
        p = tool("report", "-j", str(j), "-o", str(out), *map(str, shifted))
        assert p.returncode == 0, p.stderr
        pages.append(out.read_text())
    assert pages[0] == pages[1]


def test_bad_jobs():
    for cmd in ("stats", "report", "convert"):
        for bad in ("0", "x", "-2", ""):
            p = tool(cmd, "-j", bad, "nothing.ctr")
            assert p.returncode == 2 and "-j needs a number >= 1" in p.stderr, (cmd, bad, p.stderr)


def test_jobs_beyond_the_cores_are_capped(tmp_path):
    """-j 1000 on a 2-core machine ran 1000 shares of one file, each reading
    all of it (243 s against 0.7 s): at most 4 per core, said once."""
    p = run([PROGS / "demo_train", 5], env=traced_env(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    [f] = ctr_files(tmp_path / "o")
    cores = len(os.sched_getaffinity(0))
    for cmd in (["convert", "-o", str(tmp_path / "t.json")], ["stats"]):
        p = tool(cmd[0], "-j", "1000", *cmd[1:], str(f))
        assert p.returncode == 0, p.stderr
        assert f"-j 1000: more than 4 per core available; using {4 * cores}" in p.stderr
