# SPDX-License-Identifier: MIT
"""The mpi source in the injected library: real 4-rank MPI jobs (Open MPI
and MPICH, each program built with its own mpicc) run under `cuptrace run
-t mpi`, whose every call is recorded (one mpi_call per call the program
made, mpi_enter for those that may wait, mpi_done per request completed,
the communicators); without mpi, no wrapper is in the process; an MPI
program in a plugin loaded with dlopen(RTLD_LOCAL), its MPI in no global
scope, and Python's mpi4py are traced too."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import (LIB, PROGS, PYTHON, TOOL, base_env, ctr_files, launcher_env, preload, run,
                      tool)
from mpi_jobs import NRANKS, impls, mpi_env, prog, run_job, truth

# Calls that may wait for other ranks: recorded as they are entered too.
ENTERS = {"MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Probe", "MPI_Wait", "MPI_Waitall",
          "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall",
          "MPI_Gatherv", "MPI_Scatter", "MPI_Barrier", "MPI_Comm_split", "MPI_Comm_dup",
          "MPI_Comm_free", "MPI_Finalize"}


def counts(path):
    """{kind name: events} as `cuptrace info` gives them."""
    p = tool("info", path)
    assert p.returncode == 0, p.stderr
    return {m[1]: int(m[2]) for m in re.finditer(r"^  (\w+) +(\d+) +dropped", p.stdout, re.M)}


@pytest.mark.parametrize("impl", impls())
def test_every_call_is_recorded(tmp_path, impl):
    run_job(impl, tmp_path, ["calls"])
    t = truth(tmp_path)
    files = ctr_files(tmp_path / "o")
    assert [f.name for f in files] == [f"r{r}.ctr" for r in range(NRANKS)]
    for r, f in enumerate(files):
        c = counts(f)
        calls = t[r]
        assert c.get("mpi_call") == len(calls), (r, c, len(calls))
        assert c.get("mpi_enter") == sum(x["f"] in ENTERS for x in calls), (r, c)
        # the requests completed: Waitall 2, Test 1, Wait 1, 2 x Waitall 2 (persistent),
        # Wait (Iallreduce) 1, Test (Ibarrier) 1
        assert c.get("mpi_done") == 10, (r, c)
        # world, self, the split's halves (again once named), the dup
        assert c.get("mpi_comm") == 5, (r, c)
        assert c.get("nvtx_push") == 5, (r, c)


def test_without_mpi_no_wrapper_is_preloaded(tmp_path):
    env = launcher_env(CUPTRACE_OUTPUT=f"{tmp_path}/o/")
    show = ["sh", "-c", 'echo "$LD_PRELOAD"']
    p = run([TOOL, "run", "-t", "nvtx", "--", *show], env=env, check=True)
    assert str(LIB) in p.stdout and "libcuptrace-mpi.so" not in p.stdout, p.stdout
    p = run([TOOL, "run", "-t", "nvtx,mpi", "--", *show], env=env, check=True)
    pre = p.stdout.strip().split(":")
    assert pre[-2:] == [str(LIB), str(LIB.parent / "libcuptrace-mpi.so")], pre
    # nsys's tracer name is cuptrace's source
    p = run([TOOL, "run", "-t", "cuda,mpi", "--", *show], env=env, check=True)
    assert "libcuptrace-mpi.so" in p.stdout and "left out" not in p.stderr, p.stderr


@pytest.mark.parametrize("impl", impls())
def test_an_mpi_job_without_mpi_records_no_call(tmp_path, impl):
    run_job(impl, tmp_path, ["calls"], trace="nvtx")
    for f in ctr_files(tmp_path / "o"):
        c = counts(f)
        assert c.get("nvtx_push") == 5 and not any(k.startswith("mpi_") for k in c), c


@pytest.mark.parametrize("impl", impls("openmpi"))
def test_the_library_alone_says_it_needs_the_wrappers(tmp_path, impl):
    """CUPTRACE_TRACE=mpi with only libcuptrace.so preloaded (not by
    `cuptrace run`): said once; the program runs as it would."""
    # base_env, not mpi_env: under a sanitizer launcher_env keeps only its runtime
    env = base_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   LD_PRELOAD=preload(), CUPTRACE_TRACE="mpi,nvtx",
                   CUPTRACE_OUTPUT=f"{tmp_path}/o/%p.ctr")
    p = run([prog(impl), "reuse", "2"], env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("needs libcuptrace-mpi.so") == 1, p.stderr


def job_sum(d):
    """{function: (calls, bytes, recv bytes)} of mpi_sum over d/o."""
    p = tool("stats", "-f", "json", "-r", "mpi_sum", *ctr_files(d / "o"))
    assert p.returncode == 0, p.stderr
    [rows] = json.loads(p.stdout).values()
    return {r["Function"]: (r["Calls"], r["Total Bytes"], r["Recv Bytes"]) for r in rows}


def test_an_mpi_loaded_in_no_global_scope(tmp_path):
    """mpi_dlopen loads libmpi_plugin.so (built with mpicc) with
    dlopen(RTLD_LOCAL): the plugin's calls reach the wrappers, which find
    the MPI library among the loaded objects (dlsym(RTLD_NEXT) sees no
    PMPI_Init there; without the search every call failed)."""
    if not (PROGS / "libmpi_plugin.so").exists() or not shutil.which("mpiexec.openmpi"):
        pytest.skip("Open MPI's mpicc and mpiexec not installed")
    p = subprocess.run([shutil.which("mpiexec.openmpi"), "--oversubscribe", "-n", "2", TOOL, "run",
                        "-t", "mpi", "-o", f"{tmp_path}/o/r%r.ctr", "--", PROGS / "mpi_dlopen",
                        PROGS / "libmpi_plugin.so"],
                       env=mpi_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "ranks 2 sum 2\n", p.stderr
    got = job_sum(tmp_path)
    assert got["MPI_Allreduce"] == (2, 8, 8) and got["MPI_Barrier"][0] == 2, got


MPI4PY = """
from mpi4py import MPI
c = MPI.COMM_WORLD
r, n = c.Get_rank(), c.Get_size()
c.Barrier()
req = c.Isend(bytearray(40), dest=(r + 1) % n, tag=3)
buf = bytearray(40)
c.Recv(buf, source=(r - 1) % n, tag=3)
req.Wait()
"""


def test_mpi4py_loads_its_mpi_privately(tmp_path):
    if subprocess.run([PYTHON, "-c", "import mpi4py"], capture_output=True).returncode or \
            not shutil.which("mpiexec.openmpi"):
        pytest.skip("python3-mpi4py (Debian's, over Open MPI) not installed")
    script = tmp_path / "job.py"
    script.write_text(MPI4PY)
    p = subprocess.run([shutil.which("mpiexec.openmpi"), "--oversubscribe", "-n", "2", TOOL, "run",
                        "-t", "mpi", "-o", f"{tmp_path}/o/r%r.ctr", "--", PYTHON, script],
                       env=mpi_env(), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = job_sum(tmp_path)
    assert got["MPI_Barrier"][0] == got["MPI_Init_thread"][0] == 2
    # a bytearray is MPI_UNSIGNED_CHAR to mpi4py: 40 bytes a rank
    assert (got["MPI_Isend"], got["MPI_Recv"], got["MPI_Wait"]) == ((2, 80, 0), (2, 0, 80),
                                                                      (2, 80, 0))
