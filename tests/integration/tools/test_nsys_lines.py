# SPDX-License-Identifier: MIT
"""`cuptrace stats` taking `nsys stats`'s formats and report names."""
import csv

import pytest

from conftest import TOOL, launcher_env, run, tool
from programs import SIM_TRAIN


def launch(args, cwd, env=None, **kw):
    return run([TOOL, "run", *args], env=env or launcher_env(), cwd=cwd, **kw)


# ---- cuptrace stats


@pytest.fixture(scope="module")
def sim_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim")
    p = launch(["-o", "t.ctr", SIM_TRAIN, "train", "5"], d, launcher_env(CUPTI_SIM_TRUTH=d / "s"))
    assert p.returncode == 0, p.stderr
    return d / "t.ctr"


def test_stats_column_and_tsv(sim_trace, tmp_path):
    column = tool("stats", "-f", "column", sim_trace)
    assert column.returncode == 0 and column.stdout == tool("stats", sim_trace).stdout
    tsv = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "tsv", sim_trace).stdout
    csv_ = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", sim_trace).stdout
    rows = [l for l in tsv.splitlines() if not l.startswith("#")]
    assert list(csv.reader(rows, delimiter="\t")) == list(
        csv.reader(l for l in csv_.splitlines() if not l.startswith("#")))
    assert rows[0].split("\t")[-1] == "Name" and len(rows) > 2
    p = tool("stats", "-r", "cuda_gpu_kern_sum", "-f", "tsv", "-o", tmp_path / "j", sim_trace)
    assert p.returncode == 0 and (tmp_path / "j_cuda_gpu_kern_sum.tsv").read_text() == \
        "\n".join(rows) + "\n"
    p = tool("stats", "-f", "hdoc", sim_trace)
    assert p.returncode == 2 and "nsys's HTML formats are not cuptrace's" in p.stderr


def test_stats_nsys_report_names(sim_trace):
    old = tool("stats", "-r", "gpukernsum,cudaapisum,gpumemtimesum,gpumemsizesum,nvtxsum",
               sim_trace)
    new = tool("stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,"
               "cuda_gpu_mem_size_sum,nvtx_sum", sim_trace)
    assert old.returncode == 0 and old.stdout == new.stdout and old.stderr == ""
    p = tool("stats", "-r", "osrt_sum,cuda_gpu_kern_sum,cuda_gpu_trace", sim_trace)
    assert p.returncode == 0 and "** cuda_gpu_kern_sum" in p.stdout
    assert p.stderr.count("is an nsys report cuptrace has not") == 2, p.stderr
    assert "osrt_sum is an nsys report cuptrace has not (cuptrace does not trace OS runtime" \
        in p.stderr and "cuptrace events lists every event" in p.stderr
    p = tool("stats", "-r", "osrt_sum", sim_trace)
    assert p.returncode == 2 and p.stdout == ""


def test_stats_on_an_export_says_what_to_give(sim_trace, tmp_path):
    assert tool("export", "-o", tmp_path / "t.sqlite", sim_trace).returncode == 0
    (tmp_path / "t.ctr").write_bytes(sim_trace.read_bytes())
    p = tool("stats", tmp_path / "t.sqlite")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr == (f"cuptrace stats: {tmp_path}/t.sqlite is an SQLite database (nsys stats "
                        f"reads those); cuptrace stats reads the trace it was exported from: "
                        f"{tmp_path}/t.ctr\n")
    (tmp_path / "t.ctr").unlink()
    p = tool("stats", tmp_path / "t.sqlite", sim_trace)
    assert p.returncode == 1 and p.stderr.endswith("exported from: the .ctr file\n"), p.stderr
