# SPDX-License-Identifier: MIT
"""Rank selection as centres' batch scripts do it, under launchers emulated
by their variables: Cray PALS (Polaris/Aurora-style mpiexec: PMI_RANK and
PMI_SIZE from Cray MPICH, the local rank from PALS), node-local sets with
a global cut-off, and a launcher that gives no local rank at all. Each
rank runs `cuptrace run` as the job script would (see
tests/unit/test_config.c for every launcher's variable set)."""
import pytest

from conftest import PROGS, TOOL, ctr_files, launcher_env, preload, run

WORLD, PER_NODE = 12, 4


def pals_env(r, local=True):
    env = launcher_env(PMI_RANK=r, PMI_SIZE=WORLD, PALS_RANKID=r, PALS_NODEID=r // PER_NODE,
                       PALS_APID="1234.0")
    if local:
        env["PALS_LOCAL_RANKID"] = str(r % PER_NODE)
    return env


def launch(tmp_path, ranks, env_of=pals_env):
    out = tmp_path / "o"
    results = [run([TOOL, "run", "--ranks", ranks, "-o", f"{out}/r%r.ctr", "--",
                    PROGS / "demo_train", 2], env=env_of(r), timeout=60) for r in range(WORLD)]
    traced = sorted(int(f.name[1:-4]) for f in ctr_files(out)) if out.exists() else []
    return results, traced


@pytest.mark.parametrize("ranks,want", [
    ("local:0", [0, 4, 8]),
    ("local:0@0-7", [0, 4]),  # local rank 0 of the first two nodes
    ("local:1-2@4-11", [5, 6, 9, 10]),
    ("0,5-6", [0, 5, 6]),
])
def test_pals_launch_traces_the_ranks_asked_for(tmp_path, ranks, want):
    results, traced = launch(tmp_path, ranks)
    for p in results:
        assert p.returncode == 0 and p.stderr == "", p.stderr
    assert traced == want


def test_a_local_set_without_a_local_rank_is_refused(tmp_path):
    """A launcher that gives a rank but no local rank: every rank would be
    local rank 0 and trace. `cuptrace run` refuses before starting, one
    line; the library alone runs the program untraced, one line."""
    results, traced = launch(tmp_path, "local:0", lambda r: pals_env(r, local=False))
    assert traced == []
    for r, p in enumerate(results):
        assert p.returncode == 2, p.stderr
        [line] = p.stderr.splitlines()
        assert line.startswith("cuptrace: error: CUPTRACE_RANKS=local:0: rank %d (PMI_RANK) "
                               "has no local rank here" % r) and line.endswith("not started"), line
    env = dict(pals_env(3, local=False), CUPTRACE_RANKS="local:0",
               CUPTRACE_OUTPUT=f"{tmp_path}/lib/r%r.ctr")
    env["LD_PRELOAD"] = preload()  # the sanitizer's runtime first in its builds
    p = run([PROGS / "demo_train", 2], env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    [line] = p.stderr.splitlines()
    assert "has no local rank here" in line and line.endswith("this process is not traced")
    assert not (tmp_path / "lib").exists()



def test_an_unset_variable_in_the_output_pattern_is_warned(tmp_path):
    """%q{PMI_RANK} under Open MPI, which does not set it: every rank
    would write one name. The library says so."""
    env = launcher_env(OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2)
    p = run([TOOL, "run", "-o", f"{tmp_path}/o/t%q{{PMI_RANK}}.ctr", "--", PROGS / "demo_train", 2],
            env=env, timeout=60)
    assert p.returncode == 0
    assert "%q{PMI_RANK} is not set in this process's environment" in p.stderr, p.stderr
    p = run([TOOL, "run", "-o", f"{tmp_path}/o2/t%q{{OMPI_COMM_WORLD_RANK}}.ctr", "--",
             PROGS / "demo_train", 2], env=env, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
