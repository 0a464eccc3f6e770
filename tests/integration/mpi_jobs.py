# SPDX-License-Identifier: MIT
"""MPI jobs for the tests of the mpi source: the implementations installed
(Open MPI's mpiexec, MPICH's mpiexec.mpich) with tests/progs/mpi/mpi_calls
built by each (tests.mk), a 4-rank job run under `cuptrace run -t mpi`,
and each rank's own log of the calls it made (its truth)."""
import json
import shutil
import subprocess

import pytest

from conftest import PROGS, TOOL, launcher_env

NRANKS = 4
_IMPLS = {
    "openmpi": (shutil.which("mpiexec.openmpi") or shutil.which("orterun"), PROGS,
                ["--oversubscribe"]),
    "mpich": (shutil.which("mpiexec.mpich") or shutil.which("mpiexec.hydra"), PROGS / "mpich", []),
}


def impls(*only):
    """pytest params, one per implementation (skipped where not installed)."""
    out = []
    for name, (mpiexec, progs, _) in _IMPLS.items():
        if only and name not in only:
            continue
        why = None
        if not mpiexec:
            why = f"{name} not installed (tests/install-deps.sh installs it)"
        elif not (progs / "mpi_calls").exists():
            why = f"mpi_calls not built with {name}'s mpicc (make test-progs)"
        out.append(pytest.param(name, id=name, marks=[pytest.mark.skipif(why is not None,
                                                                          reason=why or "")]))
    return out


def mpi_env(**extra):
    return launcher_env(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_rmaps_base_oversubscribe="1", **extra)


def job_cmd(impl, d, args, trace="mpi,nvtx", run_args=(), n=NRANKS):
    """The command line of a traced job: its files in d/o, truth in d/truth.<rank>."""
    mpiexec, progs, opts = _IMPLS[impl]
    return [mpiexec, *opts, "-n", str(n), str(TOOL), "run", "-t", trace, *run_args,
            "-o", f"{d}/o/r%r.ctr", "--", str(progs / "mpi_calls"), *[str(a) for a in args]]


def run_job(impl, d, args, trace="mpi,nvtx", run_args=(), n=NRANKS, timeout=180, **env):
    p = subprocess.run(job_cmd(impl, d, args, trace, run_args, n),
                       env=mpi_env(CT_TEST_TRUTH=f"{d}/truth", **env), capture_output=True,
                       text=True, timeout=timeout)
    assert p.returncode == 0, f"{impl} job {args} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def truth(d, n=NRANKS):
    """{rank: [each call's line]}; each rank's first line (its pid) left out."""
    out = {}
    for r in range(n):
        lines = [json.loads(l) for l in (d / f"truth.{r}").read_text().splitlines() if l]
        out[r] = [l for l in lines if "f" in l]
    return out


def prog(impl):
    return _IMPLS[impl][1] / "mpi_calls"
