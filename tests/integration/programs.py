# SPDX-License-Identifier: MIT
"""The traced programs that tests of several groups run: the CUPTI
simulator's training run (tests/cupti_sim) and the 4 ranks of the NCCL
harness (tests/progs/nccl_harness)."""
import subprocess
from pathlib import Path

from conftest import BUILD, PROGS, read_truth, traced_env

SIM = BUILD / "tests" / "cupti_sim"
SIM_TRAIN = SIM / "sim_train"
SIM_OLD = SIM / "old" / "libcupti_sim.so"
REAL_CUPTI = Path("/usr/local/cuda/lib64/libcupti.so.13")

HARNESS = PROGS / "nccl_harness"
WORLD = 4
ITERS = 3


def sim_env(out, truth_dir, old=False, **extra):
    extra.setdefault("CUPTRACE_TRACE", "cuda,memory,nvtx")
    env = traced_env(out, CUPTI_SIM_TRUTH=truth_dir / "sim.jsonl",
                     CT_TEST_TRUTH=truth_dir / "nvtx.jsonl", **extra)
    if old:
        # An older CUPTI in place of the default simulator (same soname).
        env["LD_PRELOAD"] = f"{env['LD_PRELOAD']}:{SIM_OLD}"
    return env


def kinds(truth, k):
    return [t for t in truth if t["k"] == k and not t.get("lost")]


def run_ranks(outdir, env_of, iters=ITERS):
    """Starts the 4 ranks at once, each its own process with its own RANK."""
    procs, truths = [], []
    for r in range(WORLD):
        truth = outdir / f"truth{r}.jsonl"
        env = env_of(r)
        env.update(RANK=str(r), WORLD_SIZE=str(WORLD), CT_TEST_TRUTH=str(truth))
        procs.append(subprocess.Popen([str(HARNESS), str(iters)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        truths.append(truth)
    for r, p in enumerate(procs):
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert f"rank {r} done" in out
        assert err == "", err
    return [t for r in range(WORLD) for t in read_truth(truths[r])]


def ops_of(truth):
    return [t for t in truth if t["kind"] == "op"]
